/* Game archives: the listing API over the archive kinds (ra_archive_kinds,
 * each reader's detect/open/payload/skeleton functions), and the archive
 * formats of the registry ("lego_si", "metroid_pak", "homeworld_big"), whose
 * documents are one animation of the archive read by its own format. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/ra_archive_internal.h"

/* Every archive kind, in detection order. */
static const ra_archive_kind *const kinds[] = {&ra_archive_si, &ra_archive_pak, &ra_archive_big};

static const ra_archive_kind *kind_of(const char *id)
{
    for (size_t k = 0; id && k < sizeof kinds / sizeof kinds[0]; k++)
        if (strcmp(kinds[k]->id, id) == 0) return kinds[k];
    return NULL;
}

const char *ra_archive_detect(const uint8_t *data, size_t size)
{
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k]->detect(data, size)) return kinds[k]->id;
    return NULL;
}

static ra_status open_in(ra_arena *arena, bool own, const uint8_t *data, size_t size, const ra_options *opt,
                         ra_archive **out, ra_error *err)
{
    *out = NULL;
    const char *f = ra_archive_detect(data, size);
    ra_archive *ar = f ? ra_arena_alloc(arena, sizeof *ar) : NULL;
    if (!ar) {
        if (own) ra_arena_destroy(arena);
        for (size_t k = 0; !f && k < sizeof kinds / sizeof kinds[0]; k++) {
            const char *why = kinds[k]->lookalike ? kinds[k]->lookalike(data, size) : NULL;
            if (why) return ra_fail(err, RA_ERR_BAD_MAGIC, kinds[k]->id, 0, "magic", "%s", why);
        }
        return f ? ra_fail(err, RA_ERR_NO_MEMORY, f, RA_NO_OFFSET, "", "out of memory")
                 : ra_fail(err, RA_ERR_BAD_MAGIC, "retroanim", size ? 0 : RA_NO_OFFSET, "",
                           "not a game archive (.SI RIFF OMNI, Metroid Prime .pak or Homeworld RBF1.23 .big)");
    }
    ar->format = f;
    ar->arena = arena;
    ar->own_arena = own;
    ar->data = data;
    ar->size = size;
    ra_status st = kind_of(f)->open(ar, opt, err);
    if (st != RA_OK) {
        if (own) ra_arena_destroy(arena);
        return st;
    }
    *out = ar;
    return RA_OK;
}

ra_status ra_archive_open(const uint8_t *data, size_t size, const ra_options *opt, ra_archive **out, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    const char *f = ra_archive_detect(data, size);
    ra_status vs = ra_options_validate(opt, f ? ra_format_find(f) : NULL, err);
    if (vs != RA_OK) {
        *out = NULL;
        return vs;
    }
    ra_arena *a = ra_load_arena(opt, size); /* the same limit as a load of these bytes */
    if (!a) {
        *out = NULL;
        return ra_fail(err, RA_ERR_NO_MEMORY, "retroanim", RA_NO_OFFSET, "", "out of memory");
    }
    return open_in(a, true, data, size, opt, out, err);
}

void ra_archive_free(ra_archive *ar)
{
    if (ar && ar->own_arena) ra_arena_destroy(ar->arena);
}

ra_status ra_archive_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    if (i >= ar->count) return ra_fail(err, RA_ERR_USAGE, ar->format, RA_NO_OFFSET, "", "no item %zu", i);
    return kind_of(ar->format)->payload(ar, i, data, size, err);
}

ra_status ra_archive_skeleton(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    ra_error_clear(err);
    const ra_archive_kind *k = kind_of(ar->format);
    if (i >= ar->count || !ar->items[i].has_skeleton || !k->skeleton)
        return ra_fail(err, RA_ERR_USAGE, ar->format, RA_NO_OFFSET, "", "item %zu has no skeleton", i);
    return k->skeleton(ar, i, data, size, err);
}

const char *ra_archive_skeleton_extension(const ra_archive *ar, size_t i)
{
    if (!ar || i >= ar->count || !ar->items[i].has_skeleton) return NULL;
    const ra_archive_kind *k = kind_of(ar->format);
    if (!k->companion_path) return "CINF";
    const char *p = k->companion_path(ar, i), *dot = strrchr(p, '.');
    return dot && !strchr(dot, '/') ? dot + 1 : "";
}

