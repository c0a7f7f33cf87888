/* NIFF: the geometry of the placed objects as meshes, materials and textures
 * (docs/formats/niff.md §9, test_models/niff/RULES.md "Geometry").
 *
 * Each object's Shape becomes meshes on the object's node: its TriGroup's
 * triangles grouped by material and by which attributes all three corners
 * carry, each corner tuple (vertex, st, normal, colour indices) one vertex.
 * Materials come from the Part, Shape or Obj that links them; textures are
 * the Tex's still image reduced to its N64 format (or a CiImg through its
 * palette), rows from the top. */
#include <math.h>
#include <string.h>

#include "retroanim/niff.h"
#include "retroanim/ra_image.h"
#include "retroanim/ra_scene.h"

#define FMT "niff"

/* where a corner's normal or colour comes from */
enum {
    SRC_NONE,
    SRC_VTX,
    SRC_TRI
};

/* One mesh under construction: a shape's triangles of one group key. */
typedef struct pmesh {
    int32_t material;
    bool uv, nv, col;
    bool col_rgb, col_alpha; /* the colours' RGB and alpha feed the surface (mat_sources), else 1 */
    uint32_t *tris;          /* indices into the TriGroup */
    uint32_t count;
} pmesh;

typedef struct gbuild {
    ra_document *doc;
    const niff_file *f;
    ra_scene *s;
    ra_arena *ar;
    ra_error *err;
    int32_t *mat_map;        /* [4 * mat_count]: (Mat, double-sided, textured) -> scene material */
    int32_t *tex_map;        /* [tex_count] -> scene texture */
    uint8_t *tex_alpha;      /* per scene texture: 1 = has alpha 0, 2 = has alpha strictly between 0 and 255 */
    bool *mat_vcol_alpha;    /* per scene material: a vertex colour of a mesh using it has alpha < 1 */
    const int32_t *obj_node; /* item (object, then chain element) -> scene node */
    ra_mat4 *world;          /* rest world of every scene node */
    size_t mesh_cap, mat_cap, tex_cap, skin_cap;
    size_t animated_shapes, approximated_parts, animated_tex, external_tex, cull_both;
} gbuild;

static const char *name_or(const niff_file *f, uint32_t idx, ra_arena *ar, const char *prefix, uint32_t i)
{
    if (idx < f->name_count && f->names[idx].text && *f->names[idx].text) return f->names[idx].text;
    return ra_arena_printf(ar, "%s%u", prefix, i);
}

/* ---- textures ---------------------------------------------------------------------------------------------- */
/* tex_type = TEX_FORM (low byte: I 0, IA 1, CI 2, YUV 3, RGB 4, RGBA 5) | TEX_DEPTH (4: 0, 8: 0x100, 16: 0x200,
 * 32: 0x400).  Returns the N64 format it reduces to, or -1 for none (kept as stored); *name says which. */
static int tex_format(uint32_t type, const char **name)
{
    static const char *const forms[6] = {"I", "IA", "CI", "YUV", "RGB", "RGBA"};
    uint32_t form = type & 0xFFu, depth = (type >> 8) & 0xFFu;
    int bits = depth == 0 ? 4 : depth == 1 ? 8 : depth == 2 ? 16 : depth == 4 ? 32 : 0;
    static const struct {
        uint32_t form;
        int bits;
        ra_n64_format f;
    } map[] = {{5, 16, RA_N64_RGBA16}, {5, 32, RA_N64_RGBA32}, {1, 4, RA_N64_IA4},
               {1, 8, RA_N64_IA8},     {1, 16, RA_N64_IA16},   {0, 4, RA_N64_I4},
               {0, 8, RA_N64_I8},      {2, 4, RA_N64_CI4},     {2, 8, RA_N64_CI8}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].form == form && map[i].bits == bits) {
            *name = ra_n64_format_name(map[i].f);
            return map[i].f == RA_N64_CI4 || map[i].f == RA_N64_CI8 ? -1 : (int)map[i].f;
        }
    *name = form < 6 ? forms[form] : "unknown";
    return -1;
}

static ra_wrap wrap_of(uint32_t v) { return v == 1 ? RA_WRAP_CLAMP : v == 2 ? RA_WRAP_MIRROR : RA_WRAP_REPEAT; }

