/* Game archives (.SI, .pak): the byte-by-byte fixtures of test_models/archives
 * (make_fixtures.py) listed and loaded, each animation equal to the same
 * loose file; our writers' archives read back; broken archives refused with
 * an error (truncations, flips, bad offsets, a zip bomb).
 * usage: test_archive ARCHIVES_DIR LEGO_DIR METROID_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ra_fixture.h"
#include "retroanim/ra_archive_internal.h"

static const char *g_arch, *g_lego, *g_mp;

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

/* each item of an archive against its loose file (and its CINF, in cinf_dir) */
static void compare_loose_in(const char *archive, const char *item, const char *dir, const char *loose,
                             const char *cinf_dir, const char *cinf)
{
    size_t an = 0, ln = 0;
    uint8_t *a = fx_slurp(g_arch, archive, &an), *l = fx_slurp(dir, loose, &ln);
    ra_error e;
    ra_document *da = load(a, an, archive, "animation", item, NULL, NULL, &e);
    CHECK(da != NULL, "%s[%s]: %s", archive, item, e.msg);
    char cpath[1024];
    snprintf(cpath, sizeof cpath, "%s/%s", cinf_dir, cinf ? cinf : "");
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

static void compare_loose(const char *archive, const char *item, const char *dir, const char *loose, const char *cinf)
{
    compare_loose_in(archive, item, dir, loose, dir, cinf);
}

static bool meta_int_is(const ra_meta_list *m, const char *key, int64_t v)
{
    const ra_meta *x = ra_meta_get(m, key);
    return x && x->u.i == v;
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
    uint8_t *l = fx_slurp(dir, file, &ln);
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
    uint8_t *si = fx_slurp(g_arch, "several.si", &n);
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
    /* the scene of one item: the archive's keys, the item's own (si.*), then
     * the other items as "id name" in archive.other.N, in archive order; the
     * bytes are scribbled over before the scene is built (load) */
    ra_document *doc = load(si, n, "several.si", "animation", "hierarchy", NULL, NULL, &e);
    CHECK(doc != NULL, "several.si[hierarchy]: %s", e.msg);
    if (doc) {
        const ra_meta_list *m = &doc->scene.meta;
        const ra_meta *o0 = ra_meta_get(m, "archive.other.0"), *o1 = ra_meta_get(m, "archive.other.1");
        CHECK(o0 && o0->type == RA_META_STRING && !strcmp(o0->u.s, "10 walk") && o1 && !strcmp(o1->u.s, "13 camera") &&
                  !ra_meta_get(m, "archive.other.2"),
              "archive.other: %s, %s", o0 ? o0->u.s : "-", o1 ? o1->u.s : "-");
        const ra_meta *pr = ra_meta_get(m, "si.presenter"), *ch = ra_meta_get(m, "si.data_chunks");
        CHECK(pr && !strcmp(pr->u.s, "LegoLoopingAnimPresenter") && ch && ch->u.i >= 2 &&
                  meta_int_is(m, "archive.item_id", 11) && meta_int_is(m, "archive.item_count", 3),
              "the item's own keys in the scene");
        size_t at_id = SIZE_MAX, at_si = SIZE_MAX, at_other = SIZE_MAX;
        for (size_t i = 0; i < m->count; i++) {
            if (!strcmp(m->items[i].key, "archive.item_id")) at_id = i;
            if (!strcmp(m->items[i].key, "si.object_type")) at_si = i;
            if (!strcmp(m->items[i].key, "archive.other.0")) at_other = i;
        }
        CHECK(at_id < at_si && at_si < at_other && at_other + 2 == m->count, "key order: %zu, %zu, %zu of %zu", at_id,
              at_si, at_other, m->count);
        ra_document_free(doc);
    }
    ra_free(si);
    compare_loose("several.si", "walk", g_lego, "minimal.ani", NULL);
    compare_loose("several.si", "hierarchy", g_lego, "hierarchy.ani", NULL);
    compare_loose("several.si", "camera", g_lego, "camera.ani", NULL);
    compare_loose("tiny.si", "minimal", g_lego, "minimal.ani", NULL);

    /* several.pak: ANCS names and skeleton, compressed and stored, a duplicate, a named ANIM */
    uint8_t *pak = fx_slurp(g_arch, "several.pak", &n);
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
        uint8_t *l = fx_slurp(g_mp, "upper.CINF", &ln);
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

    /* a pak of the 8-byte header alone (version 00030005, reserved 0; one is on the
     * Echoes demo disc): an empty archive; two bytes more are a truncated named count */
    const uint8_t bare[10] = {0x00, 0x03, 0x00, 0x05, 0, 0, 0, 0, 0, 0};
    ar = open_buf(bare, 8, NULL, &e);
    CHECK(ar && ar->count == 0 && !strcmp(ar->format, "metroid_pak") && meta_int_is(&ar->meta, "pak.resources", 0),
          "a header-only pak opens empty (%s)", e.msg);
    ra_archive_free(ar);
    ar = open_buf(bare, 10, NULL, &e);
    CHECK(!ar && e.code == RA_ERR_TRUNCATED && e.offset == 8 && !strcmp(e.field, "named.count"),
          "a pak cut inside its named count: truncated at byte 8 (%s)", e.msg);
    ra_archive_free(ar);
}

/* ---- Metroid Prime 2 (Echoes) paks: LZO1X segments, the Echoes ANCS ------------------------------------ */
#define ANCS_SPLINTER 0x8A3F0001u
#define ANIM_SWAY 0x8A3F1001u
#define ANIM_LONG 0x8A3F1002u
#define CINF_SPLINTER 0x8A3F2001u
#define ANCS_CRAWLER 0x5C770001u
#define ANIM_TWIST 0x5C771001u
#define CINF_CRAWLER 0x5C772001u

/* The resource table entry of `id` in a pak (0 if none): {compressed, type, id, size, offset}. */
static size_t pak_entry(const uint8_t *d, size_t n, uint32_t id)
{
    if (n < 16) return 0;
    size_t at = 12;
    for (uint32_t i = 0, named = ra_load_u32be(d + 8); i < named && at + 12 <= n; i++)
        at += 12 + ra_load_u32be(d + at + 8);
    if (at + 4 > n) return 0;
    uint32_t count = ra_load_u32be(d + at);
    for (uint32_t i = 0; i < count && at + 4 + 20 * (i + 1) <= n; i++)
        if (ra_load_u32be(d + at + 4 + 20 * i + 8) == id) return at + 4 + 20 * i;
    return 0;
}

/* The segments of a compressed Echoes resource, walked from the pak's bytes: 'L' an LZO1X stream, 'S' stored. */
static void segment_kinds(const uint8_t *d, size_t n, uint32_t id, char *kinds, size_t cap)
{
    size_t e = pak_entry(d, n, id), k = 0;
    kinds[0] = 0;
    if (!e) return;
    uint32_t size = ra_load_u32be(d + e + 12), off = ra_load_u32be(d + e + 16);
    if ((uint64_t)off + size > n || size < 4) return;
    uint32_t out = ra_load_u32be(d + off), done = 0;
    size_t at = off + 4;
    while (done < out && at + 2 <= (size_t)off + size && k + 1 < cap) {
        int16_t len = (int16_t)(d[at] << 8 | d[at + 1]);
        at += 2;
        if (len < 0) {
            kinds[k++] = 'S';
            done += (uint32_t)-len;
            at += (size_t)-len;
        } else {
            kinds[k++] = 'L';
            done += out - done < 0x4000 ? out - done : 0x4000;
            at += (size_t)len;
        }
    }
    kinds[k] = 0;
}

static uint32_t res_offset(const uint8_t *d, size_t n, uint32_t id)
{
    size_t e = pak_entry(d, n, id);
    return e ? ra_load_u32be(d + e + 16) : 0;
}

static void skeleton_is(ra_archive *ar, size_t i, const char *file)
{
    size_t ln = 0, sn = 0;
    uint8_t *l = fx_slurp(g_mp, file, &ln);
    const uint8_t *sk = NULL;
    ra_error e;
    CHECK(ra_archive_skeleton(ar, i, &sk, &sn, &e) == RA_OK && sn == ln && memcmp(sk, l, ln) == 0,
          "item %zu: skeleton %s (%zu vs %zu bytes) %s", i, file, sn, ln, e.msg);
    ra_free(l);
}

/* echoes.pak (make_fixtures.py): an Echoes ANCS (LZO, one segment; character "Splinter", sectionCount 10,
 * every list filled) naming splinter_sway (v2_mp2.anim, LZO) by a primitive and splinter_long
 * (echoes_long.anim, LZO in three segments: LZO, stored, LZO) by a blend that names splinter_sway again; its
 * CINF v2_mp2.cinf (LZO); a stored Echoes ANCS ("Crawler") naming crawler_twist (v0_mp2.anim, stored) with the
 * CINF v0_mp2.cinf (stored). */
static void echoes(void)
{
    size_t n = 0;
    ra_error e;
    uint8_t *pak = fx_slurp(g_arch, "echoes.pak", &n);
    char kinds[16];
    segment_kinds(pak, n, ANIM_LONG, kinds, sizeof kinds);
    CHECK(strcmp(kinds, "LSL") == 0, "splinter_long: segments LZO, stored, LZO (%s)", kinds);
    const uint32_t single[3] = {ANCS_SPLINTER, ANIM_SWAY, CINF_SPLINTER};
    for (int k = 0; k < 3; k++) {
        segment_kinds(pak, n, single[k], kinds, sizeof kinds);
        CHECK(strcmp(kinds, "L") == 0, "%08X: one LZO segment (%s)", single[k], kinds);
    }
    ra_archive *ar = open_buf(pak, n, NULL, &e);
    CHECK(ar && ar->count == 3, "echoes.pak: 3 animations (%s)", e.msg);
    if (ar && ar->count == 3) {
        CHECK(ar->warning_count == 0, "echoes.pak: no warnings (%s)", ar->warning_count ? ar->warnings[0] : "");
        CHECK(meta_int_is(&ar->meta, "pak.resources", 7) && meta_int_is(&ar->meta, "pak.compressed_resources", 4) &&
                  meta_int_is(&ar->meta, "pak.anims", 3) && meta_int_is(&ar->meta, "pak.named_resources", 1),
              "echoes.pak: 7 resources, 4 compressed, 3 ANIMs, 1 named");
        const ra_archive_item *it = ar->items;
        CHECK(strcmp(it[0].name, "splinter_sway") == 0 && it[0].id == ANIM_SWAY && it[0].compressed &&
                  it[0].size == 169 && it[0].has_skeleton && it[0].skeleton_id == CINF_SPLINTER &&
                  strcmp(it[0].group, "Splinter") == 0 && meta_int_is(&it[0].meta, "pak.ancs", ANCS_SPLINTER),
              "item 0: splinter_sway, LZO, 169 bytes, CINF %08X, Splinter", CINF_SPLINTER);
        /* named by the blend; its second primitive (splinter_sway again, as splinter_sway_again) adds nothing */
        CHECK(strcmp(it[1].name, "splinter_long") == 0 && it[1].id == ANIM_LONG && it[1].compressed &&
                  it[1].size == 41856 && it[1].has_skeleton && it[1].skeleton_id == CINF_SPLINTER &&
                  strcmp(it[1].group, "Splinter") == 0,
              "item 1: splinter_long, LZO, 41856 bytes, CINF %08X", CINF_SPLINTER);
        CHECK(strcmp(it[2].name, "crawler_twist") == 0 && it[2].id == ANIM_TWIST && !it[2].compressed &&
                  it[2].size == 416 && it[2].has_skeleton && it[2].skeleton_id == CINF_CRAWLER &&
                  strcmp(it[2].group, "Crawler") == 0 && meta_int_is(&it[2].meta, "pak.ancs", ANCS_CRAWLER),
              "item 2: crawler_twist, stored, CINF %08X, Crawler", CINF_CRAWLER);
        CHECK(ra_archive_find(ar, "splinter_sway_again") == SIZE_MAX && ra_archive_find(ar, "0x8A3F1002") == 1,
              "the first name of an ANIM wins");
        payload_is(ar, 0, g_mp, "v2_mp2.anim");
        payload_is(ar, 1, g_arch, "echoes_long.anim"); /* the three segments, byte for byte */
        payload_is(ar, 2, g_mp, "v0_mp2.anim");
        skeleton_is(ar, 0, "v2_mp2.cinf");
        skeleton_is(ar, 1, "v2_mp2.cinf");
        skeleton_is(ar, 2, "v0_mp2.cinf");
        CHECK(ar->warning_count == 0, "echoes.pak: no warnings after decoding (%s)",
              ar->warning_count ? ar->warnings[ar->warning_count - 1] : "");
    }
    ra_archive_free(ar);
    ra_free(pak);
    compare_loose_in("echoes.pak", "splinter_sway", g_mp, "v2_mp2.anim", g_mp, "v2_mp2.cinf");
    compare_loose_in("echoes.pak", "splinter_long", g_arch, "echoes_long.anim", g_mp, "v2_mp2.cinf");
    compare_loose_in("echoes.pak", "crawler_twist", g_mp, "v0_mp2.anim", g_mp, "v0_mp2.cinf");
}

/* payload i fails with `code`, the field and the offset */
static void payload_fails(ra_archive *ar, size_t i, ra_status code, const char *field, uint64_t offset, const char *msg,
                          const char *what)
{
    const uint8_t *p = NULL;
    size_t pn = 0;
    ra_error e;
    ra_error_clear(&e);
    ra_status st = ra_archive_payload(ar, i, &p, &pn, &e);
    CHECK(st == code && strcmp(e.field, field) == 0 && e.offset == offset && strstr(e.msg, msg),
          "%s: status %d, field %s, offset %llu: %s", what, (int)st, e.field, (unsigned long long)e.offset, e.msg);
}

static void echoes_broken(void)
{
    size_t n = 0;
    ra_error e;
    /* echoes_bad_segment.pak: the ANCS (at 192) has one LZO segment whose length (at 196) says 347 bytes where
     * 346 follow it in the 352-byte entry: the pak is refused (the ANCS is read when it opens) */
    uint8_t *d = fx_slurp(g_arch, "echoes_bad_segment.pak", &n);
    CHECK(res_offset(d, n, ANCS_SPLINTER) == 192 && d[196] == 0x01 && d[197] == 0x5B, "bad_segment layout");
    ra_archive *ar = open_buf(d, n, NULL, &e);
    CHECK(!ar && e.code == RA_ERR_BAD_VALUE && strcmp(e.field, "segment.length") == 0 && e.offset == 196 &&
              strstr(e.msg, "347 bytes (346 left"),
          "bad segment: %d %s at %llu: %s", (int)e.code, e.field, (unsigned long long)e.offset, e.msg);
    ra_archive_free(ar);
    ra_free(d);

    /* echoes_bad_lzo.pak: splinter_sway (at 544; its stream at 550) starts with 4 literals (first byte 17 + 4),
     * then an M2 match whose high distance byte (stream byte 6) is 0xFF: it reaches back >= 2041 bytes after 4 */
    d = fx_slurp(g_arch, "echoes_bad_lzo.pak", &n);
    uint32_t sway = res_offset(d, n, ANIM_SWAY);
    CHECK(sway == 544 && d[550] == 17 + 4 && d[550 + 6] == 0xFF, "bad_lzo layout (%u)", sway);
    ar = open_buf(d, n, NULL, &e);
    CHECK(ar && ar->count == 3, "bad lzo: listed (%s)", e.msg);
    if (ar && ar->count == 3) {
        payload_fails(ar, 0, RA_ERR_BAD_VALUE, "segment", 550, "refers before its start", "bad lzo");
        payload_is(ar, 1, g_arch, "echoes_long.anim");
        payload_is(ar, 2, g_mp, "v0_mp2.anim");
    }
    ra_archive_free(ar);
    ra_document *doc = load(d, n, "echoes_bad_lzo.pak", "animation", "splinter_sway", NULL, NULL, &e);
    CHECK(!doc && e.code == RA_ERR_BAD_VALUE && e.offset == 550, "loading splinter_sway: %s", e.msg);
    ra_document_free(doc);
    doc = load(d, n, "echoes_bad_lzo.pak", "animation", "crawler_twist", NULL, NULL, &e);
    CHECK(doc != NULL, "the other animations still load: %s", e.msg);
    ra_document_free(doc);
    ra_free(d);

    /* echoes_bad_stored.pak: splinter_long (at 832) claims 0x7FE0 bytes; after its first piece (0x4000, LZO)
     * its second segment (length at 832 + 4 + 2 + 7438 = 8276) stores 0x4000 bytes where 0x3FE0 are left */
    d = fx_slurp(g_arch, "echoes_bad_stored.pak", &n);
    uint32_t lng = res_offset(d, n, ANIM_LONG);
    CHECK(lng == 832 && ra_load_u32be(d + lng) == 0x7FE0 && d[8276] == 0xC0 && d[8277] == 0x00,
          "bad_stored layout (%u)", lng);
    ar = open_buf(d, n, NULL, &e);
    CHECK(ar && ar->count == 3 && ar->items[1].size == 0x7FE0, "bad stored: listed (%s)", e.msg);
    if (ar && ar->count == 3) {
        payload_fails(ar, 1, RA_ERR_BAD_VALUE, "segment.length", 8276, "stored segment of 16384 bytes", "bad stored");
        payload_is(ar, 0, g_mp, "v2_mp2.anim");
    }
    ra_archive_free(ar);
    ra_free(d);

    d = fx_slurp(g_arch, "echoes.pak", &n);
    uint8_t *m = malloc(n);
    /* splinter_long's entry ends after its stored segment: the third segment's length is missing
     * (TRUNCATED at 832 + 4 + 2 + 7438 + 2 + 16384 = 24662) */
    memcpy(m, d, n);
    size_t ent = pak_entry(m, n, ANIM_LONG);
    CHECK(ent && ra_load_u32be(m + ent + 16) == 832, "splinter_long at 832");
    const uint32_t cut = 4 + 2 + 7438 + 2 + 16384; /* 23830: the size field of its entry */
    m[ent + 12] = 0, m[ent + 13] = 0, m[ent + 14] = (uint8_t)(cut >> 8), m[ent + 15] = (uint8_t)cut;
    ar = open_buf(m, n, NULL, &e);
    CHECK(ar && ar->count == 3, "cut entry: listed (%s)", e.msg);
    if (ar && ar->count == 3)
        payload_fails(ar, 1, RA_ERR_TRUNCATED, "segment.length", 24662, "segments end after 32768 of 41856",
                      "cut entry");
    ra_archive_free(ar);
    /* not 0xFF after the ANCS's segment (352-byte entry at 192: 4 + 2 + 324 bytes, fill from 522): read, with a
     * warning */
    memcpy(m, d, n);
    CHECK(m[522] == 0xFF && m[521] != 0xFF, "the ANCS's fill starts at 522");
    m[522] = 0;
    ar = open_buf(m, n, NULL, &e);
    CHECK(ar && ar->count == 3, "fill: %s", e.msg);
    if (ar && ar->count == 3) {
        payload_is(ar, 0, g_mp, "v2_mp2.anim");
        CHECK(ar->warning_count == 1 && strstr(ar->warnings[0], "ANCS 8A3F0001: 22 bytes after its LZO segments"),
              "fill warning: %s", ar->warning_count ? ar->warnings[0] : "none");
    }
    ra_archive_free(ar);
    free(m);
    ra_free(d);
}

/* splinter_long (at 832) under damage: every value of each byte of its size word and of its three segment
 * lengths (at 836, 8276, 24662), and flips across its streams.  The payload is the size the word says or an
 * error naming the resource or a segment; never a crash (the sanitizer builds run this too). */
static void echoes_damaged_segments(void)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, "echoes.pak", &n);
    uint8_t *m = malloc(n);
    const size_t bytes[] = {832, 833, 834, 835, 836, 837, 8276, 8277, 24662, 24663};
    size_t runs = 0, ok = 0, bad = 0;
    for (size_t k = 0; k < sizeof bytes / sizeof *bytes + 27008 / 61; k++) {
        for (int v = 0; v < 256; v++) {
            memcpy(m, d, n);
            if (k < sizeof bytes / sizeof *bytes) m[bytes[k]] = (uint8_t)v;
            else if (v == 0) m[838 + 61 * (k - sizeof bytes / sizeof *bytes)] ^= 0x5A;
            else break;
            ra_error e;
            ra_archive *ar = open_buf(m, n, NULL, &e);
            const uint8_t *p = NULL;
            size_t pn = 0;
            runs++;
            if (!ar || ar->count != 3) {
                bad++;
                CHECK(0, "damage %zu/%d: the archive itself is refused (%s)", k, v, e.msg);
            } else if (ra_archive_payload(ar, 1, &p, &pn, &e) == RA_OK) {
                ok++;
                CHECK(pn == ra_load_u32be(m + 832), "damage %zu/%d: %zu bytes, the size word says %u", k, v, pn,
                      ra_load_u32be(m + 832));
            } else {
                CHECK(e.msg[0] && (strncmp(e.field, "segment", 7) == 0 || strncmp(e.field, "resource", 8) == 0),
                      "damage %zu/%d: an error on the resource or a segment (%s: %s)", k, v, e.field, e.msg);
            }
            ra_archive_free(ar);
        }
    }
    CHECK(runs > 2900 && ok > 0 && bad == 0, "damaged segments: %zu runs, %zu decoded", runs, ok);
    free(m);
    ra_free(d);
}

