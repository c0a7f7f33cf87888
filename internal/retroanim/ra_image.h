/* retroanim — images: Nintendo 64 texel formats (what each keeps of an RGBA8
 * colour, palette entries, colour-indexed pixels) and a small PNG encoder for
 * 8-bit RGBA pixels. */
#ifndef RETROANIM_RA_IMAGE_H
#define RETROANIM_RA_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ra_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nintendo 64 texel formats (the RDP's G_IM_FMT x G_IM_SIZ combinations used by games). */
typedef enum ra_n64_format {
    RA_N64_RGBA16,
    RA_N64_RGBA32,
    RA_N64_CI4,
    RA_N64_CI8,
    RA_N64_IA4,
    RA_N64_IA8,
    RA_N64_IA16,
    RA_N64_I4,
    RA_N64_I8
} ra_n64_format;

/* "RGBA16", "RGBA32", "CI4", "CI8", "IA4", "IA8", "IA16", "I4", "I8"; "?" for a value outside the enum. */
const char *ra_n64_format_name(ra_n64_format f);

/* Reduces 8-bit RGBA pixels in place to what the N64 format keeps, expanded back to 8 bits
 * the way the RDP expands them (bit replication):
 *  RGBA32: unchanged.
 *  RGBA16: 5 bits per colour channel (v = x >> 3, expanded (v << 3) | (v >> 2)), 1 bit alpha (a >= 128 -> 255, else 0).
 *  IA16: intensity 8 bits, alpha 8 bits.
 *  IA8: intensity 4 bits, alpha 4 bits (v = x >> 4, expanded v * 17).
 *  IA4: intensity 3 bits (v = I >> 5, expanded (v << 5) | (v << 2) | (v >> 1)), alpha 1 bit (a >= 128 -> 255, else 0).
 *  I8: intensity 8 bits; I4: intensity 4 bits (expanded v * 17).  For the I formats alpha = intensity (the RDP
 *      feeds I into both).
 *  CI4, CI8: the colours are a palette the caller already applied: left unchanged.
 * The intensity of an RGB pixel is I = round(0.299 R + 0.587 G + 0.114 B), halves rounded up, computed exactly in
 * integers as (299 R + 587 G + 114 B + 500) / 1000 and clamped to 255.  The IA and I formats write I to R, G and B.
 * A value outside the enum leaves the pixels unchanged. */
void ra_n64_quantize(uint8_t *rgba, size_t pixels, ra_n64_format f);

/* One 16-bit palette entry (TLUT) to RGBA8: RGBA16 5551 (r = bits 15-11, g 10-6, b 5-1, a bit 0; colours expanded
 * (v << 3) | (v >> 2), alpha 0 or 255) or, with ia16, IA16 (high byte intensity into R, G and B, low byte alpha). */
void ra_n64_tlut_entry(uint16_t v, bool ia16, uint8_t out[4]);

/* Colour-indexed pixels: `packed` holds big-endian u32 words (already loaded as numbers) with 8 (CI4, high nibble
 * first) or 4 (CI8, high byte first) indices each, pixels in rows from the BOTTOM-LEFT (row 0 is the bottom row),
 * the last word zero padded.  Writes width*height RGBA8 pixels with rows from the TOP into out.
 * Each index (CI4: tlut_bank * 16 + index; CI8: the index, tlut_bank ignored) must be < palette_count, else the call
 * fails with RA_ERR_BAD_VALUE, field "pixel index", at byte base_offset + 4 * (the word's position).
 * words must be >= ceil(width*height / (8 or 4)), else RA_ERR_TRUNCATED (field "pixels", at the end of the words).
 * width*height*4 must not overflow a size_t (RA_ERR_LIMIT).  A width or height of 0 writes nothing.
 * format_id is the ra_error format ("niff").  On failure out may be partly written. */
ra_status ra_n64_decode_ci(const uint32_t *packed, size_t words, uint32_t width, uint32_t height, bool ci4,
                           uint32_t tlut_bank, const uint8_t (*palette)[4], size_t palette_count, uint8_t *out,
                           const char *format_id, uint64_t base_offset, ra_error *err);

/* Flips rows in place (bottom-left origin <-> top-left origin). */
void ra_image_flip_rows(uint8_t *rgba, uint32_t width, uint32_t height);

/* A PNG of 8-bit RGBA pixels (rows from the top): the signature, IHDR (colour type 6, bit depth 8, no interlace),
 * one IDAT (zlib compress2, level 6; each row filtered with the one of None/Sub/Up/Paeth whose bytes, read as
 * signed, have the smallest sum of absolute values, the first on a tie), IEND; CRCs with zlib's crc32.
 * *out is ra_malloc'd (free it with ra_free), *size its length.  Fails with RA_ERR_LIMIT when width or height is 0
 * or above 65535 or the sizes overflow (a compressed stream past 2^31 - 1 bytes included), RA_ERR_NO_MEMORY when out
 * of memory; *out is NULL and *size 0 then. */
ra_status ra_png_encode(const uint8_t *rgba, uint32_t width, uint32_t height, uint8_t **out, size_t *size,
                        ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
