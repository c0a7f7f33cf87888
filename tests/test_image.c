/* Tests of the image helpers: N64 texel quantisation and TLUT entries, colour-
 * indexed decoding, row flips, and the PNG encoder (parsed back here: chunks,
 * CRCs, inflate, the four unfilter rules). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ra_test.h"
#include "retroanim/ra_image.h"

/* Quantises one pixel and checks the result. */
static void check_q(ra_n64_format f, uint8_t r, uint8_t g, uint8_t b, uint8_t a, uint8_t er, uint8_t eg, uint8_t eb,
                    uint8_t ea)
{
    uint8_t p[4] = {r, g, b, a};
    ra_n64_quantize(p, 1, f);
    CHECK(p[0] == er && p[1] == eg && p[2] == eb && p[3] == ea, "%s (%u,%u,%u,%u) -> (%u,%u,%u,%u), want (%u,%u,%u,%u)",
          ra_n64_format_name(f), r, g, b, a, p[0], p[1], p[2], p[3], er, eg, eb, ea);
}

static void test_format_names(void)
{
    CHECK(strcmp(ra_n64_format_name(RA_N64_RGBA16), "RGBA16") == 0, "RGBA16");
    CHECK(strcmp(ra_n64_format_name(RA_N64_RGBA32), "RGBA32") == 0, "RGBA32");
    CHECK(strcmp(ra_n64_format_name(RA_N64_CI4), "CI4") == 0, "CI4");
    CHECK(strcmp(ra_n64_format_name(RA_N64_CI8), "CI8") == 0, "CI8");
    CHECK(strcmp(ra_n64_format_name(RA_N64_IA4), "IA4") == 0, "IA4");
    CHECK(strcmp(ra_n64_format_name(RA_N64_IA8), "IA8") == 0, "IA8");
    CHECK(strcmp(ra_n64_format_name(RA_N64_IA16), "IA16") == 0, "IA16");
    CHECK(strcmp(ra_n64_format_name(RA_N64_I4), "I4") == 0, "I4");
    CHECK(strcmp(ra_n64_format_name(RA_N64_I8), "I8") == 0, "I8");
    CHECK(strcmp(ra_n64_format_name((ra_n64_format)99), "?") == 0, "out of range");
}

