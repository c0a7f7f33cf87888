/* Metroid Prime 1/2 CMDL (character model): sections, vertex arrays, the
 * first material set and the surfaces' GX display lists, triangulated.
 * docs/formats/metroid_prime.md §13.1-13.2.
 *
 *   u32 0xDEADBABE, u32 version (2 Prime 1, 4 Prime 2), u32 flags, f32[6] AABB,
 *   u32 section count S, u32 material-set count M, u32[S] section sizes,
 *   pad to 32; sections back to back: M material sets, positions, normals,
 *   colours, float UVs, [short UVs if flags & 4], surface offsets, surfaces.
 * Every section size, count, display-list length and index is checked
 * against the bytes it may use before it is used. */
#include <math.h>
#include <string.h>

#include "mp_internal.h"

#define FMT "metroid_cmdl"
#define CMDL_MAGIC 0xDEADBABEu

enum { /* GX attributes in a vertex's order after the matrix-index bytes */
    A_POS,
    A_NRM,
    A_CLR0,
    A_CLR1,
    A_TEX0,
    A_COUNT = A_TEX0 + 8
};

typedef struct cmdl_rd {
    ra_cursor c;
    mp_cmdl *m;
    ra_arena *ar;
    ra_error *err;
    uint64_t *start; /* per section: byte offset */
    uint32_t *size;
} cmdl_rd;

static uint64_t align32(uint64_t v) { return (v + 31) & ~(uint64_t)31; }

static bool fail(cmdl_rd *r, ra_status code, uint64_t off, const char *field, const char *msg)
{
    ra_fail(r->err, code, FMT, off, field, "%s", msg);
    return false;
}

/* a cursor over section k only (offsets stay the file's) */
static void section_cursor(cmdl_rd *r, uint32_t k, ra_cursor *c)
{
    ra_cursor_init(c, r->c.data, (size_t)(r->start[k] + r->size[k]), FMT, r->err);
    c->pos = (size_t)r->start[k];
}

/* ---- materials ------------------------------------------------------------------------------------------ */
typedef struct tev_stage {
    uint32_t cin, ain, cop, aop;
    uint8_t kalpha, kcolor, ras;
    uint8_t texmap, texcoord;
} tev_stage;

/* The base colour (docs/formats/metroid_prime.md §13.2): the first stage that samples a texture through
 * coordinates made from TEXn and feeds TEXC into its colour, preferring one that multiplies it by the
 * rasterised colour, C0 or the previous stage; else a KONST colour; else white. */
static void base_colour(mp_material *mt, const tev_stage *st, uint32_t ns, const uint32_t *gen, uint32_t ng,
                        const mp_cmdl *m)
{
    int first = -1, best = -1;
    for (uint32_t i = 0; i < ns; i++) {
        const tev_stage *s = &st[i];
        if (s->texmap == 0xFF || s->texcoord == 0xFF || s->texcoord >= ng) continue;
        uint32_t src = gen[s->texcoord] >> 4 & 31;
        if (src < 4 || src > 11) continue; /* positions or normals: a reflection map */
        uint32_t a = s->cin & 31, b = s->cin >> 5 & 31, cc = s->cin >> 10 & 31, d = s->cin >> 15 & 31;
        if (a != 8 && b != 8 && cc != 8 && d != 8) continue;
        if (first < 0) first = (int)i;
        uint32_t other = b == 8 ? cc : cc == 8 ? b : 99;
        if (best < 0 && a == 15 && (other == 10 || other == 2 || other == 0)) best = (int)i;
    }
    int pick = best >= 0 ? best : first;
    if (pick >= 0) {
        const tev_stage *s = &st[pick];
        mt->base_uv = (gen[s->texcoord] >> 4 & 31) - 4;
        if (s->texmap < mt->texture_count && mt->textures[s->texmap] < m->texture_count) {
            mt->base_texture = m->texture_ids[mt->textures[s->texmap]];
            mt->has_texture = true;
        }
        return;
    }
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t in[4] = {st[i].cin & 31, st[i].cin >> 5 & 31, st[i].cin >> 10 & 31, st[i].cin >> 15 & 31};
        if (in[0] != 14 && in[1] != 14 && in[2] != 14 && in[3] != 14) continue;
        uint8_t k = st[i].kcolor;
        if (k >= 0x0C && k <= 0x0F && (uint32_t)(k - 0x0C) < mt->konst_count) {
            mt->konst_color = mt->konst[k - 0x0C];
        } else if (k <= 0x07) {
            uint32_t v = (uint32_t)(255 * (8 - k) / 8);
            mt->konst_color = v << 24 | v << 16 | v << 8 | 0xFF;
        } else {
            continue;
        }
        mt->has_konst_color = true;
        return;
    }
}

