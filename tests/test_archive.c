/* Game archives (.SI, .pak): the byte-by-byte fixtures of test_models/archives
 * (make_fixtures.py) listed and loaded, each animation equal to the same
 * loose file; our writers' archives read back; broken archives refused with
 * an error (truncations, flips, bad offsets, a zip bomb).
 * usage: test_archive ARCHIVES_DIR LEGO_DIR METROID_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ra_test.h"
#include "retroanim/ra_archive_internal.h"

static const char *g_arch, *g_lego, *g_mp;

static uint8_t *slurp(const char *dir, const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint8_t *d = NULL;
    ra_error e;
    ra_error_clear(&e);
    if (ra_read_file(path, &d, n, &e) != RA_OK) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    return d;
}

static size_t keys_of(const ra_scene *s)
{
    size_t k = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++) {
            const ra_channel *ch = &s->animations[a].channels[c];
            k += ch->position_count + ch->rotation_count + ch->scaling_count;
        }
    return k;
}

/* The same nodes and keys (times and values exactly: the same bytes went through the same reader). */
static void same_scene(const ra_scene *a, const ra_scene *b, const char *what)
{
    CHECK(a->node_count == b->node_count, "%s: nodes %zu vs %zu", what, a->node_count, b->node_count);
    CHECK(a->animation_count == 1 && b->animation_count == 1, "%s: one animation each", what);
    CHECK(keys_of(a) == keys_of(b), "%s: keys %zu vs %zu", what, keys_of(a), keys_of(b));
    if (a->node_count != b->node_count || a->animation_count != 1 || b->animation_count != 1) return;
    for (size_t i = 0; i < a->node_count; i++)
        CHECK(strcmp(a->nodes[i].name, b->nodes[i].name) == 0, "%s: node %zu", what, i);
    const ra_animation *x = &a->animations[0], *y = &b->animations[0];
    CHECK(x->channel_count == y->channel_count && x->duration == y->duration, "%s: channels/duration", what);
    for (size_t c = 0; c < x->channel_count && c < y->channel_count; c++) {
        const ra_channel *p = &x->channels[c], *q = &y->channels[c];
        CHECK(p->rotation_count == q->rotation_count && p->position_count == q->position_count, "%s: channel %zu", what,
              c);
        for (size_t k = 0; k < p->rotation_count && k < q->rotation_count; k++)
            CHECK(memcmp(&p->rotation[k], &q->rotation[k], sizeof p->rotation[k]) == 0, "%s: rotation key %zu", what,
                  k);
        for (size_t k = 0; k < p->position_count && k < q->position_count; k++)
            CHECK(memcmp(&p->position[k], &q->position[k], sizeof p->position[k]) == 0, "%s: position key %zu", what,
                  k);
    }
}

static ra_document *load(const uint8_t *d, size_t n, const char *name, const char *k1, const char *v1, const char *k2,
                         const char *v2, ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    if (k1) ra_options_add(&o, k1, v1);
    if (k2) ra_options_add(&o, k2, v2);
    ra_document *doc = NULL;
    ra_error_clear(e);
    /* read, scribble over and free the bytes, then bake (as the Assimp
     * importer does): the item's document must keep nothing of the archive */
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, d, n);
    ra_status st = ra_document_read(copy, n, name, &o, &doc, e);
    memset(copy, 0xA5, n);
    free(copy);
    if (st != RA_OK) return NULL;
    if (ra_document_build_scene(doc, e) != RA_OK) {
        ra_document_free(doc);
        return NULL;
    }
    return doc;
}