static void test_quantize(void)
{
    /* RGBA16: 5 bits a colour, v = x >> 3, back to (v << 3) | (v >> 2); alpha >= 128 -> 255.
     * (255,128,7,200): 255>>3 = 31 -> 248|7 = 255; 128>>3 = 16 -> 128|4 = 132; 7>>3 = 0 -> 0; 200 >= 128 -> 255 */
    check_q(RA_N64_RGBA16, 255, 128, 7, 200, 255, 132, 0, 255);
    /* (8,127,100,127): 8>>3 = 1 -> 8|0 = 8; 127>>3 = 15 -> 120|3 = 123; 100>>3 = 12 -> 96|3 = 99; 127 < 128 -> 0 */
    check_q(RA_N64_RGBA16, 8, 127, 100, 127, 8, 123, 99, 0);
    /* (0,0,0,128): alpha exactly 128 -> 255; (7,15,23,0): 7>>3 = 0 -> 0, 15>>3 = 1 -> 8, 23>>3 = 2 -> 16|0 = 16 */
    check_q(RA_N64_RGBA16, 0, 0, 0, 128, 0, 0, 0, 255);
    check_q(RA_N64_RGBA16, 7, 15, 23, 0, 0, 8, 16, 0);

    /* RGBA32 keeps everything */
    check_q(RA_N64_RGBA32, 1, 2, 3, 4, 1, 2, 3, 4);
    check_q(RA_N64_RGBA32, 255, 128, 7, 200, 255, 128, 7, 200);

    /* intensity I = round(0.299 R + 0.587 G + 0.114 B):
     *  (100,150,200): 29.9 + 88.05 + 22.8 = 140.75 -> 141
     *  (255,0,0): 76.245 -> 76;  (0,255,0): 149.685 -> 150;  (0,0,255): 29.07 -> 29
     *  (0,0,250): 28.5 exactly -> 29 (halves up);  (255,255,255): 255 */
    /* IA16: I in R, G, B; alpha kept */
    check_q(RA_N64_IA16, 100, 150, 200, 77, 141, 141, 141, 77);
    check_q(RA_N64_IA16, 255, 0, 0, 0, 76, 76, 76, 0);
    check_q(RA_N64_IA16, 0, 255, 0, 255, 150, 150, 150, 255);
    check_q(RA_N64_IA16, 0, 0, 255, 1, 29, 29, 29, 1);
    check_q(RA_N64_IA16, 0, 0, 250, 2, 29, 29, 29, 2);
    check_q(RA_N64_IA16, 255, 255, 255, 255, 255, 255, 255, 255);

    /* IA8: 4 + 4 bits, v*17.  (100,150,200,77): I = 141, 141>>4 = 8 -> 136; 77>>4 = 4 -> 68 */
    check_q(RA_N64_IA8, 100, 150, 200, 77, 136, 136, 136, 68);
    /* (255,255,255,255): 15*17 = 255 both;  (255,0,0,15): I = 76, 76>>4 = 4 -> 68; 15>>4 = 0 -> 0 */
    check_q(RA_N64_IA8, 255, 255, 255, 255, 255, 255, 255, 255);
    check_q(RA_N64_IA8, 255, 0, 0, 15, 68, 68, 68, 0);

    /* IA4: 3 bits intensity, (v<<5)|(v<<2)|(v>>1); 1 bit alpha.
     * (100,150,200,77): 141>>5 = 4 -> 128|16|2 = 146; 77 < 128 -> 0 */
    check_q(RA_N64_IA4, 100, 150, 200, 77, 146, 146, 146, 0);
    /* the whole 3-bit table: v = 0..7 -> 0, 36 (32|4|0), 73 (64|8|1), 109 (96|12|1), 146 (128|16|2),
     * 182 (160|20|2), 219 (192|24|3), 255 (224|28|3).  A grey (g,g,g) has I = g exactly; g = 32v + 5 gives v. */
    static const uint8_t ia4_table[8] = {0, 36, 73, 109, 146, 182, 219, 255};
    for (unsigned v = 0; v < 8; v++) {
        uint8_t g = (uint8_t)(32 * v + 5), e = ia4_table[v];
        check_q(RA_N64_IA4, g, g, g, 200, e, e, e, 255);
    }

    /* I8: alpha = intensity.  (255,0,0,9): I = 76;  (0,255,0,0): 150;  (100,150,200,77): 141 */
    check_q(RA_N64_I8, 255, 0, 0, 9, 76, 76, 76, 76);
    check_q(RA_N64_I8, 0, 255, 0, 0, 150, 150, 150, 150);
    check_q(RA_N64_I8, 100, 150, 200, 77, 141, 141, 141, 141);
    /* I4: 4 bits, v*17 = 0, 17, 34, ..., 255; a grey g = 16v + 3 gives v (g>>4 = v) */
    for (unsigned v = 0; v < 16; v++) {
        uint8_t g = (uint8_t)(16 * v + 3), e = (uint8_t)(17 * v);
        check_q(RA_N64_I4, g, g, g, 0, e, e, e, e);
    }
    /* (100,150,200,77): 141>>4 = 8 -> 136 everywhere */
    check_q(RA_N64_I4, 100, 150, 200, 77, 136, 136, 136, 136);

    /* CI4/CI8: colours from a palette, left alone */
    check_q(RA_N64_CI4, 255, 128, 7, 200, 255, 128, 7, 200);
    check_q(RA_N64_CI8, 3, 5, 250, 1, 3, 5, 250, 1);

    /* several pixels at once: every pixel is done, nothing past the count */
    uint8_t px[12] = {255, 128, 7, 200, 8, 127, 100, 127, 1, 2, 3, 4};
    ra_n64_quantize(px, 2, RA_N64_RGBA16);
    static const uint8_t want[12] = {255, 132, 0, 255, 8, 123, 99, 0, 1, 2, 3, 4};
    CHECK(memcmp(px, want, sizeof want) == 0, "two RGBA16 pixels, the third untouched");
}