static bool read_material(cmdl_rd *r, ra_cursor *c, mp_material *mt, uint32_t index)
{
    mp_cmdl *m = r->m;
    mt->offset = c->pos;
    ra_rd_u32be(c, &mt->flags, "material.flags");
    if (!ra_rd_u32be(c, &mt->texture_count, "material.texture_count") ||
        !ra_cursor_check_count(c, mt->texture_count, 4, "material.texture_count"))
        return false;
    if (!(mt->textures = ra_arena_array(r->ar, mt->texture_count, sizeof *mt->textures))) return ra_cursor_nomem(c);
    for (uint32_t i = 0; i < mt->texture_count; i++) {
        size_t at = c->pos;
        if (!ra_rd_u32be(c, &mt->textures[i], "material.textures")) return false;
        if (mt->textures[i] >= m->texture_count)
            return ra_cursor_fail(c, RA_ERR_BAD_VALUE, at, "material.textures",
                                  "material %u: texture %u of a table of %u", index, mt->textures[i], m->texture_count);
    }
    size_t vat_at = mt->vat_offset = c->pos;
    ra_rd_u32be(c, &mt->vtx_flags, "material.vertex_attributes");
    if (m->version >= 4) ra_rd_skip(c, 8, "material.unknown");
    ra_rd_skip(c, 4, "material.group");
    if (!ra_cursor_ok(c)) return false;
    for (uint32_t a = 0; a < A_COUNT; a++) {
        uint32_t t = mt->vtx_flags >> (2 * a) & 3;
        if (t == 1)
            return ra_cursor_fail(c, RA_ERR_UNSUPPORTED, vat_at, "material.vertex_attributes",
                                  "material %u: attribute %u is direct (inline) data; only 8- and 16-bit indices "
                                  "are supported",
                                  index, a);
    }
    /* a material without positions is refused only when a surface uses it (read_surface) */
    if (mt->flags & 0x8) { /* GX has 4 konst colours: the first 4 are kept, the rest skipped (as PWE does) */
        uint32_t nk = 0;
        if (!ra_rd_u32be(c, &nk, "material.konst_count") || !ra_cursor_check_count(c, nk, 4, "material.konst_count"))
            return false;
        mt->konst_count = nk > 4 ? 4 : nk;
        for (uint32_t i = 0; i < mt->konst_count; i++) ra_rd_u32be(c, &mt->konst[i], "material.konst");
        if (nk > 4) {
            ra_rd_skip(c, (size_t)(nk - 4) * 4, "material.konst");
            m->extra_konst++;
        }
    }
    ra_rd_u16be(c, &mt->blend_dst, "material.blend_dst");
    ra_rd_u16be(c, &mt->blend_src, "material.blend_src");
    if (mt->flags & 0x400) ra_rd_skip(c, 4, "material.indirect_texture");
    uint32_t n = 0;
    if (!ra_rd_u32be(c, &n, "material.color_channels") || !ra_cursor_check_count(c, n, 4, "material.color_channels") ||
        !ra_rd_skip(c, (size_t)n * 4, "material.color_channels"))
        return false;
    if (!ra_rd_u32be(c, &mt->tev_count, "material.tev_count") ||
        !ra_cursor_check_count(c, mt->tev_count, 24, "material.tev_count"))
        return false;
    if (mt->tev_count > 16)
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, "material.tev_count",
                              "material %u: %u TEV stages (GX has 16)", index, mt->tev_count);
    tev_stage st[16];
    memset(st, 0, sizeof st);
    for (uint32_t i = 0; i < mt->tev_count; i++) {
        ra_rd_u32be(c, &st[i].cin, "tev.color_inputs");
        ra_rd_u32be(c, &st[i].ain, "tev.alpha_inputs");
        ra_rd_u32be(c, &st[i].cop, "tev.color_op");
        ra_rd_u32be(c, &st[i].aop, "tev.alpha_op");
        ra_rd_skip(c, 1, "tev.pad");
        ra_rd_u8(c, &st[i].kalpha, "tev.konst_alpha");
        ra_rd_u8(c, &st[i].kcolor, "tev.konst_color");
        ra_rd_u8(c, &st[i].ras, "tev.rasterized");
    }
    for (uint32_t i = 0; i < mt->tev_count; i++) {
        ra_rd_skip(c, 2, "tev_order.pad");
        ra_rd_u8(c, &st[i].texmap, "tev_order.texture_map");
        ra_rd_u8(c, &st[i].texcoord, "tev_order.texcoord");
    }
    uint32_t ng = 0, gen[8];
    if (!ra_rd_u32be(c, &ng, "material.texgen_count")) return false;
    if (ng > 8)
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, "material.texgen_count",
                              "material %u: %u texture coordinate generators (GX has 8)", index, ng);
    for (uint32_t i = 0; i < ng; i++) ra_rd_u32be(c, &gen[i], "material.texgens");
    if (!ra_cursor_ok(c)) return false;
    base_colour(mt, st, mt->tev_count, gen, ng, m);
    return true;
}

