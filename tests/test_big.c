/* Homeworld .big archives (RBF1.23): the byte-by-byte fixtures of
 * test_models/archives (make_big.py) listed, each .mad payload equal to its
 * loose file and loaded to the same scene; the Remastered 36-byte TOC; the
 * broken fixtures refused with the field and offset make_big.py computed;
 * mutations of ships.big (TOC fields, names, sizes) refused or warned about.
 * usage: test_big ARCHIVES_DIR HOMEWORLD_DIR */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ra_fixture.h"
#include "retroanim/ra_archive_internal.h"

static const char *g_arch, *g_hw;

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static bool fails_with(ra_status st, const ra_error *e, ra_status code, const char *field, uint64_t offset)
{
    return st == code && e->code == code && strcmp(e->field, field) == 0 && e->offset == offset;
}

static ra_archive *open_ok(const uint8_t *d, size_t n, const char *what)
{
    ra_archive *ar = NULL;
    ra_error e;
    ra_status st = ra_archive_open(d, n, NULL, &ar, &e);
    CHECK(st == RA_OK && ar, "%s: open: %s (%s at %llu)", what, e.msg, e.field, (unsigned long long)e.offset);
    return st == RA_OK ? ar : NULL;
}

static ra_document *load(const uint8_t *d, size_t n, const char *name, const char *animation, ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    if (animation) ra_options_add(&o, "animation", animation);
    ra_document *doc = NULL;
    /* the archive's bytes are gone once the document is read: it must keep nothing of them */
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, d, n);
    ra_status st = ra_document_load(copy, n, name, &o, &doc, e);
    memset(copy, 0xA5, n);
    free(copy);
    return st == RA_OK ? doc : NULL;
}

/* The same scene (animation names aside: the archive names a single animation after its item) and the same poses. */
static void same_scene(const ra_document *a, const ra_document *b, const char *what)
{
    const ra_scene *x = &a->scene, *y = &b->scene;
    CHECK(x->node_count == y->node_count, "%s: nodes %zu vs %zu", what, x->node_count, y->node_count);
    CHECK(x->animation_count == y->animation_count, "%s: animations %zu vs %zu", what, x->animation_count,
          y->animation_count);
    if (x->node_count != y->node_count || x->animation_count != y->animation_count) return;
    for (size_t i = 0; i < x->node_count; i++)
        CHECK(strcmp(x->nodes[i].name, y->nodes[i].name) == 0, "%s: node %zu %s vs %s", what, i, x->nodes[i].name,
              y->nodes[i].name);
    ra_mat4 *wa = calloc(x->node_count, sizeof *wa), *wb = calloc(x->node_count, sizeof *wb);
    for (size_t k = 0; k < x->animation_count; k++) {
        const ra_animation *p = &x->animations[k], *q = &y->animations[k];
        CHECK(p->duration == q->duration && p->channel_count == q->channel_count, "%s: animation %zu", what, k);
        for (size_t c = 0; c < p->channel_count && c < q->channel_count; c++)
            CHECK(p->channels[c].rotation_count == q->channels[c].rotation_count &&
                      p->channels[c].position_count == q->channels[c].position_count &&
                      (!p->channels[c].rotation_count ||
                       memcmp(p->channels[c].rotation, q->channels[c].rotation,
                              p->channels[c].rotation_count * sizeof *p->channels[c].rotation) == 0),
                  "%s: animation %zu channel %zu", what, k, c);
        for (int s = 0; s <= 4; s++) {
            double t = p->duration * s / 4.0 + (s == 2 ? 0.0123 : 0);
            ra_error e1, e2;
            ra_status s1 = ra_document_pose(a, k, t, wa, &e1), s2 = ra_document_pose(b, k, t, wb, &e2);
            CHECK(s1 == RA_OK && s2 == RA_OK, "%s: pose %zu at %g: %s / %s", what, k, t, e1.msg, e2.msg);
            CHECK(memcmp(wa, wb, x->node_count * sizeof *wa) == 0, "%s: pose of animation %zu at %g s", what, k, t);
        }
    }
    free(wa);
    free(wb);
}

static const char *meta_s(const ra_meta_list *m, const char *k)
{
    const ra_meta *v = ra_meta_get(m, k);
    return v && v->type == RA_META_STRING ? v->u.s : "";
}

static int64_t meta_i(const ra_meta_list *m, const char *k)
{
    const ra_meta *v = ra_meta_get(m, k);
    return v && v->type == RA_META_INT ? v->u.i : -1;
}

/* ships.big as make_big.py writes it: TOC (by CRC) R1\Probe.lod, R1\Probe.MAD, R2\Defender.mad */
#define SHIPS_SIZE 1655u
#define E_LOD 15u /* TOC entries */
#define E_PROBE 47u
#define E_DEF 79u
#define PROBE_DATA 124u
#define DEF_DATA 963u
#define LOD_NAME 1571u /* 1584 - 12 - 1 */
#define LOD_DATA 1584u

typedef struct want {
    uint32_t id;
    const char *name, *group, *path, *loose;
    uint64_t offset, stored, size;
    bool compressed;
} want;

static const want SHIPS[] = {
    {1, "R1/Probe", "R1", "R1/Probe.MAD", "spin.mad", PROBE_DATA, 823, 823, false},
    {2, "R2/Defender", "R2", "R2/Defender.mad", "timeline.mad", DEF_DATA, 608, 1490, true},
};

