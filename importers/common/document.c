/* The format registry and documents (one arena per load). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/ra_document.h"

uint32_t ra_version(void) { return RETROANIM_VERSION; }

#define RA_STR_(x) #x
#define RA_STR(x) RA_STR_(x)
const char *ra_version_string(void)
{
    return RA_STR(RETROANIM_VERSION_MAJOR) "." RA_STR(RETROANIM_VERSION_MINOR) "." RA_STR(RETROANIM_VERSION_PATCH);
}

/* ---- registry ---------------------------------------------------------------------- */
extern const ra_format ra_format_lego_ani;
extern const ra_format ra_format_lego_si;
extern const ra_format ra_format_metroid_pak;
extern const ra_format ra_format_lego_ani_body;
extern const ra_format ra_format_metroid_anim;
extern const ra_format ra_format_metroid_cinf;
extern const ra_format ra_format_metroid_cmdl;
extern const ra_format ra_format_wog_anim;
extern const ra_format ra_format_wog_movie;
extern const ra_format ra_format_niff;
extern const ra_format ra_format_homeworld_mad;
extern const ra_format ra_format_homeworld_big;
extern const ra_format ra_format_lego_wdb;

static const ra_format *const g_formats[] = {
    &ra_format_lego_ani, &ra_format_lego_ani_body, &ra_format_metroid_anim,  &ra_format_metroid_cinf,
    &ra_format_wog_anim, &ra_format_wog_movie,     &ra_format_niff,          &ra_format_homeworld_mad,
    &ra_format_lego_si,  &ra_format_metroid_pak,   &ra_format_homeworld_big, &ra_format_metroid_cmdl,
    &ra_format_lego_wdb,
};

const ra_format *const *ra_formats(size_t *count)
{
    *count = sizeof g_formats / sizeof g_formats[0];
    return g_formats;
}

size_t ra_format_count(void) { return sizeof g_formats / sizeof g_formats[0]; }
const ra_format *ra_format_at(size_t i) { return i < ra_format_count() ? g_formats[i] : NULL; }
const char *ra_format_id(const ra_format *f) { return f ? f->id : NULL; }
const char *ra_format_name(const ra_format *f) { return f ? f->name : NULL; }
const char *ra_format_extensions(const ra_format *f) { return f ? f->extensions : NULL; }
const char *ra_format_detection(const ra_format *f) { return f ? f->detection : NULL; }
bool ra_format_is_archive(const ra_format *f) { return f && f->archive; }

const ra_option_decl *ra_format_options(const ra_format *f, size_t *count)
{
    *count = f ? f->option_count : 0;
    return f ? f->options : NULL;
}

const ra_format *ra_format_find(const char *id)
{
    if (!id) return NULL;
    for (size_t i = 0; i < sizeof g_formats / sizeof g_formats[0]; i++)
        if (strcmp(g_formats[i]->id, id) == 0) return g_formats[i];
    return NULL;
}

static bool ends_with_ext(const char *name, const char *ext, size_t ext_len)
{
    size_t n = strlen(name);
    if (n < ext_len + 1) return false;
    const char *tail = name + n - ext_len;
    if (tail[-1] != '.') return false;
    for (size_t i = 0; i < ext_len; i++)
        if (tolower((unsigned char)tail[i]) != ext[i]) return false;
    return true;
}

const ra_format *ra_format_by_extension(const char *filename)
{
    if (!filename) return NULL;
    for (size_t i = 0; i < sizeof g_formats / sizeof g_formats[0]; i++) {
        const char *e = g_formats[i]->extensions;
        while (e && *e) {
            size_t len = strcspn(e, " ");
            if (len && ends_with_ext(filename, e, len)) return g_formats[i];
            e += len;
            while (*e == ' ') e++;
        }
    }
    return NULL;
}

#define RA_DETECT_CONFIDENT 50 /* a signature with a magic number scores above this */

const ra_format *ra_format_detect(const uint8_t *data, size_t size, const char *filename)
{
    const ra_format *best = NULL;
    int best_score = 0;
    for (size_t i = 0; i < sizeof g_formats / sizeof g_formats[0]; i++) {
        if (!g_formats[i]->detect) continue;
        int s = g_formats[i]->detect(data, size);
        if (s > best_score) {
            best_score = s;
            best = g_formats[i];
        }
    }
    /* a low-confidence match (a Metroid CINF has no magic) yields to the
     * format the file's extension names: an explicit extension decides */
    const ra_format *by_ext = ra_format_by_extension(filename);
    if (best && best_score < RA_DETECT_CONFIDENT && by_ext) return by_ext;
    return best ? best : by_ext;
}

/* ---- documents ------------------------------------------------------------------------ */
/* Default limits: memory grows with the file (a hostile file of a few
 * kilobytes gets 64 MiB; the big files of bench/ get what they need). */
