/* LEGO Island Interleaf .SI archives ("RIFF" "OMNI", little-endian):
 * the chunk walk, the MxOb action tree, the joining of split data chunks,
 * and the writer.  docs/formats/lego_island.md §7.
 *
 * Framing: every chunk is fourcc, u32 size, the body and one pad byte when
 * the size is odd.  The file is cut into buffers of MxHd's bufferSize; a
 * chunk never starts where fewer than 8 bytes of its buffer are left (the
 * reader skips to the next boundary, the writer fills it with "pad ").
 * Two passes: the first collects the objects (MxOb, with the children of
 * composite actions), the second joins the data chunks (MxCh) of the
 * animation objects: a chunk flagged SPLIT carries the total size of its
 * logical chunk, and the pieces that follow it are appended up to that
 * total.  An animation's .ani is its first logical data chunk (the game's
 * LegoAnimPresenter reads that one alone). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/ra_archive_internal.h"

#define FMT "lego_si"
#define FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define CC_RIFF FOURCC('R', 'I', 'F', 'F')
#define CC_OMNI FOURCC('O', 'M', 'N', 'I')
#define CC_MXHD FOURCC('M', 'x', 'H', 'd')
#define CC_MXOF FOURCC('M', 'x', 'O', 'f')
#define CC_LIST FOURCC('L', 'I', 'S', 'T')
#define CC_MXST FOURCC('M', 'x', 'S', 't')
#define CC_MXOB FOURCC('M', 'x', 'O', 'b')
#define CC_MXDA FOURCC('M', 'x', 'D', 'a')
#define CC_MXCH FOURCC('M', 'x', 'C', 'h')
#define CC_PAD FOURCC('p', 'a', 'd', ' ')
#define FT_OBJ FOURCC(' ', 'O', 'B', 'J')
#define FT_WAV FOURCC(' ', 'W', 'A', 'V')
#define SI_V22 0x00020002u
#define SI_V21 0x00010002u
#define CH_END 0x02
#define CH_SPLIT 0x10
#define MAX_DEPTH 64 /* chunk and action nesting */

/* object types (MxDSObject) */
enum {
    T_MULTI = 5,
    T_SERIAL = 6,
    T_PARALLEL = 7,
    T_SELECT = 9,
    T_OBJECT_ACTION = 11
};

typedef struct si_obj {
    uint32_t id;     /* first: ra_sorted_ids reads it */
    uint64_t offset; /* of its MxOb chunk */
    uint16_t type;
    char *presenter, *name, *extra, *media_path;
    uint32_t flags, start, file_type;
    int32_t duration, loops;
    ra_vec3 loc, dir, up;
    const char *parent; /* name of the composite holding it, "" at top level */
    /* data (pass 2, for OBJ objects) */
    bool have, done;
    bool broken; /* its split pieces were interrupted by another chunk of its id */
    uint32_t total, got, chunks;
    uint8_t *buf;         /* joined pieces, or NULL when one piece is the whole */
    const uint8_t *piece; /* that piece, in the archive's bytes */
    uint64_t first_chunk; /* offset of its first data chunk */
    uint64_t stored;      /* bytes of its data chunks, headers included */
} si_obj;

typedef struct si_walk {
    ra_archive *ar;
    ra_error *err;
    int pass;
    uint32_t version, buffer_size;
    si_obj *objs;
    size_t n, cap;
    ra_id_slot *sorted; /* the objects by id (pass 2) */
    size_t mxch, unknown;
} si_walk;

static bool si_detect(const uint8_t *data, size_t size)
{
    return size >= 12 && ra_load_u32le(data) == CC_RIFF && ra_load_u32le(data + 8) == CC_OMNI;
}

static bool is_composite(uint16_t t) { return t == T_MULTI || t == T_SERIAL || t == T_PARALLEL || t == T_SELECT; }
/* the media actions: action fields, then the media source fields */
static bool is_media(uint16_t t) { return t == 2 || t == 3 || t == 4 || t == 8 || t == 10 || t == 11; }

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* ---- pass 1: the action tree ---------------------------------------------------------------- */
static ra_status read_object(si_walk *w, uint64_t at, uint64_t end, const char *parent, int depth);