/* our writers, read back */
static void writers(void)
{
    size_t n1, n2, n3;
    uint8_t *a = fx_slurp(g_lego, "minimal.ani", &n1), *b = fx_slurp(g_lego, "hierarchy.ani", &n2),
            *c = fx_slurp(g_lego, "camera.ani", &n3);
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
    /* a zlib stream whose header names an 8 KiB window (first byte 0x58; a packer other than Retro's
     * may write one): minimal.ani (72 bytes) reaches back less than that, so the same stream with its
     * header's window and check bits rewritten inflates to the same bytes */
    size_t e0 = pak_entry(w.data, w.size, 0x10);
    uint8_t *z = e0 ? w.data + ra_load_u32be(w.data + e0 + 16) + 4 : NULL;
    CHECK(z && z[0] == 0x78 && n1 < 8192, "written pak: resource 0x10 is a zlib stream (%02x)", z ? z[0] : 0);
    if (z) {
        z[0] = 0x58;
        z[1] = (uint8_t)(z[1] & 0xE0);
        z[1] = (uint8_t)(z[1] + (31 - (z[0] * 256u + z[1]) % 31) % 31);
        ar = open_buf(w.data, w.size, NULL, &e);
        const uint8_t *p;
        size_t pn;
        CHECK(ar && ar->count == 2 && ra_archive_payload(ar, 0, &p, &pn, &e) == RA_OK && pn == n1 &&
                  memcmp(p, a, n1) == 0,
              "a zlib stream with an 8 KiB window: inflated (%s)", e.msg);
        ra_archive_free(ar);
    }
    ra_writer_free(&w);
    ra_free(a);
    ra_free(b);
    ra_free(c);
}

