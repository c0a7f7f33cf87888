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
static const ra_mesh *find_mesh(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->mesh_count; i++)
        if (s->meshes[i].name && !strcmp(s->meshes[i].name, name)) return &s->meshes[i];
    return NULL;
}

static const ra_material *find_material(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->material_count; i++)
        if (s->materials[i].name && !strcmp(s->materials[i].name, name)) return &s->materials[i];
    return NULL;
}

static const ra_texture *find_texture(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->texture_count; i++)
        if (s->textures[i].name && !strcmp(s->textures[i].name, name)) return &s->textures[i];
    return NULL;
}

/* "a,b,c;d,e,f" -> up to max numbers; the count read, -1 when malformed */
static int parse_numbers(const char *v, double *out, int max)
{
    int n = 0;
    const char *p = v;
    while (*p) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || n == max) return -1;
        out[n++] = x;
        p = end;
        if (*p == ',' || *p == ';') p++;
        else if (*p) return -1;
    }
    return n;
}

/* "key=<unsigned>" of a line, or -1 */
static long field_long(const char *line, const char *key)
{
    char v[64];
    if (!fx_field(line, key, v, sizeof v)) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return end != v && !*end && x >= 0 ? x : -1;
}

/* "key=0|1" of a line against a flag */
static void check_flag(const char *line, const char *key, bool have, const char *what, const char *obj)
{
    long want = field_long(line, key);
    CHECK(want == 0 || want == 1, "%s: %s: no %s=0|1 in %s", what, obj, key, line);
    if (want == 0 || want == 1)
        CHECK(have == (want == 1), "%s: %s: %s is %d, expected %ld", what, obj, key, have, want);
}

/* expect-mesh name=<mesh> node=<node> vertices=<N> triangles=<M> material=<name|-> uv=<0|1> normals=<0|1>
 * colors=<0|1> */
static void check_mesh_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    if (!fx_field(line, "name", name, sizeof name)) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_mesh *m = find_mesh(s, name);
    CHECK(m != NULL, "%s: no mesh named %s", what, name);
    if (!m) return;
    CHECK(fx_field(line, "node", v, sizeof v) && m->node < s->node_count && !strcmp(s->nodes[m->node].name, v),
          "%s: mesh %s hangs on node %s, expected %s", what, name,
          m->node < s->node_count ? s->nodes[m->node].name : "(out of range)", v);
    long nv = field_long(line, "vertices"), nt = field_long(line, "triangles");
    CHECK(nv >= 0 && m->vertex_count == (unsigned long)nv, "%s: mesh %s has %u vertices, expected %ld", what, name,
          m->vertex_count, nv);
    CHECK(nt >= 0 && m->triangle_count == (size_t)nt, "%s: mesh %s has %zu triangles, expected %ld", what, name,
          m->triangle_count, nt);
    if (!fx_field(line, "material", v, sizeof v)) {
        CHECK(0, "%s: malformed line %s", what, line);
    } else if (!strcmp(v, "-")) {
        CHECK(m->material < 0, "%s: mesh %s has material %d, expected none", what, name, m->material);
    } else {
        bool ok =
            m->material >= 0 && (size_t)m->material < s->material_count && !strcmp(s->materials[m->material].name, v);
        CHECK(ok, "%s: mesh %s has material %s, expected %s", what, name,
              m->material >= 0 && (size_t)m->material < s->material_count ? s->materials[m->material].name : "none", v);
    }
    check_flag(line, "uv", m->uvs != NULL, what, name);
    check_flag(line, "normals", m->normals != NULL, what, name);
    check_flag(line, "colors", m->colors != NULL, what, name);
}

/* One attribute of a triangle's three corners against "a,b,c;d,e,f;g,h,i" (width values per corner). */
static void check_corners(const ra_mesh *m, size_t k, const char *attr, const float *data, int width, const char *spec,
                          const char *what)
{
    double want[12];
    int n = parse_numbers(spec, want, 12);
    CHECK(n == 3 * width, "%s: mesh %s triangle %zu: malformed %s=%s", what, m->name, k, attr, spec);
    CHECK(data != NULL, "%s: mesh %s has no %s", what, m->name, attr);
    if (n != 3 * width || !data) return;
    double worst = 0;
    int worst_c = 0, worst_j = 0;
    for (int c = 0; c < 3; c++) {
        uint32_t vi = m->indices[3 * k + (size_t)c];
        if (vi >= m->vertex_count) {
            CHECK(0, "%s: mesh %s triangle %zu: index %u >= %u vertices", what, m->name, k, vi, m->vertex_count);
            return;
        }
        for (int j = 0; j < width; j++) {
            double d = fabs((double)data[(size_t)vi * (size_t)width + (size_t)j] - want[c * width + j]);
            if (!(d <= worst)) {
                worst = d;
                worst_c = c;
                worst_j = j;
            }
        }
    }
    CHECK(worst <= GEO_TOL, "%s: mesh %s triangle %zu corner %d: %s[%d] off by %g", what, m->name, k, worst_c, attr,
          worst_j, worst);
}

