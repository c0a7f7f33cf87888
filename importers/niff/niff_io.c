/* NIFF: read and write (docs/formats/niff.md §1-§4).  The reader walks the lists by their
 * size fields in physical order, checks every size against the area that
 * holds it and every index against the list it points into, and keeps what
 * it does not interpret as bytes.  No playback semantics here (niff_scene.c):
 * KEY chains, hierarchy cycles and billboard targets are checked there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/niff.h"

#define FMT "niff"

const uint32_t niff_header_list_tags[NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS] = {
    0x00010000, 0x00100000, 0x000e0000, 0x000f0000, 0x00020000, 0x00030000, 0x00040000, 0x00050000, 0x00060000,
    0x00070000, 0x00080000, 0x00090000, 0x000a0000, 0x000b0000, 0x00120000, 0x000c0000, 0x000d0000, 0x00130000,
    0x00110000,
    /* NIFF 2 */
    0x00200000, 0x00210000, 0x00220000, 0x00280000, 0x00230000, 0x00240000, 0x00250000, 0x00260000, 0x00270000};
static const char *const header_list_names[NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS] = {
    "scene",    "env",     "cam",    "light",      "obj",   "shape",    "vtx",
    "color",    "vector",  "st",     "tri",        "part",  "mat",      "tex",
    "tex_img",  "anim",    "coll",   "switch",     "name",  "ci_img",   "color_palette",
    "envelope", "cluster", "weight", "chain_root", "joint", "effector", "external_name"};

const uint8_t niff_channel_values[NIFF_CH_COUNT] = {4, 1, 1, 1, 6, 3, 3, 3};

static int header_slot(uint32_t tag)
{
    for (int i = 0; i < NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS; i++)
        if (niff_header_list_tags[i] == tag) return i;
    return -1;
}

/* ---- detection ------------------------------------------------------------------------------------------- */
/* `d` may be a prefix of the file (Assimp's CanRead reads 256 bytes), so a
 * file_size larger than n does not disqualify: the reader reports it. */
int niff_detect(const uint8_t *d, size_t n)
{
    if (n < 104) return 0;
    uint32_t fsize = ra_load_u32be(d + 4), hs = ra_load_u32be(d + 12);
    if (ra_load_u32be(d + 8) != NIFF_TAG_HEADER || hs < 100 || hs % 4 || fsize < (uint64_t)hs + 24) return 0;
    if (hs + 4 > n || ra_load_u32be(d + hs) != NIFF_TAG_SCENE_LIST) return 0;
    if (100 + (uint64_t)ra_load_u32be(d + 92) + ra_load_u32be(d + 96) != hs) return 0;
    return fsize == n ? 90 : 80;
}

/* ---- reader ---------------------------------------------------------------------------------------------- */
typedef struct rd {
    ra_cursor c;
    const uint8_t *data;
    size_t size; /* file_size */
    ra_arena *ar;
    ra_error *err;
} rd;

static bool failed(const rd *r) { return r->err->code != RA_OK; }

/* u32 at `off`, which must lie inside [.., end) (the enclosing area). */
static uint32_t u32(rd *r, uint64_t off, uint64_t end, const char *field)
{
    uint32_t v = 0;
    if (failed(r)) return 0;
    if (end > r->size) end = r->size;
    r->c.size = (size_t)end;
    if (off > end) {
        ra_fail(r->err, RA_ERR_TRUNCATED, FMT, end, field, "truncated: the field lies past the end of its area");
        return 0;
    }
    r->c.pos = (size_t)off;
    ra_rd_u32be(&r->c, &v, field);
    return v;
}

static float f32(rd *r, uint64_t off, uint64_t end, const char *field)
{
    uint32_t u = u32(r, off, end, field);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A float that must be finite (NaN and infinities are refused). */
static float ffin(rd *r, uint64_t off, uint64_t end, const char *field)
{
    float f = f32(r, off, end, field);
    if (!failed(r) && !isfinite(f)) ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, off, field, "not a finite number");
    return f;
}

static bool blob(rd *r, uint64_t off, uint64_t len, uint64_t end, niff_blob *b, const char *field)
{
    b->size = 0;
    b->data = NULL;
    if (failed(r)) return false;
    if (!ra_range_ok((size_t)end, off, len) || end > r->size)
        return ra_fail(r->err, RA_ERR_TRUNCATED, FMT, off, field,
                       "truncated: %llu bytes run past the end of their area", (unsigned long long)len) == RA_OK;
    if (!len) return true;
    b->data = ra_arena_alloc(r->ar, (size_t)len);
    if (!b->data) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, off, field, "out of memory") == RA_OK;
    memcpy(b->data, r->data + off, (size_t)len);
    b->size = (uint32_t)len;
    return true;
}

static bool bad(rd *r, uint64_t off, const char *field, const char *fmt, uint64_t a, uint64_t b)
{
    char msg[160];
    snprintf(msg, sizeof msg, fmt, (unsigned long long)a, (unsigned long long)b);
    ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, off, field, "%s", msg);
    return false;
}

/* The two extension blocks at the end of an area [start, end): their sizes
 * are the fields at nx_off and nx_off + 4, and they must fill exactly the
 * bytes from `body_end` to `end`. */
static bool ext_blocks(rd *r, uint64_t nx_off, uint64_t body_end, uint64_t end, niff_ext *e, bool keep_nintendo)
{
    uint64_t nx = u32(r, nx_off, end, "nintendo_extension_block_size");
    uint64_t ux = u32(r, nx_off + 4, end, "user_extension_block_size");
    if (failed(r)) return false;
    if (body_end > end || nx + ux != end - body_end)
        return bad(r, nx_off, "nintendo_extension_block_size",
                   "the extension blocks (%llu bytes) do not fill the %llu bytes left in their area", nx + ux,
                   body_end > end ? 0 : end - body_end);
    if (keep_nintendo && !blob(r, body_end, nx, end, &e->nintendo, "nintendo_extension_block")) return false;
    return blob(r, body_end + nx, ux, end, &e->user, "user_extension_block");
}

