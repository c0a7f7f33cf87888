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

/* u32 at `off`, which must lie inside [.., end) (the enclosing area):
 * through the cursor, which reports a field past the end. */
static uint32_t u32_cursor(rd *r, uint64_t off, uint64_t end, const char *field)
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

/* u32_cursor, with the word loaded at once where it lies inside its area
 * and the file (as every field of a well-formed file does): the cursor
 * would read it the same. */
static inline uint32_t u32(rd *r, uint64_t off, uint64_t end, const char *field)
{
    if (!failed(r) && end <= r->size && off <= end && end - off >= 4) return ra_load_u32be(r->data + off);
    return u32_cursor(r, off, end, field);
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

/* n calls of ffin at off, off + 4, ...: where all n lie inside their area
 * and the file, loaded in one loop without the per-field checks */
static void ffin_n(rd *r, uint64_t off, uint64_t end, unsigned n, float *out, const char *field)
{
    if (failed(r) || end > r->size || off > end || (end - off) / 4 < n) {
        for (unsigned i = 0; i < n; i++) out[i] = ffin(r, off + 4ull * i, end, field);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        uint32_t u = ra_load_u32be(r->data + off + 4ull * i);
        memcpy(&out[i], &u, 4);
        if (!isfinite(out[i])) {
            ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, off + 4ull * i, field, "not a finite number");
            return;
        }
    }
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

static bool read_obj_chains(rd *r, niff_obj *o, uint64_t ext_off);

static bool read_obj(rd *r, const item_span *it, bool v2, niff_obj *o)
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
    return ext_blocks(r, b + 80, pos, end, &o->ext, true) && (!v2 || read_obj_chains(r, o, pos));
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
        ffin_n(r, p, e, 3, a->t, "translate");
        ffin_n(r, p + 12, e, 3, a->r, "rotate_axis");
        a->expand_flag = u32(r, p + 24, e, "rotate_expand_flag");
        ffin_n(r, p + 28, e, 3, a->s, "scale");
        p += 40;
    } else if (a->tag == NIFF_TAG_ANIM_BILLBOARD) {
        a->lookat_obj = u32(r, p, e, "lookat_obj_index");
        a->upper_obj = u32(r, p + 4, e, "upper_obj_index");
        p += 8;
    }
    return blob(r, p, e - p, e, &a->extra, "anim");
}

/* The kind of an Anim, for niff_group.anim_tags. */
static unsigned anim_tag_kind(const niff_anim *a)
{
    switch (a->tag) {
    case NIFF_TAG_ANIM_STATIC:
    case NIFF_TAG_ANIM_CONST:
    case NIFF_TAG_ANIM_FULL: return NIFF_ANIM_TAGS_TRS;
    case NIFF_TAG_ANIM_KEY:
        return a->interp == NIFF_INTERP_STATIC || a->interp == NIFF_INTERP_LINEAR || a->interp == NIFF_INTERP_SLOWIN ||
                       a->interp == NIFF_INTERP_SLOWOUT || a->interp == NIFF_INTERP_SLOW
                   ? NIFF_ANIM_TAGS_KEY
                   : NIFF_ANIM_TAGS_KEY_OTHER;
    case NIFF_TAG_ANIM_BILLBOARD: return NIFF_ANIM_TAGS_BILLBOARD;
    default: return NIFF_ANIM_TAGS_OTHER;
    }
}

/* A zeroed array of an AnimGroup's records (Anims, channel keys): the bulk
 * that the scene is baked from, each in a chunk of its own, so that a bake
 * for a consumer that keeps only the scene frees it group by group
 * (ra_document.free_bulk_early). */
static void *group_array(ra_arena *a, uint32_t n, size_t size)
{
    if (!n) return ra_arena_array(a, 0, size);
    void *p = ra_arena_bulk_memdup(a, NULL, n, size);
    if (p) memset(p, 0, (size_t)n * size);
    return p;
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
        ch->keys[c] = group_array(r->ar, ch->count[c], sizeof(niff_chkey));
        if (!ch->keys[c]) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, pos, "channel keys", "out of memory") == RA_OK;
        for (uint32_t k = 0; k < ch->count[c]; k++, pos += rec) {
            niff_chkey *key = &ch->keys[c][k];
            key->interp = u32(r, pos, end, "channel interpolation_type");
            key->key = u32(r, pos + 4, end, "channel key");
            ffin_n(r, pos + 8, end, nv, key->v, "channel value");
            ffin_n(r, pos + 8 + 4ull * nv, end, nv, key->d, "channel differential");
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
    g->anims = group_array(r->ar, g->anim_num, sizeof *g->anims);
    if (!g->anims) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "anims", "out of memory") == RA_OK;
    uint64_t pos = b + 48; /* never header_size: blend2niff counts its extension there (docs/formats/niff.md §2) */
    unsigned tags = NIFF_ANIM_TAGS_READ;
    for (uint32_t i = 0; i < g->anim_num; i++) {
        if (body_end - pos < 12)
            return bad(r, b + 28, "anim_num", "anim_num %llu, but only %llu Anims fit the AnimGroup's body",
                       g->anim_num, i);
        if (!read_anim(r, pos, body_end, &g->anims[i])) return false;
        tags |= anim_tag_kind(&g->anims[i]);
        pos += u32(r, pos + 8, body_end, "anim_size");
    }
    g->anim_tags = (uint8_t)tags;
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
        /* only where the group holds BILLBOARD Anims (its summary, read_group) */
        for (uint32_t k = 0; (g->anim_tags & NIFF_ANIM_TAGS_BILLBOARD) && k < g->anim_num; k++) {
            const niff_anim *a = &g->anims[k];
            if (a->tag == NIFF_TAG_ANIM_BILLBOARD &&
                (!index_ok(r, a->lookat_obj, f->obj_count, a->offset + 12, "lookat_obj_index", "ObjList") ||
                 !index_ok(r, a->upper_obj, f->obj_count, a->offset + 16, "upper_obj_index", "ObjList")))
                return false;
        }
    }
    return true;
}

/* ---- views of the geometry and IK lists (docs/formats/niff.md §3, §9) ------------------------------------ */
/* Every item of these lists starts with tag, index and a size word; `size_word` is where that size sits. */
static bool view_head(rd *r, const item_span *it, uint32_t tag, uint32_t size_word, uint32_t min, const char *what)
{
    if (it->size < min)
        return bad(r, it->off, what, "this item needs %llu bytes, its list gives it %llu", min, it->size);
    return item_head(r, it, tag, size_word, what);
}

/* The extension block sizes at nx_off must fit between body_end and the item's end. */
static bool view_ext(rd *r, uint64_t nx_off, uint64_t body_end, uint64_t end)
{
    uint64_t nx = u32(r, nx_off, end, "nintendo_extension_block_size");
    uint64_t ux = u32(r, nx_off + 4, end, "user_extension_block_size");
    if (failed(r)) return false;
    if (body_end > end || nx + ux > end - body_end)
        return bad(r, nx_off, "nintendo_extension_block_size",
                   "the extension blocks (%llu bytes) do not fit the %llu bytes left in their area", nx + ux,
                   body_end > end ? 0 : end - body_end);
    return true;
}

/* n u32 at off; n was read at n_off and must fit before end. */
static bool view_links(rd *r, niff_links *l, uint64_t off, uint32_t n, uint64_t n_off, uint64_t end, const char *field)
{
    if (off > end || n > (end - off) / 4)
        return bad(r, n_off, field, "%llu entries cannot fit the %llu bytes left", n, off > end ? 0 : end - off);
    l->n = n;
    return (l->v = u32_array(r, off, n, end, field)) != NULL || n == 0;
}