static void check_items(const char *file, int entry_size)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, file, &n);
    ra_archive *ar = open_ok(d, n, file);
    CHECK(ra_archive_detect(d, n) && strcmp(ra_archive_detect(d, n), "homeworld_big") == 0, "%s: detected", file);
    if (ar) {
        CHECK(strcmp(ar->format, "homeworld_big") == 0, "%s: format %s", file, ar->format);
        CHECK(ar->count == 2, "%s: %zu items", file, ar->count);
        CHECK(ar->warning_count == 0, "%s: %zu warnings (%s)", file, ar->warning_count,
              ar->warning_count ? ar->warnings[0] : "");
        CHECK(meta_i(&ar->meta, "big.files") == 3 && meta_i(&ar->meta, "big.other_files") == 1 &&
                  meta_i(&ar->meta, "big.mad_files") == 2 && meta_i(&ar->meta, "big.lzss_files") == 1 &&
                  meta_i(&ar->meta, "big.entry_size") == entry_size && meta_i(&ar->meta, "big.flags") == 1,
              "%s: archive metadata", file);
        for (size_t i = 0; i < ar->count && i < 2; i++) {
            const ra_archive_item *it = &ar->items[i];
            const want *w = &SHIPS[i];
            CHECK(it->id == w->id && strcmp(it->name, w->name) == 0 && strcmp(it->group, w->group) == 0,
                  "%s: item %zu is %u %s (%s)", file, i, it->id, it->name, it->group);
            CHECK(strcmp(it->kind, "mad") == 0 && strcmp(it->format, "homeworld_mad") == 0 &&
                      strcmp(it->extension, "mad") == 0,
                  "%s: item %zu kind/format/extension", file, i);
            /* the remastered file's blobs are 12 bytes later (3 x 4 more TOC bytes) */
            uint64_t shift = entry_size == 36 ? 12 : 0;
            CHECK(it->offset == w->offset + shift && it->stored_size == w->stored && it->size == w->size &&
                      it->compressed == w->compressed,
                  "%s: item %zu offset %llu stored %llu size %llu compressed %d", file, i,
                  (unsigned long long)it->offset, (unsigned long long)it->stored_size, (unsigned long long)it->size,
                  it->compressed);
            CHECK(strcmp(meta_s(&it->meta, "big.path"), w->path) == 0 &&
                      strcmp(meta_s(&it->meta, "big.compression"), w->compressed ? "lzss" : "stored") == 0,
                  "%s: item %zu metadata", file, i);
            size_t ln = 0;
            uint8_t *l = fx_slurp(g_hw, w->loose, &ln);
            const uint8_t *p = NULL, *p2 = NULL;
            size_t pn = 0, pn2 = 0;
            ra_error e;
            CHECK(ra_archive_payload(ar, i, &p, &pn, &e) == RA_OK, "%s: payload %zu: %s", file, i, e.msg);
            CHECK(p && pn == ln && memcmp(p, l, ln) == 0, "%s: %s differs from %s", file, w->name, w->loose);
            CHECK(ra_archive_payload(ar, i, &p2, &pn2, &e) == RA_OK && p2 == p && pn2 == pn, "%s: payload %zu again",
                  file, i);
            CHECK(ra_archive_skeleton(ar, i, &p2, &pn2, &e) == RA_ERR_USAGE, "%s: item %zu has no skeleton", file, i);
            /* by name and by id, against the loose file */
            char id[16];
            snprintf(id, sizeof id, "%u", w->id);
            const char *keys[] = {w->name, id};
            ra_document *dl = load(l, ln, w->loose, NULL, &e);
            CHECK(dl != NULL, "%s: %s", w->loose, e.msg);
            for (int k = 0; k < 2 && dl; k++) {
                ra_document *da = load(d, n, file, keys[k], &e);
                CHECK(da != NULL, "%s[%s]: %s", file, keys[k], e.msg);
                if (!da) continue;
                char what[256];
                snprintf(what, sizeof what, "%s[%s] vs %s", file, keys[k], w->loose);
                same_scene(da, dl, what);
                CHECK(strcmp(meta_s(&da->scene.meta, "archive.format"), "homeworld_big") == 0 &&
                          strcmp(meta_s(&da->scene.meta, "archive.item_name"), w->name) == 0 &&
                          meta_i(&da->scene.meta, "archive.item_id") == w->id &&
                          strcmp(meta_s(&da->scene.meta, "big.path"), w->path) == 0,
                      "%s: archive metadata", what);
                ra_document_free(da);
            }
            ra_document_free(dl);
            ra_free(l);
        }
        ra_archive_free(ar);
    }
    /* no animation= is the first */
    ra_error e;
    ra_document *first = load(d, n, file, NULL, &e);
    CHECK(first && strcmp(meta_s(&first->scene.meta, "archive.item_name"), "R1/Probe") == 0, "%s: the first: %s", file,
          first ? "" : e.msg);
    ra_document_free(first);
    ra_document *none = load(d, n, file, "R1/Probe.lod", &e);
    CHECK(!none && e.code == RA_ERR_USAGE && strcmp(e.field, "animation") == 0, "%s: the .lod is no animation", file);
    ra_document_free(none);
    ra_free(d);
}