/* The scene texture of Tex ti (made on first use), or -1 when out of memory / failed (err set). */
static int32_t texture_of(gbuild *b, uint32_t ti)
{
    if (b->tex_map[ti] >= 0) return b->tex_map[ti];
    const niff_file *f = b->f;
    const niff_tex *t = &f->geo.texs[ti];
    ra_scene *s = b->s;
    if (!ra_arena_reserve(b->ar, (void **)&s->textures, &b->tex_cap, s->texture_count + 1, sizeof *s->textures, 8)) {
        ra_fail_nomem(b->err, FMT);
        return -1;
    }
    ra_texture *rt = &s->textures[s->texture_count];
    memset(rt, 0, sizeof *rt);
    rt->name = name_or(f, t->name_index, b->ar, "tex", ti);
    rt->wrap_s = wrap_of(t->wrap_s);
    rt->wrap_t = wrap_of(t->wrap_t >> 8);
    rt->nearest = t->has_filter && t->filter == 0;
    if (t->anim) b->animated_tex++;
    uint8_t *px = NULL;
    if (t->use_palette) {
        const niff_ciimg *ci = &f->geo.ciimgs[t->img_index];
        const niff_palette *pal = &f->geo.palettes[t->palette_index];
        uint8_t(*colors)[4] = ra_malloc((pal->count ? pal->count : 1) * sizeof *colors);
        px = ra_arena_alloc(b->ar, 4ull * ci->width * ci->height);
        if (!colors || !px) {
            ra_free(colors);
            ra_fail_nomem(b->err, FMT);
            return -1;
        }
        for (uint32_t k = 0; k < pal->count; k++) ra_n64_tlut_entry(pal->colors[k], pal->color_type == 1, colors[k]);
        bool ci4 = ci->depth == 4;
        uint32_t bank = ci4 && pal->count > 16 ? t->tlut_bank : 0;
        ra_status rs = ra_n64_decode_ci(ci->words, ci->word_count, ci->width, ci->height, ci4, bank,
                                        (const uint8_t(*)[4])colors, pal->count, px, FMT, ci->offset + 84, b->err);
        ra_free(colors);
        if (rs != RA_OK) return -1;
        rt->width = ci->width;
        rt->height = ci->height;
        rt->source_format = ci4 ? "CI4" : "CI8";
    } else {
        const niff_teximg *im = &f->geo.teximgs[t->img_index];
        size_t n = (size_t)t->img_w * t->img_h;
        px = ra_arena_alloc(b->ar, 4 * n);
        if (!px) {
            ra_fail_nomem(b->err, FMT);
            return -1;
        }
        memcpy(px, im->pixels, 4 * n); /* the reader checked the size */
        const char *fname = NULL;
        int fmt = tex_format(t->type, &fname);
        if (fmt >= 0) ra_n64_quantize(px, n, (ra_n64_format)fmt);
        ra_image_flip_rows(px, t->img_w, t->img_h);
        rt->width = t->img_w;
        rt->height = t->img_h;
        rt->source_format = fname;
    }
    rt->rgba = px;
    uint8_t alpha = 0;
    for (size_t k = 0; k < (size_t)rt->width * rt->height; k++) {
        uint8_t a = px[4 * k + 3];
        if (a == 0) alpha |= 1;
        else if (a != 255) alpha |= 2;
    }
    b->tex_alpha[s->texture_count] = alpha;
    b->tex_map[ti] = (int32_t)s->texture_count;
    return (int32_t)s->texture_count++;
}

/* ---- materials ------------------------------------------------------------------------------------------- */
/* What feeds a Mat's surface colour and alpha (docs/formats/niff.md §9):
 * for MAT_TYPE_NIFF the union of its two colour types' and its two alpha
 * types' bits (VTX 0x1, TRI 0x2, PRIM 0x4, TEX0 0x8; alpha the same
 * x 0x10000; 0xFFFFFFFF: that cycle unused); the alpha types, when they
 * name no source, follow the colour types.  A Mat naming no source, or an
 * N64 combiner Mat (whose four bytes are combiner inputs), takes every
 * source, as before these bits were read. */
enum {
    SRC_SHADE_VTX = 0x1,
    SRC_SHADE_TRI = 0x2,
    SRC_PRIM = 0x4,
    SRC_TEX0 = 0x8,
    SRC_ALL = 0xF
};
static void mat_sources(const niff_mat *m, unsigned *color, unsigned *alpha)
{
    unsigned c = 0, a = 0;
    for (int k = 0; k < 2; k++) {
        if (m->color_type[k] != NIFF_NONE) c |= m->color_type[k] & SRC_ALL;
        if (m->alpha_type[k] != NIFF_NONE) a |= (m->alpha_type[k] >> 16) & SRC_ALL;
    }
    if (m->type != 0 || !c) c = SRC_ALL;
    if (m->type != 0 || !a) a = c;
    *color = c, *alpha = a;
}

/* The scene material of Mat mi on a double-sided or single-sided shape, with
 * its texture or (for triangles without texture coordinates) without. */
static int32_t material_of(gbuild *b, uint32_t mi, bool double_sided, bool textured)
{
    const niff_mat *m = &b->f->geo.mats[mi];
    /* a Tex whose image is in another file: the material goes without it */
    unsigned cs, as;
    mat_sources(m, &cs, &as);
    const bool has_tex = m->tex.n && m->tex.v[0] != NIFF_NONE && ((cs | as) & SRC_TEX0);
    const niff_tex *ext = has_tex && b->f->geo.texs[m->tex.v[0]].external ? &b->f->geo.texs[m->tex.v[0]] : NULL;
    textured = textured && has_tex && !ext;
    int32_t *slot = &b->mat_map[4 * (size_t)mi + 2u * double_sided + textured];
    if (*slot >= 0) return *slot;
    b->external_tex += ext != NULL;
    const char *ext_name = ext ? name_or(b->f, ext->name_index, b->ar, "tex", m->tex.v[0]) : NULL;
    ra_scene *s = b->s;
    int32_t tex = -1;
    if (textured && (tex = texture_of(b, m->tex.v[0])) < 0) return -2;
    if (!ra_arena_reserve(b->ar, (void **)&s->materials, &b->mat_cap, s->material_count + 1, sizeof *s->materials, 8)) {
        ra_fail_nomem(b->err, FMT);
        return -2;
    }
    ra_material *rm = &s->materials[s->material_count];
    memset(rm, 0, sizeof *rm);
    rm->name = name_or(b->f, m->name_index, b->ar, "mat", mi);
    rm->unlit = (m->shade & 0xFu) == 0;
    for (int k = 0; k < 4; k++) {
        /* the prim colour where it feeds the surface; a lit NIFF 2 Mat's diffuse colour (1 unless set) tints it */
        double v = (k < 3 ? cs : as) & SRC_PRIM ? m->prim[k] : 1.0;
        if (k < 3 && !rm->unlit && m->has_diffuse) v *= m->diffuse[k];
        rm->base_color[k] = v < 0 ? 0 : v > 1 ? 1 : v;
    }
    rm->texture = tex;
    rm->double_sided = double_sided;
    rm->alpha_cutoff = 0.5;
    ra_arena *ar = b->ar;
    if (!rm->name || !ra_meta_set_int(ar, &rm->meta, "niff.mat_index", mi) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_type", m->type) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_shade_type", m->shade) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_color_type", m->color_type[0]) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_alpha_type", m->alpha_type[0]) ||
        (m->has_diffuse &&
         !ra_meta_set_vec3(ar, &rm->meta, "niff.diffuse", ra_v3(m->diffuse[0], m->diffuse[1], m->diffuse[2]))) ||
        (ext && (!ext_name || !ra_meta_set_string(ar, &rm->meta, "niff.external_texture", ext_name)))) {
        ra_fail_nomem(b->err, FMT);
        return -2;
    }
    *slot = (int32_t)s->material_count;
    return (int32_t)s->material_count++;
}

