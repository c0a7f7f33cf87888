/* LEGO Island WORLD.WDB: the hand-made fixtures of test_models/lego_island
 * (make_wdb.py) against their hand-derived expectations, and the .ani
 * fixtures bound to them (expect-option wdb=...).
 *
 *   expect-option KEY=VALUE          load option (a wdb path is relative to the fixture folder)
 *   expect-meshes N
 *   expect-mesh name= node= vertices= triangles= material= uv=0|1 normals=0|1 colors=0|1
 *   expect-world mesh=M [t=S] p=x,y,z;...   every vertex of M at S seconds in world space, by the
 *                                    reference evaluator (pose) and by keyframe playback
 *   expect-indices mesh=M i=a,b,c;...
 *   expect-mesh-material mesh=M name=MAT
 *   expect-mesh-color mesh=M color=r,g,b,a   its material's base colour
 *   expect-mesh-uv mesh=M uv=u,v;...
 *   expect-warning TEXT              some warning contains TEXT (to the end of the line)
 *   expect-node-meta node=N key=K    node N has metadata K
 *   expect-find-model prefer=WORLD|- name=NAME index=I   lego_wdb_find_model on the fixture's bytes
 *   expect-material, expect-texture, expect-texel   as the NIFF fixtures
 * plus the shared expect-format / expect-nodes / expect-duration and
 * expect-error-offset. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ra_fixture.h"
#include "retroanim/lego_wdb.h"
#include "retroanim/ra_archive_internal.h"

#define TOL 1e-4
#define GEO_TOL 1e-5
#include "expect_lines.h" /* find_mesh, find_texture, parse_numbers, field_long */

static char g_dir[512];
static long g_checked;
static const uint8_t *g_data; /* the fixture's bytes (expect-find-model) */
static size_t g_size;

static const ra_mesh *line_mesh(const ra_scene *s, const char *line, const char *what)
{
    char name[256];
    if (!fx_field(line, "mesh", name, sizeof name) && !fx_field(line, "name", name, sizeof name)) {
        CHECK(0, "%s: malformed line %s", what, line);
        return NULL;
    }
    const ra_mesh *m = find_mesh(s, name);
    CHECK(m != NULL, "%s: no mesh named %s", what, name);
    return m;
}

/* every vertex in world space at t: by pose and by the scene's keys */
static void check_world(const ra_document *doc, const char *line, const char *what)
{
    const ra_scene *s = &doc->scene;
    const ra_mesh *m = line_mesh(s, line, what);
    char v[4096], tv[64] = "0";
    fx_field(line, "t", tv, sizeof tv);
    double t = atof(tv), want[3 * 64];
    if (!m || !fx_field(line, "p", v, sizeof v)) return;
    int n = parse_numbers(v, want, 3 * 64);
    CHECK(n == 3 * (int)m->vertex_count, "%s: mesh %s has %u vertices, the line gives %d numbers", what, m->name,
          m->vertex_count, n);
    if (n != 3 * (int)m->vertex_count) return;
    ra_mat4 *pose = malloc(s->node_count * sizeof *pose), *play = malloc(s->node_count * sizeof *play);
    ra_error e;
    ra_error_clear(&e);
    CHECK(ra_document_pose(doc, 0, t, pose, &e) == RA_OK, "%s: pose: %s", what, e.msg);
    ra_scene_sample_world(s, 0, t, play);
    double worst = 0;
    for (uint32_t i = 0; i < m->vertex_count; i++) {
        ra_vec3 p = ra_v3(m->positions[3 * i], m->positions[3 * i + 1], m->positions[3 * i + 2]);
        ra_vec3 a = ra_m4_apply_point(&pose[m->node], p), b = ra_m4_apply_point(&play[m->node], p);
        double d[6] = {a.x - want[3 * i], a.y - want[3 * i + 1], a.z - want[3 * i + 2],
                       b.x - want[3 * i], b.y - want[3 * i + 1], b.z - want[3 * i + 2]};
        for (int k = 0; k < 6; k++) worst = fmax(worst, fabs(d[k]));
    }
    CHECK(worst <= TOL, "%s: mesh %s at t=%g: a vertex is off by %g", what, m->name, t, worst);
    g_checked += m->vertex_count;
    free(pose);
    free(play);
}

