/* Metroid Prime characters in the scene: the CMDL's surfaces as meshes (one
 * per material), materials approximating the TEV stages, textures, and the
 * CSKR's skin rules as joints and weights on the CINF bones.
 * docs/formats/metroid_prime.md §13.
 *
 * A skinned mesh holds its vertices at rest in the scene's frame (the root's
 * turn applied: (x,y,z) -> (x,z,-y) when converted); the joints are the CINF
 * bone nodes, whose rest world transforms are T(bind position), so playback
 * gives the game's v' = sum w (R (v - b) + P). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mp_internal.h"

#define FMT "metroid_cmdl"

/* ---- files beside a model ---------------------------------------------------------------------------------- */
bool mp_find_beside(const char *path, const char *name, bool same_stem, char *out, size_t out_size)
{
    char dir[4096], key[4096 + 64];
    const char *base;
    size_t stem_len, nl = strlen(name);
    if (!ra_path_parts(path, dir, sizeof dir, &base, &stem_len) || stem_len + nl + 2 > sizeof key) return false;
    /* STEM.<name> with the stem as is, the extension in any case; or name in any case */
    size_t kl = same_stem ? stem_len + 1 + nl : nl;
    if (same_stem) {
        memcpy(key, base, stem_len);
        key[stem_len] = '.';
    }
    memcpy(key + kl - nl, name, nl);
    const ra_folder *d = ra_folder_open(dir);
    if (!d) return false;
    bool found = false;
    for (size_t i = ra_folder_find(d, key, kl); !found && i != SIZE_MAX; i = ra_folder_find_next(d, i)) {
        const char *f = d->names[i];
        if (same_stem && strncmp(f, base, stem_len) != 0) continue;
        found = ra_regular_in(dir, f, out, out_size);
    }
    ra_folder_close(d);
    return found;
}

ra_status mp_textures_beside(void *ctx, uint32_t id, const uint8_t **data, size_t *size, uint8_t **owned, ra_error *err)
{
    const mp_beside *b = ctx;
    char name[32], path[4096];
    snprintf(name, sizeof name, "%08X.TXTR", id);
    if (!mp_find_beside(b->path, name, false, path, sizeof path))
        return ra_fail(err, RA_ERR_IO, "metroid_txtr", RA_NO_OFFSET, "texture", "no file %s beside the model", name);
    ra_status st = ra_read_file_max(path, b->max_size, owned, size, err);
    *data = *owned;
    return st;
}

ra_status mp_character_textures(ra_document *doc, mp_character *ch, mp_texture_source load, void *ctx, ra_error *err)
{
    const mp_cmdl *m = &ch->cmdl;
    ch->texture_ids = ra_arena_array(doc->arena, m->material_count, sizeof *ch->texture_ids);
    ch->textures = ra_arena_array(doc->arena, m->material_count, sizeof *ch->textures);
    /* the ids met so far: open addressing of position + 1 (a scan of them per material cost their product) */
    size_t cap = 16;
    while (cap < 2 * (size_t)m->material_count) cap *= 2;
    uint32_t *seen = ra_calloc(cap, sizeof *seen);
    if (!ch->texture_ids || !ch->textures || !seen) {
        ra_free(seen);
        return ra_fail_nomem(err, FMT);
    }
    for (uint32_t i = 0; i < m->material_count; i++) {
        const mp_material *mt = &m->materials[i];
        if (!mt->has_texture) continue;
        size_t h = (size_t)(mt->base_texture * 0x9E3779B1u) & (cap - 1);
        while (seen[h] && ch->texture_ids[seen[h] - 1] != mt->base_texture) h = (h + 1) & (cap - 1);
        if (seen[h]) continue;
        size_t k = ch->texture_count++;
        seen[h] = (uint32_t)k + 1;
        ch->texture_ids[k] = mt->base_texture;
        const uint8_t *data = NULL;
        size_t size = 0;
        uint8_t *owned = NULL;
        ra_error e;
        ra_error_clear(&e);
        ra_status st = load(ctx, mt->base_texture, &data, &size, &owned, &e);
        if (st == RA_OK) st = mp_txtr_read(data, size, doc->arena, &ch->textures[k], &e);
        ra_free(owned);
        if (st == RA_ERR_NO_MEMORY) {
            ra_free(seen);
            return ra_fail(err, st, FMT, RA_NO_OFFSET, "texture", "out of memory");
        }
        if (st != RA_OK) {
            char buf[400];
            ra_error_format(&e, buf, sizeof buf);
            ra_scene_warn(&doc->scene, "texture %08X left out (%s); its materials are untextured", mt->base_texture,
                          buf);
            memset(&ch->textures[k], 0, sizeof ch->textures[k]);
            ch->textures_missing++;
        }
    }
    ra_free(seen);
    return RA_OK;
}