/* expect-triangle mesh=<mesh> index=<k> p=x,y,z;x,y,z;x,y,z [uv=u,v;...] [n=x,y,z;...] [c=r,g,b,a;...] */
static void check_triangle_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[512] = "";
    long k = field_long(line, "index");
    if (!fx_field(line, "mesh", name, sizeof name) || k < 0 || !fx_field(line, "p", v, sizeof v)) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_mesh *m = find_mesh(s, name);
    CHECK(m != NULL, "%s: no mesh named %s", what, name);
    if (!m) return;
    size_t tri = (size_t)k;
    CHECK(tri < m->triangle_count && m->indices, "%s: mesh %s has %zu triangles, no triangle %zu", what, name,
          m->triangle_count, tri);
    if (tri >= m->triangle_count || !m->indices) return;
    check_corners(m, tri, "position", m->positions, 3, v, what);
    if (fx_field(line, "uv", v, sizeof v)) check_corners(m, tri, "uv", m->uvs, 2, v, what);
    if (fx_field(line, "n", v, sizeof v)) check_corners(m, tri, "normal", m->normals, 3, v, what);
    if (fx_field(line, "c", v, sizeof v)) check_corners(m, tri, "colour", m->colors, 4, v, what);
}

/* expect-material name=<m> color=r,g,b,a texture=<name|-> alpha=OPAQUE|MASK|BLEND double_sided=0|1 unlit=0|1 */
static void check_material_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    if (!fx_field(line, "name", name, sizeof name)) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_material *m = find_material(s, name);
    CHECK(m != NULL, "%s: no material named %s", what, name);
    if (!m) return;
    double c[4];
    if (fx_field(line, "color", v, sizeof v) && parse_numbers(v, c, 4) == 4) {
        for (int i = 0; i < 4; i++) CHECK_NEAR(m->base_color[i], c[i], GEO_TOL, name);
    } else {
        CHECK(0, "%s: malformed line %s", what, line);
    }
    if (!fx_field(line, "texture", v, sizeof v)) {
        CHECK(0, "%s: malformed line %s", what, line);
    } else if (!strcmp(v, "-")) {
        CHECK(m->texture < 0, "%s: material %s has texture %d, expected none", what, name, m->texture);
    } else {
        bool ok = m->texture >= 0 && (size_t)m->texture < s->texture_count && !strcmp(s->textures[m->texture].name, v);
        CHECK(ok, "%s: material %s has texture %s, expected %s", what, name,
              m->texture >= 0 && (size_t)m->texture < s->texture_count ? s->textures[m->texture].name : "none", v);
    }
    static const char *const modes[3] = {"OPAQUE", "MASK", "BLEND"};
    if (fx_field(line, "alpha", v, sizeof v)) {
        const char *have = (unsigned)m->alpha_mode < 3 ? modes[m->alpha_mode] : "?";
        CHECK(!strcmp(have, v), "%s: material %s alpha mode %s, expected %s", what, name, have, v);
        if (m->alpha_mode == RA_ALPHA_MASK) CHECK_NEAR(m->alpha_cutoff, 64.0 / 255.0, 1e-9, name);
    } else {
        CHECK(0, "%s: malformed line %s", what, line);
    }
    check_flag(line, "double_sided", m->double_sided, what, name);
    check_flag(line, "unlit", m->unlit, what, name);
}

static const char *wrap_name(ra_wrap w)
{
    return w == RA_WRAP_REPEAT ? "REPEAT" : w == RA_WRAP_CLAMP ? "CLAMP" : w == RA_WRAP_MIRROR ? "MIRROR" : "?";
}