static void check_line(const ra_document *doc, const char *line, const char *what)
{
    const ra_scene *s = &doc->scene;
    char v[1024];
    double d[64];
    long n;
    if (fx_check_common_line(doc, line, what)) return;
    if (!strncmp(line, "expect-warning ", 15)) {
        bool found = false;
        for (size_t i = 0; i < s->warning_count && !found; i++) found = strstr(s->warnings[i].msg, line + 15) != NULL;
        CHECK(found, "%s: no warning contains '%s'", what, line + 15);
    } else if (!strncmp(line, "expect-node-meta ", 17)) {
        char node[256], key[128];
        const ra_node *nd = NULL;
        CHECK(fx_field(line, "node", node, sizeof node) && fx_field(line, "key", key, sizeof key), "%s: %s", what,
              line);
        for (size_t i = 0; i < s->node_count; i++)
            if (!strcmp(s->nodes[i].name, node)) nd = &s->nodes[i];
        CHECK(nd && ra_meta_get(&nd->meta, key), "%s: node %s has no %s", what, node, key);
    } else if (!strncmp(line, "expect-find-model ", 18)) {
        char prefer[64], name[256];
        long want = field_long(line, "index");
        CHECK(fx_field(line, "prefer", prefer, sizeof prefer) && fx_field(line, "name", name, sizeof name) && want >= 0,
              "%s: %s", what, line);
        ra_arena *ar = ra_arena_create(0);
        lego_wdb_set *w = NULL;
        ra_error e;
        ra_error_clear(&e);
        CHECK(ar && lego_wdb_open(g_data, g_size, ar, strcmp(prefer, "-") ? prefer : NULL, NULL, &w, &e) == RA_OK,
              "%s: open: %s", what, e.msg);
        if (w) {
            int64_t got = lego_wdb_find_model(w, name);
            CHECK(got == want, "%s: model %s preferring %s: %lld, expected %ld", what, name, prefer, (long long)got,
                  want);
            lego_wdb_close(w);
        }
        ra_arena_destroy(ar);
    } else if (sscanf(line, "expect-meshes %ld", &n) == 1) {
        CHECK((long)s->mesh_count == n, "%s: %zu meshes, expected %ld", what, s->mesh_count, n);
    } else if (!strncmp(line, "expect-mesh ", 12)) {
        const ra_mesh *m = line_mesh(s, line, what);
        if (!m) return;
        CHECK(fx_field(line, "node", v, sizeof v) && !strcmp(s->nodes[m->node].name, v), "%s: mesh %s on node %s", what,
              m->name, s->nodes[m->node].name);
        CHECK(field_long(line, "vertices") == (long)m->vertex_count, "%s: mesh %s: %u vertices", what, m->name,
              m->vertex_count);
        CHECK(field_long(line, "triangles") == (long)m->triangle_count, "%s: mesh %s: %zu triangles", what, m->name,
              m->triangle_count);
        CHECK(fx_field(line, "material", v, sizeof v) && m->material >= 0 && !strcmp(s->materials[m->material].name, v),
              "%s: mesh %s: material %s", what, m->name, m->material >= 0 ? s->materials[m->material].name : "-");
        CHECK(field_long(line, "uv") == (m->uvs != NULL), "%s: mesh %s: uvs", what, m->name);
        CHECK(field_long(line, "normals") == (m->normals != NULL), "%s: mesh %s: normals", what, m->name);
        CHECK(field_long(line, "colors") == (m->colors != NULL), "%s: mesh %s: colours", what, m->name);
    } else if (!strncmp(line, "expect-world ", 13)) {
        check_world(doc, line, what);
    } else if (!strncmp(line, "expect-indices ", 15)) {
        const ra_mesh *m = line_mesh(s, line, what);
        if (!m || !fx_field(line, "i", v, sizeof v)) return;
        int k = parse_numbers(v, d, 64);
        CHECK(k == 3 * (int)m->triangle_count, "%s: mesh %s: %zu triangles", what, m->name, m->triangle_count);
        for (int i = 0; k == 3 * (int)m->triangle_count && i < k; i++)
            CHECK(m->indices[i] == (uint32_t)d[i], "%s: mesh %s: index %d is %u, expected %g", what, m->name, i,
                  m->indices[i], d[i]);
    } else if (!strncmp(line, "expect-mesh-material ", 21)) {
        const ra_mesh *m = line_mesh(s, line, what);
        if (!m) return;
        CHECK(fx_field(line, "name", v, sizeof v) && m->material >= 0 && !strcmp(s->materials[m->material].name, v),
              "%s: mesh %s: material %s", what, m->name, m->material >= 0 ? s->materials[m->material].name : "-");
    } else if (!strncmp(line, "expect-mesh-color ", 18)) {
        const ra_mesh *m = line_mesh(s, line, what);
        if (!m || !fx_field(line, "color", v, sizeof v) || parse_numbers(v, d, 4) != 4 || m->material < 0) {
            CHECK(0, "%s: %s", what, line);
            return;
        }
        for (int i = 0; i < 4; i++) CHECK_NEAR(s->materials[m->material].base_color[i], d[i], 1e-5, m->name);
    } else if (!strncmp(line, "expect-mesh-uv ", 15)) {
        const ra_mesh *m = line_mesh(s, line, what);
        if (!m || !fx_field(line, "uv", v, sizeof v)) return;
        int k = parse_numbers(v, d, 64);
        CHECK(m->uvs && k == 2 * (int)m->vertex_count, "%s: mesh %s: uvs", what, m->name);
        for (int i = 0; m->uvs && k == 2 * (int)m->vertex_count && i < k; i++)
            CHECK_NEAR(m->uvs[i], d[i], 1e-6, m->name);
    } else if (!strncmp(line, "expect-material ", 16)) {
        char name[256];
        fx_field(line, "name", name, sizeof name);
        const ra_material *mt = NULL;
        for (size_t i = 0; i < s->material_count; i++)
            if (!strcmp(s->materials[i].name, name)) mt = &s->materials[i];
        CHECK(mt != NULL, "%s: no material %s", what, name);
        if (!mt) return;
        if (fx_field(line, "color", v, sizeof v) && parse_numbers(v, d, 4) == 4)
            for (int i = 0; i < 4; i++) CHECK_NEAR(mt->base_color[i], d[i], 1e-5, name);
        CHECK(fx_field(line, "texture", v, sizeof v) &&
                  (!strcmp(v, "-") ? mt->texture < 0 : mt->texture >= 0 && !strcmp(s->textures[mt->texture].name, v)),
              "%s: material %s: texture", what, name);
        CHECK(fx_field(line, "alpha", v, sizeof v) && !strcmp(v, mt->alpha_mode == RA_ALPHA_BLEND  ? "BLEND"
                                                                 : mt->alpha_mode == RA_ALPHA_MASK ? "MASK"
                                                                                                   : "OPAQUE"),
              "%s: material %s: alpha mode", what, name);
    } else if (!strncmp(line, "expect-texture ", 15)) {
        char name[256];
        fx_field(line, "name", name, sizeof name);
        const ra_texture *t = find_texture(s, name);
        CHECK(t != NULL, "%s: no texture %s", what, name);
        if (!t) return;
        unsigned w = 0, h = 0;
        CHECK(fx_field(line, "size", v, sizeof v) && sscanf(v, "%ux%u", &w, &h) == 2 && w == t->width && h == t->height,
              "%s: texture %s size", what, name);
        CHECK(fx_field(line, "format", v, sizeof v) && t->source_format && !strcmp(v, t->source_format),
              "%s: texture %s format", what, name);
        CHECK(t->wrap_s == RA_WRAP_REPEAT && t->wrap_t == RA_WRAP_REPEAT, "%s: texture %s wraps", what, name);
        CHECK(field_long(line, "nearest") == t->nearest, "%s: texture %s nearest", what, name);
    } else if (!strncmp(line, "expect-texel ", 13)) {
        char name[256];
        fx_field(line, "texture", name, sizeof name);
        const ra_texture *t = find_texture(s, name);
        long x = field_long(line, "x"), y = field_long(line, "y");
        CHECK(t && x >= 0 && y >= 0 && (unsigned long)x < t->width && (unsigned long)y < t->height &&
                  fx_field(line, "rgba", v, sizeof v) && parse_numbers(v, d, 4) == 4,
              "%s: %s", what, line);
        if (!t || x < 0 || y < 0 || (unsigned long)x >= t->width || (unsigned long)y >= t->height) return;
        const uint8_t *px = &t->rgba[4 * ((size_t)y * t->width + (size_t)x)];
        for (int i = 0; i < 4; i++) CHECK(px[i] == (uint8_t)d[i], "%s: texel %ld,%ld of %s", what, x, y, name);
    } else {
        return;
    }
    g_checked++;
}