/* A u32 array of n entries at off (n already checked to fit). */
static uint32_t *u32_array(rd *r, uint64_t off, uint32_t n, uint64_t end, const char *field)
{
    uint32_t *v = ra_arena_array(r->ar, n, sizeof *v);
    if (!v) {
        ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, off, field, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) v[i] = u32(r, off + 4ull * i, end, field);
    return failed(r) ? NULL : v;
}

/* The generic list header (docs/formats/niff.md §1): item i is [items[i].off, +size). */
typedef struct item_span {
    uint64_t off;
    uint32_t size;
} item_span;

static item_span *list_items(rd *r, uint64_t off, uint64_t end, uint32_t min_item, uint32_t *count, niff_ext *ext)
{
    uint32_t n = u32(r, off + 12, end, "item count");
    uint32_t hs = u32(r, off + 4, end, "list_header_size");
    if (failed(r)) return NULL;
    if (n > (end - off - 24) / 4) {
        bad(r, off + 12, "item count", "%llu items cannot fit a list of %llu bytes", n, end - off);
        return NULL;
    }
    if (hs != 24 + 4ull * n) {
        bad(r, off + 4, "list_header_size", "list_header_size %llu, expected %llu (24 + 4 per item)", hs,
            24 + 4ull * n);
        return NULL;
    }
    item_span *it = ra_arena_array(r->ar, n, sizeof *it);
    if (!it) {
        ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, off, "items", "out of memory");
        return NULL;
    }
    uint64_t pos = off + hs;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t f = off + 24 + 4ull * i;
        uint32_t sz = u32(r, f, end, "item_num_byte");
        if (failed(r)) return NULL;
        if (sz < min_item || sz % 4 || sz > end - pos) {
            bad(r, f, "item_num_byte",
                sz % 4 || sz < min_item ? "item size %llu is not a multiple of 4 of at least %llu"
                                        : "item size %llu runs past the end of the list (%llu left)",
                sz, sz % 4 || sz < min_item ? min_item : end - pos);
            return NULL;
        }
        it[i].off = pos;
        it[i].size = sz;
        pos += sz;
    }
    if (!ext_blocks(r, off + 16, pos, end, ext, true)) return NULL;
    *count = n;
    return it;
}

/* The item's own size field must agree with the list's item_num_byte. */
static bool item_head(rd *r, const item_span *it, uint32_t tag, uint32_t size_word, const char *what)
{
    uint64_t end = it->off + it->size;
    uint32_t t = u32(r, it->off, end, "tag");
    uint32_t sz = u32(r, it->off + 4ull * size_word, end, "size");
    if (failed(r)) return false;
    if (t != tag) return bad(r, it->off, "tag", "expected the tag 0x%08llx, found 0x%08llx", tag, t);
    if (sz != it->size)
        return bad(r, it->off + 4ull * size_word, what, "the item says it has %llu bytes, its list says %llu", sz,
                   it->size);
    return true;
}

static bool read_scene(rd *r, uint64_t off, uint64_t end, niff_scene_list *s, niff_list *l)
{
    uint32_t hs = u32(r, off + 4, end, "scene_header_size");
    s->cfg = u32(r, off + 12, end, "scene_cfg");
    s->name_index = u32(r, off + 16, end, "scene_name_index");
    uint32_t n[4];
    for (uint32_t i = 0; i < 4; i++) n[i] = u32(r, off + 20 + 4ull * i, end, "scene_link_num");
    if (failed(r)) return false;
    if (hs < 44 || hs % 4 || hs > end - off)
        return bad(r, off + 4, "scene_header_size", "scene_header_size %llu is not a multiple of 4 in [44, %llu]", hs,
                   end - off);
    if (!blob(r, off + 44, hs - 44, end, &s->head_extra, "scene header")) return false;
    uint64_t pos = off + hs;
    niff_links *links[4] = {&s->obj, &s->env, &s->cam, &s->light};
    for (uint32_t i = 0; i < 4; i++) {
        if (n[i] > (end - pos) / 4)
            return bad(r, off + 20 + 4ull * i, "scene_link_num", "%llu links cannot fit the %llu bytes left", n[i],
                       end - pos);
        links[i]->n = n[i];
        if (!(links[i]->v = u32_array(r, pos, n[i], end, "scene_link_index"))) return false;
        pos += 4ull * n[i];
    }
    return ext_blocks(r, off + 36, pos, end, &l->ext, true);
}