static bool read_chain(rd *r, const item_span *it, uint32_t kind, niff_chain *c)
{
    static const uint32_t tags[3] = {NIFF_TAG_CHAIN_ROOT, NIFF_TAG_JOINT, NIFF_TAG_EFFECTOR};
    static const uint32_t heads[3] = {44, 64, 40};
    uint64_t b = it->off, end = b + it->size, h = heads[kind];
    if (!view_head(r, it, tags[kind], 2, (uint32_t)h,
                   kind == 0   ? "chain_root_size"
                   : kind == 1 ? "joint_size"
                               : "effector_size"))
        return false;
    c->kind = kind;
    c->offset = b;
    c->name_index = u32(r, b + 12, end, "name_index");
    c->type = u32(r, b + 16, end, "type");
    c->joint_index = c->effector_index = NIFF_NONE;
    uint64_t num_off;
    if (kind == NIFF_CHAIN_JOINT) {
        c->length = ffin(r, b + 20, end, "joint_length");
        for (uint32_t i = 0; i < 3; i++) c->resplane[i] = ffin(r, b + 24 + 4ull * i, end, "resplane_axis");
        num_off = b + 36;
        c->joint_index = u32(r, b + 44, end, "joint_index");
        c->effector_index = u32(r, b + 48, end, "effector_index");
        c->anim_index = u32(r, b + 52, end, "anim_index");
    } else {
        num_off = b + 20;
        c->anim_index = u32(r, b + 28, end, "anim_index");
        if (kind == NIFF_CHAIN_ROOT) c->joint_index = u32(r, b + 32, end, "joint_index");
    }
    uint32_t n = u32(r, num_off, end, "obj_num"), e = u32(r, num_off + 4, end, "external_obj_num");
    if (failed(r) || !view_links(r, &c->obj, b + h, n, num_off, end, "obj_index")) return false;
    uint64_t pos = b + h + 4ull * n;
    if (pos > end || e > (end - pos) / 8)
        return bad(r, num_off + 4, "external_obj_num", "%llu external objects cannot fit the %llu bytes left", e,
                   pos > end ? 0 : end - pos);
    return view_ext(r, b + h - 8, pos + 8ull * e, end);
}

/* A group of `comps` floats per record: 0 tag | 4 index | 8 header_size | 12 size | ... | count at count_off,
 * records from header_size. */
static bool read_vgroup(rd *r, const item_span *it, uint32_t tag, uint32_t comps, uint32_t count_off, niff_vgroup *g)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, tag, 3, count_off + 4, "group_size")) return false;
    uint32_t hs = u32(r, b + 8, end, "header_size"), n = u32(r, b + count_off, end, "count");
    if (failed(r)) return false;
    if (hs < count_off + 4 || hs % 4 || hs > it->size)
        return bad(r, b + 8, "header_size", "header_size %llu is not a multiple of 4 in [%llu, the group's size]", hs,
                   count_off + 4);
    if (n > (it->size - hs) / (4ull * comps))
        return bad(r, b + count_off, "count", "%llu records cannot fit the %llu bytes of the group", n, it->size - hs);
    g->count = n;
    g->comps = comps;
    g->offset = b;
    g->v = ra_arena_array(r->ar, (size_t)n * comps, sizeof *g->v);
    if (!g->v) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "records", "out of memory") == RA_OK;
    for (uint64_t k = 0; k < (uint64_t)n * comps; k++) g->v[k] = ffin(r, b + hs + 4 * k, end, "record");
    return !failed(r);
}

/* Color and Vector lists: two counts (tri groups, then vertex groups) and two size arrays. */
static bool read_two_count(rd *r, uint64_t off, uint64_t end, uint32_t tri_tag, uint32_t vtx_tag, uint32_t comps,
                           niff_vgroup **tri, uint32_t *ntri, niff_vgroup **vtx, uint32_t *nvtx)
{
    uint32_t hs = u32(r, off + 4, end, "list_header_size");
    uint32_t n1 = u32(r, off + 12, end, "tri_group_num"), n2 = u32(r, off + 16, end, "vtx_group_num");
    if (failed(r)) return false;
    if (n1 > (end - off - 28) / 4 || n2 > (end - off - 28) / 4 - n1)
        return bad(r, off + 12, "tri_group_num", "%llu + %llu groups cannot fit a list of %llu bytes", n1,
                   (uint64_t)n2 << 32 >> 32);
    if (hs != 28 + 4ull * (n1 + n2))
        return bad(r, off + 4, "list_header_size", "list_header_size %llu, expected %llu (28 + 4 per group)", hs,
                   28 + 4ull * (n1 + n2));
    *tri = ra_arena_array(r->ar, n1, sizeof **tri);
    *vtx = ra_arena_array(r->ar, n2, sizeof **vtx);
    if ((!*tri && n1) || (!*vtx && n2))
        return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, off, "groups", "out of memory") == RA_OK;
    uint64_t pos = off + hs;
    for (uint32_t i = 0; i < n1 + n2; i++) {
        uint64_t f = off + 28 + 4ull * i;
        uint32_t sz = u32(r, f, end, "group_num_byte");
        if (failed(r)) return false;
        if (sz < 20 || sz % 4 || sz > end - pos)
            return bad(r, f, "group_num_byte", "group size %llu is not a multiple of 4 in [20, %llu]", sz, end - pos);
        item_span it = {pos, sz};
        bool t = i < n1;
        if (!read_vgroup(r, &it, t ? tri_tag : vtx_tag, comps, 16, t ? &(*tri)[i] : &(*vtx)[i - n1])) return false;
        pos += sz;
    }
    *ntri = n1;
    *nvtx = n2;
    return view_ext(r, off + 20, pos, end);
}

/* One Reference area of a TriGroup: its rest group index, and the area's size. */
static bool read_ref(rd *r, uint64_t *pos, uint64_t end, uint32_t bits, uint32_t frame_num, uint32_t *rest,
                     uint64_t *rest_off, bool *animated)
{
    uint64_t p = *pos;
    *rest_off = bits & 2u ? p + 4 + 4ull * u32(r, p, end, "key_num") : p;
    if (bits & 1u) { /* FULL: frame 0 .. frame_num */
        if (frame_num >= (end - p) / 4)
            return bad(r, p, "tri_anim_frame_num", "%llu frames of group indices cannot fit the %llu bytes left",
                       (uint64_t)frame_num + 1, end - p);
        *rest = u32(r, p, end, "group_index");
        *pos = p + 4ull * ((uint64_t)frame_num + 1);
        *animated = true;
    } else if (bits & 2u) { /* KEY: key_num, key[], group_index[] */
        uint32_t n = u32(r, p, end, "key_num");
        if (failed(r)) return false;
        if (n == 0 || n > (end - p - 4) / 8)
            return bad(r, p, "key_num", "%llu keys: at least one, and they must fit the %llu bytes left", n,
                       end - p - 4);
        *rest = u32(r, p + 4 + 4ull * n, end, "group_index");
        *pos = p + 4 + 8ull * n;
        *animated = true;
    } else {
        *rest = u32(r, p, end, "group_index");
        *pos = p + 4;
    }
    return !failed(r);
}