static bool is_case(const char *name)
{
    size_t l = strlen(name);
    return l > 4 && (!strcmp(name + l - 4, ".wdb") || !strcmp(name + l - 4, ".ani"));
}

static void run(const char *name)
{
    fx_file fx;
    if (!fx_open(g_dir, name, &fx)) return;
    char line[8192], keys[4][64], vals[4][1600];
    ra_options o;
    ra_options_init(&o);
    int nopt = 0;
    bool bound = false;
    while (fgets(line, sizeof line, fx.txt)) {
        char k[64], v[1000];
        if (nopt < 4 && sscanf(line, "expect-option %63[^=]=%999s", k, v) == 2) {
            snprintf(keys[nopt], sizeof keys[nopt], "%s", k);
            snprintf(vals[nopt], sizeof vals[nopt], "%s%s%s", !strcmp(k, "wdb") ? g_dir : "",
                     !strcmp(k, "wdb") ? "/" : "", v);
            ra_options_add(&o, keys[nopt], vals[nopt]);
            bound = bound || !strcmp(k, "wdb");
            nopt++;
        }
    }
    rewind(fx.txt);
    size_t l = strlen(name);
    if (!strcmp(name + l - 4, ".ani") && !bound) {
        fx_close(&fx);
        return; /* an .ani of test_lego's */
    }
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = NULL;
    ra_status st = ra_document_load(fx.data, fx.size, fx.path, &o, &doc, &e);
    if (fx.err_off >= 0) {
        fx_check_refused(&fx, st, &e, name, "lego_wdb");
        if (doc) ra_document_free(doc);
        fx_close(&fx);
        g_checked++;
        return;
    }
    char msg[RA_ERROR_TEXT_MAX];
    ra_error_format(&e, msg, sizeof msg);
    CHECK(st == RA_OK, "%s: %s", name, msg);
    g_data = fx.data;
    g_size = fx.size;
    if (st == RA_OK) {
        while (fgets(line, sizeof line, fx.txt)) {
            line[strcspn(line, "\r\n")] = 0;
            check_line(doc, line, name);
        }
        ra_document_free(doc);
    }
    if (bound) { /* without the WDB (wdb=none): the plain animation, no mesh */
        ra_options n;
        ra_options_init(&n);
        ra_options_add(&n, "wdb", "none");
        CHECK(ra_document_load(fx.data, fx.size, fx.path, &n, &doc, &e) == RA_OK && doc->scene.mesh_count == 0,
              "%s: wdb=none still has meshes", name);
        ra_document_free(doc);
    }
    fx_close(&fx);
}

