/* Metroid Prime 1 and 2 .pak archives (GameCube, big-endian): the header, the
 * named-resource and resource tables, zlib-compressed (Prime 1, the Echoes
 * demo) and LZO-segmented (Prime 2: Echoes) resources, the ANCS character
 * sets that name the animations and give their skeletons (both games'
 * layouts), and the writer.  docs/formats/metroid_prime.md §11 (The .pak
 * archive).
 *
 *   u32 version 0x00030005, u32 0
 *   u32 n, n x {fourcc type, u32 id, u32 name_length, name (no NUL)}
 *   u32 n, n x {u32 compressed, fourcc type, u32 id, u32 size, u32 offset}
 * Offsets are absolute; tables and resources are 32-aligned and padded with
 * 0xFF.  A compressed resource is a u32 inflated length and a zlib stream, or
 * (Echoes) LZO1X segments of at most 0x4000 bytes each: s16 length, > 0 an
 * LZO1X stream, < 0 that many stored bytes (liblzo2's safe decompressor).
 * The animations listed are those of the ANCS files (each primitive of each
 * animation tree; the name is the primitive's, the skeleton the CINF of the
 * set's first character, as the game's tools bind them), then every ANIM of
 * the pak no ANCS names.  Every ANCS character (name, CMDL, CSKR, CINF ids)
 * is kept for the item's document, which fetches its model, skin and
 * textures from the pak (mp_pak_characters, mp_pak_resource; §13.5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lzo/lzo1x.h>
#include <zlib.h>

#include "mp_internal.h"
#include "retroanim/ra_archive_internal.h"

#define FMT "metroid_pak"
#define PAK_VERSION 0x00030005u
#define MAX_META_DEPTH 64

typedef struct pak_res {
    uint32_t compressed, id, size, offset;
    char type[5];
    bool listed;         /* an ANIM some item of the archive is */
    const char *name;    /* its first name in the named-resource table (NULL: none) */
    const uint8_t *data; /* inflated, once asked for */
    size_t data_size;
} pak_res;

typedef struct pak {
    pak_res *res;
    size_t count;
    uint32_t *slots;         /* (type, id) -> resource index + 1, open addressing (0: empty) */
    size_t mask;             /* slots - 1, a power of two at least twice the table's entries */
    mp_pak_character *chars; /* every ANCS character, ANCS by ANCS */
    size_t char_count, char_cap;
} pak;

typedef struct pak_item {
    size_t anim, cinf;             /* resource indices (cinf SIZE_MAX: none) */
    size_t char_first, char_count; /* the characters of its ANCS */
} pak_item;

static bool pak_detect(const uint8_t *data, size_t size)
{
    return size >= 8 && ra_load_u32be(data) == PAK_VERSION && ra_load_u32be(data + 4) == 0;
}

/* The slot of (type, id): the one holding it, else the empty one where it
 * goes.  A pak of thousands of resources was read with a linear search per
 * entry (to keep the first of an asset stored twice) and per ANCS primitive:
 * quadratic, and paid again by every import of one of its animations. */
static size_t res_slot(const pak *p, const char *type, uint32_t id)
{
    uint64_t k = ((uint64_t)ra_load_u32be((const uint8_t *)type) << 32 | id) * 0x9E3779B97F4A7C15u;
    for (size_t h = (size_t)(k >> 32) & p->mask;; h = (h + 1) & p->mask) {
        uint32_t s = p->slots[h];
        if (!s || (p->res[s - 1].id == id && memcmp(p->res[s - 1].type, type, 4) == 0)) return h;
    }
}

static size_t find_res(const pak *p, const char *type, uint32_t id)
{
    uint32_t s = p->slots[res_slot(p, type, id)];
    return s ? s - 1 : SIZE_MAX;
}

#define LZO_PIECE 0x4000u /* Echoes compresses 0x4000-byte pieces of the resource, each on its own */

/* Echoes' LZO segments (docs/formats/metroid_prime.md §11): from `in` (n bytes after the size word) into
 * out[size]; each segment's length, the bytes it may read and the bytes it gives are checked before use. */