static bool read_trigroup(rd *r, const item_span *it, niff_trigroup *g)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_TRI_GROUP, 3, 32, "tri_group_size")) return false;
    uint32_t hs = u32(r, b + 8, end, "tri_group_header_size");
    g->offset = b;
    g->name_index = u32(r, b + 16, end, "tri_group_name_index");
    g->anim_type = u32(r, b + 20, end, "tri_anim_type");
    g->frame_num = u32(r, b + 24, end, "tri_anim_frame_num");
    g->tri_num = u32(r, b + 28, end, "tri_num");
    if (failed(r)) return false;
    if (hs < 32 || hs % 4 || hs > it->size)
        return bad(r, b + 8, "tri_group_header_size", "header size %llu is not a multiple of 4 in [32, %llu]", hs,
                   it->size);
    uint64_t pos = b + hs;
    for (uint32_t a = 0; a < NIFF_REF_COUNT; a++)
        if (!read_ref(r, &pos, end, (g->anim_type >> (4 * a)) & 3u, g->frame_num, &g->ref[a], &g->ref_offset[a],
                      &g->animated))
            return false;
    if (pos > end || g->tri_num > (end - pos) / 76)
        return bad(r, b + 28, "tri_num", "%llu triangles cannot fit the %llu bytes left", g->tri_num,
                   pos > end ? 0 : end - pos);
    g->tris = ra_arena_array(r->ar, g->tri_num, sizeof *g->tris);
    if (!g->tris) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "tris", "out of memory") == RA_OK;
    for (uint32_t i = 0; i < g->tri_num; i++) {
        niff_tri *t = &g->tris[i];
        uint32_t tag = u32(r, pos, end, "tri_tag"), sz = u32(r, pos + 8, end, "tri_size");
        if (failed(r)) return false;
        if (tag != NIFF_TAG_TRI)
            return bad(r, pos, "tri_tag", "expected the tag 0x%08llx, found 0x%08llx", NIFF_TAG_TRI, tag);
        if (sz < 76 || sz % 4 || sz > end - pos)
            return bad(r, pos + 8, "tri_size", "tri_size %llu is not a multiple of 4 in [76, %llu]", sz, end - pos);
        t->offset = pos;
        t->tri_nv = u32(r, pos + 12, end, "tri_nv_index");
        t->tri_color = u32(r, pos + 16, end, "tri_color_index");
        for (uint32_t c = 0; c < 3; c++) {
            uint64_t q = pos + 20 + 16ull * c;
            t->vtx[c] = u32(r, q, end, "vtx_index");
            t->st[c] = u32(r, q + 4, end, "st_index");
            t->vtx_nv[c] = u32(r, q + 8, end, "vtx_nv_index");
            t->vtx_color[c] = u32(r, q + 12, end, "vtx_color_index");
        }
        if (!view_ext(r, pos + 68, pos + 76, pos + sz)) return false;
        pos += sz;
    }
    return !failed(r);
}

static bool read_shape(rd *r, const item_span *it, bool v2, niff_shape *s)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_SHAPE, 2, 40, "shape_size")) return false;
    s->offset = b;
    s->name_index = u32(r, b + 12, end, "shape_name_index");
    s->type = u32(r, b + 16, end, "shape_type");
    s->tri_link = u32(r, b + 20, end, "shape_tri_link");
    s->mat_link = u32(r, b + 24, end, "shape_mat_link");
    uint32_t n = u32(r, b + 28, end, "shape_part_num"), nx = u32(r, b + 32, end, "nintendo_extension_block_size");
    if (failed(r) || !view_links(r, &s->part, b + 40, n, b + 28, end, "shape_part_link")) return false;
    uint64_t body = b + 40 + 4ull * n;
    if (!view_ext(r, b + 32, body, end)) return false;
    s->geometry_kind = NIFF_TAG_TRI_GROUP;
    s->kind_offset = b;
    if (v2 && nx >= 4) s->geometry_kind = u32(r, s->kind_offset = body, end, "kind_of_node_for_geometry");
    return !failed(r);
}

static bool read_part(rd *r, const item_span *it, niff_part *p)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_PART, 2, 36, "part_size")) return false;
    p->offset = b;
    p->name_index = u32(r, b + 12, end, "part_name_index");
    p->mat_index = u32(r, b + 16, end, "part_mat_index");
    p->tri_group_index = u32(r, b + 20, end, "tri_group_index");
    uint32_t n = u32(r, b + 24, end, "part_tri_num");
    if (failed(r) || !view_links(r, &p->tri, b + 36, n, b + 24, end, "tri_index")) return false;
    return view_ext(r, b + 28, b + 36 + 4ull * n, end);
}

static bool read_mat(rd *r, const item_span *it, bool v2, niff_mat *m)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_MAT, 2, 104, "mat_size")) return false;
    m->offset = b;
    m->name_index = u32(r, b + 12, end, "mat_name_index");
    m->type = u32(r, b + 16, end, "mat_type");
    m->shade = u32(r, b + 20, end, "mat_shade_type");
    for (uint32_t i = 0; i < 2; i++) {
        m->color_type[i] = u32(r, b + 24 + 4ull * i, end, "mat_color_type");
        m->alpha_type[i] = u32(r, b + 32 + 4ull * i, end, "mat_alpha_type");
    }
    for (uint32_t i = 0; i < 4; i++) m->prim[i] = ffin(r, b + 40 + 4ull * i, end, "mat_prim_color");
    uint32_t n = u32(r, b + 92, end, "tex_num"), nx = u32(r, b + 96, end, "nintendo_extension_block_size");
    if (failed(r) || !view_links(r, &m->tex, b + 104, n, b + 92, end, "tex_index")) return false;
    uint64_t body = b + 104 + 4ull * n;
    if (!view_ext(r, b + 96, body, end)) return false;
    if (v2 && nx >= 48) { /* ambient, emission, diffuse RGBA */
        m->has_diffuse = true;
        for (uint32_t i = 0; i < 4; i++) m->diffuse[i] = ffin(r, body + 32 + 4ull * i, end, "diffuse");
    }
    return !failed(r);
}

static bool read_tex(rd *r, const item_span *it, bool v2, niff_tex *t)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_TEX, 3, 52, "tex_size")) return false;
    uint32_t hs = u32(r, b + 8, end, "tex_header_size");
    t->offset = b;
    t->name_index = u32(r, b + 16, end, "tex_name_index");
    t->type = u32(r, b + 20, end, "tex_type");
    t->wrap_s = u32(r, b + 24, end, "wrap_s");
    t->wrap_t = u32(r, b + 28, end, "wrap_t");
    t->anim = u32(r, b + 32, end, "tex_anim");
    uint32_t area = u32(r, b + 36, end, "tex_data_area_size"),
             nx = u32(r, b + 44, end, "nintendo_extension_block_size");
    if (failed(r)) return false;
    if (hs < 52 || hs % 4 || hs > it->size)
        return bad(r, b + 8, "tex_header_size", "header size %llu is not a multiple of 4 in [52, %llu]", hs, it->size);
    uint64_t a = b + hs, ae = a + area;
    t->area = a;
    if (area % 4 || area > end - a)
        return bad(r, b + 36, "tex_data_area_size", "%llu bytes of TexDataArea do not fit the %llu left", area,
                   end - a);
    t->img_w = u32(r, a, ae, "img_w");
    t->img_h = u32(r, a + 4, ae, "img_h");
    uint32_t nimg = 1;
    if (t->anim == 0) {
        t->img_index = u32(r, a + 24, ae, "tex_img_index");
    } else { /* scale, offset and image keys: the first image */
        uint32_t ns = u32(r, a + 8, ae, "scale_num"), no = u32(r, a + 12, ae, "offset_num");
        nimg = u32(r, a + 16, ae, "img_num");
        if (failed(r)) return false;
        uint64_t words = 3ull * ns + 3ull * no + 2ull * nimg;
        if (words > (area - 20) / 4)
            return bad(r, a + 16, "img_num", "%llu images (and their keys) do not fit the %llu bytes of TexDataArea",
                       nimg, area);
        /* no image here: the Tex's images are in another file */
        t->img_index = nimg ? u32(r, a + 20 + 4 * (3ull * ns + 3ull * no + nimg), ae, "img_index") : NIFF_NONE;
    }
    /* an image in another file: tex_img_index NONE (the SDK's TexList page) */
    t->external = t->img_index == NIFF_NONE;
    if (!view_ext(r, b + 44, ae, end)) return false;
    if (v2 && nx >= 20) { /* filter, perspective, mipmap level, use_color_palette, external image count, arrays */
        t->has_filter = true;
        t->filter = u32(r, ae, end, "tex_filter");
        t->use_palette = u32(r, ae + 12, end, "use_color_palette") == 1;
        if (t->use_palette && nimg) { /* (an animated Tex of no image here has no palette arrays) */
            if (nx < 20 + 8ull * nimg)
                return bad(r, ae + 12, "use_color_palette", "the palette arrays (%llu images) do not fit %llu bytes",
                           nimg, nx);
            t->palette_index = u32(r, ae + 20, end, "color_palette_index");
            t->tlut_bank = u32(r, ae + 20 + 4ull * nimg, end, "tlut_palette_number");
        }
    }
    return !failed(r);
}

