/* World of Goo BinImageAnimation / BinMovie: read and write the four byte
 * layouts (docs/formats/world_of_goo.md §1-§3).  No semantics here beyond
 * what a reader must check before following a pointer: every offset lies
 * inside the file (inside the animation for an embedded one), every count
 * fits the bytes it points to, nextFrameIndex chains move forward to a keyed
 * slot (so they cannot loop), enum fields hold values the format defines. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/wog.h"

static const char *const layout_names[WOG_LAYOUT_COUNT] = {"binltl", "binbig", "binltl64", "binuni"};

const char *wog_layout_name(wog_layout l) { return (unsigned)l < WOG_LAYOUT_COUNT ? layout_names[l] : "?"; }

int wog_layout_from_name(const char *name)
{
    for (int i = 0; i < WOG_LAYOUT_COUNT; i++)
        if (name && strcmp(name, layout_names[i]) == 0) return i;
    return -1;
}

static bool is_big(wog_layout l) { return l == WOG_LAYOUT_BINBIG; }
static unsigned ptr_size(wog_layout l) { return l == WOG_LAYOUT_BINLTL64 || l == WOG_LAYOUT_BINUNI ? 8 : 4; }
static unsigned magic_size(wog_layout l) { return l == WOG_LAYOUT_BINUNI ? 8 : 0; }
/* bytes before the seven pointers of an animation header / the three of a movie header */
static unsigned anim_header_size(wog_layout l) { return magic_size(l) + 24 + 7 * ptr_size(l); }
static unsigned movie_header_size(wog_layout l) { return magic_size(l) + 8 + 3 * ptr_size(l); }

static const char anim_magic[8] = {'B', 'I', 'N', 'U', 'N', 'I', 'A', 'N'};
static const char movie_magic[8] = {'B', 'I', 'N', 'U', 'N', 'I', 'M', 'O'};

const char *wog_string(const uint8_t *table, uint32_t size, int64_t idx)
{
    if (!table || idx < 0 || (uint64_t)idx >= size) return NULL;
    size_t left = size - (size_t)idx;
    const void *nul = memchr(table + idx, 0, left < WOG_MAX_STRING + 1 ? left : WOG_MAX_STRING + 1);
    return nul ? (const char *)table + idx : NULL;
}

/* ---- sniffing ---------------------------------------------------------------------------- */
static uint32_t ld32(const uint8_t *p, bool be) { return be ? ra_load_u32be(p) : ra_load_u32le(p); }

int wog_sniff_layout(const uint8_t *d, size_t n, bool movie)
{
    if (n >= 8 && memcmp(d, movie ? movie_magic : anim_magic, 8) == 0) return WOG_LAYOUT_BINUNI;
    for (int be = 0; be < 2; be++) {
        if (!movie) {
            if (n < 0x34) return -1;
            bool ok = true;
            for (int i = 0; i < 4; i++) ok = ok && ld32(d + 4 * i, be) <= 1;
            uint32_t nt = ld32(d + 0x10, be), nf = ld32(d + 0x14, be);
            if (!ok || nt > WOG_MAX_TRANSFORMS || nf == 0 || nf > (1u << 24)) continue;
            /* 64-bit: the pointers' high halves are 0, which in the 32-bit layout would make
             * the frame times (never null) null, and the frame times lie past the 0x50-byte header */
            if (!be && n >= 0x50 && ld32(d + 0x1C, false) == 0 && ld32(d + 0x24, false) == 0 &&
                ld32(d + 0x2C, false) == 0 && ld32(d + 0x20, false) >= 0x50)
                return WOG_LAYOUT_BINLTL64;
            if (ld32(d + 0x18, be) < 0x34 && ld32(d + 0x18, be) != 0) continue;
            if (ld32(d + 0x1C, be) < 0x34) continue; /* frame times: never null, never inside the header */
            return be ? WOG_LAYOUT_BINBIG : WOG_LAYOUT_BINLTL;
        } else {
            if (n < 0x14) return -1;
            uint32_t lenbits = ld32(d, be);
            float len;
            memcpy(&len, &lenbits, 4);
            uint32_t na = ld32(d + 4, be);
            if (!(len >= 0 && len < 1e7f) || na > (1u << 20)) continue;
            /* the actor table right after the header; a movie without actors has
             * null actor and animation tables and its string table there */
            if (!be && n >= 0x20 && ld32(d + 0x0C, false) == 0 && ld32(d + 0x14, false) == 0 &&
                ld32(d + 0x1C, false) == 0 &&
                (ld32(d + 0x08, false) == 0x20 || (na == 0 && ld32(d + 0x08, false) == 0 &&
                                                   ld32(d + 0x10, false) == 0 && ld32(d + 0x18, false) == 0x20)))
                return WOG_LAYOUT_BINLTL64;
            if (ld32(d + 0x08, be) == 0x14 ||
                (na == 0 && ld32(d + 0x08, be) == 0 && ld32(d + 0x0C, be) == 0 && ld32(d + 0x10, be) == 0x14))
                return be ? WOG_LAYOUT_BINBIG : WOG_LAYOUT_BINLTL;
            continue;
        }
    }
    return -1;
}

/* ---- reading ----------------------------------------------------------------------------- */
typedef struct rd {
    ra_cursor c; /* over the whole file; positioned for each field */
    wog_layout layout;
    bool be;
    unsigned psz;
    ra_arena *ar;
    const char *fmt;
    uint32_t *unaligned; /* where pointers not a multiple of 4 are counted, or NULL */
} rd;

/* [base, end): the bytes an animation's (or the movie's) pointers may reach */
typedef struct region {
    uint64_t base, end;
} region;

static bool seek(rd *r, uint64_t off, const char *field)
{
    if (!ra_cursor_ok(&r->c)) return false;
    if (off > r->c.size)
        return ra_cursor_fail(&r->c, RA_ERR_TRUNCATED, r->c.size, field, "truncated: the field lies past the end");
    r->c.pos = (size_t)off;
    return true;
}

/* The n bytes at off when they lie in the file (the common case; the cursor
 * then after them), else NULL with nothing recorded: the caller then reads
 * through the cursor, whose error names the field cut off. */
