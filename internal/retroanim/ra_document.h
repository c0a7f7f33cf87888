/* retroanim — inside the library: the format registry's records and the
 * document every format's reader fills (the public API sees both as opaque
 * types, include/retroanim/retroanim.h).
 *
 * Layers (docs/design.md): each format has a model (what the file holds, read
 * and written faithfully), a reference evaluator `pose` (the game's playback
 * rules) and `to_scene`, which bakes those rules into the neutral ra_scene. */
#ifndef RETROANIM_RA_DOCUMENT_H
#define RETROANIM_RA_DOCUMENT_H

#include "retroanim/retroanim.h"
#include "ra_base.h"
#include "ra_json.h"
#include "ra_math.h"
#include "ra_scene.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ra_document {
    const ra_format *format;
    ra_arena *arena;
    void *model;    /* the format model (format-specific struct) */
    void *state;    /* to_scene's private mapping, used by pose */
    ra_scene scene; /* filled by to_scene */
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
    /* the archive and item index of such a document (an ra_archive *), for
     * formats that fetch more of the archive (a Metroid character's model) */
    void *archive;
    size_t archive_item;
    /* the archive's own path, for an item's document (formats that look for
     * companion files beside the archive: a LEGO Island WORLD.WDB) */
    const char *archive_filename;
    /* Set before ra_document_build_scene by a consumer that inserts the
     * automatic density keys itself while copying the keys out (the Assimp
     * importer writes them straight into the aiScene, ra_key_cut_*): the
     * bake leaves them out (max_keys still counts them) and key_cut_angle
     * is set to the angle to cut at (0: no cut). */
    bool defer_key_cut;
    double key_cut_angle;
    /* With defer_key_cut, the rotation keys that cut inserts into each
     * channel (the animations' channels one after another), as the load
     * counted them, so that the consumer need not count again (NULL: not
     * counted, or out of memory). */
    size_t *key_cut_added;
    /* Set before ra_document_build_scene by a consumer that would call
     * ra_document_free_bulk right after it (the Assimp importer, the CLI's
     * convert): a format's bake may free each of the model's bulk arrays as
     * soon as no job left to run reads it (ra_arena_take_bulk), so that the
     * model does not stay whole beside the baked keys; build_scene then ends
     * with ra_document_free_bulk, whether it succeeds or not. */
    bool free_bulk_early;
    /* Set by ra_document_free_bulk: the model's bulk arrays are gone (the
     * scene stays whole); pose, the source dump and another bake are refused. */
    bool bulk_freed;
};

/* Frees the model's bulk arrays (ra_arena_bulk_memdup: a track's keys as
 * stored, which the scene never points into) for a consumer that keeps only
 * the built scene from here on (the Assimp importer, before it copies the
 * scene out). */
void ra_document_free_bulk(ra_document *doc);

/* ra_scene_check of the document's scene, its channels' keys (the bulk of
 * the work) checked on the load's threads first; the same answer and the
 * same first error. */
ra_status ra_document_check_scene(ra_document *doc, ra_error *err);
/* The passes over the keys after a bake (ra_document_build_scene), on the
 * load's threads (ra_document_threads): *fine (in tmp) gets for every
 * channel whether its keys pass the scene check's key tests, for
 * ra_scene_check_fine.  With cut, the automatic density: the key angle from
 * the channels' reach (ra_scene_auto_key_angle), the rotation keys that
 * bring every two keys within it counted, RA_ERR_LIMIT past max_keys, and
 * the keys inserted (with defer_key_cut, key_cut_angle and key_cut_added
 * set for the consumer instead). */
ra_status ra_document_key_passes(ra_document *doc, bool cut, double max_keys, ra_arena *tmp, uint8_t **fine,
                                 ra_error *err);
/* ra_scene_check with the channels' key tests made already (fine as above) */
ra_status ra_scene_check_fine(const ra_scene *s, ra_arena *tmp, const uint8_t *fine, ra_error *err);