static ra_status lzo_segments(const pak_res *r, const uint8_t *in, size_t n, uint8_t *out, uint32_t size, size_t *used,
                              ra_error *err)
{
    static int init = -1;
    if (init < 0) init = lzo_init() == LZO_E_OK; /* a pure self-test; the same answer on every call */
    if (!init) return ra_fail(err, RA_ERR_UNSUPPORTED, FMT, r->offset, "resource", "liblzo2 failed its self-test");
    size_t at = 0, done = 0;
    while (done < size) {
        uint64_t seg_off = r->offset + 4 + at;
        if (n - at < 2)
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, seg_off, "segment.length",
                           "%s %08X: segments end after %zu of %u bytes", r->type, r->id, done, size);
        int16_t len = (int16_t)ra_load_u16be(in + at);
        at += 2;
        size_t piece = size - done < LZO_PIECE ? size - done : LZO_PIECE;
        if (len < 0) { /* stored */
            size_t k = (size_t)(-(int32_t)len);
            if (k > n - at || k > size - done)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, seg_off, "segment.length",
                               "%s %08X: a stored segment of %zu bytes runs past the resource or its size", r->type,
                               r->id, k);
            memcpy(out + done, in + at, k);
            at += k;
            done += k;
            continue;
        }
        if (len == 0 || (size_t)len > n - at)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, seg_off, "segment.length",
                           "%s %08X: an LZO segment of %d bytes (%zu left in the resource)", r->type, r->id, len,
                           n - at);
        lzo_uint got = piece;
        int lr = lzo1x_decompress_safe(in + at, (lzo_uint)len, out + done, &got, NULL);
        if (lr != LZO_E_OK || got != piece)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, seg_off + 2, "segment",
                           "%s %08X: the LZO1X segment of %d bytes %s (liblzo2 %d; %lu of %zu bytes)", r->type, r->id,
                           len,
                           lr == LZO_E_OUTPUT_OVERRUN       ? "gives more than its piece"
                           : lr == LZO_E_INPUT_OVERRUN      ? "is cut short"
                           : lr == LZO_E_LOOKBEHIND_OVERRUN ? "refers before its start"
                           : lr == LZO_E_INPUT_NOT_CONSUMED ? "has bytes after its end marker"
                           : lr == LZO_E_OK                 ? "gives less than its piece"
                                                            : "is broken",
                           lr, (unsigned long)got, piece);
        at += (size_t)len;
        done += piece;
    }
    *used = at;
    return RA_OK;
}

/* The bytes of resource r: as stored, or inflated into the arena. */
static ra_status res_bytes(ra_archive *ar, pak_res *r, ra_error *err)
{
    if (r->data) return RA_OK;
    const uint8_t *p = ar->data + r->offset;
    if (!r->compressed) {
        r->data = p;
        r->data_size = r->size;
        return RA_OK;
    }
    if (r->size < 6)
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, r->offset, "resource", "compressed %s %08X of %u bytes", r->type,
                       r->id, r->size);
    uint32_t out = ra_load_u32be(p);
    /* a zlib header (deflate: low nibble 8) with a window of 4 to 32 KiB starts 0x48, 0x58, 0x68 or 0x78
     * (Retro's packer: 0x78), and its first two bytes are a multiple of 31: never the high byte of a
     * segment length, which is below 0x40 (LZO) or at least 0x80 (stored).  Smaller windows (0x08 ... 0x38)
     * could be an LZO length and are not taken. */
    bool zlib = (p[4] & 0x0F) == 8 && p[4] >= 0x48 && p[4] <= 0x78 && ((p[4] << 8) | p[5]) % 31 == 0;
    if (!zlib) {
        /* LZO1X gives at most 255 bytes per input byte in a run (ext()); a segment at most LZO_PIECE */
        uint64_t segments = ((uint64_t)out + LZO_PIECE - 1) / LZO_PIECE;
        if (segments * 2 > r->size - 4 || (uint64_t)out > (uint64_t)(r->size - 4) * 256 + 64)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, r->offset, "resource.decompressed_size",
                           "%s %08X claims %u bytes from %u of LZO segments: more than they can give", r->type, r->id,
                           out, r->size);
        uint8_t *lbuf = ra_arena_array_uninit(ar->arena, out ? out : 1, 1);
        if (!lbuf)
            return ra_fail(err, RA_ERR_NO_MEMORY, FMT, r->offset, "resource.decompressed_size",
                           "%s %08X decompresses to %u bytes: over the memory limit (memory_limit)", r->type, r->id,
                           out);
        size_t lused = 0;
        ra_status st = lzo_segments(r, p + 4, r->size - 4, lbuf, out, &lused, err);
        if (st != RA_OK) return st;
        for (size_t i = 4 + lused; i < r->size; i++)
            if (p[i] != 0xFF) {
                ra_archive_warn(ar, "%s %08X: %zu bytes after its LZO segments are not 0xFF padding", r->type, r->id,
                                (size_t)r->size - 4 - lused);
                break;
            }
        r->data = lbuf;
        r->data_size = out;
        return RA_OK;
    }
    /* deflate's densest code gives 1032 bytes per input byte */
    if ((uint64_t)out > (uint64_t)(r->size - 4) * 1032 + 64)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, r->offset, "resource.inflated_size",
                       "%s %08X claims %u bytes inflated from %u: more than deflate can give", r->type, r->id, out,
                       r->size);
    uint8_t *buf = ra_arena_array_uninit(ar->arena, out ? out : 1, 1);
    if (!buf)
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, r->offset, "resource.inflated_size",
                       "%s %08X inflates to %u bytes: over the memory limit (memory_limit)", r->type, r->id, out);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, r->offset, "resource", "zlib: inflateInit failed");
    z.next_in = (Bytef *)(p + 4);
    z.avail_in = r->size - 4;
    z.next_out = buf;
    z.avail_out = out;
    int zr = inflate(&z, Z_FINISH);
    size_t got = z.total_out, used = z.total_in;
    inflateEnd(&z);
    if (zr != Z_STREAM_END) {
        if (zr == Z_BUF_ERROR && got == out && z.avail_in)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, r->offset, "resource.inflated_size",
                           "%s %08X inflates to more than the %u bytes its header says", r->type, r->id, out);
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, r->offset + 4 + used, "resource",
                       "%s %08X: the zlib stream is broken or cut short after %zu of %u bytes", r->type, r->id, got,
                       out);
    }
    if (got != out)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, r->offset, "resource.inflated_size",
                       "%s %08X inflates to %zu bytes, its header says %u", r->type, r->id, got, out);
    for (size_t i = 4 + used; i < r->size; i++)
        if (p[i] != 0xFF) {
            ra_archive_warn(ar, "%s %08X: %zu bytes after its zlib stream are not 0xFF padding", r->type, r->id,
                            (size_t)r->size - 4 - used);
            break;
        }
    r->data = buf;
    r->data_size = out;
    return RA_OK;
}

