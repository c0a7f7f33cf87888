/* Streaming JSON writer. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "retroanim/ra_json.h"

static void out(ra_json *j, const char *s, size_t n)
{
    if (j->failed) return;
    if (j->fp) {
        if (fwrite(s, 1, n, j->fp) != n) j->failed = true;
    } else if (j->buf) {
        if (!ra_wr_bytes(j->buf, s, n)) j->failed = true;
    }
}
static void outs(ra_json *j, const char *s) { out(j, s, strlen(s)); }

static void newline(ra_json *j)
{
    if (!j->pretty) return;
    outs(j, "\n");
    for (int i = 0; i < j->depth; i++) outs(j, "  ");
}

static void before_value(ra_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (!j->first[j->depth]) outs(j, ",");
        j->first[j->depth] = false;
        newline(j);
    }
}

static void init(ra_json *j, bool pretty)
{
    j->depth = 0;
    j->after_key = false;
    j->pretty = pretty;
    j->failed = false;
    memset(j->first, 1, sizeof j->first);
}
void ra_json_init_file(ra_json *j, FILE *fp, bool pretty)
{
    j->fp = fp;
    j->buf = NULL;
    init(j, pretty);
}
void ra_json_init_buffer(ra_json *j, ra_writer *w, bool pretty)
{
    j->fp = NULL;
    j->buf = w;
    init(j, pretty);
}

static void open_(ra_json *j, const char *c)
{
    before_value(j);
    outs(j, c);
    if (j->depth + 1 >= RA_JSON_MAX_DEPTH) {
        j->failed = true;
        return;
    }
    j->depth++;
    j->first[j->depth] = true;
}
static void close_(ra_json *j, const char *c)
{
    if (j->depth <= 0) {
        j->failed = true;
        return;
    }
    bool empty = j->first[j->depth];
    j->depth--;
    if (!empty) newline(j);
    outs(j, c);
}
void ra_json_begin_object(ra_json *j) { open_(j, "{"); }
void ra_json_end_object(ra_json *j) { close_(j, "}"); }
void ra_json_begin_array(ra_json *j) { open_(j, "["); }
void ra_json_end_array(ra_json *j) { close_(j, "]"); }

static void str(ra_json *j, const char *s, size_t n)
{
    outs(j, "\"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char tmp[8];
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c < 0x20 || c >= 0x7f) {
            /* bytes outside printable ASCII are written as \u00XX (Latin-1),
             * so that the output is always valid UTF-8 */
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
            esc = tmp;
        }
        if (esc) {
            out(j, s + i - run, run);
            run = 0;
            outs(j, esc);
        } else {
            run++;
        }
    }
    out(j, s + n - run, run);
    outs(j, "\"");
}

void ra_json_key(ra_json *j, const char *key)
{
    before_value(j);
    str(j, key, strlen(key));
    outs(j, j->pretty ? ": " : ":");
    j->after_key = true;
}
void ra_json_string(ra_json *j, const char *s)
{
    before_value(j);
    str(j, s ? s : "", s ? strlen(s) : 0);
}
void ra_json_string_n(ra_json *j, const char *s, size_t n)
{
    before_value(j);
    str(j, s, n);
}
/* decimal digits of v, without snprintf (metadata lists write one number per key) */
static size_t u64_digits(uint64_t v, char *end)
{
    char *p = end;
    do *--p = (char)('0' + v % 10);
    while (v /= 10);
    return (size_t)(end - p);
}

/* a sign and magnitude as decimal text at b (24 bytes), NUL-terminated; its length */
static size_t int_text(bool neg, uint64_t mag, char *b)
{
    char t[24];
    size_t n = u64_digits(mag, t + sizeof t), o = 0;
    if (neg) b[o++] = '-';
    memcpy(b + o, t + sizeof t - n, n);
    b[o + n] = 0;
    return o + n;
}

/* %.9g of a finite v with 1e-5 <= |v| < 1e15, as snprintf prints it, without
 * snprintf's long arithmetic: the nine digits from v scaled by an exact
 * power of ten (one rounding, at most 2^-53 relative); 0 where that rounding
 * could decide the ninth digit (a fraction within 2e-7 of one half) or out
 * of range, for snprintf to print.  Returns the length written to b. */
