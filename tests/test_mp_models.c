/* Metroid Prime characters: the fixtures of test_models/metroid_prime made by
 * make_models.py (TXTR per GX format, a skinned CMDL + CSKR + CINF moved by an
 * ANIM, the same in a pak behind an ANCS of two characters, a Prime 2 model,
 * broken files), checked against their descriptions' expect-* lines: meshes,
 * triangle corners (1e-5), materials, textures, exact texels, and the world
 * positions of skinned corners at several times as a consumer skins them
 * (1e-4); broken files refused at the expected byte naming format and field. */
#include <string.h>

#include "ra_fixture.h"
#include "retroanim/metroid_anim.h"

#define TOL 1e-4
#define GEO_TOL 1e-5
static const char *g_dir;
static long g_checks;

/* ---- geometry: expect-mesh, expect-triangle, expect-material, expect-texture, expect-texel ---------------- */
#define EXPECT_ALPHA_CUTOFF (64.0 / 255.0) /* GX alpha compare at 64 */
#include "expect_lines.h"

static FILE *open_txt(const char *stem)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s.txt", g_dir, stem);
    FILE *f = fopen(p, "r");
    CHECK(f != NULL, "no description %s", p);
    return f;
}

/* Every model expect-* line of DIR/<txt>.txt against doc; with bind_only, only the t=0 skinned lines. */
static void check_model(const ra_document *doc, const char *txt, const char *what, bool bind_only, bool poses)
{
    FILE *f = open_txt(txt);
    if (!f) return;
    const ra_scene *s = &doc->scene;
    char line[4096];
    long n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!strncmp(line, "expect-meshes ", 14)) check_count(line + 14, s->mesh_count, "meshes", what), n++;
        else if (!strncmp(line, "expect-materials ", 17))
            check_count(line + 17, s->material_count, "materials", what), n++;
        else if (!strncmp(line, "expect-textures ", 16))
            check_count(line + 16, s->texture_count, "textures", what), n++;
        else if (!strncmp(line, "expect-mesh ", 12)) check_mesh_line(s, line, what), n++;
        else if (!strncmp(line, "expect-triangle ", 16)) check_triangle_line(s, line, what), n++;
        else if (!strncmp(line, "expect-material ", 16)) check_material_line(s, line, what), n++;
        else if (!strncmp(line, "expect-texture ", 15)) check_texture_line(s, line, what), n++;
        else if (!strncmp(line, "expect-texel ", 13)) check_texel_line(s, line, what), n++;
        else if (!strncmp(line, "expect-skin ", 12)) check_skin_line(s, line, what), n++;
        else if (!strncmp(line, "expect-skinned ", 15) && (!bind_only || strstr(line, " t=0 ")))
            check_skinned_line(s, line, what), n++;
        else if (poses && fx_check_pose_line(doc, line, what, TOL)) n++;
    }
    fclose(f);
    CHECK(n >= 20, "%s: only %ld model expectations checked", what, n);
    g_checks += n;
}

static ra_document *load_path(const char *name, const ra_options *o, ra_error *e)
{
    size_t size;
    uint8_t *d = fx_slurp(g_dir, name, &size);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    ra_document *doc = NULL;
    ra_error_clear(e);
    ra_document_load(d, size, path, o, &doc, e);
    ra_free(d);
    return doc;
}

/* The expect-error-offset of DIR/<stem>.txt, or -1. */
static long error_offset(const char *stem)
{
    FILE *f = open_txt(stem);
    long off = -1;
    char line[512];
    while (f && fgets(line, sizeof line, f)) sscanf(line, "expect-error-offset %ld", &off);
    if (f) fclose(f);
    return off;
}

static void check_refusal(ra_status st, const ra_error *e, long off, const char *format, const char *what)
{
    char msg[700];
    ra_error_format(e, msg, sizeof msg);
    CHECK(st != RA_OK, "%s must be refused", what);
    CHECK(off >= 0 && e->offset == (uint64_t)off, "%s: refused at byte %llu, expected %ld (%s)", what,
          (unsigned long long)e->offset, off, msg);
    CHECK(e->format && !strcmp(e->format, format) && e->field[0], "%s: error names %s and a field: %s", what, format,
          msg);
    g_checks++;
}