size_t ra_archive_find(const ra_archive *ar, const char *key)
{
    if (!key || !*key) return ar->count ? 0 : SIZE_MAX;
    for (size_t i = 0; i < ar->count; i++)
        if (strcmp(ar->items[i].name, key) == 0) return i;
    /* decimal, or hex after 0x (a leading 0 is not octal: "010" is ten) */
    bool hex = key[0] == '0' && (key[1] == 'x' || key[1] == 'X');
    const char *num = hex ? key + 2 : key;
    if (!(hex ? isxdigit((unsigned char)num[0]) : isdigit((unsigned char)num[0]))) return SIZE_MAX;
    char *end = NULL;
    unsigned long long v = strtoull(num, &end, hex ? 16 : 10);
    if (end && !*end && v <= UINT32_MAX)
        for (size_t i = 0; i < ar->count; i++)
            if (ar->items[i].id == v) return i;
    return SIZE_MAX;
}

/* ---- archive documents ---------------------------------------------------------------------------- */
extern const ra_format ra_format_lego_si, ra_format_metroid_pak, ra_format_homeworld_big, ra_format_lego_ani,
    ra_format_metroid_anim, ra_format_homeworld_mad;

typedef struct arch_doc {
    ra_archive *ar;
    size_t item;
    ra_document inner; /* the item's document: same arena and options */
} arch_doc;

static int detect_si(const uint8_t *data, size_t size) { return ra_archive_si.detect(data, size) ? 100 : 0; }
static int detect_pak(const uint8_t *data, size_t size) { return ra_archive_pak.detect(data, size) ? 90 : 0; }
static int detect_big(const uint8_t *data, size_t size) { return ra_archive_big.detect(data, size) ? 100 : 0; }

static ra_status arch_read(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    const char *fid = doc->format->id;
    arch_doc *m = ra_arena_alloc(doc->arena, sizeof *m);
    if (!m) return ra_fail(err, RA_ERR_NO_MEMORY, fid, RA_NO_OFFSET, "", "out of memory");
    /* the archive's bytes are needed only during this read: the readers copy
     * what they keep, and joined or inflated payloads are in the arena */
    ra_status st = open_in(doc->arena, false, data, size, &doc->options, &m->ar, err);
    if (st != RA_OK) return st;
    ra_archive *ar = m->ar;
    if (strcmp(ar->format, fid) != 0)
        return ra_fail(err, RA_ERR_BAD_MAGIC, fid, 0, "", "this is a %s archive, not %s", ar->format, fid);
    if (ar->count == 0)
        return ra_fail(err, RA_ERR_BAD_VALUE, fid, RA_NO_OFFSET, "animation", "the archive holds no animation");
    const char *want = ra_options_get(&doc->options, "animation");
    m->item = ra_archive_find(ar, want);
    if (m->item == SIZE_MAX)
        return ra_fail(err, RA_ERR_USAGE, fid, RA_NO_OFFSET, "animation",
                       "no animation named or numbered '%s' in the archive (retroanim list shows them)", want);
    const ra_archive_item *it = &ar->items[m->item];
    const uint8_t *p = NULL, *sk = NULL;
    size_t n = 0, skn = 0;
    st = ra_archive_payload(ar, m->item, &p, &n, err);
    if (st == RA_OK && it->has_skeleton) st = ra_archive_skeleton(ar, m->item, &sk, &skn, err);
    if (st != RA_OK) return st;
    /* a stored companion points into the archive's bytes, which need not
     * outlive this read, and a format may read it when it builds the scene
     * (a Homeworld .geo): a copy in the document's arena */
    if (sk && (uintptr_t)sk >= (uintptr_t)data && (uintptr_t)sk < (uintptr_t)data + size) {
        sk = ra_arena_memdup(doc->arena, sk, skn, 1);
        if (!sk) return ra_fail(err, RA_ERR_NO_MEMORY, fid, RA_NO_OFFSET, "", "out of memory");
    }
    m->inner = *doc;
    m->inner.format = ra_format_find(it->format);
    m->inner.model = NULL;
    m->inner.source_size = n;
    m->inner.filename = ra_arena_printf(doc->arena, "%s.%s", it->name, it->extension);
    m->inner.in_archive = true;
    m->inner.archive_filename = doc->filename;
    m->inner.companion = sk;
    m->inner.companion_size = skn;
    const ra_archive_kind *k = kind_of(ar->format);
    m->inner.companion_name = !it->has_skeleton   ? NULL
                              : k->companion_path ? ra_arena_printf(doc->arena, "%s", k->companion_path(ar, m->item))
                                                  : ra_arena_printf(doc->arena, "CINF %08X", it->skeleton_id);
    m->inner.archive = ar;
    m->inner.archive_item = m->item;
    if (!m->inner.format || !m->inner.filename || (it->has_skeleton && !m->inner.companion_name))
        return ra_fail(err, RA_ERR_NO_MEMORY, fid, RA_NO_OFFSET, "", "out of memory");
    ra_scene_init(&m->inner.scene, doc->arena, it->format);
    ra_error e;
    ra_error_clear(&e);
    st = m->inner.format->read(&m->inner, p, n, &e);
    if (st != RA_OK) {
        return ra_fail_wrap(err, &e, fid, RA_NO_OFFSET, "animation", "%s (id %u)", it->name, it->id);
    }
    doc->model = m;
    ar->data = NULL; /* the reads copied what they keep; the input need not outlive them */
    return RA_OK;
}