/* expect-texture name=<t> size=<W>x<H> format=<RGBA16|...> wrap=<S>,<T> nearest=0|1 */
static void check_texture_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    if (!fx_field(line, "name", name, sizeof name)) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_texture *t = find_texture(s, name);
    CHECK(t != NULL, "%s: no texture named %s", what, name);
    if (!t) return;
    unsigned w = 0, h = 0;
    CHECK(fx_field(line, "size", v, sizeof v) && sscanf(v, "%ux%u", &w, &h) == 2 && t->width == w && t->height == h,
          "%s: texture %s is %ux%u, expected %s", what, name, t->width, t->height, v);
    CHECK(fx_field(line, "format", v, sizeof v) && t->source_format && !strcmp(t->source_format, v),
          "%s: texture %s format %s, expected %s", what, name, t->source_format ? t->source_format : "(none)", v);
    char want[64];
    snprintf(want, sizeof want, "%s,%s", wrap_name(t->wrap_s), wrap_name(t->wrap_t));
    CHECK(fx_field(line, "wrap", v, sizeof v) && !strcmp(v, want), "%s: texture %s wraps %s, expected %s", what, name,
          want, v);
    check_flag(line, "nearest", t->nearest, what, name);
}

/* expect-texel texture=<t> x=<x> y=<y> rgba=r,g,b,a (y from the top; exact) */
static void check_texel_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[64] = "";
    long x = field_long(line, "x"), y = field_long(line, "y");
    double want[4];
    if (!fx_field(line, "texture", name, sizeof name) || x < 0 || y < 0 || !fx_field(line, "rgba", v, sizeof v) ||
        parse_numbers(v, want, 4) != 4) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_texture *t = find_texture(s, name);
    CHECK(t != NULL, "%s: no texture named %s", what, name);
    if (!t) return;
    CHECK((unsigned long)x < t->width && (unsigned long)y < t->height && t->rgba,
          "%s: texture %s (%ux%u) has no texel %ld,%ld", what, name, t->width, t->height, x, y);
    if ((unsigned long)x >= t->width || (unsigned long)y >= t->height || !t->rgba) return;
    const uint8_t *p = t->rgba + ((size_t)y * t->width + (size_t)x) * 4;
    CHECK(p[0] == want[0] && p[1] == want[1] && p[2] == want[2] && p[3] == want[3],
          "%s: texture %s texel (%ld, %ld) is %u,%u,%u,%u, expected %s", what, name, x, y, p[0], p[1], p[2], p[3], v);
}

/* ---- skinned (deformable) meshes: expect-skin, expect-skinned ---------------------------------------------- */
/* A skinned mesh's skin, or NULL (checked: the mesh has one and hangs on the root). */
static const ra_skin *skin_of(const ra_scene *s, const ra_mesh *m, const char *what)
{
    bool ok = m->skin >= 0 && (size_t)m->skin < s->skin_count && m->joints && m->weights;
    CHECK(ok, "%s: mesh %s is not skinned (skin %d of %zu)", what, m->name, m->skin, s->skin_count);
    CHECK(m->node == 0, "%s: skinned mesh %s hangs on node %u, not on the root", what, m->name, m->node);
    return ok ? &s->skins[m->skin] : NULL;
}

/* expect-skin mesh=<mesh> skin=<skin name> joints=<node>,<node>,... (the skin's joints in order) */
static void check_skin_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", skin[256] = "", joints[2048] = "";
    if (!fx_field(line, "mesh", name, sizeof name) || !fx_field(line, "skin", skin, sizeof skin) ||
        !fx_field(line, "joints", joints, sizeof joints)) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_mesh *m = find_mesh(s, name);
    CHECK(m != NULL, "%s: no mesh named %s", what, name);
    const ra_skin *sk = m ? skin_of(s, m, what) : NULL;
    if (!sk) return;
    CHECK(sk->name && !strcmp(sk->name, skin), "%s: mesh %s has skin %s, expected %s", what, name,
          sk->name ? sk->name : "(unnamed)", skin);
    char have[2048] = "";
    size_t len = 0;
    for (size_t j = 0; j < sk->joint_count && len < sizeof have; j++)
        len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", j ? "," : "",
                                sk->joints[j] < s->node_count ? s->nodes[sk->joints[j]].name : "?");
    CHECK(!strcmp(have, joints), "%s: skin %s has %zu joints %s, expected %s", what, skin, sk->joint_count, have,
          joints);
}