size_t ra_json_g9(double v, char *b)
{
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double a = fabs(v);
    if (!(a >= 1e-5 && a < 1e15)) return 0;
    int x = 0; /* decimal exponent: 10^x <= a < 10^(x+1) */
    while (x < 14 && a >= p10[x + 1]) x++;
    while (x > -5 && a < (x >= 0 ? p10[x] : 1 / p10[-x])) x--;
    double m = 8 - x >= 0 ? a * p10[8 - x] : a / p10[x - 8];
    double fl = floor(m), fr = m - fl;
    if (fabs(fr - 0.5) < 2e-7) return 0;
    uint64_t r = (uint64_t)fl + (fr > 0.5);
    if (r >= 1000000000u) r /= 10, x++; /* 999999999.5 -> 1000000000 */
    if (r < 100000000u) return 0;       /* the exponent was off: let snprintf decide */
    char d[9];
    for (int i = 8; i >= 0; i--, r /= 10) d[i] = (char)('0' + r % 10);
    int nd = 9;
    while (nd > 1 && d[nd - 1] == '0') nd--; /* %g drops trailing zeros */
    size_t n = 0;
    if (v < 0) b[n++] = '-';
    if (x >= -4 && x < 9) {
        if (x < 0) {
            b[n++] = '0';
            b[n++] = '.';
            for (int i = -1; i > x; i--) b[n++] = '0';
            for (int i = 0; i < nd; i++) b[n++] = d[i];
        } else {
            for (int i = 0; i <= x; i++) b[n++] = d[i];
            if (nd > x + 1) {
                b[n++] = '.';
                for (int i = x + 1; i < nd; i++) b[n++] = d[i];
            }
        }
    } else {
        b[n++] = d[0];
        if (nd > 1) {
            b[n++] = '.';
            for (int i = 1; i < nd; i++) b[n++] = d[i];
        }
        b[n++] = 'e';
        b[n++] = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        b[n++] = (char)('0' + ax / 10);
        b[n++] = (char)('0' + ax % 10);
    }
    b[n] = 0;
    return n;
}

size_t ra_json_number_text(double v, char *b)
{
    if (!isfinite(v)) {
        memcpy(b, "null", 5);
        return 4;
    }
    /* a whole number of at most 9 digits: what %.9g prints is its digits */
    if (v > -1e9 && v < 1e9 && v == (double)(int64_t)v) {
        int64_t i = (int64_t)v;
        return int_text(i < 0, i < 0 ? (uint64_t)-i : (uint64_t)i, b);
    }
    /* %.9g keeps float32 exact; use more digits only when the double needs them */
    bool f32 = (double)(float)v == v;
    size_t n = f32 ? ra_json_g9(v, b) : 0;
    if (n) return n;
    snprintf(b, RA_JSON_NUMBER_MAX, "%.9g", v);
    double back;
    if (!f32 && sscanf(b, "%lf", &back) == 1 && back != v) snprintf(b, RA_JSON_NUMBER_MAX, "%.17g", v);
    return strlen(b);
}
size_t ra_json_int_text(int64_t v, char *b) { return int_text(v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, b); }

void ra_json_number(ra_json *j, double v)
{
    before_value(j);
    char b[RA_JSON_NUMBER_MAX];
    out(j, b, ra_json_number_text(v, b));
}
void ra_json_int(ra_json *j, int64_t v)
{
    before_value(j);
    char b[RA_JSON_NUMBER_MAX];
    out(j, b, ra_json_int_text(v, b));
}
void ra_json_uint(ra_json *j, uint64_t v)
{
    before_value(j);
    char b[RA_JSON_NUMBER_MAX];
    out(j, b, int_text(false, v, b));
}
void ra_json_bool(ra_json *j, bool v)
{
    before_value(j);
    outs(j, v ? "true" : "false");
}
void ra_json_null(ra_json *j)
{
    before_value(j);
    outs(j, "null");
}
void ra_json_raw(ra_json *j, const char *text) { ra_json_raw_n(j, text, strlen(text)); }
void ra_json_raw_n(ra_json *j, const char *text, size_t n)
{
    before_value(j);
    out(j, text, n);
}
void ra_json_numbers(ra_json *j, const double *v, size_t n)
{
    enum {
        ROW = 8 /* most numbers composed at once */
    };
    if (j->pretty || n > ROW) {
        ra_json_begin_array(j);
        for (size_t i = 0; i < n; i++) ra_json_number(j, v[i]);
        ra_json_end_array(j);
        return;
    }
    char b[ROW * (RA_JSON_NUMBER_MAX + 1) + 2];
    size_t o = 0;
    b[o++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i) b[o++] = ',';
        o += ra_json_number_text(v[i], b + o);
    }
    b[o++] = ']';
    ra_json_raw_n(j, b, o);
}
void ra_json_finish(ra_json *j) { outs(j, "\n"); }

void ra_json_vec3(ra_json *j, ra_vec3 v)
{
    ra_json_begin_array(j);
    ra_json_number(j, v.x);
    ra_json_number(j, v.y);
    ra_json_number(j, v.z);
    ra_json_end_array(j);
}