static ra_status read_children(si_walk *w, ra_cursor *c, uint16_t type, const char *parent, int depth)
{
    /* 'LIST' size 'MxCh' [u32 in 2.1] then: select: cstr variable, u32 n, n choices; else u32 n */
    uint32_t list = 0, lsize = 0, ltype = 0, n = 0, skip = 0;
    ra_rd_u32le(c, &list, "children.list");
    ra_rd_u32le(c, &lsize, "children.size");
    ra_rd_u32le(c, &ltype, "children.type");
    if (!ra_cursor_ok(c)) return w->err->code;
    if (list != CC_LIST || ltype != CC_MXCH)
        return ra_fail(w->err, RA_ERR_BAD_VALUE, FMT, c->pos - 12, "children",
                       "composite action without its LIST MxCh of children");
    if (w->version == SI_V21) ra_rd_u32le(c, &skip, "children.v21");
    if (type == T_SELECT) {
        char *var = NULL;
        ra_rd_cstr(c, w->ar->arena, &var, "select.variable");
        ra_rd_u32le(c, &n, "select.count");
        if (!ra_cursor_check_count(c, n, 1, "select.count")) return w->err->code;
        for (uint32_t i = 0; i < n; i++) {
            char *choice;
            if (!ra_rd_cstr(c, w->ar->arena, &choice, "select.choice")) return w->err->code;
        }
    } else {
        ra_rd_u32le(c, &n, "children.count");
    }
    if (!ra_cursor_check_count(c, n, 8, "children.count")) return w->err->code;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cc = 0, sz = 0;
        size_t at = c->pos;
        ra_rd_u32le(c, &cc, "child.fourcc");
        ra_rd_u32le(c, &sz, "child.size");
        if (!ra_cursor_ok(c)) return w->err->code;
        if (cc != CC_MXOB)
            return ra_fail(w->err, RA_ERR_BAD_VALUE, FMT, at, "child", "child %u of a composite is not an MxOb chunk",
                           i);
        if (sz > ra_cursor_left(c))
            return ra_fail(w->err, RA_ERR_TRUNCATED, FMT, at, "child.size",
                           "child MxOb of %u bytes runs past its parent", sz);
        ra_status st = read_object(w, c->pos, c->pos + sz, parent, depth + 1);
        if (st != RA_OK) return st;
        c->pos += sz;
        if ((sz & 1) && ra_cursor_left(c)) c->pos++;
    }
    return RA_OK;
}

