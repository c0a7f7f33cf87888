/* Options: KEY=VALUE pairs, declared per format in tables (ra_option_decl)
 * and validated once per load by one parser. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/ra_document.h"

void ra_options_init(ra_options *o) { memset(o, 0, sizeof *o); }

bool ra_options_add(ra_options *o, const char *key, const char *value)
{
    if (!o || !key || !*key || !value) return false;
    for (size_t i = 0; i < o->count; i++)
        if (strcmp(o->keys[i], key) == 0) {
            o->values[i] = value;
            return true;
        }
    if (o->count >= RA_MAX_OPTIONS) return false;
    o->keys[o->count] = key;
    o->values[o->count] = value;
    o->count++;
    return true;
}

/* "k=v;k=v" (or ','): a backslash makes the next character literal, so a
 * value (a path) may hold ';', ',' or '\'.  Keys and values are unescaped
 * into store, one NUL-terminated string each. */
bool ra_options_parse_list(ra_options *o, const char *list, char *store, size_t store_size)
{
    if (!o || !list || !store) return false;
    size_t n = strlen(list);
    if (n + 1 > store_size) return false;
    const char *p = list;
    char *w = store;
    while (*p) {
        while (*p == ' ') p++;
        if (*p == ';' || *p == ',') {
            p++;
            continue;
        }
        if (!*p) break;
        char *key = w, *value = NULL;
        for (; *p && *p != ';' && *p != ','; p++) {
            if (*p == '\\') {
                if (!p[1]) return false; /* a trailing backslash escapes nothing */
                *w++ = *++p;
            } else if (*p == '=' && !value) {
                *w++ = 0;
                value = w;
            } else {
                *w++ = *p;
            }
        }
        *w++ = 0;
        if (!value || value == key + 1) return false; /* no '=' or an empty key */
        if (!ra_options_add(o, key, value)) return false;
    }
    return true;
}

size_t ra_options_escape(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; *s; s++) {
        if (*s == ';' || *s == ',' || *s == '\\') {
            if (n + 1 < size) out[n] = '\\';
            n++;
        }
        if (n + 1 < size) out[n] = *s;
        n++;
    }
    if (size) out[n < size ? n : size - 1] = 0;
    return n;
}

const char *ra_options_get(const ra_options *o, const char *key)
{
    if (!o || !key) return NULL;
    for (size_t i = 0; i < o->count; i++)
        if (strcmp(o->keys[i], key) == 0) return o->values[i];
    return NULL;
}

/* A number, whole text, finite; sizes may end in K, M, G or T (powers of
 * 1024, optionally followed by "iB") or B. */
static bool parse_number(const char *v, bool size_suffix, double *out)
{
    if (!v || !*v || isspace((unsigned char)*v)) return false;
    char *end = NULL;
    double d = strtod(v, &end);
    if (end == v || !isfinite(d)) return false;
    if (size_suffix && *end) {
        static const char units[] = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (u && *end) {
            d *= pow(1024.0, (double)(u - units + 1));
            end++;
            if (end[0] == 'i' && end[1] == 'B') end += 2;
        } else if (*end == 'B' || *end == 'b') {
            end++;
        }
    }
    if (*end) return false;
    *out = d;
    return true;
}

double ra_options_get_double(const ra_options *o, const char *key, double def)
{
    double d;
    return parse_number(ra_options_get(o, key), true, &d) ? d : def;
}

bool ra_options_is(const ra_options *o, const char *key, const char *value)
{
    const char *v = ra_options_get(o, key);
    return v && strcmp(v, value) == 0;
}

bool ra_options_get_bool(const ra_options *o, const char *key, bool def)
{
    const char *v = ra_options_get(o, key);
    if (!v) return def;
    return !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on");
}

/* ---- declarations ---------------------------------------------------------------------- */
#define STR_(x) #x
#define STR(x) STR_(x)

