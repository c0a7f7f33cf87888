/* Metroid Prime 1/2 TXTR (GameCube texture): the header, the palette of the
 * colour-indexed formats and level 0 decoded to RGBA8.
 * docs/formats/metroid_prime.md §13.4.
 *
 *   u32 format, u16 width, u16 height, u32 mip count
 *   C4/C8: u32 palette format, u16 w, u16 h, w*h u16 entries
 *   level 0, 1, ...: GX tiles left to right, top to bottom, texels row-major
 * Only level 0 is read: later levels may be cut short (Echoes) and the game
 * sizes them by its own rounding. */
#include <string.h>

#include "mp_internal.h"

#define FMT "metroid_txtr"

enum {
    TX_I4 = 0,
    TX_I8,
    TX_IA4,
    TX_IA8,
    TX_C4,
    TX_C8,
    TX_C14X2,
    TX_RGB565,
    TX_RGB5A3,
    TX_RGBA8,
    TX_CMPR
};

const char *mp_txtr_format_name(uint32_t f)
{
    static const char *const names[] = {"I4",    "I8",     "IA4",    "IA8",   "C4",  "C8",
                                        "C14X2", "RGB565", "RGB5A3", "RGBA8", "CMPR"};
    return f < sizeof names / sizeof names[0] ? names[f] : "?";
}

/* tile width and height in texels, bytes per tile */
static void tile_of(uint32_t f, uint32_t *tw, uint32_t *th, uint32_t *bytes)
{
    *bytes = 32;
    switch (f) {
    case TX_I4:
    case TX_C4:
    case TX_CMPR: *tw = 8, *th = 8; break;
    case TX_I8:
    case TX_IA4:
    case TX_C8: *tw = 8, *th = 4; break;
    case TX_RGBA8: *tw = 4, *th = 4, *bytes = 64; break;
    default: *tw = 4, *th = 4; break;
    }
}

/* bit replication (GX) */
static uint8_t x3(uint32_t v) { return (uint8_t)((v << 5) | (v << 2) | (v >> 1)); }
static uint8_t x4(uint32_t v) { return (uint8_t)(v * 0x11); }
static uint8_t x5(uint32_t v) { return (uint8_t)((v << 3) | (v >> 2)); }
static uint8_t x6(uint32_t v) { return (uint8_t)((v << 2) | (v >> 4)); }

static void rgb565(uint16_t v, uint8_t *o)
{
    o[0] = x5(v >> 11 & 31), o[1] = x6(v >> 5 & 63), o[2] = x5(v & 31), o[3] = 255;
}

static void rgb5a3(uint16_t v, uint8_t *o)
{
    if (v & 0x8000) {
        o[0] = x5(v >> 10 & 31), o[1] = x5(v >> 5 & 31), o[2] = x5(v & 31), o[3] = 255;
    } else {
        o[3] = x3(v >> 12 & 7), o[0] = x4(v >> 8 & 15), o[1] = x4(v >> 4 & 15), o[2] = x4(v & 15);
    }
}

/* a palette entry: IA8 entries are intensity then alpha (the reverse of IA8 texels) */
static void palette_entry(uint32_t pf, uint16_t v, uint8_t *o)
{
    if (pf == 0) o[0] = o[1] = o[2] = (uint8_t)(v >> 8), o[3] = (uint8_t)v;
    else if (pf == 1) rgb565(v, o);
    else rgb5a3(v, o);
}

static void put(mp_txtr *t, uint32_t x, uint32_t y, const uint8_t *c)
{
    if (x < t->width && y < t->height) memcpy(t->rgba + 4 * ((size_t)y * t->width + x), c, 4);
}

/* One CMPR 4x4 sub-block (8 bytes) at (x0, y0). */
static void cmpr_block(mp_txtr *t, const uint8_t *b, uint32_t x0, uint32_t y0)
{
    uint16_t c0 = ra_load_u16be(b), c1 = ra_load_u16be(b + 2);
    uint8_t p[4][4];
    rgb565(c0, p[0]);
    rgb565(c1, p[1]);
    for (int k = 0; k < 3; k++) {
        if (c0 > c1) {
            p[2][k] = (uint8_t)((2 * p[0][k] + p[1][k]) / 3);
            p[3][k] = (uint8_t)((p[0][k] + 2 * p[1][k]) / 3);
        } else {
            p[2][k] = (uint8_t)((p[0][k] + p[1][k]) / 2);
            p[3][k] = 0;
        }
    }
    p[2][3] = 255;
    p[3][3] = c0 > c1 ? 255 : 0;
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t c = 0; c < 4; c++) put(t, x0 + c, y0 + r, p[b[4 + r] >> (6 - 2 * c) & 3]);
}

