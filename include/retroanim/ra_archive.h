/* retroanim — the game archives that hold the animations: LEGO Island's
 * Interleaf .SI files ("RIFF" "OMNI"), Metroid Prime's .pak files and
 * Homeworld's .big files ("RBF1.23").
 *
 * ra_archive_open lists the animations inside an archive; ra_archive_payload
 * gives the bytes of one (joined from its SI chunks, inflated from the pak,
 * or expanded from the .big's LZSS), which the format's own reader takes as
 * a loose file would be.  A Metroid animation also names its skeleton (the
 * CINF of the first character of the ANCS that uses it): ra_archive_skeleton.
 *
 * The archives are formats of the registry too ("lego_si", "metroid_pak",
 * "homeworld_big"): ra_document_load on an archive loads one of its
 * animations, chosen by the option animation=NAME|ID (default the first),
 * and records the archive's other animations and the item's own fields in
 * the scene's metadata.
 */
#ifndef RETROANIM_RA_ARCHIVE_H
#define RETROANIM_RA_ARCHIVE_H

#include "retroanim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ra_archive_item {
    uint32_t id;           /* SI object id; pak asset id of the ANIM; .big TOC entry number */
    const char *name;      /* SI object name; the ANCS animation name; .big path without .mad (never NULL) */
    const char *kind;      /* SI presenter ("LegoAnimPresenter", ...); "ANIM" */
    const char *format;    /* format id of the payload: "lego_ani", "metroid_anim" */
    const char *extension; /* of the extracted file: "ani", "ANIM" */
    uint64_t offset;       /* archive offset of its first stored byte */
    uint64_t stored_size;  /* bytes it takes in the archive */
    uint64_t size;         /* bytes of the payload (inflated, joined) */
    bool compressed;
    bool has_skeleton; /* metroid: skeleton_id names a CINF of the archive; homeworld: the
                          TOC entry of the ship's .geo/.peo (ra_archive_skeleton gives either) */
    uint32_t skeleton_id;
    const char *group; /* SI: the composite action holding it; pak: the ANCS character ("" if none) */
    ra_meta_list meta; /* everything else the archive says about it (si.*, pak.*) */
    const void *priv;  /* the container's own record */
} ra_archive_item;

typedef struct ra_archive {
    const char *format; /* "lego_si", "metroid_pak" */
    ra_archive_item *items;
    size_t count;
    ra_meta_list meta; /* archive-wide fields (version, buffer size, resource counts) */
    char **warnings;   /* what was skipped or guessed, one line each */
    size_t warning_count;
    /* private */
    ra_arena *arena;
    bool own_arena;
    const uint8_t *data; /* borrowed: the archive's bytes must outlive it */
    size_t size;
    size_t item_cap;
    size_t warning_cap;
    void *impl;
} ra_archive;

/* Is this an archive (by signature)?  The format id, or NULL. */
RA_API const char *ra_archive_detect(const uint8_t *data, size_t size);
/* Lists the animations.  The archive borrows data (keep it alive until
 * ra_archive_free).  Options: memory_limit (as for a load), si_all=1 (also
 * SI objects whose presenter is not a LegoAnimPresenter but whose data is an
 * animation).  On failure *out is NULL and err says why. */
RA_API ra_status ra_archive_open(const uint8_t *data, size_t size, const ra_options *opt, ra_archive **out,
                                 ra_error *err);
/* The payload of item i: inflated or joined on first use, owned by the archive. */
RA_API ra_status ra_archive_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
/* The companion of item i (has_skeleton): a Metroid item's skeleton (CINF
 * bytes), a Homeworld .mad's ship geometry (.geo/.peo bytes); RA_ERR_USAGE if
 * it has none. */
RA_API ra_status ra_archive_skeleton(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
/* The file extension to extract that companion under, beside the item's own
 * file with the same stem, where the loose item finds it: "CINF", "geo",
 * "peo"; NULL if item i has none. */
RA_API const char *ra_archive_skeleton_extension(const ra_archive *ar, size_t i);
/* The item an animation=NAME|ID option names: by exact name first, then by
 * id (decimal, or hex with 0x).  SIZE_MAX if none. */
RA_API size_t ra_archive_find(const ra_archive *ar, const char *name_or_id);
RA_API void ra_archive_free(ra_archive *ar);

#ifdef __cplusplus
}
#endif
#endif
