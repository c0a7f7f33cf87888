/* LEGO Island WORLD.WDB as a format (`lego_wdb`): one model or part in its
 * static placement as a scene of nodes and textured meshes; and the mesh
 * output every use of WDB geometry shares (the .ani binding too).
 *
 * Meshes: the engine's vertices (one per create corner) in the ROI's local
 * frame; the converted frame mirrors Z, so positions and normals get -z and
 * every triangle (a, b, c) becomes (a, c, b) to keep its front face.  UVs are
 * as stored (glTF's top-left origin).  Colours are the game's 8-bit display
 * colours, linearised for baseColorFactor. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "retroanim/lego_wdb.h"
#include "retroanim/ra_json.h"

#define FMT "lego_wdb"

/* ---- mesh output -------------------------------------------------------------------------------- */
struct lego_mesh_out {
    ra_scene *s;
    lego_wdb_set *w;
    bool native;
    int32_t *tex_map; /* WDB texture -> scene texture, -1 not yet */
    size_t tex_map_n;
    size_t mesh_cap, mat_cap, tex_cap;
    /* the scene's materials by (texture, colour): open addressing of index
     * + 1 (0: empty) over mat_mask + 1 slots, materials [0, mat_indexed) in */
    uint32_t *mat_slots;
    size_t mat_mask, mat_indexed;
};

lego_mesh_out *lego_mesh_out_new(ra_scene *s, lego_wdb_set *w, bool native)
{
    lego_mesh_out *o = ra_arena_alloc(s->arena, sizeof *o);
    if (!o) return NULL;
    o->s = s;
    o->w = w;
    o->native = native;
    o->mesh_cap = s->mesh_count;
    o->mat_cap = s->material_count;
    o->tex_cap = s->texture_count;
    return o;
}

static double srgb_to_linear(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }

/* The scene texture of WDB texture t. */
static int32_t scene_texture(lego_mesh_out *o, int32_t t, ra_error *err)
{
    ra_scene *s = o->s;
    size_t n = 0;
    const lego_wdb_texture *tx = lego_wdb_textures(o->w, &n);
    if (n > o->tex_map_n) {
        int32_t *m = ra_arena_grow(s->arena, o->tex_map, o->tex_map_n, n, sizeof *m);
        if (!m) return ra_fail_nomem(err, FMT), -1;
        for (size_t i = o->tex_map_n; i < n; i++) m[i] = -1;
        o->tex_map = m;
        o->tex_map_n = n;
    }
    if (o->tex_map[t] >= 0) return o->tex_map[t];
    if (!ra_arena_reserve(s->arena, (void **)&s->textures, &o->tex_cap, s->texture_count + 1, sizeof *s->textures, 8))
        return ra_fail_nomem(err, FMT), -1;
    ra_texture *rt = &s->textures[s->texture_count];
    memset(rt, 0, sizeof *rt);
    rt->name = tx[t].name[0] ? tx[t].name : "texture";
    rt->width = tx[t].width;
    rt->height = tx[t].height;
    rt->rgba = tx[t].rgba;
    rt->wrap_s = rt->wrap_t = RA_WRAP_REPEAT;
    rt->nearest = true;
    rt->source_format = "P8";
    o->tex_map[t] = (int32_t)s->texture_count;
    return (int32_t)s->texture_count++;
}

/* The slot of (tex, c) among the indexed materials: the first equal one's
 * (== on each component, as the materials are shared), or the empty one
 * where it goes.  NULL for a colour with a NaN, which equals none. */