static inline const uint8_t *rd_block(rd *r, uint64_t off, uint64_t n)
{
    ra_cursor *c = &r->c;
    if (!(off <= c->size && c->size - off >= n && ra_cursor_ok(c))) return NULL;
    c->pos = (size_t)(off + n);
    return c->data + off;
}
/* a pointer field's raw value at p, in the layout's width and byte order */
static uint64_t ld_ptr(const rd *r, const uint8_t *p)
{
    return r->psz == 4 ? ld32(p, r->be) : (uint64_t)ld32(p + 4, r->be) << 32 | ld32(p, r->be);
}

static inline bool rd_u32(rd *r, uint64_t off, const char *field, uint32_t *v)
{
    const uint8_t *p = rd_block(r, off, 4);
    if (p) {
        *v = ld32(p, r->be);
        return true;
    }
    ra_cursor *c = &r->c;
    return seek(r, off, field) && (r->be ? ra_rd_u32be(c, v, field) : ra_rd_u32le(c, v, field));
}
static bool rd_i32(rd *r, uint64_t off, const char *field, int32_t *v)
{
    uint32_t u;
    if (!rd_u32(r, off, field, &u)) return false;
    memcpy(v, &u, 4);
    return true;
}
static bool rd_f32(rd *r, uint64_t off, const char *field, float *v)
{
    uint32_t u;
    if (!rd_u32(r, off, field, &u)) return false;
    memcpy(v, &u, 4);
    return true;
}
static bool rd_raw_ptr(rd *r, uint64_t off, const char *field, uint64_t *v)
{
    const uint8_t *p = rd_block(r, off, r->psz);
    if (p) {
        *v = ld_ptr(r, p);
        return true;
    }
    if (r->psz == 4) {
        uint32_t u;
        if (!rd_u32(r, off, field, &u)) return false;
        *v = u;
        return true;
    }
    uint32_t lo, hi;
    if (!seek(r, off, field)) return false;
    if (ra_cursor_left(&r->c) < 8)
        return ra_cursor_fail(&r->c, RA_ERR_TRUNCATED, off, field, "truncated: 8 bytes needed, %zu left",
                              ra_cursor_left(&r->c));
    if (!rd_u32(r, off, field, &lo) || !rd_u32(r, off + 4, field, &hi)) return false;
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

/* The pointer field at `at` (raw, as read), relative to g->base, naming
 * `count` items of `item` bytes.  Null is tested on the raw value, before the
 * base is added (docs/formats/world_of_goo.md §1).  *abs = 0 for null. */
static bool ptr_resolve(rd *r, const region *g, uint64_t at, uint64_t raw, uint64_t count, uint64_t item,
                        const char *field, uint64_t *abs)
{
    *abs = 0;
    if (raw == 0) return true;
    uint64_t span = g->end - g->base;
    /* 2D Boy's files align every structure to 4; the old <-> new converter
     * (docs/formats/world_of_goo.md) packs its string tables unpadded, so what
     * follows one may sit anywhere: read byte by byte, counted (a warning) */
    if (raw % 4 && r->unaligned) ++*r->unaligned;
    if (raw >= span || (item && count > (span - raw) / item))
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, field,
                              "offset %llu (%llu item(s) of %llu bytes) lies outside the %s (%llu bytes)",
                              (unsigned long long)raw, (unsigned long long)count, (unsigned long long)item,
                              g->base ? "embedded animation" : "file", (unsigned long long)span);
    *abs = g->base + raw;
    return true;
}
static bool rd_ptr(rd *r, const region *g, uint64_t at, uint64_t count, uint64_t item, const char *field, uint64_t *abs)
{
    uint64_t raw = 0;
    return rd_raw_ptr(r, at, field, &raw) && ptr_resolve(r, g, at, raw, count, item, field, abs);
}

/* offset -> index, open addressing: keyframes shared by several slots (and
 * animations shared by several actors) are read once, so aliasing tables
 * cannot multiply the memory */
typedef struct keymap {
    uint64_t *off;
    uint32_t *idx;
    size_t cap, count;
} keymap;

static size_t km_hash(uint64_t v, size_t cap) { return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1); }

/* The map is scratch (heap, freed by km_free once the animation is read),
 * so neither it nor its outgrown tables stay in the document's arena. */
static bool km_grow(keymap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *off = ra_malloc(cap * sizeof *off);
    uint32_t *idx = ra_malloc(cap * sizeof *idx);
    if (!off || !idx) {
        ra_free(off);
        ra_free(idx);
        return false;
    }
    for (size_t i = 0; i < cap; i++) off[i] = UINT64_MAX;
    for (size_t i = 0; i < m->cap; i++)
        if (m->off[i] != UINT64_MAX) {
            size_t h = km_hash(m->off[i], cap);
            while (off[h] != UINT64_MAX) h = (h + 1) & (cap - 1);
            off[h] = m->off[i];
            idx[h] = m->idx[i];
        }
    ra_free(m->off);
    ra_free(m->idx);
    m->off = off;
    m->idx = idx;
    m->cap = cap;
    return true;
}

static void km_free(keymap *m)
{
    ra_free(m->off);
    ra_free(m->idx);
    *m = (keymap){0};
}

/* The value slot of `off`, inserted (with *found = false) when missing; NULL
 * when out of memory. */
static uint32_t *km_slot(keymap *m, uint64_t off, bool *found)
{
    if (m->count * 2 >= m->cap && !km_grow(m)) return NULL;
    size_t h = km_hash(off, m->cap);
    while (m->off[h] != UINT64_MAX && m->off[h] != off) h = (h + 1) & (m->cap - 1);
    *found = m->off[h] == off;
    if (!*found) {
        m->off[h] = off;
        m->count++;
    }
    return &m->idx[h];
}

typedef struct anim_rd {
    rd *r;
    region g;
    wog_anim *a;
    keymap *km; /* keyframe offset -> index (scratch, the caller frees it): empty
                   while the keys read lie back to back, then every key read */
    uint32_t key_cap;
    uint64_t hdr;        /* absolute offset of the header's first int (after any magic) */
    uint64_t ptr_at[7];  /* absolute offsets of the header's pointer fields */
    uint64_t ptr_abs[7]; /* and where they point (0 = null) */
    uint64_t *xform_abs; /* where each transform's slot array lies (0 = null) */
    uint64_t *xform_at;  /* the offsets of those pointer fields */
} anim_rd;