static bool read_obj(rd *r, const item_span *it, niff_obj *o)
{
    uint64_t b = it->off, end = b + it->size;
    if (!item_head(r, it, NIFF_TAG_OBJ, 2, "obj_size")) return false;
    o->offset = b;
    o->name_index = u32(r, b + 12, end, "obj_name_index");
    o->state = u32(r, b + 16, end, "obj_state");
    o->type = u32(r, b + 20, end, "obj_type");
    for (uint32_t i = 0; i < 6; i++) o->render[i] = u32(r, b + 24 + 4ull * i, end, "obj_render");
    o->have_link_billboard = u32(r, b + 48, end, "have_link_billboard");
    o->lod_num = u32(r, b + 52, end, "obj_lod_num");
    o->child.n = u32(r, b + 56, end, "obj_child_num");
    o->parent_link = u32(r, b + 60, end, "obj_parent_link");
    o->shape_link = u32(r, b + 64, end, "obj_shape_link");
    o->mat_link = u32(r, b + 68, end, "obj_mat_link");
    o->anim_link = u32(r, b + 72, end, "obj_anim_link");
    o->coll_link = u32(r, b + 76, end, "obj_coll_link");
    if (failed(r)) return false;
    uint64_t left = end - (b + 88);
    if (o->lod_num > left / 8)
        return bad(r, b + 52, "obj_lod_num", "%llu LODs cannot fit the %llu bytes left", o->lod_num, left);
    left -= 8ull * o->lod_num;
    if (o->child.n > left / 4)
        return bad(r, b + 56, "obj_child_num", "%llu children cannot fit the %llu bytes left", o->child.n, left);
    uint64_t pos = b + 88;
    o->lod_dist = ra_arena_array(r->ar, o->lod_num, sizeof *o->lod_dist);
    if (!o->lod_dist) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "obj_lod_dist", "out of memory") == RA_OK;
    for (uint32_t i = 0; i < o->lod_num; i++) o->lod_dist[i] = f32(r, pos + 4ull * i, end, "obj_lod_dist");
    pos += 4ull * o->lod_num;
    if (!(o->lod_link = u32_array(r, pos, o->lod_num, end, "obj_lod_link"))) return false;
    pos += 4ull * o->lod_num;
    if (!(o->child.v = u32_array(r, pos, o->child.n, end, "obj_child_link"))) return false;
    pos += 4ull * o->child.n;
    return ext_blocks(r, b + 80, pos, end, &o->ext, true);
}

static bool read_cam(rd *r, const item_span *it, niff_cam *c)
{
    uint64_t b = it->off, end = b + it->size;
    if (it->size < 76) return bad(r, b, "cam_size", "a Cam needs %llu bytes, its item has %llu", 76, it->size);
    if (!item_head(r, it, NIFF_TAG_CAM, 2, "cam_size")) return false;
    c->offset = b;
    c->name_index = u32(r, b + 12, end, "cam_name_index");
    c->type = u32(r, b + 16, end, "cam_type");
    float *fl[9] = {&c->near_clip, &c->far_clip, &c->right,  &c->left, &c->top,
                    &c->bottom,    &c->fovy,     &c->aspect, &c->scale};
    static const char *const fn[9] = {"cam_near",   "cam_far",  "cam_right",  "cam_left", "cam_top",
                                      "cam_bottom", "cam_fovy", "cam_aspect", "cam_scale"};
    for (uint32_t i = 0; i < 9; i++) *fl[i] = f32(r, b + 20 + 4ull * i, end, fn[i]); /* the scene replaces bad values */
    c->lookat_obj = u32(r, b + 56, end, "cam_lookat_obj");
    c->eye_obj = u32(r, b + 60, end, "cam_eye_obj");
    c->up_obj = u32(r, b + 64, end, "cam_up_obj");
    return ext_blocks(r, b + 68, b + 76, end, &c->ext, true);
}

static bool read_name(rd *r, const item_span *it, niff_name *nm)
{
    uint64_t b = it->off, end = b + it->size;
    if (!item_head(r, it, NIFF_TAG_NAME, 3, "name_size")) return false;
    nm->header_size = u32(r, b + 8, end, "name_header_size");
    if (failed(r)) return false;
    if (nm->header_size < 16 || nm->header_size > it->size)
        return bad(r, b + 8, "name_header_size", "name_header_size %llu is outside [16, %llu]", nm->header_size,
                   it->size);
    if (!blob(r, b + 16, it->size - 16, end, &nm->bytes, "node_name")) return false;
    size_t skip = nm->header_size - 16, len = nm->bytes.size - skip;
    const uint8_t *p = nm->bytes.data ? nm->bytes.data + skip : (const uint8_t *)"";
    const uint8_t *nul = len ? memchr(p, 0, len) : NULL;
    nm->text = ra_arena_strndup(r->ar, (const char *)p, nul ? (size_t)(nul - p) : len);
    if (!nm->text) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "node_name", "out of memory") == RA_OK;
    return true;
}

static bool read_anim(rd *r, uint64_t b, uint64_t end, niff_anim *a)
{
    a->offset = b;
    a->tag = u32(r, b, end, "anim_tag");
    uint32_t size = u32(r, b + 8, end, "anim_size");
    if (failed(r)) return false;
    uint32_t need = 12;
    switch (a->tag) {
    case NIFF_TAG_ANIM_STATIC:
    case NIFF_TAG_ANIM_CONST:
    case NIFF_TAG_ANIM_FULL: need = 52; break;
    case NIFF_TAG_ANIM_KEY: need = 64; break;
    case NIFF_TAG_ANIM_BILLBOARD: need = 20; break;
    default: break;
    }
    if (size < need || size % 4 || size > end - b)
        return bad(r, b + 8, "anim_size",
                   size < need || size % 4 ? "anim_size %llu: this Anim needs a multiple of 4 of at least %llu bytes"
                                           : "anim_size %llu runs past the end of its AnimGroup (%llu bytes left)",
                   size, size < need || size % 4 ? need : end - b);
    uint64_t e = b + size, p = b + 12;
    if (a->tag == NIFF_TAG_ANIM_KEY) {
        a->key = u32(r, p, e, "key");
        a->next_key = u32(r, p + 4, e, "next_key");
        a->interp = u32(r, p + 8, e, "interpolation_type");
        p += 12;
    }
    if (need >= 52) {
        for (uint32_t i = 0; i < 3; i++) a->t[i] = ffin(r, p + 4ull * i, e, "translate");
        for (uint32_t i = 0; i < 3; i++) a->r[i] = ffin(r, p + 12 + 4ull * i, e, "rotate_axis");
        a->expand_flag = u32(r, p + 24, e, "rotate_expand_flag");
        for (uint32_t i = 0; i < 3; i++) a->s[i] = ffin(r, p + 28 + 4ull * i, e, "scale");
        p += 40;
    } else if (a->tag == NIFF_TAG_ANIM_BILLBOARD) {
        a->lookat_obj = u32(r, p, e, "lookat_obj_index");
        a->upper_obj = u32(r, p + 4, e, "upper_obj_index");
        p += 8;
    }
    return blob(r, p, e - p, e, &a->extra, "anim");
}