/* Triangles whose face normal (counter-clockwise corners) points against the sum of their corners'
 * stored normals; triangles without normals, degenerate ones and those at right angles are not counted. */
void mp_winding(const mp_cmdl *m, size_t *tested, size_t *inverted)
{
    *tested = *inverted = 0;
    for (uint32_t si = 0; si < m->surface_count; si++) {
        const mp_surface *sf = &m->surfaces[si];
        for (size_t t = 0; t < sf->tri_count; t++) {
            const mp_corner *c = &sf->corners[3 * t];
            if (c[0].nrm == MP_NO_INDEX || c[1].nrm == MP_NO_INDEX || c[2].nrm == MP_NO_INDEX) continue;
            const float *p0 = &m->pos[3 * (size_t)c[0].pos], *p1 = &m->pos[3 * (size_t)c[1].pos],
                        *p2 = &m->pos[3 * (size_t)c[2].pos];
            double e1[3], e2[3], f[3], n[3] = {0, 0, 0};
            for (int k = 0; k < 3; k++) e1[k] = (double)p1[k] - p0[k], e2[k] = (double)p2[k] - p0[k];
            f[0] = e1[1] * e2[2] - e1[2] * e2[1];
            f[1] = e1[2] * e2[0] - e1[0] * e2[2];
            f[2] = e1[0] * e2[1] - e1[1] * e2[0];
            for (int q = 0; q < 3; q++)
                for (int k = 0; k < 3; k++) n[k] += m->nrm[3 * (size_t)c[q].nrm + (size_t)k];
            double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
            double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            double d = f[0] * n[0] + f[1] * n[1] + f[2] * n[2];
            if (!(fl > 1e-12) || !(nl > 1e-12) || !(fabs(d) > 0.1 * fl * nl)) continue;
            ++*tested;
            if (d < 0) ++*inverted;
        }
    }
}

/* ---- the scene -------------------------------------------------------------------------------------------- */
typedef struct mbuild {
    ra_document *doc;
    const mp_character *ch;
    const mp_cmdl *m;
    ra_scene *s;
    ra_arena *ar;
    ra_error *err;
    bool native, skinned;
    int32_t *tex_of;     /* per character texture: scene texture or -1 */
    uint32_t *rule_of;   /* per position: rule index, or UINT32_MAX */
    uint16_t (*rj)[3];   /* per rule: joints */
    float (*rw)[3];      /* per rule: weights (renormalised) */
    uint8_t *rn;         /* per rule: joints used */
    uint16_t root_joint; /* for positions no rule covers */
    size_t unbound, off_by_normal, renormalised, zero_rules;
    size_t unknown_rules; /* rules naming a bone the skeleton lacks: bound to the root */
    uint32_t unknown_bone;
    uint64_t unknown_offset;
} mbuild;

static ra_vec3 turn(const mbuild *b, const float *v)
{
    return b->native ? ra_v3(v[0], v[1], v[2]) : ra_v3(v[0], v[2], -(double)v[1]);
}

