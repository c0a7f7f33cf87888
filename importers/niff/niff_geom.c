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

typedef struct corner {
    uint32_t vtx, st, n_src, n_idx, c_src, c_idx; /* st, n_*, c_*: only where the mesh has the attribute */
} corner;

/* One mesh under construction: a shape's triangles of one group key. */
typedef struct pmesh {
    int32_t material;
    bool uv, nv, col;
    uint32_t *tris; /* indices into the TriGroup */
    uint32_t count;
} pmesh;

typedef struct gbuild {
    ra_document *doc;
    const niff_file *f;
    ra_scene *s;
    ra_arena *ar;
    ra_error *err;
    int32_t *mat_map;     /* [4 * mat_count]: (Mat, double-sided, textured) -> scene material */
    int32_t *tex_map;     /* [tex_count] -> scene texture */
    uint8_t *tex_alpha;   /* per scene texture: 1 = has alpha 0, 2 = has alpha strictly between 0 and 255 */
    bool *mat_vcol_alpha; /* per scene material: a vertex colour of a mesh using it has alpha < 1 */
    size_t mesh_cap, mat_cap, tex_cap;
    size_t animated_shapes, deformable_shapes, animated_tex;
} gbuild;

static bool grow(ra_arena *ar, void **v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need) n *= 2;
    void *p = ra_arena_grow(ar, *v, *cap, n, size);
    if (!p) return false;
    *v = p;
    *cap = n;
    return true;
}

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
    if (!grow(b->ar, (void **)&s->textures, &b->tex_cap, s->texture_count + 1, sizeof *s->textures)) {
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
/* The scene material of Mat mi on a double-sided or single-sided shape, with
 * its texture or (for triangles without texture coordinates) without. */
static int32_t material_of(gbuild *b, uint32_t mi, bool double_sided, bool textured)
{
    const niff_mat *m = &b->f->geo.mats[mi];
    textured = textured && m->tex.n && m->tex.v[0] != NIFF_NONE;
    int32_t *slot = &b->mat_map[4 * (size_t)mi + 2u * double_sided + textured];
    if (*slot >= 0) return *slot;
    ra_scene *s = b->s;
    int32_t tex = -1;
    if (textured && (tex = texture_of(b, m->tex.v[0])) < 0) return -2;
    if (!grow(b->ar, (void **)&s->materials, &b->mat_cap, s->material_count + 1, sizeof *s->materials)) {
        ra_fail_nomem(b->err, FMT);
        return -2;
    }
    ra_material *rm = &s->materials[s->material_count];
    memset(rm, 0, sizeof *rm);
    rm->name = name_or(b->f, m->name_index, b->ar, "mat", mi);
    for (int k = 0; k < 4; k++) rm->base_color[k] = m->prim[k] < 0 ? 0 : m->prim[k] > 1 ? 1 : m->prim[k];
    rm->texture = tex;
    rm->double_sided = double_sided;
    rm->unlit = (m->shade & 0xFu) == 0;
    rm->alpha_cutoff = 0.5;
    ra_arena *ar = b->ar;
    if (!rm->name || !ra_meta_set_int(ar, &rm->meta, "niff.mat_index", mi) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_type", m->type) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_shade_type", m->shade) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_color_type", m->color_type[0]) ||
        !ra_meta_set_int(ar, &rm->meta, "niff.mat_alpha_type", m->alpha_type[0]) ||
        (m->has_diffuse &&
         !ra_meta_set_vec3(ar, &rm->meta, "niff.diffuse", ra_v3(m->diffuse[0], m->diffuse[1], m->diffuse[2])))) {
        ra_fail_nomem(b->err, FMT);
        return -2;
    }
    *slot = (int32_t)s->material_count;
    return (int32_t)s->material_count++;
}

/* ---- one shape ------------------------------------------------------------------------------------------ */
static const niff_vgroup *ref_group(const niff_vgroup *g, uint32_t n, uint32_t idx) { return idx < n ? &g[idx] : NULL; }

static bool vec_ok(const niff_vgroup *g, uint32_t i)
{
    if (!g || i >= g->count) return false;
    const float *v = &g->v[3 * (size_t)i];
    return (double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2] >= 1e-24;
}