#define RA_DEFAULT_MEMORY_BASE ((double)(64u << 20))
#define RA_DEFAULT_MEMORY_PER_BYTE 64.0
#define RA_DEFAULT_MAX_NODES 1000000.0
#define RA_DEFAULT_MAX_KEYS 50000000.0

size_t ra_max_file_size(const ra_options *opt)
{
    double v = ra_options_get_double(opt, "max_file_size", (double)RA_DEFAULT_MAX_FILE_SIZE);
    if (!(v >= 0)) v = (double)RA_DEFAULT_MAX_FILE_SIZE;
    return v >= (double)SIZE_MAX ? SIZE_MAX : (size_t)v;
}

/* RA_OK when no warning was lost (out of memory) since ra_warnings_lost()
 * was `lost`: a load that lost one fails rather than return a scene without it */
static ra_status warnings_kept(size_t lost, const char *format, ra_error *err)
{
    if (ra_warnings_lost() == lost) return RA_OK;
    return ra_fail(err, RA_ERR_NO_MEMORY, format, RA_NO_OFFSET, "", "out of memory (keeping a warning)");
}

ra_arena *ra_load_arena(const ra_options *opt, size_t size)
{
    double lim =
        ra_options_get_double(opt, "memory_limit", RA_DEFAULT_MEMORY_BASE + RA_DEFAULT_MEMORY_PER_BYTE * (double)size);
    if (!(lim >= 65536)) lim = 65536;
    return ra_arena_create(lim >= (double)SIZE_MAX ? 0 : (size_t)lim);
}

static ra_status doc_read(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                          ra_document **out, ra_error *err)
{
    *out = NULL;
    size_t max_size = ra_max_file_size(opt);
    if (size > max_size)
        return ra_fail(err, RA_ERR_LIMIT, "retroanim", RA_NO_OFFSET, "max_file_size",
                       "the file has %zu bytes, more than max_file_size (%zu)", size, max_size);
    const char *forced = ra_options_get(opt, "format");
    const ra_format *f = NULL;
    if (forced) {
        f = ra_format_find(forced);
        if (!f)
            return ra_fail(err, RA_ERR_USAGE, "retroanim", RA_NO_OFFSET, "format", "unknown format id '%s'", forced);
    } else {
        f = ra_format_detect(data, size, filename);
        if (!f) {
            /* a bad value of a common key is still named first */
            ra_status st = ra_options_validate_known(opt, NULL, err);
            if (st != RA_OK) return st;
            return ra_fail(err, RA_ERR_BAD_MAGIC, "retroanim", size ? 0 : RA_NO_OFFSET, "",
                           size ? "not a file of any supported format" : "the file is empty");
        }
    }
    ra_status vs = ra_options_validate(opt, f, err);
    if (vs != RA_OK) return vs;
    ra_arena *arena = ra_load_arena(opt, size);
    if (!arena) return ra_fail(err, RA_ERR_NO_MEMORY, f->id, RA_NO_OFFSET, "", "out of memory");
    ra_document *d = ra_arena_alloc(arena, sizeof *d);
    if (!d) {
        ra_arena_destroy(arena);
        return ra_fail(err, RA_ERR_NO_MEMORY, f->id, RA_NO_OFFSET, "", "out of memory");
    }
    d->format = f;
    d->arena = arena;
    d->source_size = size;
    if (filename && !(d->filename = ra_arena_strndup(arena, filename, strlen(filename)))) {
        ra_arena_destroy(arena);
        return ra_fail(err, RA_ERR_NO_MEMORY, f->id, RA_NO_OFFSET, "", "out of memory");
    }
    ra_options_init(&d->options);
    if (opt) {
        /* copy the options into the arena so the document does not borrow them */
        for (size_t i = 0; i < opt->count; i++) {
            char *k = ra_arena_strndup(arena, opt->keys[i], strlen(opt->keys[i]));
            char *v = ra_arena_strndup(arena, opt->values[i], strlen(opt->values[i]));
            if (!k || !v) {
                ra_arena_destroy(arena);
                return ra_fail(err, RA_ERR_NO_MEMORY, f->id, RA_NO_OFFSET, "", "out of memory");
            }
            ra_options_add(&d->options, k, v);
        }
    }
    ra_scene_init(&d->scene, arena, f->id);
    size_t lost = ra_warnings_lost();
    ra_status st = f->read(d, data, size, err);
    if (st == RA_OK) st = warnings_kept(lost, f->id, err);
    if (st != RA_OK) {
        ra_arena_destroy(arena);
        return st;
    }
    *out = d;
    return RA_OK;
}

ra_status ra_document_read(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                           ra_document **out, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    return doc_read(data, size, filename, opt, out, err);
}

/* Assimp's glTF exporter fails on an animation named like a node (one id
 * space); an animation that is gets ".anim" appended (until it is unique). */