static bool read_material_set(cmdl_rd *r)
{
    mp_cmdl *m = r->m;
    ra_cursor c;
    section_cursor(r, 0, &c);
    if (!ra_rd_u32be(&c, &m->texture_count, "material_set.texture_count") ||
        !ra_cursor_check_count(&c, m->texture_count, 4, "material_set.texture_count"))
        return false;
    if (!(m->texture_ids = ra_arena_array(r->ar, m->texture_count, sizeof *m->texture_ids))) return ra_cursor_nomem(&c);
    for (uint32_t i = 0; i < m->texture_count; i++) ra_rd_u32be(&c, &m->texture_ids[i], "material_set.textures");
    if (!ra_rd_u32be(&c, &m->material_count, "material_set.material_count") ||
        !ra_cursor_check_count(&c, m->material_count, 4, "material_set.material_count"))
        return false;
    uint32_t *ends = ra_arena_array(r->ar, m->material_count, sizeof *ends);
    m->materials = ra_arena_array(r->ar, m->material_count, sizeof *m->materials);
    if (!ends || !m->materials) return ra_cursor_nomem(&c);
    size_t ends_at = c.pos;
    for (uint32_t i = 0; i < m->material_count; i++) ra_rd_u32be(&c, &ends[i], "material_set.material_ends");
    if (!ra_cursor_ok(&c)) return false;
    size_t base = c.pos, limit = c.size;
    for (uint32_t i = 0; i < m->material_count; i++) {
        uint64_t from = i ? ends[i - 1] : 0, to = ends[i];
        if (to < from || to > limit - base)
            return fail(r, RA_ERR_BAD_VALUE, ends_at + 4ull * i, "material_set.material_ends",
                        "a material ends before it starts or past its section");
        ra_cursor mc;
        ra_cursor_init(&mc, c.data, (size_t)(base + to), FMT, r->err);
        mc.pos = (size_t)(base + from);
        if (!read_material(r, &mc, &m->materials[i], i)) return false;
    }
    return true;
}

/* ---- vertex arrays ----------------------------------------------------------------------------------- */
/* Non-finite values are counted here and refused only where a triangle uses them (walk_dl). */
static bool read_floats(cmdl_rd *r, uint32_t k, uint32_t per, float **out, uint32_t *count, const char *field)
{
    ra_cursor c;
    section_cursor(r, k, &c);
    *count = r->size[k] / (4 * per);
    if (!(*out = ra_arena_array_uninit(r->ar, (size_t)*count * per + 1, sizeof **out))) return ra_cursor_nomem(&c);
    for (size_t i = 0; i < (size_t)*count * per; i++) {
        ra_rd_f32be(&c, &(*out)[i], field);
        if (!isfinite((*out)[i])) r->m->nonfinite_unused++;
    }
    return ra_cursor_ok(&c);
}