/* joints and weights of every rule: CINF ids -> joints (the CINF bone nodes, in skin order) */
static ra_status skin_rules(mbuild *b)
{
    const mp_cskr *k = &b->ch->cskr;
    ra_scene *s = b->s;
    ra_arena *ar = b->ar;
    /* the CINF bones: nodes with a bind position, by id */
    typedef struct idnode {
        uint32_t id, node;
    } idnode;
    idnode *bones = ra_arena_array(ar, s->node_count, sizeof *bones);
    if (!bones) return ra_fail_nomem(b->err, FMT);
    size_t nb = 0;
    for (size_t i = 1; i < s->node_count; i++) {
        const ra_meta *id = ra_meta_get(&s->nodes[i].meta, "metroid.bone_id");
        if (id && ra_meta_get(&s->nodes[i].meta, "metroid.bind_position"))
            bones[nb++] = (idnode){(uint32_t)id->u.i, (uint32_t)i};
    }
    ra_id_slot *sorted = ra_sorted_ids(ar, bones, nb, sizeof *bones);
    b->rj = ra_arena_array(ar, k->rule_count, sizeof *b->rj);
    b->rw = ra_arena_array(ar, k->rule_count, sizeof *b->rw);
    b->rn = ra_arena_array(ar, k->rule_count, sizeof *b->rn);
    b->rule_of = ra_arena_array_uninit(ar, b->m->pos_count + 1u, sizeof *b->rule_of);
    if (!sorted || !b->rj || !b->rw || !b->rn || !b->rule_of) return ra_fail_nomem(b->err, FMT);
    b->root_joint = (uint16_t)(bones[0].node - 1);
    for (uint32_t r = 0; r < k->rule_count; r++) {
        const mp_skin_rule *rule = &k->rules[r];
        double sum = 0;
        bool unknown = false;
        for (uint32_t q = 0; q < rule->used && !unknown; q++) {
            int64_t at = ra_find_id(sorted, nb, rule->bone[q]);
            if (at < 0) { /* a bone the skeleton lacks: the rule's vertices go to the root (a warning) */
                if (!b->unknown_rules++) b->unknown_bone = rule->bone[q], b->unknown_offset = rule->bone_offset[q];
                unknown = true;
                break;
            }
            b->rj[r][q] = (uint16_t)(bones[at].node - 1);
            sum += rule->weight[q];
        }
        if (unknown || !(sum > 0)) {
            if (!unknown) b->zero_rules++;
            b->rj[r][0] = b->root_joint;
            b->rw[r][0] = 1;
            b->rn[r] = 1;
            continue;
        }
        if (fabs(sum - 1) > 1e-3) b->renormalised++;
        for (uint32_t q = 0; q < rule->used; q++) b->rw[r][q] = (float)(rule->weight[q] / sum);
        b->rn[r] = (uint8_t)rule->used;
    }
    /* rules own consecutive positions in file order */
    uint64_t p = 0;
    for (uint32_t r = 0; r < k->rule_count && p < b->m->pos_count; r++)
        for (uint32_t v = 0; v < k->rules[r].vertex_count && p < b->m->pos_count; v++) b->rule_of[p++] = r;
    for (; p < b->m->pos_count; p++) b->rule_of[p] = UINT32_MAX;
    return RA_OK;
}

static int32_t texture_of(mbuild *b, uint32_t id)
{
    const mp_character *ch = b->ch;
    for (size_t k = 0; k < ch->texture_count; k++) {
        if (ch->texture_ids[k] != id) continue;
        if (b->tex_of[k] != -2) return b->tex_of[k];
        const mp_txtr *t = &ch->textures[k];
        if (!t->rgba) return b->tex_of[k] = -1;
        ra_texture *rt = &b->s->textures[b->s->texture_count];
        memset(rt, 0, sizeof *rt);
        rt->name = ra_arena_printf(b->ar, "%08X", id);
        rt->width = t->width;
        rt->height = t->height;
        rt->rgba = t->rgba;
        /* the game clamps textures whose sides are not powers of two */
        bool pow2 = !(t->width & (t->width - 1)) && !(t->height & (t->height - 1));
        rt->wrap_s = rt->wrap_t = pow2 ? RA_WRAP_REPEAT : RA_WRAP_CLAMP;
        rt->source_format = mp_txtr_format_name(t->format);
        if (!rt->name) return -2;
        return b->tex_of[k] = (int32_t)b->s->texture_count++;
    }
    return -1;
}

