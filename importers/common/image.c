/* Images: what the Nintendo 64 texel formats keep of an RGBA8 colour (with the
 * RDP's bit-replicating expansion), TLUT entries, colour-indexed pixels, row
 * flips, and a PNG encoder for 8-bit RGBA pixels (zlib deflates, per-row
 * filters chosen by the minimum-sum-of-absolute-differences heuristic). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "retroanim/ra_image.h"

/* ---- N64 texel formats ---------------------------------------------------------------- */

const char *ra_n64_format_name(ra_n64_format f)
{
    switch (f) {
    case RA_N64_RGBA16: return "RGBA16";
    case RA_N64_RGBA32: return "RGBA32";
    case RA_N64_CI4: return "CI4";
    case RA_N64_CI8: return "CI8";
    case RA_N64_IA4: return "IA4";
    case RA_N64_IA8: return "IA8";
    case RA_N64_IA16: return "IA16";
    case RA_N64_I4: return "I4";
    case RA_N64_I8: return "I8";
    }
    return "?";
}

/* 5 bits -> 8 bits, 4 bits -> 8 bits, 3 bits -> 8 bits by bit replication */
static uint8_t expand5(unsigned v) { return (uint8_t)((v << 3) | (v >> 2)); }
static uint8_t expand4(unsigned v) { return (uint8_t)(v * 17u); }
static uint8_t expand3(unsigned v) { return (uint8_t)((v << 5) | (v << 2) | (v >> 1)); }
static uint8_t alpha1(unsigned a) { return a >= 128u ? 255 : 0; }

