/* retroanim — a small streaming JSON writer (commas, escaping and nesting
 * handled here; numbers printed so that float32 values round-trip). */
#ifndef RETROANIM_RA_JSON_H
#define RETROANIM_RA_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ra_base.h"
#include "ra_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A LEGO tree needs 2 levels per node in `dump --source`: room for the
 * deepest tree any format accepts (RA_MAX_DEPTH_LIMIT) and the levels above it. */
#define RA_JSON_MAX_DEPTH (2 * RA_MAX_DEPTH_LIMIT + 64)

typedef struct ra_json {
    FILE *fp;       /* output to a stream, or */
    ra_writer *buf; /* output to a growable buffer */
    int depth;
    bool first[RA_JSON_MAX_DEPTH]; /* no element written yet at this level */
    bool after_key;
    bool pretty;
    bool failed;
} ra_json;

void ra_json_init_file(ra_json *j, FILE *fp, bool pretty);
void ra_json_init_buffer(ra_json *j, ra_writer *w, bool pretty);
void ra_json_begin_object(ra_json *j);
void ra_json_end_object(ra_json *j);
void ra_json_begin_array(ra_json *j);
void ra_json_end_array(ra_json *j);
void ra_json_key(ra_json *j, const char *key);
void ra_json_string(ra_json *j, const char *s);
void ra_json_string_n(ra_json *j, const char *s, size_t n);
void ra_json_number(ra_json *j, double v); /* NaN/inf are written as null */
void ra_json_int(ra_json *j, int64_t v);
void ra_json_uint(ra_json *j, uint64_t v);
void ra_json_bool(ra_json *j, bool v);
void ra_json_null(ra_json *j);
void ra_json_vec3(ra_json *j, ra_vec3 v); /* [x, y, z] */
/* Writes a pre-formatted JSON value verbatim (caller guarantees validity). */
void ra_json_raw(ra_json *j, const char *text);
void ra_json_raw_n(ra_json *j, const char *text, size_t n);
/* The text ra_json_number / ra_json_int write for v, NUL-terminated, at b
 * (RA_JSON_NUMBER_MAX bytes); its length.  For values composed by hand
 * (ra_json_raw_n) where a list of many small arrays is written. */
#define RA_JSON_NUMBER_MAX 40
size_t ra_json_number_text(double v, char *b);
size_t ra_json_int_text(int64_t v, char *b);
/* An array of n numbers, as begin_array, n ra_json_number and end_array
 * write it; without pretty printing composed and written at once (for lists
 * of many small arrays, where the per-token calls are most of the cost). */
void ra_json_numbers(ra_json *j, const double *v, size_t n);
void ra_json_finish(ra_json *j); /* trailing newline */

/* %.9g of v (1e-5 <= |v| < 1e15) into b (at least 20 bytes) as snprintf
 * prints it, computed without snprintf; 0 where it leaves the value to
 * snprintf (a ninth digit too close to a tie to decide, or out of range).
 * ra_json_number uses it for float32 values. */
size_t ra_json_g9(double v, char *b);

#ifdef __cplusplus
}
#endif
#endif
