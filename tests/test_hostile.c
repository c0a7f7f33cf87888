/* Hostile files, with the default limits: each is refused (an error naming
 * the format and a field) or loaded, in under 1 s (release builds; the
 * sanitizer build allows 20 s) and with the library's heap peaking under
 * 64 MB (ra_heap, every build).
 *  - every fixture, and every file in test_models/<format>/regressions/
 *    (read as the format its extension names: fuzzing findings);
 *  - every fixture with each 4-byte window, at every offset, overwritten by
 *    0xFFFFFFFF (counts), NaN and infinity in both byte orders (floats), 0 and
 *    32 in both byte orders (offsets pointing back into the header: pointer
 *    cycles, overlapping tables, nextFrameIndex and next_key chains that go
 *    back), and each byte by 0x20 and 0x21 (bit widths of 32 and 33);
 *    fixtures above 8 KiB on their first and last 512 bytes, and at most
 *    MAX_LOADS loads per fixture (a stride over the offsets beyond that);
 *  - a LEGO Island tree nested 100 000 deep. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <string.h>
#include <time.h>

#include "ra_fixture.h"

#define PEAK_MAX (64.0 * 1024 * 1024)
#ifdef RA_SANITIZED
#define TIME_MAX 20.0
#else
#define TIME_MAX 1.0
#endif

typedef struct worst {
    double seconds, peak;
    char what[320];
} worst;
static worst g_slow, g_big;
static long g_cases, g_loaded, g_refused;
static double g_start;

static double now(void);
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* one hostile load: time, peak, and the outcome */
static void one_as(const uint8_t *d, size_t n, const char *path, const char *format, const char *what)
{
    ra_options o;
    ra_options_init(&o);
    if (format) ra_options_add(&o, "format", format);
    ra_error e;
    ra_error_clear(&e);
    ra_document *doc = NULL;
    ra_heap_reset();
    double t0 = now();
    ra_status st = ra_document_load(d, n, path, &o, &doc, &e);
    double dt = now() - t0;
    double peak = (double)ra_heap_get().peak_bytes;
    g_cases++;
    if (st == RA_OK) {
        g_loaded++;
        ra_document_free(doc);
    } else {
        g_refused++;
        CHECK(!doc && e.msg[0] && e.format && e.format[0], "%s: refused without a message", what);
    }
    CHECK(ra_heap_get().live_blocks == 0, "%s: heap blocks left after the load was freed", what);
    CHECK(dt < TIME_MAX, "%s: %.3f s (limit %.0f s)", what, dt, TIME_MAX);
    CHECK(peak < PEAK_MAX, "%s: the heap peaked at %.1f MB", what, peak / 1e6);
    if (dt > g_slow.seconds) g_slow.seconds = dt, snprintf(g_slow.what, sizeof g_slow.what, "%s", what);
    if (peak > g_big.peak) g_big.peak = peak, snprintf(g_big.what, sizeof g_big.what, "%s", what);
}

static void one(const uint8_t *d, size_t n, const char *path, bool body, const char *what)
{
    one_as(d, n, path, body ? "lego_ani_body" : NULL, what);
}

/* At most MAX_LOADS mutated loads per fixture: the offsets are taken with a
 * stride where a fixture has more (every offset of the small ones; a few
 * fixtures bake for milliseconds per load). */
#ifdef RA_SANITIZED
#define MAX_LOADS 250 /* ASan + UBSan: the same kinds of damage, a wider stride */
#else
#define MAX_LOADS 1000
#endif
#define N_PATTERNS 11 /* the word patterns below and the two byte values */

static bool swept(size_t i, size_t size) { return size <= 8192 || i < 512 || i + 512 >= size; }