/* ---- ANCS: names and skeletons ------------------------------------------------------------------ */
typedef struct ancs_ctx {
    ra_archive *ar;
    pak *p;
    ra_cursor c;
    size_t ancs; /* resource index */
    size_t cinf; /* of the first character, SIZE_MAX if not in the pak */
    const char *character;
    size_t char_first; /* this ANCS's first entry of pak.chars */
    size_t added;
    bool echoes; /* Metroid Prime 2's layout (characters of more than 6 sections) */
} ancs_ctx;

static bool skip_ids(ra_cursor *c, const char *field)
{
    uint32_t n = 0;
    return ra_rd_u32be(c, &n, field) && ra_cursor_check_count(c, n, 4, field) && ra_rd_skip(c, (size_t)n * 4, field);
}

/* A primitive: an ANIM of the pak, named; the first name of an ANIM wins. */
static bool add_primitive(ancs_ctx *x, uint32_t anim_id, const char *name)
{
    ra_archive *ar = x->ar;
    size_t r = find_res(x->p, "ANIM", anim_id);
    if (r == SIZE_MAX)
        return ra_archive_warn(ar, "ANCS %08X names ANIM %08X (%s), which is not in this pak", x->p->res[x->ancs].id,
                               anim_id, name);
    pak_res *res = &x->p->res[r];
    if (res->listed) return true;
    ra_archive_item *it = ra_archive_add(ar);
    pak_item *pi = ra_arena_alloc(ar->arena, sizeof *pi);
    if (!it || !pi) return false;
    res->listed = true;
    pi->anim = r;
    pi->cinf = x->cinf;
    pi->char_first = x->char_first;
    pi->char_count = x->ancs != SIZE_MAX ? x->p->char_count - x->char_first : 0;
    it->id = anim_id;
    it->name = name[0] ? name : ra_arena_printf(ar->arena, "ANIM_%08X", anim_id);
    it->kind = "ANIM";
    it->format = "metroid_anim";
    it->extension = "ANIM";
    it->offset = res->offset;
    it->stored_size = res->size;
    it->size = res->compressed ? ra_load_u32be(ar->data + res->offset) : res->size;
    it->compressed = res->compressed != 0;
    it->has_skeleton = x->cinf != SIZE_MAX;
    it->skeleton_id = x->cinf != SIZE_MAX ? x->p->res[x->cinf].id : 0;
    it->group = x->character;
    it->priv = pi;
    x->added++;
    if (!it->name) return false;
    if (x->ancs != SIZE_MAX && !(ra_meta_set_int(ar->arena, &it->meta, "pak.ancs", x->p->res[x->ancs].id) &&
                                 ra_meta_set_string(ar->arena, &it->meta, "pak.character", x->character)))
        return false;
    return ra_meta_set_bool(ar->arena, &it->meta, "pak.compressed", it->compressed) &&
           (!it->has_skeleton || ra_meta_set_int(ar->arena, &it->meta, "pak.cinf", it->skeleton_id));
}

static bool meta_anim(ancs_ctx *x, int depth);

static bool meta_trans(ancs_ctx *x, int depth)
{
    ra_cursor *c = &x->c;
    uint32_t t = 0;
    if (!ra_rd_u32be(c, &t, "MetaTrans.type")) return false;
    if (t == 0) return meta_anim(x, depth + 1);
    if (t == 1 || t == 2) return ra_rd_skip(c, 4 + 4 + 1 + 1 + 4, "MetaTrans");
    if (t == 3) return true;
    return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, "MetaTrans.type", "unknown MetaTrans type");
}