/* Corner c of triangle t: which attributes it has (bits 1 uv, 2 normal, 4 colour) and their sources. */
static unsigned corner_of(const niff_tri *t, int c, const niff_vgroup *const grp[NIFF_REF_COUNT], corner *out)
{
    unsigned has = 0;
    memset(out, 0, sizeof *out);
    out->vtx = t->vtx[c];
    const niff_vgroup *st = grp[NIFF_REF_ST];
    if (st && t->st[c] < st->count) has |= 1, out->st = t->st[c];
    if (vec_ok(grp[NIFF_REF_VTX_NV], t->vtx_nv[c])) has |= 2, out->n_src = SRC_VTX, out->n_idx = t->vtx_nv[c];
    else if (vec_ok(grp[NIFF_REF_TRI_NV], t->tri_nv)) has |= 2, out->n_src = SRC_TRI, out->n_idx = t->tri_nv;
    const niff_vgroup *vc = grp[NIFF_REF_VTX_COLOR], *tc = grp[NIFF_REF_TRI_COLOR];
    if (vc && t->vtx_color[c] < vc->count) has |= 4, out->c_src = SRC_VTX, out->c_idx = t->vtx_color[c];
    else if (tc && t->tri_color < tc->count) has |= 4, out->c_src = SRC_TRI, out->c_idx = t->tri_color;
    return has;
}