static void check_long(void)
{
    size_t n = 0, ln = 0;
    uint8_t *d = fx_slurp(g_arch, "big_long.big", &n), *l = fx_slurp(g_arch, "big_long.mad", &ln);
    ra_archive *ar = open_ok(d, n, "big_long.big");
    if (ar) {
        const uint8_t *p = NULL;
        size_t pn = 0;
        ra_error e;
        CHECK(ar->count == 1 && strcmp(ar->items[0].name, "R3/Carrier") == 0 && ar->items[0].compressed,
              "big_long.big: the item");
        CHECK(ra_archive_payload(ar, 0, &p, &pn, &e) == RA_OK && pn == ln && ln > 8192 && memcmp(p, l, ln) == 0,
              "big_long.big: the payload (the ring wrapped twice) differs from big_long.mad: %s", e.msg);
        ra_archive_free(ar);
        ra_document *da = load(d, n, "big_long.big", "R3/Carrier", &e), *dl = load(l, ln, "big_long.mad", NULL, &e);
        CHECK(da && dl, "big_long: loads: %s", e.msg);
        if (da && dl) same_scene(da, dl, "big_long.big vs big_long.mad");
        ra_document_free(da);
        ra_document_free(dl);
    }
    ra_free(d);
    ra_free(l);
}

/* A broken fixture: refused at open (toc) or at the payload of item `item`, with this code, field and offset. */
static void check_broken(const char *file, bool toc, size_t item, ra_status code, const char *field, uint64_t offset)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, file, &n);
    ra_archive *ar = NULL;
    ra_error e;
    ra_status st = ra_archive_open(d, n, NULL, &ar, &e);
    if (toc) {
        CHECK(fails_with(st, &e, code, field, offset) && !ar, "%s: open gives %d %s at %llu: %s", file, st, e.field,
              (unsigned long long)e.offset, e.msg);
    } else {
        CHECK(st == RA_OK && ar && ar->count > item, "%s: opens: %s", file, e.msg);
        if (ar && ar->count > item) {
            const uint8_t *p = NULL;
            size_t pn = 0;
            st = ra_archive_payload(ar, item, &p, &pn, &e);
            CHECK(fails_with(st, &e, code, field, offset), "%s: payload gives %d %s at %llu: %s", file, st, e.field,
                  (unsigned long long)e.offset, e.msg);
        }
        ra_archive_free(ar);
    }
    /* a load fails the same way (by the extension too) */
    ra_document *doc = load(d, n, "x.big", toc ? NULL : "R2/Defender", &e);
    CHECK(!doc && e.code == code && strcmp(e.field, field) == 0 && e.offset == offset, "%s: load gives %s at %llu: %s",
          file, e.field, (unsigned long long)e.offset, e.msg);
    ra_document_free(doc);
    ra_free(d);
}

static void check_hw2(void)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, "big_hw2.big", &n);
    ra_archive *ar = NULL;
    ra_error e;
    CHECK(ra_archive_detect(d, n) == NULL, "big_hw2.big: not detected as an archive");
    CHECK(ra_format_detect(d, n, NULL) == NULL, "big_hw2.big: not detected as a format");
    ra_status st = ra_archive_open(d, n, NULL, &ar, &e);
    CHECK(st == RA_ERR_BAD_MAGIC && strstr(e.msg, "Homeworld 2") && e.offset == 0, "big_hw2.big: open: %s", e.msg);
    ra_document *doc = load(d, n, "Homeworld2.big", NULL, &e);
    CHECK(!doc && e.code == RA_ERR_BAD_MAGIC && strstr(e.msg, "Homeworld 2"), "big_hw2.big: load: %s", e.msg);
    ra_document_free(doc);
    ra_free(d);
}

/* ---- mutations of ships.big -------------------------------------------------------------------------- */
static uint8_t *ships(size_t *n)
{
    uint8_t *d = fx_slurp(g_arch, "ships.big", n);
    CHECK(*n == SHIPS_SIZE, "ships.big has %zu bytes", *n);
    return d;
}

/* the name at `at` (its length kept) replaced by `plain`, encrypted as the game's tool does */
static void rename_entry(uint8_t *d, size_t at, const char *plain)
{
    unsigned mask = 0xD5;
    for (size_t k = 0; plain[k]; k++) {
        d[at + k] = (uint8_t)((unsigned char)plain[k] ^ mask);
        mask = (unsigned char)plain[k];
    }
}

static void open_fails(uint8_t *d, size_t n, ra_status code, const char *field, uint64_t offset, const char *what)
{
    ra_archive *ar = NULL;
    ra_error e;
    ra_status st = ra_archive_open(d, n, NULL, &ar, &e);
    CHECK(fails_with(st, &e, code, field, offset) && !ar, "%s: gives %d %s at %llu: %s", what, st, e.field,
          (unsigned long long)e.offset, e.msg);
    ra_archive_free(ar);
}

static void payload_fails(uint8_t *d, size_t n, size_t item, ra_status code, const char *field, uint64_t offset,
                          const char *what)
{
    ra_archive *ar = open_ok(d, n, what);
    if (!ar) return;
    const uint8_t *p = NULL;
    size_t pn = 0;
    ra_error e;
    ra_status st = ra_archive_payload(ar, item, &p, &pn, &e);
    CHECK(fails_with(st, &e, code, field, offset), "%s: gives %d %s at %llu: %s", what, st, e.field,
          (unsigned long long)e.offset, e.msg);
    ra_archive_free(ar);
}