static uint32_t *material_slot(const lego_mesh_out *o, int32_t tex, const double c[4])
{
    uint64_t h = (uint64_t)(uint32_t)tex * 0x9E3779B97F4A7C15u;
    for (int k = 0; k < 4; k++) {
        if (c[k] != c[k]) return NULL;
        double v = c[k] + 0.0; /* -0 as 0: they compare equal */
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 0x100000001B3u;
    }
    const ra_material *mats = o->s->materials;
    for (size_t i = (size_t)(h ^ h >> 32) & o->mat_mask;; i = (i + 1) & o->mat_mask) {
        uint32_t v = o->mat_slots[i];
        if (!v) return &o->mat_slots[i];
        const ra_material *rm = &mats[v - 1];
        if (rm->texture == tex && rm->base_color[0] == c[0] && rm->base_color[1] == c[1] && rm->base_color[2] == c[2] &&
            rm->base_color[3] == c[3])
            return &o->mat_slots[i];
    }
}

/* The scene's materials up to its count in the index (doubling it as it
 * fills); false when out of memory. */
static bool index_materials(lego_mesh_out *o)
{
    ra_scene *s = o->s;
    if (s->material_count > UINT32_MAX - 1) return false;
    if (!o->mat_slots || 2 * (s->material_count + 1) > o->mat_mask + 1) {
        size_t cap = o->mat_slots ? 2 * (o->mat_mask + 1) : 64;
        while (cap < 2 * (s->material_count + 1)) cap *= 2;
        uint32_t *slots = ra_arena_array(s->arena, cap, sizeof *slots);
        if (!slots) return false;
        o->mat_slots = slots, o->mat_mask = cap - 1, o->mat_indexed = 0;
    }
    for (; o->mat_indexed < s->material_count; o->mat_indexed++) {
        const ra_material *rm = &s->materials[o->mat_indexed];
        uint32_t *slot = material_slot(o, rm->texture, rm->base_color);
        if (slot && !*slot) *slot = (uint32_t)o->mat_indexed + 1;
    }
    return true;
}

/* The scene material of a mesh's final colour and texture (shared by equal ones). */
static int32_t scene_material(lego_mesh_out *o, const lego_wdb_mesh *m, ra_error *err)
{
    ra_scene *s = o->s;
    int32_t tex = -1;
    if (m->texture >= 0 && (tex = scene_texture(o, m->texture, err)) < 0) return -2;
    double c[4];
    for (int k = 0; k < 3; k++) c[k] = srgb_to_linear(m->color[k] < 0 ? 0 : m->color[k] > 1 ? 1 : m->color[k]);
    c[3] = m->color[3] < 0 ? 0 : m->color[3] > 1 ? 1 : m->color[3];
    /* wireframe (shading 2) is a mesh note, not an unlit material */
    if (!index_materials(o)) return ra_fail_nomem(err, FMT), -2;
    uint32_t *slot = material_slot(o, tex, c);
    if (slot && *slot) return (int32_t)(*slot - 1);
    if (!ra_arena_reserve(s->arena, (void **)&s->materials, &o->mat_cap, s->material_count + 1, sizeof *s->materials,
                          8))
        return ra_fail_nomem(err, FMT), -2;
    ra_material *rm = &s->materials[s->material_count];
    memset(rm, 0, sizeof *rm);
    memcpy(rm->base_color, c, sizeof c);
    rm->texture = tex;
    rm->alpha_mode = c[3] < 1 ? RA_ALPHA_BLEND : RA_ALPHA_OPAQUE;
    rm->alpha_cutoff = 0.5;
    if (tex >= 0) rm->name = s->textures[tex].name;
    else if (m->missing_tex) rm->name = ra_arena_printf(s->arena, "missing_%s", m->texture_name);
    else
        rm->name = ra_arena_printf(s->arena, "color_%02x%02x%02x", (unsigned)lround(m->color[0] * 255),
                                   (unsigned)lround(m->color[1] * 255), (unsigned)lround(m->color[2] * 255));
    if (!rm->name || !ra_meta_set_bool(s->arena, &rm->meta, "lego.color_is_linearised", true))
        return ra_fail_nomem(err, FMT), -2;
    if (slot) *slot = (uint32_t)s->material_count + 1;
    o->mat_indexed = s->material_count + 1;
    return (int32_t)s->material_count++;
}