static ra_status read_object(si_walk *w, uint64_t at, uint64_t end, const char *parent, int depth)
{
    if (depth > MAX_DEPTH)
        return ra_fail(w->err, RA_ERR_LIMIT, FMT, at, "MxOb", "actions nested more than %d deep", MAX_DEPTH);
    ra_cursor c; /* over the archive up to the object's end: offsets in errors are the file's */
    ra_cursor_init(&c, w->ar->data, (size_t)end, FMT, w->err);
    c.pos = (size_t)at;
    ra_arena *a = w->ar->arena;
    si_obj o;
    memset(&o, 0, sizeof o);
    o.offset = at - 8;
    o.parent = parent;
    uint32_t unk = 0;
    uint16_t extra_len = 0;
    double v[9];
    ra_rd_u16le(&c, &o.type, "type");
    ra_rd_cstr(&c, a, &o.presenter, "presenter");
    ra_rd_u32le(&c, &unk, "unknown");
    ra_rd_cstr(&c, a, &o.name, "name");
    ra_rd_u32le(&c, &o.id, "id");
    ra_rd_u32le(&c, &o.flags, "flags");
    ra_rd_u32le(&c, &o.start, "start_time");
    ra_rd_s32le(&c, &o.duration, "duration");
    ra_rd_s32le(&c, &o.loops, "loop_count");
    for (int i = 0; i < 9; i++) ra_rd_f64le(&c, &v[i], i < 3 ? "location" : i < 6 ? "direction" : "up");
    ra_rd_u16le(&c, &extra_len, "extra_length");
    ra_rd_str(&c, a, extra_len, &o.extra, "extra");
    if (is_media(o.type)) {
        uint32_t skip[5];
        ra_rd_cstr(&c, a, &o.media_path, "media_path");
        ra_rd_u32le(&c, &skip[0], "media.unknown");
        ra_rd_u32le(&c, &skip[1], "media.unknown");
        ra_rd_u32le(&c, &skip[2], "media.frame_rate");
        ra_rd_u32le(&c, &o.file_type, "media.file_type");
        ra_rd_u32le(&c, &skip[3], "media.palette");
        ra_rd_u32le(&c, &skip[4], "media.sustain_time");
        if (o.file_type == FT_WAV) ra_rd_u32le(&c, &skip[0], "media.volume");
    }
    if (!ra_cursor_ok(&c)) return w->err->code;
    o.loc = ra_v3(v[0], v[1], v[2]);
    o.dir = ra_v3(v[3], v[4], v[5]);
    o.up = ra_v3(v[6], v[7], v[8]);
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        si_obj *g = ra_arena_grow(a, w->objs, w->n, cap, sizeof *g);
        if (!g)
            return ra_fail(w->err, RA_ERR_NO_MEMORY, FMT, at, "MxOb", "out of memory (memory_limit) for the objects");
        w->objs = g;
        w->cap = cap;
    }
    w->objs[w->n++] = o;
    return is_composite(o.type) ? read_children(w, &c, o.type, o.name, depth) : RA_OK;
}

/* ---- pass 2: the data chunks ------------------------------------------------------------------ */
static si_obj *find_obj(si_walk *w, uint32_t id)
{
    int64_t i = ra_find_id(w->sorted, w->n, id); /* the first object of a duplicated id */
    return i < 0 ? NULL : &w->objs[i];
}

static ra_status data_chunk(si_walk *w, uint64_t at, uint64_t end)
{
    if (end - at < 14)
        return ra_fail(w->err, RA_ERR_BAD_VALUE, FMT, at - 8, "MxCh",
                       "data chunk of %llu bytes, shorter than its 14-byte header", (unsigned long long)(end - at));
    const uint8_t *p = w->ar->data + at;
    uint16_t flags = (uint16_t)(p[0] | p[1] << 8);
    uint32_t id = ra_load_u32le(p + 2), total = ra_load_u32le(p + 10);
    uint32_t len = (uint32_t)(end - at - 14);
    w->mxch++;
    if (flags & CH_END) return RA_OK;
    si_obj *o = find_obj(w, id);
    if (!o || o->file_type != FT_OBJ) return RA_OK;
    o->stored += end - at + 8;
    if (!o->have) {
        o->have = true;
        o->chunks = 1;
        o->first_chunk = at - 8;
        if (!(flags & CH_SPLIT) || total == len) {
            o->piece = p + 14;
            o->total = o->got = len;
            o->done = true;
            return RA_OK;
        }
        if (total < len || total > w->ar->size)
            return ra_fail(
                w->err, RA_ERR_BAD_VALUE, FMT, at + 10, "MxCh.data_size",
                "split data of object %u claims %u bytes in all, against a first piece of %u in a file of %zu", id,
                total, len, w->ar->size);
        o->buf = ra_arena_array_uninit(w->ar->arena, total, 1);
        if (!o->buf)
            return ra_fail(w->err, RA_ERR_NO_MEMORY, FMT, at, "MxCh", "out of memory (memory_limit) joining object %u",
                           id);
        memcpy(o->buf, p + 14, len);
        o->total = total;
        o->got = len;
        return RA_OK;
    }
    if (o->done || o->broken || !(flags & CH_SPLIT)) {
        /* a later logical chunk: the animation is the first one.  One that
         * interrupts the split pieces leaves them unfinished for good: the
         * object is reported and skipped, never listed half-filled. */
        if (!o->done) o->broken = true;
        o->chunks++;
        return RA_OK;
    }
    if (len > o->total - o->got)
        return ra_fail(w->err, RA_ERR_BAD_VALUE, FMT, at - 8, "MxCh",
                       "split pieces of object %u overrun their total of %u bytes", id, o->total);
    memcpy(o->buf + o->got, p + 14, len);
    o->got += len;
    o->chunks++;
    if (o->got == o->total) o->done = true;
    return RA_OK;
}