static bool read_channels(rd *r, uint64_t b, uint64_t end, niff_channels *ch)
{
    ch->offset = b;
    ch->use = u32(r, b, end, "use_animation_channel");
    for (uint32_t i = 0; i < NIFF_CH_COUNT; i++) ch->count[i] = u32(r, b + 4 + 4ull * i, end, "channel count");
    for (uint32_t i = 0; i < 28; i++) ch->constraint[i] = u32(r, b + 36 + 4ull * i, end, "constraint");
    if (failed(r)) return false;
    uint64_t pos = b + NIFF_CH_HEAD_BYTES;
    for (uint32_t c = 0; c < NIFF_CH_COUNT; c++) {
        unsigned nv = (unsigned)niff_channel_values[c], rec = 8 + 8 * nv;
        if (ch->count[c] > (end - pos) / rec)
            return bad(r, b + 4 + 4ull * c, "channel count", "%llu channel keys cannot fit the %llu bytes left",
                       ch->count[c], end - pos);
        ch->keys[c] = ra_arena_array(r->ar, ch->count[c], sizeof(niff_chkey));
        if (!ch->keys[c]) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, pos, "channel keys", "out of memory") == RA_OK;
        for (uint32_t k = 0; k < ch->count[c]; k++, pos += rec) {
            niff_chkey *key = &ch->keys[c][k];
            key->interp = u32(r, pos, end, "channel interpolation_type");
            key->key = u32(r, pos + 4, end, "channel key");
            for (unsigned v = 0; v < nv; v++) key->v[v] = ffin(r, pos + 8 + 4ull * v, end, "channel value");
            for (unsigned v = 0; v < nv; v++)
                key->d[v] = ffin(r, pos + 8 + 4ull * (nv + v), end, "channel differential");
            if (failed(r)) return false;
            if (k && key->key < ch->keys[c][k - 1].key)
                return bad(r, pos + 4, "channel key", "key frame %llu comes before the previous key's %llu", key->key,
                           ch->keys[c][k - 1].key);
        }
    }
    return blob(r, pos, end - pos, end, &ch->tail, "channel block");
}

static bool read_group(rd *r, const item_span *it, bool v2, niff_group *g)
{
    uint64_t b = it->off, end = b + it->size;
    if (it->size < 48)
        return bad(r, b, "anim_group_size", "an AnimGroup needs %llu bytes, its item has %llu", 48, it->size);
    if (!item_head(r, it, NIFF_TAG_ANIM_GROUP, 3, "anim_group_size")) return false;
    g->offset = b;
    g->header_size = u32(r, b + 8, end, "anim_group_header_size");
    g->name_index = u32(r, b + 16, end, "anim_name_index");
    g->type = u32(r, b + 20, end, "anim_type");
    g->frame_rate = u32(r, b + 24, end, "frame_rate");
    g->anim_num = u32(r, b + 28, end, "anim_num");
    g->loop = u32(r, b + 32, end, "anim_loop");
    g->rot_order = u32(r, b + 36, end, "anim_rot_mtx_order");
    uint32_t nx = u32(r, b + 40, end, "nintendo_extension_block_size");
    uint32_t ux = u32(r, b + 44, end, "user_extension_block_size");
    if (failed(r)) return false;
    if ((uint64_t)nx + ux > it->size - 48)
        return bad(r, b + 40, "nintendo_extension_block_size",
                   "the extension blocks (%llu bytes) exceed the %llu bytes of the AnimGroup's body", (uint64_t)nx + ux,
                   it->size - 48);
    uint64_t body_end = end - nx - ux;
    if (g->anim_num > (body_end - b - 48) / 12)
        return bad(r, b + 28, "anim_num", "%llu Anims cannot fit the %llu bytes of the AnimGroup's body", g->anim_num,
                   body_end - b - 48);
    g->anims = ra_arena_array(r->ar, g->anim_num, sizeof *g->anims);
    if (!g->anims) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "anims", "out of memory") == RA_OK;
    uint64_t pos = b + 48; /* never header_size: blend2niff counts its extension there (docs/formats/niff.md §2) */
    for (uint32_t i = 0; i < g->anim_num; i++) {
        if (body_end - pos < 12)
            return bad(r, b + 28, "anim_num", "anim_num %llu, but only %llu Anims fit the AnimGroup's body",
                       g->anim_num, i);
        if (!read_anim(r, pos, body_end, &g->anims[i])) return false;
        pos += u32(r, pos + 8, body_end, "anim_size");
    }
    g->has_channels = v2 && nx >= NIFF_CH_HEAD_BYTES;
    if (!ext_blocks(r, b + 40, pos, end, &g->ext, !g->has_channels)) return false;
    return !g->has_channels || read_channels(r, pos, pos + nx, &g->ch);
}

/* An index field: NIFF_NONE or below n. */
static bool index_ok(rd *r, uint32_t v, uint32_t n, uint64_t off, const char *field, const char *list)
{
    if (v == NIFF_NONE || v < n) return true;
    char msg[96];
    snprintf(msg, sizeof msg, "index %%llu, but the %s has %%llu items", list);
    return bad(r, off, field, msg, v, n);
}

