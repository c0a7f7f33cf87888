/* retroanim — the game archives that hold the animations: LEGO Island's
 * Interleaf .SI files ("RIFF" "OMNI") and Metroid Prime's .pak files.
 *
 * ra_archive_open lists the animations inside an archive; ra_archive_payload
 * gives the bytes of one (joined from its SI chunks, or inflated from the
 * pak), which the format's own reader takes as a loose file would be.  A
 * Metroid animation also names its skeleton (the CINF of the first character
 * of the ANCS that uses it): ra_archive_skeleton.
 *
 * The archives are formats of the registry too ("lego_si", "metroid_pak"):
 * ra_document_load on an archive loads one of its animations, chosen by the
 * option animation=NAME|ID (default the first), and records the archive's
 * other animations and the item's own fields in the scene's metadata.
 *
 * Writers build archives from loose files (tests, modders' repacks): SI with
 * chunks split at buffer boundaries as the game's tools do, pak with zlib. */
#ifndef RETROANIM_RA_ARCHIVE_H
#define RETROANIM_RA_ARCHIVE_H

#include "retroanim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ra_archive_item {
    uint32_t id;           /* SI object id; pak asset id of the ANIM */
    const char *name;      /* SI object name; the ANCS animation name (never NULL) */
    const char *kind;      /* SI presenter ("LegoAnimPresenter", ...); "ANIM" */
    const char *format;    /* format id of the payload: "lego_ani", "metroid_anim" */
    const char *extension; /* of the extracted file: "ani", "ANIM" */
    uint64_t offset;       /* archive offset of its first stored byte */
    uint64_t stored_size;  /* bytes it takes in the archive */
    uint64_t size;         /* bytes of the payload (inflated, joined) */
    bool compressed;
    bool has_skeleton;     /* metroid: skeleton_id names a CINF of the archive */
    uint32_t skeleton_id;
    const char *group;     /* SI: the composite action holding it; pak: the ANCS character ("" if none) */
    ra_meta_list meta;     /* everything else the archive says about it (si.*, pak.*) */
    const void *priv;      /* the container's own record */
} ra_archive_item;

typedef struct ra_archive {
    const char *format; /* "lego_si", "metroid_pak" */
    ra_archive_item *items;
    size_t count;
    ra_meta_list meta;  /* archive-wide fields (version, buffer size, resource counts) */
    char **warnings;    /* what was skipped or guessed, one line each */
    size_t warning_count;
    /* private */
    ra_arena *arena;
    bool own_arena;
    const uint8_t *data; /* borrowed: the archive's bytes must outlive it */
    size_t size;
    size_t item_cap;
    void *impl;
} ra_archive;

/* Is this an archive (by signature)?  The format id, or NULL. */
const char *ra_archive_detect(const uint8_t *data, size_t size);
/* Lists the animations.  The archive borrows data (keep it alive until
 * ra_archive_free).  Options: memory_limit (as for a load), si_all=1 (also
 * SI objects whose presenter is not a LegoAnimPresenter but whose data is an
 * animation).  On failure *out is NULL and err says why. */
ra_status ra_archive_open(const uint8_t *data, size_t size, const ra_options *opt, ra_archive **out, ra_error *err);
/* The payload of item i: inflated or joined on first use, owned by the archive. */
ra_status ra_archive_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
/* The skeleton (CINF bytes) of a Metroid item; RA_ERR_USAGE if it has none. */
ra_status ra_archive_skeleton(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
/* The item an animation=NAME|ID option names: by exact name first, then by
 * id (decimal, or hex with 0x).  SIZE_MAX if none. */
size_t ra_archive_find(const ra_archive *ar, const char *name_or_id);
void ra_archive_free(ra_archive *ar);

/* ---- writers ------------------------------------------------------------------ */
/* One animation object of an SI file. */
typedef struct ra_si_object {
    uint32_t id;
    const char *name;
    const char *presenter; /* e.g. "LegoAnimPresenter" */
    ra_vec3 location, direction, up;
    const char *extra;     /* directives ("key:value" text) or NULL */
    const uint8_t *data;   /* the .ani bytes */
    size_t size;
} ra_si_object;
/* RIFF OMNI version 2.2 with bufferSize buffer_size (>= 256): every object an
 * objectAction (type 11, file type " OBJ") in its own MxSt, or all of them
 * children of one parallel action named `composite` (id composite_id) when
 * that is not NULL; the data chunks are split at buffer boundaries (SPLIT
 * flag) and the boundaries padded with "pad " chunks, as the game's files are. */
ra_status ra_si_write(const ra_si_object *objs, size_t n, uint32_t buffer_size, const char *composite,
                      uint32_t composite_id, ra_writer *w, ra_error *err);

/* One resource of a Metroid Prime 1 pak. */
typedef struct ra_pak_resource {
    char type[4];        /* "ANIM", "CINF", "ANCS", ... */
    uint32_t id;
    const uint8_t *data;
    size_t size;
    bool compress;       /* zlib (best compression), with its u32 inflated length */
    const char *name;    /* non-NULL: also listed in the named-resource table */
} ra_pak_resource;
/* Version 0x00030005, tables and resources 32-aligned, padding 0xFF. */
ra_status ra_pak_write(const ra_pak_resource *res, size_t n, ra_writer *w, ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