/* ---- the chunk walk ------------------------------------------------------------------------------ */
static ra_status walk(si_walk *w, uint64_t pos, uint64_t end, int depth)
{
    if (depth > MAX_DEPTH)
        return ra_fail(w->err, RA_ERR_LIMIT, FMT, pos, "chunk", "chunks nested more than %d deep", MAX_DEPTH);
    const uint8_t *d = w->ar->data;
    while (end - pos >= 8) {
        if (w->buffer_size) {
            uint64_t in_buf = pos % w->buffer_size;
            if (in_buf + 8 > w->buffer_size) {
                pos += w->buffer_size - in_buf; /* the rest of this buffer is filler */
                continue;
            }
        }
        uint32_t cc = ra_load_u32le(d + pos), size = ra_load_u32le(d + pos + 4);
        uint64_t body = pos + 8;
        if (size > end - body)
            return ra_fail(w->err, RA_ERR_TRUNCATED, FMT, pos + 4, "chunk.size",
                           "chunk '%.4s' of %u bytes runs past its parent (%llu left)", (const char *)(d + pos), size,
                           (unsigned long long)(end - body));
        uint64_t bend = body + size;
        ra_status st = RA_OK;
        if (cc == CC_MXHD) {
            if (size < 8) return ra_fail(w->err, RA_ERR_TRUNCATED, FMT, body, "MxHd", "MxHd of %u bytes", size);
            w->version = ra_load_u32le(d + body);
            w->buffer_size = ra_load_u32le(d + body + 4);
            if (w->version != SI_V22 && w->version != SI_V21)
                return ra_fail(w->err, RA_ERR_UNSUPPORTED, FMT, body, "MxHd.version",
                               "SI version %u.%u (2.2 and 2.1 are read)", w->version & 0xFFFF, w->version >> 16);
            if (w->buffer_size && w->buffer_size < 16)
                return ra_fail(w->err, RA_ERR_BAD_VALUE, FMT, body + 4, "MxHd.buffer_size", "buffer size %u",
                               w->buffer_size);
        } else if (cc == CC_LIST) {
            if (size < 4) return ra_fail(w->err, RA_ERR_TRUNCATED, FMT, body, "LIST", "LIST of %u bytes", size);
            st = walk(w, body + 4, bend, depth + 1);
        } else if (cc == CC_MXST) {
            st = walk(w, body, bend, depth + 1);
        } else if (cc == CC_MXOB) {
            if (w->pass == 1) st = read_object(w, body, bend, "", 0);
        } else if (cc == CC_MXCH) {
            if (w->pass == 2) st = data_chunk(w, body, bend);
        } else if (cc != CC_MXOF && cc != CC_PAD) {
            w->unknown++;
        }
        if (st != RA_OK) return st;
        pos = bend + (size & 1);
        if (pos > end) pos = end;
    }
    return RA_OK;
}