static void patterns(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    static const struct {
        uint8_t b[4];
        const char *name;
    } words[] = {
        {{0xFF, 0xFF, 0xFF, 0xFF}, "0xFFFFFFFF"}, {{0x00, 0x00, 0xC0, 0x7F}, "NaN (LE)"},
        {{0x7F, 0xC0, 0x00, 0x00}, "NaN (BE)"},   {{0x00, 0x00, 0x80, 0x7F}, "+inf (LE)"},
        {{0x7F, 0x80, 0x00, 0x00}, "+inf (BE)"},  {{0x00, 0x00, 0x80, 0xFF}, "-inf (LE)"},
        {{0x00, 0x00, 0x00, 0x00}, "0"},          {{0x20, 0x00, 0x00, 0x00}, "32 (LE)"},
        {{0x00, 0x00, 0x00, 0x20}, "32 (BE)"},
    };
    char what[320];
    snprintf(what, sizeof what, "%s as it is", nm);
    one(d, n, path, body, what);
    uint8_t *m = malloc(n ? n : 1);
    size_t positions = 0;
    for (size_t i = 0; i < n; i++) positions += swept(i, n);
    size_t stride = (positions * N_PATTERNS + MAX_LOADS - 1) / MAX_LOADS;
    if (stride < 1) stride = 1;
    for (size_t i = 0; i + 4 <= n; i += stride) {
        if (!swept(i, n)) continue;
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            memcpy(m, d, n);
            memcpy(m + i, words[w].b, 4);
            snprintf(what, sizeof what, "%s with %s at byte %zu", nm, words[w].name, i);
            one(m, n, path, body, what);
        }
    }
    for (size_t i = 0; i < n; i += stride) {
        if (!swept(i, n)) continue;
        for (uint8_t v = 0x20; v <= 0x21; v++) {
            memcpy(m, d, n);
            m[i] = v;
            snprintf(what, sizeof what, "%s with byte %zu = %u", nm, i, v);
            one(m, n, path, body, what);
        }
    }
    free(m);
    printf("%-28s %7.2f s so far, %ld loads\n", nm, now() - g_start, g_cases);
    fflush(stdout);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* header, no actors, duration, then 100 000 nodes named "N" each holding the next */
static void lego_deep(void)
{
    const size_t depth = 100000, node = 4 + 1 + 4 * 2 + 4;
    size_t n = 28 + 4 + 4 + depth * node;
    uint8_t *d = calloc(1, n);
    put32(d, 0x11);
    memcpy(d + 4, "\x00\x00\x80\x3f", 4); /* radius 1 */
    put32(d + 24, 1);
    put32(d + 32, 1000);
    for (size_t i = 0; i < depth; i++) {
        uint8_t *p = d + 36 + i * node;
        put32(p, 1);
        p[4] = 'N';
        put32(p + 13, i + 1 < depth ? 1 : 0);
    }
    one(d, n, "deep100000.ani", false, "a LEGO tree nested 100000 deep");
    ra_document *doc = NULL;
    ra_error e;
    ra_error_clear(&e);
    CHECK(ra_document_load(d, n, "deep100000.ani", NULL, &doc, &e) == RA_ERR_LIMIT && strstr(e.msg, "max_depth"),
          "the 100000-deep tree: %s", e.msg);
    ra_document_free(doc);
    free(d);
}

static bool is_regression(const char *name) { return name[0] != '.'; }
static void regression_one(const uint8_t *d, size_t n, const char *path, const char *name, bool body)
{
    /* a regression file is read as the format its extension names, detected or not */
    const ra_format *f = ra_format_by_extension(name);
    char what[320];
    snprintf(what, sizeof what, "regression %s", name);
    one_as(d, n, path, body ? "lego_ani_body" : f ? f->id : NULL, what);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_hostile FIXTURE_DIR...\n");
        return 2;
    }
    g_start = now();
    int files = fx_for_each_fixture(argc - 1, argv + 1, patterns);
    CHECK(files >= 40, "fixtures found: %d", files);
    int regressions = 0;
    for (int a = 1; a < argc; a++) {
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/regressions", argv[a]);
        DIR *probe = opendir(dir);
        if (!probe) continue;
        closedir(probe);
        regressions += fx_for_each_bytes(dir, is_regression, regression_one);
    }
    lego_deep();
    printf("hostile: %d fixtures, %d regression files, %ld loads (%ld loaded, %ld refused)\n", files, regressions,
           g_cases, g_loaded, g_refused);
    printf("slowest: %.3f s (%s)\nlargest heap peak: %.1f MB (%s)\n", g_slow.seconds, g_slow.what, g_big.peak / 1e6,
           g_big.what);
    return ra_test_finish("test_hostile");
}