/* The animation loaded with wdb=<fixture dir>/<wdb> */
static ra_status load_with_wdb(const uint8_t *ani, size_t n, const char *wdb, ra_document **doc, ra_error *e)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", g_dir, wdb);
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "wdb", path);
    ra_error_clear(e);
    *doc = NULL;
    return ra_document_load(ani, n, "car_drive.ani", &o, doc, e);
}

/* A warning of doc holds both texts */
static bool warned(const ra_document *doc, const char *a, const char *b)
{
    for (size_t i = 0; doc && i < doc->scene.warning_count; i++)
        if (strstr(doc->scene.warnings[i].msg, a) && strstr(doc->scene.warnings[i].msg, b)) return true;
    return false;
}

/* A part alone (model=NAME finds no model: the part's LOD list, at identity); a name nothing has; list. */
static void extras(void)
{
    size_t n = 0;
    uint8_t *d = fx_slurp(g_dir, "car.wdb", &n);
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "model", "WHEEL");
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = NULL;
    CHECK(ra_document_load(d, n, "car.wdb", &o, &doc, &e) == RA_OK, "model=WHEEL: %s", e.msg);
    if (doc) {
        const ra_scene *s = &doc->scene;
        CHECK(s->node_count == 2 && s->mesh_count == 2, "the part: %zu nodes, %zu meshes", s->node_count,
              s->mesh_count);
        const ra_mesh *m = find_mesh(s, "wheel_mesh");
        /* stored (0,0,0) (1,0,0) (0,1,0), z mirrored; (a,b,c) -> (a,c,b) */
        CHECK(m && m->vertex_count == 3 && m->positions[3] == 1 && m->positions[7] == 1 && m->indices[1] == 2,
              "the part's vertices as stored");
        const ra_meta *md = ra_meta_get(&s->meta, "lego.wdb.part_block");
        CHECK(md && md->type == RA_META_STRING && !strcmp(md->u.s, "global"), "part block");
        ra_document_free(doc);
    }
    ra_options_init(&o);
    ra_options_add(&o, "model", "nothing");
    CHECK(ra_document_load(d, n, "car.wdb", &o, &doc, &e) == RA_ERR_USAGE && !strcmp(e.field, "model"),
          "an unknown model is refused by name: %s", e.msg);
    char *text = NULL;
    ra_error_clear(&e);
    CHECK(lego_wdb_list(d, n, NULL, &text, &e) == RA_OK && text && strstr(text, "model car") &&
              strstr(text, "part wheel") && strstr(text, "texture wheel.gif"),
          "list: %s", text ? text : e.msg);
    ra_free(text);
    ra_free(d);
    /* lookup.wdb's two worlds: listing indexes every source of each, in
     * order (the step of a world counted from the one before it) */
    d = fx_slurp(g_dir, "lookup.wdb", &n);
    text = NULL;
    ra_error_clear(&e);
    CHECK(d && lego_wdb_list(d, n, NULL, &text, &e) == RA_OK && text &&
              strstr(text, "2 world(s), 5 model(s), 1 part(s), 2 texture(s)\n") &&
              strstr(text, "\npart dup                      global\ntexture dot.gif\ntexture empty.gif\n"),
          "lookup.wdb list: %s", text ? text : e.msg);
    ra_free(text);
    ra_free(d);
    /* an animation given a WDB whose directory is broken (wdb=PATH) is refused, naming the option and the
     * WDB's error */
    size_t an = 0;
    uint8_t *ani = fx_slurp(g_dir, "car_drive.ani", &an);
    CHECK(load_with_wdb(ani, an, "bad_offset.wdb", &doc, &e) == RA_ERR_BAD_VALUE && !doc && !strcmp(e.field, "wdb") &&
              strstr(e.msg, "model.data_offset"),
          "a broken WDB: %s", e.msg);
    /* a broken mesh: that mesh is left out (a warning naming the field and byte), the rest binds */
    CHECK(load_with_wdb(ani, an, "bad_reuse.wdb", &doc, &e) == RA_OK && doc->scene.mesh_count == 4, "a broken mesh: %s",
          e.msg);
    CHECK(warned(doc, "mesh.poly_indices at byte 779", ""), "a broken mesh is a warning");
    ra_document_free(doc);
    /* a model that cannot be read: its actor has no mesh (a warning naming the field), the load goes on */
    CHECK(load_with_wdb(ani, an, "bad_version.wdb", &doc, &e) == RA_OK && doc->scene.mesh_count == 0,
          "a broken model: %s", e.msg);
    CHECK(warned(doc, "actor car", "model.version"), "a broken model is a warning");
    ra_document_free(doc);
    CHECK(load_with_wdb(ani, an, "no_such.wdb", &doc, &e) == RA_ERR_IO && !doc, "a missing WDB: %s", e.msg);
    /* an actor nothing matches is a warning; the animation loads without meshes */
    CHECK(load_with_wdb(ani, an, "minifig.wdb", &doc, &e) == RA_OK && doc->scene.mesh_count == 0 &&
              doc->scene.warning_count >= 1 && strstr(doc->scene.warnings[0].msg, "actor car"),
          "an unmatched actor: %s", doc && doc->scene.warning_count ? doc->scene.warnings[0].msg : e.msg);
    ra_document_free(doc);
    ra_free(ani);
    /* a model by its directory name or, failing that, its root ROI's name (minifig.wdb: "stand_m", root "stand") */
    uint8_t *mf = fx_slurp(g_dir, "minifig.wdb", &n);
    ra_arena *ar = ra_arena_create(0);
    lego_wdb_set *w = NULL;
    ra_error_clear(&e);
    CHECK(ar && lego_wdb_open(mf, n, ar, "ACT1", NULL, &w, &e) == RA_OK, "open: %s", e.msg);
    if (w) {
        CHECK(lego_wdb_find_model(w, "STAND_M") == 0, "by directory name");
        CHECK(lego_wdb_find_model(w, "Stand") == 0, "by root ROI name");
        CHECK(lego_wdb_find_model(w, "head01") == -1, "a child ROI's name is no model");
        lego_wdb_close(w);
    }
    ra_arena_destroy(ar);
    ra_free(mf);
    /* the tables: every character of the game, the aliases, the player-built vehicles' colours */
    const char *chars[] = {"pepper", "PEP", "infoman", "ghost03", "boatman"};
    for (size_t i = 0; i < sizeof chars / sizeof chars[0]; i++) {
        bool found = false;
        for (size_t k = 0; k < lego_character_count; k++)
            if (!lego_stricmp(lego_characters[k].name, chars[i])) found = true;
        CHECK(found, "character %s in the tables", chars[i]);
    }
    CHECK(lego_character_count == 66, "66 characters, %zu", lego_character_count);
    uint8_t rgb[3];
    CHECK(lego_alias_color("LEGO Red", rgb) && rgb[0] == 0xcb && rgb[1] == 0x12 && rgb[2] == 0x20, "alias");
    CHECK(!lego_alias_color("lego purple", rgb), "unknown alias");
    /* a player-built vehicle's part: the game variable's default (c_chmotry0 = lego blue) */
    CHECK(lego_alias_color("INDIR-F-chmotry0", rgb) && rgb[0] == 0x00 && rgb[1] == 0x54 && rgb[2] == 0x8c,
          "INDIR-F- colour");
    CHECK(lego_alias_color("indir-g-rcbacky6", rgb) && rgb[1] == 0x78, "INDIR-G- colour");
    CHECK(!lego_alias_color("INDIR-F-nothing", rgb), "unknown INDIR colour");
}