static ra_status si_open(ra_archive *ar, const ra_options *opt, ra_error *err)
{
    si_walk w;
    memset(&w, 0, sizeof w);
    w.ar = ar;
    w.err = err;
    const uint8_t *d = ar->data;
    if (!si_detect(d, ar->size))
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "RIFF", "not an SI file (no RIFF OMNI header)");
    uint32_t riff = ra_load_u32le(d + 4);
    uint64_t end = (uint64_t)riff + 8;
    if (end > ar->size)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, 4, "RIFF.size",
                       "RIFF size %u runs past the end of the file (%zu bytes)", riff, ar->size);
    /* the header chunks first: MxHd must come before any buffer logic */
    if (end < 20 || ra_load_u32le(d + 12) != CC_MXHD)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 12, "MxHd", "the RIFF OMNI does not start with its MxHd chunk");
    w.pass = 1;
    ra_status st = walk(&w, 12, end, 0);
    if (st != RA_OK) return st;
    if (w.n > UINT32_MAX) return ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "MxOb", "too many objects");
    w.sorted = ra_sorted_ids(ar->arena, w.objs, w.n, sizeof *w.objs);
    if (!w.sorted && w.n)
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "MxOb", "out of memory (memory_limit)");
    w.pass = 2;
    st = walk(&w, 12, end, 0);
    if (st != RA_OK) return st;

    bool all = ra_options_is(opt, "si_all", "1");
    ra_arena *a = ar->arena;
    bool ok = ra_meta_set_string(a, &ar->meta, "si.version", w.version == SI_V21 ? "2.1" : "2.2") &&
              ra_meta_set_int(a, &ar->meta, "si.buffer_size", w.buffer_size) &&
              ra_meta_set_int(a, &ar->meta, "si.objects", (int64_t)w.n) &&
              ra_meta_set_int(a, &ar->meta, "si.data_chunks", (int64_t)w.mxch);
    for (size_t i = 0; ok && i < w.n; i++) {
        si_obj *o = &w.objs[i];
        if (o->file_type != FT_OBJ) continue;
        bool anim_presenter = ends_with(o->presenter, "AnimPresenter");
        const uint8_t *pl = o->buf ? o->buf : o->piece;
        bool anim_data = o->have && o->got >= 4 && ra_load_u32le(pl) == 0x11;
        if (!anim_presenter && !(all && anim_data) && !(o->presenter[0] == 0 && anim_data)) continue;
        if (!o->have) {
            ok = ra_archive_warn(ar, "animation object %u (%s) has no data chunk; skipped", o->id, o->name);
            continue;
        }
        if (!o->done) {
            ok = ra_archive_warn(ar, "animation object %u (%s): its split data ends after %u of %u bytes; skipped",
                                 o->id, o->name, o->got, o->total);
            continue;
        }
        ra_archive_item *it = ra_archive_add(ar);
        if (!it) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "MxOb", "out of memory (memory_limit)");
        it->id = o->id;
        it->name = o->name[0] ? o->name : ra_arena_printf(a, "object_%u", o->id);
        it->kind = o->presenter[0] ? o->presenter : "(no presenter)";
        it->format = "lego_ani";
        it->extension = "ani";
        it->offset = o->first_chunk;
        it->stored_size = o->stored;
        it->size = o->total;
        it->group = o->parent;
        it->priv = o;
        /* the object's strings are the arena's: referenced, as the keys */
        const ra_meta meta[] = {
            {"si.object_type", RA_META_INT, {.i = o->type}},
            {"si.presenter", RA_META_STRING, {.s = o->presenter}},
            {"si.flags", RA_META_INT, {.i = o->flags}},
            {"si.start_time", RA_META_INT, {.i = o->start}},
            {"si.duration", RA_META_INT, {.i = o->duration}},
            {"si.loop_count", RA_META_INT, {.i = o->loops}},
            {"si.location", RA_META_VEC3, {.v = o->loc}},
            {"si.direction", RA_META_VEC3, {.v = o->dir}},
            {"si.up", RA_META_VEC3, {.v = o->up}},
            {"si.extra", RA_META_STRING, {.s = o->extra}},
            {"si.media_path", RA_META_STRING, {.s = o->media_path ? o->media_path : ""}},
            {"si.parent", RA_META_STRING, {.s = o->parent}},
            {"si.data_chunks", RA_META_INT, {.i = o->chunks}},
            {"si.object_offset", RA_META_INT, {.i = (int64_t)o->offset}},
        };
        ok = it->name && ra_meta_add_refs(a, &it->meta, meta, sizeof meta / sizeof meta[0]);
    }
    if (ok && w.unknown) ok = ra_archive_warn(ar, "%zu chunks of unknown type skipped", w.unknown);
    return ok ? RA_OK : ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory (memory_limit)");
}

