/* The geometry expectation lines shared by the fixture tests (test_niff.c,
 * test_mp_models.c): expect-mesh, expect-triangle, expect-material,
 * expect-texture, expect-texel, expect-skin, expect-skinned and the counts,
 * checked against an ra_scene.  The includer defines TOL (skinned positions)
 * and GEO_TOL (corners, colours), and EXPECT_ALPHA_CUTOFF when its format's
 * MASK cutoff is not 0.5; CHECK comes from ra_test.h. */
#ifndef RETROANIM_EXPECT_LINES_H
#define RETROANIM_EXPECT_LINES_H

#include <stdlib.h>
#include <string.h>

#include "ra_fixture.h"

#ifndef EXPECT_ALPHA_CUTOFF
#define EXPECT_ALPHA_CUTOFF 0.5
#endif

static inline const ra_mesh *find_mesh(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->mesh_count; i++)
        if (s->meshes[i].name && !strcmp(s->meshes[i].name, name)) return &s->meshes[i];
    return NULL;
}

static inline const ra_material *find_material(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->material_count; i++)
        if (s->materials[i].name && !strcmp(s->materials[i].name, name)) return &s->materials[i];
    return NULL;
}

static inline const ra_texture *find_texture(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->texture_count; i++)
        if (s->textures[i].name && !strcmp(s->textures[i].name, name)) return &s->textures[i];
    return NULL;
}

/* A failed check: the line is malformed. */
static inline void bad_line(const char *line, const char *what) { CHECK(0, "%s: malformed line %s", what, line); }

/* p, the object a line names, or a failed check that there is none (NULL). */
static inline const void *named(const void *p, const char *kind, const char *name, const char *what)
{
    CHECK(p != NULL, "%s: no %s named %s", what, kind, name);
    return p;
}

/* "a,b,c;d,e,f" -> up to max numbers; the count read, -1 when malformed */
static inline int parse_numbers(const char *v, double *out, int max)
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
static inline long field_long(const char *line, const char *key)
{
    char v[64];
    if (!fx_field(line, key, v, sizeof v)) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return end != v && !*end && x >= 0 ? x : -1;
}

/* "key=0|1" of a line against a flag */
static inline void check_flag(const char *line, const char *key, bool have, const char *what, const char *obj)
{
    long want = field_long(line, key);
    CHECK(want == 0 || want == 1, "%s: %s: no %s=0|1 in %s", what, obj, key, line);
    if (want == 0 || want == 1)
        CHECK(have == (want == 1), "%s: %s: %s is %d, expected %ld", what, obj, key, have, want);
}

/* expect-mesh name=<mesh> node=<node> vertices=<N> triangles=<M> material=<name|-> uv=<0|1> normals=<0|1>
 * colors=<0|1> */
static inline void check_mesh_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    if (!fx_field(line, "name", name, sizeof name)) {
        bad_line(line, what);
        return;
    }
    const ra_mesh *m = named(find_mesh(s, name), "mesh", name, what);
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
        bad_line(line, what);
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
static inline void check_corners(const ra_mesh *m, size_t k, const char *attr, const float *data, int width,
                                 const char *spec, const char *what)
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
static inline void check_triangle_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[512] = "";
    long k = field_long(line, "index");
    if (!fx_field(line, "mesh", name, sizeof name) || k < 0 || !fx_field(line, "p", v, sizeof v)) {
        bad_line(line, what);
        return;
    }
    const ra_mesh *m = named(find_mesh(s, name), "mesh", name, what);
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
static inline void check_material_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    if (!fx_field(line, "name", name, sizeof name)) {
        bad_line(line, what);
        return;
    }
    const ra_material *m = named(find_material(s, name), "material", name, what);
    if (!m) return;
    double c[4];
    if (fx_field(line, "color", v, sizeof v) && parse_numbers(v, c, 4) == 4) {
        for (int i = 0; i < 4; i++) CHECK_NEAR(m->base_color[i], c[i], GEO_TOL, name);
    } else {
        bad_line(line, what);
    }
    if (!fx_field(line, "texture", v, sizeof v)) {
        bad_line(line, what);
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
        if (m->alpha_mode == RA_ALPHA_MASK) CHECK_NEAR(m->alpha_cutoff, EXPECT_ALPHA_CUTOFF, 1e-9, name);
    } else {
        bad_line(line, what);
    }
    check_flag(line, "double_sided", m->double_sided, what, name);
    check_flag(line, "unlit", m->unlit, what, name);
}