ra_status lego_mesh_out_roi(lego_mesh_out *o, const lego_wdb_roi *roi, uint32_t node, const ra_mat4 *bake,
                            ra_error *err)
{
    ra_scene *s = o->s;
    ra_arena *ar = s->arena;
    for (uint32_t i = 0; i < roi->mesh_count; i++) {
        const lego_wdb_mesh *m = &roi->meshes[i];
        if (!m->vertex_count || !m->triangle_count) continue;
        int32_t mat = scene_material(o, m, err);
        if (mat < -1) return err->code;
        if (!ra_arena_reserve(ar, (void **)&s->meshes, &o->mesh_cap, s->mesh_count + 1, sizeof *s->meshes, 8))
            return ra_fail_nomem(err, FMT);
        size_t nv = m->vertex_count;
        float *pos = ra_arena_array_uninit(ar, 3 * nv, sizeof *pos);
        float *nrm = ra_arena_array_uninit(ar, 3 * nv, sizeof *nrm);
        uint32_t *idx = ra_arena_array_uninit(ar, 3 * (size_t)m->triangle_count, sizeof *idx);
        /* a textured mesh without texture coordinates samples (0, 0) in the engine */
        bool want_uv = m->uvs || s->materials[mat].texture >= 0;
        float *uv = m->uvs    ? ra_arena_memdup(ar, m->uvs, 2 * nv, sizeof *uv)
                    : want_uv ? ra_arena_array(ar, 2 * nv, sizeof *uv)
                              : NULL;
        if (!pos || !nrm || !idx || (want_uv && !uv)) return ra_fail_nomem(err, FMT);
        double zs = o->native ? 1 : -1;
        for (size_t v = 0; v < nv; v++) {
            ra_vec3 p = ra_v3(m->positions[3 * v], m->positions[3 * v + 1], m->positions[3 * v + 2]);
            ra_vec3 n = ra_v3(m->normals[3 * v], m->normals[3 * v + 1], m->normals[3 * v + 2]);
            if (bake) {
                p = ra_m4_apply_point(bake, p);
                ra_mat4 r = *bake;
                r.m[0][3] = r.m[1][3] = r.m[2][3] = 0;
                n = ra_m4_apply_point(&r, n);
            }
            double l = ra_v3_len(n);
            if (l > 1e-12 && isfinite(l)) n = ra_v3_scale(n, 1 / l);
            else n = ra_v3(0, 0, 0);
            pos[3 * v] = (float)p.x, pos[3 * v + 1] = (float)p.y, pos[3 * v + 2] = (float)(zs * p.z);
            nrm[3 * v] = (float)n.x, nrm[3 * v + 1] = (float)n.y, nrm[3 * v + 2] = (float)(zs * n.z);
            if (!isfinite(pos[3 * v]) || !isfinite(pos[3 * v + 1]) || !isfinite(pos[3 * v + 2]))
                pos[3 * v] = pos[3 * v + 1] = pos[3 * v + 2] = 0; /* reported below */
        }
        for (size_t t = 0; t < m->triangle_count; t++) {
            idx[3 * t] = m->indices[3 * t];
            idx[3 * t + 1] = m->indices[3 * t + (o->native ? 1 : 2)];
            idx[3 * t + 2] = m->indices[3 * t + (o->native ? 2 : 1)];
        }
        if (uv)
            for (size_t k = 0; k < 2 * nv; k++)
                if (!isfinite(uv[k])) uv[k] = 0;
        ra_mesh *rm = &s->meshes[s->mesh_count];
        memset(rm, 0, sizeof *rm);
        /* "<roi>_mesh": a mesh named like a node becomes another name in Blender's FBX import */
        rm->name = ra_arena_printf(ar, "%s_mesh", roi->name[0] ? roi->name : "roi");
        if (!rm->name) return ra_fail_nomem(err, FMT);
        rm->node = node;
        rm->material = mat;
        rm->vertex_count = (uint32_t)nv;
        rm->positions = pos;
        rm->normals = nrm;
        rm->uvs = uv;
        rm->indices = idx;
        rm->triangle_count = m->triangle_count;
        rm->skin = -1;
        if (!ra_meta_set_int(ar, &rm->meta, "lego.shading", m->shading) ||
            !ra_meta_set_bool(ar, &rm->meta, "lego.shiny", m->shiny != 0) ||
            !ra_meta_set_bool(ar, &rm->meta, "lego.inh", m->inh) ||
            (m->shading == 2 && !ra_meta_set_string(ar, &rm->meta, "lego.note", "wireframe in the game")))
            return ra_fail_nomem(err, FMT);
        s->mesh_count++;
    }
    return RA_OK;
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

ra_status lego_mesh_out_finish(lego_mesh_out *o, ra_error *err)
{
    ra_scene *s = o->s;
    if (!unique_names(s->arena, s->meshes, s->mesh_count, sizeof *s->meshes, offsetof(ra_mesh, name)) ||
        !unique_names(s->arena, s->materials, s->material_count, sizeof *s->materials, offsetof(ra_material, name)) ||
        !unique_names(s->arena, s->textures, s->texture_count, sizeof *s->textures, offsetof(ra_texture, name)))
        return ra_fail_nomem(err, FMT);
    return RA_OK;
}

/* ---- the lego_wdb format ---------------------------------------------------------------------------- */
typedef struct wdb_doc {
    lego_wdb_roi *roi;
    const lego_wdb_ref *ref; /* the model, NULL for a part */
    const char *world;       /* the model's world */
    const char *part_source; /* a part's block: "global" or a world */
    lego_wdb_set *w;         /* closed: its textures only */
} wdb_doc;

/* Sees the first bytes: a plausible world count, then a NUL-terminated name. */
static int wdb_detect(const uint8_t *d, size_t n)
{
    if (n < 16) return 0;
    uint32_t nw = ra_load_u32le(d), len = ra_load_u32le(d + 4);
    if (nw < 1 || nw > 1000 || len < 2 || len > 64 || n < 8 + (size_t)len + 4) return 0;
    for (uint32_t i = 0; i + 1 < len; i++)
        if (d[8 + i] < 0x20 || d[8 + i] > 0x7e) return 0;
    if (d[8 + len - 1] != 0) return 0;
    if (ra_load_u32le(d + 8 + len) > 100000) return 0;
    return 40;
}

static ra_status wdb_read(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    wdb_doc *m = ra_arena_alloc(doc->arena, sizeof *m);
    if (!m) return ra_fail_nomem(err, FMT);
    double md = ra_options_get_double(&doc->options, "max_depth", LEGO_DEFAULT_MAX_DEPTH);
    if (!(md >= 1) || md > LEGO_MAX_DEPTH_LIMIT)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "max_depth", "max_depth must be 1..%d",
                       LEGO_MAX_DEPTH_LIMIT);
    ra_status st = lego_wdb_open(data, size, doc->arena, NULL, &doc->scene, &m->w, err);
    if (st != RA_OK) return st;
    const lego_wdb_dir *d = lego_wdb_directory(m->w);
    const char *want = ra_options_get(&doc->options, "model");
    int64_t mi = -1;
    if (want) {
        mi = lego_wdb_find_model(m->w, want);
        if (mi == -2) return ra_fail_nomem(err, FMT);
        if (mi < 0) {
            char *key = ra_arena_strndup(doc->arena, want, strlen(want));
            if (!key) return ra_fail_nomem(err, FMT);
            for (char *q = key; *q; q++) *q = (char)tolower((unsigned char)*q);
            st = lego_wdb_part(m->w, key, &m->roi, err);
            if (st != RA_OK) return st;
            if (!m->roi)
                return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "model",
                               "no model or part named '%s' (retroanim list shows them)", want);
            m->part_source = lego_wdb_part_source(m->w, key);
        }
    } else if (d->model_count) {
        mi = 0;
    } else {
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "model",
                       "the file holds no model: name a part with model=NAME (retroanim list shows them)");
    }
    if (mi >= 0) {
        m->ref = &d->models[mi];
        m->world = d->worlds[m->ref->world].name;
        lego_wdb_prefer_world(m->w, m->ref->world);
        st = lego_wdb_model(m->w, (size_t)mi, (uint32_t)md, &m->roi, err);
        if (st != RA_OK) return st;
    }
    lego_wdb_close(m->w);
    doc->model = m;
    return RA_OK;
}