/* opens with these items and a warning that contains `warning` */
static void opens_warning(uint8_t *d, size_t n, size_t items, const char *warning, const char *what)
{
    ra_archive *ar = open_ok(d, n, what);
    if (!ar) return;
    bool seen = false;
    for (size_t i = 0; i < ar->warning_count; i++) seen = seen || strstr(ar->warnings[i], warning);
    CHECK(ar->count == items && seen, "%s: %zu items, %zu warnings (%s)", what, ar->count, ar->warning_count,
          ar->warning_count ? ar->warnings[0] : "none");
    ra_archive_free(ar);
}

static void mutations(void)
{
    size_t n = 0;
    uint8_t *base = ships(&n), *d = malloc(n);
#define FRESH() memcpy(d, base, n)
    /* every cut of the file is refused at open (the last blob ends the file) */
    int cut_ok = 0;
    for (size_t k = 0; k < n; k++) {
        ra_archive *ar = NULL;
        ra_error e;
        uint8_t *c = malloc(k ? k : 1);
        memcpy(c, base, k);
        if (ra_archive_open(c, k, NULL, &ar, &e) != RA_OK && !ar && e.code != RA_OK) cut_ok++;
        ra_archive_free(ar);
        free(c);
    }
    CHECK(cut_ok == (int)n, "%d of %zu cuts refused", cut_ok, n);
    FRESH(), open_fails(d, 10, RA_ERR_TRUNCATED, "numFiles", 7, "a 10-byte header");
    FRESH(), put_u32(d + 7, 0xFFFFFFFFu), open_fails(d, n, RA_ERR_BAD_VALUE, "numFiles", 7, "numFiles -1");
    FRESH(), d[E_LOD + 28] = 2, open_fails(d, n, RA_ERR_BAD_VALUE, "entry.compressionType", E_LOD + 28, "type 2");
    FRESH(), put_u32(d + E_LOD + 20, 20), open_fails(d, n, RA_ERR_BAD_VALUE, "entry.offset", E_LOD + 20, "in the TOC");
    FRESH(), put_u32(d + E_LOD + 20, (uint32_t)n - 5),
        open_fails(d, n, RA_ERR_BAD_VALUE, "entry.offset", E_LOD + 20, "a name past the end");
    FRESH(), d[LOD_DATA - 1] = 'x', open_fails(d, n, RA_ERR_BAD_VALUE, "entry.name", LOD_DATA - 1, "no NUL");
    FRESH(), put_u32(d + E_LOD + 12, 72),
        open_fails(d, n, RA_ERR_TRUNCATED, "entry.storedLength", E_LOD + 12, "stored past the end");
    /* names: not listed with a warning (the CRCs then do not match either) */
    const char *bad_names[] = {"..\\Probe.MAD", "\\1\\Probe.MAD", "C:\\Probe.MAD", "R1\\..\\xy.MAD",
                               "R1\\\x01robe.MAD"};
    for (size_t k = 0; k < sizeof bad_names / sizeof bad_names[0]; k++) {
        FRESH(), rename_entry(d, PROBE_DATA - 13, bad_names[k]);
        opens_warning(d, n, 1, "is not listed", bad_names[k]);
    }
    FRESH(), rename_entry(d, PROBE_DATA - 13, "R1/Probe.MAD"); /* '/' is '\' for the CRC: no warning */
    ra_archive *ar = open_ok(d, n, "a '/' name");
    CHECK(ar && ar->count == 2 && ar->warning_count == 0, "a '/' name: listed without warnings");
    ra_archive_free(ar);
    FRESH(), rename_entry(d, PROBE_DATA - 13, "R1\\Probe.MAX"); /* not a .mad: not listed, no warning but the CRC */
    opens_warning(d, n, 1, "CRCs of 1 entry", "not a .mad");
    FRESH(), d[E_PROBE] ^= 1, opens_warning(d, n, 2, "CRCs of 1 entry", "a CRC flipped");
    FRESH(), memcpy(d + E_LOD, base + E_PROBE, 32), memcpy(d + E_PROBE, base + E_LOD, 32);
    opens_warning(d, n, 2, "out of CRC order", "unsorted");
    FRESH(), d[11] = 0, memcpy(d + E_LOD, base + E_PROBE, 32), memcpy(d + E_PROBE, base + E_LOD, 32);
    ar = open_ok(d, n, "unsorted, not flagged");
    CHECK(ar && ar->count == 2 && ar->warning_count == 0 && ar->items[0].id == 0, "unsorted, not flagged: no warning");
    ra_archive_free(ar);
    /* payloads */
    FRESH(), put_u32(d + E_PROBE + 16, 824),
        payload_fails(d, n, 0, RA_ERR_BAD_VALUE, "entry.realLength", E_PROBE + 16, "stored, realLength + 1");
    FRESH(), put_u32(d + E_DEF + 16, 608 * 8 + 1),
        payload_fails(d, n, 1, RA_ERR_BAD_VALUE, "entry.realLength", E_DEF + 16, "realLength > 8 x stored");
    FRESH(), put_u32(d + E_DEF + 16, 1491),
        payload_fails(d, n, 1, RA_ERR_BAD_VALUE, "entry.realLength", E_DEF + 16, "realLength one more");
    FRESH(), put_u32(d + E_DEF + 12, 611); /* 3 bytes of the next blob after the end marker: a warning */
    ar = open_ok(d, n, "bytes after the end marker");
    if (ar) {
        const uint8_t *p = NULL;
        size_t pn = 0;
        ra_error e;
        CHECK(ra_archive_payload(ar, 1, &p, &pn, &e) == RA_OK && pn == 1490 && ar->warning_count == 1 &&
                  strstr(ar->warnings[0], "3 bytes after its LZSS end marker"),
              "bytes after the end marker: %s", ar->warning_count ? ar->warnings[0] : e.msg);
        ra_archive_free(ar);
    }
    free(d);
    ra_free(base);
#undef FRESH
}