struct ra_format {
    const char *id;         /* "lego_ani" */
    const char *name;       /* "LEGO Island animation" */
    const char *extensions; /* space-separated, lowercase, no dots: "ani" */
    const char *detection;  /* how detect() decides, for `retroanim formats` */
    /* 0 = not this format; otherwise a confidence 1..100 from the first bytes. */
    int (*detect)(const uint8_t *data, size_t size);
    ra_status (*read)(ra_document *doc, const uint8_t *data, size_t size, ra_error *err);
    ra_status (*to_scene)(ra_document *doc, ra_error *err);
    /* World transforms (same frame as the scene) of every scene node at t
     * seconds of animation `anim`, by the game's own rules, into world[node_count]. */
    ra_status (*pose)(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err);
    void (*dump_source)(const ra_document *doc, ra_json *j);
    ra_status (*write)(const ra_document *doc, ra_writer *w, ra_error *err);
    /* the format's own option keys (the common ones are in options.c) */
    const ra_option_decl *options;
    size_t option_count;
    /* a format whose keys this one accepts too (an archive's item format) */
    const ra_format *options_also;
    bool archive;
};

/* The registry, as an array. */
const ra_format *const *ra_formats(size_t *count);

/* Typed reads of validated options (the default when the key is absent). */
double ra_options_get_double(const ra_options *o, const char *key, double def);
bool ra_options_get_bool(const ra_options *o, const char *key, bool def);
bool ra_options_is(const ra_options *o, const char *key, const char *value);
/* The values of the keys f declares (f NULL: the common keys), leaving keys
 * it does not know for the format to judge: what can be checked before the
 * format is known. */
ra_status ra_options_validate_known(const ra_options *o, const ra_format *f, ra_error *err);
/* One value against its declaration (RA_ERR_USAGE naming the key). */
ra_status ra_option_check_value(const ra_option_decl *d, const char *fmt_id, const char *v, ra_error *err);

/* The largest input file a load accepts: the option max_file_size, or
 * RA_DEFAULT_MAX_FILE_SIZE (256 MiB; the largest real file seen is 1.8 MB).
 * Files are refused before they are read (ra_read_file_max). */
#define RA_DEFAULT_MAX_FILE_SIZE ((size_t)256 << 20)
size_t ra_max_file_size(const ra_options *opt);

/* The arena of one load of `size` bytes: its limit is the option memory_limit,
 * or the default (64 MiB + 64 x size), and at least 64 KiB.  NULL when out of memory. */
ra_arena *ra_load_arena(const ra_options *opt, size_t size);
/* For the formats' bakers: the samples one load may take (option max_samples;
 * default 32768 + 16 per byte of the file; Homeworld has its own default),
 * and the error of a bake that ran out of them. */
size_t ra_document_max_samples(const ra_document *doc);
ra_status ra_fail_max_samples(const ra_document *doc, ra_error *err);
/* Baking parameters for doc: the defaults, its format, and the sample budget
 * (*samples_left starts at ra_document_max_samples). */
void ra_document_bake_params(const ra_document *doc, ra_bake_params *p, size_t *samples_left);

/* ---- what every to_scene starts and ends with ------------------------------------------
 * The common options, read once (the option tables have checked them): the
 * coordinate policy, the largest key angle and the bake's sample budget.
 * bake.samples_left points at samples_left: keep the struct where it is. */
typedef struct ra_scene_start {
    bool native;          /* coords=native */
    bool key_angle_set;   /* the option max_key_angle was given */
    double max_key_angle; /* radians: the option, or the format's default */
    size_t samples_left;
    ra_bake_params bake; /* ra_document_bake_params, with max_key_angle */
} ra_scene_start;
void ra_scene_start_init(const ra_document *doc, double default_key_angle_deg, ra_scene_start *st);
/* The metadata every scene has: format, native_ticks_per_second (left out
 * when it is not positive: a skeleton alone has no rate), coords (how the
 * frame was chosen, in words). */
ra_status ra_scene_standard_meta(ra_document *doc, double native_ticks_per_second, const char *coords, ra_error *err);

/* JSON of the scene (the `dump` schema of docs/design.md). */
void ra_scene_dump_json(const ra_scene *s, ra_json *j);

#ifdef __cplusplus
}
#endif
#endif