static bool check_links(rd *r, const niff_file *f)
{
    uint64_t soff = 0;
    for (uint32_t i = 0; i < f->list_count; i++)
        if (f->lists[i].tag == NIFF_TAG_SCENE_LIST) soff = f->lists[i].offset;
    uint64_t hs = soff ? 44 + f->scene.head_extra.size : 0;
    for (uint32_t i = 0; i < f->scene.obj.n; i++)
        if (f->scene.obj.v[i] >= f->obj_count)
            return bad(r, soff + hs + 4ull * i, "scene_obj_link_index", "object %llu, but the ObjList has %llu",
                       f->scene.obj.v[i], f->obj_count);
    if (!index_ok(r, f->scene.name_index, f->name_count, soff + 16, "scene_name_index", "NameList")) return false;
    for (uint32_t i = 0; i < f->obj_count; i++) {
        const niff_obj *o = &f->objs[i];
        uint64_t b = o->offset;
        if (!index_ok(r, o->name_index, f->name_count, b + 12, "obj_name_index", "NameList") ||
            !index_ok(r, o->anim_link, f->group_count, b + 72, "obj_anim_link", "AnimList"))
            return false;
        for (uint32_t k = 0; k < o->lod_num; k++)
            if (o->lod_link[k] >= f->obj_count)
                return bad(r, b + 88 + 4ull * (o->lod_num + k), "obj_lod_link", "object %llu, but the ObjList has %llu",
                           o->lod_link[k], f->obj_count);
        for (uint32_t k = 0; k < o->child.n; k++)
            if (o->child.v[k] >= f->obj_count)
                return bad(r, b + 88 + 8ull * o->lod_num + 4ull * k, "obj_child_link",
                           "object %llu, but the ObjList has %llu", o->child.v[k], f->obj_count);
    }
    for (uint32_t i = 0; i < f->cam_count; i++) {
        const niff_cam *c = &f->cams[i];
        if (!index_ok(r, c->name_index, f->name_count, c->offset + 12, "cam_name_index", "NameList") ||
            !index_ok(r, c->lookat_obj, f->obj_count, c->offset + 56, "cam_lookat_obj", "ObjList") ||
            !index_ok(r, c->eye_obj, f->obj_count, c->offset + 60, "cam_eye_obj", "ObjList") ||
            !index_ok(r, c->up_obj, f->obj_count, c->offset + 64, "cam_up_obj", "ObjList"))
            return false;
    }
    for (uint32_t i = 0; i < f->group_count; i++) {
        const niff_group *g = &f->groups[i];
        if (!index_ok(r, g->name_index, f->name_count, g->offset + 16, "anim_name_index", "NameList")) return false;
        for (uint32_t k = 0; k < g->anim_num; k++) {
            const niff_anim *a = &g->anims[k];
            if (a->tag == NIFF_TAG_ANIM_BILLBOARD &&
                (!index_ok(r, a->lookat_obj, f->obj_count, a->offset + 12, "lookat_obj_index", "ObjList") ||
                 !index_ok(r, a->upper_obj, f->obj_count, a->offset + 16, "upper_obj_index", "ObjList")))
                return false;
        }
    }
    return true;
}

static const char netimmerse[] = "NetImmerse File Format", gamebryo[] = "Gamebryo File Format";

