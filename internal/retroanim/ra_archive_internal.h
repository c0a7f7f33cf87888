/* The archive readers' shared internals (not public). */
#ifndef RETROANIM_ARCHIVE_INTERNAL_H
#define RETROANIM_ARCHIVE_INTERNAL_H

#include "retroanim/ra_archive.h"
#include "ra_document.h"

/* A new item at the end of ar->items (zeroed, meta empty); NULL when out of memory. */
ra_archive_item *ra_archive_add(ra_archive *ar);
/* A line in ar->warnings; false when out of memory. */
bool ra_archive_warn(ra_archive *ar, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* An archive kind: what its reader gives the listing API (archive.c walks
 * them in detection order).  open fills ar->items (ra_archive_add) and
 * ar->warnings (ra_archive_warn); payload gives item i's bytes (as stored, or
 * decompressed into ar->arena); skeleton (NULL when items never have one)
 * gives the companion file of an item with has_skeleton. */
typedef struct ra_archive_kind {
    const char *id; /* the registry format's id: "lego_si" */
    bool (*detect)(const uint8_t *data, size_t size);
    ra_status (*open)(ra_archive *ar, const ra_options *opt, ra_error *err);
    ra_status (*payload)(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
    ra_status (*skeleton)(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err);
    /* optional: why bytes this kind does not detect are still refused by name (a
     * lookalike of another game, e.g. Homeworld 2's "_ARCHIVE" .big), or NULL */
    const char *(*lookalike)(const uint8_t *data, size_t size);
    /* optional: the archive path of item i's companion (a Homeworld .geo/.peo), which
     * names it in messages and gives its extension; NULL: a Metroid "CINF" */
    const char *(*companion_path)(const ra_archive *ar, size_t i);
} ra_archive_kind;

extern const ra_archive_kind ra_archive_si;  /* LEGO Island .SI (lego_si.c) */
extern const ra_archive_kind ra_archive_pak; /* Metroid Prime 1 and 2 .pak (mp_pak.c) */
extern const ra_archive_kind ra_archive_big; /* Homeworld .big, RBF1.23 (hw_big.c) */

/* Writers build archives from loose files (tests, modders' repacks): SI with
 * chunks split at buffer boundaries as the game's tools do, pak with zlib. */
/* ---- writers ------------------------------------------------------------------ */
/* One animation object of an SI file. */
typedef struct ra_si_object {
    uint32_t id;
    const char *name;
    const char *presenter; /* e.g. "LegoAnimPresenter" */
    ra_vec3 location, direction, up;
    const char *extra;   /* directives ("key:value" text) or NULL */
    const uint8_t *data; /* the .ani bytes */
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
    char type[4]; /* "ANIM", "CINF", "ANCS", ... */
    uint32_t id;
    const uint8_t *data;
    size_t size;
    bool compress;    /* zlib (best compression), with its u32 inflated length */
    const char *name; /* non-NULL: also listed in the named-resource table */
} ra_pak_resource;
/* Version 0x00030005, tables and resources 32-aligned, padding 0xFF. */
ra_status ra_pak_write(const ra_pak_resource *res, size_t n, ra_writer *w, ra_error *err);

#endif