/* n floats from v: all finite */
static bool finite_n(const float *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

static void normalise(float *v)
{
    double l = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
    if (l > 1e-12)
        for (int k = 0; k < 3; k++) v[k] = (float)(v[k] / l);
}

static bool read_arrays(cmdl_rd *r, uint32_t first)
{
    mp_cmdl *m = r->m;
    if (!read_floats(r, first, 3, &m->pos, &m->pos_count, "positions")) return false;
    ra_cursor c;
    section_cursor(r, first + 1, &c);
    if (m->flags & 2) { /* s16, 14 fractional bits */
        m->nrm_count = r->size[first + 1] / 6;
        if (!(m->nrm = ra_arena_array_uninit(r->ar, (size_t)m->nrm_count * 3 + 1, sizeof *m->nrm)))
            return ra_cursor_nomem(&c);
        for (size_t i = 0; i < (size_t)m->nrm_count * 3; i++) {
            int16_t v = 0;
            ra_rd_s16be(&c, &v, "normals");
            m->nrm[i] = (float)v / 16384.0f;
        }
        if (!ra_cursor_ok(&c)) return false;
    } else if (!read_floats(r, first + 1, 3, &m->nrm, &m->nrm_count, "normals")) {
        return false;
    }
    for (uint32_t i = 0; i < m->nrm_count; i++) normalise(&m->nrm[3 * (size_t)i]);
    section_cursor(r, first + 2, &c);
    m->clr_count = r->size[first + 2] / 4;
    if (!(m->clr = ra_arena_array_uninit(r->ar, (size_t)m->clr_count + 1, sizeof *m->clr))) return ra_cursor_nomem(&c);
    for (uint32_t i = 0; i < m->clr_count; i++) ra_rd_u32be(&c, &m->clr[i], "colors");
    if (!ra_cursor_ok(&c) || !read_floats(r, first + 3, 2, &m->uv, &m->uv_count, "uvs")) return false;
    if (m->flags & 4) { /* u16, 15 fractional bits */
        section_cursor(r, first + 4, &c);
        m->suv_count = r->size[first + 4] / 4;
        if (!(m->suv = ra_arena_array_uninit(r->ar, (size_t)m->suv_count * 2 + 1, sizeof *m->suv)))
            return ra_cursor_nomem(&c);
        for (size_t i = 0; i < (size_t)m->suv_count * 2; i++) {
            uint16_t v = 0;
            ra_rd_u16be(&c, &v, "short_uvs");
            m->suv[i] = (float)v / 32768.0f;
        }
        if (!ra_cursor_ok(&c)) return false;
    }
    return true;
}

/* ---- surfaces and display lists -------------------------------------------------------------------------- */
/* Walks one display list, from `from` to its size field's end `cut` (at
 * most the section's end `to`): with tris NULL it only checks and counts.
 * The game hands GX the size field's bytes (CCubeSurface), so a list that
 * goes on past them is cut there: a primitive the cut splits keeps the
 * triangles whose vertices all lie before it, and *over is set.  A
 * primitive running past the section's end where the size field does not
 * cut it first is refused. */
static bool walk_dl(cmdl_rd *r, const mp_material *mt, size_t from, size_t cut, size_t to, mp_corner *tris,
                    uint32_t *count, bool *over)
{
    mp_cmdl *m = r->m;
    ra_cursor c;
    ra_cursor_init(&c, r->c.data, to, FMT, r->err);
    c.pos = from;
    uint32_t vf = mt->vtx_flags, direct = 0, isize[A_COUNT];
    for (uint32_t k = 24; k < 32; k++) direct += vf >> k & 1;
    size_t vsize = direct;
    for (uint32_t a = 0; a < A_COUNT; a++)
        vsize += isize[a] = (vf >> (2 * a) & 3) == 3 ? 2u : (vf >> (2 * a) & 3) == 2 ? 1u : 0u;
    uint32_t limit[A_COUNT];
    for (uint32_t a = 0; a < A_COUNT; a++) limit[a] = m->uv_count;
    limit[A_POS] = m->pos_count, limit[A_NRM] = m->nrm_count, limit[A_CLR0] = limit[A_CLR1] = m->clr_count;
    /* material flag 0x2000: TEX0 indexes the short-UV array, whichever TEXn the base texture uses */
    bool tex0_short = (mt->flags & 0x2000) && (m->flags & 4);
    if (tex0_short) limit[A_TEX0] = m->suv_count;
    static const char *const fields[A_COUNT] = {
        "display_list.position_index", "display_list.normal_index", "display_list.color_index",
        "display_list.color_index",    "display_list.uv_index",     "display_list.uv_index",
        "display_list.uv_index",       "display_list.uv_index",     "display_list.uv_index",
        "display_list.uv_index",       "display_list.uv_index",     "display_list.uv_index"};
    uint32_t uv_attr = A_TEX0 + mt->base_uv;
    uint32_t n_tri = 0;
    *over = false;
    while (c.pos < to) {
        size_t op_at = c.pos;
        uint8_t op = 0;
        uint16_t n = 0;
        ra_rd_u8(&c, &op, "display_list.opcode");
        if (op == 0) { /* GX NOP: the padding after the list */
            c.pos = op_at;
            break;
        }
        if (op_at + 3 > cut) { /* (more than padding past the size field) */
            *over = true;
            break;
        }
        if (!ra_rd_u16be(&c, &n, "display_list.count")) return false;
        uint32_t prim = op & 0xF8u, vat = op & 7u;
        if (prim < 0x80 || prim > 0xB8)
            return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, op_at, "display_list.opcode", "GX command 0x%02X", op);
        /* the vertex format only tells the GPU how to read the arrays, whose layout the header gives: a
         * format > 2 or one that disagrees with the header's normals is counted (a warning), as the public
         * loaders ignore it */
        if (!tris && (vat > 2 || ((vf & 0xC) && (vat == 0) != !(m->flags & 2)))) m->vat_mismatch++;
        uint32_t nv = n; /* the vertices GX reads whole */
        if ((uint64_t)n * vsize > cut - c.pos) {
            if (cut == to)
                return ra_cursor_fail(&c, RA_ERR_TRUNCATED, op_at + 1, "display_list.count",
                                      "%u vertices of %zu bytes run past the display list (%zu bytes left)", n, vsize,
                                      to - c.pos);
            nv = (uint32_t)((cut - c.pos) / vsize);
            *over = true;
        }
        bool tri = prim == 0x80 || prim == 0x90 || prim == 0x98 || prim == 0xA0;
        if (!tri) m->skipped_primitives += tris ? 0 : 1;
        mp_corner v[3] = {{0}}, first = {0}, prev = {0};
        for (uint32_t i = 0; i < nv; i++) {
            mp_corner cv = {MP_NO_INDEX, MP_NO_INDEX, MP_NO_INDEX, MP_NO_INDEX};
            c.pos += direct; /* matrix indices: the CPU skins these models */
            for (uint32_t a = 0; a < A_COUNT; a++) {
                if (!isize[a]) continue;
                size_t at = c.pos;
                uint32_t idx = isize[a] == 2 ? ra_load_u16be(c.data + c.pos) : c.data[c.pos];
                c.pos += isize[a];
                if (idx >= limit[a])
                    return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, at, fields[a], "index %u of an array of %u", idx,
                                          limit[a]);
                /* the values a triangle uses must be finite */
                bool bad = (a == A_POS && !finite_n(&m->pos[3 * (size_t)idx], 3)) ||
                           (a == A_NRM && !finite_n(&m->nrm[3 * (size_t)idx], 3)) ||
                           (a == uv_attr && !(a == A_TEX0 && tex0_short) && !finite_n(&m->uv[2 * (size_t)idx], 2));
                if (bad)
                    return ra_cursor_fail(&c, RA_ERR_BAD_VALUE, at, fields[a],
                                          "index %u names a value that is not a finite number", idx);
                if (a == A_POS) cv.pos = idx;
                else if (a == A_NRM) cv.nrm = idx;
                else if (a == A_CLR0) cv.clr = idx;
                else if (a == uv_attr) cv.uv = idx;
            }
            if (!tri) continue;
            /* the triangle this vertex closes, if any (docs/formats/metroid_prime.md §13.1) */
            bool emit = false;
            mp_corner t[3];
            if (prim == 0x90) {
                v[i % 3] = cv;
                if (i % 3 == 2) emit = true, t[0] = v[0], t[1] = v[1], t[2] = v[2];
            } else if (prim == 0x98) {
                if (i >= 2) {
                    emit = true;
                    if (i % 2 == 0) t[0] = v[0], t[1] = v[1];
                    else t[0] = v[1], t[1] = v[0];
                    t[2] = cv;
                }
                v[0] = v[1], v[1] = cv;
            } else if (prim == 0xA0) {
                if (i == 0) first = cv;
                if (i >= 2) emit = true, t[0] = first, t[1] = prev, t[2] = cv;
                prev = cv;
            } else { /* quads */
                uint32_t q = i % 4;
                if (q == 0) first = cv;
                if (q == 2) emit = true, t[0] = first, t[1] = prev, t[2] = cv;
                if (q == 3) emit = true, t[0] = first, t[1] = prev, t[2] = cv;
                prev = cv;
            }
            if (!emit) continue;
            if (t[0].pos == t[1].pos || t[1].pos == t[2].pos || t[0].pos == t[2].pos) {
                if (!tris) m->dropped_triangles++;
                continue;
            }
            if (tris) memcpy(&tris[3 * (size_t)n_tri], t, sizeof t);
            n_tri++;
        }
        if (nv < n) break;
    }
    *count = n_tri;
    return true;
}