/* round(0.299 R + 0.587 G + 0.114 B), halves up, exact in integers */
static unsigned intensity(const uint8_t *p)
{
    unsigned i = (299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u;
    return i > 255u ? 255u : i;
}

static void set_ia(uint8_t *p, unsigned i, unsigned a)
{
    p[0] = p[1] = p[2] = (uint8_t)i;
    p[3] = (uint8_t)a;
}

void ra_n64_quantize(uint8_t *rgba, size_t pixels, ra_n64_format f)
{
    for (size_t k = 0; k < pixels; k++) {
        uint8_t *p = rgba + 4 * k;
        switch (f) {
        case RA_N64_RGBA16:
            for (int c = 0; c < 3; c++) p[c] = expand5((unsigned)p[c] >> 3);
            p[3] = alpha1(p[3]);
            break;
        case RA_N64_IA16: set_ia(p, intensity(p), p[3]); break;
        case RA_N64_IA8: set_ia(p, expand4(intensity(p) >> 4), expand4((unsigned)p[3] >> 4)); break;
        case RA_N64_IA4: set_ia(p, expand3(intensity(p) >> 5), alpha1(p[3])); break;
        case RA_N64_I8: {
            unsigned i = intensity(p);
            set_ia(p, i, i);
            break;
        }
        case RA_N64_I4: {
            unsigned i = expand4(intensity(p) >> 4);
            set_ia(p, i, i);
            break;
        }
        case RA_N64_RGBA32:
        case RA_N64_CI4:
        case RA_N64_CI8:
        default: return;
        }
    }
}

void ra_n64_tlut_entry(uint16_t v, bool ia16, uint8_t out[4])
{
    if (ia16) {
        out[0] = out[1] = out[2] = (uint8_t)(v >> 8);
        out[3] = (uint8_t)(v & 0xFFu);
        return;
    }
    out[0] = expand5((unsigned)(v >> 11) & 31u);
    out[1] = expand5((unsigned)(v >> 6) & 31u);
    out[2] = expand5((unsigned)(v >> 1) & 31u);
    out[3] = (v & 1u) ? 255 : 0;
}

ra_status ra_n64_decode_ci(const uint32_t *packed, size_t words, uint32_t width, uint32_t height, bool ci4,
                           uint32_t tlut_bank, const uint8_t (*palette)[4], size_t palette_count, uint8_t *out,
                           const char *format_id, uint64_t base_offset, ra_error *err)
{
    if (width == 0 || height == 0) return RA_OK;
    if ((size_t)height > SIZE_MAX / 4 / width)
        return ra_fail(err, RA_ERR_LIMIT, format_id, base_offset, "pixels", "a %ux%u image is too large", width,
                       height);
    size_t count = (size_t)width * height;
    unsigned per_word = ci4 ? 8u : 4u;
    size_t needed = count / per_word + (size_t)(count % per_word != 0);
    if (words < needed)
        return ra_fail(err, RA_ERR_TRUNCATED, format_id, base_offset + 4 * (uint64_t)words, "pixels",
                       "truncated: a %ux%u %s image needs %zu words, %zu present", width, height, ci4 ? "CI4" : "CI8",
                       needed, words);
    uint64_t bank_base = ci4 ? (uint64_t)tlut_bank * 16u : 0;
    unsigned bits = ci4 ? 4u : 8u, mask = ci4 ? 0xFu : 0xFFu;
    size_t k = 0; /* pixel position in the packed data: rows from the bottom */
    for (uint32_t row = 0; row < height; row++) {
        uint8_t *dst = out + ((size_t)(height - 1 - row) * width) * 4;
        for (uint32_t x = 0; x < width; x++, k++) {
            size_t w = k / per_word;
            unsigned shift = 32u - bits * (unsigned)(k % per_word + 1);
            uint64_t index = bank_base + ((packed[w] >> shift) & mask);
            if (index >= palette_count)
                return ra_fail(err, RA_ERR_BAD_VALUE, format_id, base_offset + 4 * (uint64_t)w, "pixel index",
                               "pixel (%u, %u) uses palette entry %llu of a %zu-entry palette", x, row,
                               (unsigned long long)index, palette_count);
            memcpy(dst + 4 * (size_t)x, palette[(size_t)index], 4);
        }
    }
    return RA_OK;
}

void ra_image_flip_rows(uint8_t *rgba, uint32_t width, uint32_t height)
{
    size_t stride = (size_t)width * 4;
    for (uint32_t top = 0, bottom = height ? height - 1 : 0; top < bottom; top++, bottom--) {
        uint8_t *a = rgba + (size_t)top * stride, *b = rgba + (size_t)bottom * stride;
        for (size_t i = 0; i < stride; i++) {
            uint8_t t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
}

/* ---- PNG -------------------------------------------------------------------------------- */

static const char *const PNG_ID = "png";

static void put_u32be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* The CRC of a chunk's type and data (at p, 4 + n bytes); crc32 takes at most UINT_MAX bytes a call. */
static uint32_t chunk_crc(const uint8_t *p, size_t n)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        uInt part = n > UINT_MAX ? UINT_MAX : (uInt)n;
        crc = crc32(crc, p, part);
        p += part;
        n -= part;
    }
    return (uint32_t)crc;
}

/* Writes a chunk's length and type at p; the caller puts the data after them. */
static void chunk_begin(uint8_t *p, uint32_t length, const char type[4])
{
    put_u32be(p, length);
    memcpy(p + 4, type, 4);
}

/* Writes the CRC after the chunk that starts at p; returns the chunk's total size. */
static size_t chunk_end(uint8_t *p, uint32_t length)
{
    put_u32be(p + 8 + length, chunk_crc(p + 4, 4 + (size_t)length));
    return 12 + (size_t)length;
}

static uint8_t paeth(uint8_t a, uint8_t b, uint8_t c)
{
    int p = (int)a + (int)b - (int)c;
    int pa = abs(p - (int)a), pb = abs(p - (int)b), pc = abs(p - (int)c);
    if (pa <= pb && pa <= pc) return a;
    return pb <= pc ? b : c;
}

/* The filtered byte for PNG filter type t (0 None, 1 Sub, 2 Up, 4 Paeth; 3, Average, is not used): x is the byte,
 * a the one 4 bytes to its left, b the one above, c the one above a (0 outside the image). */
static uint8_t filter_byte(unsigned t, uint8_t x, uint8_t a, uint8_t b, uint8_t c)
{
    switch (t) {
    case 1: return (uint8_t)(x - a);
    case 2: return (uint8_t)(x - b);
    case 4: return (uint8_t)(x - paeth(a, b, c));
    default: return x;
    }
}

/* Filters one row of n bytes (prev is the row above, NULL for the first) into dst: the filter byte, then the
 * bytes of the filter whose output has the smallest sum of |signed byte| (the lowest type on a tie). */
static void filter_row(const uint8_t *row, const uint8_t *prev, size_t n, uint8_t *dst)
{
    static const unsigned types[4] = {0, 1, 2, 4};
    uint64_t sum[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint8_t a = i >= 4 ? row[i - 4] : 0, b = prev ? prev[i] : 0, c = prev && i >= 4 ? prev[i - 4] : 0;
        for (unsigned k = 0; k < 4; k++) {
            uint8_t f = filter_byte(types[k], row[i], a, b, c);
            sum[k] += f < 128 ? f : 256u - f;
        }
    }
    unsigned best = 0;
    for (unsigned k = 1; k < 4; k++)
        if (sum[k] < sum[best]) best = k;
    best = types[best];
    dst[0] = (uint8_t)best;
    for (size_t i = 0; i < n; i++) {
        uint8_t a = i >= 4 ? row[i - 4] : 0, b = prev ? prev[i] : 0, c = prev && i >= 4 ? prev[i - 4] : 0;
        dst[1 + i] = filter_byte(best, row[i], a, b, c);
    }
}

ra_status ra_png_encode(const uint8_t *rgba, uint32_t width, uint32_t height, uint8_t **out, size_t *size,
                        ra_error *err)
{
    *out = NULL;
    *size = 0;
    if (width == 0 || height == 0 || width > 65535 || height > 65535)
        return ra_fail(err, RA_ERR_LIMIT, PNG_ID, RA_NO_OFFSET, "size",
                       "a PNG of %ux%u pixels: each side must be 1 to 65535", width, height);
    /* the filtered rows: each a filter byte and width * 4 bytes; both deflate's input and its bound must fit a uLong
     * and a size_t (halving the limits leaves room for compressBound's margin) */
    uint64_t row_bytes = (uint64_t)width * 4, raw64 = (row_bytes + 1) * height;
    uint64_t limit = SIZE_MAX < ULONG_MAX ? SIZE_MAX : ULONG_MAX;
    if (raw64 > limit / 2)
        return ra_fail(err, RA_ERR_LIMIT, PNG_ID, RA_NO_OFFSET, "size",
                       "a PNG of %ux%u pixels is too large for this build", width, height);
    size_t raw_size = (size_t)raw64, stride = (size_t)row_bytes;
    uLong bound = compressBound((uLong)raw_size);
    size_t head = 8 + 25 + 8; /* signature, IHDR chunk, IDAT length and type */
    if ((uint64_t)bound > limit - head - 12 - 12)
        return ra_fail(err, RA_ERR_LIMIT, PNG_ID, RA_NO_OFFSET, "size",
                       "a PNG of %ux%u pixels is too large for this build", width, height);

    uint8_t *raw = ra_malloc(raw_size);
    if (!raw) return ra_fail_nomem(err, PNG_ID);
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *row = rgba + (size_t)y * stride;
        filter_row(row, y ? row - stride : NULL, stride, raw + (size_t)y * (stride + 1));
    }
    size_t cap = head + (size_t)bound + 4 + 12; /* + IDAT CRC, IEND */
    uint8_t *png = ra_malloc(cap);
    if (!png) {
        ra_free(raw);
        return ra_fail_nomem(err, PNG_ID);
    }
    uLongf zlen = bound;
    int zr = compress2(png + head, &zlen, raw, (uLong)raw_size, 6);
    ra_free(raw);
    if (zr != Z_OK) {
        ra_free(png);
        if (zr == Z_MEM_ERROR) return ra_fail_nomem(err, PNG_ID);
        return ra_fail(err, RA_ERR_LIMIT, PNG_ID, RA_NO_OFFSET, "IDAT", "zlib's compress2 failed (%d)", zr);
    }
    if (zlen > 0x7FFFFFFFu) {
        ra_free(png);
        return ra_fail(err, RA_ERR_LIMIT, PNG_ID, RA_NO_OFFSET, "IDAT",
                       "the compressed pixels (%lu bytes) exceed a PNG chunk's 2^31 - 1 bytes", (unsigned long)zlen);
    }
    uint32_t idat_len = (uint32_t)zlen;

    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    size_t at = 0;
    memcpy(png, signature, 8);
    at += 8;
    uint8_t *ihdr = png + at;
    chunk_begin(ihdr, 13, "IHDR");
    put_u32be(ihdr + 8, width);
    put_u32be(ihdr + 12, height);
    ihdr[16] = 8; /* bit depth */
    ihdr[17] = 6; /* colour type: RGBA */
    ihdr[18] = 0; /* compression: deflate */
    ihdr[19] = 0; /* filter method: adaptive */
    ihdr[20] = 0; /* no interlace */
    at += chunk_end(ihdr, 13);
    chunk_begin(png + at, idat_len, "IDAT"); /* the data is in place already (head) */
    at += chunk_end(png + at, idat_len);
    chunk_begin(png + at, 0, "IEND");
    at += chunk_end(png + at, 0);

    /* give back the unused part of deflate's bound; the larger block stays valid if that fails */
    uint8_t *shrunk = ra_realloc(png, at);
    *out = shrunk ? shrunk : png;
    *size = at;
    return RA_OK;
}