static bool meta_anim(ancs_ctx *x, int depth)
{
    ra_cursor *c = &x->c;
    if (depth > MAX_META_DEPTH)
        return ra_cursor_fail(c, RA_ERR_LIMIT, c->pos, "MetaAnim", "animation trees nested too deep");
    uint32_t t = 0, n = 0;
    if (!ra_rd_u32be(c, &t, "MetaAnim.type")) return false;
    switch (t) {
    case 0: { /* primitive: ANIM id, index, name, f32, u32 */
        uint32_t id = 0, idx = 0;
        char *name = NULL;
        if (!ra_rd_u32be(c, &id, "primitive.anim") || !ra_rd_u32be(c, &idx, "primitive.index") ||
            !ra_rd_cstr(c, x->ar->arena, &name, "primitive.name") || !ra_rd_skip(c, 8, "primitive"))
            return false;
        if (!add_primitive(x, id, name))
            return ra_cursor_fail(c, RA_ERR_NO_MEMORY, c->pos, "primitive", "out of memory (memory_limit)");
        return true;
    }
    case 1:
    case 2: /* (phase) blend: two trees, f32, u8 */
        return meta_anim(x, depth + 1) && meta_anim(x, depth + 1) && ra_rd_skip(c, 5, "blend");
    case 3: /* random: n x (tree, u32 probability) */
        if (!ra_rd_u32be(c, &n, "random.count") || !ra_cursor_check_count(c, n, 8, "random.count")) return false;
        for (uint32_t i = 0; i < n; i++)
            if (!meta_anim(x, depth + 1) || !ra_rd_skip(c, 4, "random.probability")) return false;
        return true;
    case 4: /* sequence */
        if (!ra_rd_u32be(c, &n, "sequence.count") || !ra_cursor_check_count(c, n, 4, "sequence.count")) return false;
        for (uint32_t i = 0; i < n; i++)
            if (!meta_anim(x, depth + 1)) return false;
        return true;
    default: return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 4, "MetaAnim.type", "unknown MetaAnim type");
    }
}

/* One CharacterInfo, skipped field by field (it has no size); the first
 * character's name and CINF are kept. */