typedef struct flat_roi {
    const lego_wdb_roi *roi;
    int32_t parent;
} flat_roi;

static size_t count_rois(const lego_wdb_roi *r, uint32_t depth)
{
    size_t n = 1;
    if (depth > RA_MAX_DEPTH_LIMIT) return n;
    for (uint32_t i = 0; i < r->child_count; i++) n += count_rois(&r->children[i], depth + 1);
    return n;
}

static void flatten_rois(const lego_wdb_roi *r, int32_t parent, flat_roi *out, size_t *n, uint32_t depth)
{
    size_t me = (*n)++;
    out[me] = (flat_roi){r, parent};
    if (depth > RA_MAX_DEPTH_LIMIT) return;
    for (uint32_t i = 0; i < r->child_count; i++) flatten_rois(&r->children[i], (int32_t)me, out, n, depth + 1);
}

static ra_status wdb_to_scene(ra_document *doc, ra_error *err)
{
    wdb_doc *m = doc->model;
    ra_scene *s = &doc->scene;
    ra_arena *ar = doc->arena;
    bool native = ra_options_is(&doc->options, "coords", "native");
    size_t n = count_rois(m->roi, 0), k = 0;
    flat_roi *f = ra_arena_array(ar, n, sizeof *f);
    const char **names = ra_arena_array(ar, n, sizeof *names);
    if (!f || !names) return ra_fail_nomem(err, FMT);
    flatten_rois(m->roi, -1, f, &k, 0);
    static const char *const reserved[] = {"RootNode"};
    for (size_t i = 0; i < n; i++) names[i] = f[i].roi->name[0] ? f[i].roi->name : "roi";
    if (!ra_names_make_unique(ar, names, n, reserved, 1)) return ra_fail_nomem(err, FMT);
    if (ra_scene_add_node(s, "RootNode", -1, NULL) != 0) return ra_fail_nomem(err, FMT);
    lego_mesh_out *o = lego_mesh_out_new(s, m->w, native);
    if (!o) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < n; i++) {
        const lego_wdb_roi *r = f[i].roi;
        ra_mat4 l = native ? r->local : ra_m4_mirror_z(&r->local);
        int32_t idx = ra_scene_add_node(s, names[i], f[i].parent < 0 ? 0 : f[i].parent + 1, &l);
        if (idx < 0) return ra_fail_nomem(err, FMT);
        ra_node *sn = &s->nodes[idx];
        if (!ra_meta_set_string(ar, &sn->meta, "lego.roi", r->name) ||
            !ra_meta_set_int(ar, &sn->meta, "lego.lod_count", r->lod_count) ||
            (r->mesh_count && !ra_meta_set_int(ar, &sn->meta, "lego.lod_used", r->lod_used)) ||
            (r->lod_source && !ra_meta_set_string(ar, &sn->meta, "lego.lod_list", r->lod_source)) ||
            (r->prefix_share && !ra_meta_set_string(ar, &sn->meta, "lego.lod_note", LEGO_PREFIX_SHARE_NOTE)) ||
            (r->material && r->material[0] && !ra_meta_set_string(ar, &sn->meta, "lego.roi_material", r->material)))
            return ra_fail_nomem(err, FMT);
        ra_status st = lego_mesh_out_roi(o, r, (uint32_t)idx, NULL, err);
        if (st != RA_OK) return st;
    }
    char shared[400] = "";
    size_t nshared = 0;
    for (size_t i = 0; i < n; i++)
        if (f[i].roi->prefix_share && nshared++ < 8) {
            size_t l = strlen(shared);
            snprintf(shared + l, sizeof shared - l, "%s%s", l ? ", " : "", f[i].roi->name);
        }
    if (nshared) ra_scene_warn(s, "ROI(s) %s%s: " LEGO_PREFIX_SHARE_NOTE, shared, nshared > 8 ? ", ..." : "");
    ra_status st = lego_mesh_out_finish(o, err);
    if (st == RA_OK)
        st = ra_scene_standard_meta(doc, 0,
                                    native ? "native (left-handed, Y up; front faces clockwise)"
                                           : "converted (right-handed, Y up, Z mirrored)",
                                    err);
    if (st != RA_OK) return st;
    ra_meta_list *md = &s->meta;
    bool ok = ra_meta_set_string(ar, md, "lego.wdb.kind", m->ref ? "model" : "part") &&
              ra_meta_set_string(ar, md, "lego.wdb.name", m->ref ? m->ref->name : m->roi->name);
    if (ok && m->ref)
        ok = ra_meta_set_string(ar, md, "lego.wdb.world", m->world) &&
             ra_meta_set_string(ar, md, "lego.wdb.presenter", m->ref->presenter) &&
             ra_meta_set_bool(ar, md, "lego.wdb.visible", m->ref->visible != 0);
    if (ok && m->part_source) ok = ra_meta_set_string(ar, md, "lego.wdb.part_block", m->part_source);
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}