static const ra_option_decl g_common[] = {
    {"coords", RA_OPT_ENUM, 0, 0, false, "converted|native", "converted",
     "frame of the scene: converted (right-handed, Y up) or the game's native one"},
    {"ticks", RA_OPT_ENUM, 0, 0, false, "seconds|native", "seconds",
     "Assimp importer only: 1 tick = 1 second, or the format's native tick rate"},
    {"format", RA_OPT_STRING, 0, 0, false, NULL, "detected", "force the input format (a format id)"},
    {"max_depth", RA_OPT_INT, 1, RA_MAX_DEPTH_LIMIT, false, NULL, "256", "deepest node tree accepted"},
    {"memory_limit", RA_OPT_SIZE, 65536, 1099511627776.0, false, NULL, "64 MiB + 64 x file size",
     "memory one load may use (bytes; K, M, G suffixes)"},
    {"max_nodes", RA_OPT_INT, 1, 4294967295.0, false, NULL, "1000000", "most nodes in the scene"},
    {"max_keys", RA_OPT_INT, 1, 1e12, false, NULL, "50000000", "most keys of all animations together"},
    {"max_file_size", RA_OPT_SIZE, 1, 1099511627776.0, false, NULL, "256 MiB",
     "largest input file, refused before it is read (bytes; K, M, G suffixes)"},
    {"max_key_angle", RA_OPT_DOUBLE, 0.06, 179, true, NULL, "automatic", "largest rotation between two keys (degrees)"},
    {"max_samples", RA_OPT_INT, 1, 1e12, false, NULL, "32768 + 16 x file size (Homeworld: 524288 + file size / 2)",
     "most samples the bakers of one load may take"},
    {"threads", RA_OPT_INT, 0, 256, false, NULL, "0 (automatic)",
     "threads one load bakes on: 0 = one per processor for large files, 1 = this thread only"},
    {"source_path", RA_OPT_PATH, 0, 0, false, NULL, "the file's", "the file the bytes came from, for companion files"},
};

const ra_option_decl *ra_common_options(size_t *count)
{
    *count = sizeof g_common / sizeof g_common[0];
    return g_common;
}

static const ra_option_decl *find_in(const ra_option_decl *t, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].key, key) == 0) return &t[i];
    return NULL;
}

const ra_option_decl *ra_option_find(const ra_format *f, const char *key)
{
    const ra_option_decl *d = find_in(g_common, sizeof g_common / sizeof g_common[0], key);
    for (int hop = 0; !d && f && hop < 4; hop++, f = f->options_also) d = find_in(f->options, f->option_count, key);
    return d;
}

static bool enum_has(const char *values, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = values; *p;) {
        size_t len = strcspn(p, "|");
        if (len == n && strncmp(p, v, n) == 0) return true;
        p += len;
        if (*p == '|') p++;
    }
    return false;
}

static void append(char *buf, size_t size, size_t *n, const char *s)
{
    int k = snprintf(buf + *n, *n < size ? size - *n : 0, "%s", s);
    if (k > 0) *n += (size_t)k;
    if (*n >= size) *n = size - 1;
}

static ra_status fail_value(const ra_option_decl *d, const char *fmt_id, const char *v, ra_error *err)
{
    char want[160];
    switch (d->type) {
    case RA_OPT_BOOL: snprintf(want, sizeof want, "true or false (1 or 0)"); break;
    case RA_OPT_ENUM: {
        size_t n = 0;
        want[0] = 0;
        for (const char *p = d->values; *p;) {
            size_t len = strcspn(p, "|");
            char one[40];
            snprintf(one, sizeof one, "%s%.*s", n ? ", " : "", (int)len, p);
            append(want, sizeof want, &n, one);
            p += len;
            if (*p == '|') p++;
        }
        break;
    }
    case RA_OPT_INT:
    case RA_OPT_SIZE:
        snprintf(want, sizeof want, "%s from %.17g to %.17g%s", d->type == RA_OPT_INT ? "a whole number" : "a size",
                 d->min, d->max, d->type == RA_OPT_SIZE ? " bytes (K, M, G allowed)" : "");
        break;
    case RA_OPT_DOUBLE:
        snprintf(want, sizeof want, "a number in %c%.17g, %.17g]", d->min_exclusive ? '(' : '[', d->min, d->max);
        break;
    default: snprintf(want, sizeof want, "a non-empty text"); break;
    }
    return ra_fail(err, RA_ERR_USAGE, fmt_id, RA_NO_OFFSET, d->key, "option %s: '%s' is not %s", d->key, v, want);
}