static inline const char *wrap_name(ra_wrap w)
{
    return w == RA_WRAP_REPEAT ? "REPEAT" : w == RA_WRAP_CLAMP ? "CLAMP" : w == RA_WRAP_MIRROR ? "MIRROR" : "?";
}

/* expect-texture name=<t> size=<W>x<H> format=<RGBA16|...> wrap=<S>,<T> nearest=0|1 */
static inline void check_texture_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    if (!fx_field(line, "name", name, sizeof name)) {
        bad_line(line, what);
        return;
    }
    const ra_texture *t = named(find_texture(s, name), "texture", name, what);
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
static inline void check_texel_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[64] = "";
    long x = field_long(line, "x"), y = field_long(line, "y");
    double want[4];
    if (!fx_field(line, "texture", name, sizeof name) || x < 0 || y < 0 || !fx_field(line, "rgba", v, sizeof v) ||
        parse_numbers(v, want, 4) != 4) {
        bad_line(line, what);
        return;
    }
    const ra_texture *t = named(find_texture(s, name), "texture", name, what);
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
static inline const ra_skin *skin_of(const ra_scene *s, const ra_mesh *m, const char *what)
{
    bool ok = m->skin >= 0 && (size_t)m->skin < s->skin_count && m->joints && m->weights;
    CHECK(ok, "%s: mesh %s is not skinned (skin %d of %zu)", what, m->name, m->skin, s->skin_count);
    CHECK(m->node == 0, "%s: skinned mesh %s hangs on node %u, not on the root", what, m->name, m->node);
    return ok ? &s->skins[m->skin] : NULL;
}

/* expect-skin mesh=<mesh> skin=<skin name> joints=<node>,<node>,... (the skin's joints in order) */
static inline void check_skin_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", skin[256] = "", joints[2048] = "";
    if (!fx_field(line, "mesh", name, sizeof name) || !fx_field(line, "skin", skin, sizeof skin) ||
        !fx_field(line, "joints", joints, sizeof joints)) {
        bad_line(line, what);
        return;
    }
    const ra_mesh *m = named(find_mesh(s, name), "mesh", name, what);
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
static inline void rest_worlds(const ra_scene *s, ra_mat4 *out)
{
    for (size_t n = 0; n < s->node_count; n++) {
        int32_t p = s->nodes[n].parent;
        out[n] = p < 0 ? s->nodes[n].transform : ra_m4_mul(&out[p], &s->nodes[n].transform);
    }
}

/* expect-skinned mesh=<mesh> tri=<k> corner=<c> t=<seconds> p=x,y,z: the corner's vertex v skinned as a consumer
 * does it, sum_i weights[4v+i] * W_j(t) * inverse(RestWorld_j) * positions[v] with j = skin joints[joints[4v+i]],
 * W from playback of the baked keys. */
static inline void check_skinned_line(const ra_scene *s, const char *line, const char *what)
{
    char name[256] = "", v[256] = "";
    long k = field_long(line, "tri"), c = field_long(line, "corner");
    double want[3], t = 0;
    bool ok =
        fx_field(line, "mesh", name, sizeof name) && k >= 0 && c >= 0 && c < 3 && fx_field(line, "t", v, sizeof v);
    if (ok) t = atof(v);
    if (!ok || !fx_field(line, "p", v, sizeof v) || parse_numbers(v, want, 3) != 3) {
        bad_line(line, what);
        return;
    }
    const ra_mesh *m = named(find_mesh(s, name), "mesh", name, what);
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

/* The count of an "expect-meshes N" / "expect-materials N" / "expect-textures N" line (text after the key). */
static inline void check_count(const char *text, size_t have, const char *what, const char *name)
{
    char *end;
    long want = strtol(text, &end, 10);
    CHECK(end != text && want >= 0 && have == (size_t)want, "%s: %zu %s, expected %s", name, have, what, text);
}

#endif