static ra_status wdb_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    (void)anim;
    (void)t;
    (void)err;
    const ra_scene *s = &doc->scene;
    for (size_t i = 0; i < s->node_count; i++) {
        int32_t p = s->nodes[i].parent;
        world[i] = p >= 0 ? ra_m4_mul(&world[p], &s->nodes[i].transform) : s->nodes[i].transform;
    }
    return RA_OK;
}

static void dump_roi(ra_json *j, const lego_wdb_roi *r, uint32_t depth)
{
    ra_json_begin_object(j);
    ra_json_key(j, "name");
    ra_json_string(j, r->name);
    ra_json_key(j, "color_or_texture");
    ra_json_string(j, r->material ? r->material : "");
    ra_json_key(j, "num_lods");
    ra_json_uint(j, r->lod_count);
    ra_json_key(j, "meshes");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < r->mesh_count; i++) {
        const lego_wdb_mesh *m = &r->meshes[i];
        ra_json_begin_object(j);
        ra_json_key(j, "vertices");
        ra_json_uint(j, m->vertex_count);
        ra_json_key(j, "triangles");
        ra_json_uint(j, m->triangle_count);
        ra_json_key(j, "texture");
        ra_json_string(j, m->texture_name ? m->texture_name : "");
        ra_json_key(j, "material");
        ra_json_string(j, m->material_name ? m->material_name : "");
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "children");
    ra_json_begin_array(j);
    if (depth < (RA_JSON_MAX_DEPTH - 8) / 2)
        for (uint32_t i = 0; i < r->child_count; i++) dump_roi(j, &r->children[i], depth + 1);
    ra_json_end_array(j);
    ra_json_end_object(j);
}