static void check_tlut(uint16_t v, bool ia16, uint8_t er, uint8_t eg, uint8_t eb, uint8_t ea)
{
    uint8_t o[4] = {1, 2, 3, 4};
    ra_n64_tlut_entry(v, ia16, o);
    CHECK(o[0] == er && o[1] == eg && o[2] == eb && o[3] == ea, "%s 0x%04X -> (%u,%u,%u,%u), want (%u,%u,%u,%u)",
          ia16 ? "IA16" : "RGBA16", v, o[0], o[1], o[2], o[3], er, eg, eb, ea);
}

static void test_tlut(void)
{
    /* 0xF801 = 11111 00000 00000 1: r 31 -> 255, a 1 */
    check_tlut(0xF801, false, 255, 0, 0, 255);
    /* 0x07C0 = 00000 11111 00000 0: g 31 -> 255, a 0 */
    check_tlut(0x07C0, false, 0, 255, 0, 0);
    /* 0x003E = 00000 00000 11111 0: b 31 */
    check_tlut(0x003E, false, 0, 0, 255, 0);
    check_tlut(0xFFFF, false, 255, 255, 255, 255);
    check_tlut(0x0000, false, 0, 0, 0, 0);
    /* r 16, g 8, b 4, a 0: 16<<11 | 8<<6 | 4<<1 = 0x8000 | 0x0200 | 0x0008 = 0x8208;
     * 16 -> 128|4 = 132, 8 -> 64|2 = 66, 4 -> 32|1 = 33 */
    check_tlut(0x8208, false, 132, 66, 33, 0);
    /* IA16: high byte intensity, low byte alpha */
    check_tlut(0x80FF, true, 128, 128, 128, 255);
    check_tlut(0x1234, true, 0x12, 0x12, 0x12, 0x34);
    check_tlut(0xFF00, true, 255, 255, 255, 0);
}

/* checks pixel i of out (rows from the top) against palette entry e */
static void check_px(const uint8_t *out, size_t i, const uint8_t (*pal)[4], size_t e, const char *what)
{
    CHECK(memcmp(out + 4 * i, pal[e], 4) == 0, "%s: pixel %zu is (%u,%u,%u,%u), want entry %zu", what, i, out[4 * i],
          out[4 * i + 1], out[4 * i + 2], out[4 * i + 3], e);
}