/* The index of the key at abs among those read (back to back from the first:
 * no map needed), or -1 when abs is the next one's place; -2 otherwise. */
static int64_t packed_index(const wog_anim *a, uint64_t abs)
{
    if (!a->key_count) return -1;
    uint64_t base = a->key_offset[0], d = abs - base;
    if (abs < base || d % WOG_KEYFRAME_SIZE) return -2;
    if (d / WOG_KEYFRAME_SIZE < a->key_count) return (int64_t)(d / WOG_KEYFRAME_SIZE);
    return d / WOG_KEYFRAME_SIZE == a->key_count ? -1 : -2;
}

static bool read_key(anim_rd *ar, uint64_t abs, int32_t *index)
{
    rd *r = ar->r;
    wog_anim *a = ar->a;
    bool found;
    uint32_t *slot = NULL;
    bool mapped = ar->km->count != 0;
    int64_t at = mapped ? -2 : packed_index(a, abs);
    if (at >= 0) {
        *index = (int32_t)at;
        return true;
    }
    if (at == -2 && !mapped) {
        /* the first key out of that order: the map takes over, with the keys so far */
        for (uint32_t k = 0; k < a->key_count; k++) {
            uint32_t *v = km_slot(ar->km, a->key_offset[k], &found);
            if (!v) return ra_cursor_nomem(&r->c);
            *v = k;
        }
        mapped = true;
    }
    if (mapped) {
        slot = km_slot(ar->km, abs, &found);
        if (!slot) return ra_cursor_nomem(&r->c);
        if (found) {
            *index = (int32_t)*slot;
            return true;
        }
    }
    if (a->key_count == ar->key_cap) {
        /* heap scratch while reading; read_anim moves the keys to the arena */
        uint32_t cap = ar->key_cap ? ar->key_cap * 2 : 16;
        wog_keyframe *k = ra_realloc(a->keys, (size_t)cap * sizeof *k);
        if (k) a->keys = k;
        uint64_t *o = k ? ra_realloc(a->key_offset, (size_t)cap * sizeof *o) : NULL;
        if (o) a->key_offset = o;
        if (!k || !o) return ra_cursor_nomem(&r->c);
        ar->key_cap = cap;
    }
    wog_keyframe *k = &a->keys[a->key_count];
    const uint8_t *p = rd_block(r, abs, WOG_KEYFRAME_SIZE);
    if (p) {
        uint32_t u[8];
        for (int i = 0; i < 8; i++) u[i] = ld32(p + 4 * i, r->be);
        memcpy(&k->x, &u[0], 4), memcpy(&k->y, &u[1], 4), memcpy(&k->angle, &u[2], 4);
        memcpy(&k->alpha, &u[3], 4), memcpy(&k->color, &u[4], 4), memcpy(&k->next_frame_index, &u[5], 4);
        memcpy(&k->sound_str_idx, &u[6], 4), memcpy(&k->interpolation, &u[7], 4);
    } else if (!rd_f32(r, abs, "keyframe.x", &k->x) || !rd_f32(r, abs + 4, "keyframe.y", &k->y) ||
               !rd_f32(r, abs + 8, "keyframe.angle", &k->angle) || !rd_i32(r, abs + 12, "keyframe.alpha", &k->alpha) ||
               !rd_i32(r, abs + 16, "keyframe.color", &k->color) ||
               !rd_i32(r, abs + 20, "keyframe.nextFrameIndex", &k->next_frame_index) ||
               !rd_i32(r, abs + 24, "keyframe.soundStrIdx", &k->sound_str_idx) ||
               !rd_i32(r, abs + 28, "keyframe.interpolation", &k->interpolation))
        return false;
    a->key_offset[a->key_count] = abs;
    if (slot) *slot = a->key_count;
    *index = (int32_t)a->key_count++;
    return true;
}

/* A keyframe pointer array ptr[num_frames] at `abs` (already range-checked). */
static bool read_slots(anim_rd *ar, uint64_t abs, const char *field, wog_frames *f)
{
    rd *r = ar->r;
    uint32_t nf = ar->a->num_frames;
    f->slot = ra_arena_bulk_memdup(r->ar, NULL, nf, sizeof *f->slot); /* every slot is set below */
    if (!f->slot) return ra_cursor_nomem(&r->c);
    const uint8_t *p = rd_block(r, abs, (uint64_t)nf * r->psz); /* the whole array at once when it can */
    for (uint32_t j = 0; j < nf; j++) {
        uint64_t at = abs + (uint64_t)j * r->psz, raw, k;
        if (p) raw = ld_ptr(r, p + (size_t)j * r->psz);
        else if (!rd_raw_ptr(r, at, field, &raw)) return false;
        f->slot[j] = -1;
        if (raw && (!ptr_resolve(r, &ar->g, at, raw, 1, WOG_KEYFRAME_SIZE, field, &k) || !read_key(ar, k, &f->slot[j])))
            return false;
    }
    return true;
}

/* The checks each keyed slot of a channel must pass.  kind: 0..2 a transform
 * type, 3 alpha, 4 colour, 5 sound. */