ra_status niff_read(const uint8_t *data, size_t size, ra_arena *arena, niff_file *f, ra_error *err)
{
    memset(f, 0, sizeof *f);
    if ((size >= sizeof netimmerse - 1 && !memcmp(data, netimmerse, sizeof netimmerse - 1)) ||
        (size >= sizeof gamebryo - 1 && !memcmp(data, gamebryo, sizeof gamebryo - 1)))
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "header",
                       "this is a NetImmerse/Gamebryo .nif model, not a Nintendo 64 NIFF file");
    rd r = {.data = data, .size = size, .ar = arena, .err = err};
    ra_cursor_init(&r.c, data, size, FMT, err);
    f->version = u32(&r, 0, size, "version");
    uint32_t fsize = u32(&r, 4, size, "file_size");
    if (failed(&r)) return err->code;
    if (fsize > size)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, 4, "file_size",
                       "truncated: file_size says %u bytes, the file has %zu", fsize, size);
    r.size = fsize; /* bytes after file_size are not part of the file */
    uint32_t tag = u32(&r, 8, fsize, "header_tag"), hs = u32(&r, 12, fsize, "file_header_num_byte");
    if (failed(&r)) return err->code;
    if (tag != NIFF_TAG_HEADER)
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 8, "header_tag", "not a NIFF file (header tag 0x%08x, expected 0)",
                       tag);
    if (hs < 100 || hs % 4 || hs > fsize)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 12, "file_header_num_byte",
                       "file_header_num_byte %u is not a multiple of 4 in [100, file_size]", hs);
    uint32_t hsize[NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS] = {0};
    uint64_t hoff[NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS] = {0};
    for (uint32_t i = 0; i < NIFF_HEADER_LISTS; i++) hsize[i] = u32(&r, hoff[i] = 16 + 4ull * i, hs, "list_num_byte");
    bool v2 = niff_is_v2(f->version);
    uint32_t nx = u32(&r, 92, hs, "nintendo_extension_block_size");
    int nlists = NIFF_HEADER_LISTS;
    if (v2 && nx >= 4 * NIFF2_HEADER_LISTS) {
        for (uint32_t i = 0; i < NIFF2_HEADER_LISTS; i++)
            hsize[NIFF_HEADER_LISTS + i] = u32(&r, hoff[NIFF_HEADER_LISTS + i] = 100 + 4ull * i, hs, "list_num_byte");
        nlists += NIFF2_HEADER_LISTS;
    }
    if (!ext_blocks(&r, 92, 100, hs, &f->header_ext, true)) return err->code;

    /* the lists, by their size fields */
    uint32_t cap = 32;
    f->lists = ra_arena_array(arena, cap, sizeof *f->lists);
    if (!f->lists) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, hs, "lists", "out of memory");
    bool seen[NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS] = {false};
    for (uint64_t off = hs; off < fsize;) {
        uint32_t ltag = u32(&r, off, fsize, "list tag"), lsize = u32(&r, off + 8, fsize, "list_size");
        if (failed(&r)) return err->code;
        if (lsize < 24 || lsize % 4 || lsize > fsize - off)
            return ra_fail(err, lsize > fsize - off ? RA_ERR_TRUNCATED : RA_ERR_BAD_VALUE, FMT, off + 8, "list_size",
                           "list 0x%08x: list_size %u is not a multiple of 4 in [24, %llu]", ltag, lsize,
                           (unsigned long long)(fsize - off));
        int slot = header_slot(ltag);
        if (slot >= 0) {
            if (seen[slot])
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, off, "list tag", "a second %s list",
                               header_list_names[slot]);
            seen[slot] = true;
            if (slot < nlists && hsize[slot] != lsize)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, hoff[slot], "list_num_byte",
                               "the header gives the %s list %u bytes, the list has %u", header_list_names[slot],
                               hsize[slot], lsize);
        }
        if (f->list_count == cap) {
            niff_list *nl = ra_arena_grow(arena, f->lists, cap, cap * 2, sizeof *nl);
            if (!nl) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, off, "lists", "out of memory");
            f->lists = nl;
            cap *= 2;
        }
        niff_list *l = &f->lists[f->list_count++];
        l->tag = ltag;
        l->offset = off;
        uint64_t end = off + lsize;
        item_span *it = NULL;
        uint32_t n = 0;
        l->parsed = true;
        switch (ltag) {
        case NIFF_TAG_SCENE_LIST:
            if (!read_scene(&r, off, end, &f->scene, l)) return err->code;
            break;
        case NIFF_TAG_OBJ_LIST:
            if (!(it = list_items(&r, off, end, 88, &n, &l->ext))) return err->code;
            if (!(f->objs = ra_arena_array(arena, n, sizeof *f->objs)))
                return ra_fail(err, RA_ERR_NO_MEMORY, FMT, off, "objs", "out of memory");
            f->obj_count = n;
            for (uint32_t i = 0; i < n; i++)
                if (!read_obj(&r, &it[i], &f->objs[i])) return err->code;
            break;
        case NIFF_TAG_CAM_LIST:
            if (!(it = list_items(&r, off, end, 12, &n, &l->ext))) return err->code;
            if (!(f->cams = ra_arena_array(arena, n, sizeof *f->cams)))
                return ra_fail(err, RA_ERR_NO_MEMORY, FMT, off, "cams", "out of memory");
            f->cam_count = n;
            for (uint32_t i = 0; i < n; i++)
                if (!read_cam(&r, &it[i], &f->cams[i])) return err->code;
            break;
        case NIFF_TAG_ANIM_LIST:
            if (!(it = list_items(&r, off, end, 12, &n, &l->ext))) return err->code;
            if (!(f->groups = ra_arena_array(arena, n, sizeof *f->groups)))
                return ra_fail(err, RA_ERR_NO_MEMORY, FMT, off, "groups", "out of memory");
            f->group_count = n;
            for (uint32_t i = 0; i < n; i++)
                if (!read_group(&r, &it[i], v2, &f->groups[i])) return err->code;
            break;
        case NIFF_TAG_NAME_LIST:
            if (!(it = list_items(&r, off, end, 16, &n, &l->ext))) return err->code;
            if (!(f->names = ra_arena_array(arena, n, sizeof *f->names)))
                return ra_fail(err, RA_ERR_NO_MEMORY, FMT, off, "names", "out of memory");
            f->name_count = n;
            for (uint32_t i = 0; i < n; i++)
                if (!read_name(&r, &it[i], &f->names[i])) return err->code;
            break;
        default:
            l->parsed = false;
            if (!blob(&r, off, lsize, end, &l->raw, "list")) return err->code;
            break;
        }
        off = end;
    }
    for (int i = 0; i < nlists; i++)
        if (!seen[i] && hsize[i])
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, hoff[i], "list_num_byte",
                           "the header gives the %s list %u bytes, but the file has no such list", header_list_names[i],
                           hsize[i]);
    if (!seen[0]) return ra_fail(err, RA_ERR_BAD_VALUE, FMT, hs, "list tag", "the file has no SceneList");
    if (!check_links(&r, f)) return err->code;
    return RA_OK;
}

/* ---- writer ---------------------------------------------------------------------------------------------- */
static void put32(ra_writer *w, size_t off, uint32_t v)
{
    if (w->failed || off + 4 > w->size) return;
    w->data[off] = (uint8_t)(v >> 24);
    w->data[off + 1] = (uint8_t)(v >> 16);
    w->data[off + 2] = (uint8_t)(v >> 8);
    w->data[off + 3] = (uint8_t)v;
}

static void wf(ra_writer *w, float v) { ra_wr_f32be(w, v); }
static void wu(ra_writer *w, uint32_t v) { ra_wr_u32be(w, v); }
static void wblob(ra_writer *w, const niff_blob *b) { ra_wr_bytes(w, b->data, b->size); }
static void wlinks(ra_writer *w, const uint32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) wu(w, v[i]);
}