/* each item of an archive against its loose file */
static void compare_loose(const char *archive, const char *item, const char *dir, const char *loose, const char *cinf)
{
    size_t an = 0, ln = 0;
    uint8_t *a = slurp(g_arch, archive, &an), *l = slurp(dir, loose, &ln);
    ra_error e;
    ra_document *da = load(a, an, archive, "animation", item, NULL, NULL, &e);
    CHECK(da != NULL, "%s[%s]: %s", archive, item, e.msg);
    char cpath[1024];
    snprintf(cpath, sizeof cpath, "%s/%s", dir, cinf ? cinf : "");
    /* cinf is a Metroid key: a LEGO file refuses it */
    bool metroid = strstr(loose, ".ani") == NULL || strstr(loose, ".anim") != NULL;
    ra_document *dl = metroid ? load(l, ln, loose, "cinf", cinf ? cpath : "none", NULL, NULL, &e)
                              : load(l, ln, loose, NULL, NULL, NULL, NULL, &e);
    CHECK(dl != NULL, "%s: %s", loose, e.msg);
    if (da && dl) {
        char what[256];
        snprintf(what, sizeof what, "%s[%s] vs %s", archive, item, loose);
        same_scene(&da->scene, &dl->scene, what);
        CHECK(strcmp(da->scene.animations[0].name, item) == 0, "%s: animation named %s", what,
              da->scene.animations[0].name);
        const ra_meta *m = ra_meta_get(&da->scene.meta, "archive.item_name");
        CHECK(m && strcmp(m->u.s, item) == 0, "%s: archive.item_name", what);
    }
    ra_document_free(da);
    ra_document_free(dl);
    ra_free(a);
    ra_free(l);
}

static ra_archive *open_buf(const uint8_t *d, size_t n, const char *mem, ra_error *e)
{
    ra_options o;
    ra_options_init(&o);
    if (mem) ra_options_add(&o, "memory_limit", mem);
    ra_archive *ar = NULL;
    ra_error_clear(e);
    ra_archive_open(d, n, &o, &ar, e);
    return ar;
}

static void payload_is(ra_archive *ar, size_t i, const char *dir, const char *file)
{
    size_t ln = 0, pn = 0;
    uint8_t *l = slurp(dir, file, &ln);
    const uint8_t *p = NULL;
    ra_error e;
    ra_error_clear(&e);
    CHECK(ra_archive_payload(ar, i, &p, &pn, &e) == RA_OK, "payload %zu: %s", i, e.msg);
    CHECK(pn == ln && p && memcmp(p, l, ln) == 0, "payload %zu is %s (%zu vs %zu bytes)", i, file, pn, ln);
    ra_free(l);
}