static void test_decode_ci(void)
{
    uint8_t pal[256][4];
    for (unsigned i = 0; i < 256; i++) {
        pal[i][0] = (uint8_t)i;
        pal[i][1] = (uint8_t)(255 - i);
        pal[i][2] = (uint8_t)(i ^ 0x55);
        pal[i][3] = (uint8_t)(i * 7);
    }
    const uint8_t(*cpal)[4] = (const uint8_t(*)[4])pal;
    ra_error e;
    uint8_t out[4 * 16];

    /* CI4 3x2: the bottom row (stored first) uses 1,2,3, the top row 4,5,15; two padding nibbles.
     * nibbles 1 2 3 4 5 F 0 0 -> 0x12345F00.  Out, rows from the top: 4,5,15 then 1,2,3. */
    const uint32_t ci4[1] = {0x12345F00u};
    memset(out, 0xEE, sizeof out);
    ra_error_clear(&e);
    ra_status st = ra_n64_decode_ci(ci4, 1, 3, 2, true, 0, cpal, 16, out, "niff", 0, &e);
    CHECK(st == RA_OK && e.code == RA_OK, "CI4 3x2: %d %s", st, e.msg);
    static const size_t want4[6] = {4, 5, 15, 1, 2, 3};
    for (size_t i = 0; i < 6; i++) check_px(out, i, cpal, want4[i], "CI4 3x2");
    CHECK(out[24] == 0xEE, "nothing written past 3x2 pixels");

    /* CI8 2x3, bank 3 ignored: 6 indices in two words 0x01020304 0x05060000; rows from the bottom (1,2), (3,4), (5,6);
     * out from the top: 5,6,3,4,1,2.  The 7-entry palette would refuse 3*16 + anything. */
    const uint32_t ci8[2] = {0x01020304u, 0x05060000u};
    ra_error_clear(&e);
    st = ra_n64_decode_ci(ci8, 2, 2, 3, false, 3, cpal, 7, out, "niff", 0, &e);
    CHECK(st == RA_OK, "CI8 2x3: %d %s", st, e.msg);
    static const size_t want8[6] = {5, 6, 3, 4, 1, 2};
    for (size_t i = 0; i < 6; i++) check_px(out, i, cpal, want8[i], "CI8 2x3");

    /* CI4 bank 1 of a 256-colour palette: indices 0 and 15 -> entries 16 and 31; bank 15 -> 240 and 255 */
    const uint32_t bank[1] = {0x0F000000u};
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bank, 1, 2, 1, true, 1, cpal, 256, out, "niff", 0, &e);
    CHECK(st == RA_OK, "CI4 bank 1: %d %s", st, e.msg);
    check_px(out, 0, cpal, 16, "bank 1");
    check_px(out, 1, cpal, 31, "bank 1");
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bank, 1, 2, 1, true, 15, cpal, 256, out, "niff", 0, &e);
    CHECK(st == RA_OK, "CI4 bank 15: %d %s", st, e.msg);
    check_px(out, 0, cpal, 240, "bank 15");
    check_px(out, 1, cpal, 255, "bank 15");
    /* bank 16 would be entries 256 and 271: past the palette, in word 0 (offset 40) */
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bank, 1, 2, 1, true, 16, cpal, 256, out, "niff", 40, &e);
    CHECK(st == RA_ERR_BAD_VALUE && e.offset == 40 && strcmp(e.field, "pixel index") == 0, "bank 16: %d at %llu (%s)",
          st, (unsigned long long)e.offset, e.field);
    /* a huge bank must not wrap around */
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bank, 1, 2, 1, true, 0x10000000u, cpal, 256, out, "niff", 0, &e);
    CHECK(st == RA_ERR_BAD_VALUE, "bank 2^28: %d", st);

    /* an index past the palette: 3x3 CI4 (9 pixels, 2 words) with a 10-entry palette; pixel 8 (the first nibble of
     * word 1) is 0xC = 12 >= 10.  Word 1 sits at base 100 + 4 = 104. */
    const uint32_t bad[2] = {0x01234567u, 0xC0000000u};
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bad, 2, 3, 3, true, 0, cpal, 10, out, "niff", 100, &e);
    CHECK(st == RA_ERR_BAD_VALUE && e.code == RA_ERR_BAD_VALUE, "index past the palette: %d", st);
    CHECK(e.offset == 104, "offset %llu, want 104", (unsigned long long)e.offset);
    CHECK(strcmp(e.field, "pixel index") == 0, "field '%s'", e.field);
    CHECK(e.format && strcmp(e.format, "niff") == 0, "format '%s'", e.format ? e.format : "(null)");
    /* the boundary: with 12 entries index 12 is one past the end and fails; with 13 entries the words pass */
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bad, 2, 3, 3, true, 0, cpal, 12, out, "niff", 100, &e);
    CHECK(st == RA_ERR_BAD_VALUE && e.offset == 104, "index 12 of 12 entries: %d at %llu", st,
          (unsigned long long)e.offset);
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bad, 2, 3, 3, true, 0, cpal, 13, out, "niff", 100, &e);
    CHECK(st == RA_OK, "13 entries are enough: %d %s", st, e.msg);
    /* CI8: 4 pixels in word 0, index 0x67 = 103 in the last byte of word 0 at base 8 */
    const uint32_t bad8[1] = {0x01020367u};
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bad8, 1, 4, 1, false, 0, cpal, 100, out, "niff", 8, &e);
    CHECK(st == RA_ERR_BAD_VALUE && e.offset == 8 && strcmp(e.field, "pixel index") == 0, "CI8 past: %d at %llu", st,
          (unsigned long long)e.offset);

    /* too few words: 3x3 CI4 needs ceil(9/8) = 2 words; 5 CI8 pixels need ceil(5/4) = 2 */
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bad, 1, 3, 3, true, 0, cpal, 16, out, "niff", 0, &e);
    CHECK(st == RA_ERR_TRUNCATED && e.code == RA_ERR_TRUNCATED, "CI4 short: %d", st);
    ra_error_clear(&e);
    st = ra_n64_decode_ci(ci8, 1, 5, 1, false, 0, cpal, 16, out, "niff", 0, &e);
    CHECK(st == RA_ERR_TRUNCATED, "CI8 short: %d", st);
    /* exactly 8 CI4 pixels fit one word; 4 CI8 pixels too */
    ra_error_clear(&e);
    st = ra_n64_decode_ci(bad, 1, 8, 1, true, 0, cpal, 16, out, "niff", 0, &e);
    CHECK(st == RA_OK, "8 CI4 pixels in one word: %d %s", st, e.msg);
    ra_error_clear(&e);
    st = ra_n64_decode_ci(ci8, 1, 2, 2, false, 0, cpal, 16, out, "niff", 0, &e);
    CHECK(st == RA_OK, "4 CI8 pixels in one word: %d %s", st, e.msg);

    /* width*height*4 overflowing a size_t is refused before anything is read */
    if (sizeof(size_t) == 8) {
        ra_error_clear(&e);
        st = ra_n64_decode_ci(ci4, 1, 0xFFFFFFFFu, 0xFFFFFFFFu, true, 0, cpal, 16, out, "niff", 0, &e);
        CHECK(st == RA_ERR_LIMIT, "huge image: %d", st);
    }
}