static bool check_channel(anim_rd *ar, const wog_frames *f, int kind, const char *what)
{
    rd *r = ar->r;
    const wog_anim *a = ar->a;
    for (uint32_t j = 0; j < a->num_frames; j++) {
        if (f->slot[j] < 0) continue;
        const wog_keyframe *k = &a->keys[f->slot[j]];
        uint64_t at = a->key_offset[f->slot[j]];
        if (k->interpolation != WOG_INTERP_NONE && k->interpolation != WOG_INTERP_LINEAR)
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + 28, "keyframe.interpolation",
                                  "%s key of slot %u: interpolation %d is neither NONE (0) nor LINEAR (1)", what, j,
                                  k->interpolation);
        int32_t n = k->next_frame_index;
        if (n != -1) {
            if (n <= (int32_t)j && n >= 0)
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + 20, "keyframe.nextFrameIndex",
                                      "%s key of slot %u: nextFrameIndex %d goes back (the chain would loop)", what, j,
                                      n);
            if (n < 0 || (uint32_t)n >= a->num_frames)
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + 20, "keyframe.nextFrameIndex",
                                      "%s key of slot %u: nextFrameIndex %d is outside the %u frame slots", what, j, n,
                                      a->num_frames);
            if (f->slot[n] < 0)
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + 20, "keyframe.nextFrameIndex",
                                      "%s key of slot %u: nextFrameIndex %d names an empty slot", what, j, n);
        }
        if ((kind == WOG_XFORM_SCALE || kind == WOG_XFORM_TRANSLATE) && !(isfinite(k->x) && isfinite(k->y)))
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + (isfinite(k->x) ? 4 : 0),
                                  isfinite(k->x) ? "keyframe.y" : "keyframe.x",
                                  "%s key of slot %u: value is not a finite number", what, j);
        if (kind == WOG_XFORM_ROTATE && !isfinite(k->angle))
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at + 8, "keyframe.angle",
                                  "%s key of slot %u: angle is not a finite number", what, j);
        /* -1 is "not set" (docs/formats/world_of_goo.md): the Python exporter's hold key at a movie's end is such a sound key */
        if (kind == 5 && k->sound_str_idx != -1 && !wog_string(a->strings, a->strings_size, k->sound_str_idx))
            return ra_cursor_fail(
                &r->c, RA_ERR_BAD_VALUE, at + 24, "keyframe.soundStrIdx",
                "%s key of slot %u: sound string %d is outside the string table (%u bytes) or longer than %d bytes",
                what, j, k->sound_str_idx, a->strings_size, WOG_MAX_STRING);
    }
    return true;
}

static void consider(uint64_t *best, uint64_t start, uint64_t cand)
{
    if (cand > start && cand < *best) *best = cand;
}

static const char *const ptr_field[7] = {"mTransformTypes", "mFrameTimes",  "mXformFrames", "mAlphaFrames",
                                         "mColorFrames",    "mSoundFrames", "pStringTable"};

static bool read_anim_in(rd *r, region g, wog_anim *a, keymap *km)
{
    memset(a, 0, sizeof *a);
    a->offset = g.base;
    r->unaligned = &a->unaligned;
    anim_rd ar = {.r = r, .g = g, .a = a, .km = km};
    uint64_t h = g.base;
    if (r->layout == WOG_LAYOUT_BINUNI) {
        char m[8];
        if (!seek(r, h, "magic") || !ra_rd_bytes(&r->c, m, 8, "magic")) return false;
        if (memcmp(m, anim_magic, 8) != 0)
            return ra_cursor_fail(&r->c, RA_ERR_BAD_MAGIC, h, "magic",
                                  "an animation of the 1.5 layout starts with BINUNIAN");
        h += 8;
    }
    ar.hdr = h;
    int32_t v[6];
    static const char *const names[6] = {"mHasColor",     "mHasAlpha",      "mHasSound",
                                         "mHasTransform", "mNumTransforms", "mNumFrames"};
    for (uint32_t i = 0; i < 6; i++)
        if (!rd_i32(r, h + 4u * i, names[i], &v[i])) return false;
    for (int i = 0; i < 7; i++) {
        ar.ptr_at[i] = h + 24 + (uint64_t)i * r->psz;
        uint64_t raw = 0;
        if (!rd_raw_ptr(r, ar.ptr_at[i], ptr_field[i], &raw)) return false; /* truncation first */
    }
    for (uint32_t i = 0; i < 4; i++)
        if (v[i] != 0 && v[i] != 1)
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, h + 4u * i, names[i], "flag %d is neither 0 nor 1", v[i]);
    a->has_color = v[0], a->has_alpha = v[1], a->has_sound = v[2], a->has_transform = v[3];
    if (v[4] < 0 || v[4] > WOG_MAX_TRANSFORMS)
        return ra_cursor_fail(&r->c, v[4] < 0 ? RA_ERR_BAD_VALUE : RA_ERR_LIMIT, h + 16, names[4],
                              "%d transforms (0..%d accepted)", v[4], WOG_MAX_TRANSFORMS);
    if (v[5] < 1)
        return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, h + 20, names[5], "%d frame slots (at least 1 needed)", v[5]);
    a->num_transforms = (uint32_t)v[4];
    a->num_frames = (uint32_t)v[5];
    uint32_t nt = a->num_transforms, nf = a->num_frames;
    bool xf = a->has_transform && nt > 0;

    /* resolve the seven pointers (counts checked against the bytes they reach) */
    const uint64_t cnt[7] = {nt, nf, xf ? nt : 0, a->has_alpha ? nf : 0, a->has_color ? nf : 0, a->has_sound ? nf : 0,
                             1};
    const uint64_t item[7] = {4, 4, r->psz, r->psz, r->psz, r->psz, 1};
    for (int i = 0; i < 7; i++) {
        if (!rd_ptr(r, &g, ar.ptr_at[i], cnt[i], item[i], ptr_field[i], &ar.ptr_abs[i])) return false;
        if (!ar.ptr_abs[i]) a->null_ptrs |= (uint8_t)(1u << i);
    }
    const bool need[7] = {xf, true, xf, a->has_alpha != 0, a->has_color != 0, a->has_sound != 0, false};
    for (int i = 0; i < 7; i++)
        if (need[i] && !ar.ptr_abs[i])
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, ar.ptr_at[i], ptr_field[i],
                                  "null, but the header says it is used");

    /* transform types and frame times */
    if (ar.ptr_abs[WOG_PTR_TYPES]) {
        if (!(a->transform_types = ra_arena_array(r->ar, nt, sizeof *a->transform_types)))
            return ra_cursor_nomem(&r->c);
        for (uint32_t i = 0; i < nt; i++) {
            uint64_t at = ar.ptr_abs[WOG_PTR_TYPES] + 4ull * i;
            if (!rd_i32(r, at, "mTransformTypes", &a->transform_types[i])) return false;
            if (xf && (a->transform_types[i] < 0 || a->transform_types[i] > 2))
                return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "mTransformTypes",
                                      "transform %u has type %d (SCALE 0, ROTATE 1, TRANSLATE 2)", i,
                                      a->transform_types[i]);
        }
    }
    if (!(a->frame_times = ra_arena_bulk_memdup(r->ar, NULL, nf, sizeof *a->frame_times)))
        return ra_cursor_nomem(&r->c);
    for (uint32_t j = 0; j < nf; j++) {
        uint64_t at = ar.ptr_abs[WOG_PTR_TIMES] + 4ull * j;
        float t;
        if (!rd_f32(r, at, "mFrameTimes", &t)) return false;
        if (!(isfinite(t) && t >= 0))
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "mFrameTimes",
                                  "frame %u: time %g is not a finite time >= 0", j, (double)t);
        if (j && t < a->frame_times[j - 1])
            return ra_cursor_fail(&r->c, RA_ERR_BAD_VALUE, at, "mFrameTimes",
                                  "frame %u: time %.9g is before frame %u's %.9g", j, (double)t, j - 1,
                                  (double)a->frame_times[j - 1]);
        a->frame_times[j] = t;
    }

    /* the keyframe pointer arrays */
    if (xf) {
        a->xform = ra_arena_array(r->ar, nt, sizeof *a->xform);
        ar.xform_abs = ra_arena_array(r->ar, nt, sizeof *ar.xform_abs);
        if (!a->xform || !ar.xform_abs) return ra_cursor_nomem(&r->c);
        for (uint32_t i = 0; i < nt; i++) {
            uint64_t at = ar.ptr_abs[WOG_PTR_XFORM] + (uint64_t)i * r->psz;
            if (!rd_ptr(r, &g, at, nf, r->psz, "mXformFrames[i]", &ar.xform_abs[i])) return false;
            a->xform[i].present = ar.xform_abs[i] != 0;
            for (uint32_t p = 0; p < i && ar.xform_abs[i]; p++)
                if (ar.xform_abs[p] == ar.xform_abs[i]) a->xform[i].slot = a->xform[p].slot; /* one table, read once */
            if (ar.xform_abs[i] && !a->xform[i].slot &&
                !read_slots(&ar, ar.xform_abs[i], "mXformFrames[i][frame]", &a->xform[i]))
                return false;
        }
    }
    wog_frames *chan[3] = {&a->alpha, &a->color, &a->sound};
    const int32_t flag[3] = {a->has_alpha, a->has_color, a->has_sound};
    static const char *const slot_field[3] = {"mAlphaFrames[frame]", "mColorFrames[frame]", "mSoundFrames[frame]"};
    for (int c = 0; c < 3; c++) {
        chan[c]->present = ar.ptr_abs[WOG_PTR_ALPHA + c] != 0;
        if (flag[c] && !read_slots(&ar, ar.ptr_abs[WOG_PTR_ALPHA + c], slot_field[c], chan[c])) return false;
    }

    /* the string table runs to the next structure of the animation (or its end) */
    uint64_t s = ar.ptr_abs[WOG_PTR_STRINGS];
    if (s) {
        uint64_t best = g.end;
        for (int i = 0; i < 6; i++) consider(&best, s, ar.ptr_abs[i]);
        for (uint32_t i = 0; xf && i < nt; i++) consider(&best, s, ar.xform_abs[i]);
        for (uint32_t k = 0; k < a->key_count; k++) consider(&best, s, a->key_offset[k]);
        if (best - s > UINT32_MAX)
            return ra_cursor_fail(&r->c, RA_ERR_LIMIT, ar.ptr_at[WOG_PTR_STRINGS], "pStringTable",
                                  "string table over 4 GiB");
        a->strings_size = (uint32_t)(best - s);
        if (!(a->strings = ra_arena_alloc(r->ar, a->strings_size + 1u))) return ra_cursor_nomem(&r->c);
        if (!seek(r, s, "pStringTable") || !ra_rd_bytes(&r->c, a->strings, a->strings_size, "pStringTable"))
            return false;
    }

    /* per-key checks, channel by channel */
    static const char *const xname[3] = {"SCALE", "ROTATE", "TRANSLATE"};
    for (uint32_t i = 0; xf && i < nt; i++)
        if (a->xform[i].slot && !check_channel(&ar, &a->xform[i], a->transform_types[i], xname[a->transform_types[i]]))
            return false;
    static const char *const cname[3] = {"alpha", "colour", "sound"};
    for (int c = 0; c < 3; c++)
        if (flag[c] && !check_channel(&ar, chan[c], 3 + c, cname[c])) return false;
    return true;
}