static bool read_teximg(rd *r, const item_span *it, niff_teximg *t)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_TEX_IMG, 3, 24, "tex_img_size")) return false;
    uint32_t hs = u32(r, b + 8, end, "header_size");
    uint64_t nx = u32(r, b + 16, end, "nintendo_extension_block_size"),
             ux = u32(r, b + 20, end, "user_extension_block_size");
    if (failed(r)) return false;
    if (hs < 24 || hs % 4 || hs > it->size || nx + ux > it->size - hs)
        return bad(r, b + 8, "header_size", "header size %llu and extension blocks do not fit the %llu-byte item", hs,
                   it->size);
    t->offset = b;
    t->size = (uint32_t)(it->size - hs - nx - ux);
    /* a copy: the document outlives the bytes it was read from */
    t->pixels = ra_arena_memdup(r->ar, r->data + b + hs, t->size, 1);
    return t->pixels ? true
                     : (ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b + hs, "tex_img_pixels", "out of memory"), false);
}

static bool read_ciimg(rd *r, const item_span *it, niff_ciimg *c)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_CI_IMG, 2, 84, "ci_img_size")) return false;
    c->offset = b;
    c->width = u32(r, b + 16, end, "width");
    c->height = u32(r, b + 20, end, "height");
    c->depth = u32(r, b + 24, end, "pixel_depth");
    uint64_t nx = u32(r, b + 76, end, "nintendo_extension_block_size"),
             ux = u32(r, b + 80, end, "user_extension_block_size");
    if (failed(r)) return false;
    if (c->depth != 4 && c->depth != 8)
        return bad(r, b + 24, "pixel_depth", "pixel depth %llu, expected 4 or %llu", c->depth, 8);
    if (nx + ux > it->size - 84)
        return bad(r, b + 76, "nintendo_extension_block_size", "the extension blocks (%llu bytes) exceed the %llu left",
                   nx + ux, it->size - 84);
    c->word_count = (uint32_t)((it->size - 84 - nx - ux) / 4);
    c->words = u32_array(r, b + 84, c->word_count, end, "ci_pixels");
    return c->words != NULL || c->word_count == 0;
}

static bool read_palette(rd *r, const item_span *it, niff_palette *p)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_PALETTE, 2, 84, "color_palette_size")) return false;
    p->offset = b;
    p->count = u32(r, b + 16, end, "color_num");
    p->color_type = u32(r, b + 20, end, "color_type");
    if (failed(r)) return false;
    if (p->count > (it->size - 84) / 2)
        return bad(r, b + 16, "color_num", "%llu colours cannot fit the %llu bytes left", p->count, it->size - 84);
    p->colors = ra_arena_array(r->ar, p->count, sizeof *p->colors);
    if (!p->colors) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "colors", "out of memory") == RA_OK;
    for (uint32_t i = 0; i < p->count; i++) {
        uint32_t w = u32(r, b + 84 + 4ull * (i / 2), end, "color");
        p->colors[i] = (uint16_t)(i % 2 ? w & 0xFFFFu : w >> 16);
    }
    return !failed(r);
}

/* ---- NIFF 2 deformable geometry ------------------------------------------------------------------------ */
static uint32_t *arr_alloc(rd *r, uint32_t n, uint64_t off)
{
    uint32_t *v = ra_arena_array(r->ar, n ? n : 1, sizeof *v);
    if (!v) ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, off, "parts", "out of memory");
    return v;
}

/* A part's per-node group arrays: `groups` entries each, stored as consecutive arrays from off. */
static bool part_groups(rd *r, niff_envpart *p, uint64_t off, uint32_t groups, uint64_t end, bool weights)
{
    uint32_t **dst[6] = {&p->weight, &p->vtx, &p->vtx_nv, &p->tri_nv, &p->vtx_color, &p->tri_color};
    static const char *const names[6] = {"weight_group_index", "vtx_group_index",       "vtx_nv_group_index",
                                         "tri_nv_group_index", "vtx_color_group_index", "tri_color_group_index"};
    p->group_count = groups;
    for (int k = weights ? 0 : 1; k < 6; k++) {
        if (!(*dst[k] = u32_array(r, off, groups, end, names[k])) && groups) return false;
        off += 4ull * groups;
    }
    return true;
}

static bool read_envpart(rd *r, uint64_t b, uint64_t end, uint32_t kind, niff_envpart *p)
{
    static const uint32_t tags[3] = {NIFF_TAG_FULL_WEIGHTED_PART, NIFF_TAG_WEIGHTED_PART, NIFF_TAG_MORPH_PART};
    static const uint32_t heads[3] = {64, 36, 64};
    uint32_t tag = u32(r, b, end, "part_tag"), size = u32(r, b + 8, end, "part_size");
    if (failed(r)) return false;
    if (tag != tags[kind])
        return bad(r, b, "part_tag", "expected the tag 0x%08llx (parts come full, weighted, morph), found 0x%08llx",
                   tags[kind], tag);
    if (size < heads[kind] || size % 4 || size > end - b)
        return bad(r, b + 8, "part_size", "part size %llu is not a multiple of 4 in [%llu, the bytes left]", size,
                   heads[kind]);
    uint64_t e = b + size;
    p->kind = kind;
    p->offset = b;
    p->kind_off = b + 16;
    p->index_off = b + 20;
    p->node_stride = 16;
    if (kind == NIFF_PART_FULL) {
        for (uint32_t k = 1; k < 6; k++) p->group_off[k] = b + 28 + 4ull * k;
        p->st_off = b + 52;
        p->node_count = 1;
        if (!(p->node_kind = arr_alloc(r, 1, b)) || !(p->node_index = arr_alloc(r, 1, b))) return false;
        p->node_kind[0] = u32(r, b + 16, e, "kind_of_transform_node");
        p->node_index[0] = u32(r, b + 20, e, "transform_node_index");
        if (!part_groups(r, p, b + 32, 1, e, false)) return false;
        p->st = u32(r, b + 52, e, "st_group_index");
        return view_ext(r, b + 56, b + 64, e);
    }
    if (kind == NIFF_PART_WEIGHTED) {
        uint32_t a = u32(r, b + 16, e, "affected_node_num"), x = u32(r, b + 24, e, "external_affected_obj_num");
        p->st = u32(r, b + 20, e, "weight_st_group_index");
        if (failed(r)) return false;
        if (a > (size - 36) / 32 || x > (size - 36) / 32 - a || a + x == 0)
            return bad(r, b + 16, "affected_node_num",
                       "%llu nodes (and %llu external): at least one, and they must fit the part", a, x);
        p->node_count = a;
        p->external = x;
        p->kind_off = b + 36;
        p->index_off = b + 36 + 4ull * a;
        p->node_stride = 4;
        p->st_off = b + 20;
        for (uint32_t k = 0; k < 6; k++) p->group_off[k] = b + 36 + 8ull * a + 8ull * x + 4ull * k * (a + x);
        if (!(p->node_kind = u32_array(r, b + 36, a, e, "kind_of_affected_node")) && a) return false;
        if (!(p->node_index = u32_array(r, b + 36 + 4ull * a, a, e, "affected_node_index")) && a) return false;
        uint64_t g = b + 36 + 8ull * a + 8ull * x;
        if (!part_groups(r, p, g, a + x, e, true)) return false;
        return view_ext(r, b + 28, g + 24ull * (a + x), e);
    }
    /* MorphPart: two nodes, one table of groups per angle step (node 0's space) */
    uint32_t t = u32(r, b + 52, e, "table_num");
    if (failed(r)) return false;
    if (t == 0 || t > (size - 64) / 20)
        return bad(r, b + 52, "table_num", "%llu tables: at least one, and they must fit the %llu-byte part", t, size);
    p->node_count = 2;
    p->st_off = b + 48;
    for (uint32_t k = 1; k < 6; k++) p->group_off[k] = b + 64 + 4ull * (k - 1) * t;
    if (!(p->node_kind = arr_alloc(r, 2, b)) || !(p->node_index = arr_alloc(r, 2, b))) return false;
    p->node_kind[0] = u32(r, b + 16, e, "kind_of_node0");
    p->node_index[0] = u32(r, b + 20, e, "node_index0");
    p->node_kind[1] = u32(r, b + 32, e, "kind_of_node1");
    p->node_index[1] = u32(r, b + 36, e, "node_index1");
    p->st = u32(r, b + 48, e, "morph_st_group_index");
    if (!part_groups(r, p, b + 64, t, e, false)) return false;
    return view_ext(r, b + 56, b + 64 + 20ull * t, e);
}