/* ---- corners ------------------------------------------------------------------------------------------- */
/* One triangle corner: what identifies its vertex (key: the position's
 * source, then st, normal and colour sources) and its values.  Positions and
 * normals are in the mesh's space: the node's for a TriGroup, the scene
 * root's at rest for a skinned (deformable) shape. */
enum {
    HAS_UV = 1,
    HAS_NV = 2,
    HAS_COL = 4
};
typedef struct cval {
    uint32_t key[8]; /* 0-2 position, 3 st, 4-5 normal, 6-7 colour */
    unsigned has;
    float pos[3], nrm[3], col[4], uv[2];
    uint16_t joint[4];
    float weight[4];
} cval;

typedef struct source source;
struct source {
    gbuild *b;
    uint32_t tri_count;
    void (*corner)(const source *src, uint32_t tri, int c, cval *out);
    /* TriGroup */
    const niff_trigroup *tg;
    const niff_vgroup *grp[NIFF_REF_COUNT];
    /* deformable */
    const niff_deform *d;
    const int32_t *part_node[NIFF_PART_KINDS]; /* per part, per influencing node (at least one): scene node */
    const size_t *part_base[NIFF_PART_KINDS];  /* per part: where its nodes start in part_node */
    const uint16_t *node_joint;                /* scene node -> position in the skin's joints */
    const ra_mat4 *world;                      /* rest world of every scene node */
};

static const niff_vgroup *ref_group(const niff_vgroup *g, uint32_t n, uint32_t idx) { return idx < n ? &g[idx] : NULL; }

/* A usable normal: record i of group g, not (nearly) zero. */
static const float *normal_at(const niff_vgroup *g, uint32_t i)
{
    if (!g || i >= g->count) return NULL;
    const float *v = &g->v[3 * (size_t)i];
    return (double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2] >= 1e-24 ? v : NULL;
}

static void set_normal(cval *out, const float *n, uint32_t src, uint32_t idx)
{
    double len = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
    for (int k = 0; k < 3; k++) out->nrm[k] = (float)(n[k] / len);
    out->key[4] = src;
    out->key[5] = idx;
    out->has |= HAS_NV;
}

static void set_color(cval *out, const niff_vgroup *g, uint32_t i, uint32_t src)
{
    const float *c = &g->v[4 * (size_t)i];
    for (int k = 0; k < 4; k++) out->col[k] = c[k] < 0 ? 0 : c[k] > 1 ? 1 : c[k];
    out->key[6] = src;
    out->key[7] = i;
    out->has |= HAS_COL;
}

static void set_uv(cval *out, const niff_vgroup *st, uint32_t i)
{
    if (!st || i >= st->count) return;
    out->uv[0] = st->v[2 * (size_t)i];
    out->uv[1] = 1.0f - st->v[2 * (size_t)i + 1]; /* v down, from the image's top */
    out->key[3] = i;
    out->has |= HAS_UV;
}

/* A TriGroup corner (RULES.md "Geometry": vertex normal before triangle normal, vertex colour before triangle
 * colour, an index out of its group = absent). */
static void trigroup_corner(const source *src, uint32_t tri, int c, cval *out)
{
    const niff_tri *t = &src->tg->tris[tri];
    const niff_vgroup *const *grp = src->grp;
    memset(out, 0, sizeof *out);
    out->key[0] = t->vtx[c];
    memcpy(out->pos, &grp[NIFF_REF_VTX]->v[3 * (size_t)t->vtx[c]], sizeof out->pos);
    set_uv(out, grp[NIFF_REF_ST], t->st[c]);
    const float *n = normal_at(grp[NIFF_REF_VTX_NV], t->vtx_nv[c]);
    if (n) set_normal(out, n, SRC_VTX, t->vtx_nv[c]);
    else if ((n = normal_at(grp[NIFF_REF_TRI_NV], t->tri_nv))) set_normal(out, n, SRC_TRI, t->tri_nv);
    const niff_vgroup *vc = grp[NIFF_REF_VTX_COLOR], *tc = grp[NIFF_REF_TRI_COLOR];
    if (vc && t->vtx_color[c] < vc->count) set_color(out, vc, t->vtx_color[c], SRC_VTX);
    else if (tc && t->tri_color < tc->count) set_color(out, tc, t->tri_color, SRC_TRI);
}

static int part_kind(uint32_t tag, bool cluster)
{
    if (cluster) return tag == NIFF_TAG_CLUSTER ? NIFF_PART_FULL : -1;
    return tag == NIFF_TAG_FULL_WEIGHTED_PART ? NIFF_PART_FULL
           : tag == NIFF_TAG_WEIGHTED_PART    ? NIFF_PART_WEIGHTED
           : tag == NIFF_TAG_MORPH_PART       ? NIFF_PART_MORPH
                                              : -1;
}

/* A deformable corner: the position each influencing node gives (in its own space) taken to the root at rest,
 * blended by the normalised weights (docs/formats/niff.md §9); the four largest weights are kept. */