static void fixtures(void)
{
    size_t n = 0;
    ra_error e;
    /* several.si: three animations in a composite, split and padded */
    uint8_t *si = slurp(g_arch, "several.si", &n);
    ra_archive *ar = open_buf(si, n, NULL, &e);
    CHECK(ar && ar->count == 3, "several.si: 3 animations (%s)", e.msg);
    if (ar && ar->count == 3) {
        const char *names[3] = {"walk", "hierarchy", "camera"},
                   *files[3] = {"minimal.ani", "hierarchy.ani", "camera.ani"};
        uint32_t ids[3] = {10, 11, 13};
        for (size_t i = 0; i < 3; i++) {
            CHECK(strcmp(ar->items[i].name, names[i]) == 0 && ar->items[i].id == ids[i], "item %zu: %s %u", i,
                  ar->items[i].name, ar->items[i].id);
            CHECK(strcmp(ar->items[i].group, "scene") == 0, "item %zu in the composite", i);
            payload_is(ar, i, g_lego, files[i]);
        }
        const ra_meta *loc = ra_meta_get(&ar->items[0].meta, "si.location");
        CHECK(loc && loc->u.v.x == 1.5 && loc->u.v.z == -2, "walk's location");
        const ra_meta *ex = ra_meta_get(&ar->items[0].meta, "si.extra");
        CHECK(ex && strcmp(ex->u.s, "ptatcam:cam0") == 0, "walk's extra: %s", ex ? ex->u.s : "-");
        const ra_meta *ch = ra_meta_get(&ar->items[1].meta, "si.data_chunks");
        CHECK(ch && ch->u.i >= 2, "hierarchy's data came in split pieces (%lld)", ch ? (long long)ch->u.i : -1LL);
        CHECK(ra_archive_find(ar, "camera") == 2 && ra_archive_find(ar, "11") == 1 &&
                  ra_archive_find(ar, "12") == SIZE_MAX,
              "find by name and id; the sound object is not an animation");
    }
    ra_archive_free(ar);
    ra_free(si);
    compare_loose("several.si", "walk", g_lego, "minimal.ani", NULL);
    compare_loose("several.si", "hierarchy", g_lego, "hierarchy.ani", NULL);
    compare_loose("several.si", "camera", g_lego, "camera.ani", NULL);
    compare_loose("tiny.si", "minimal", g_lego, "minimal.ani", NULL);

    /* several.pak: ANCS names and skeleton, compressed and stored, a duplicate, a named ANIM */
    uint8_t *pak = slurp(g_arch, "several.pak", &n);
    ar = open_buf(pak, n, NULL, &e);
    CHECK(ar && ar->count == 3, "several.pak: 3 animations (%s)", e.msg);
    if (ar && ar->count == 3) {
        CHECK(strcmp(ar->items[0].name, "upper_walk") == 0 && ar->items[0].compressed && ar->items[0].has_skeleton &&
                  ar->items[0].skeleton_id == 0x3000 && strcmp(ar->items[0].group, "Samus") == 0,
              "upper_walk: compressed, CINF 3000, character Samus");
        CHECK(strcmp(ar->items[1].name, "upper_idle") == 0 && !ar->items[1].compressed && ar->items[1].has_skeleton,
              "upper_idle: stored, with skeleton");
        CHECK(strcmp(ar->items[2].name, "loose_v2") == 0 && ar->items[2].compressed && !ar->items[2].has_skeleton,
              "loose_v2: named by the table, no ANCS");
        payload_is(ar, 0, g_mp, "upper.ANIM");
        payload_is(ar, 1, g_mp, "upper.ANIM");
        payload_is(ar, 2, g_mp, "v2_mp1.anim");
        const uint8_t *sk = NULL;
        size_t skn = 0, ln = 0;
        uint8_t *l = slurp(g_mp, "upper.CINF", &ln);
        CHECK(ra_archive_skeleton(ar, 0, &sk, &skn, &e) == RA_OK && skn == ln && memcmp(sk, l, ln) == 0,
              "skeleton bytes");
        ra_free(l);
    }
    ra_archive_free(ar);
    ra_free(pak);
    compare_loose("several.pak", "upper_walk", g_mp, "upper.ANIM", "upper.CINF");
    compare_loose("several.pak", "upper_idle", g_mp, "upper.ANIM", "upper.CINF");
    compare_loose("several.pak", "loose_v2", g_mp, "v2_mp1.anim", NULL);
    compare_loose("tiny.pak", "ANIM_00001001", g_mp, "v2_mp1.anim", NULL);
}