/* EnvelopeTri (116 bytes) or ClusterTri (100 bytes): the triangle's part and three corners. */
static bool read_envtri(rd *r, uint64_t b, uint64_t end, bool cluster, niff_envtri *t)
{
    uint32_t want = cluster ? NIFF_TAG_CLUSTER_TRI : NIFF_TAG_ENVELOPE_TRI, need = cluster ? 100 : 116;
    uint32_t tag = u32(r, b, end, "tri_tag"), size = u32(r, b + 8, end, "tri_size");
    if (failed(r)) return false;
    if (tag != want) return bad(r, b, "tri_tag", "expected the tag 0x%08llx, found 0x%08llx", want, tag);
    if (size < need || size % 4 || size > end - b)
        return bad(r, b + 8, "tri_size", "tri_size %llu is not a multiple of 4 in [%llu, the bytes left]", size, need);
    t->offset = b;
    t->part_kind = u32(r, b + 12, end, "kind_for_tri");
    t->part = u32(r, b + 16, end, "part_index_for_tri");
    t->tri_nv = u32(r, b + 20, end, "tri_nv_index");
    t->tri_color = u32(r, b + 24, end, "tri_color_index");
    uint64_t c0 = b + (cluster ? 28 : 32), stride = cluster ? 24 : 28;
    for (uint32_t c = 0; c < 3; c++) {
        uint64_t q = c0 + stride * c;
        niff_envvtx *v = &t->c[c];
        v->part_kind = u32(r, q, end, "kind_of_part");
        v->part = u32(r, q + 4, end, "part_index");
        v->vtx = u32(r, q + 8, end, "vtx_index");
        v->st = u32(r, q + 12, end, "st_index");
        v->vtx_nv = u32(r, q + 16, end, "vtx_nv_index");
        v->vtx_color = u32(r, q + 20, end, "vtx_color_index");
        v->weight = cluster ? NIFF_NONE : u32(r, q + 24, end, "weight_index");
    }
    return !failed(r);
}

/* An Envelope (parts: full, weighted, morph; then triangles) or a ClusterShape (clusters, then triangles). */
static bool read_deform(rd *r, const item_span *it, bool cluster, niff_deform *d)
{
    uint64_t b = it->off, end = b + it->size, head = cluster ? 36 : 44;
    if (!view_head(r, it, cluster ? NIFF_TAG_CLUSTER_SHAPE : NIFF_TAG_ENVELOPE, 2, (uint32_t)head,
                   cluster ? "cluster_shape_size" : "envelope_size"))
        return false;
    d->offset = b;
    d->cluster = cluster;
    d->name_index = u32(r, b + 12, end, "name_index");
    uint32_t n[NIFF_PART_KINDS] = {0, 0, 0};
    if (cluster) {
        n[NIFF_PART_FULL] = u32(r, b + 20, end, "cluster_num");
    } else {
        for (uint32_t k = 0; k < NIFF_PART_KINDS; k++) n[k] = u32(r, b + 20 + 4ull * k, end, "part_num");
    }
    d->tri_count = u32(r, b + (cluster ? 24 : 32), end, "tri_num");
    if (failed(r)) return false;
    uint64_t pos = b + head;
    for (uint32_t k = 0; k < NIFF_PART_KINDS; k++) {
        if (n[k] > (end - pos) / 36)
            return bad(r, b + 20 + 4ull * k, cluster ? "cluster_num" : "part_num",
                       "%llu parts cannot fit the %llu bytes left", n[k], end - pos);
        d->part_count[k] = n[k];
        d->parts[k] = ra_arena_array(r->ar, n[k] ? n[k] : 1, sizeof *d->parts[k]);
        if (!d->parts[k]) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, pos, "parts", "out of memory") == RA_OK;
        for (uint32_t i = 0; i < n[k]; i++) {
            niff_envpart *p = &d->parts[k][i];
            if (cluster) { /* 56 bytes, no extension blocks: one Obj moves the cluster's vertices */
                uint32_t tag = u32(r, pos, end, "cluster_tag"), size = u32(r, pos + 8, end, "cluster_size");
                if (failed(r)) return false;
                if (tag != NIFF_TAG_CLUSTER)
                    return bad(r, pos, "cluster_tag", "expected the tag 0x%08llx, found 0x%08llx", NIFF_TAG_CLUSTER,
                               tag);
                if (size < 56 || size % 4 || size > end - pos)
                    return bad(r, pos + 8, "cluster_size", "cluster size %llu is not a multiple of 4 in [%llu, ..]",
                               size, 56);
                p->kind = NIFF_PART_FULL;
                p->offset = pos;
                p->node_count = 1;
                p->kind_off = pos + 16;
                p->index_off = pos + 20;
                p->node_stride = 16;
                for (uint32_t q = 1; q < 6; q++) p->group_off[q] = pos + 28 + 4ull * q;
                p->st_off = pos + 52;
                if (!(p->node_kind = arr_alloc(r, 1, pos)) || !(p->node_index = arr_alloc(r, 1, pos))) return false;
                p->node_kind[0] = u32(r, pos + 16, end, "kind_of_transform_node");
                p->node_index[0] = u32(r, pos + 20, end, "transform_node_index");
                if (!part_groups(r, p, pos + 32, 1, pos + size, false)) return false;
                p->st = u32(r, pos + 52, end, "cluster_st_group_index");
                pos += size;
            } else {
                if (!read_envpart(r, pos, end, k, p)) return false;
                pos += u32(r, pos + 8, end, "part_size");
            }
        }
    }
    uint32_t tsize = cluster ? 100 : 116;
    if (d->tri_count > (end - pos) / tsize)
        return bad(r, b + (cluster ? 24 : 32), "tri_num", "%llu triangles cannot fit the %llu bytes left", d->tri_count,
                   end - pos);
    d->tris = ra_arena_array(r->ar, d->tri_count ? d->tri_count : 1, sizeof *d->tris);
    if (!d->tris) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, pos, "tris", "out of memory") == RA_OK;
    for (uint32_t i = 0; i < d->tri_count; i++) {
        if (!read_envtri(r, pos, end, cluster, &d->tris[i])) return false;
        pos += u32(r, pos + 8, end, "tri_size");
    }
    return view_ext(r, b + head - 8, pos, end);
}