static void wdb_dump_source(const ra_document *doc, ra_json *j)
{
    const wdb_doc *m = doc->model;
    ra_json_begin_object(j);
    ra_json_key(j, "format");
    ra_json_string(j, FMT);
    ra_json_key(j, "worlds");
    ra_json_begin_array(j);
    const lego_wdb_dir *d = lego_wdb_directory(m->w);
    for (uint32_t i = 0; i < d->world_count; i++) {
        const lego_wdb_world *wd = &d->worlds[i];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, wd->name);
        ra_json_key(j, "parts");
        ra_json_begin_array(j);
        for (uint32_t k = 0; k < wd->part_count; k++) ra_json_string(j, d->parts[wd->first_part + k].name);
        ra_json_end_array(j);
        ra_json_key(j, "models");
        ra_json_begin_array(j);
        for (uint32_t k = 0; k < wd->model_count; k++) {
            const lego_wdb_ref *r = &d->models[wd->first_model + k];
            ra_json_begin_object(j);
            ra_json_key(j, "name");
            ra_json_string(j, r->name);
            ra_json_key(j, "presenter");
            ra_json_string(j, r->presenter);
            ra_json_key(j, "offset");
            ra_json_uint(j, r->offset);
            ra_json_key(j, "size");
            ra_json_uint(j, r->size);
            ra_json_key(j, "visible");
            ra_json_uint(j, r->visible);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "roi");
    dump_roi(j, m->roi, 0);
    ra_json_end_object(j);
}