static uint64_t mix(uint64_t h, uint32_t v)
{
    h ^= v;
    h *= 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* The vertices of pm (distinct corner tuples in order of first use) into a new ra_mesh. */
static ra_status emit_mesh(gbuild *b, const niff_trigroup *tg, const niff_vgroup *const grp[NIFF_REF_COUNT],
                           const pmesh *pm, uint32_t node, const char *name, uint32_t shape_index)
{
    ra_scene *s = b->s;
    ra_arena *ar = b->ar;
    size_t corners = 3 * (size_t)pm->count, cap = 16;
    while (cap < 2 * corners) cap *= 2;
    corner *vert = ra_malloc(corners * sizeof *vert);
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
            corner cn;
            corner_of(&tg->tris[pm->tris[k]], c, grp, &cn);
            if (!pm->uv) cn.st = 0;
            if (!pm->nv) cn.n_src = cn.n_idx = 0;
            if (!pm->col) cn.c_src = cn.c_idx = 0;
            uint64_t h = 0xcbf29ce484222325ull;
            h = mix(mix(mix(mix(mix(mix(h, cn.vtx), cn.st), cn.n_src), cn.n_idx), cn.c_src), cn.c_idx);
            size_t at = (size_t)(h & (cap - 1));
            while (slot[at] >= 0 && memcmp(&vert[slot[at]], &cn, sizeof cn)) at = (at + 1) & (cap - 1);
            if (slot[at] < 0) {
                vert[nv] = cn;
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
    if (!pos || (pm->uv && !uv) || (pm->nv && !nrm) || (pm->col && !col)) {
        ra_free(vert);
        return ra_fail_nomem(b->err, FMT);
    }
    bool translucent = false;
    for (uint32_t v = 0; v < nv; v++) {
        const corner *cn = &vert[v];
        memcpy(&pos[3 * (size_t)v], &grp[NIFF_REF_VTX]->v[3 * (size_t)cn->vtx], 3 * sizeof(float));
        if (uv) {
            const float *st = &grp[NIFF_REF_ST]->v[2 * (size_t)cn->st];
            uv[2 * (size_t)v] = st[0];
            uv[2 * (size_t)v + 1] = 1.0f - st[1];
        }
        if (nrm) {
            const niff_vgroup *g = grp[cn->n_src == SRC_VTX ? NIFF_REF_VTX_NV : NIFF_REF_TRI_NV];
            const float *n = &g->v[3 * (size_t)cn->n_idx];
            double len = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
            for (int k = 0; k < 3; k++) nrm[3 * (size_t)v + (size_t)k] = (float)(n[k] / len);
        }
        if (col) {
            const niff_vgroup *g = grp[cn->c_src == SRC_VTX ? NIFF_REF_VTX_COLOR : NIFF_REF_TRI_COLOR];
            const float *c = &g->v[4 * (size_t)cn->c_idx];
            for (int k = 0; k < 4; k++) {
                float x = c[k] < 0 ? 0 : c[k] > 1 ? 1 : c[k];
                col[4 * (size_t)v + (size_t)k] = x;
            }
            translucent = translucent || col[4 * (size_t)v + 3] < 1;
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
    m->skin = -1;
    if (!ra_meta_set_int(ar, &m->meta, "niff.shape_index", shape_index)) return ra_fail_nomem(b->err, FMT);
    s->mesh_count++;
    return RA_OK;
}

/* Object oi's shape as meshes on node. */
static ra_status build_shape(gbuild *b, uint32_t oi, uint32_t node)
{
    const niff_file *f = b->f;
    const niff_geometry *g = &f->geo;
    const niff_obj *o = &f->objs[oi];
    const niff_shape *sh = &g->shapes[o->shape_link];
    if (sh->geometry_kind != NIFF_TAG_TRI_GROUP) {
        b->deformable_shapes++;
        return RA_OK;
    }
    if (sh->tri_link == NIFF_NONE) return RA_OK;
    const niff_trigroup *tg = &g->trigroups[sh->tri_link];
    if (!tg->tri_num) return RA_OK;
    if (tg->animated) b->animated_shapes++;
    const niff_vgroup *grp[NIFF_REF_COUNT] = {ref_group(g->vtx, g->vtx_count, tg->ref[NIFF_REF_VTX]),
                                              ref_group(g->tri_color, g->tri_color_count, tg->ref[NIFF_REF_TRI_COLOR]),
                                              ref_group(g->vtx_color, g->vtx_color_count, tg->ref[NIFF_REF_VTX_COLOR]),
                                              ref_group(g->tri_nv, g->tri_nv_count, tg->ref[NIFF_REF_TRI_NV]),
                                              ref_group(g->vtx_nv, g->vtx_nv_count, tg->ref[NIFF_REF_VTX_NV]),
                                              ref_group(g->st, g->st_count, tg->ref[NIFF_REF_ST])};
    bool double_sided = !(sh->type & 0x10u);
    /* the Mat of every triangle: first Part that lists it, else the Shape's, else the Obj's */
    uint32_t *tri_mat = ra_malloc((size_t)tg->tri_num * sizeof *tri_mat);
    uint32_t *order = ra_malloc((size_t)tg->tri_num * sizeof *order);
    pmesh *pms = NULL;
    size_t npm = 0, pm_cap = 0;
    ra_status rs = tri_mat && order ? RA_OK : ra_fail_nomem(b->err, FMT);
    for (uint32_t t = 0; rs == RA_OK && t < tg->tri_num; t++) tri_mat[t] = NIFF_USE_SHAPE_MAT;
    for (uint32_t k = 0; rs == RA_OK && k < sh->part.n; k++) {
        const niff_part *p = &g->parts[sh->part.v[k]];
        for (uint32_t j = 0; rs == RA_OK && j < p->tri.n; j++) {
            uint32_t t = p->tri.v[j];
            if (t >= tg->tri_num)
                rs = ra_fail(b->err, RA_ERR_BAD_VALUE, FMT, p->offset + 36 + 4ull * j, "tri_index",
                             "triangle %u, but the shape's TriGroup has %u", t, tg->tri_num);
            else if (tri_mat[t] == NIFF_USE_SHAPE_MAT && p->mat_index != NIFF_USE_SHAPE_MAT) tri_mat[t] = p->mat_index;
        }
    }
    /* group the triangles by (material, attributes) */
    for (uint32_t t = 0; rs == RA_OK && t < tg->tri_num; t++) {
        uint32_t mi = tri_mat[t];
        if (mi == NIFF_USE_SHAPE_MAT || mi == NIFF_NONE) mi = sh->mat_link != NIFF_NONE ? sh->mat_link : o->mat_link;
        unsigned has = 7;
        for (int c = 0; c < 3; c++) {
            corner cn;
            has &= corner_of(&tg->tris[t], c, grp, &cn);
        }
        int32_t mat = -1;
        if (mi != NIFF_NONE && (mat = material_of(b, mi, double_sided, has & 1)) < -1) {
            rs = b->err->code;
            break;
        }
        size_t k = 0;
        while (k < npm && !(pms[k].material == mat && pms[k].uv == !!(has & 1) && pms[k].nv == !!(has & 2) &&
                            pms[k].col == !!(has & 4)))
            k++;
        if (k == npm) {
            if (npm == pm_cap) {
                pmesh *np = ra_realloc(pms, (pm_cap = pm_cap ? 2 * pm_cap : 4) * sizeof *np);
                if (!np) {
                    rs = ra_fail_nomem(b->err, FMT);
                    break;
                }
                pms = np;
            }
            pms[npm++] = (pmesh){mat, !!(has & 1), !!(has & 2), !!(has & 4), NULL, 0};
        }
        order[t] = (uint32_t)k;
        pms[k].count++;
    }
    /* each group's triangles in file order */
    uint32_t *all = rs == RA_OK ? ra_malloc((size_t)tg->tri_num * sizeof *all) : NULL;
    if (rs == RA_OK && !all) rs = ra_fail_nomem(b->err, FMT);
    if (rs == RA_OK) {
        uint32_t at = 0;
        for (size_t k = 0; k < npm; k++) {
            pms[k].tris = all + at;
            at += pms[k].count;
            pms[k].count = 0;
        }
        for (uint32_t t = 0; t < tg->tri_num; t++) pms[order[t]].tris[pms[order[t]].count++] = t;
    }
    ra_scene *s = b->s;
    if (rs == RA_OK && !grow(b->ar, (void **)&s->meshes, &b->mesh_cap, s->mesh_count + npm, sizeof *s->meshes))
        rs = ra_fail_nomem(b->err, FMT);
    const char *name = rs == RA_OK ? name_or(f, sh->name_index, b->ar, "shape", o->shape_link) : NULL;
    if (rs == RA_OK && !name) rs = ra_fail_nomem(b->err, FMT);
    for (size_t k = 0; rs == RA_OK && k < npm; k++) rs = emit_mesh(b, tg, grp, &pms[k], node, name, o->shape_link);
    ra_free(all);
    ra_free(pms);
    ra_free(order);
    ra_free(tri_mat);
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
    gbuild b = {.doc = doc, .f = f, .s = &doc->scene, .ar = doc->arena, .err = err};
    size_t nm = 4 * (size_t)g->mat_count, nt = g->tex_count;
    b.mat_map = ra_malloc((nm ? nm : 1) * sizeof *b.mat_map);
    b.tex_map = ra_malloc((nt ? nt : 1) * sizeof *b.tex_map);
    b.tex_alpha = ra_calloc(nt ? nt : 1, 1);
    b.mat_vcol_alpha = ra_calloc(nm ? nm : 1, sizeof *b.mat_vcol_alpha);
    ra_status rs = b.mat_map && b.tex_map && b.tex_alpha && b.mat_vcol_alpha ? RA_OK : ra_fail_nomem(err, FMT);
    for (size_t i = 0; rs == RA_OK && i < nm; i++) b.mat_map[i] = -1;
    for (size_t i = 0; rs == RA_OK && i < nt; i++) b.tex_map[i] = -1;
    for (uint32_t i = 0; rs == RA_OK && i < f->obj_count; i++) {
        const niff_obj *o = &f->objs[i];
        if (o->state == NIFF_OBJ_CLEAR || o->shape_link == NIFF_NONE || obj_node[i] < 0) continue;
        rs = build_shape(&b, i, (uint32_t)obj_node[i]);
    }
    if (rs == RA_OK) alpha_modes(&b);
    ra_scene *s = b.s;
    if (rs == RA_OK &&
        (!unique_names(b.ar, s->meshes, s->mesh_count, sizeof *s->meshes, offsetof(ra_mesh, name)) ||
         !unique_names(b.ar, s->materials, s->material_count, sizeof *s->materials, offsetof(ra_material, name)) ||
         !unique_names(b.ar, s->textures, s->texture_count, sizeof *s->textures, offsetof(ra_texture, name))))
        rs = ra_fail_nomem(err, FMT);
    ra_free(b.mat_map);
    ra_free(b.tex_map);
    ra_free(b.tex_alpha);
    ra_free(b.mat_vcol_alpha);
    if (rs != RA_OK) return rs;
    if (b.animated_shapes)
        ra_scene_warn(s, "%zu shape(s) change vertices over time (vertex animation): their first frame is exported",
                      b.animated_shapes);
    if (b.deformable_shapes)
        ra_scene_warn(s, "%zu NIFF 2 envelope or cluster shape(s) are not exported (deformable geometry)",
                      b.deformable_shapes);
    if (b.animated_tex) ra_scene_warn(s, "%zu animated texture(s): their first image is exported", b.animated_tex);
    return RA_OK;
}