static bool read_surface(cmdl_rd *r, uint32_t k, mp_surface *sf, uint32_t index)
{
    mp_cmdl *m = r->m;
    ra_cursor c;
    section_cursor(r, k, &c);
    sf->offset = c.pos;
    uint32_t dl = 0, extra = 0;
    size_t mat_at = c.pos + 12;
    ra_rd_skip(&c, 12, "surface.center");
    ra_rd_u32be(&c, &sf->material, "surface.material");
    ra_rd_u32be(&c, &dl, "surface.display_list_size");
    ra_rd_skip(&c, 8, "surface.pointers");
    ra_rd_u32be(&c, &extra, "surface.extra_size");
    if (!ra_cursor_ok(&c)) return false;
    if (sf->material >= m->material_count)
        return fail(r, RA_ERR_BAD_VALUE, mat_at, "surface.material", "a material the model does not have");
    uint64_t header = align32((m->version >= 4 ? 0x30u : 0x2Cu) + (uint64_t)extra);
    if (header > r->size[k]) {
        ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, mat_at + 16, "surface.extra_size",
                "surface %u: a header of %llu bytes in a section of %u", index, (unsigned long long)header, r->size[k]);
        return false;
    }
    const mp_material *mt = &m->materials[sf->material];
    if (!(mt->vtx_flags & 3))
        return fail(r, RA_ERR_BAD_VALUE, mt->vat_offset, "material.vertex_attributes",
                    "a material a surface uses has vertices without positions");
    /* a corner's uv is short when the base texture reads TEX0 and flag 0x2000 sends TEX0 to the short array;
     * without the header's short-UV array (flag 4) the float array is read, as PWE does (a warning) */
    sf->short_uv = (mt->flags & 0x2000) && (m->flags & 4) && mt->base_uv == 0;
    /* the list runs to the smaller of the section's end and its size field's (0x00 padding ends it
     * before): the game draws the size field's bytes, the public loaders walk to the section's end, so
     * a list longer than its field is cut, with a warning */
    uint64_t from = r->start[k] + header, to = r->start[k] + r->size[k], len = dl & 0x7FFFFFFFu;
    uint64_t cut = len < to - from ? from + len : to;
    uint32_t n = 0;
    bool over = false;
    if (!walk_dl(r, mt, (size_t)from, (size_t)cut, (size_t)to, NULL, &n, &over)) return false;
    if (over) m->dl_over_size++;
    sf->corners = ra_arena_array_uninit(r->ar, 3 * (size_t)n + 1, sizeof *sf->corners);
    if (!sf->corners) {
        ra_fail_nomem(r->err, FMT);
        return false;
    }
    sf->tri_count = n;
    return walk_dl(r, mt, (size_t)from, (size_t)cut, (size_t)to, sf->corners, &n, &over);
}