static bool read_weight_group(rd *r, const item_span *it, niff_vgroup *g)
{
    uint64_t b = it->off, end = b + it->size;
    if (!view_head(r, it, NIFF_TAG_WEIGHT_GROUP, 2, 28, "weight_group_size")) return false;
    uint32_t n = u32(r, b + 16, end, "weight_num");
    if (failed(r)) return false;
    if (n > (it->size - 28) / 4) return bad(r, b + 16, "weight_num", "%llu weights cannot fit %llu bytes", n, it->size);
    g->count = n;
    g->comps = 1;
    g->offset = b;
    g->v = ra_arena_array(r->ar, n ? n : 1, sizeof *g->v);
    if (!g->v) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, b, "weights", "out of memory") == RA_OK;
    for (uint32_t k = 0; k < n; k++) g->v[k] = ffin(r, b + 28 + 4ull * k, end, "weight");
    return !failed(r) && view_ext(r, b + 20, b + 28 + 4ull * n, end);
}

/* A generic list of one item kind: the items' views into *out. */
#define READ_VIEW_LIST(TYPE, OUT, COUNT, MIN, CALL)                                                                    \
    do {                                                                                                               \
        niff_ext ext_;                                                                                                 \
        uint32_t n_ = 0;                                                                                               \
        item_span *it_ = list_items(r, off, end, MIN, &n_, &ext_);                                                     \
        if (!it_) return false;                                                                                        \
        TYPE *v_ = ra_arena_array(r->ar, n_, sizeof *v_);                                                              \
        if (!v_) return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, off, "items", "out of memory") == RA_OK;                \
        for (uint32_t i = 0; i < n_; i++) {                                                                            \
            TYPE *item = &v_[i];                                                                                       \
            const item_span *span = &it_[i];                                                                           \
            if (!(CALL)) return false;                                                                                 \
        }                                                                                                              \
        (OUT) = v_;                                                                                                    \
        (COUNT) = n_;                                                                                                  \
    } while (0)

/* The view of list `tag` at [off, end), if it has one. */
static bool read_view(rd *r, niff_file *f, uint32_t tag, uint64_t off, uint64_t end, bool v2)
{
    niff_geometry *g = &f->geo;
    switch (tag) {
    case NIFF_TAG_SHAPE_LIST:
        READ_VIEW_LIST(niff_shape, g->shapes, g->shape_count, 40, read_shape(r, span, v2, item));
        break;
    case NIFF_TAG_VTX_LIST:
        READ_VIEW_LIST(niff_vgroup, g->vtx, g->vtx_count, 24, read_vgroup(r, span, NIFF_TAG_VTX_GROUP, 3, 20, item));
        break;
    case NIFF_TAG_ST_LIST:
        READ_VIEW_LIST(niff_vgroup, g->st, g->st_count, 20, read_vgroup(r, span, NIFF_TAG_ST_GROUP, 2, 16, item));
        break;
    case NIFF_TAG_COLOR_LIST:
        return read_two_count(r, off, end, NIFF_TAG_TRI_COLOR_GROUP, NIFF_TAG_VTX_COLOR_GROUP, 4, &g->tri_color,
                              &g->tri_color_count, &g->vtx_color, &g->vtx_color_count);
    case NIFF_TAG_VECTOR_LIST:
        return read_two_count(r, off, end, NIFF_TAG_TRI_NV_GROUP, NIFF_TAG_VTX_NV_GROUP, 3, &g->tri_nv,
                              &g->tri_nv_count, &g->vtx_nv, &g->vtx_nv_count);
    case NIFF_TAG_TRI_LIST:
        READ_VIEW_LIST(niff_trigroup, g->trigroups, g->trigroup_count, 32, read_trigroup(r, span, item));
        break;
    case NIFF_TAG_PART_LIST: READ_VIEW_LIST(niff_part, g->parts, g->part_count, 36, read_part(r, span, item)); break;
    case NIFF_TAG_MAT_LIST: READ_VIEW_LIST(niff_mat, g->mats, g->mat_count, 104, read_mat(r, span, v2, item)); break;
    case NIFF_TAG_TEX_LIST: READ_VIEW_LIST(niff_tex, g->texs, g->tex_count, 52, read_tex(r, span, v2, item)); break;
    case NIFF_TAG_TEX_IMG_LIST:
        READ_VIEW_LIST(niff_teximg, g->teximgs, g->teximg_count, 24, read_teximg(r, span, item));
        break;
    case NIFF_TAG_CI_IMG_LIST:
        READ_VIEW_LIST(niff_ciimg, g->ciimgs, g->ciimg_count, 84, read_ciimg(r, span, item));
        break;
    case NIFF_TAG_PALETTE_LIST:
        READ_VIEW_LIST(niff_palette, g->palettes, g->palette_count, 84, read_palette(r, span, item));
        break;
    case NIFF_TAG_ENVELOPE_LIST:
        READ_VIEW_LIST(niff_deform, g->envelopes, g->envelope_count, 44, read_deform(r, span, false, item));
        break;
    case NIFF_TAG_CLUSTER_LIST:
        READ_VIEW_LIST(niff_deform, g->clusters, g->cluster_count, 36, read_deform(r, span, true, item));
        break;
    case NIFF_TAG_WEIGHT_LIST:
        READ_VIEW_LIST(niff_vgroup, g->weights, g->weight_count, 28, read_weight_group(r, span, item));
        break;
    case NIFF_TAG_CHAIN_ROOT_LIST:
    case NIFF_TAG_JOINT_LIST:
    case NIFF_TAG_EFFECTOR_LIST: {
        uint32_t k = tag == NIFF_TAG_CHAIN_ROOT_LIST ? NIFF_CHAIN_ROOT
                     : tag == NIFF_TAG_JOINT_LIST    ? NIFF_CHAIN_JOINT
                                                     : NIFF_CHAIN_EFFECTOR;
        READ_VIEW_LIST(niff_chain, f->chains[k], f->chain_count[k], 12, read_chain(r, span, k, item));
        break;
    }
    default: break;
    }
    return true;
}

/* NIFF 2 Obj extension: four *_for_fog words, obj_chain_root_link_num, two
 * external counts, then the chain links. */
static bool read_obj_chains(rd *r, niff_obj *o, uint64_t ext_off)
{
    const niff_blob *x = &o->ext.nintendo;
    if (x->size < 28) return true;
    uint32_t n = ra_load_u32be(x->data + 16);
    if (n > (x->size - 28) / 4)
        return bad(r, ext_off + 16, "obj_chain_root_link_num", "%llu chain links cannot fit the %llu-byte extension", n,
                   x->size);
    o->chain_root.n = n;
    o->chain_root_offset = ext_off + 28;
    o->chain_root.v = ra_arena_array(r->ar, n, sizeof *o->chain_root.v);
    if (!o->chain_root.v)
        return ra_fail(r->err, RA_ERR_NO_MEMORY, FMT, ext_off, "obj_chain_root_link", "out of memory") == RA_OK;
    for (uint32_t k = 0; k < n; k++) o->chain_root.v[k] = ra_load_u32be(x->data + 28 + 4 * k);
    return true;
}

/* The part kind of a corner's kind_of_part tag, or -1. */
static int part_kind_of(uint32_t tag, bool cluster)
{
    if (cluster) return tag == NIFF_TAG_CLUSTER ? NIFF_PART_FULL : -1;
    return tag == NIFF_TAG_FULL_WEIGHTED_PART ? NIFF_PART_FULL
           : tag == NIFF_TAG_WEIGHTED_PART    ? NIFF_PART_WEIGHTED
           : tag == NIFF_TAG_MORPH_PART       ? NIFF_PART_MORPH
                                              : -1;
}