static bool character(ancs_ctx *x, bool first)
{
    ra_cursor *c = &x->c;
    uint32_t idx = 0, cmdl = 0, cskr = 0, cinf = 0, n = 0;
    uint16_t sections = 0;
    char *name = NULL;
    size_t sections_at = c->pos + 4;
    if (!ra_rd_u32be(c, &idx, "character.index") || !ra_rd_u16be(c, &sections, "character.sections") ||
        !ra_rd_cstr(c, x->ar->arena, &name, "character.name") || !ra_rd_u32be(c, &cmdl, "character.cmdl") ||
        !ra_rd_u32be(c, &cskr, "character.cskr") || !ra_rd_u32be(c, &cinf, "character.cinf"))
        return false;
    /* Prime 1 writes up to 6 sections, Echoes 10 (docs/formats/metroid_prime.md §11, the Echoes ANCS) */
    bool echoes = sections > 6;
    if (first) x->echoes = echoes;
    else if (echoes != x->echoes)
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, sections_at, "character.sections",
                              "characters of both games' layouts in one ANCS");
    pak *p = x->p;
    if (p->char_count == p->char_cap) {
        size_t cap = p->char_cap ? 2 * p->char_cap : 8;
        mp_pak_character *nc = ra_arena_grow(x->ar->arena, p->chars, p->char_cap, cap, sizeof *nc);
        if (!nc) return ra_cursor_fail(c, RA_ERR_NO_MEMORY, c->pos, "character", "out of memory (memory_limit)");
        p->chars = nc;
        p->char_cap = cap;
    }
    p->chars[p->char_count++] = (mp_pak_character){name, cmdl, cskr, cinf};
    if (first) {
        x->character = name;
        x->cinf = find_res(x->p, "CINF", cinf);
        if (x->cinf == SIZE_MAX)
            ra_archive_warn(x->ar, "ANCS %08X: the skeleton CINF %08X of %s is not in this pak (look in a sibling pak)",
                            x->p->res[x->ancs].id, cinf, name);
    }
    /* animation names: u32 index, two strings (Echoes: one) */
    if (!ra_rd_u32be(c, &n, "character.animations") ||
        !ra_cursor_check_count(c, n, echoes ? 5 : 6, "character.animations"))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!ra_rd_skip(c, 4, "animation.index") || !ra_rd_cstr(c, NULL, NULL, "animation.name") ||
            (!echoes && !ra_rd_cstr(c, NULL, NULL, "animation.name2")))
            return false;
    /* PAS database: 'PAS4', states, default, per state its parameters and infos */
    uint32_t magic = 0, states = 0;
    if (!ra_rd_u32be(c, &magic, "pas.magic") || !ra_rd_u32be(c, &states, "pas.states") ||
        !ra_rd_skip(c, 4, "pas.default"))
        return false;
    if (magic != 0x50415334u)
        return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 12, "pas.magic", "PAS database without 'PAS4'");
    if (!ra_cursor_check_count(c, states, 12, "pas.states")) return false;
    for (uint32_t s = 0; s < states; s++) {
        uint32_t np = 0, ni = 0;
        if (!ra_rd_skip(c, 4, "state.id") || !ra_rd_u32be(c, &np, "state.parms") ||
            !ra_rd_u32be(c, &ni, "state.infos") || !ra_cursor_check_count(c, np, 14, "state.parms"))
            return false;
        size_t info = 4; /* bytes of one anim info: its id, then a value per parameter */
        for (uint32_t k = 0; k < np; k++) {
            uint32_t type = 0;
            if (!ra_rd_u32be(c, &type, "parm.type") || !ra_rd_skip(c, 8, "parm.weight")) return false;
            if (type > 4)
                return ra_cursor_fail(c, RA_ERR_BAD_VALUE, c->pos - 12, "parm.type", "unknown PAS parameter type");
            size_t w = type == 3 ? 1 : 4; /* bool */
            if (!ra_rd_skip(c, 2 * w, "parm.range")) return false;
            info += w;
        }
        if (!ra_cursor_check_count(c, ni, info, "state.infos") || !ra_rd_skip(c, (size_t)ni * info, "state.infos"))
            return false;
    }
    if (echoes) { /* particles: PART, SWHC, u32, ELSC, SPSC, u32, u32 */
        if (!skip_ids(c, "character.part") || !skip_ids(c, "character.swhc") ||
            !ra_rd_skip(c, 4, "character.unknown") || !skip_ids(c, "character.elsc") ||
            !skip_ids(c, "character.spsc") || !ra_rd_skip(c, 8, "character.unknown"))
            return false;
    } else { /* particles: PART, SWHC, unknown, ELSC (sections > 5) */
        for (int k = 0; k < (sections > 5 ? 4 : 3); k++)
            if (!skip_ids(c, "character.particles")) return false;
        if (!ra_rd_skip(c, 4, "character.unknown")) return false;
    }
    if (sections > 1) { /* animation AABBs: name, 6 floats */
        if (!ra_rd_u32be(c, &n, "character.aabbs") || !ra_cursor_check_count(c, n, 25, "character.aabbs")) return false;
        for (uint32_t i = 0; i < n; i++)
            if (!ra_rd_cstr(c, NULL, NULL, "aabb.name") || !ra_rd_skip(c, 24, "aabb")) return false;
    }
    if (sections > 2) { /* effects: name, n components {name, fourcc, id, locator, f32, u32, u32} */
        if (!ra_rd_u32be(c, &n, "character.effects") || !ra_cursor_check_count(c, n, 5, "character.effects"))
            return false;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t m = 0;
            if (!ra_rd_cstr(c, NULL, NULL, "effect.name") || !ra_rd_u32be(c, &m, "effect.components") ||
                !ra_cursor_check_count(c, m, 22, "effect.components"))
                return false;
            for (uint32_t k = 0; k < m; k++) {
                if (!ra_rd_cstr(c, NULL, NULL, "component.name") || !ra_rd_skip(c, 8, "component.particle"))
                    return false;
                /* Echoes: a u32 bone id where Prime 1 has a locator name */
                if (echoes ? !ra_rd_skip(c, 4, "component.bone") : !ra_rd_cstr(c, NULL, NULL, "component.locator"))
                    return false;
                if (!ra_rd_skip(c, 12, "component")) return false;
            }
        }
    }
    if (sections > 3 && !ra_rd_skip(c, 8, "character.overlay")) return false;
    if (sections > 4 && !skip_ids(c, "character.animation_indices")) return false;
    if (sections > 9) { /* Echoes: CSPP id, u8, extents {u32 animation, 6 floats} */
        if (!ra_rd_skip(c, 5, "character.cspp") || !ra_rd_u32be(c, &n, "character.extents") ||
            !ra_cursor_check_count(c, n, 28, "character.extents") ||
            !ra_rd_skip(c, (size_t)n * 28, "character.extents"))
            return false;
    }
    return true;
}