static void deform_corner(const source *src, uint32_t tri, int c, cval *out)
{
    const niff_geometry *g = &src->b->f->geo;
    const niff_envtri *t = &src->d->tris[tri];
    const niff_envvtx *v = &t->c[c];
    int k = part_kind(v->part_kind, src->d->cluster); /* checked by the reader */
    const niff_envpart *p = &src->d->parts[k][v->part];
    memset(out, 0, sizeof *out);
    out->key[0] = (uint32_t)k;
    out->key[1] = v->part;
    out->key[2] = v->vtx;
    /* the nodes and weights of this vertex */
    /* a part moved only by other files' nodes stands on the shape's object (part_node holds it once) */
    uint32_t n = k == NIFF_PART_WEIGHTED && p->node_count ? p->node_count : 1;
    double w[64], sum = 0;
    if (n > 64) n = 64;
    for (uint32_t q = 0; q < n; q++) {
        w[q] = 1;
        if (k == NIFF_PART_WEIGHTED) {
            const niff_vgroup *wg = &g->weights[p->weight[q]];
            uint32_t wi = v->weight < wg->count ? v->weight : v->vtx;
            w[q] = wi < wg->count && wg->v[wi] > 0 ? wg->v[wi] : 0;
            if (!p->node_count) w[q] = 1;
        }
        sum += w[q];
    }
    if (!(sum > 0)) w[0] = sum = 1;
    const int32_t *pn = src->part_node[k];
    size_t base = src->part_base[k][v->part];
    double pos[3] = {0, 0, 0}, nrm[3] = {0, 0, 0};
    bool have_n = true;
    for (uint32_t q = 0; q < n; q++) {
        double wq = w[q] / sum;
        int32_t node = pn[base + q];
        const ra_mat4 *m = &src->world[node];
        const float *lp = &g->vtx[p->vtx[q]].v[3 * (size_t)v->vtx];
        ra_vec3 wp = ra_m4_apply_point(m, ra_v3(lp[0], lp[1], lp[2]));
        pos[0] += wq * wp.x, pos[1] += wq * wp.y, pos[2] += wq * wp.z;
        const float *ln = normal_at(ref_group(g->vtx_nv, g->vtx_nv_count, p->vtx_nv[q]), v->vtx_nv);
        if (!ln) {
            have_n = false;
            continue;
        }
        for (int r = 0; r < 3; r++) /* the node's rotation (and scale: renormalised after) */
            nrm[r] += wq * (m->m[r][0] * ln[0] + m->m[r][1] * ln[1] + m->m[r][2] * ln[2]);
    }
    for (int r = 0; r < 3; r++) out->pos[r] = (float)pos[r];
    double nl = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    if (have_n && nl > 1e-12) {
        float fn[3] = {(float)(nrm[0] / nl), (float)(nrm[1] / nl), (float)(nrm[2] / nl)};
        set_normal(out, fn, SRC_VTX, v->vtx_nv);
    }
    set_uv(out, ref_group(g->st, g->st_count, p->st), v->st);
    const niff_vgroup *vc = ref_group(g->vtx_color, g->vtx_color_count, p->vtx_color[0]);
    if (vc && v->vtx_color < vc->count) set_color(out, vc, v->vtx_color, SRC_VTX);
    /* the triangle's own normal and colour where the vertex has none (vertex before triangle, as in a TriGroup):
     * the first TriNvGroup / TriColorGroup of the triangle's part (kind_for_tri, part_for_tri), the normal turned
     * by that part's first node's rest world matrix */
    int tk = part_kind(t->part_kind, src->d->cluster);
    const niff_envpart *tp = tk >= 0 && t->part < src->d->part_count[tk] ? &src->d->parts[tk][t->part] : NULL;
    if (tp && tp->group_count) {
        /* a source per part: equal indices into two parts' groups are different values */
        uint32_t tsrc = SRC_TRI + 2u * ((uint32_t)tk + NIFF_PART_KINDS * t->part);
        const float *tn =
            out->has & HAS_NV ? NULL : normal_at(ref_group(g->tri_nv, g->tri_nv_count, tp->tri_nv[0]), t->tri_nv);
        if (tn) {
            const ra_mat4 *m = &src->world[src->part_node[tk][src->part_base[tk][t->part]]];
            double r3[3];
            for (int r = 0; r < 3; r++) r3[r] = m->m[r][0] * tn[0] + m->m[r][1] * tn[1] + m->m[r][2] * tn[2];
            double tl = sqrt(r3[0] * r3[0] + r3[1] * r3[1] + r3[2] * r3[2]);
            if (tl > 1e-12) {
                float fn[3] = {(float)(r3[0] / tl), (float)(r3[1] / tl), (float)(r3[2] / tl)};
                set_normal(out, fn, tsrc, t->tri_nv);
            }
        }
        const niff_vgroup *tc = ref_group(g->tri_color, g->tri_color_count, tp->tri_color[0]);
        if (!(out->has & HAS_COL) && tc && t->tri_color < tc->count) set_color(out, tc, t->tri_color, tsrc);
    }
    /* the four largest weights, as skin joints */
    uint32_t order[4] = {0, 0, 0, 0}, used = 0;
    bool taken[64] = {false};
    for (uint32_t slot = 0; slot < 4 && slot < n; slot++) {
        int best = -1;
        for (uint32_t q = 0; q < n; q++)
            if (!taken[q] && w[q] > 0 && (best < 0 || w[q] > w[best])) best = (int)q;
        if (best < 0) break;
        taken[best] = true;
        order[used++] = (uint32_t)best;
    }
    double kept = 0;
    for (uint32_t q = 0; q < used; q++) kept += w[order[q]];
    for (uint32_t q = 0; q < used; q++) {
        out->joint[q] = src->node_joint[pn[base + order[q]]];
        out->weight[q] = (float)(w[order[q]] / kept);
    }
}