static bool check_deform(rd *r, const niff_file *f, const niff_deform *d)
{
    const niff_geometry *g = &f->geo;
    for (uint32_t k = 0; k < NIFF_PART_KINDS; k++)
        for (uint32_t i = 0; i < d->part_count[k]; i++) {
            const niff_envpart *p = &d->parts[k][i];
            for (uint32_t n = 0; n < p->node_count; n++) {
                uint32_t kind = p->node_kind[n], idx = p->node_index[n], count = 0;
                if (kind == NIFF_NONE || idx == NIFF_NONE) continue; /* a node of another file */
                if (kind == NIFF_TAG_OBJ_LIST) count = f->obj_count;
                else if (kind == NIFF_TAG_CHAIN_ROOT_LIST) count = f->chain_count[NIFF_CHAIN_ROOT];
                else if (kind == NIFF_TAG_JOINT_LIST) count = f->chain_count[NIFF_CHAIN_JOINT];
                else if (kind == NIFF_TAG_EFFECTOR_LIST) count = f->chain_count[NIFF_CHAIN_EFFECTOR];
                else
                    return ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, p->kind_off + p->node_stride * n,
                                   "kind_of_transform_node",
                                   "node kind 0x%08x: expected the Obj, ChainRoot, Joint or Effector list's tag",
                                   kind) == RA_OK;
                if (idx >= count)
                    return bad(r, p->index_off + p->node_stride * n, "transform_node_index",
                               "node %llu, but its list has %llu", idx, count);
            }
            for (uint32_t q = 0; q < p->group_count; q++) {
                uint64_t at = 4ull * q;
                if (p->vtx[q] >= g->vtx_count)
                    return bad(r, p->group_off[1] + at, "vtx_group_index",
                               "vertex group %llu, but the VtxList has %llu", p->vtx[q], g->vtx_count);
                if (p->weight && p->weight[q] >= g->weight_count)
                    return bad(r, p->group_off[0] + at, "weight_group_index",
                               "weight group %llu, but the WeightList has %llu", p->weight[q], g->weight_count);
                if (!index_ok(r, p->vtx_nv[q], g->vtx_nv_count, p->group_off[2] + at, "vtx_nv_group_index",
                              "VectorList") ||
                    !index_ok(r, p->tri_nv[q], g->tri_nv_count, p->group_off[3] + at, "tri_nv_group_index",
                              "VectorList") ||
                    !index_ok(r, p->vtx_color[q], g->vtx_color_count, p->group_off[4] + at, "vtx_color_group_index",
                              "ColorList") ||
                    !index_ok(r, p->tri_color[q], g->tri_color_count, p->group_off[5] + at, "tri_color_group_index",
                              "ColorList"))
                    return false;
            }
            if (!index_ok(r, p->st, g->st_count, p->st_off, "st_group_index", "StList")) return false;
        }
    for (uint32_t i = 0; i < d->tri_count; i++) {
        const niff_envtri *t = &d->tris[i];
        for (uint32_t c = 0; c < 3; c++) {
            const niff_envvtx *v = &t->c[c];
            uint64_t at = t->offset + (d->cluster ? 28u : 32u) + (d->cluster ? 24u : 28u) * c;
            int k = part_kind_of(v->part_kind, d->cluster);
            if (k < 0)
                return ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, at, "kind_of_part",
                               "part kind 0x%08x is not one of this shape's", v->part_kind) == RA_OK;
            if (v->part >= d->part_count[k])
                return bad(r, at + 4, "part_index", "part %llu, but the shape has %llu of its kind", v->part,
                           d->part_count[k]);
            const niff_envpart *p = &d->parts[k][v->part];
            for (uint32_t q = 0; q < p->group_count; q++)
                if (v->vtx >= g->vtx[p->vtx[q]].count)
                    return bad(r, at + 8, "vtx_index", "vertex %llu, but the part's vertex group has %llu", v->vtx,
                               g->vtx[p->vtx[q]].count);
        }
        int k = part_kind_of(t->part_kind, d->cluster);
        if (k >= 0 && t->part >= d->part_count[k])
            return bad(r, t->offset + 16, "part_index_for_tri", "part %llu, but the shape has %llu of its kind",
                       t->part, d->part_count[k]);
    }
    return true;
}