static bool animation_set(ancs_ctx *x)
{
    ra_cursor *c = &x->c;
    uint16_t sect = 0;
    uint32_t n = 0;
    if (!ra_rd_u16be(c, &sect, "animset.sections") || !ra_rd_u32be(c, &n, "animset.animations") ||
        !ra_cursor_check_count(c, n, 5, "animset.animations"))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!ra_rd_cstr(c, NULL, NULL, "animation.name") || !meta_anim(x, 0)) return false;
    /* transitions {u32, from, to, MetaTrans}, the default transition */
    if (!ra_rd_u32be(c, &n, "animset.transitions") || !ra_cursor_check_count(c, n, 16, "animset.transitions"))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!ra_rd_skip(c, 12, "transition") || !meta_trans(x, 0)) return false;
    if (!meta_trans(x, 0)) return false;
    if (sect > 1) { /* additive animations {index, f32, f32}, two floats */
        if (!ra_rd_u32be(c, &n, "animset.additive") || !ra_cursor_check_count(c, n, 12, "animset.additive") ||
            !ra_rd_skip(c, (size_t)n * 12 + 8, "animset.additive"))
            return false;
    }
    if (sect > 2) { /* half transitions {index, MetaTrans} */
        if (!ra_rd_u32be(c, &n, "animset.half_transitions") ||
            !ra_cursor_check_count(c, n, 8, "animset.half_transitions"))
            return false;
        for (uint32_t i = 0; i < n; i++)
            if (!ra_rd_skip(c, 4, "half_transition") || !meta_trans(x, 0)) return false;
    }
    if (sect > 3 && !x->echoes) { /* every ANIM of the set {ANIM id, EVNT id}: those no tree named yet (Echoes
                                   * embeds the EVNTs here instead: nothing more to name) */
        if (!ra_rd_u32be(c, &n, "animset.resources") || !ra_cursor_check_count(c, n, 8, "animset.resources"))
            return false;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id = 0;
            if (!ra_rd_u32be(c, &id, "resource.anim") || !ra_rd_skip(c, 4, "resource.evnt")) return false;
            if (!add_primitive(x, id, ""))
                return ra_cursor_fail(c, RA_ERR_NO_MEMORY, c->pos, "resource", "out of memory (memory_limit)");
        }
    }
    return true;
}

static ra_status read_ancs(ra_archive *ar, pak *p, size_t r, ra_error *err)
{
    ra_status st = res_bytes(ar, &p->res[r], err);
    if (st != RA_OK) return st;
    ancs_ctx x;
    memset(&x, 0, sizeof x);
    x.ar = ar;
    x.p = p;
    x.ancs = r;
    x.cinf = SIZE_MAX;
    x.character = "";
    x.char_first = p->char_count;
    ra_error e;
    ra_error_clear(&e);
    ra_cursor_init(&x.c, p->res[r].data, p->res[r].data_size, "metroid_ancs", &e);
    uint16_t version = 0, set_version = 0;
    uint32_t chars = 0;
    bool ok = ra_rd_u16be(&x.c, &version, "version") && ra_rd_u16be(&x.c, &set_version, "charset.version") &&
              ra_rd_u32be(&x.c, &chars, "charset.characters");
    if (ok && (version != 1 || set_version != 1))
        ok = ra_cursor_fail(&x.c, RA_ERR_UNSUPPORTED, 0, "version", "ANCS version is not 1 (Metroid Prime 1 and 2)");
    ok = ok && ra_cursor_check_count(&x.c, chars, 22, "charset.characters");
    for (uint32_t i = 0; ok && i < chars; i++) ok = character(&x, i == 0);
    ok = ok && animation_set(&x);
    if (!ok) {
        if (e.code == RA_ERR_NO_MEMORY)
            return ra_fail(err, e.code, FMT, RA_NO_OFFSET, "ANCS", "out of memory (memory_limit)");
        char buf[300];
        ra_error_format(&e, buf, sizeof buf);
        /* what was named before the failure stays; the rest is listed unnamed */
        if (!ra_archive_warn(ar, "ANCS %08X not fully read (%s); %zu animation(s) named from it", p->res[r].id, buf,
                             x.added))
            return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "ANCS", "out of memory (memory_limit)");
    }
    return RA_OK;
}