/* One tile at (x0, y0) from p. */
static void decode_tile(mp_txtr *t, const uint8_t *p, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th,
                        const uint8_t (*pal)[4])
{
    uint8_t c[4];
    if (t->format == TX_CMPR) {
        for (uint32_t k = 0; k < 4; k++) cmpr_block(t, p + 8 * k, x0 + (k & 1) * 4, y0 + (k >> 1) * 4);
        return;
    }
    for (uint32_t y = 0; y < th; y++)
        for (uint32_t x = 0; x < tw; x++) {
            uint32_t i = y * tw + x;
            switch (t->format) {
            case TX_I4: {
                uint32_t v = p[i / 2] >> (i & 1 ? 0 : 4) & 15;
                c[0] = c[1] = c[2] = x4(v), c[3] = 255;
                break;
            }
            case TX_I8: c[0] = c[1] = c[2] = p[i], c[3] = 255; break;
            case TX_IA4: c[0] = c[1] = c[2] = x4(p[i] & 15), c[3] = x4(p[i] >> 4); break;
            case TX_IA8: c[3] = p[2 * i], c[0] = c[1] = c[2] = p[2 * i + 1]; break;
            case TX_C4: memcpy(c, pal[p[i / 2] >> (i & 1 ? 0 : 4) & 15], 4); break;
            case TX_C8: memcpy(c, pal[p[i]], 4); break;
            case TX_RGB565: rgb565(ra_load_u16be(p + 2 * i), c); break;
            case TX_RGB5A3: rgb5a3(ra_load_u16be(p + 2 * i), c); break;
            default: /* RGBA8: (A,R) pairs, then (G,B) pairs */
                c[3] = p[2 * i], c[0] = p[2 * i + 1], c[1] = p[32 + 2 * i], c[2] = p[32 + 2 * i + 1];
                break;
            }
            put(t, x0 + x, y0 + y, c);
        }
}

ra_status mp_txtr_read(const uint8_t *data, size_t size, ra_arena *ar, mp_txtr *out, ra_error *err)
{
    memset(out, 0, sizeof *out);
    ra_cursor c;
    ra_cursor_init(&c, data, size, FMT, err);
    uint16_t w = 0, h = 0;
    ra_rd_u32be(&c, &out->format, "format");
    ra_rd_u16be(&c, &w, "width");
    ra_rd_u16be(&c, &h, "height");
    ra_rd_u32be(&c, &out->mips, "mip_count");
    if (!ra_cursor_ok(&c)) return err->code;
    if (out->format == TX_C14X2)
        return ra_fail(err, RA_ERR_UNSUPPORTED, FMT, 0, "format",
                       "C14X2 (14-bit palette indices) is not supported: no game texture is known to use it");
    if (out->format > TX_CMPR)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 0, "format", "texture format %u (GX formats are 0..10)",
                       out->format);
    if (!w || !h) return ra_fail(err, RA_ERR_BAD_VALUE, FMT, w ? 6 : 4, w ? "height" : "width", "a size of 0");
    if (!out->mips) return ra_fail(err, RA_ERR_BAD_VALUE, FMT, 8, "mip_count", "no image level");
    out->width = w, out->height = h;
    uint8_t pal[256][4];
    memset(pal, 0, sizeof pal);
    if (out->format == TX_C4 || out->format == TX_C8) {
        uint16_t pw = 0, ph = 0;
        size_t at = c.pos;
        ra_rd_u32be(&c, &out->palette_format, "palette.format");
        ra_rd_u16be(&c, &pw, "palette.width");
        ra_rd_u16be(&c, &ph, "palette.height");
        if (!ra_cursor_ok(&c)) return err->code;
        if (out->palette_format > 2)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at, "palette.format",
                           "palette format %u (0 IA8, 1 RGB565, 2 RGB5A3)", out->palette_format);
        uint32_t want = out->format == TX_C4 ? 16 : 256;
        if ((uint32_t)pw * ph != want)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, at + 4, "palette.width",
                           "a %ux%u palette for %s (it needs %u entries)", pw, ph, mp_txtr_format_name(out->format),
                           want);
        for (uint32_t i = 0; i < want; i++) {
            uint16_t v = 0;
            if (!ra_rd_u16be(&c, &v, "palette.entries")) return err->code;
            palette_entry(out->palette_format, v, pal[i]);
        }
        out->has_palette = true;
    }
    uint32_t tw, th, tb;
    tile_of(out->format, &tw, &th, &tb);
    uint64_t tiles_x = (w + tw - 1) / tw, tiles_y = (h + th - 1) / th, need = tiles_x * tiles_y * tb;
    if (need > ra_cursor_left(&c))
        return ra_fail(err, RA_ERR_TRUNCATED, FMT, c.pos, "level0",
                       "level 0 (%ux%u %s) needs %llu bytes of tiles, %zu are left", w, h,
                       mp_txtr_format_name(out->format), (unsigned long long)need, ra_cursor_left(&c));
    out->rgba = ra_arena_array_uninit(ar, (size_t)w * h, 4);
    if (!out->rgba) return ra_fail_nomem(err, FMT);
    const uint8_t *p = ra_cursor_take(&c, (size_t)need, "level0");
    for (uint32_t ty = 0; ty < tiles_y; ty++)
        for (uint32_t tx = 0; tx < tiles_x; tx++, p += tb)
            decode_tile(out, p, tx * tw, ty * th, tw, th, (const uint8_t(*)[4])pal);
    return RA_OK;
}