/* ---- textures: every TXTR decoded alone against its texels ---------------------------------------------------- */
static void run_txtr(const char *name)
{
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)(strrchr(name, '.') - name), name);
    size_t size;
    uint8_t *d = fx_slurp(g_dir, name, &size);
    ra_arena *ar = ra_arena_create(0);
    mp_txtr t;
    ra_error e;
    ra_error_clear(&e);
    ra_status st = mp_txtr_read(d, size, ar, &t, &e);
    long off = error_offset(stem);
    if (off >= 0) {
        check_refusal(st, &e, off, "metroid_txtr", name);
    } else {
        CHECK(st == RA_OK, "%s: %s", name, e.msg);
        FILE *f = open_txt(stem);
        char line[512];
        long n = 0;
        while (st == RA_OK && f && fgets(line, sizeof line, f)) {
            if (strncmp(line, "expect-texel ", 13)) continue;
            unsigned x, y, r, g, b, a;
            char tex[64];
            if (sscanf(line, "expect-texel texture=%63s x=%u y=%u rgba=%u,%u,%u,%u", tex, &x, &y, &r, &g, &b, &a) !=
                    7 ||
                x >= t.width || y >= t.height) {
                CHECK(0, "%s: bad line %s", name, line);
                continue;
            }
            const uint8_t *p = t.rgba + 4 * ((size_t)y * t.width + x);
            CHECK(p[0] == r && p[1] == g && p[2] == b && p[3] == a,
                  "%s: texel %u,%u is %u,%u,%u,%u, expected %u,%u,%u,%u", name, x, y, p[0], p[1], p[2], p[3], r, g, b,
                  a);
            n++;
        }
        if (f) fclose(f);
        CHECK(n == (long)t.width * t.height, "%s: %ld texels expected, the texture has %u", name, n,
              t.width * t.height);
        g_checks += n;
    }
    ra_arena_destroy(ar);
    ra_free(d);
}

/* Every truncation and every byte set to 0x00, 0xFF or +1: the reader succeeds or fails with a
 * code, never reads out of bounds (the sanitizer builds run this too).  For the readers no
 * registered format walks alone (TXTR, CSKR). */
static void sweep(const char *name, bool skin)
{
    size_t size;
    uint8_t *d = fx_slurp(g_dir, name, &size);
    long runs = 0, ok = 0;
    for (size_t k = 0; k <= 3 * size + size; k++) {
        size_t n = size;
        uint8_t *b = malloc(size ? size : 1);
        memcpy(b, d, size);
        if (k < size) n = k; /* a truncation */
        else {
            size_t at = (k - size) / 3;
            int how = (int)((k - size) % 3);
            if (at >= size) {
                free(b);
                break;
            }
            b[at] = how == 0 ? 0 : how == 1 ? 0xFF : (uint8_t)(b[at] + 1);
        }
        uint8_t *copy = malloc(n ? n : 1); /* exactly n bytes, so ASan sees any overrun */
        memcpy(copy, b, n);
        ra_arena *ar = ra_arena_create(1 << 22);
        ra_error e;
        ra_error_clear(&e);
        mp_txtr t;
        mp_cskr c;
        ra_status st = skin ? mp_cskr_read(copy, n, ar, &c, &e) : mp_txtr_read(copy, n, ar, &t, &e);
        CHECK(st == RA_OK || (e.code == st && e.format), "%s: a failure without an error", name);
        ok += st == RA_OK;
        runs++;
        ra_arena_destroy(ar);
        free(copy);
        free(b);
    }
    ra_free(d);
    g_checks += runs;
    (void)ok;
}

static bool is_txtr(const char *n)
{
    const char *dot = strrchr(n, '.');
    return dot && !strcmp(dot, ".TXTR");
}