static void test_flip(void)
{
    /* 2x3: byte k of row r is 8r + k; after the flip row 0 holds the old row 2 and row 2 the old row 0 */
    uint8_t img[24];
    for (unsigned i = 0; i < 24; i++) img[i] = (uint8_t)i;
    ra_image_flip_rows(img, 2, 3);
    bool ok = true;
    for (unsigned r = 0; r < 3; r++)
        for (unsigned k = 0; k < 8; k++) ok = ok && img[8 * r + k] == (uint8_t)(8 * (2 - r) + k);
    CHECK(ok, "2x3 flip: row 0 starts %u, row 2 starts %u", img[0], img[16]);
    ra_image_flip_rows(img, 2, 3);
    ok = true;
    for (unsigned i = 0; i < 24; i++) ok = ok && img[i] == i;
    CHECK(ok, "flipping twice restores the image");
    /* one row: nothing moves; no rows: nothing touched */
    ra_image_flip_rows(img, 6, 1);
    ok = true;
    for (unsigned i = 0; i < 24; i++) ok = ok && img[i] == i;
    CHECK(ok, "one row unchanged");
    ra_image_flip_rows(img, 2, 0);
    CHECK(img[0] == 0, "zero rows");
    /* 1x2: two pixels swap */
    uint8_t two[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ra_image_flip_rows(two, 1, 2);
    static const uint8_t two_want[8] = {5, 6, 7, 8, 1, 2, 3, 4};
    CHECK(memcmp(two, two_want, 8) == 0, "1x2 flip");
}

/* ---- PNG, read back ------------------------------------------------------------------- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t t_paeth(uint8_t a, uint8_t b, uint8_t c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc) return a;
    if (pb <= pc) return b;
    return c;
}

/* The sum of |signed byte| of row y filtered with type t (the encoder's heuristic, recomputed here). */
static unsigned long filter_cost(const uint8_t *rgba, uint32_t w, uint32_t y, unsigned t)
{
    size_t n = (size_t)w * 4;
    const uint8_t *row = rgba + y * n, *up = y ? row - n : NULL;
    unsigned long s = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t a = i >= 4 ? row[i - 4] : 0, b = up ? up[i] : 0, c = up && i >= 4 ? up[i - 4] : 0;
        uint8_t pred = t == 0 ? 0 : t == 1 ? a : t == 2 ? b : t == 3 ? (uint8_t)((a + b) / 2) : t_paeth(a, b, c);
        int v = (int8_t)(uint8_t)(row[i] - pred);
        s += (unsigned long)abs(v);
    }
    return s;
}

/* Parses a PNG made by ra_png_encode and compares its pixels with rgba.  Returns the number of rows whose filter
 * type is t in used[t]. */