/* An archive built here: one LZSS entry "a.mad" of `stored` bytes claiming `real`; over memory_limit it is refused. */
static void memory_limit(void)
{
    uint32_t stored = 20000, real = 150000;
    size_t n = 15 + 32 + 6 + stored;
    uint8_t *d = calloc(1, n);
    memcpy(d, "RBF1.23", 7);
    put_u32(d + 7, 1);
    d[15 + 8] = 5;
    put_u32(d + 15 + 12, stored);
    put_u32(d + 15 + 16, real);
    put_u32(d + 15 + 20, 47);
    d[15 + 28] = 1;
    rename_entry(d, 47, "a.mad");
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "memory_limit", "65536");
    ra_archive *ar = NULL;
    ra_error e;
    CHECK(ra_archive_open(d, n, &o, &ar, &e) == RA_OK && ar && ar->count == 1, "memory: opens: %s", e.msg);
    if (ar) {
        const uint8_t *p = NULL;
        size_t pn = 0;
        ra_status st = ra_archive_payload(ar, 0, &p, &pn, &e);
        CHECK(fails_with(st, &e, RA_ERR_NO_MEMORY, "entry.realLength", 15 + 16), "memory: %s", e.msg);
        ra_archive_free(ar);
    }
    /* without the limit: the zero bytes are a stream whose first token is the end marker */
    ar = NULL;
    CHECK(ra_archive_open(d, n, NULL, &ar, &e) == RA_OK && ar, "memory: opens: %s", e.msg);
    if (ar) {
        const uint8_t *p = NULL;
        size_t pn = 0;
        ra_status st = ra_archive_payload(ar, 0, &p, &pn, &e);
        CHECK(fails_with(st, &e, RA_ERR_BAD_VALUE, "entry.realLength", 15 + 16), "the end at once: %s", e.msg);
        ra_archive_free(ar);
    }
    free(d);
}

/* Every allocation of an open and its payloads (then of a load) failed in turn: RA_ERR_NO_MEMORY, nothing live after. */
static void allocation_failures(const char *file, const char *animation)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, file, &n);
    for (int pass = 0; pass < 2; pass++) {
        uint64_t total = 0, bad = 0;
        for (uint64_t k = 0; k == 0 || k <= total; k++) {
            ra_heap_reset();
            if (k) ra_heap_fail_nth(k);
            ra_error e;
            ra_error_clear(&e);
            ra_status st = RA_OK;
            if (pass == 0) {
                ra_archive *ar = NULL;
                st = ra_archive_open(d, n, NULL, &ar, &e);
                for (size_t i = 0; st == RA_OK && i < ar->count; i++) {
                    const uint8_t *p = NULL;
                    size_t pn = 0;
                    st = ra_archive_payload(ar, i, &p, &pn, &e);
                }
                ra_archive_free(ar);
            } else {
                ra_document *doc = load(d, n, file, animation, &e);
                st = doc ? RA_OK : e.code;
                ra_document_free(doc);
            }
            ra_heap_fail_nth(0);
            ra_heap_stats h = ra_heap_get();
            if (!k) {
                total = h.allocations;
                CHECK(st == RA_OK && total > 0, "%s: pass %d: %s", file, pass, e.msg);
            } else if (h.live_blocks != 0 || (h.failures == 1 && st != RA_ERR_NO_MEMORY)) {
                if (bad++ < 3)
                    CHECK(0, "%s: pass %d: allocation %llu failed: status %d, %lld blocks live: %s", file, pass,
                          (unsigned long long)k, st, (long long)h.live_blocks, e.msg);
            }
        }
        CHECK(bad == 0, "%s: pass %d: %llu of %llu failed allocations handled badly", file, pass,
              (unsigned long long)bad, (unsigned long long)total);
    }
    ra_free(d);
}

static ra_document *load_geo_opt(const uint8_t *d, size_t n, const char *name, const char *geo)
{
    ra_options o;
    ra_options_init(&o);
    if (geo) ra_options_add(&o, "geo", geo);
    ra_document *doc = NULL;
    ra_error e;
    ra_status st = ra_document_load(d, n, name, &o, &doc, &e);
    CHECK(st == RA_OK, "%s (geo=%s): %s (%s at %llu)", name, geo ? geo : "-", e.msg, e.field,
          (unsigned long long)e.offset);
    return st == RA_OK ? doc : NULL;
}

/* Same meshes: names, nodes and every position. */
static void same_meshes(const ra_document *a, const ra_document *b, const char *what)
{
    const ra_scene *x = &a->scene, *y = &b->scene;
    CHECK(x->mesh_count == y->mesh_count, "%s: meshes %zu vs %zu", what, x->mesh_count, y->mesh_count);
    for (size_t i = 0; i < x->mesh_count && i < y->mesh_count; i++) {
        const ra_mesh *p = &x->meshes[i], *q = &y->meshes[i];
        CHECK(!strcmp(p->name, q->name) && p->node == q->node && p->vertex_count == q->vertex_count &&
                  p->triangle_count == q->triangle_count &&
                  !memcmp(p->positions, q->positions, 3 * sizeof(float) * p->vertex_count),
              "%s: mesh %zu (%s)", what, i, p->name);
    }
}