/* ---- the character loaded every way ------------------------------------------------------------------------ */
static void characters(void)
{
    ra_error e;
    ra_options o;
    ra_options_init(&o);
    ra_document *doc = load_path("hero.anim", &o, &e);
    CHECK(doc != NULL, "hero.anim: %s", e.msg);
    if (doc) {
        check_model(doc, "hero", "hero.anim", false, true);
        CHECK(doc->scene.skin_count == 1 && doc->scene.mesh_count == 3, "hero.anim: skinned meshes");
        ra_document_free(doc);
    }
    doc = load_path("hero.cmdl", &o, &e);
    CHECK(doc != NULL, "hero.cmdl: %s", e.msg);
    if (doc) {
        check_model(doc, "hero", "hero.cmdl", true, false);
        ra_document_free(doc);
    }
    doc = load_path("hero.cinf", &o, &e); /* a skeleton alone finds its model beside it */
    CHECK(doc != NULL, "hero.cinf: %s", e.msg);
    if (doc) {
        check_model(doc, "hero", "hero.cinf", true, false);
        ra_document_free(doc);
    }
    doc = load_path("hero_mp2.cmdl", &o, &e);
    CHECK(doc != NULL, "hero_mp2.cmdl: %s", e.msg);
    if (doc) {
        check_model(doc, "hero_mp2", "hero_mp2.cmdl", true, false);
        const ra_meta *m = ra_meta_get(&doc->scene.meta, "metroid.layout");
        CHECK(m && !strcmp(m->u.s, "cmdl-mp2"), "hero_mp2.cmdl: layout cmdl-mp2");
        ra_document_free(doc);
    }
    doc = load_path("character.pak", &o, &e);
    CHECK(doc != NULL, "character.pak: %s", e.msg);
    if (doc) {
        check_model(doc, "character", "character.pak", false, true);
        const ra_meta *m = ra_meta_get(&doc->scene.meta, "metroid.character");
        CHECK(m && !strcmp(m->u.s, "Hero"), "character.pak: the first character");
        ra_document_free(doc);
    }
    doc = load_path("character_mp2.pak", &o, &e);
    CHECK(doc != NULL, "character_mp2.pak: %s", e.msg);
    if (doc) {
        check_model(doc, "character_mp2", "character_mp2.pak", false, true);
        ra_document_free(doc);
    }
    /* character=Drone: its own model on the same skeleton */
    ra_options_add(&o, "character", "Drone");
    doc = load_path("character.pak", &o, &e);
    CHECK(doc != NULL, "character.pak character=Drone: %s", e.msg);
    if (doc) {
        const ra_scene *s = &doc->scene;
        CHECK(s->mesh_count == 1 && !strcmp(s->meshes[0].name, "Drone_0") && s->meshes[0].triangle_count == 1,
              "Drone: one mesh of one triangle");
        FILE *f = open_txt("character");
        char line[1024];
        while (f && fgets(line, sizeof line, f) && s->mesh_count == 1) {
            double t, p[9];
            if (sscanf(line, "expect-drone t=%lf p=%lf,%lf,%lf;%lf,%lf,%lf;%lf,%lf,%lf", &t, &p[0], &p[1], &p[2], &p[3],
                       &p[4], &p[5], &p[6], &p[7], &p[8]) != 10)
                continue;
            for (int c = 0; c < 3; c++) {
                char l2[512];
                snprintf(l2, sizeof l2, "expect-skinned mesh=Drone_0 tri=0 corner=%d t=%g p=%.9g,%.9g,%.9g", c, t,
                         p[3 * c], p[3 * c + 1], p[3 * c + 2]);
                check_skinned_line(s, l2, "character.pak Drone");
                g_checks++;
            }
        }
        if (f) fclose(f);
        ra_document_free(doc);
    }
    ra_options_add(&o, "character", "Nobody");
    doc = load_path("character.pak", &o, &e);
    CHECK(!doc && e.code == RA_ERR_USAGE && strstr(e.msg, "(character)"), "character=Nobody is refused: %s", e.msg);
    ra_document_free(doc);
    /* loose files named by options, from a path with no siblings */
    char cinf[1024], cmdl[1024], cskr[1024];
    snprintf(cinf, sizeof cinf, "%s/hero.cinf", g_dir);
    snprintf(cmdl, sizeof cmdl, "%s/hero.cmdl", g_dir);
    snprintf(cskr, sizeof cskr, "%s/hero.cskr", g_dir);
    ra_options_init(&o);
    ra_options_add(&o, "cinf", cinf);
    ra_options_add(&o, "cmdl", cmdl);
    ra_options_add(&o, "cskr", cskr);
    size_t size;
    uint8_t *d = fx_slurp(g_dir, "hero.anim", &size);
    ra_error_clear(&e);
    doc = NULL;
    CHECK(ra_document_load(d, size, "/nonexistent/walk.anim", &o, &doc, &e) == RA_OK, "options: %s", e.msg);
    if (doc) {
        check_model(doc, "hero", "hero.anim with cmdl=, cskr=, cinf=", false, true);
        ra_document_free(doc);
    }
    /* cmdl=none: the animation alone */
    ra_options_init(&o);
    ra_options_add(&o, "cmdl", "none");
    doc = NULL;
    snprintf(cmdl, sizeof cmdl, "%s/hero.anim", g_dir);
    CHECK(ra_document_load(d, size, cmdl, &o, &doc, &e) == RA_OK && doc && doc->scene.mesh_count == 0,
          "cmdl=none: no model");
    ra_document_free(doc);
    ra_free(d);
    /* broken files */
    static const char *const bad[] = {"bad_section", "bad_dl_overrun", "bad_index", "nan_used"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char n[64];
        snprintf(n, sizeof n, "%s.cmdl", bad[i]);
        ra_options_init(&o);
        doc = load_path(n, &o, &e);
        check_refusal(doc ? RA_OK : e.code, &e, error_offset(bad[i]), "metroid_cmdl", n);
        ra_document_free(doc);
    }
    d = fx_slurp(g_dir, "bad_skin_count.cskr", &size);
    ra_arena *ar = ra_arena_create(0);
    mp_cskr k;
    ra_error_clear(&e);
    check_refusal(mp_cskr_read(d, size, ar, &k, &e), &e, error_offset("bad_skin_count"), "metroid_cskr",
                  "bad_skin_count.cskr");
    ra_arena_destroy(ar);
    ra_free(d);
}