static ra_status name_animations_apart(ra_document *d, ra_error *err)
{
    ra_scene *s = &d->scene;
    for (size_t a = 0; a < s->animation_count; a++) {
        const char *n = s->animations[a].name;
        while (n && ra_scene_find_node(s, n) >= 0) n = ra_arena_printf(d->arena, "%s.anim", n);
        if (!n) return ra_fail(err, RA_ERR_NO_MEMORY, d->format->id, RA_NO_OFFSET, "", "out of memory");
        s->animations[a].name = n;
    }
    return RA_OK;
}

/* max_nodes and max_keys: the scene's size, beyond what memory_limit bounds */
static ra_status check_counts(ra_document *d, ra_error *err)
{
    const ra_scene *s = &d->scene;
    double max_nodes = ra_options_get_double(&d->options, "max_nodes", RA_DEFAULT_MAX_NODES);
    double max_keys = ra_options_get_double(&d->options, "max_keys", RA_DEFAULT_MAX_KEYS);
    if ((double)s->node_count > max_nodes)
        return ra_fail(err, RA_ERR_LIMIT, d->format->id, RA_NO_OFFSET, "max_nodes",
                       "the scene has %zu nodes, more than max_nodes (%.0f)", s->node_count, max_nodes);
    double keys;
    ra_scene_channel_count(s, &keys);
    if (keys > max_keys)
        return ra_fail(err, RA_ERR_LIMIT, d->format->id, RA_NO_OFFSET, "max_keys",
                       "the animations have %.0f keys, more than max_keys (%.0f)", keys, max_keys);
    return RA_OK;
}

static ra_status bulk_gone(const ra_document *d, ra_error *err)
{
    return ra_fail(err, RA_ERR_USAGE, d->format->id, RA_NO_OFFSET, "",
                   "the model's arrays were freed once the scene was built (ra_document_free_bulk)");
}

void ra_document_free_bulk(ra_document *doc)
{
    if (!doc || doc->bulk_freed) return;
    ra_arena_free_bulk(doc->arena);
    doc->bulk_freed = true;
}

ra_status ra_document_build_scene(ra_document *d, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    if (d->bulk_freed) return bulk_gone(d, err);
    /* max_keys stops the bake as soon as the kept keys pass it (a key
     * charge failing reads as out of memory to the format: named here) */
    double max_keys = ra_options_get_double(&d->options, "max_keys", RA_DEFAULT_MAX_KEYS);
    ra_key_budget saved = ra_key_budget_begin(max_keys);
    size_t lost = ra_warnings_lost();
    ra_status st = d->format->to_scene(d, err);
    if (ra_key_budget_end(saved) && st != RA_OK) {
        ra_error_clear(err);
        st = ra_fail(err, RA_ERR_LIMIT, d->format->id, RA_NO_OFFSET, "max_keys",
                     "the animations need more than max_keys (%.0f) keys", max_keys);
    }
    ra_scratch_flush();                               /* the bakers' scratch this thread kept */
    if (d->free_bulk_early) ra_document_free_bulk(d); /* what the bake left (the steps below read the scene) */
    /* the passes over the baked keys: without max_key_angle, rotation keys
     * brought close enough together for consumers that lerp quaternion
     * components (ra_scene_auto_key_angle); the scene check's key tests */
    ra_arena *tmp = st == RA_OK ? ra_arena_create(0) : NULL;
    uint8_t *fine = NULL;
    if (st == RA_OK && !tmp) st = ra_fail_nomem(err, d->format->id);
    bool cut = !ra_options_get(&d->options, "max_key_angle");
    if (st == RA_OK) st = ra_document_key_passes(d, cut, max_keys, tmp, &fine, err);
    if (st == RA_OK) st = check_counts(d, err);
    if (st == RA_OK) st = name_animations_apart(d, err);
    if (st == RA_OK) st = ra_scene_check_fine(&d->scene, tmp, fine, err);
    ra_arena_destroy(tmp);
    if (st == RA_OK) st = warnings_kept(lost, d->format->id, err);
    return st;
}

ra_status ra_document_load(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                           ra_document **out, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    ra_document *d;
    *out = NULL;
    ra_status st = doc_read(data, size, filename, opt, &d, err);
    if (st != RA_OK) return st;
    st = ra_document_build_scene(d, err);
    if (st != RA_OK) {
        ra_document_free(d);
        *out = NULL;
        return st;
    }
    *out = d;
    return RA_OK;
}

ra_status ra_document_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    if (!doc->format->pose)
        return ra_fail(err, RA_ERR_UNSUPPORTED, doc->format->id, RA_NO_OFFSET, "", "no reference evaluator");
    if (doc->bulk_freed) return bulk_gone(doc, err);
    if (doc->scene.animation_count && anim >= doc->scene.animation_count)
        return ra_fail(err, RA_ERR_USAGE, doc->format->id, RA_NO_OFFSET, "anim", "animation %zu does not exist", anim);
    return doc->format->pose(doc, anim, t, world, err);
}