/* our writers, read back */
static void writers(void)
{
    size_t n1, n2, n3;
    uint8_t *a = slurp(g_lego, "minimal.ani", &n1), *b = slurp(g_lego, "hierarchy.ani", &n2),
            *c = slurp(g_lego, "camera.ani", &n3);
    for (int composite = 0; composite < 2; composite++) {
        for (uint32_t buf = 256; buf <= 4096; buf *= 4) {
            ra_si_object o[3] = {
                {5, "a", "LegoAnimPresenter", {1, 2, 3}, {0, 0, 1}, {0, 1, 0}, "x:1", a, n1},
                {6, "b", "LegoHideAnimPresenter", {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, NULL, b, n2},
                {7, "c", "LegoCarBuildAnimPresenter", {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, NULL, c, n3},
            };
            ra_writer w;
            ra_writer_init(&w);
            ra_error e;
            ra_error_clear(&e);
            CHECK(ra_si_write(o, 3, buf, composite ? "group" : NULL, 4, &w, &e) == RA_OK, "si write: %s", e.msg);
            ra_archive *ar = open_buf(w.data, w.size, NULL, &e);
            CHECK(ar && ar->count == 3, "written SI (buffer %u, composite %d): 3 items (%s)", buf, composite, e.msg);
            for (size_t i = 0; ar && i < ar->count && i < 3; i++) {
                const uint8_t *p;
                size_t pn;
                CHECK(ra_archive_payload(ar, i, &p, &pn, &e) == RA_OK && pn == o[i].size &&
                          memcmp(p, o[i].data, pn) == 0,
                      "written SI item %zu round trip", i);
                CHECK(ar->items[i].id == o[i].id && strcmp(ar->items[i].kind, o[i].presenter) == 0, "item %zu fields",
                      i);
            }
            /* every buffer boundary respected: no chunk header within 8 bytes of one */
            ra_archive_free(ar);
            ra_writer_free(&w);
        }
    }
    /* pak: compressed and stored, read back */
    ra_pak_resource r[3] = {
        {{'A', 'N', 'I', 'M'}, 0x10, a, n1, true, "first"},
        {{'A', 'N', 'I', 'M'}, 0x11, b, n2, false, NULL},
        {{'T', 'X', 'T', 'R'}, 0x12, c, n3, true, NULL},
    };
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(ra_pak_write(r, 3, &w, &e) == RA_OK, "pak write: %s", e.msg);
    CHECK(w.size % 32 == 0, "pak is 32-aligned (%zu)", w.size);
    ra_archive *ar = open_buf(w.data, w.size, NULL, &e);
    CHECK(ar && ar->count == 2, "written pak: 2 ANIMs (%s)", e.msg);
    if (ar && ar->count == 2) {
        const uint8_t *p;
        size_t pn;
        CHECK(strcmp(ar->items[0].name, "first") == 0 && ar->items[0].compressed, "named, compressed");
        CHECK(ra_archive_payload(ar, 0, &p, &pn, &e) == RA_OK && pn == n1 && memcmp(p, a, n1) == 0,
              "inflated round trip");
        /* a stored resource keeps the pak's 0xFF padding to 32 bytes (as extractors give it) */
        bool ok = ra_archive_payload(ar, 1, &p, &pn, &e) == RA_OK && pn == (n2 + 31) / 32 * 32 && memcmp(p, b, n2) == 0;
        for (size_t i = n2; ok && i < pn; i++) ok = p[i] == 0xFF;
        CHECK(ok, "stored round trip (%zu bytes for %zu)", pn, n2);
    }
    ra_archive_free(ar);
    ra_writer_free(&w);
    ra_free(a);
    ra_free(b);
    ra_free(c);
}

/* a broken archive gives an error with the format, never a crash */
static void sweep(const char *file)
{
    size_t n = 0;
    uint8_t *d = slurp(g_arch, file, &n);
    uint8_t *m = malloc(n);
    size_t refused = 0, runs = 0;
    for (size_t cut = 0; cut < n; cut += 1 + cut / 64) {
        ra_error e;
        ra_archive *ar = open_buf(d, cut, NULL, &e);
        if (!ar) {
            refused++;
            CHECK(e.code != RA_OK && e.msg[0], "%s cut at %zu: an error message", file, cut);
        }
        for (size_t i = 0; ar && i < ar->count; i++) {
            const uint8_t *p;
            size_t pn;
            ra_archive_payload(ar, i, &p, &pn, &e);
        }
        ra_archive_free(ar);
        runs++;
    }
    CHECK(refused > runs / 2, "%s: truncations refused (%zu of %zu)", file, refused, runs);
    for (size_t i = 0; i < n; i++) {
        memcpy(m, d, n);
        m[i] ^= (uint8_t)(0x5A + i);
        ra_error e;
        ra_document *doc = load(m, n, file, NULL, NULL, NULL, NULL, &e);
        if (doc) CHECK(ra_scene_check(&doc->scene, &e) == RA_OK, "%s flip %zu: a valid scene", file, i);
        else CHECK(e.msg[0] != 0, "%s flip %zu: an error", file, i);
        ra_document_free(doc);
    }
    free(m);
    ra_free(d);
}

static void broken(void)
{
    size_t n = 0;
    ra_error e;
    uint8_t *d = slurp(g_arch, "several.pak", &n);
    /* a resource offset past the end */
    uint8_t *m = malloc(n);
    memcpy(m, d, n);
    /* the resource table follows the named table: find the first entry by its type */
    size_t at = 0;
    for (size_t i = 12; i + 20 < n; i++)
        if (memcmp(m + i, "ANCS", 4) == 0 && i >= 4 && m[i - 1] <= 1 && m[i - 4] == 0) {
            at = i - 4;
            break;
        }
    CHECK(at > 0, "found the resource table");
    m[at + 16] = 0x7F;
    ra_archive *ar = open_buf(m, n, NULL, &e);
    CHECK(!ar && e.code == RA_ERR_TRUNCATED && strstr(e.msg, "past the end"), "bad offset: %s", e.msg);
    ra_archive_free(ar);
    free(m);
    ra_free(d);

    /* a zip bomb: 100 MiB of zeros in a pak of ~100 KiB (the default limit is 64 MiB + 64 x the file) */
    size_t big = 100u << 20;
    uint8_t *zeros = calloc(1, 1 << 20);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit(&z, 9);
    size_t cap = 1 << 20, zl = 0;
    uint8_t *zb = malloc(cap);
    for (size_t left = big; left > 0;) {
        size_t now = left < (1u << 20) ? left : (1u << 20);
        left -= now;
        z.next_in = zeros;
        z.avail_in = (uInt)now;
        do {
            z.next_out = zb + zl;
            z.avail_out = (uInt)(cap - zl);
            deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
            zl = cap - z.avail_out;
        } while (z.avail_in || (!left && z.avail_out == 0));
    }
    deflateEnd(&z);
    ra_writer w;
    ra_writer_init(&w);
    uint8_t hdr[] = {0, 3, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 'A', 'N', 'I', 'M', 0, 0, 0, 1};
    uint32_t size = (uint32_t)(zl + 4 + 31) / 32 * 32;
    ra_wr_bytes(&w, hdr, sizeof hdr);
    ra_wr_u32be(&w, size);
    ra_wr_u32be(&w, 64);
    while (w.size < 64) ra_wr_u8(&w, 0xFF);
    ra_wr_u32be(&w, (uint32_t)big);
    ra_wr_bytes(&w, zb, zl);
    while (w.size % 32) ra_wr_u8(&w, 0xFF);
    ar = open_buf(w.data, w.size, NULL, &e);
    CHECK(ar && ar->count == 1, "bomb pak listed (%s)", e.msg);
    if (ar) {
        const uint8_t *p;
        size_t pn;
        ra_error_clear(&e);
        CHECK(ra_archive_payload(ar, 0, &p, &pn, &e) == RA_ERR_NO_MEMORY && strstr(e.msg, "memory_limit"),
              "the bomb is refused by the memory limit: %s", e.msg);
    }
    ra_archive_free(ar);
    ar = open_buf(w.data, w.size, "300000000", &e);
    if (ar) {
        const uint8_t *p;
        size_t pn;
        CHECK(ra_archive_payload(ar, 0, &p, &pn, &e) == RA_OK && pn == big, "with a higher memory_limit it inflates");
    }
    ra_archive_free(ar);
    ra_document *doc = load(w.data, w.size, "bomb.pak", NULL, NULL, NULL, NULL, &e);
    CHECK(!doc && e.code == RA_ERR_NO_MEMORY, "loading the bomb: %s", e.msg);
    ra_document_free(doc);
    ra_writer_free(&w);
    free(zb);
    free(zeros);

    /* SI: a chunk running past its parent */
    d = slurp(g_arch, "tiny.si", &n);
    m = malloc(n);
    memcpy(m, d, n);
    for (size_t i = 12; i + 8 < n; i++)
        if (memcmp(m + i, "MxOb", 4) == 0) {
            m[i + 7] = 0x40;
            break;
        }
    ar = open_buf(m, n, NULL, &e);
    CHECK(!ar && e.code == RA_ERR_TRUNCATED && e.offset != RA_NO_OFFSET, "SI chunk overrun: %s", e.msg);
    ra_archive_free(ar);
    /* an unknown animation name */
    doc = load(d, n, "tiny.si", "animation", "nope", NULL, NULL, &e);
    CHECK(!doc && e.code == RA_ERR_USAGE, "unknown animation: %s", e.msg);
    free(m);
    ra_free(d);
}

/* An SI object whose split pieces are interrupted by an unsplit chunk of the
 * same id is skipped with a warning (not listed with a half-filled buffer). */
static void interrupted_split(void)
{
    size_t n = 0;
    ra_error e;
    uint8_t *d = slurp(g_arch, "several.si", &n);
    uint8_t *m = malloc(n);
    memcpy(m, d, n);
    /* the second MxCh piece (SPLIT flag 0x10) of the first split object: clear its SPLIT flag */
    uint32_t split_id = 0;
    size_t cleared = 0, pieces = 0;
    for (size_t i = 0; i + 8 + 14 <= n && !cleared; i++) {
        if (memcmp(m + i, "MxCh", 4) != 0) continue;
        uint8_t *p = m + i + 8;
        uint16_t flags = (uint16_t)(p[0] | p[1] << 8);
        uint32_t id = (uint32_t)p[2] | (uint32_t)p[3] << 8 | (uint32_t)p[4] << 16 | (uint32_t)p[5] << 24;
        if (!(flags & 0x10) || (pieces && id != split_id)) continue;
        if (!pieces++) {
            split_id = id;
            continue;
        }
        p[0] = (uint8_t)(flags & ~0x10);
        cleared = i;
    }
    CHECK(cleared > 0, "several.si has an object in split pieces");
    ra_archive *ar = open_buf(m, n, NULL, &e);
    CHECK(ar != NULL, "interrupted split: %s", e.msg);
    bool listed = false, warned = false;
    for (size_t i = 0; ar && i < ar->count; i++) listed |= ar->items[i].id == split_id;
    for (size_t i = 0; ar && i < ar->warning_count; i++) warned |= strstr(ar->warnings[i], "split data ends") != NULL;
    CHECK(ar && !listed && warned, "object %u with interrupted pieces: listed %d, warned %d", split_id, listed, warned);
    ra_archive_free(ar);
    free(m);
    ra_free(d);
}

/* animation=ID: decimal (a leading 0 is still decimal) or 0x hex */
static void ids_are_decimal_or_hex(void)
{
    size_t n = 0;
    ra_error e;
    uint8_t *d = slurp(g_arch, "several.si", &n);
    ra_archive *ar = open_buf(d, n, NULL, &e);
    CHECK(ar && ar->count > 0, "several.si: %s", e.msg);
    for (size_t i = 0; ar && i < ar->count; i++) {
        char dec[32], zero[32], hex[32];
        snprintf(dec, sizeof dec, "%u", ar->items[i].id);
        snprintf(zero, sizeof zero, "0%u", ar->items[i].id);
        snprintf(hex, sizeof hex, "0x%X", ar->items[i].id);
        CHECK(ra_archive_find(ar, dec) == i && ra_archive_find(ar, zero) == i && ra_archive_find(ar, hex) == i,
              "item %zu (id %u) by %s, %s, %s", i, ar->items[i].id, dec, zero, hex);
    }
    CHECK(ar && ra_archive_find(ar, "0x") == SIZE_MAX && ra_archive_find(ar, "-1") == SIZE_MAX &&
              ra_archive_find(ar, " 1") == SIZE_MAX && ra_archive_find(ar, "+1") == SIZE_MAX,
          "bad ids");
    ra_archive_free(ar);
    ra_free(d);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_archive ARCHIVES_DIR LEGO_DIR METROID_DIR\n");
        return 2;
    }
    g_arch = argv[1];
    g_lego = argv[2];
    g_mp = argv[3];
    fixtures();
    writers();
    broken();
    interrupted_split();
    ids_are_decimal_or_hex();
    sweep("tiny.si");
    sweep("several.si");
    sweep("tiny.pak");
    sweep("several.pak");
    return ra_test_finish("archive");
}