static ra_status add_material(mbuild *b, uint32_t mi)
{
    const mp_material *mt = &b->m->materials[mi];
    ra_scene *s = b->s;
    ra_material *rm = &s->materials[s->material_count];
    memset(rm, 0, sizeof *rm);
    rm->name = ra_arena_printf(b->ar, "material_%u", mi);
    for (int k = 0; k < 4; k++) rm->base_color[k] = 1;
    if (mt->has_konst_color && !mt->has_texture)
        for (unsigned k = 0; k < 4; k++) rm->base_color[k] = (mt->konst_color >> (24 - 8 * k) & 0xFF) / 255.0;
    rm->texture = mt->has_texture ? texture_of(b, mt->base_texture) : -1;
    if (rm->texture < -1) return ra_fail_nomem(b->err, FMT);
    /* GX blend (src, dst) other than (ONE, ZERO), or depth sorting: blended; alpha test: GEQUAL 64 */
    bool blend = (mt->flags & 0x10) || mt->blend_src != 1 || mt->blend_dst != 0;
    rm->alpha_mode = mt->flags & 0x20 ? RA_ALPHA_MASK : blend ? RA_ALPHA_BLEND : RA_ALPHA_OPAQUE;
    rm->alpha_cutoff = rm->alpha_mode == RA_ALPHA_MASK ? 64.0 / 255.0 : 0.5;
    ra_arena *ar = b->ar;
    bool ok = rm->name && ra_meta_set_int(ar, &rm->meta, "metroid.material_index", mi) &&
              ra_meta_set_int(ar, &rm->meta, "metroid.material_flags", mt->flags) &&
              ra_meta_set_int(ar, &rm->meta, "metroid.vertex_attributes", mt->vtx_flags) &&
              ra_meta_set_int(ar, &rm->meta, "metroid.tev_stages", mt->tev_count) &&
              ra_meta_set_int(ar, &rm->meta, "metroid.blend_src", mt->blend_src) &&
              ra_meta_set_int(ar, &rm->meta, "metroid.blend_dst", mt->blend_dst);
    if (ok && mt->has_texture) ok = ra_meta_set_int(ar, &rm->meta, "metroid.texture_id", mt->base_texture);
    if (ok && mt->blend_dst == 1 && rm->alpha_mode == RA_ALPHA_BLEND)
        ok = ra_meta_set_bool(ar, &rm->meta, "metroid.additive", true);
    if (!ok) return ra_fail_nomem(b->err, FMT);
    s->material_count++;
    return RA_OK;
}