/* ---- the tables -------------------------------------------------------------------------------------- */
static ra_status pak_open(ra_archive *ar, const ra_options *opt, ra_error *err)
{
    (void)opt;
    ra_cursor c;
    ra_cursor_init(&c, ar->data, ar->size, FMT, err);
    uint32_t version = 0, zero = 0, named = 0, count = 0;
    ra_rd_u32be(&c, &version, "version");
    ra_rd_u32be(&c, &zero, "reserved");
    if (!ra_cursor_ok(&c)) return err->code;
    if (version != PAK_VERSION)
        return ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "version",
                       "pak version %08X (Metroid Prime 1/2 paks are 00030005)", version);
    /* a pak of the header alone (one is on the Echoes demo disc) holds nothing */
    bool bare = c.pos == ar->size;
    if (!bare) ra_rd_u32be(&c, &named, "named.count");
    if (!ra_cursor_check_count(&c, named, 12, "named.count")) return err->code;
    ra_arena *a = ar->arena;
    /* the names, given to their resources once the table is read (a lookup
     * of each among the names before it made a pak of many names cost their
     * square at every open) */
    typedef struct pak_name {
        char type[4];
        uint32_t id;
        const char *name;
    } pak_name;
    pak_name *names = ra_arena_array_uninit(a, named ? named : 1, sizeof *names);
    if (!names) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, c.pos, "named", "out of memory (memory_limit)");
    for (uint32_t i = 0; i < named; i++) {
        uint32_t len = 0;
        char *name = NULL;
        ra_rd_bytes(&c, names[i].type, 4, "named.type");
        ra_rd_u32be(&c, &names[i].id, "named.id");
        ra_rd_u32be(&c, &len, "named.name_length");
        if (!ra_rd_str(&c, a, len, &name, "named.name")) return err->code;
        names[i].name = name;
    }
    if (!bare) ra_rd_u32be(&c, &count, "resources.count");
    if (!ra_cursor_check_count(&c, count, 20, "resources.count")) return err->code;
    pak *p = ra_arena_alloc(a, sizeof *p);
    size_t cap = 2;
    while (cap < (size_t)count * 2) cap *= 2; /* count <= the bytes left / 20 */
    if (!p || !(p->res = ra_arena_array(a, count ? count : 1, sizeof *p->res)) ||
        !(p->slots = ra_arena_array(a, cap, sizeof *p->slots)))
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, c.pos, "resources", "out of memory (memory_limit)");
    p->mask = cap - 1;
    ar->impl = p;
    size_t anims = 0, compressed = 0;
    for (uint32_t i = 0; i < count; i++) {
        pak_res *r = &p->res[p->count];
        size_t at = c.pos;
        ra_rd_u32be(&c, &r->compressed, "resource.compressed");
        ra_rd_bytes(&c, r->type, 4, "resource.type");
        ra_rd_u32be(&c, &r->id, "resource.id");
        ra_rd_u32be(&c, &r->size, "resource.size");
        ra_rd_u32be(&c, &r->offset, "resource.offset");
        if (!ra_cursor_ok(&c)) return err->code;
        if (r->compressed > 1)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, "resource.compressed", "resource %u: compression flag %u", i,
                           r->compressed);
        if (!ra_range_ok(ar->size, r->offset, r->size))
            return ra_fail(err, RA_ERR_TRUNCATED, FMT, at + 16, "resource.offset",
                           "resource %u (%s %08X): %u bytes at %u run past the end of the pak (%zu bytes)", i, r->type,
                           r->id, r->size, r->offset, ar->size);
        if (r->offset < c.pos && r->size)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 16, "resource.offset",
                           "resource %u (%s %08X) at %u overlaps the tables", i, r->type, r->id, r->offset);
        /* the same asset may be stored twice (the game's loading order): the first counts */
        size_t slot = res_slot(p, r->type, r->id);
        if (p->slots[slot]) continue;
        if (r->compressed && r->size < 4)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 12, "resource.size", "compressed resource %u of %u bytes",
                           i, r->size);
        anims += memcmp(r->type, "ANIM", 4) == 0;
        compressed += r->compressed;
        p->slots[slot] = (uint32_t)++p->count;
    }
    bool ok = ra_meta_set_int(a, &ar->meta, "pak.resources", (int64_t)p->count) &&
              ra_meta_set_int(a, &ar->meta, "pak.named_resources", named) &&
              ra_meta_set_int(a, &ar->meta, "pak.compressed_resources", (int64_t)compressed) &&
              ra_meta_set_int(a, &ar->meta, "pak.anims", (int64_t)anims);
    if (!ok) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory (memory_limit)");
    /* an ANIM's first name (the only ones read) */
    for (uint32_t i = 0; i < named; i++) {
        size_t r = memcmp(names[i].type, "ANIM", 4) ? SIZE_MAX : find_res(p, "ANIM", names[i].id);
        if (r != SIZE_MAX && !p->res[r].name) p->res[r].name = names[i].name;
    }
    for (size_t i = 0; i < p->count; i++) {
        if (memcmp(p->res[i].type, "ANCS", 4) != 0) continue;
        ra_status st = read_ancs(ar, p, i, err);
        if (st != RA_OK) return st;
    }
    /* the ANIMs no ANCS names */
    ancs_ctx x;
    memset(&x, 0, sizeof x);
    x.ar = ar;
    x.p = p;
    x.ancs = SIZE_MAX; /* named by no ANCS */
    x.cinf = SIZE_MAX;
    x.character = "";
    for (size_t i = 0; i < p->count; i++) {
        if (memcmp(p->res[i].type, "ANIM", 4) != 0 || p->res[i].listed) continue;
        if (!add_primitive(&x, p->res[i].id, p->res[i].name ? p->res[i].name : ""))
            return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory (memory_limit)");
    }
    return RA_OK;
}

static ra_status pak_payload(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    const pak_item *pi = ar->items[i].priv;
    pak_res *r = &((pak *)ar->impl)->res[pi->anim];
    ra_status st = res_bytes(ar, r, err);
    if (st != RA_OK) return st;
    *data = r->data;
    *size = r->data_size;
    return RA_OK;
}

