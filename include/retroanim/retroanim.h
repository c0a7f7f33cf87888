/* retroanim — animation formats of classic games, for Assimp and for C.
 *
 * Layers (see DESIGN.md): each format has a model (what the file holds, read
 * and written faithfully), a reference evaluator `pose` (the game's playback
 * rules) and `to_scene`, which bakes those rules into the neutral ra_scene.
 * This header is the entry point: the format registry and the document, which
 * owns everything one load produced (one arena, one free). */
#ifndef RETROANIM_RETROANIM_H
#define RETROANIM_RETROANIM_H

#include "ra_base.h"
#include "ra_json.h"
#include "ra_math.h"
#include "ra_scene.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RETROANIM_VERSION_MAJOR 0
#define RETROANIM_VERSION_MINOR 1
#define RETROANIM_VERSION_PATCH 0
#define RETROANIM_VERSION (RETROANIM_VERSION_MAJOR * 1000000 + RETROANIM_VERSION_MINOR * 1000 + RETROANIM_VERSION_PATCH)
uint32_t ra_version(void);

/* ---- options: KEY=VALUE pairs (CLI --option, Assimp property) ------------- */
#define RA_MAX_OPTIONS 32
typedef struct ra_options {
    const char *keys[RA_MAX_OPTIONS];
    const char *values[RA_MAX_OPTIONS];
    size_t count;
} ra_options;

/* Common keys (formats add their own, documented in README):
 *   coords=converted|native   frame of the scene (default converted: right-handed, Y up)
 *   ticks=seconds|native      Assimp tick unit (shim only; default seconds, 1 tick = 1 s)
 *   format=ID                 force the input format (e.g. lego_ani_body)
 *   max_depth=N               hierarchy depth limit (default 256)
 *   memory_limit=BYTES        arena limit per load (default 64 MiB + 64 x file size)
 *   max_nodes=N               nodes in the scene (default 1000000)
 *   max_keys=N                keys of all animations (default 50000000)
 *   max_file_size=BYTES       largest input file (default 256 MiB)                      */
void ra_options_init(ra_options *o);
/* Parses "KEY=VALUE"; the string must outlive the options.  false if malformed or full. */
bool ra_options_add(ra_options *o, const char *key, const char *value);
/* Splits "k=v;k=v" (or ',' separated) into o, copying into the arena-free
 * static storage `store` of size store_size.  false if malformed. */
bool ra_options_parse_list(ra_options *o, const char *list, char *store, size_t store_size);
const char *ra_options_get(const ra_options *o, const char *key);
double ra_options_get_double(const ra_options *o, const char *key, double def);
bool ra_options_is(const ra_options *o, const char *key, const char *value);

/* ---- formats and documents -------------------------------------------------- */
typedef struct ra_format ra_format;

typedef struct ra_document {
    const ra_format *format;
    ra_arena *arena;
    void *model;      /* the format model (format-specific struct) */
    void *state;      /* to_scene's private mapping, used by pose */
    ra_scene scene;   /* filled by to_scene */
    ra_options options;
    size_t source_size;
    const char *filename; /* as given to load/read (may be NULL); formats that look for
                             companion files (a Metroid CINF) start from it */
    /* Set by the archive formats on the document of one of their items: no
     * companion file is looked for on disk; the archive hands the companion
     * (a Metroid animation's CINF) as bytes, valid during read. */
    bool in_archive;
    const uint8_t *companion;
    size_t companion_size;
    const char *companion_name;
} ra_document;

struct ra_format {
    const char *id;          /* "lego_ani" */
    const char *name;        /* "LEGO Island animation" */
    const char *extensions;  /* space-separated, lowercase, no dots: "ani" */
    const char *detection;   /* how detect() decides, for `retroanim formats` */
    /* 0 = not this format; otherwise a confidence 1..100 from the first bytes. */
    int (*detect)(const uint8_t *data, size_t size);
    ra_status (*read)(ra_document *doc, const uint8_t *data, size_t size, ra_error *err);
    ra_status (*to_scene)(ra_document *doc, ra_error *err);
    /* World transforms (same frame as the scene) of every scene node at t
     * seconds of animation `anim`, by the game's own rules, into world[node_count]. */
    ra_status (*pose)(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err);
    void (*dump_source)(const ra_document *doc, ra_json *j);
    ra_status (*write)(const ra_document *doc, ra_writer *w, ra_error *err);
};

const ra_format *const *ra_formats(size_t *count);
const ra_format *ra_format_find(const char *id);
/* Best format for the bytes (by signature); with no signature match, or only
 * a low-confidence one (a Metroid CINF, which has no magic), the format the
 * file name's extension names decides when it names one.  NULL if none. */
const ra_format *ra_format_detect(const uint8_t *data, size_t size, const char *filename);
/* Does any format claim this file name's extension? */
const ra_format *ra_format_by_extension(const char *filename);

/* The largest input file a load accepts: the option max_file_size, or
 * RA_DEFAULT_MAX_FILE_SIZE (256 MiB; the largest real file seen is 1.8 MB).
 * Files are refused before they are read (ra_read_file_max). */
#define RA_DEFAULT_MAX_FILE_SIZE ((size_t)256 << 20)
size_t ra_max_file_size(const ra_options *opt);

/* The arena of one load of `size` bytes: its limit is the option memory_limit,
 * or the default (64 MiB + 64 x size), and at least 64 KiB.  NULL when out of memory. */
ra_arena *ra_load_arena(const ra_options *opt, size_t size);
/* Reads the bytes (the document does not keep pointers into them) and builds
 * the scene.  On failure *out is NULL and err says why. */
ra_status ra_document_load(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                           ra_document **out, ra_error *err);
/* Only the model (no scene): for dump --source and round trips. */
ra_status ra_document_read(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                           ra_document **out, ra_error *err);
/* The second half of ra_document_load, for a document from ra_document_read
 * (once, and the file's bytes may be gone by then): bakes the scene and checks
 * it.  On failure the document stays the caller's to free. */
ra_status ra_document_build_scene(ra_document *doc, ra_error *err);
ra_status ra_document_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err);
void ra_document_free(ra_document *doc);
/* For the formats' bakers: the samples one load may take (option max_samples;
 * default 32768 + 16 per byte of the file; Homeworld has its own default),
 * and the error of a bake that ran out of them. */
size_t ra_document_max_samples(const ra_document *doc);
ra_status ra_fail_max_samples(const ra_document *doc, ra_error *err);

/* Invariants every scene must hold (unique non-empty names, parents before
 * children, finite values, increasing key times within the duration, unit
 * quaternions, channels on existing nodes).  Tests, fuzzers and debug builds
 * call it after each successful load. */
ra_status ra_scene_check(const ra_scene *s, ra_error *err);

/* JSON of the scene (the `dump` schema of DESIGN.md). */
void ra_scene_dump_json(const ra_scene *s, ra_json *j);

#ifdef __cplusplus
}
#endif
#endif