static uint64_t mix(uint64_t h, uint32_t v)
{
    h ^= v;
    h *= 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* The vertices of pm (distinct corner keys in order of first use) into a new ra_mesh; reverse: each
 * triangle's corners as 0, 2, 1 (a shape that culls its front faces shows the other side). */
static ra_status emit_mesh(gbuild *b, const source *src, const pmesh *pm, uint32_t node, int32_t skin, const char *name,
                           uint32_t shape_index, bool reverse)
{
    ra_scene *s = b->s;
    ra_arena *ar = b->ar;
    size_t corners = 3 * (size_t)pm->count, cap = 16;
    while (cap < 2 * corners) cap *= 2;
    cval *vert = ra_malloc(corners * sizeof *vert);
    int64_t *slot = ra_malloc(cap * sizeof *slot);
    uint32_t *idx = ra_arena_array(ar, corners, sizeof *idx);
    if (!vert || !slot || !idx) {
        ra_free(vert);
        ra_free(slot);
        return ra_fail_nomem(b->err, FMT);
    }
    for (size_t k = 0; k < cap; k++) slot[k] = -1;
    uint32_t nv = 0;
    for (uint32_t k = 0; k < pm->count; k++)
        for (int c = 0; c < 3; c++) {
            cval cv;
            src->corner(src, pm->tris[k], reverse && c ? 3 - c : c, &cv);
            if (!pm->uv) cv.key[3] = 0;
            if (!pm->nv) cv.key[4] = cv.key[5] = 0;
            if (!pm->col) cv.key[6] = cv.key[7] = 0;
            uint64_t h = 0xcbf29ce484222325ull;
            for (int q = 0; q < 8; q++) h = mix(h, cv.key[q]);
            size_t at = (size_t)(h & (cap - 1));
            while (slot[at] >= 0 && memcmp(vert[slot[at]].key, cv.key, sizeof cv.key)) at = (at + 1) & (cap - 1);
            if (slot[at] < 0) {
                vert[nv] = cv;
                slot[at] = nv++;
            }
            idx[3 * (size_t)k + (size_t)c] = (uint32_t)slot[at];
        }
    ra_free(slot);
    ra_mesh *m = &s->meshes[s->mesh_count];
    memset(m, 0, sizeof *m);
    float *pos = ra_arena_array(ar, 3 * (size_t)nv, sizeof *pos);
    float *uv = pm->uv ? ra_arena_array(ar, 2 * (size_t)nv, sizeof *uv) : NULL;
    float *nrm = pm->nv ? ra_arena_array(ar, 3 * (size_t)nv, sizeof *nrm) : NULL;
    float *col = pm->col ? ra_arena_array(ar, 4 * (size_t)nv, sizeof *col) : NULL;
    uint16_t *joints = skin >= 0 ? ra_arena_array(ar, 4 * (size_t)nv, sizeof *joints) : NULL;
    float *weights = skin >= 0 ? ra_arena_array(ar, 4 * (size_t)nv, sizeof *weights) : NULL;
    if (!pos || (pm->uv && !uv) || (pm->nv && !nrm) || (pm->col && !col) || (skin >= 0 && (!joints || !weights))) {
        ra_free(vert);
        return ra_fail_nomem(b->err, FMT);
    }
    bool translucent = false;
    for (uint32_t v = 0; v < nv; v++) {
        const cval *cv = &vert[v];
        memcpy(&pos[3 * (size_t)v], cv->pos, sizeof cv->pos);
        if (uv) memcpy(&uv[2 * (size_t)v], cv->uv, sizeof cv->uv);
        if (nrm) memcpy(&nrm[3 * (size_t)v], cv->nrm, sizeof cv->nrm);
        if (col) {
            float *o = &col[4 * (size_t)v];
            for (int k = 0; k < 4; k++) o[k] = (k < 3 ? pm->col_rgb : pm->col_alpha) ? cv->col[k] : 1.0f;
            translucent = translucent || o[3] < 1;
        }
        if (joints) {
            memcpy(&joints[4 * (size_t)v], cv->joint, sizeof cv->joint);
            memcpy(&weights[4 * (size_t)v], cv->weight, sizeof cv->weight);
        }
    }
    ra_free(vert);
    if (translucent && pm->material >= 0) b->mat_vcol_alpha[pm->material] = true;
    m->name = name;
    m->node = node;
    m->material = pm->material;
    m->vertex_count = nv;
    m->positions = pos;
    m->normals = nrm;
    m->colors = col;
    m->uvs = uv;
    m->indices = idx;
    m->triangle_count = pm->count;
    m->skin = skin;
    m->joints = joints;
    m->weights = weights;
    if (!ra_meta_set_int(ar, &m->meta, "niff.shape_index", shape_index)) return ra_fail_nomem(b->err, FMT);
    s->mesh_count++;
    return RA_OK;
}

/* Object oi's shape (its triangles through src) as meshes on node. */
static ra_status build_meshes(gbuild *b, uint32_t oi, const source *src, uint32_t node, int32_t skin)
{
    const niff_file *f = b->f;
    const niff_geometry *g = &f->geo;
    const niff_obj *o = &f->objs[oi];
    const niff_shape *sh = &g->shapes[o->shape_link];
    uint32_t ntri = src->tri_count;
    /* shape_type's cull bits (CULL_BACK 0x10, CULL_FRONT 0x20): none, both faces drawn (double-sided);
     * CULL_FRONT alone, the back faces drawn (the corners reversed, single-sided: the normals stay, as the
     * N64 lights by them whichever side shows); CULL_BOTH, none drawn (kept single-sided, a warning) */
    uint32_t cull = sh->type & 0x30u;
    bool double_sided = cull == 0, reverse = cull == 0x20u;
    if (cull == 0x30u && ntri) b->cull_both++;
    /* the Mat of every triangle: first Part that lists it, else the Shape's, else the Obj's */
    uint32_t *tri_mat = ra_malloc((size_t)ntri * sizeof *tri_mat);
    uint32_t *order = ra_malloc((size_t)ntri * sizeof *order);
    pmesh *pms = NULL;
    size_t npm = 0, pm_cap = 0;
    /* each group by its key: (scene material + 1) * 8 + attribute bits -> group + 1 (a scan of the groups per
     * triangle cost their product) */
    uint32_t *group_of = NULL;
    size_t group_cap = 0;
    ra_status rs = tri_mat && order ? RA_OK : ra_fail_nomem(b->err, FMT);
    for (uint32_t t = 0; rs == RA_OK && t < ntri; t++) tri_mat[t] = NIFF_USE_SHAPE_MAT;
    for (uint32_t k = 0; rs == RA_OK && k < sh->part.n; k++) {
        const niff_part *p = &g->parts[sh->part.v[k]];
        for (uint32_t j = 0; rs == RA_OK && j < p->tri.n; j++) {
            uint32_t t = p->tri.v[j];
            if (t >= ntri)
                rs = ra_fail(b->err, RA_ERR_BAD_VALUE, FMT, p->offset + 36 + 4ull * j, "tri_index",
                             "triangle %u, but the shape has %u", t, ntri);
            else if (tri_mat[t] == NIFF_USE_SHAPE_MAT && p->mat_index != NIFF_USE_SHAPE_MAT &&
                     p->mat_index != NIFF_NONE)
                tri_mat[t] = p->mat_index;
        }
    }
    /* group the triangles by (material, attributes all three corners have) */
    for (uint32_t t = 0; rs == RA_OK && t < ntri; t++) {
        uint32_t mi = tri_mat[t];
        if (mi == NIFF_USE_SHAPE_MAT || mi == NIFF_NONE) mi = sh->mat_link != NIFF_NONE ? sh->mat_link : o->mat_link;
        unsigned has = HAS_UV | HAS_NV | HAS_COL;
        for (int c = 0; c < 3; c++) {
            cval cv;
            src->corner(src, t, c, &cv);
            has &= cv.has;
        }
        /* the stored colours only where the Mat's colour or alpha takes them */
        unsigned cs = SRC_ALL, as = SRC_ALL;
        if (mi != NIFF_NONE) mat_sources(&g->mats[mi], &cs, &as);
        const unsigned shade = SRC_SHADE_VTX | SRC_SHADE_TRI;
        if (!((cs | as) & shade)) has &= ~(unsigned)HAS_COL;
        int32_t mat = -1;
        if (mi != NIFF_NONE && (mat = material_of(b, mi, double_sided, has & HAS_UV)) < -1) {
            rs = b->err->code;
            break;
        }
        size_t key = ((size_t)(mat + 1) << 3) | has;
        if (key >= group_cap) {
            size_t cap = group_cap ? group_cap : 64;
            while (cap <= key) cap *= 2;
            uint32_t *g2 = ra_realloc(group_of, cap * sizeof *g2);
            if (!g2) {
                rs = ra_fail_nomem(b->err, FMT);
                break;
            }
            memset(g2 + group_cap, 0, (cap - group_cap) * sizeof *g2);
            group_of = g2, group_cap = cap;
        }
        size_t k = group_of[key] ? group_of[key] - 1 : npm;
        if (k == npm) {
            group_of[key] = (uint32_t)npm + 1;
            if (npm == pm_cap) {
                pmesh *np = ra_realloc(pms, (pm_cap = pm_cap ? 2 * pm_cap : 4) * sizeof *np);
                if (!np) {
                    rs = ra_fail_nomem(b->err, FMT);
                    break;
                }
                pms = np;
            }
            pms[npm++] = (pmesh){
                mat, !!(has & HAS_UV), !!(has & HAS_NV), !!(has & HAS_COL), (cs & shade) != 0, (as & shade) != 0, NULL,
                0};
        }
        order[t] = (uint32_t)k;
        pms[k].count++;
    }
    /* each group's triangles in file order */
    uint32_t *all = rs == RA_OK ? ra_malloc((size_t)ntri * sizeof *all) : NULL;
    if (rs == RA_OK && !all) rs = ra_fail_nomem(b->err, FMT);
    if (rs == RA_OK) {
        uint32_t at = 0;
        for (size_t k = 0; k < npm; k++) {
            pms[k].tris = all + at;
            at += pms[k].count;
            pms[k].count = 0;
        }
        for (uint32_t t = 0; t < ntri; t++) pms[order[t]].tris[pms[order[t]].count++] = t;
    }
    ra_scene *s = b->s;
    if (rs == RA_OK &&
        !ra_arena_reserve(b->ar, (void **)&s->meshes, &b->mesh_cap, s->mesh_count + npm, sizeof *s->meshes, 8))
        rs = ra_fail_nomem(b->err, FMT);
    const char *name = rs == RA_OK ? name_or(f, sh->name_index, b->ar, "shape", o->shape_link) : NULL;
    if (rs == RA_OK && !name) rs = ra_fail_nomem(b->err, FMT);
    for (size_t k = 0; rs == RA_OK && k < npm; k++)
        rs = emit_mesh(b, src, &pms[k], node, skin, name, o->shape_link, reverse);
    ra_free(all);
    ra_free(group_of);
    ra_free(pms);
    ra_free(order);
    ra_free(tri_mat);
    return rs;
}

static ra_status build_trigroup(gbuild *b, uint32_t oi, uint32_t node)
{
    const niff_geometry *g = &b->f->geo;
    const niff_shape *sh = &g->shapes[b->f->objs[oi].shape_link];
    if (sh->tri_link == NIFF_NONE) return RA_OK;
    const niff_trigroup *tg = &g->trigroups[sh->tri_link];
    if (!tg->tri_num) return RA_OK;
    if (tg->animated) b->animated_shapes++;
    source src = {.b = b, .tri_count = tg->tri_num, .corner = trigroup_corner, .tg = tg};
    src.grp[NIFF_REF_VTX] = ref_group(g->vtx, g->vtx_count, tg->ref[NIFF_REF_VTX]);
    src.grp[NIFF_REF_TRI_COLOR] = ref_group(g->tri_color, g->tri_color_count, tg->ref[NIFF_REF_TRI_COLOR]);
    src.grp[NIFF_REF_VTX_COLOR] = ref_group(g->vtx_color, g->vtx_color_count, tg->ref[NIFF_REF_VTX_COLOR]);
    src.grp[NIFF_REF_TRI_NV] = ref_group(g->tri_nv, g->tri_nv_count, tg->ref[NIFF_REF_TRI_NV]);
    src.grp[NIFF_REF_VTX_NV] = ref_group(g->vtx_nv, g->vtx_nv_count, tg->ref[NIFF_REF_VTX_NV]);
    src.grp[NIFF_REF_ST] = ref_group(g->st, g->st_count, tg->ref[NIFF_REF_ST]);
    return build_meshes(b, oi, &src, node, -1);
}

/* The scene node of an influencing node (kind: a list tag), or -1 (another file's). */
static int32_t influence_node(const gbuild *b, uint32_t kind, uint32_t index)
{
    const niff_file *f = b->f;
    if (kind == NIFF_NONE || index == NIFF_NONE) return -1;
    uint32_t item = index;
    if (kind != NIFF_TAG_OBJ_LIST) {
        item += f->obj_count;
        uint32_t k = kind == NIFF_TAG_CHAIN_ROOT_LIST ? NIFF_CHAIN_ROOT
                     : kind == NIFF_TAG_JOINT_LIST    ? NIFF_CHAIN_JOINT
                                                      : NIFF_CHAIN_EFFECTOR;
        for (uint32_t j = 0; j < k; j++) item += f->chain_count[j];
    }
    return b->obj_node[item];
}

/* An Envelope or ClusterShape: a skin whose joints are the nodes that move its vertices, and skinned meshes on the
 * root (their vertices at rest in the root's space). */
static ra_status build_deform(gbuild *b, uint32_t oi, uint32_t node)
{
    const niff_file *f = b->f;
    const niff_geometry *g = &f->geo;
    const niff_shape *sh = &g->shapes[f->objs[oi].shape_link];
    if (sh->tri_link == NIFF_NONE) return RA_OK;
    bool cluster = sh->geometry_kind == NIFF_TAG_CLUSTER_SHAPE;
    const niff_deform *d = cluster ? &g->clusters[sh->tri_link] : &g->envelopes[sh->tri_link];
    if (!d->tri_count) return RA_OK;
    ra_scene *s = b->s;
    size_t nodes = s->node_count;
    source src = {.b = b, .tri_count = d->tri_count, .corner = deform_corner, .d = d, .world = b->world};
    int32_t *pn[NIFF_PART_KINDS] = {NULL, NULL, NULL};
    size_t *pb[NIFF_PART_KINDS] = {NULL, NULL, NULL};
    uint16_t *node_joint = ra_malloc(nodes * sizeof *node_joint);
    uint32_t *joints = ra_malloc(nodes * sizeof *joints);
    ra_status rs = node_joint && joints ? RA_OK : ra_fail_nomem(b->err, FMT);
    size_t njoints = 0;
    for (size_t n = 0; rs == RA_OK && n < nodes; n++) node_joint[n] = UINT16_MAX;
    for (uint32_t k = 0; rs == RA_OK && k < NIFF_PART_KINDS; k++) {
        size_t total = 0;
        for (uint32_t i = 0; i < d->part_count[k]; i++) total += d->parts[k][i].node_count + 1u;
        pn[k] = ra_malloc(total * sizeof *pn[k] + 1);
        pb[k] = ra_malloc((d->part_count[k] + 1u) * sizeof *pb[k]);
        if (!pn[k] || !pb[k]) {
            rs = ra_fail_nomem(b->err, FMT);
            break;
        }
        size_t at = 0;
        for (uint32_t i = 0; i < d->part_count[k] && rs == RA_OK; i++) {
            const niff_envpart *p = &d->parts[k][i];
            if (p->external || k == NIFF_PART_MORPH) b->approximated_parts++;
            pb[k][i] = at;
            /* the nodes that move the part's vertices: a morph part's node 0 only (table 0 is in its space) */
            uint32_t count = k == NIFF_PART_MORPH || !p->node_count ? 1 : p->node_count;
            for (uint32_t q = 0; q < count; q++) {
                int32_t nd = q < p->node_count ? influence_node(b, p->node_kind[q], p->node_index[q]) : -1;
                if (nd < 0) nd = (int32_t)node, b->approximated_parts++; /* another file's node: the shape's */
                if (node_joint[nd] == UINT16_MAX) {
                    if (njoints == UINT16_MAX) {
                        rs = ra_fail(b->err, RA_ERR_LIMIT, FMT, p->offset, "transform_node_index",
                                     "a deformable shape moved by more than %u nodes", UINT16_MAX - 1);
                        break;
                    }
                    node_joint[nd] = (uint16_t)njoints;
                    joints[njoints++] = (uint32_t)nd;
                }
                pn[k][at++] = nd;
            }
        }
        src.part_node[k] = pn[k];
        src.part_base[k] = pb[k];
    }
    src.node_joint = node_joint;
    int32_t skin = -1;
    if (rs == RA_OK) {
        uint32_t *jv = ra_arena_array(b->ar, njoints ? njoints : 1, sizeof *jv);
        if (!jv || !ra_arena_reserve(b->ar, (void **)&s->skins, &b->skin_cap, s->skin_count + 1, sizeof *s->skins, 8)) {
            rs = ra_fail_nomem(b->err, FMT);
        } else {
            memcpy(jv, joints, njoints * sizeof *jv);
            ra_skin *sk = &s->skins[s->skin_count];
            sk->name = name_or(f, sh->name_index, b->ar, "shape", f->objs[oi].shape_link);
            sk->skeleton = -1;
            sk->joints = jv;
            sk->joint_count = njoints;
            skin = (int32_t)s->skin_count++;
            if (!sk->name) rs = ra_fail_nomem(b->err, FMT);
        }
    }
    if (rs == RA_OK) rs = build_meshes(b, oi, &src, 0, skin);
    for (uint32_t k = 0; k < NIFF_PART_KINDS; k++) ra_free(pn[k]), ra_free(pb[k]);
    ra_free(node_joint);
    ra_free(joints);
    return rs;
}

/* Alpha modes once every mesh is known (RULES.md "Geometry", Materials). */
static void alpha_modes(gbuild *b)
{
    for (size_t i = 0; i < b->s->material_count; i++) {
        ra_material *m = &b->s->materials[i];
        uint8_t ta = m->texture >= 0 ? b->tex_alpha[m->texture] : 0;
        if (m->base_color[3] < 1 || b->mat_vcol_alpha[i] || (ta & 2)) m->alpha_mode = RA_ALPHA_BLEND;
        else if (ta & 1) m->alpha_mode = RA_ALPHA_MASK;
        else m->alpha_mode = RA_ALPHA_OPAQUE;
    }
}

static bool unique_names(ra_arena *ar, void *items, size_t n, size_t stride, size_t name_off)
{
    if (!n) return true;
    const char **names = ra_malloc(n * sizeof *names);
    if (!names) return false;
    for (size_t i = 0; i < n; i++) memcpy(&names[i], (char *)items + i * stride + name_off, sizeof *names);
    bool ok = ra_names_make_unique(ar, names, n, NULL, 0);
    for (size_t i = 0; ok && i < n; i++) memcpy((char *)items + i * stride + name_off, &names[i], sizeof *names);
    ra_free(names);
    return ok;
}

ra_status niff_build_geometry(ra_document *doc, const niff_file *f, const int32_t *obj_node, ra_error *err)
{
    const niff_geometry *g = &f->geo;
    gbuild b = {.doc = doc, .f = f, .s = &doc->scene, .ar = doc->arena, .err = err, .obj_node = obj_node};
    size_t nm = 4 * (size_t)g->mat_count, nt = g->tex_count;
    b.mat_map = ra_malloc((nm ? nm : 1) * sizeof *b.mat_map);
    b.tex_map = ra_malloc((nt ? nt : 1) * sizeof *b.tex_map);
    b.tex_alpha = ra_calloc(nt ? nt : 1, 1);
    b.mat_vcol_alpha = ra_calloc(nm ? nm : 1, sizeof *b.mat_vcol_alpha);
    ra_scene *s = b.s;
    b.world = ra_malloc((s->node_count ? s->node_count : 1) * sizeof *b.world);
    b.skin_cap = s->skin_count;
    ra_status rs =
        b.mat_map && b.tex_map && b.tex_alpha && b.mat_vcol_alpha && b.world ? RA_OK : ra_fail_nomem(err, FMT);
    for (size_t n = 0; rs == RA_OK && n < s->node_count; n++)
        b.world[n] = n ? ra_m4_mul(&b.world[s->nodes[n].parent], &s->nodes[n].transform) : s->nodes[0].transform;
    for (size_t i = 0; rs == RA_OK && i < nm; i++) b.mat_map[i] = -1;
    for (size_t i = 0; rs == RA_OK && i < nt; i++) b.tex_map[i] = -1;
    for (uint32_t i = 0; rs == RA_OK && i < f->obj_count; i++) {
        const niff_obj *o = &f->objs[i];
        if (o->state == NIFF_OBJ_CLEAR || o->shape_link == NIFF_NONE || obj_node[i] < 0) continue;
        uint32_t kind = f->geo.shapes[o->shape_link].geometry_kind;
        rs = kind == NIFF_TAG_TRI_GROUP ? build_trigroup(&b, i, (uint32_t)obj_node[i])
                                        : build_deform(&b, i, (uint32_t)obj_node[i]);
    }
    if (rs == RA_OK) alpha_modes(&b);
    if (rs == RA_OK &&
        (!unique_names(b.ar, s->meshes, s->mesh_count, sizeof *s->meshes, offsetof(ra_mesh, name)) ||
         !unique_names(b.ar, s->skins, s->skin_count, sizeof *s->skins, offsetof(ra_skin, name)) ||
         !unique_names(b.ar, s->materials, s->material_count, sizeof *s->materials, offsetof(ra_material, name)) ||
         !unique_names(b.ar, s->textures, s->texture_count, sizeof *s->textures, offsetof(ra_texture, name))))
        rs = ra_fail_nomem(err, FMT);
    ra_free(b.mat_map);
    ra_free(b.tex_map);
    ra_free(b.tex_alpha);
    ra_free(b.mat_vcol_alpha);
    ra_free(b.world);
    if (rs != RA_OK) return rs;
    if (b.animated_shapes)
        ra_scene_warn(s, "%zu shape(s) change vertices over time (vertex animation): their first frame is exported",
                      b.animated_shapes);
    if (b.approximated_parts)
        ra_scene_warn(s,
                      "%zu deformable part(s) approximated: morph parts use their first table, nodes of other files "
                      "the shape's object",
                      b.approximated_parts);
    if (b.animated_tex) ra_scene_warn(s, "%zu animated texture(s): their first image is exported", b.animated_tex);
    if (b.external_tex)
        ra_scene_warn(s,
                      "%zu material(s) use a texture whose image is in another file (not read): they are exported "
                      "untextured, the texture's name in their metadata (niff.external_texture)",
                      b.external_tex);
    if (b.cull_both)
        ra_scene_warn(s,
                      "%zu shape(s) cull both faces (shape_type CULL_BOTH): the game draws none of their triangles; "
                      "they are exported single-sided",
                      b.cull_both);
    return RA_OK;
}