uint64_t wog_key_offset(const wog_anim *a, uint32_t k)
{
    return a->key_offset ? a->key_offset[k] : a->key_base + (uint64_t)k * WOG_KEYFRAME_SIZE;
}

static bool read_anim(rd *r, region g, wog_anim *a)
{
    keymap km = {0};
    bool ok = read_anim_in(r, g, a, &km);
    /* the map stayed empty: the keys lie back to back (read_key) */
    bool back_to_back = km.count == 0;
    km_free(&km);
    /* the keys were read into heap scratch: the arena gets them at their count */
    wog_keyframe *k = ok ? ra_arena_bulk_memdup(r->ar, a->keys, a->key_count, sizeof *k) : NULL;
    /* keys back to back keep their first offset only (a fifth of the model) */
    bool packed = k && a->key_count && back_to_back;
    uint64_t *o = k && !packed ? ra_arena_bulk_memdup(r->ar, a->key_offset, a->key_count, sizeof *o) : NULL;
    bool kept = packed || o;
    if (ok && !kept) ok = ra_cursor_nomem(&r->c);
    a->key_base = packed ? a->key_offset[0] : 0;
    ra_free(a->keys);
    ra_free(a->key_offset);
    a->keys = kept ? k : NULL;
    a->key_offset = o;
    if (!kept) a->key_count = 0;
    return ok;
}

static rd rd_init(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, const char *fmt, ra_error *err)
{
    rd r;
    memset(&r, 0, sizeof r);
    ra_cursor_init(&r.c, data, size, fmt, err);
    r.layout = layout;
    r.be = is_big(layout);
    r.psz = ptr_size(layout);
    r.ar = arena;
    r.fmt = fmt;
    return r;
}

ra_status wog_anim_read(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, wog_anim *out,
                        ra_error *err)
{
    if ((unsigned)layout >= WOG_LAYOUT_COUNT)
        return ra_fail(err, RA_ERR_USAGE, "wog_anim", RA_NO_OFFSET, "layout", "unknown layout");
    rd r = rd_init(data, size, layout, arena, "wog_anim", err);
    region g = {0, size};
    return read_anim(&r, g, out) ? RA_OK : err->code;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* the first structure start after `start` in the sorted list, else the end */
static uint64_t next_start(const uint64_t *s, size_t n, uint64_t start, uint64_t end)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid] <= start) lo = mid + 1;
        else hi = mid;
    }
    return lo < n ? s[lo] : end;
}