/* v in decimal at p; the end */
static char *decimal(char *p, uint64_t v)
{
    char t[20];
    size_t n = 0;
    do t[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n) *p++ = t[--n];
    return p;
}

static ra_status arch_to_scene(ra_document *doc, ra_error *err)
{
    arch_doc *m = doc->model;
    const ra_archive *ar = m->ar;
    const ra_archive_item *it = &ar->items[m->item];
    /* set on doc after the read made inner (the item's bulk is the arena's) */
    m->inner.free_bulk_early = doc->free_bulk_early;
    ra_status st = m->inner.format->to_scene(&m->inner, err);
    if (st != RA_OK) return st;
    doc->scene = m->inner.scene;
    doc->state = m->inner.state;
    ra_scene *s = &doc->scene;
    ra_arena *a = doc->arena;
    if (s->animation_count == 1) s->animations[0].name = it->name;
    bool ok = ra_meta_set_string(a, &s->meta, "archive.format", ar->format) &&
              ra_meta_set_int(a, &s->meta, "archive.item_id", it->id) &&
              ra_meta_set_string(a, &s->meta, "archive.item_name", it->name) &&
              ra_meta_set_string(a, &s->meta, "archive.item_kind", it->kind) &&
              ra_meta_set_int(a, &s->meta, "archive.item_count", (int64_t)ar->count);
    for (size_t i = 0; ok && i < it->meta.count; i++) ok = ra_meta_set(a, &s->meta, &it->meta.items[i]);
    /* the others, as "id name" under archive.other.N (keys no format sets:
     * appended at once without a lookup each, which made an archive of N
     * items cost N^2 string comparisons per import; made without printf,
     * which was then most of an import from a large archive) */
    ra_meta *other = ok && ar->count > 1 ? ra_arena_array_uninit(a, ar->count - 1, sizeof *other) : NULL;
    ok = ok && (ar->count < 2 || other);
    for (size_t i = 0, k = 0; ok && i < ar->count; i++) {
        if (i == m->item) continue;
        size_t nl = strlen(ar->items[i].name);
        char *key = ra_arena_array_uninit(a, sizeof "archive.other." + 20, 1),
             *v = ra_arena_array_uninit(a, 12 + nl, 1);
        if (!(ok = key && v)) break;
        memcpy(key, "archive.other.", sizeof "archive.other." - 1);
        *decimal(key + sizeof "archive.other." - 1, k) = '\0';
        char *e = decimal(v, ar->items[i].id);
        *e++ = ' ';
        memcpy(e, ar->items[i].name, nl + 1);
        other[k++] = (ra_meta){key, RA_META_STRING, {.s = v}};
    }
    ok = ok && ra_meta_add_refs(a, &s->meta, other, ar->count > 1 ? ar->count - 1 : 0);
    for (size_t i = 0; ok && i < ar->warning_count; i++) ra_scene_warn(s, "%s", ar->warnings[i]);
    return ok ? RA_OK : ra_fail(err, RA_ERR_NO_MEMORY, doc->format->id, RA_NO_OFFSET, "", "out of memory");
}