ra_status mp_cmdl_read(const uint8_t *data, size_t size, ra_arena *ar, mp_cmdl *out, ra_error *err)
{
    memset(out, 0, sizeof *out);
    cmdl_rd r = {.m = out, .ar = ar, .err = err};
    ra_cursor *c = &r.c;
    ra_cursor_init(c, data, size, FMT, err);
    uint32_t magic = 0;
    if (!ra_rd_u32be(c, &magic, "magic")) return err->code;
    if (magic != CMDL_MAGIC)
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "magic", "%08X is not a Prime 1/2 model (DEADBABE)", magic);
    ra_rd_u32be(c, &out->version, "version");
    ra_rd_u32be(c, &out->flags, "flags");
    for (int i = 0; i < 6; i++) ra_rd_f32be(c, &out->aabb[i], "aabb");
    ra_rd_u32be(c, &out->section_count, "section_count");
    ra_rd_u32be(c, &out->material_sets, "material_set_count");
    if (!ra_cursor_ok(c)) return err->code;
    if (out->version != 2 && out->version != 4)
        return ra_fail(err, out->version == 3 || out->version == 5 ? RA_ERR_UNSUPPORTED : RA_ERR_BAD_VALUE, FMT, 4,
                       "version", "model version %u (2 = Prime 1 and 4 = Prime 2 are supported)", out->version);
    uint32_t fixed = 5 + (out->flags & 4 ? 1 : 0);
    if (out->material_sets == 0 || out->material_sets > out->section_count ||
        out->section_count - out->material_sets < fixed)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 0x28, "material_set_count",
                       "%u material sets in %u sections (at least one, and %u array sections after them)",
                       out->material_sets, out->section_count, fixed);
    if (!ra_cursor_check_count(c, out->section_count, 4, "section_count")) return err->code;
    r.start = ra_arena_array(ar, out->section_count, sizeof *r.start);
    r.size = ra_arena_array(ar, out->section_count, sizeof *r.size);
    if (!r.start || !r.size) return ra_fail_nomem(err, FMT);
    for (uint32_t k = 0; k < out->section_count; k++) ra_rd_u32be(c, &r.size[k], "section_sizes");
    if (!ra_cursor_ok(c)) return err->code;
    uint64_t at = align32(0x2C + 4ull * out->section_count);
    for (uint32_t k = 0; k < out->section_count; k++) {
        uint64_t field = 0x2C + 4ull * k;
        if (r.size[k] % 32)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, field, "section_sizes",
                           "section %u: %u bytes, not a multiple of 32", k, r.size[k]);
        if (!ra_range_ok(size, at, r.size[k]))
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, field, "section_sizes",
                           "section %u: %u bytes at %llu run past the end of the file (%zu bytes)", k, r.size[k],
                           (unsigned long long)at, size);
        r.start[k] = at;
        at += r.size[k];
    }
    uint32_t first = out->material_sets, offsets = first + fixed - 1;
    if (!read_material_set(&r) || !read_arrays(&r, first)) return err->code;
    /* the surface-offset section: u32 N then N end offsets (checked against the sections as a count only) */
    ra_cursor sc;
    section_cursor(&r, offsets, &sc);
    if (!ra_rd_u32be(&sc, &out->surface_count, "surfaces.count")) return err->code;
    if (out->surface_count != out->section_count - offsets - 1)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, r.start[offsets], "surfaces.count",
                       "%u surfaces, but %u sections follow", out->surface_count, out->section_count - offsets - 1);
    out->surfaces = ra_arena_array(ar, out->surface_count, sizeof *out->surfaces);
    if (!out->surfaces) return ra_fail_nomem(err, FMT);
    for (uint32_t s = 0; s < out->surface_count; s++)
        if (!read_surface(&r, offsets + 1 + s, &out->surfaces[s], s)) return err->code;
    uint8_t *used = ra_arena_array(ar, (size_t)out->material_count + 1, 1);
    if (!used) return ra_fail_nomem(err, FMT);
    for (uint32_t s = 0; s < out->surface_count; s++) used[out->surfaces[s].material] = 1;
    for (uint32_t i = 0; i < out->material_count; i++) {
        const mp_material *mt = &out->materials[i];
        if (!used[i] && !(mt->vtx_flags & 3)) out->no_position_unused++;
        if (used[i] && (mt->flags & 0x2000) && !(out->flags & 4)) out->float_uv_fallback++;
    }
    if (!(out->bytes = ra_arena_memdup(ar, data, size, 1))) return ra_fail_nomem(err, FMT);
    out->size = size;
    return RA_OK;
}