/* The animations of a movie, read as jobs (wog_movie_read_run). */
typedef struct movie_jobs {
    const uint8_t *data;
    size_t size;
    wog_layout layout;
    wog_movie *out;
    uint32_t *actor; /* job -> the actor whose animation it reads */
    region *g;       /* and the bytes its pointers may reach */
    size_t n;
} movie_jobs;

static ra_status movie_job(void *ctx, size_t j, ra_arena *arena, ra_error *err)
{
    const movie_jobs *mj = ctx;
    rd r = rd_init(mj->data, mj->size, mj->layout, arena, "wog_movie", err);
    return read_anim(&r, mj->g[j], &mj->out->anims[mj->actor[j]]) ? RA_OK : err->code;
}

ra_status wog_movie_read_run(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, wog_movie *out,
                             ra_error *err, ra_read_runner run, void *run_ctx)
{
    if ((unsigned)layout >= WOG_LAYOUT_COUNT)
        return ra_fail(err, RA_ERR_USAGE, "wog_movie", RA_NO_OFFSET, "layout", "unknown layout");
    if (!run) { /* in order on this thread */
        run = ra_read_run_serial;
        run_ctx = arena;
    }
    rd r = rd_init(data, size, layout, arena, "wog_movie", err);
    rd *rp = &r;
    memset(out, 0, sizeof *out);
    r.unaligned = &out->unaligned;
    region file = {0, size};
    uint64_t h = 0;
    if (layout == WOG_LAYOUT_BINUNI) {
        char m[8];
        if (!seek(rp, 0, "magic") || !ra_rd_bytes(&r.c, m, 8, "magic")) return err->code;
        if (memcmp(m, movie_magic, 8) != 0)
            return ra_cursor_fail(&rp->c, RA_ERR_BAD_MAGIC, 0, "magic",
                                  "a movie of the 1.5 layout starts with BINUNIMO"),
                   err->code;
        h = 8;
    }
    int32_t na;
    uint64_t at[3], abs[3];
    static const char *const pf[3] = {"pActors", "ppAnims", "pStringTable"};
    if (!rd_f32(rp, h, "length", &out->length) || !rd_i32(rp, h + 4, "numActors", &na)) return err->code;
    for (int i = 0; i < 3; i++) {
        uint64_t raw = 0;
        at[i] = h + 8 + (uint64_t)i * r.psz;
        if (!rd_raw_ptr(rp, at[i], pf[i], &raw)) return err->code;
    }
    if (!(isfinite(out->length) && out->length >= 0))
        return ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, h, "length", "movie length %g is not a finite time >= 0",
                              (double)out->length),
               err->code;
    if (na < 0) return ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, h + 4, "numActors", "%d actors", na), err->code;
    uint32_t n = out->num_actors = (uint32_t)na;
    const uint64_t cnt[3] = {n, n, 1}, item[3] = {32, r.psz, 1};
    for (int i = 0; i < 3; i++) {
        if (!rd_ptr(rp, &file, at[i], cnt[i], item[i], pf[i], &abs[i])) return err->code;
        if (!abs[i] && cnt[i] && i < 2)
            return ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, at[i], pf[i], "null, but the movie has %u actors", n),
                   err->code;
    }
    out->actors = ra_arena_array(arena, n, sizeof *out->actors);
    out->anims = ra_arena_array(arena, n, sizeof *out->anims);
    uint64_t *starts = ra_arena_array(arena, (size_t)n + 4, sizeof *starts);
    uint64_t *anim_at = ra_arena_array(arena, n, sizeof *anim_at);
    if (!out->actors || !out->anims || !starts || !anim_at) return ra_cursor_nomem(&rp->c), err->code;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t b = abs[0] + 32ull * i;
        wog_actor *ac = &out->actors[i];
        if (!rd_i32(rp, b, "actor.type", &ac->type) || !rd_i32(rp, b + 4, "actor.imageStrIdx", &ac->image_idx) ||
            !rd_i32(rp, b + 8, "actor.labelTextStrIdx", &ac->label_idx) ||
            !rd_i32(rp, b + 12, "actor.fontStrIdx", &ac->font_idx) ||
            !rd_f32(rp, b + 16, "actor.labelMaxWidth", &ac->label_max_width) ||
            !rd_f32(rp, b + 20, "actor.labelWrapWidth", &ac->label_wrap_width) ||
            !rd_i32(rp, b + 24, "actor.labelJustification", &ac->justification) ||
            !rd_f32(rp, b + 28, "actor.depth", &ac->depth))
            return err->code;
        if (ac->type != WOG_ACTOR_IMAGE && ac->type != WOG_ACTOR_TEXT)
            return ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, b, "actor.type",
                                  "actor %u: type %d is neither image (0) nor text (1)", i, ac->type),
                   err->code;
        if (!isfinite(ac->depth))
            return ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, b + 28, "actor.depth", "actor %u: depth is not finite", i),
                   err->code;
        anim_at[i] = abs[1] + (uint64_t)i * r.psz;
        /* an animation needs at least its header inside the file */
        if (!rd_ptr(rp, &file, anim_at[i], 1, anim_header_size(layout), "ppAnims[i]", &starts[i])) return err->code;
        if (!starts[i])
            return ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, anim_at[i], "ppAnims[i]", "actor %u has no animation", i),
                   err->code;
    }
    /* every animation ends where the next movie-level structure starts */
    size_t ns = n;
    starts[ns++] = 0;
    for (int i = 0; i < 3; i++)
        if (abs[i]) starts[ns++] = abs[i];
    uint64_t *sorted = ra_arena_array(arena, ns, sizeof *sorted);
    if (!sorted) return ra_cursor_nomem(&rp->c), err->code;
    memcpy(sorted, starts, ns * sizeof *sorted);
    qsort(sorted, ns, sizeof *sorted, cmp_u64);
    if (abs[2]) {
        uint64_t e = next_start(sorted, ns, abs[2], size);
        if (e - abs[2] > UINT32_MAX)
            return ra_cursor_fail(&rp->c, RA_ERR_LIMIT, at[2], "pStringTable", "string table over 4 GiB"), err->code;
        out->strings_size = (uint32_t)(e - abs[2]);
        if (!(out->strings = ra_arena_alloc(arena, out->strings_size + 1u))) return ra_cursor_nomem(&rp->c), err->code;
        if (!seek(rp, abs[2], "pStringTable") || !ra_rd_bytes(&r.c, out->strings, out->strings_size, "pStringTable"))
            return err->code;
    }
    for (uint32_t i = 0; i < n; i++) {
        const wog_actor *ac = &out->actors[i];
        const int32_t idx[3] = {ac->image_idx, ac->label_idx, ac->font_idx};
        static const char *const sf[3] = {"actor.imageStrIdx", "actor.labelTextStrIdx", "actor.fontStrIdx"};
        for (uint32_t k = 0; k < 3; k++)
            if (!wog_string(out->strings, out->strings_size, idx[k]) && !(idx[k] == 0 && !out->strings))
                return ra_cursor_fail(
                           &rp->c, RA_ERR_BAD_VALUE, abs[0] + 32ull * i + 4 + 4u * k, sf[k],
                           "actor %u: string %d is outside the string table (%u bytes) or longer than %d bytes", i,
                           idx[k], out->strings_size, WOG_MAX_STRING),
                       err->code;
    }
    /* the animations to read: the first actor playing each (actors sharing
     * one share its model), up to the first whose region is too small */
    keymap shared = {0}; /* animation start -> the first actor playing it */
    movie_jobs mj = {.data = data, .size = size, .layout = layout, .out = out};
    mj.actor = ra_malloc(((size_t)n + 1) * sizeof *mj.actor);
    mj.g = ra_malloc(((size_t)n + 1) * sizeof *mj.g);
    uint32_t *first_of = ra_malloc(((size_t)n + 1) * sizeof *first_of);
    ra_status late = RA_OK;
    ra_error late_err;
    ra_error_clear(&late_err);
    ra_cursor_init(&r.c, data, size, "wog_movie", &late_err); /* the head is read: its error is the late one */
    bool ok = mj.actor && mj.g && first_of;
    double work = 0;
    uint32_t planned = 0; /* actors whose animation is read or shared */
    for (; ok && planned < n; planned++) {
        uint32_t i = planned;
        region g = {starts[i], next_start(sorted, ns, starts[i], size)};
        if (g.end - g.base < anim_header_size(layout)) {
            ra_cursor_fail(&rp->c, RA_ERR_BAD_VALUE, anim_at[i], "ppAnims[i]",
                           "actor %u's animation at %llu has %llu bytes before the next structure, less than "
                           "its %u-byte header",
                           i, (unsigned long long)g.base, (unsigned long long)(g.end - g.base),
                           anim_header_size(layout));
            late = late_err.code;
            break;
        }
        bool found;
        uint32_t *first = km_slot(&shared, starts[i], &found);
        if (!first) ok = false;
        else if (found) first_of[i] = *first;
        else {
            *first = first_of[i] = i;
            mj.actor[mj.n] = i;
            mj.g[mj.n++] = g;
            work += (double)(g.end - g.base) / WOG_KEYFRAME_SIZE;
        }
    }
    km_free(&shared);
    ra_status st =
        ok ? run(run_ctx, mj.n, work, movie_job, &mj, late, &late_err, err) : ra_fail_nomem(err, "wog_movie");
    for (uint32_t i = 0; st == RA_OK && i < planned; i++)
        if (first_of[i] != i) out->anims[i] = out->anims[first_of[i]];
    ra_free(mj.actor);
    ra_free(mj.g);
    ra_free(first_of);
    return st;
}