/* big_lods.big (make_big.py): which geometry each ship takes by the rule of
 * docs/formats/homeworld.md (its folder or the ship folder below it, the
 * shallowest, then the first path in any case, a .geo before a .peo), among
 * candidates of other folders, other depths, other cases and stems that are
 * prefixes of each other. */
static void check_lods(void)
{
    static const struct {
        const char *ship, *geo; /* "": none */
    } lods[] = {
        {"R1/Alpha", "R1/Alpha/Rl0/LOD0/alpha.geo"},
        {"R1/Alphabet", "R1/Alphabet.PEO"},
        {"R2/Beta", ""},
        {"R2/Gamma", "R2/Gamma/gamma.GEO"},
    };
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, "big_lods.big", &n);
    ra_archive *ar = open_ok(d, n, "big_lods.big");
    CHECK(ar && ar->count == 4, "big_lods.big: 4 ships (%zu)", ar ? ar->count : 0);
    for (size_t k = 0; k < sizeof lods / sizeof lods[0]; k++) {
        const ra_archive_item *it = NULL;
        for (size_t i = 0; ar && i < ar->count; i++)
            if (!strcmp(ar->items[i].name, lods[k].ship)) it = &ar->items[i];
        CHECK(it != NULL, "big_lods.big: %s listed", lods[k].ship);
        if (!it) continue;
        CHECK(!strcmp(meta_s(&it->meta, "big.geo"), lods[k].geo) && it->has_skeleton == (lods[k].geo[0] != 0),
              "big_lods.big: %s takes %s (got %s)", lods[k].ship, lods[k].geo[0] ? lods[k].geo : "none",
              meta_s(&it->meta, "big.geo"));
    }
    ra_archive_free(ar);
    free(d);
}

/* big_geo.big: the .mad's ship geometry found in the archive (the LOD0 .geo), or
 * the entry --option geo names (the LZSS .PEO of LOD1), or none; each the scene
 * of the loose geo_ship.mad with its sibling geo_ship.geo. */
static void check_geo(void)
{
    size_t n = 0, gn = 0, mn = 0;
    uint8_t *d = fx_slurp(g_arch, "big_geo.big", &n), *geo = fx_slurp(g_hw, "geo_ship.geo", &gn),
            *mad = fx_slurp(g_hw, "geo_ship.mad", &mn);
    if (!d || !geo || !mad) {
        CHECK(false, "big_geo.big, geo_ship.geo and geo_ship.mad are readable");
        free(d), free(geo), free(mad);
        return;
    }
    static const char *const lod1[] = {"R1\\GeoShip\\Rl0\\LOD1\\GEOSHIP.peo", "r1/geoship/rl0/lod1/geoship.peo"};
    for (int k = 0; k < 3; k++) { /* found; named by the option (two spellings) */
        ra_options o;
        ra_options_init(&o);
        if (k) ra_options_add(&o, "geo", lod1[k - 1]);
        ra_archive *ar = NULL;
        ra_error e;
        ra_status st = ra_archive_open(d, n, &o, &ar, &e);
        CHECK(st == RA_OK && ar && ar->count == 1, "big_geo.big (%d): open: %s", k, e.msg);
        if (st != RA_OK || !ar || ar->count != 1) {
            ra_archive_free(ar);
            continue;
        }
        const ra_archive_item *it = &ar->items[0];
        const char *path = k ? "R1/GeoShip/Rl0/LOD1/geoship.PEO" : "R1/GeoShip/Rl0/LOD0/GeoShip.geo";
        CHECK(!strcmp(it->name, "R1/GeoShip") && it->has_skeleton && !strcmp(meta_s(&it->meta, "big.geo"), path),
              "big_geo.big (%d): item %s, geometry %s", k, it->name, meta_s(&it->meta, "big.geo"));
        const char *ext = ra_archive_skeleton_extension(ar, 0);
        CHECK(ext && !strcmp(ext, k ? "PEO" : "geo"), "big_geo.big (%d): companion extension %s", k, ext ? ext : "-");
        const uint8_t *p = NULL;
        size_t pn = 0;
        st = ra_archive_skeleton(ar, 0, &p, &pn, &e);
        CHECK(st == RA_OK && pn == gn && !memcmp(p, geo, gn), "big_geo.big (%d): the geometry's bytes are geo_ship.geo",
              k);
        ra_archive_free(ar);
    }
    char loose[4096];
    snprintf(loose, sizeof loose, "%s/geo_ship.mad", g_hw);
    ra_document *ref = load_geo_opt(mad, mn, loose, NULL), *none_ref = load_geo_opt(mad, mn, loose, "none");
    ra_document *in = load_geo_opt(d, n, "big_geo.big", NULL), *opt = load_geo_opt(d, n, "big_geo.big", lod1[0]),
                *none = load_geo_opt(d, n, "big_geo.big", "none");
    if (ref && in && opt && none && none_ref) {
        CHECK(ref->scene.mesh_count > 0 && !strcmp(meta_s(&ref->scene.meta, "homeworld.geo_source"), "sibling"),
              "loose geo_ship.mad finds its .geo");
        same_scene(in, ref, "big_geo.big vs the loose geo_ship.mad");
        same_meshes(in, ref, "big_geo.big vs the loose geo_ship.mad");
        same_scene(opt, ref, "big_geo.big geo=LOD1 vs the loose geo_ship.mad");
        same_meshes(opt, ref, "big_geo.big geo=LOD1 vs the loose geo_ship.mad");
        same_scene(none, none_ref, "big_geo.big geo=none vs the loose geo_ship.mad geo=none");
        CHECK(!strcmp(meta_s(&in->scene.meta, "homeworld.geo_source"), "archive") &&
                  !strcmp(meta_s(&in->scene.meta, "homeworld.geo"), "R1/GeoShip/Rl0/LOD0/GeoShip.geo"),
              "big_geo.big: geometry %s from %s", meta_s(&in->scene.meta, "homeworld.geo"),
              meta_s(&in->scene.meta, "homeworld.geo_source"));
        CHECK(!strcmp(meta_s(&opt->scene.meta, "homeworld.geo_source"), "option") &&
                  !strcmp(meta_s(&opt->scene.meta, "homeworld.geo"), "R1/GeoShip/Rl0/LOD1/geoship.PEO"),
              "big_geo.big geo=LOD1: geometry %s from %s", meta_s(&opt->scene.meta, "homeworld.geo"),
              meta_s(&opt->scene.meta, "homeworld.geo_source"));
        CHECK(none->scene.mesh_count == 0 && !strcmp(meta_s(&none->scene.meta, "homeworld.geo_source"), "none"),
              "big_geo.big geo=none: no meshes");
    }
    /* a broken .geo in the archive: a warning, the .mad without it */
    uint8_t *bad = malloc(n);
    memcpy(bad, d, n);
    size_t at = 0;
    for (size_t i = 0; i + 7 <= n; i++)
        if (!memcmp(bad + i, "RMF97ba", 7) || !memcmp(bad + i, "RMF99ba", 7)) {
            at = i; /* the stored (LOD0) copy: the LZSS one has no plain magic */
            break;
        }
    CHECK(at > 0, "big_geo.big holds a stored .geo");
    bad[at] ^= 0xFF;
    ra_document *broken = at ? load_geo_opt(bad, n, "big_geo.big", NULL) : NULL;
    if (broken && none_ref) {
        same_scene(broken, none_ref, "big_geo.big with a broken .geo vs geo=none");
        CHECK(!strcmp(meta_s(&broken->scene.meta, "homeworld.geo_source"), "unreadable") &&
                  broken->scene.warning_count > 0,
              "big_geo.big with a broken .geo: a warning");
    }
    ra_document_free(broken);
    free(bad);
    ra_document_free(ref), ra_document_free(none_ref), ra_document_free(in), ra_document_free(opt),
        ra_document_free(none);
    free(d), free(geo), free(mad);
}