static uint64_t mix(uint64_t h, uint32_t v)
{
    h ^= v;
    h *= 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* the surfaces of material mi as one mesh */
static ra_status add_mesh(mbuild *b, uint32_t mi, size_t corners, int32_t material)
{
    const mp_cmdl *m = b->m;
    ra_arena *ar = b->ar;
    size_t cap = 16;
    while (cap < 2 * corners) cap *= 2;
    mp_corner *vert = ra_malloc(corners * sizeof *vert);
    int64_t *slot = ra_malloc(cap * sizeof *slot);
    uint32_t *idx = ra_arena_array_uninit(ar, corners, sizeof *idx);
    if (!vert || !slot || !idx) {
        ra_free(vert);
        ra_free(slot);
        return ra_fail_nomem(b->err, FMT);
    }
    for (size_t k = 0; k < cap; k++) slot[k] = -1;
    uint32_t nv = 0;
    size_t at_idx = 0;
    bool has_n = true, has_c = true, has_uv = true;
    for (uint32_t si = 0; si < m->surface_count; si++) {
        const mp_surface *sf = &m->surfaces[si];
        if (sf->material != mi) continue;
        for (size_t c = 0; c < 3 * (size_t)sf->tri_count; c++) {
            mp_corner cv = sf->corners[c];
            has_n = has_n && cv.nrm != MP_NO_INDEX;
            has_c = has_c && cv.clr != MP_NO_INDEX;
            has_uv = has_uv && cv.uv != MP_NO_INDEX;
            if (sf->short_uv && cv.uv != MP_NO_INDEX) cv.uv |= 0x80000000u; /* an index of the short array */
            uint64_t h = mix(mix(mix(mix(0xcbf29ce484222325ull, cv.pos), cv.nrm), cv.clr), cv.uv);
            size_t at = (size_t)(h & (cap - 1));
            while (slot[at] >= 0 && memcmp(&vert[slot[at]], &cv, sizeof cv)) at = (at + 1) & (cap - 1);
            if (slot[at] < 0) {
                vert[nv] = cv;
                slot[at] = nv++;
            }
            idx[at_idx++] = (uint32_t)slot[at];
        }
    }
    ra_free(slot);
    float *pos = ra_arena_array_uninit(ar, 3 * (size_t)nv, sizeof *pos);
    float *nrm = has_n ? ra_arena_array_uninit(ar, 3 * (size_t)nv, sizeof *nrm) : NULL;
    float *col = has_c ? ra_arena_array_uninit(ar, 4 * (size_t)nv, sizeof *col) : NULL;
    float *uv = has_uv ? ra_arena_array_uninit(ar, 2 * (size_t)nv, sizeof *uv) : NULL;
    uint16_t *joints = b->skinned ? ra_arena_array(ar, 4 * (size_t)nv, sizeof *joints) : NULL;
    float *weights = b->skinned ? ra_arena_array(ar, 4 * (size_t)nv, sizeof *weights) : NULL;
    if (!pos || (has_n && !nrm) || (has_c && !col) || (has_uv && !uv) || (b->skinned && (!joints || !weights))) {
        ra_free(vert);
        return ra_fail_nomem(b->err, FMT);
    }
    for (uint32_t v = 0; v < nv; v++) {
        const mp_corner *cv = &vert[v];
        ra_vec3 p = b->skinned ? turn(b, &m->pos[3 * (size_t)cv->pos])
                               : ra_v3(m->pos[3 * (size_t)cv->pos], m->pos[3 * (size_t)cv->pos + 1],
                                       m->pos[3 * (size_t)cv->pos + 2]);
        pos[3 * (size_t)v] = (float)p.x, pos[3 * (size_t)v + 1] = (float)p.y, pos[3 * (size_t)v + 2] = (float)p.z;
        if (nrm) {
            const float *n = &m->nrm[3 * (size_t)cv->nrm];
            ra_vec3 q = b->skinned ? turn(b, n) : ra_v3(n[0], n[1], n[2]);
            double l = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
            if (!(l > 1e-12)) q = ra_v3(0, 0, 1), l = 1;
            nrm[3 * (size_t)v] = (float)(q.x / l), nrm[3 * (size_t)v + 1] = (float)(q.y / l);
            nrm[3 * (size_t)v + 2] = (float)(q.z / l);
        }
        if (col)
            for (unsigned k = 0; k < 4; k++)
                col[4 * (size_t)v + k] = (float)((m->clr[cv->clr] >> (24 - 8 * k) & 0xFF) / 255.0);
        if (uv) {
            bool s = cv->uv & 0x80000000u;
            const float *t = s ? &m->suv[2 * (size_t)(cv->uv & 0x7FFFFFFFu)] : &m->uv[2 * (size_t)cv->uv];
            uv[2 * (size_t)v] = t[0], uv[2 * (size_t)v + 1] = t[1];
        }
        if (joints) {
            uint32_t r = b->rule_of[cv->pos];
            if (r == UINT32_MAX) {
                b->unbound++;
                joints[4 * (size_t)v] = b->root_joint;
                weights[4 * (size_t)v] = 1;
            } else {
                for (uint32_t q = 0; q < b->rn[r]; q++) {
                    joints[4 * (size_t)v + q] = b->rj[r][q];
                    weights[4 * (size_t)v + q] = b->rw[r][q];
                }
                if (nrm && cv->nrm < m->pos_count && b->rule_of[cv->nrm] != r) b->off_by_normal++;
            }
        }
    }
    ra_free(vert);
    ra_mesh *rm = &b->s->meshes[b->s->mesh_count];
    memset(rm, 0, sizeof *rm);
    rm->name = ra_arena_printf(ar, "%s_%u", b->ch->name ? b->ch->name : "model", mi);
    rm->node = 0;
    rm->material = material;
    rm->vertex_count = nv;
    rm->positions = pos;
    rm->normals = nrm;
    rm->colors = col;
    rm->uvs = uv;
    rm->indices = idx;
    rm->triangle_count = corners / 3;
    rm->skin = b->skinned ? 0 : -1;
    rm->joints = joints;
    rm->weights = weights;
    if (!rm->name || !ra_meta_set_int(ar, &rm->meta, "metroid.material_index", mi)) return ra_fail_nomem(b->err, FMT);
    b->s->mesh_count++;
    return RA_OK;
}

ra_status mp_build_model(ra_document *doc, const mp_character *ch, bool native, ra_error *err)
{
    const mp_cmdl *m = &ch->cmdl;
    ra_scene *s = &doc->scene;
    mbuild b = {.doc = doc, .ch = ch, .m = m, .s = s, .ar = doc->arena, .err = err, .native = native};
    bool bones = false;
    for (size_t i = 1; i < s->node_count && !bones; i++)
        bones = ra_meta_get(&s->nodes[i].meta, "metroid.bind_position") != NULL;
    b.skinned = ch->has_cskr && bones && s->skin_count == 1;
    if (ch->has_cskr && !b.skinned)
        ra_scene_warn(s, "the skin (CSKR) needs a skeleton (CINF); the model is static in its bind pose");
    if (b.skinned && s->skins[0].joint_count > UINT16_MAX)
        return ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "skin", "more than %u joints", UINT16_MAX);
    ra_status rs = b.skinned ? skin_rules(&b) : RA_OK;
    if (rs != RA_OK) return rs;
    size_t *corners = ra_arena_array(doc->arena, m->material_count, sizeof *corners);
    b.tex_of = ra_arena_array(doc->arena, ch->texture_count, sizeof *b.tex_of);
    s->meshes = ra_arena_array(doc->arena, m->material_count, sizeof *s->meshes);
    s->materials = ra_arena_array(doc->arena, m->material_count, sizeof *s->materials);
    s->textures = ra_arena_array(doc->arena, ch->texture_count, sizeof *s->textures);
    if (!corners || !b.tex_of || !s->meshes || !s->materials || !s->textures) return ra_fail_nomem(err, FMT);
    for (size_t k = 0; k < ch->texture_count; k++) b.tex_of[k] = -2;
    for (uint32_t i = 0; i < m->surface_count; i++)
        corners[m->surfaces[i].material] += 3 * (size_t)m->surfaces[i].tri_count;
    for (uint32_t mi = 0; mi < m->material_count; mi++) {
        if (!corners[mi]) continue;
        int32_t mat = (int32_t)s->material_count;
        if ((rs = add_material(&b, mi)) != RA_OK || (rs = add_mesh(&b, mi, corners[mi], mat)) != RA_OK) return rs;
    }
    ra_arena *ar = doc->arena;
    bool ok = ra_meta_set_int(ar, &s->meta, "metroid.model_version", m->version) &&
              ra_meta_set_bool(ar, &s->meta, "metroid.skinned", b.skinned) &&
              ra_meta_set_int(ar, &s->meta, "metroid.model_surfaces", m->surface_count) &&
              (!ch->cmdl_path || ra_meta_set_string(ar, &s->meta, "metroid.model", ch->cmdl_path)) &&
              (!ch->cskr_path || ra_meta_set_string(ar, &s->meta, "metroid.skin", ch->cskr_path));
    if (!ok) return ra_fail_nomem(err, FMT);
    if (b.unknown_rules)
        ra_scene_warn(s,
                      "%zu skin rule(s) name a bone the skeleton lacks (the first: bone %u, metroid_cskr rule.bone_id "
                      "at byte %llu); their vertices are bound to the skeleton's root",
                      b.unknown_rules, b.unknown_bone, (unsigned long long)b.unknown_offset);
    if (m->extra_konst)
        ra_scene_warn(s, "%u material(s) list more than 4 konst colours; the first 4 are used, the rest skipped",
                      m->extra_konst);
    if (m->no_position_unused)
        ra_scene_warn(s, "%u material(s) without positions, which no surface uses, ignored", m->no_position_unused);
    if (m->float_uv_fallback)
        ra_scene_warn(s,
                      "%u material(s) set flag 0x2000 (short UVs) in a model without a short-UV array (header flag "
                      "4); their TEX0 coordinates are read from the float UVs",
                      m->float_uv_fallback);
    if (m->dl_over_size)
        ra_scene_warn(s,
                      "%u surface(s) hold a display list longer than their size field; cut there, as the game "
                      "draws only the size field's bytes (the public loaders read to the section's end)",
                      m->dl_over_size);
    if (m->vat_mismatch)
        ra_scene_warn(s,
                      "%u primitive(s) use a vertex format above 2 or one that disagrees with the header's normal "
                      "flag; the header's layout is used",
                      m->vat_mismatch);
    if (m->nonfinite_unused)
        ra_scene_warn(s, "%u non-finite value(s) in the vertex arrays, which no triangle uses", m->nonfinite_unused);
    size_t tested = 0, inverted = 0;
    mp_winding(m, &tested, &inverted);
    if (tested && 2 * inverted > tested)
        ra_scene_warn(s,
                      "%zu of %zu triangle(s) face away from their stored vertex normals: the model may be wound the "
                      "other way (inside out)",
                      inverted, tested);
    if (m->skipped_primitives)
        ra_scene_warn(s, "%u line or point primitive(s) left out (only triangles are exported)", m->skipped_primitives);
    if (m->dropped_triangles)
        ra_scene_warn(s, "%u degenerate triangle(s) (a repeated position, strip stitching) left out",
                      m->dropped_triangles);
    if (b.unbound)
        ra_scene_warn(s, "%zu vertex(es) past the skin rules' vertices are bound to the skeleton's root", b.unbound);
    if (b.zero_rules)
        ra_scene_warn(s, "%zu skin rule(s) without weight are bound to the skeleton's root", b.zero_rules);
    if (b.renormalised)
        ra_scene_warn(s, "%zu skin rule(s) whose weights do not sum to 1 were renormalised", b.renormalised);
    if (b.skinned && ch->cskr.dropped)
        ra_scene_warn(s, "%u skin weight(s) past the third of their rule ignored, as the game does", ch->cskr.dropped);
    if (b.off_by_normal)
        ra_scene_warn(s, "%zu vertex(es) whose normal the game would skin by another rule than the position",
                      b.off_by_normal);
    /* the position section's zero padding reads as up to two more positions */
    if (b.skinned && (ch->cskr.vertices > m->pos_count || (m->pos_count - ch->cskr.vertices) * 12 >= 32))
        ra_scene_warn(s, "the skin rules cover %llu positions, the model has %u", (unsigned long long)ch->cskr.vertices,
                      m->pos_count);
    return RA_OK;
}