ra_status wog_movie_read(const uint8_t *data, size_t size, wog_layout layout, ra_arena *arena, wog_movie *out,
                         ra_error *err)
{
    return wog_movie_read_run(data, size, layout, arena, out, err, NULL, NULL);
}

/* ---- writing ----------------------------------------------------------------------------- */
typedef struct wr {
    ra_writer *w;
    bool be;
    unsigned psz;
} wr;

static void w_u32(wr *o, uint32_t v)
{
    if (o->be) ra_wr_u32be(o->w, v);
    else ra_wr_u32le(o->w, v);
}
static void w_i32(wr *o, int32_t v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    w_u32(o, u);
}
static void w_f32(wr *o, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    w_u32(o, u);
}
static void w_ptr(wr *o, uint64_t v)
{
    if (o->psz == 4) {
        w_u32(o, (uint32_t)v);
    } else {
        w_u32(o, (uint32_t)v);
        w_u32(o, (uint32_t)(v >> 32));
    }
}
static void w_pad(wr *o, uint64_t base, unsigned align)
{
    while ((o->w->size - base) % align) ra_wr_u8(o->w, 0);
}
/* overwrite a pointer already written at byte `pos` */
static void patch_ptr(wr *o, size_t pos, uint64_t v)
{
    if (o->w->failed || pos + o->psz > o->w->size) return;
    uint8_t *p = o->w->data + pos;
    for (unsigned i = 0; i < o->psz; i++) {
        unsigned sh = 8 * (o->be ? o->psz - 1 - i : i);
        p[i] = (uint8_t)(sh < 64 ? v >> sh : 0);
    }
}
static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

static bool slot_keyed(const wog_frames *f, uint32_t j) { return f->slot && f->slot[j] >= 0; }