/* ---- a loose .mad in an extracted data folder: R1/GeoShip.MAD with its
 * meshes in R1/GeoShip/Rl0/LOD<n>/ (the game's layout) ---- */
static bool put_file(const char *root, const char *rel, const uint8_t *d, size_t n)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *q = p + strlen(root) + 1; (q = strchr(q, '/')) != NULL; q++) {
        *q = 0;
        mkdir(p, 0755);
        *q = '/';
    }
    FILE *f = fopen(p, "wb");
    bool ok = f && fwrite(d, 1, n, f) == n;
    if (f) ok = fclose(f) == 0 && ok;
    return ok;
}

static void ship_folder(void)
{
    size_t gn = 0, mn = 0;
    uint8_t *geo = fx_slurp(g_hw, "geo_ship.geo", &gn), *mad = fx_slurp(g_hw, "geo_ship.mad", &mn);
    char root[] = "/tmp/ra_ship_XXXXXX", loose[4096], madp[4096];
    CHECK(geo && mad && mkdtemp(root), "ship folder: fixtures and a folder");
    snprintf(loose, sizeof loose, "%s/geo_ship.mad", g_hw);
    snprintf(madp, sizeof madp, "%s/R1/GeoShip.MAD", root);
    ra_document *ref = geo && mad ? load_geo_opt(mad, mn, loose, NULL) : NULL;
    CHECK(ref && put_file(root, "R1/GeoShip.MAD", mad, mn), "ship folder: the .mad");
    /* each step adds one file; the geometry the .mad then takes, and from where
     * (a file of another stem and one four folders down are never taken) */
    const struct {
        const char *add, *want, *source;
    } steps[] = {
        {"R1/GeoShip/a/b/c/GeoShip.geo", NULL, "none"},
        {"R1/GeoShip/Rl0/LOD0/Other.geo", NULL, "none"},
        {"R1/GeoShip/Rl0/LOD1/geoship.PEO", "R1/GeoShip/Rl0/LOD1/geoship.PEO", "ship_folder"},
        {"R1/GeoShip/Rl0/LOD0/GeoShip.peo", "R1/GeoShip/Rl0/LOD0/GeoShip.peo", "ship_folder"},
        {"R1/GeoShip/Rl0/LOD0/GEOSHIP.GEO", "R1/GeoShip/Rl0/LOD0/GEOSHIP.GEO", "ship_folder"},
        {"R1/GeoShip/GeoShip.peo", "R1/GeoShip/GeoShip.peo", "ship_folder"},
        {"R1/GeoShip/GEOSHIP.peo", "R1/GeoShip/GEOSHIP.peo", "ship_folder"}, /* same but for case: byte order */
        {"R1/GeoShip.PEO", "R1/GeoShip.PEO", "sibling"},
        {"R1/geoship.geo", "R1/geoship.geo", "sibling"}, /* a .geo before the .peo beside it */
        {"R1/GEOSHIP.geo", "R1/GEOSHIP.geo", "sibling"},
    };
    for (size_t k = 0; ref && k < sizeof steps / sizeof steps[0]; k++) {
        CHECK(put_file(root, steps[k].add, geo, gn), "ship folder: write %s", steps[k].add);
        ra_document *doc = load_geo_opt(mad, mn, madp, NULL);
        if (!doc) continue;
        char expect[4096];
        snprintf(expect, sizeof expect, "%s/%s", root, steps[k].want ? steps[k].want : "");
        const char *got = meta_s(&doc->scene.meta, "homeworld.geo"),
                   *src = meta_s(&doc->scene.meta, "homeworld.geo_source");
        CHECK(!strcmp(src, steps[k].source) && (!steps[k].want || !strcmp(got, expect)),
              "ship folder, after %s: geometry %s from %s (want %s from %s)", steps[k].add, got, src,
              steps[k].want ? steps[k].want : "-", steps[k].source);
        if (steps[k].want) {
            same_scene(doc, ref, "ship folder vs the loose geo_ship.mad");
            same_meshes(doc, ref, "ship folder vs the loose geo_ship.mad");
        } else {
            CHECK(doc->scene.mesh_count == 0, "ship folder, after %s: no meshes", steps[k].add);
        }
        ra_document_free(doc);
    }
    for (size_t k = sizeof steps / sizeof steps[0]; k-- > 0;) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", root, steps[k].add);
        unlink(p);
    }
    snprintf(madp, sizeof madp, "%s/R1/GeoShip.MAD", root);
    unlink(madp);
    const char *dirs[] = {"R1/GeoShip/a/b/c",
                          "R1/GeoShip/a/b",
                          "R1/GeoShip/a",
                          "R1/GeoShip/Rl0/LOD0",
                          "R1/GeoShip/Rl0/LOD1",
                          "R1/GeoShip/Rl0",
                          "R1/GeoShip",
                          "R1",
                          ""};
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", root, dirs[k]);
        rmdir(p);
    }
    ra_document_free(ref);
    free(geo), free(mad);
}