/* size fields of the two extension blocks, at the current position */
static void wext_sizes(ra_writer *w, const niff_ext *e, uint32_t nintendo_size)
{
    wu(w, nintendo_size);
    wu(w, e->user.size);
}

static void write_obj(ra_writer *w, const niff_obj *o, uint32_t index)
{
    size_t b = w->size;
    wu(w, NIFF_TAG_OBJ);
    wu(w, index);
    wu(w, 0); /* obj_size, patched */
    wu(w, o->name_index);
    wu(w, o->state);
    wu(w, o->type);
    for (int i = 0; i < 6; i++) wu(w, o->render[i]);
    wu(w, o->have_link_billboard);
    wu(w, o->lod_num);
    wu(w, o->child.n);
    wu(w, o->parent_link);
    wu(w, o->shape_link);
    wu(w, o->mat_link);
    wu(w, o->anim_link);
    wu(w, o->coll_link);
    wext_sizes(w, &o->ext, o->ext.nintendo.size);
    for (uint32_t i = 0; i < o->lod_num; i++) wf(w, o->lod_dist[i]);
    wlinks(w, o->lod_link, o->lod_num);
    wlinks(w, o->child.v, o->child.n);
    wblob(w, &o->ext.nintendo);
    wblob(w, &o->ext.user);
    put32(w, b + 8, (uint32_t)(w->size - b));
}

static void write_cam(ra_writer *w, const niff_cam *c, uint32_t index)
{
    size_t b = w->size;
    wu(w, NIFF_TAG_CAM);
    wu(w, index);
    wu(w, 0);
    wu(w, c->name_index);
    wu(w, c->type);
    const float fl[9] = {c->near_clip, c->far_clip, c->right, c->left, c->top, c->bottom, c->fovy, c->aspect, c->scale};
    for (int i = 0; i < 9; i++) wf(w, fl[i]);
    wu(w, c->lookat_obj);
    wu(w, c->eye_obj);
    wu(w, c->up_obj);
    wext_sizes(w, &c->ext, c->ext.nintendo.size);
    wblob(w, &c->ext.nintendo);
    wblob(w, &c->ext.user);
    put32(w, b + 8, (uint32_t)(w->size - b));
}

static void write_anim(ra_writer *w, const niff_anim *a, uint32_t index)
{
    size_t b = w->size;
    wu(w, a->tag);
    wu(w, index);
    wu(w, 0);
    bool trs = a->tag == NIFF_TAG_ANIM_STATIC || a->tag == NIFF_TAG_ANIM_CONST || a->tag == NIFF_TAG_ANIM_FULL;
    if (a->tag == NIFF_TAG_ANIM_KEY) {
        wu(w, a->key);
        wu(w, a->next_key);
        wu(w, a->interp);
        trs = true;
    }
    if (trs) {
        for (int i = 0; i < 3; i++) wf(w, a->t[i]);
        for (int i = 0; i < 3; i++) wf(w, a->r[i]);
        wu(w, a->expand_flag);
        for (int i = 0; i < 3; i++) wf(w, a->s[i]);
    } else if (a->tag == NIFF_TAG_ANIM_BILLBOARD) {
        wu(w, a->lookat_obj);
        wu(w, a->upper_obj);
    }
    wblob(w, &a->extra);
    put32(w, b + 8, (uint32_t)(w->size - b));
}