/* A pak of thousands of resources (its table is read through a hash since a
 * linear search per entry made it quadratic): the first copy of an asset
 * stored twice counts, an id shared by two types is two resources, and the
 * ANIMs no ANCS names are listed in table order, named by the first name
 * the named-resource table gives their (type, id): the even ANIMs' own
 * before their copies', the odd ones' copies', and not a CINF's of the
 * same id. */
static void many_resources(void)
{
    enum {
        TXTRS = 3000,
        ANIMS = 50
    };
    size_t n = TXTRS + 2 * ANIMS + 2;
    ra_pak_resource *r = calloc(n, sizeof *r);
    uint8_t *bytes = malloc(ANIMS * 16 + 16 + 16);
    char own[ANIMS][16], copy[ANIMS][16];
    size_t k = 0;
    for (uint32_t i = 0; i < ANIMS; i++) {
        memset(bytes + 16 * i, (int)i, 16);
        snprintf(own[i], sizeof own[i], "own_%u", i);
        snprintf(copy[i], sizeof copy[i], "copy_%u", i);
        r[k++] = (ra_pak_resource){{'A', 'N', 'I', 'M'}, 0x9000 + i, bytes + 16 * i, 16, false, i % 2 ? NULL : own[i]};
    }
    memset(bytes + 16 * ANIMS, 0xAA, 16);
    memset(bytes + 16 * ANIMS + 16, 0xBB, 16);
    for (uint32_t i = 0; i < TXTRS; i++) r[k++] = (ra_pak_resource){{'T', 'X', 'T', 'R'}, i, bytes, 16, false, NULL};
    /* an id shared with an odd ANIM, its name before that ANIM's */
    r[k++] = (ra_pak_resource){{'C', 'I', 'N', 'F'}, 0x9001, bytes + 16 * ANIMS + 16, 16, false, "a skeleton"};
    for (uint32_t i = 0; i < ANIMS; i++) /* every ANIM again, other bytes: skipped */
        r[k++] = (ra_pak_resource){{'A', 'N', 'I', 'M'}, 0x9000 + ANIMS - 1 - i, bytes + 16 * ANIMS, 16, false,
                                   copy[ANIMS - 1 - i]};
    r[k++] = (ra_pak_resource){{'T', 'X', 'T', 'R'}, 7, bytes + 16 * ANIMS, 16, false, NULL};
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(ra_pak_write(r, k, &w, &e) == RA_OK, "pak of %zu resources written (%s)", k, e.msg);
    ra_archive *ar = open_buf(w.data, w.size, NULL, &e);
    CHECK(ar && ar->count == ANIMS, "%d ANIMs listed, their copies not (%zu; %s)", ANIMS, ar ? ar->count : 0, e.msg);
    CHECK(ar && meta_int_is(&ar->meta, "pak.resources", TXTRS + ANIMS + 1) &&
              meta_int_is(&ar->meta, "pak.anims", ANIMS),
          "%d resources (the CINF sharing an ANIM's id is one), %d ANIMs", TXTRS + ANIMS + 1, ANIMS);
    for (size_t i = 0; ar && i < ar->count && i < ANIMS; i++) {
        const uint8_t *p = NULL;
        size_t pn = 0;
        /* stored: padded with 0xFF to 32 bytes */
        bool first =
            ra_archive_payload(ar, i, &p, &pn, &e) == RA_OK && pn == 32 && p[0] == i && p[15] == i && p[16] == 0xFF;
        CHECK(ar->items[i].id == 0x9000 + i && first, "item %zu: ANIM %08X in table order, its first copy (%u)", i,
              0x9000 + (unsigned)i, p ? p[0] : 0);
        const char *want = i % 2 ? copy[i] : own[i];
        CHECK(!strcmp(ar->items[i].name, want), "item %zu: named %s (%s)", i, want, ar->items[i].name);
    }
    ra_archive_free(ar);
    ra_writer_free(&w);
    free(bytes);
    free(r);
}

/* a broken archive gives an error with the format, never a crash */
static void sweep(const char *file)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_arch, file, &n);
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
    uint8_t *d = fx_slurp(g_arch, "several.pak", &n);
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
    d = fx_slurp(g_arch, "tiny.si", &n);
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
    uint8_t *d = fx_slurp(g_arch, "several.si", &n);
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
    uint8_t *d = fx_slurp(g_arch, "several.si", &n);
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
    echoes();
    writers();
    broken();
    echoes_broken();
    echoes_damaged_segments();
    interrupted_split();
    many_resources();
    ids_are_decimal_or_hex();
    sweep("tiny.si");
    sweep("several.si");
    sweep("tiny.pak");
    sweep("several.pak");
    sweep("echoes.pak");
    sweep("echoes_bad_segment.pak");
    sweep("echoes_bad_lzo.pak");
    sweep("echoes_bad_stored.pak");
    return ra_test_finish("archive");
}