static ra_status pak_skeleton(ra_archive *ar, size_t i, const uint8_t **data, size_t *size, ra_error *err)
{
    const pak_item *pi = ar->items[i].priv;
    if (pi->cinf == SIZE_MAX)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "cinf", "%s has no skeleton in this pak",
                       ar->items[i].name);
    pak_res *r = &((pak *)ar->impl)->res[pi->cinf];
    ra_status st = res_bytes(ar, r, err);
    if (st != RA_OK) return st;
    *data = r->data;
    *size = r->data_size;
    return RA_OK;
}

size_t mp_pak_characters(const ra_archive *ar, size_t i, const mp_pak_character **out)
{
    *out = NULL;
    if (!ar || i >= ar->count || strcmp(ar->format, FMT) != 0) return 0;
    const pak_item *pi = ar->items[i].priv;
    const pak *p = ar->impl;
    if (!pi->char_count) return 0;
    *out = &p->chars[pi->char_first];
    return pi->char_count;
}

ra_status mp_pak_resource(ra_archive *ar, const char *type, uint32_t id, const uint8_t **data, size_t *size,
                          ra_error *err)
{
    pak *p = ar->impl;
    size_t r = find_res(p, type, id);
    if (r == SIZE_MAX)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "resource", "%.4s %08X is not in this pak", type, id);
    ra_status st = res_bytes(ar, &p->res[r], err);
    if (st != RA_OK) return st;
    *data = p->res[r].data;
    *size = p->res[r].data_size;
    return RA_OK;
}

const ra_archive_kind ra_archive_pak = {"metroid_pak", pak_detect, pak_open, pak_payload, pak_skeleton, NULL, NULL};

/* ---- writer ----------------------------------------------------------------------------------------------- */
static bool pad32(ra_writer *w)
{
    while (w->size % 32)
        if (!ra_wr_u8(w, 0xFF)) return false;
    return true;
}

ra_status ra_pak_write(const ra_pak_resource *res, size_t n, ra_writer *w, ra_error *err)
{
    if (n > 1u << 20) return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "", "pak writer: too many resources");
    /* the stored bytes first (compressed where asked), then the layout */
    uint8_t **stored = ra_calloc(n ? n : 1, sizeof *stored);
    size_t *len = ra_calloc(n ? n : 1, sizeof *len);
    bool ok = stored && len;
    for (size_t i = 0; ok && i < n; i++) {
        if (!res[i].compress) continue;
        uLongf cap = compressBound((uLong)res[i].size) + 4;
        ok = res[i].size <= UINT32_MAX && (stored[i] = ra_malloc(cap));
        if (!ok) break;
        uLongf zl = cap - 4;
        ok = compress2(stored[i] + 4, &zl, res[i].data, (uLong)res[i].size, Z_BEST_COMPRESSION) == Z_OK;
        uint32_t s = (uint32_t)res[i].size;
        stored[i][0] = (uint8_t)(s >> 24), stored[i][1] = (uint8_t)(s >> 16), stored[i][2] = (uint8_t)(s >> 8);
        stored[i][3] = (uint8_t)s;
        len[i] = zl + 4;
    }
    size_t named = 0, names_bytes = 0;
    for (size_t i = 0; i < n; i++)
        if (res[i].name) named++, names_bytes += 12 + strlen(res[i].name);
    size_t table = 8 + 4 + names_bytes + 4 + 20 * n;
    size_t off = (table + 31) / 32 * 32;
    ok = ok && ra_wr_u32be(w, PAK_VERSION) && ra_wr_u32be(w, 0) && ra_wr_u32be(w, (uint32_t)named);
    for (size_t i = 0; ok && i < n; i++)
        if (res[i].name)
            ok = ra_wr_bytes(w, res[i].type, 4) && ra_wr_u32be(w, res[i].id) &&
                 ra_wr_u32be(w, (uint32_t)strlen(res[i].name)) && ra_wr_bytes(w, res[i].name, strlen(res[i].name));
    ok = ok && ra_wr_u32be(w, (uint32_t)n);
    for (size_t i = 0; ok && i < n; i++) {
        size_t s = stored[i] ? len[i] : res[i].size, padded = (s + 31) / 32 * 32;
        ok = off + padded <= UINT32_MAX && ra_wr_u32be(w, stored[i] != NULL) && ra_wr_bytes(w, res[i].type, 4) &&
             ra_wr_u32be(w, res[i].id) && ra_wr_u32be(w, (uint32_t)padded) && ra_wr_u32be(w, (uint32_t)off);
        off += padded;
    }
    ok = ok && pad32(w);
    for (size_t i = 0; ok && i < n; i++)
        ok = ra_wr_bytes(w, stored[i] ? stored[i] : res[i].data, stored[i] ? len[i] : res[i].size) && pad32(w);
    for (size_t i = 0; stored && i < n; i++) ra_free(stored[i]);
    ra_free(stored);
    ra_free(len);
    return ok ? RA_OK : ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "pak writer: out of memory or too large");
}