/* The search: an .SI item finds WORLD.WDB where a game install keeps it
 * (LEGO/SCRIPTS/ISLE/ISLE.SI -> LEGO/DATA/WORLD.WDB) and prefers the
 * script's world; wdb=none and a folder without one give the bare animation. */
static void search(void)
{
    char tmp[] = "/tmp/test_wdb_XXXXXX", path[600], si[600], wdbp[600];
    if (!mkdtemp(tmp)) {
        CHECK(0, "mkdtemp");
        return;
    }
    const char *dirs[] = {"LEGO", "LEGO/SCRIPTS", "LEGO/SCRIPTS/ISLE", "LEGO/DATA"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, dirs[i]);
        CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
    }
    size_t an = 0, wn = 0;
    uint8_t *ani = fx_slurp(g_dir, "car_drive.ani", &an), *wdb = fx_slurp(g_dir, "car.wdb", &wn);
    ra_si_object obj = {7, "car_drive", "LegoAnimPresenter", {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, NULL, ani, an};
    ra_writer w;
    ra_writer_init(&w);
    ra_error e;
    ra_error_clear(&e);
    CHECK(ra_si_write(&obj, 1, 4096, NULL, 0, &w, &e) == RA_OK, "si write: %s", e.msg);
    snprintf(si, sizeof si, "%s/LEGO/SCRIPTS/ISLE/ISLE.SI", tmp);
    snprintf(wdbp, sizeof wdbp, "%s/LEGO/DATA/WORLD.WDB", tmp);
    CHECK(ra_write_file(si, w.data, w.size, &e) == RA_OK, "write %s", si);
    ra_document *doc = NULL;
    CHECK(ra_document_load_file(si, NULL, &doc, &e) == RA_OK && doc->scene.mesh_count == 0,
          "no WDB yet: the bare animation");
    ra_document_free(doc);
    CHECK(ra_write_file(wdbp, wdb, wn, &e) == RA_OK, "write %s", wdbp);
    CHECK(ra_document_load_file(si, NULL, &doc, &e) == RA_OK, "ISLE.SI with the WDB found: %s", e.msg);
    if (doc) {
        const ra_meta *m = ra_meta_get(&doc->scene.meta, "lego.wdb.world");
        CHECK(doc->scene.mesh_count == 5, "the SI item wears the model: %zu meshes", doc->scene.mesh_count);
        CHECK(m && m->type == RA_META_STRING && !strcmp(m->u.s, "ACT1"), "ISLE.SI prefers ACT1");
        ra_document_free(doc);
    }
    ra_options o;
    ra_options_init(&o);
    ra_options_add(&o, "wdb", "none");
    CHECK(ra_document_load_file(si, &o, &doc, &e) == RA_OK && doc->scene.mesh_count == 0, "wdb=none");
    ra_document_free(doc);
    /* a WDB found but broken: the animation alone, with a warning */
    uint8_t junk[8] = {1, 0, 0, 0, 200, 0, 0, 0};
    CHECK(ra_write_file(wdbp, junk, sizeof junk, &e) == RA_OK, "write junk");
    CHECK(ra_document_load_file(si, NULL, &doc, &e) == RA_OK && doc->scene.mesh_count == 0 &&
              doc->scene.warning_count >= 1,
          "a broken WDB found beside the file is a warning: %s", e.msg);
    ra_document_free(doc);
    /* a WDB found but not loadable (over max_file_size, the SI under it): a
     * warning too; named with wdb=, the load fails */
    CHECK(ra_write_file(wdbp, wdb, wn, &e) == RA_OK, "write %s", wdbp);
    CHECK(w.size < wn, "ISLE.SI (%zu bytes) is smaller than car.wdb (%zu)", w.size, wn);
    char cap[32];
    snprintf(cap, sizeof cap, "%zu", (w.size + wn) / 2);
    ra_options_init(&o);
    ra_options_add(&o, "max_file_size", cap);
    doc = NULL;
    bool warned = false;
    CHECK(ra_document_load_file(si, &o, &doc, &e) == RA_OK && doc->scene.mesh_count == 0,
          "a WDB over max_file_size found beside the file: the animation alone: %s", e.msg);
    for (size_t i = 0; doc && i < doc->scene.warning_count; i++)
        warned |= strstr(doc->scene.warnings[i].msg, "not used") && strstr(doc->scene.warnings[i].msg, "max_file_size");
    CHECK(warned, "a WDB over max_file_size: the warning says why");
    ra_document_free(doc);
    ra_options_add(&o, "wdb", wdbp);
    doc = NULL;
    CHECK(ra_document_load_file(si, &o, &doc, &e) != RA_OK && !strcmp(e.field, "wdb"),
          "wdb= naming a WDB over max_file_size: refused (%s)", e.msg);
    ra_document_free(doc);
    /* names in any case: LEGO/dAtA/WoRlD.wDb, found past a folder named
     * world.wdb on the way (LEGO/SCRIPTS), which is not taken; then LEGO and
     * its DATA folder that cannot be listed (execute-only; not as root),
     * where the usual spellings are still found */
    char odd_dir[600], odd_wdb[700], decoy[700];
    snprintf(path, sizeof path, "%s/LEGO/DATA", tmp);
    snprintf(odd_dir, sizeof odd_dir, "%s/LEGO/dAtA", tmp);
    snprintf(odd_wdb, sizeof odd_wdb, "%s/WoRlD.wDb", odd_dir);
    snprintf(decoy, sizeof decoy, "%s/LEGO/SCRIPTS/world.wdb", tmp);
    remove(wdbp);
    CHECK(rename(path, odd_dir) == 0 && mkdir(decoy, 0700) == 0, "rename to %s", odd_dir);
    CHECK(ra_write_file(odd_wdb, wdb, wn, &e) == RA_OK, "write %s", odd_wdb);
    CHECK(ra_document_load_file(si, NULL, &doc, &e) == RA_OK && doc->scene.mesh_count == 5,
          "WoRlD.wDb in dAtA is found, a folder named world.wdb is not taken: %s", e.msg);
    ra_document_free(doc);
    remove(odd_wdb);
    rmdir(decoy);
    CHECK(rename(odd_dir, path) == 0, "rename back");
    CHECK(ra_write_file(wdbp, wdb, wn, &e) == RA_OK, "write %s", wdbp);
    if (geteuid() != 0) { /* root lists any folder */
        char lego[600];
        snprintf(lego, sizeof lego, "%s/LEGO", tmp);
        CHECK(chmod(path, 0100) == 0 && chmod(lego, 0100) == 0, "chmod");
        CHECK(ra_document_load_file(si, NULL, &doc, &e) == RA_OK && doc->scene.mesh_count == 5,
              "LEGO and LEGO/DATA unlisted: WORLD.WDB still found: %s", e.msg);
        ra_document_free(doc);
        CHECK(chmod(lego, 0700) == 0 && chmod(path, 0700) == 0, "chmod back");
    }
    remove(si);
    remove(wdbp);
    for (size_t i = 4; i-- > 0;) {
        snprintf(path, sizeof path, "%s/%s", tmp, dirs[i]);
        rmdir(path);
    }
    rmdir(tmp);
    ra_writer_free(&w);
    ra_free(ani);
    ra_free(wdb);
    g_checked += 9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_wdb FIXTURE_DIR\n");
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    int files = fx_for_each_file(g_dir, is_case, run);
    extras();
    search();
    CHECK(g_checked >= 40, "expectations checked: %ld", g_checked);
    printf("files: %d, expectations checked: %ld\n", files, g_checked);
    return ra_test_finish("test_wdb");
}