ra_status ra_option_check_value(const ra_option_decl *d, const char *fmt_id, const char *v, ra_error *err)
{
    double x = 0;
    switch (d->type) {
    case RA_OPT_BOOL:
        if (!strcmp(v, "0") || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "false") || !strcmp(v, "yes") ||
            !strcmp(v, "no") || !strcmp(v, "on") || !strcmp(v, "off"))
            return RA_OK;
        return fail_value(d, fmt_id, v, err);
    case RA_OPT_ENUM: return enum_has(d->values, v) ? RA_OK : fail_value(d, fmt_id, v, err);
    case RA_OPT_INT:
    case RA_OPT_SIZE:
    case RA_OPT_DOUBLE: {
        if (!parse_number(v, d->type == RA_OPT_SIZE, &x)) return fail_value(d, fmt_id, v, err);
        bool whole = d->type != RA_OPT_DOUBLE;
        if ((whole && x != floor(x)) || x > d->max || x < d->min || (d->min_exclusive && x == d->min))
            return fail_value(d, fmt_id, v, err);
        return RA_OK;
    }
    case RA_OPT_PATH:
    case RA_OPT_STRING: return *v ? RA_OK : fail_value(d, fmt_id, v, err);
    }
    return fail_value(d, fmt_id, v, err);
}

/* "k1, k2, ..." of the keys f accepts (common first) */
static void key_list(const ra_format *f, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof g_common / sizeof g_common[0]; i++) {
        append(buf, size, &n, n ? ", " : "");
        append(buf, size, &n, g_common[i].key);
    }
    for (int hop = 0; f && hop < 4; hop++, f = f->options_also)
        for (size_t i = 0; i < f->option_count; i++) {
            append(buf, size, &n, ", ");
            append(buf, size, &n, f->options[i].key);
        }
}

/* edit distance of two short keys (insertions, deletions, substitutions), capped at 9 */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40) return 9;
    int row[41];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 9 ? 9 : row[lb];
}

/* the declared key closest to key (at most 2 edits away), or NULL */
static const char *closest_key(const ra_format *f, const char *key)
{
    const char *best = NULL;
    int bd = 3;
    for (size_t i = 0; i < sizeof g_common / sizeof g_common[0]; i++) {
        int d = distance(key, g_common[i].key);
        if (d < bd) bd = d, best = g_common[i].key;
    }
    for (int hop = 0; f && hop < 4; hop++, f = f->options_also)
        for (size_t i = 0; i < f->option_count; i++) {
            int d = distance(key, f->options[i].key);
            if (d < bd) bd = d, best = f->options[i].key;
        }
    return best;
}

static ra_status validate(const ra_options *o, const ra_format *f, bool known_only, ra_error *err)
{
    const char *fid = f ? f->id : "retroanim";
    for (size_t i = 0; o && i < o->count; i++) {
        const ra_option_decl *d = ra_option_find(f, o->keys[i]);
        if (!d && known_only) continue;
        if (!d) {
            char keys[400];
            key_list(f, keys, sizeof keys);
            const char *near = closest_key(f, o->keys[i]);
            if (near)
                return ra_fail(err, RA_ERR_USAGE, fid, RA_NO_OFFSET, o->keys[i],
                               "unknown option '%s' (did you mean %s?); %s accepts %s", o->keys[i], near, fid, keys);
            return ra_fail(err, RA_ERR_USAGE, fid, RA_NO_OFFSET, o->keys[i], "unknown option '%s'; %s accepts %s",
                           o->keys[i], fid, keys);
        }
        ra_status st = ra_option_check_value(d, fid, o->values[i], err);
        if (st != RA_OK) return st;
        if (!strcmp(d->key, "format") && !ra_format_find(o->values[i]))
            return ra_fail(err, RA_ERR_USAGE, fid, RA_NO_OFFSET, "format",
                           "option format: unknown format id '%s' (retroanim formats lists them)", o->values[i]);
    }
    return RA_OK;
}

ra_status ra_options_validate(const ra_options *o, const ra_format *f, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    return validate(o, f, false, err);
}

ra_status ra_options_validate_known(const ra_options *o, const ra_format *f, ra_error *err)
{
    return validate(o, f, true, err);
}