static const ra_option_decl wdb_options[] = {
    {"model", RA_OPT_STRING, 0, 0, false, NULL, "the first model",
     "the model (or else part) to import, by name (retroanim list shows them)"},
};

const ra_format ra_format_lego_wdb = {
    "lego_wdb",
    "LEGO Island world database (WORLD.WDB): one model or part, textured, chosen with model=NAME",
    "wdb",
    "no magic: a world count of 1..1000, then a NUL-terminated printable world name (or the .wdb extension)",
    wdb_detect,
    wdb_read,
    wdb_to_scene,
    wdb_pose,
    wdb_dump_source,
    NULL,
    .options = wdb_options,
    .option_count = sizeof wdb_options / sizeof wdb_options[0],
};

/* ---- list ------------------------------------------------------------------------------------------- */
ra_status lego_wdb_list(const uint8_t *data, size_t size, const ra_options *opt, char **text, ra_error *err)
{
    *text = NULL;
    ra_arena *ar = ra_load_arena(opt, size);
    if (!ar) return ra_fail_nomem(err, FMT);
    lego_wdb_set *w = NULL;
    ra_status st = lego_wdb_open(data, size, ar, NULL, NULL, &w, err);
    const char *const *tex = NULL, *const *parts = NULL, *const *srcs = NULL;
    size_t ntex = 0, nparts = 0;
    if (st == RA_OK) st = lego_wdb_all_parts(w, &parts, &srcs, &nparts, err);
    if (st == RA_OK) st = lego_wdb_all_textures(w, &tex, &ntex, err);
    if (st != RA_OK) {
        ra_arena_destroy(ar);
        return st;
    }
    const lego_wdb_dir *d = lego_wdb_directory(w);
    ra_writer wr;
    ra_writer_init(&wr);
    char line[1536];
#define OUT(...) (snprintf(line, sizeof line, __VA_ARGS__), ra_wr_bytes(&wr, line, strlen(line)))
    OUT("%u world(s), %zu model(s), %zu part(s), %zu texture(s)\n", d->world_count, d->model_count, nparts, ntex);
    for (uint32_t i = 0; i < d->world_count; i++) {
        const lego_wdb_world *wd = &d->worlds[i];
        OUT("world %s: %u part blob(s), %u model(s)\n", wd->name, wd->part_count, wd->model_count);
        for (uint32_t k = 0; k < wd->model_count; k++) {
            const lego_wdb_ref *r = &d->models[wd->first_model + k];
            OUT("  model %-24s %-22s %9u bytes at %u%s\n", r->name, r->presenter, r->size, r->offset,
                r->visible ? "" : " (hidden)");
        }
    }
    for (size_t i = 0; i < nparts; i++) OUT("part %-24s %s\n", parts[i], srcs[i]);
    for (size_t i = 0; i < ntex; i++) OUT("texture %s\n", tex[i]);
#undef OUT
    ra_arena_destroy(ar);
    if (!ra_wr_u8(&wr, 0)) {
        ra_writer_free(&wr);
        return ra_fail_nomem(err, FMT);
    }
    *text = (char *)wr.data;
    return RA_OK;
}