static ra_status arch_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    const arch_doc *m = doc->model;
    if (!m->inner.format->pose)
        return ra_fail(err, RA_ERR_UNSUPPORTED, doc->format->id, RA_NO_OFFSET, "", "no reference evaluator");
    return m->inner.format->pose(&m->inner, anim, t, world, err);
}

static void arch_dump_source(const ra_document *doc, ra_json *j)
{
    const arch_doc *m = doc->model;
    const ra_archive *ar = m->ar;
    ra_json_begin_object(j);
    ra_json_key(j, "archive");
    ra_json_string(j, ar->format);
    ra_json_key(j, "items");
    ra_json_begin_array(j);
    for (size_t i = 0; i < ar->count; i++) {
        const ra_archive_item *it = &ar->items[i];
        ra_json_begin_object(j);
        ra_json_key(j, "id");
        ra_json_uint(j, it->id);
        ra_json_key(j, "name");
        ra_json_string(j, it->name);
        ra_json_key(j, "kind");
        ra_json_string(j, it->kind);
        ra_json_key(j, "offset");
        ra_json_uint(j, it->offset);
        ra_json_key(j, "stored_size");
        ra_json_uint(j, it->stored_size);
        ra_json_key(j, "size");
        ra_json_uint(j, it->size);
        ra_json_key(j, "compressed");
        ra_json_bool(j, it->compressed);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "item");
    ra_json_uint(j, m->item);
    ra_json_key(j, "model");
    if (m->inner.format->dump_source) m->inner.format->dump_source(&m->inner, j);
    else ra_json_null(j);
    ra_json_end_object(j);
}

/* writing an archive document writes the chosen animation as a loose file */
static ra_status arch_write(const ra_document *doc, ra_writer *w, ra_error *err)
{
    const arch_doc *m = doc->model;
    if (!m->inner.format->write)
        return ra_fail(err, RA_ERR_UNSUPPORTED, doc->format->id, RA_NO_OFFSET, "", "no writer");
    return m->inner.format->write(&m->inner, w, err);
}

static const ra_option_decl si_options[] = {
    {"animation", RA_OPT_STRING, 0, 0, false, NULL, "the first", "the animation to import: a name or an id"},
    {"si_all", RA_OPT_BOOL, 0, 0, false, NULL, "false",
     "also list OBJ objects whose presenter is not a Lego*AnimPresenter but whose data is an animation"},
};

const ra_format ra_format_lego_si = {
    "lego_si",
    "LEGO Island Interleaf archive (.SI): one animation, chosen with animation=NAME|ID",
    "si",
    "\"RIFF\" at 0 and \"OMNI\" at 8",
    detect_si,
    arch_read,
    arch_to_scene,
    arch_pose,
    arch_dump_source,
    arch_write,
    .options = si_options,
    .option_count = sizeof si_options / sizeof si_options[0],
    .options_also = &ra_format_lego_ani,
    .archive = true,
};

static const ra_option_decl pak_options[] = {
    {"animation", RA_OPT_STRING, 0, 0, false, NULL, "the first", "the animation to import: a name or an id"},
};

const ra_format ra_format_metroid_pak = {
    "metroid_pak",
    "Metroid Prime archive (.pak): one animation with its ANCS name and CINF skeleton, chosen with animation=NAME|ID",
    "pak",
    "u32 BE 0x00030005 then u32 0 at offset 0",
    detect_pak,
    arch_read,
    arch_to_scene,
    arch_pose,
    arch_dump_source,
    arch_write,
    .options = pak_options,
    .option_count = sizeof pak_options / sizeof pak_options[0],
    .options_also = &ra_format_metroid_anim,
    .archive = true,
};

static const ra_option_decl big_options[] = {
    {"animation", RA_OPT_STRING, 0, 0, false, NULL, "the first",
     "the animation to import: its path without .mad (R1/Probe) or its TOC entry number"},
};

const ra_format ra_format_homeworld_big = {
    "homeworld_big",
    "Homeworld archive (.big, RBF1.23): one .mad mesh animation, chosen with animation=NAME|ID",
    "big",
    "\"RBF1.23\" at 0 (Homeworld 2's \"_ARCHIVE\" .big is refused by name)",
    detect_big,
    arch_read,
    arch_to_scene,
    arch_pose,
    arch_dump_source,
    arch_write,
    .options = big_options,
    .option_count = sizeof big_options / sizeof big_options[0],
    .options_also = &ra_format_homeworld_mad,
    .archive = true,
};