static ra_status si_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    (void)err;
    const si_obj *o = ar->items[i].priv;
    *data = o->buf ? o->buf : o->piece;
    *size = o->total;
    return RA_OK;
}

const ra_archive_kind ra_archive_si = {"lego_si", si_detect, si_open, si_payload, NULL, NULL, NULL};

/* ---- writer -------------------------------------------------------------------------------------------- */
typedef struct si_out {
    ra_writer *w;
    uint32_t buf;
    bool ok;
} si_out;

static size_t here(const si_out *o) { return o->w->size; }
static void u16(si_out *o, uint16_t v) { o->ok = o->ok && ra_wr_u16le(o->w, v); }
static void u32(si_out *o, uint32_t v) { o->ok = o->ok && ra_wr_u32le(o->w, v); }
static void raw(si_out *o, const void *p, size_t n) { o->ok = o->ok && ra_wr_bytes(o->w, p, n); }
static void cstr(si_out *o, const char *s) { raw(o, s ? s : "", strlen(s ? s : "") + 1); }
static void patch32(si_out *o, size_t at, uint32_t v)
{
    if (!o->ok) return;
    uint8_t *p = o->w->data + at;
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}
static void pad_to_boundary(si_out *o, size_t need);
static size_t begin(si_out *o, uint32_t cc)
{
    u32(o, cc);
    size_t at = here(o);
    u32(o, 0);
    return at;
}
static void finish(si_out *o, size_t at)
{
    size_t size = here(o) - at - 4;
    patch32(o, at, (uint32_t)size);
    if (size & 1) raw(o, "", 1);
}
/* a "pad " chunk filling the buffer up to its boundary when fewer than
 * `need` bytes are left in it (the rule the reader's skip mirrors) */
static void pad_to_boundary(si_out *o, size_t need)
{
    size_t left = o->buf - here(o) % o->buf;
    if (left >= need || left == o->buf) return;
    if (left < 8) {
        static const uint8_t cd[8] = {0xCD, 0xCD, 0xCD, 0xCD, 0xCD, 0xCD, 0xCD, 0xCD};
        raw(o, cd, left); /* skipped by readers: no room for a chunk header */
        return;
    }
    u32(o, CC_PAD);
    u32(o, (uint32_t)(left - 8));
    for (size_t i = 0; i < left - 8 && o->ok; i++) o->ok = ra_wr_u8(o->w, 0xCD);
}

static void write_object(si_out *o, const ra_si_object *s, uint16_t type, const char *presenter, const char *name,
                         uint32_t id)
{
    u16(o, type);
    cstr(o, presenter);
    u32(o, 0);
    cstr(o, name);
    u32(o, id);
    u32(o, 0);            /* flags */
    u32(o, 0);            /* start time */
    u32(o, (uint32_t)-1); /* duration: as long as the animation */
    u32(o, 1);            /* loops */
    ra_vec3 v[3] = {s ? s->location : ra_v3(0, 0, 0), s ? s->direction : ra_v3(0, 0, 1), s ? s->up : ra_v3(0, 1, 0)};
    for (int i = 0; i < 3; i++) {
        o->ok = o->ok && ra_wr_f64le(o->w, v[i].x) && ra_wr_f64le(o->w, v[i].y) && ra_wr_f64le(o->w, v[i].z);
    }
    const char *extra = s && s->extra ? s->extra : "";
    size_t el = extra[0] ? strlen(extra) + 1 : 0;
    u16(o, (uint16_t)el);
    raw(o, extra, el);
    if (is_media(type)) {
        cstr(o, s && s->name ? s->name : "");
        u32(o, 0);
        u32(o, 0);
        u32(o, 0); /* frame rate */
        u32(o, FT_OBJ);
        u32(o, 0);
        u32(o, 0);
    }
}