static void check_png(const uint8_t *png, size_t size, const uint8_t *rgba, uint32_t w, uint32_t h, const char *what,
                      unsigned used[5])
{
    static const uint8_t sig[8] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
    CHECK(size >= 8 + 25 + 12 + 12, "%s: %zu bytes", what, size);
    if (size < 8 + 25 + 12 + 12) return;
    CHECK(memcmp(png, sig, 8) == 0, "%s: signature", what);
    size_t at = 8;
    const uint8_t *chunk[3] = {NULL, NULL, NULL};
    uint32_t len[3] = {0, 0, 0};
    static const char *const types[3] = {"IHDR", "IDAT", "IEND"};
    for (int k = 0; k < 3; k++) {
        CHECK(at + 12 <= size, "%s: chunk %d in the file", what, k);
        if (at + 12 > size) return;
        uint32_t n = be32(png + at);
        CHECK(n <= size - at - 12, "%s: chunk %d length %u", what, k, n);
        if (n > size - at - 12) return;
        CHECK(memcmp(png + at + 4, types[k], 4) == 0, "%s: chunk %d is %.4s, want %s", what, k,
              (const char *)(png + at + 4), types[k]);
        uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), png + at + 4, 4 + n);
        CHECK(be32(png + at + 8 + n) == crc, "%s: %s CRC %08X, recomputed %08X", what, types[k], be32(png + at + 8 + n),
              crc);
        chunk[k] = png + at + 8;
        len[k] = n;
        at += 12 + (size_t)n;
    }
    CHECK(at == size, "%s: %zu bytes after IEND", what, size - at);
    CHECK(len[0] == 13 && len[2] == 0, "%s: IHDR %u bytes, IEND %u", what, len[0], len[2]);
    const uint8_t *ih = chunk[0];
    CHECK(be32(ih) == w && be32(ih + 4) == h, "%s: IHDR %ux%u", what, be32(ih), be32(ih + 4));
    CHECK(ih[8] == 8 && ih[9] == 6 && ih[10] == 0 && ih[11] == 0 && ih[12] == 0,
          "%s: depth %u colour %u compression %u filter %u interlace %u", what, ih[8], ih[9], ih[10], ih[11], ih[12]);

    size_t stride = (size_t)w * 4, raw_size = (stride + 1) * h;
    uint8_t *raw = malloc(raw_size + 1);
    uint8_t *pix = malloc(stride * h);
    if (!raw || !pix) {
        free(raw);
        free(pix);
        CHECK(0, "%s: test out of memory", what);
        return;
    }
    /* one byte more than expected: inflating must produce exactly raw_size */
    uLongf got = (uLongf)(raw_size + 1);
    int zr = uncompress(raw, &got, chunk[1], len[1]);
    CHECK(zr == Z_OK && got == raw_size, "%s: uncompress %d, %lu bytes, want %zu", what, zr, (unsigned long)got,
          raw_size);
    if (zr != Z_OK || got != raw_size) {
        free(raw);
        free(pix);
        return;
    }
    /* undo the filters as the PNG specification numbers them: Recon(x) = Filt(x) + 0 / a / b / floor((a + b) / 2) /
     * Paeth(a, b, c) for 0 None / 1 Sub / 2 Up / 3 Average / 4 Paeth, a the byte 4 to the left, b the one above, c
     * the one above a */
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *f = raw + y * (stride + 1);
        uint8_t t = f[0];
        CHECK(t <= 4, "%s: row %u filter %u", what, y, t);
        if (t <= 4) used[t]++;
        uint8_t *row = pix + y * stride;
        const uint8_t *up = y ? row - stride : NULL;
        for (size_t i = 0; i < stride; i++) {
            uint8_t a = i >= 4 ? row[i - 4] : 0, b = up ? up[i] : 0, c = up && i >= 4 ? up[i - 4] : 0;
            uint8_t x = f[1 + i];
            switch (t) {
            case 0: row[i] = x; break;
            case 1: row[i] = (uint8_t)(x + a); break;
            case 2: row[i] = (uint8_t)(x + b); break;
            case 3: row[i] = (uint8_t)(x + (a + b) / 2); break; /* Average: the encoder does not use it */
            default: row[i] = (uint8_t)(x + t_paeth(a, b, c)); break;
            }
        }
        /* the chosen filter has the smallest cost of the four */
        /* the chosen filter is one the encoder uses (not Average) and the cheapest of them */
        CHECK(t != 3, "%s: row %u uses Average, which the encoder never picks", what, y);
        if (t <= 4 && t != 3) {
            static const unsigned candidates[4] = {0, 1, 2, 4};
            unsigned long mine = filter_cost(rgba, w, y, t), best = mine;
            for (unsigned k = 0; k < 4; k++) {
                unsigned long c = filter_cost(rgba, w, y, candidates[k]);
                if (c < best) best = c;
            }
            CHECK(mine == best, "%s: row %u filter %u costs %lu, the best %lu", what, y, t, mine, best);
        }
    }
    size_t diff = stride * h;
    for (size_t i = 0; i < stride * h; i++)
        if (pix[i] != rgba[i]) {
            diff = i;
            break;
        }
    CHECK(diff == stride * h, "%s: pixels differ first at byte %zu", what, diff);
    free(raw);
    free(pix);
}