static void write_anim(wr *o, const wog_anim *a, wog_layout layout)
{
    const uint64_t base = o->w->size;
    const uint32_t nt = a->num_transforms, nf = a->num_frames;
    const bool wide = o->psz == 8;
    const bool xform_written = !(a->null_ptrs & (1u << WOG_PTR_XFORM));
    const wog_frames *chan[3] = {&a->alpha, &a->color, &a->sound};

    /* offsets, relative to the animation's start */
    uint64_t off = anim_header_size(layout), p[7] = {0};
    if (!(a->null_ptrs & (1u << WOG_PTR_TYPES))) p[WOG_PTR_TYPES] = off, off += 4ull * nt;
    if (!(a->null_ptrs & (1u << WOG_PTR_TIMES))) p[WOG_PTR_TIMES] = off, off += 4ull * nf;
    if (wide) off = (off + 7) & ~(uint64_t)7;
    if (xform_written) p[WOG_PTR_XFORM] = off, off += (uint64_t)o->psz * nt;
    uint64_t sub0 = off;
    for (uint32_t i = 0; xform_written && a->xform && i < nt; i++)
        if (a->xform[i].present) off += (uint64_t)o->psz * nf;
    for (int c = 0; c < 3; c++)
        if (chan[c]->present) p[WOG_PTR_ALPHA + c] = off, off += (uint64_t)o->psz * nf;
    uint32_t table = 0;
    if (!(a->null_ptrs & (1u << WOG_PTR_STRINGS))) {
        table = a->strings_size < 4 ? 4 : align_up(a->strings_size, 4);
        p[WOG_PTR_STRINGS] = off, off += table;
    }
    uint64_t key = off; /* next keyframe */

    if (layout == WOG_LAYOUT_BINUNI) ra_wr_bytes(o->w, anim_magic, 8);
    w_i32(o, a->has_color), w_i32(o, a->has_alpha), w_i32(o, a->has_sound), w_i32(o, a->has_transform);
    w_i32(o, (int32_t)nt), w_i32(o, (int32_t)nf);
    for (int i = 0; i < 7; i++) w_ptr(o, p[i]);
    if (p[WOG_PTR_TYPES])
        for (uint32_t i = 0; i < nt; i++) w_i32(o, a->transform_types ? a->transform_types[i] : 0);
    if (p[WOG_PTR_TIMES])
        for (uint32_t j = 0; j < nf; j++) w_f32(o, a->frame_times[j]);
    if (wide) w_pad(o, base, 8);
    /* slot arrays: keyframe offsets assigned in the canonical keyframe order */
    uint64_t sub = sub0;
    for (uint32_t i = 0; xform_written && i < nt; i++) {
        bool present = a->xform && a->xform[i].present;
        w_ptr(o, present ? sub : 0);
        if (present) sub += (uint64_t)o->psz * nf;
    }
    for (uint32_t i = 0; xform_written && a->xform && i < nt; i++)
        if (a->xform[i].present)
            for (uint32_t j = 0; j < nf; j++) w_ptr(o, slot_keyed(&a->xform[i], j) ? (key += 32) - 32 : 0);
    for (int c = 0; c < 3; c++)
        if (chan[c]->present)
            for (uint32_t j = 0; j < nf; j++) w_ptr(o, slot_keyed(chan[c], j) ? (key += 32) - 32 : 0);
    if (table) {
        ra_wr_bytes(o->w, a->strings, a->strings_size);
        for (uint32_t k = a->strings_size; k < table; k++) ra_wr_u8(o->w, 0);
    }
    /* keyframes, in the same order */
    for (uint32_t i = 0; i < nt + 3; i++) {
        const wog_frames *f = i < nt ? (xform_written && a->xform && a->xform[i].present ? &a->xform[i] : NULL)
                                     : (chan[i - nt]->present ? chan[i - nt] : NULL);
        for (uint32_t j = 0; f && j < nf; j++) {
            if (!slot_keyed(f, j)) continue;
            const wog_keyframe *k = &a->keys[f->slot[j]];
            w_f32(o, k->x), w_f32(o, k->y), w_f32(o, k->angle);
            w_i32(o, k->alpha), w_i32(o, k->color), w_i32(o, k->next_frame_index), w_i32(o, k->sound_str_idx);
            w_i32(o, k->interpolation);
        }
    }
}

static ra_status finish(ra_writer *w, ra_error *err, const char *fmt)
{
    return w->failed ? ra_fail(err, RA_ERR_NO_MEMORY, fmt, RA_NO_OFFSET, "", "out of memory") : RA_OK;
}

ra_status wog_anim_write(const wog_anim *a, wog_layout layout, ra_writer *w, ra_error *err)
{
    if ((unsigned)layout >= WOG_LAYOUT_COUNT)
        return ra_fail(err, RA_ERR_USAGE, "wog_anim", RA_NO_OFFSET, "layout", "unknown layout");
    wr o = {w, is_big(layout), ptr_size(layout)};
    write_anim(&o, a, layout);
    return finish(w, err, "wog_anim");
}

ra_status wog_movie_write(const wog_movie *m, wog_layout layout, ra_writer *w, ra_error *err)
{
    if ((unsigned)layout >= WOG_LAYOUT_COUNT)
        return ra_fail(err, RA_ERR_USAGE, "wog_movie", RA_NO_OFFSET, "layout", "unknown layout");
    wr o = {w, is_big(layout), ptr_size(layout)};
    const uint64_t base = w->size;
    const uint32_t n = m->num_actors;
    uint64_t actors = movie_header_size(layout), anims = actors + 32ull * n, strings = anims + (uint64_t)o.psz * n;
    if (layout == WOG_LAYOUT_BINUNI) ra_wr_bytes(w, movie_magic, 8);
    w_f32(&o, m->length);
    w_i32(&o, (int32_t)n);
    w_ptr(&o, n ? actors : 0);
    w_ptr(&o, n ? anims : 0);
    w_ptr(&o, m->strings ? strings : 0);
    for (uint32_t i = 0; i < n; i++) {
        const wog_actor *a = &m->actors[i];
        w_i32(&o, a->type), w_i32(&o, a->image_idx), w_i32(&o, a->label_idx), w_i32(&o, a->font_idx);
        w_f32(&o, a->label_max_width), w_f32(&o, a->label_wrap_width), w_i32(&o, a->justification);
        w_f32(&o, a->depth);
    }
    size_t table_at = w->size;
    for (uint32_t i = 0; i < n; i++) w_ptr(&o, 0); /* patched below */
    if (m->strings) {
        ra_wr_bytes(w, m->strings, m->strings_size);
        for (uint32_t k = m->strings_size; k < (m->strings_size < 4 ? 4 : align_up(m->strings_size, 4)); k++)
            ra_wr_u8(w, 0);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (o.psz == 8) w_pad(&o, base, 8);
        patch_ptr(&o, table_at + (size_t)i * o.psz, w->size - base);
        write_anim(&o, &m->anims[i], layout);
    }
    return finish(w, err, "wog_movie");
}