size_t ra_document_max_samples(const ra_document *doc)
{
    double v = ra_options_get_double(&doc->options, "max_samples", 32768.0 + 16.0 * (double)doc->source_size);
    if (!(v >= 1)) v = 1;
    return v >= (double)SIZE_MAX ? SIZE_MAX : (size_t)v;
}

void ra_document_bake_params(const ra_document *doc, ra_bake_params *p, size_t *samples_left)
{
    ra_bake_params_default(p);
    p->format = doc->format->id;
    p->max_samples = *samples_left = ra_document_max_samples(doc);
    p->samples_left = samples_left;
}

void ra_scene_start_init(const ra_document *doc, double default_key_angle_deg, ra_scene_start *st)
{
    st->native = ra_options_is(&doc->options, "coords", "native");
    st->key_angle_set = ra_options_get(&doc->options, "max_key_angle") != NULL;
    st->max_key_angle = ra_options_get_double(&doc->options, "max_key_angle", default_key_angle_deg) * RA_PI / 180.0;
    ra_document_bake_params(doc, &st->bake, &st->samples_left);
    st->bake.max_key_angle = st->max_key_angle;
}

ra_status ra_scene_standard_meta(ra_document *doc, double native_ticks_per_second, const char *coords, ra_error *err)
{
    ra_meta_list *md = &doc->scene.meta;
    ra_arena *ar = doc->arena;
    bool ok = ra_meta_set_string(ar, md, "format", doc->format->id) &&
              (!(native_ticks_per_second > 0) ||
               ra_meta_set_double(ar, md, "native_ticks_per_second", native_ticks_per_second)) &&
              ra_meta_set_string(ar, md, "coords", coords);
    return ok ? RA_OK : ra_fail_nomem(err, doc->format->id);
}

ra_status ra_fail_max_samples(const ra_document *doc, ra_error *err)
{
    return ra_fail(err, RA_ERR_LIMIT, doc->format->id, RA_NO_OFFSET, "max_samples",
                   "baking the animation needs more than %zu samples", ra_document_max_samples(doc));
}

void ra_document_free(ra_document *doc)
{
    if (doc) ra_arena_destroy(doc->arena);
}

const ra_format *ra_document_format(const ra_document *doc) { return doc ? doc->format : NULL; }
const ra_scene *ra_document_scene(const ra_document *doc) { return doc ? &doc->scene : NULL; }

ra_status ra_document_load_file(const char *path, const ra_options *opt, ra_document **out, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    *out = NULL;
    ra_status st = ra_options_validate_known(opt, NULL, err); /* the format's own keys: once it is known */
    if (st != RA_OK) return st;
    ra_file_bytes f;
    st = ra_file_bytes_get(path, ra_max_file_size(opt), &f, err);
    if (st != RA_OK) return st;
    st = ra_document_load(f.data, f.size, path, opt, out, err);
    ra_file_bytes_free(&f);
    return st;
}

ra_status ra_document_dump(const ra_document *doc, int flags, char **out, size_t *size, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    *out = NULL;
    if (size) *size = 0;
    const char *fid = doc ? doc->format->id : "retroanim";
    if (!doc) return ra_fail(err, RA_ERR_USAGE, fid, RA_NO_OFFSET, "", "no document");
    if ((flags & RA_DUMP_SOURCE) && !doc->format->dump_source)
        return ra_fail(err, RA_ERR_UNSUPPORTED, fid, RA_NO_OFFSET, "", "this format has no source dump");
    if ((flags & RA_DUMP_SOURCE) && doc->bulk_freed) return bulk_gone(doc, err);
    if (!(flags & RA_DUMP_SOURCE) && !doc->scene.node_count)
        return ra_fail(err, RA_ERR_USAGE, fid, RA_NO_OFFSET, "", "the document has no scene (ra_document_build_scene)");
    ra_writer w;
    ra_writer_init(&w);
    ra_json j;
    ra_json_init_buffer(&j, &w, !(flags & RA_DUMP_COMPACT));
    if (flags & RA_DUMP_SOURCE) doc->format->dump_source(doc, &j);
    else ra_scene_dump_json(&doc->scene, &j);
    ra_json_finish(&j);
    if (j.failed || !ra_wr_u8(&w, 0)) {
        ra_writer_free(&w);
        return ra_fail(err, RA_ERR_NO_MEMORY, fid, RA_NO_OFFSET, "", "out of memory");
    }
    *out = (char *)w.data;
    if (size) *size = w.size - 1;
    return RA_OK;
}

void ra_string_free(char *s) { ra_free(s); }