/* ---- what the loaders tolerate: each DIR/<stem>.txt names the file to load ("load NAME") and its
 * expectations: model lines as above, expect-animations N, expect-unskinned, expect-meta KEY=VALUE,
 * expect-warning TEXT / expect-no-warning TEXT (a substring of some / of no warning) ---------------------- */
static bool has_warning(const ra_scene *s, const char *text)
{
    for (size_t i = 0; i < s->warning_count; i++)
        if (s->warnings[i].msg && strstr(s->warnings[i].msg, text)) return true;
    return false;
}

static void tolerated(const char *stem)
{
    FILE *f = open_txt(stem);
    if (!f) return;
    char line[4096], file[256] = "";
    long n = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "load %255s", file) == 1) break;
    CHECK(file[0], "%s.txt: no load line", stem);
    ra_options o;
    ra_options_init(&o);
    ra_error e;
    ra_document *doc = file[0] ? load_path(file, &o, &e) : NULL;
    CHECK(doc != NULL, "%s: %s", file, e.msg);
    while (doc && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        const ra_scene *s = &doc->scene;
        if (!strncmp(line, "expect-meshes ", 14)) check_count(line + 14, s->mesh_count, "meshes", file), n++;
        else if (!strncmp(line, "expect-materials ", 17))
            check_count(line + 17, s->material_count, "materials", file), n++;
        else if (!strncmp(line, "expect-textures ", 16))
            check_count(line + 16, s->texture_count, "textures", file), n++;
        else if (!strncmp(line, "expect-animations ", 18))
            check_count(line + 18, s->animation_count, "animations", file), n++;
        else if (!strncmp(line, "expect-mesh ", 12)) check_mesh_line(s, line, file), n++;
        else if (!strncmp(line, "expect-triangle ", 16)) check_triangle_line(s, line, file), n++;
        else if (!strncmp(line, "expect-material ", 16)) check_material_line(s, line, file), n++;
        else if (!strncmp(line, "expect-skin ", 12)) check_skin_line(s, line, file), n++;
        else if (!strncmp(line, "expect-skinned ", 15)) check_skinned_line(s, line, file), n++;
        else if (!strncmp(line, "expect-warning ", 15)) {
            CHECK(has_warning(s, line + 15), "%s: no warning containing '%s'", file, line + 15);
            n++;
        } else if (!strncmp(line, "expect-no-warning ", 18)) {
            CHECK(!has_warning(s, line + 18), "%s: a warning containing '%s'", file, line + 18);
            n++;
        } else if (!strncmp(line, "expect-unskinned", 16)) {
            for (size_t i = 0; i < s->mesh_count; i++)
                CHECK(s->meshes[i].skin < 0, "%s: mesh %s is skinned", file, s->meshes[i].name);
            n++;
        } else if (!strncmp(line, "expect-meta ", 12)) {
            char *eq = strchr(line + 12, '=');
            if (!eq) continue;
            *eq = 0;
            const ra_meta *m = ra_meta_get(&s->meta, line + 12);
            CHECK(m && m->u.s && !strcmp(m->u.s, eq + 1), "%s: %s is %s, expected %s", file, line + 12,
                  m && m->u.s ? m->u.s : "(none)", eq + 1);
            n++;
        }
    }
    if (f) fclose(f);
    CHECK(!doc || n >= 3, "%s: only %ld expectations checked", stem, n);
    g_checks += n;
    ra_document_free(doc);
}