/* the sizes of the test images */
#define W 5
#define H 4
#define BW 37
#define BH 29

static void test_png(void)
{
    /* 5x4: row 0 a gradient (Sub's deltas are small), row 1 the same as row 0 (Up gives zeros), row 2 varied,
     * row 3 a smooth change of row 2 */
    uint8_t img[W * H * 4];
    for (unsigned x = 0; x < W; x++) {
        uint8_t *p0 = img + 4 * x, *p1 = img + 4 * (W + x), *p2 = img + 4 * (2 * W + x), *p3 = img + 4 * (3 * W + x);
        p0[0] = (uint8_t)(200 + 10 * x);
        p0[1] = (uint8_t)(100 + 3 * x);
        p0[2] = (uint8_t)(50 - 5 * x);
        p0[3] = 255;
        memcpy(p1, p0, 4);
        p2[0] = (uint8_t)(x * 77 + 13);
        p2[1] = (uint8_t)(x * x * 31);
        p2[2] = (uint8_t)(0xA5 ^ (x * 29));
        p2[3] = (uint8_t)(255 - x * 40);
        for (int c = 0; c < 4; c++) p3[c] = (uint8_t)(p2[c] + 1);
    }
    ra_error e;
    ra_error_clear(&e);
    uint8_t *png = NULL;
    size_t size = 0;
    ra_heap_reset();
    ra_status st = ra_png_encode(img, W, H, &png, &size, &e);
    CHECK(st == RA_OK && png && size > 0, "encode 5x4: %d %s", st, e.msg);
    unsigned used[5] = {0, 0, 0, 0, 0};
    if (png) check_png(png, size, img, W, H, "5x4", used);
    /* row 0: Sub (1) beats None; on the first row Paeth = Sub and Up = None, and a tie keeps the lower type.
     * row 1 = row 0: Up gives all zeros.  row 3 = row 2 + 1: Up gives all ones (cost 20), Paeth predicts b too. */
    CHECK(png && size > 8 + 25 + 8 && png[8 + 25 + 8] == 0x78, "zlib header 0x78");
    ra_free(png);
    CHECK(ra_heap_get().live_blocks == 0, "no block left: %lld", (long long)ra_heap_get().live_blocks);
    CHECK(used[1] >= 1 && used[2] >= 2, "filters used: none %u sub %u up %u paeth %u", used[0], used[1], used[2],
          used[4]);

    /* the filter bytes themselves: row 0 Sub, row 1 Up, row 3 Up */
    {
        ra_error_clear(&e);
        st = ra_png_encode(img, W, H, &png, &size, &e);
        uLongf n = (uLongf)((W * 4 + 1) * H);
        uint8_t raw[(W * 4 + 1) * H];
        int zr = st == RA_OK ? uncompress(raw, &n, png + 8 + 25 + 8, be32(png + 8 + 25)) : Z_DATA_ERROR;
        CHECK(zr == Z_OK && raw[0] == 1 && raw[W * 4 + 1] == 2 && raw[3 * (W * 4 + 1)] == 2, "filter types %u %u %u %u",
              raw[0], raw[W * 4 + 1], raw[2 * (W * 4 + 1)], raw[3 * (W * 4 + 1)]);
        ra_free(png);
    }

    /* 1x1, and a 37x29 pseudo-random image with smooth and noisy parts */
    uint8_t one[4] = {9, 8, 7, 6};
    ra_error_clear(&e);
    st = ra_png_encode(one, 1, 1, &png, &size, &e);
    CHECK(st == RA_OK, "1x1: %d", st);
    memset(used, 0, sizeof used);
    if (st == RA_OK) check_png(png, size, one, 1, 1, "1x1", used);
    ra_free(png);

    static uint8_t big[BW * BH * 4];
    uint32_t seed = 12345;
    for (unsigned y = 0; y < BH; y++)
        for (unsigned x = 0; x < BW; x++) {
            uint8_t *p = big + 4 * (y * BW + x);
            seed = seed * 1664525u + 1013904223u;
            bool noisy = (x / 8 + y / 8) % 2 == 0;
            p[0] = noisy ? (uint8_t)(seed >> 24) : (uint8_t)(x * 6);
            p[1] = noisy ? (uint8_t)(seed >> 16) : (uint8_t)(y * 8);
            p[2] = noisy ? (uint8_t)(seed >> 8) : (uint8_t)(x + y);
            p[3] = (uint8_t)(y < 10 ? 255 : seed >> 4);
        }
    ra_error_clear(&e);
    st = ra_png_encode(big, BW, BH, &png, &size, &e);
    CHECK(st == RA_OK, "37x29: %d", st);
    memset(used, 0, sizeof used);
    if (st == RA_OK) check_png(png, size, big, BW, BH, "37x29", used);
    ra_free(png);

    /* a plane (value = 3x + 5y per channel): Paeth predicts a + b - c exactly, so every row after the first is
     * Paeth-filtered to zeros and must carry the PNG filter type 4 (3 would be Average, which decodes otherwise) */
    uint8_t plane[8 * 8 * 4];
    for (unsigned y = 0; y < 8; y++)
        for (unsigned x = 0; x < 8; x++)
            for (unsigned c = 0; c < 4; c++) plane[4 * (y * 8 + x) + c] = (uint8_t)(3 * x + 5 * y + 40 * c);
    ra_error_clear(&e);
    st = ra_png_encode(plane, 8, 8, &png, &size, &e);
    memset(used, 0, sizeof used);
    if (st == RA_OK) check_png(png, size, plane, 8, 8, "8x8 plane", used);
    CHECK(st == RA_OK && used[4] == 7 && used[3] == 0, "8x8 plane: rows 1-7 Paeth (4): paeth %u average %u", used[4],
          used[3]);
    ra_free(png);

    /* refused sizes: RA_ERR_LIMIT, *out NULL */
    png = (uint8_t *)1;
    size = 7;
    ra_error_clear(&e);
    st = ra_png_encode(one, 0, 1, &png, &size, &e);
    CHECK(st == RA_ERR_LIMIT && e.code == RA_ERR_LIMIT && png == NULL && size == 0, "width 0: %d", st);
    ra_error_clear(&e);
    st = ra_png_encode(one, 1, 0, &png, &size, &e);
    CHECK(st == RA_ERR_LIMIT, "height 0: %d", st);
    ra_error_clear(&e);
    st = ra_png_encode(one, 65536, 1, &png, &size, &e);
    CHECK(st == RA_ERR_LIMIT, "width 65536: %d", st);
    ra_error_clear(&e);
    st = ra_png_encode(one, 1, 70000, &png, &size, &e);
    CHECK(st == RA_ERR_LIMIT, "height 70000: %d", st);

    /* out of memory at the first and the second allocation: RA_ERR_NO_MEMORY, nothing leaked */
    for (uint64_t nth = 1; nth <= 2; nth++) {
        ra_heap_reset();
        ra_heap_fail_nth(nth);
        ra_error_clear(&e);
        png = NULL;
        st = ra_png_encode(img, W, H, &png, &size, &e);
        ra_heap_stats hs = ra_heap_get();
        CHECK(st == RA_ERR_NO_MEMORY && png == NULL && hs.failures == 1 && hs.live_blocks == 0,
              "allocation %llu failing: %d, %lld blocks left", (unsigned long long)nth, st, (long long)hs.live_blocks);
        ra_heap_fail_nth(0);
    }
    /* a failing shrink at the end keeps the larger block */
    ra_heap_reset();
    ra_heap_fail_nth(3);
    ra_error_clear(&e);
    st = ra_png_encode(img, W, H, &png, &size, &e);
    ra_heap_fail_nth(0);
    CHECK(st == RA_OK && png, "shrink failing: %d", st);
    memset(used, 0, sizeof used);
    if (st == RA_OK) check_png(png, size, img, W, H, "5x4 unshrunk", used);
    ra_free(png);
}

int main(void)
{
    test_format_names();
    test_quantize();
    test_tlut();
    test_decode_ci();
    test_flip();
    test_png();
    return ra_test_finish("image");
}