static uint32_t channels_size(const niff_channels *ch)
{
    uint64_t n = NIFF_CH_HEAD_BYTES + ch->tail.size;
    for (uint32_t c = 0; c < NIFF_CH_COUNT; c++) n += (uint64_t)ch->count[c] * (8u + 8u * niff_channel_values[c]);
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static void write_group(ra_writer *w, const niff_group *g, uint32_t index)
{
    size_t b = w->size;
    uint32_t nx = g->has_channels ? channels_size(&g->ch) : g->ext.nintendo.size;
    wu(w, NIFF_TAG_ANIM_GROUP);
    wu(w, index);
    wu(w, g->header_size);
    wu(w, 0);
    wu(w, g->name_index);
    wu(w, g->type);
    wu(w, g->frame_rate);
    wu(w, g->anim_num);
    wu(w, g->loop);
    wu(w, g->rot_order);
    wext_sizes(w, &g->ext, nx);
    for (uint32_t i = 0; i < g->anim_num; i++) write_anim(w, &g->anims[i], i);
    if (g->has_channels) {
        const niff_channels *ch = &g->ch;
        wu(w, ch->use);
        for (int c = 0; c < NIFF_CH_COUNT; c++) wu(w, ch->count[c]);
        wlinks(w, ch->constraint, 28);
        for (int c = 0; c < NIFF_CH_COUNT; c++)
            for (uint32_t k = 0; k < ch->count[c]; k++) {
                const niff_chkey *key = &ch->keys[c][k];
                wu(w, key->interp);
                wu(w, key->key);
                for (unsigned v = 0; v < niff_channel_values[c]; v++) wf(w, key->v[v]);
                for (unsigned v = 0; v < niff_channel_values[c]; v++) wf(w, key->d[v]);
            }
        wblob(w, &ch->tail);
    } else {
        wblob(w, &g->ext.nintendo);
    }
    wblob(w, &g->ext.user);
    put32(w, b + 12, (uint32_t)(w->size - b));
}

static void write_name(ra_writer *w, const niff_name *n, uint32_t index)
{
    size_t b = w->size;
    wu(w, NIFF_TAG_NAME);
    wu(w, index);
    wu(w, n->header_size < 16 ? 16 : n->header_size);
    wu(w, 0);
    if (n->bytes.size || !n->text) {
        wblob(w, &n->bytes);
    } else { /* built in memory: the text, NUL-padded to 4 bytes (no NUL when it fills them) */
        size_t len = strlen(n->text);
        ra_wr_bytes(w, n->text, len);
        for (; len % 4; len++) ra_wr_u8(w, 0);
    }
    put32(w, b + 12, (uint32_t)(w->size - b));
}

typedef void (*item_writer)(ra_writer *w, const void *item, uint32_t index);

/* A generic list: header, item sizes (patched), items, extension blocks. */
static void write_list(ra_writer *w, uint32_t tag, const niff_ext *ext, const void *items, size_t item_size, uint32_t n,
                       item_writer one)
{
    size_t b = w->size;
    wu(w, tag);
    wu(w, 24 + 4 * n);
    wu(w, 0);
    wu(w, n);
    wext_sizes(w, ext, ext->nintendo.size);
    for (uint32_t i = 0; i < n; i++) wu(w, 0);
    for (uint32_t i = 0; i < n; i++) {
        size_t ib = w->size;
        one(w, (const uint8_t *)items + i * item_size, i);
        put32(w, b + 24 + 4 * i, (uint32_t)(w->size - ib));
    }
    wblob(w, &ext->nintendo);
    wblob(w, &ext->user);
    put32(w, b + 8, (uint32_t)(w->size - b));
}

static void one_obj(ra_writer *w, const void *p, uint32_t i) { write_obj(w, p, i); }
static void one_cam(ra_writer *w, const void *p, uint32_t i) { write_cam(w, p, i); }
static void one_group(ra_writer *w, const void *p, uint32_t i) { write_group(w, p, i); }
static void one_name(ra_writer *w, const void *p, uint32_t i) { write_name(w, p, i); }

static void write_scene(ra_writer *w, const niff_scene_list *s, const niff_ext *ext)
{
    size_t b = w->size;
    wu(w, NIFF_TAG_SCENE_LIST);
    wu(w, 44 + s->head_extra.size);
    wu(w, 0);
    wu(w, s->cfg);
    wu(w, s->name_index);
    wu(w, s->obj.n);
    wu(w, s->env.n);
    wu(w, s->cam.n);
    wu(w, s->light.n);
    wext_sizes(w, ext, ext->nintendo.size);
    wblob(w, &s->head_extra);
    wlinks(w, s->obj.v, s->obj.n);
    wlinks(w, s->env.v, s->env.n);
    wlinks(w, s->cam.v, s->cam.n);
    wlinks(w, s->light.v, s->light.n);
    wblob(w, &ext->nintendo);
    wblob(w, &ext->user);
    put32(w, b + 8, (uint32_t)(w->size - b));
}

ra_status niff_write(const niff_file *f, ra_writer *w, ra_error *err)
{
    bool v2 = niff_is_v2(f->version);
    const niff_ext *he = &f->header_ext;
    /* NIFF 2: the Nintendo block starts with the 9 list sizes (rewritten below) */
    uint32_t nx = he->nintendo.size;
    if (v2 && nx < 4 * NIFF2_HEADER_LISTS) nx = 4 * NIFF2_HEADER_LISTS;
    size_t b = w->size;
    wu(w, f->version);
    wu(w, 0); /* file_size */
    wu(w, NIFF_TAG_HEADER);
    wu(w, 100 + nx + he->user.size);
    for (int i = 0; i < NIFF_HEADER_LISTS; i++) wu(w, 0);
    wu(w, nx);
    wu(w, he->user.size);
    if (he->nintendo.size >= nx) {
        wblob(w, &he->nintendo);
    } else {
        wblob(w, &he->nintendo);
        for (uint32_t i = he->nintendo.size; i < nx; i++) ra_wr_u8(w, 0);
    }
    wblob(w, &he->user);
    int nlists = v2 ? NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS : NIFF_HEADER_LISTS;
    for (uint32_t i = 0; i < f->list_count; i++) {
        const niff_list *l = &f->lists[i];
        size_t lb = w->size;
        if (!l->parsed) {
            wblob(w, &l->raw);
        } else if (l->tag == NIFF_TAG_SCENE_LIST) {
            write_scene(w, &f->scene, &l->ext);
        } else if (l->tag == NIFF_TAG_OBJ_LIST) {
            write_list(w, l->tag, &l->ext, f->objs, sizeof *f->objs, f->obj_count, one_obj);
        } else if (l->tag == NIFF_TAG_CAM_LIST) {
            write_list(w, l->tag, &l->ext, f->cams, sizeof *f->cams, f->cam_count, one_cam);
        } else if (l->tag == NIFF_TAG_ANIM_LIST) {
            write_list(w, l->tag, &l->ext, f->groups, sizeof *f->groups, f->group_count, one_group);
        } else if (l->tag == NIFF_TAG_NAME_LIST) {
            write_list(w, l->tag, &l->ext, f->names, sizeof *f->names, f->name_count, one_name);
        } else {
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "lists",
                           "list 0x%08x is marked parsed but has no writer", l->tag);
        }
        int slot = header_slot(l->tag);
        if (slot >= 0 && slot < nlists) {
            size_t field =
                slot < NIFF_HEADER_LISTS ? 16 + 4 * (size_t)slot : 100 + 4 * (size_t)(slot - NIFF_HEADER_LISTS);
            put32(w, b + field, (uint32_t)(w->size - lb));
        }
    }
    if (w->size - b > UINT32_MAX)
        return ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "file_size", "the file would exceed 4 GiB");
    put32(w, b + 4, (uint32_t)(w->size - b));
    if (w->failed) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory while writing");
    return RA_OK;
}