/* A name as the .big stores it: each byte XORed with the byte before it
 * (0xD5 before the first), then a NUL. */
static size_t put_name(uint8_t *p, const char *plain)
{
    uint8_t m = 0xD5;
    size_t n = strlen(plain);
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)((uint8_t)plain[i] ^ m);
        m = (uint8_t)plain[i];
    }
    p[n] = 0;
    return n + 1;
}

/* One .mad (a.mad) and 300 geometries of its name: 299 d/a.geo, then a.geo
 * beside it.  Only the first 256 of a name are considered (a crafted
 * archive of many of both cost their product), with a warning naming the
 * 44 left out: the .mad pairs with a d/a.geo, not with the shallower a.geo
 * it would have taken. */
static void geo_per_name(void)
{
    enum {
        GEOS = 300
    };
    size_t n = 1 + GEOS, toc = 15 + 32 * n, size = toc + 16 * n;
    uint8_t *d = calloc(size, 1);
    memcpy(d, "RBF1.23", 7);
    put_u32(d + 7, (uint32_t)n);
    size_t at = toc;
    for (size_t i = 0; i < n; i++) {
        const char *name = i == 0 ? "a.mad" : i < GEOS ? "d/a.geo" : "a.geo";
        uint8_t *e = d + 15 + 32 * i;
        e[8] = (uint8_t)strlen(name); /* nameLength; stored, real 0 */
        put_u32(e + 20, (uint32_t)at);
        at += put_name(d + at, name);
    }
    ra_archive *ar = open_ok(d, at, "geo_per_name");
    if (ar) {
        bool warned = false;
        for (size_t i = 0; i < ar->warning_count; i++)
            warned |= strstr(ar->warnings[i], "44 .geo/.peo entries are not considered") != NULL;
        CHECK(warned, "geo_per_name: a warning names the 44 geometries left out");
        CHECK(ar->count == 1 && ar->items[0].has_skeleton && ar->items[0].skeleton_id >= 1 &&
                  ar->items[0].skeleton_id <= 256,
              "geo_per_name: a.mad pairs with one of the first 256 (entry %u)",
              ar->count ? ar->items[0].skeleton_id : 0);
        ra_archive_free(ar);
    }
    free(d);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_big ARCHIVES_DIR HOMEWORLD_DIR\n");
        return 2;
    }
    g_arch = argv[1];
    g_hw = argv[2];
    CHECK(ra_format_find("homeworld_big") && ra_format_is_archive(ra_format_find("homeworld_big")),
          "homeworld_big is a registered archive format");
    CHECK(ra_format_by_extension("HOMEWORLD.BIG") == ra_format_find("homeworld_big"), "by extension");
    check_items("ships.big", 32);
    check_items("big_remaster.big", 36);
    check_long();
    check_hw2();
    check_geo();
    check_lods();
    geo_per_name();
    ship_folder();
    check_broken("big_bad_toc.big", true, 0, RA_ERR_TRUNCATED, "numFiles", 7);
    check_broken("big_bad_lzss.big", false, 1, RA_ERR_TRUNCATED, "data", 1267);
    check_broken("big_bad_ref.big", false, 1, RA_ERR_BAD_VALUE, "data", 978);
    check_broken("big_bad_size.big", false, 1, RA_ERR_BAD_VALUE, "data", 1567);
    mutations();
    memory_limit();
    allocation_failures("ships.big", "R2/Defender");
    allocation_failures("big_long.big", NULL);
    return ra_test_finish("test_big");
}