static void tolerances(void)
{
    static const char *const stems[] = {"pak_bad_cmdl", "pak_bad_skin",      "pak_no_parts",  "skin_missing_bone",
                                        "lightmap",     "short_uv_fallback", "dl_long",       "dl_cut",
                                        "lenient",      "wound_ok",          "wound_inverted"};
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) tolerated(stems[i]);
    /* the hero model is wound as its normals say */
    ra_options o;
    ra_options_init(&o);
    ra_error e;
    ra_document *doc = load_path("hero.cmdl", &o, &e);
    CHECK(doc && !has_warning(&doc->scene, "inside out"), "hero.cmdl: no winding warning");
    ra_document_free(doc);
    /* an explicit cmdl= naming a file that cannot be read stays an error (like cinf=) */
    char path[1024];
    snprintf(path, sizeof path, "%s/bad_index.cmdl", g_dir);
    ra_options_add(&o, "cmdl", path);
    doc = load_path("hero.anim", &o, &e);
    CHECK(!doc && e.code == RA_ERR_BAD_VALUE && strstr(e.msg, "bad_index.cmdl"), "cmdl=bad_index.cmdl is refused: %s",
          e.msg);
    ra_document_free(doc);
    g_checks += 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_mp_models FIXTURE_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    int textures = fx_for_each_file(g_dir, is_txtr, run_txtr);
    static const char *const swept[] = {"10000004.TXTR", "10000005.TXTR", "1000000A.TXTR", "10000009.TXTR",
                                        "10000001.TXTR"};
    for (size_t i = 0; i < sizeof swept / sizeof swept[0]; i++) sweep(swept[i], false);
    sweep("hero.cskr", true);
    sweep("hero_mp2.cskr", true);
    CHECK(textures >= 13, "expected the TXTR fixtures, found %d", textures);
    characters();
    tolerances();
    printf("textures: %d, expectations checked: %ld\n", textures, g_checks);
    return ra_test_finish("test_mp_models");
}