/* the data of one object: its chunks, split where a buffer ends */
static void write_data(si_out *o, const ra_si_object *s)
{
    size_t off = 0;
    bool first = true;
    do {
        pad_to_boundary(o, 8 + 14 + 1);
        size_t room = o->buf - here(o) % o->buf; /* bytes to the boundary */
        size_t piece = s->size - off;
        bool split = !first || piece + 8 + 14 > room;
        if (piece + 8 + 14 > room) piece = room - 8 - 14;
        size_t at = begin(o, CC_MXCH);
        u16(o, split ? CH_SPLIT : 0);
        u32(o, s->id);
        u32(o, 0); /* time */
        u32(o, (uint32_t)s->size);
        raw(o, s->data + off, piece);
        finish(o, at);
        off += piece;
        first = false;
    } while (off < s->size && o->ok);
    pad_to_boundary(o, 8 + 14 + 1);
    size_t at = begin(o, CC_MXCH);
    u16(o, CH_END);
    u32(o, s->id);
    u32(o, 0);
    u32(o, 0);
    finish(o, at);
}

/* a chunk the reader's walk meets: never within 8 bytes of a boundary */
static size_t wbegin(si_out *o, uint32_t cc)
{
    pad_to_boundary(o, 8 + 4);
    return begin(o, cc);
}

ra_status ra_si_write(const ra_si_object *objs, size_t n, uint32_t buffer_size, const char *composite,
                      uint32_t composite_id, ra_writer *w, ra_error *err)
{
    if (buffer_size < 256 || n == 0 || n > 65535)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "", "SI writer: buffer size >= 256 and 1..65535 objects");
    for (size_t i = 0; i < n; i++)
        if (!objs[i].data || objs[i].size > UINT32_MAX || (objs[i].extra && strlen(objs[i].extra) >= 65535))
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "", "SI writer: object %zu has no data or is too big",
                           i);
    si_out o = {w, buffer_size, true};
    size_t riff = begin(&o, CC_RIFF);
    u32(&o, CC_OMNI);
    size_t hd = begin(&o, CC_MXHD);
    u32(&o, SI_V22);
    u32(&o, buffer_size);
    u16(&o, 1);
    u16(&o, 0);
    finish(&o, hd);
    size_t streams = composite ? 1 : n;
    size_t of = begin(&o, CC_MXOF);
    u32(&o, (uint32_t)streams);
    size_t table = here(&o);
    for (size_t i = 0; i < streams; i++) u32(&o, 0);
    finish(&o, of);
    size_t list = begin(&o, CC_LIST);
    u32(&o, CC_MXST);
    for (size_t k = 0; k < streams && o.ok; k++) {
        pad_to_boundary(&o, 64);
        patch32(&o, table + 4 * k, (uint32_t)here(&o));
        size_t st = begin(&o, CC_MXST);
        size_t ob = wbegin(&o, CC_MXOB);
        if (composite) {
            write_object(&o, NULL, T_PARALLEL, "LegoAnimMMPresenter", composite, composite_id);
            size_t ch = begin(&o, CC_LIST);
            u32(&o, CC_MXCH);
            u32(&o, (uint32_t)n);
            for (size_t i = 0; i < n; i++) {
                size_t cob = begin(&o, CC_MXOB);
                write_object(&o, &objs[i], T_OBJECT_ACTION, objs[i].presenter, objs[i].name, objs[i].id);
                finish(&o, cob);
            }
            finish(&o, ch);
        } else {
            write_object(&o, &objs[k], T_OBJECT_ACTION, objs[k].presenter, objs[k].name, objs[k].id);
        }
        finish(&o, ob);
        size_t da = wbegin(&o, CC_LIST);
        u32(&o, CC_MXDA);
        for (size_t i = composite ? 0 : k; i < (composite ? n : k + 1); i++) write_data(&o, &objs[i]);
        finish(&o, da);
        finish(&o, st);
    }
    finish(&o, list);
    finish(&o, riff);
    return o.ok ? RA_OK : ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory writing the SI file");
}