/* Every index of the views names an item of its list (0xFFFFFFFF: none, where allowed). */
static bool check_views(rd *r, const niff_file *f)
{
    const niff_geometry *g = &f->geo;
    static const char *const chain_lists[3] = {"ChainRootList", "JointList", "EffectorList"};
    for (uint32_t i = 0; i < f->obj_count; i++) {
        const niff_obj *o = &f->objs[i];
        if (!index_ok(r, o->shape_link, g->shape_count, o->offset + 64, "obj_shape_link", "ShapeList") ||
            !index_ok(r, o->mat_link, g->mat_count, o->offset + 68, "obj_mat_link", "MatList"))
            return false;
        for (uint32_t k = 0; k < o->chain_root.n; k++)
            if (o->chain_root.v[k] != NIFF_NONE && o->chain_root.v[k] >= f->chain_count[NIFF_CHAIN_ROOT])
                return bad(r, o->chain_root_offset + 4ull * k, "obj_chain_root_link",
                           "chain root %llu, but the ChainRootList has %llu", o->chain_root.v[k],
                           f->chain_count[NIFF_CHAIN_ROOT]);
    }
    for (uint32_t k = 0; k < 3; k++)
        for (uint32_t i = 0; i < f->chain_count[k]; i++) {
            const niff_chain *c = &f->chains[k][i];
            uint64_t b = c->offset, objs = b + (k == NIFF_CHAIN_JOINT ? 64u : k == NIFF_CHAIN_ROOT ? 44u : 40u);
            uint64_t anim_off = b + (k == NIFF_CHAIN_JOINT ? 52u : 28u);
            if (!index_ok(r, c->name_index, f->name_count, b + 12, "name_index", "NameList") ||
                !index_ok(r, c->anim_index, f->group_count, anim_off, "anim_index", "AnimList") ||
                !index_ok(r, c->joint_index, f->chain_count[NIFF_CHAIN_JOINT], b + (k == NIFF_CHAIN_JOINT ? 44u : 32u),
                          "joint_index", chain_lists[NIFF_CHAIN_JOINT]) ||
                !index_ok(r, c->effector_index, f->chain_count[NIFF_CHAIN_EFFECTOR], b + 48, "effector_index",
                          chain_lists[NIFF_CHAIN_EFFECTOR]))
                return false;
            for (uint32_t j = 0; j < c->obj.n; j++)
                if (c->obj.v[j] != NIFF_NONE && c->obj.v[j] >= f->obj_count)
                    return bad(r, objs + 4ull * j, "obj_index", "object %llu, but the ObjList has %llu", c->obj.v[j],
                               f->obj_count);
        }
    for (uint32_t i = 0; i < g->shape_count; i++) {
        const niff_shape *sh = &g->shapes[i];
        uint32_t n = sh->geometry_kind == NIFF_TAG_TRI_GROUP       ? g->trigroup_count
                     : sh->geometry_kind == NIFF_TAG_ENVELOPE      ? g->envelope_count
                     : sh->geometry_kind == NIFF_TAG_CLUSTER_SHAPE ? g->cluster_count
                                                                   : 0;
        const char *list = sh->geometry_kind == NIFF_TAG_TRI_GROUP  ? "TriList"
                           : sh->geometry_kind == NIFF_TAG_ENVELOPE ? "EnvelopeList"
                                                                    : "ClusterList";
        if (n == 0 && sh->geometry_kind != NIFF_TAG_TRI_GROUP && sh->geometry_kind != NIFF_TAG_ENVELOPE &&
            sh->geometry_kind != NIFF_TAG_CLUSTER_SHAPE)
            return ra_fail(r->err, RA_ERR_BAD_VALUE, FMT, sh->kind_offset, "kind_of_node_for_geometry",
                           "geometry kind 0x%08x: expected TriGroup, Envelope or ClusterShape",
                           sh->geometry_kind) == RA_OK;
        if (!index_ok(r, sh->name_index, f->name_count, sh->offset + 12, "shape_name_index", "NameList") ||
            !index_ok(r, sh->tri_link, n, sh->offset + 20, "shape_tri_link", list) ||
            !index_ok(r, sh->mat_link, g->mat_count, sh->offset + 24, "shape_mat_link", "MatList"))
            return false;
        for (uint32_t k = 0; k < sh->part.n; k++)
            if (sh->part.v[k] >= g->part_count)
                return bad(r, sh->offset + 40 + 4ull * k, "shape_part_link", "part %llu, but the PartList has %llu",
                           sh->part.v[k], g->part_count);
    }
    for (uint32_t i = 0; i < g->part_count; i++) {
        const niff_part *p = &g->parts[i];
        if (p->mat_index != NIFF_USE_SHAPE_MAT &&
            !index_ok(r, p->mat_index, g->mat_count, p->offset + 16, "part_mat_index", "MatList"))
            return false;
    }
    const uint32_t ref_n[NIFF_REF_COUNT] = {g->vtx_count,    g->tri_color_count, g->vtx_color_count,
                                            g->tri_nv_count, g->vtx_nv_count,    g->st_count};
    static const char *const ref_list[NIFF_REF_COUNT] = {
        "VtxList (vertex groups)",           "ColorList (triangle colour groups)",
        "ColorList (vertex colour groups)",  "VectorList (triangle normal groups)",
        "VectorList (vertex normal groups)", "StList"};
    for (uint32_t i = 0; i < g->trigroup_count; i++) {
        const niff_trigroup *t = &g->trigroups[i];
        for (uint32_t a = 0; a < NIFF_REF_COUNT; a++)
            if (!index_ok(r, t->ref[a], ref_n[a], t->ref_offset[a], "group_index", ref_list[a])) return false;
        if (t->tri_num && t->ref[NIFF_REF_VTX] == NIFF_NONE)
            return bad(r, t->ref_offset[NIFF_REF_VTX], "group_index", "%llu triangles but no vertex group (of %llu)",
                       t->tri_num, g->vtx_count);
        const niff_vgroup *v = t->tri_num ? &g->vtx[t->ref[NIFF_REF_VTX]] : NULL;
        for (uint32_t k = 0; k < t->tri_num; k++)
            for (uint32_t c = 0; c < 3; c++)
                if (t->tris[k].vtx[c] >= v->count)
                    return bad(r, t->tris[k].offset + 20 + 16ull * c, "vtx_index",
                               "vertex %llu, but the triangle's vertex group has %llu", t->tris[k].vtx[c], v->count);
    }
    for (uint32_t i = 0; i < g->mat_count; i++) {
        const niff_mat *m = &g->mats[i];
        if (!index_ok(r, m->name_index, f->name_count, m->offset + 12, "mat_name_index", "NameList")) return false;
        for (uint32_t k = 0; k < m->tex.n; k++)
            if (!index_ok(r, m->tex.v[k], g->tex_count, m->offset + 104 + 4ull * k, "tex_index", "TexList"))
                return false;
    }
    for (uint32_t i = 0; i < g->tex_count; i++) {
        const niff_tex *t = &g->texs[i];
        if (!index_ok(r, t->name_index, f->name_count, t->offset + 16, "tex_name_index", "NameList")) return false;
        if (t->external) continue; /* its image is not in this file: nothing here to check */
        if (t->use_palette) {
            if (t->img_index >= g->ciimg_count)
                return bad(r, t->area + 24, "tex_img_index", "colour-indexed image %llu, but the CiImgList has %llu",
                           t->img_index, g->ciimg_count);
            if (t->palette_index >= g->palette_count)
                return bad(r, t->offset, "color_palette_index", "palette %llu, but the ColorPaletteList has %llu",
                           t->palette_index, g->palette_count);
            continue;
        }
        if (t->img_w == 0 || t->img_h == 0 || t->img_w > 4096 || t->img_h > 4096)
            return bad(r, t->area, "img_w", "image size %llux%llu: each side must be in [1, 4096]", t->img_w, t->img_h);
        if (t->img_index >= g->teximg_count)
            return bad(r, t->area + 24, "tex_img_index", "image %llu, but the TexImgList has %llu", t->img_index,
                       g->teximg_count);
        const niff_teximg *im = &g->teximgs[t->img_index];
        if (im->size < 4ull * t->img_w * t->img_h)
            return bad(r, im->offset + 12, "tex_img_size", "%llu bytes of pixels, the Tex needs %llu (RGBA8)", im->size,
                       4ull * t->img_w * t->img_h);
    }
    for (uint32_t i = 0; i < g->envelope_count; i++)
        if (!check_deform(r, f, &g->envelopes[i])) return false;
    for (uint32_t i = 0; i < g->cluster_count; i++)
        if (!check_deform(r, f, &g->clusters[i])) return false;
    for (uint32_t i = 0; i < g->ciimg_count; i++) {
        const niff_ciimg *c = &g->ciimgs[i];
        uint64_t px = (uint64_t)c->width * c->height, per = c->depth == 4 ? 8 : 4;
        if (c->width == 0 || c->height == 0 || c->width > 4096 || c->height > 4096)
            return bad(r, c->offset + 16, "width", "image size %llux%llu: each side must be in [1, 4096]", c->width,
                       c->height);
        if (c->word_count < (px + per - 1) / per)
            return bad(r, c->offset + 8, "ci_img_size", "%llu words of indices, the image needs %llu", c->word_count,
                       (px + per - 1) / per);
    }
    return true;
}

static const char netimmerse[] = "NetImmerse File Format", gamebryo[] = "Gamebryo File Format";

/* The AnimList's groups, read as jobs: each with a reader of its own over
 * the same bytes, its records in the job's arena.  The lists before and
 * after are read in order on this thread, so an error is the one the
 * reading in file order meets first. */
typedef struct group_jobs {
    const uint8_t *data;
    size_t size, fsize;
    const item_span *it;
    bool v2;
    niff_group *groups;
} group_jobs;

static ra_status group_job(void *ctx, size_t i, ra_arena *arena, ra_error *err)
{
    const group_jobs *gj = ctx;
    rd r = {.data = gj->data, .size = gj->fsize, .ar = arena, .err = err};
    ra_cursor_init(&r.c, gj->data, gj->size, FMT, err);
    return read_group(&r, &gj->it[i], gj->v2, &gj->groups[i]) ? RA_OK : err->code;
}

ra_status niff_read(const uint8_t *data, size_t size, ra_arena *arena, niff_file *f, ra_error *err)
{
    return niff_read_run(data, size, arena, f, err, NULL, NULL);
}

ra_status niff_read_run(const uint8_t *data, size_t size, ra_arena *arena, niff_file *f, ra_error *err,
                        ra_read_runner run, void *run_ctx)
{
    if (!run) { /* in order on this thread */
        run = ra_read_run_serial;
        run_ctx = arena;
    }
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
            /* 0 "does not exist" (the specification), accepted anyway: the walk needs no header size */
            if (slot < nlists && hsize[slot] && hsize[slot] != lsize)
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
                if (!read_obj(&r, &it[i], v2, &f->objs[i])) return err->code;
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
            /* the work: about one Anim per 52 bytes (the size of a FULL one) */
            group_jobs gj = {data, size, fsize, it, v2, f->groups};
            if (run(run_ctx, n, (double)lsize / 52, group_job, &gj, RA_OK, NULL, err) != RA_OK) return err->code;
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
            if (!blob(&r, off, lsize, end, &l->raw, "list") || !read_view(&r, f, ltag, off, end, v2)) return err->code;
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
    if (!check_links(&r, f) || !check_views(&r, f)) return err->code;
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