/* The rest world of every node: the nodes' transforms chained through their parents (parents come first). */
static void rest_worlds(const ra_scene *s, ra_mat4 *out)
{
    for (size_t n = 0; n < s->node_count; n++) {
        int32_t p = s->nodes[n].parent;
        out[n] = p < 0 ? s->nodes[n].transform : ra_m4_mul(&out[p], &s->nodes[n].transform);
    }
}

/* expect-skinned mesh=<mesh> tri=<k> corner=<c> t=<seconds> p=x,y,z: the corner's vertex v skinned as a consumer
 * does it, sum_i weights[4v+i] * W_j(t) * inverse(RestWorld_j) * positions[v] with j = skin joints[joints[4v+i]],
 * W from playback of the baked keys. */
static void check_skinned_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    long k = field_long(line, "tri"), c = field_long(line, "corner");
    double want[3], t = 0;
    bool ok =
        fx_field(line, "mesh", name, sizeof name) && k >= 0 && c >= 0 && c < 3 && fx_field(line, "t", v, sizeof v);
    if (ok) t = atof(v);
    if (!ok || !fx_field(line, "p", v, sizeof v) || parse_numbers(v, want, 3) != 3) {
        CHECK(0, "%s: malformed line %s", what, line);
        return;
    }
    const ra_mesh *m = find_mesh(s, name);
    CHECK(m != NULL, "%s: no mesh named %s", what, name);
    const ra_skin *sk = m ? skin_of(s, m, what) : NULL;
    if (!sk) return;
    CHECK((size_t)k < m->triangle_count && m->indices, "%s: mesh %s has no triangle %ld", what, name, k);
    if ((size_t)k >= m->triangle_count || !m->indices) return;
    uint32_t vi = m->indices[3 * (size_t)k + (size_t)c];
    CHECK(vi < m->vertex_count, "%s: mesh %s: index %u >= %u vertices", what, name, vi, m->vertex_count);
    if (vi >= m->vertex_count) return;
    ra_mat4 *rest = malloc(s->node_count * sizeof *rest), *now = malloc(s->node_count * sizeof *now);
    rest_worlds(s, rest);
    if (s->animation_count) ra_scene_sample_world(s, 0, t, now);
    else memcpy(now, rest, s->node_count * sizeof *now);
    const float *pos = &m->positions[3 * (size_t)vi];
    double p[3] = {0, 0, 0}, wsum = 0;
    for (int i = 0; i < 4; i++) {
        double w = m->weights[4 * (size_t)vi + (size_t)i];
        if (w == 0) continue;
        uint16_t j = m->joints[4 * (size_t)vi + (size_t)i];
        CHECK(j < sk->joint_count && sk->joints[j] < s->node_count, "%s: mesh %s vertex %u: joint %u of %zu", what,
              name, vi, j, sk->joint_count);
        if (j >= sk->joint_count || sk->joints[j] >= s->node_count) continue;
        uint32_t node = sk->joints[j];
        ra_mat4 inv, mv;
        CHECK(ra_m4_invert_affine(&rest[node], &inv), "%s: joint %s has a singular rest world", what,
              s->nodes[node].name);
        mv = ra_m4_mul(&now[node], &inv);
        ra_vec3 q = ra_m4_apply_point(&mv, ra_v3(pos[0], pos[1], pos[2]));
        p[0] += w * q.x, p[1] += w * q.y, p[2] += w * q.z;
        wsum += w;
    }
    CHECK(fabs(wsum - 1) <= 1e-5, "%s: mesh %s vertex %u: weights sum to %g", what, name, vi, wsum);
    double d = fmax(fabs(p[0] - want[0]), fmax(fabs(p[1] - want[1]), fabs(p[2] - want[2])));
    CHECK(d <= TOL, "%s: mesh %s triangle %ld corner %ld at %g s: skinned to %.7g,%.7g,%.7g, expected %s (off by %g)",
          what, name, k, c, t, p[0], p[1], p[2], v, d);
    free(rest);
    free(now);
}

/* The count of an "expect-meshes N" line (text after the key). */
static void check_count(const char *text, size_t have, const char *what, const char *name)
{
    char *end;
    long want = strtol(text, &end, 10);
    CHECK(end != text && want >= 0 && have == (size_t)want, "%s: %zu %s, expected %s", name, have, what, text);
}

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
    static const char *const stems[] = {"pak_bad_cmdl", "pak_bad_skin",      "pak_no_parts", "skin_missing_bone",
                                        "lightmap",     "short_uv_fallback", "dl_long",      "lenient",
                                        "wound_ok",     "wound_inverted"};
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
