/* Unit tests of the common layer: cursor, arena, writer, math, JSON, string
 * map, key tracks and the baker. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, mkfifo */
#include <ctype.h>
#include <float.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__unix__)
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "ra_test.h"
#include "retroanim/ra_archive_internal.h"
#include "retroanim/ra_document.h"

/* An arena's blocks from 128 KiB to a slab (8 MiB) come from glibc's heap,
 * not from pages mapped for each: the first such block raises glibc's mmap
 * threshold above a slab (base.c, raise_mmap_threshold), so that what a load
 * frees is reused by the aiScene's arrays instead of going back to the
 * system.  Run first, while the process has freed no large block (which
 * raises the threshold too); mallinfo2's hblks counts the mapped blocks.
 * Not under a sanitizer (RA_SANITIZED), whose allocator is not glibc's. */
static void test_heap_blocks(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && !defined(RA_SANITIZED) /* mallinfo2 */
    const char *tun = getenv("GLIBC_TUNABLES");
    if (getenv("MALLOC_MMAP_THRESHOLD_") || (tun && strstr(tun, "mmap_threshold"))) {
        printf("heap blocks: the environment sets glibc's mmap threshold, not tested\n");
        return;
    }
    const size_t sizes[] = {(size_t)160 << 10, (size_t)1 << 20, (size_t)3 << 20, ((size_t)8 << 20) - 4096};
    ra_arena *a = ra_arena_create(0);
    CHECK(a != NULL, "arena");
    if (!a) return;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t mapped = mallinfo2().hblks;
        unsigned char *p = ra_arena_alloc(a, sizes[i]);
        CHECK(p != NULL, "a block of %zu bytes", sizes[i]);
        if (p) p[sizes[i] - 1] = 1;
        CHECK(mallinfo2().hblks == mapped, "a block of %zu bytes mapped on its own (%zu mapped blocks, %zu before)",
              sizes[i], mallinfo2().hblks, mapped);
    }
    ra_arena_destroy(a);
#else
    printf("heap blocks: not glibc's allocator (2.33 or later), not tested\n");
#endif
}

static void test_cursor(void)
{
    const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x80, 0x3f, 0xff, 0xfe};
    ra_error e;
    ra_error_clear(&e);
    ra_cursor c;
    ra_cursor_init(&c, b, sizeof b, "test", &e);
    uint16_t u16 = 0;
    uint32_t u32;
    float f;
    CHECK(ra_rd_u16le(&c, &u16, "a") && u16 == 0x0201, "u16le %x", u16);
    c.pos = 0;
    CHECK(ra_rd_u16be(&c, &u16, "a") && u16 == 0x0102, "u16be %x", u16);
    c.pos = 0;
    CHECK(ra_rd_u32le(&c, &u32, "a") && u32 == 0x04030201u, "u32le %x", u32);
    c.pos = 0;
    CHECK(ra_rd_u32be(&c, &u32, "a") && u32 == 0x01020304u, "u32be %x", u32);
    CHECK(ra_rd_f32le(&c, &f, "f") && f == 1.0f, "f32le %g", f);
    int16_t s16 = 0;
    CHECK(ra_rd_s16le(&c, &s16, "s") && s16 == -257, "s16le %d", s16);
    CHECK(ra_cursor_left(&c) == 0, "left %zu", ra_cursor_left(&c));
    /* a failed read records field and offset, and is sticky */
    CHECK(!ra_rd_u8(&c, (uint8_t *)&u16, "past.end"), "read past end must fail");
    CHECK(e.code == RA_ERR_TRUNCATED && e.offset == 10 && strcmp(e.field, "past.end") == 0, "error %d at %llu (%s)",
          e.code, (unsigned long long)e.offset, e.field);
    c.pos = 0;
    CHECK(!ra_rd_u8(&c, (uint8_t *)&u16, "again"), "sticky error");
    CHECK(strcmp(e.field, "past.end") == 0, "first error wins: %s", e.field);
    char buf[256];
    ra_error_format(&e, buf, sizeof buf);
    CHECK(strstr(buf, "test: ") == buf && strstr(buf, "(at byte 10)"), "formatted: %s", buf);

    /* subtraction-form range checks survive huge offsets */
    CHECK(!ra_range_ok(100, 0xFFFFFFF0u, 0x20), "range wrap");
    CHECK(!ra_range_ok(100, UINT64_MAX - 8, 16), "range wrap 64");
    CHECK(ra_range_ok(100, 90, 10) && !ra_range_ok(100, 90, 11), "range edge");

    /* counts are checked against the bytes left before allocating */
    ra_error_clear(&e);
    ra_cursor_init(&c, b, sizeof b, "test", &e);
    CHECK(ra_cursor_check_count(&c, 2, 5, "n"), "2x5 fits in 10");
    CHECK(!ra_cursor_check_count(&c, 0xFFFFFFFFu, 4, "n"), "huge count refused");
    CHECK(e.code == RA_ERR_TRUNCATED && e.offset == 0, "count error at 0");

    /* big-endian floats and doubles */
    const uint8_t be[] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
    ra_error_clear(&e);
    ra_cursor_init(&c, be, sizeof be, "test", &e);
    double d;
    CHECK(ra_rd_f32be(&c, &f, "f") && f == 1.0f, "f32be");
    CHECK(ra_rd_f64be(&c, &d, "d") && d == 2.0, "f64be %g", d);
    /* a string keeps its bytes and gets a NUL */
    ra_arena *a = ra_arena_create(0);
    const uint8_t sb[] = {'a', 'b', 0, 'c'};
    char *s = NULL;
    ra_error_clear(&e);
    ra_cursor_init(&c, sb, sizeof sb, "test", &e);
    CHECK(ra_rd_str(&c, a, 4, &s, "s") && memcmp(s, "ab\0c", 5) == 0, "string bytes");
    ra_arena_destroy(a);
}

static void test_arena_writer(void)
{
    ra_arena *a = ra_arena_create(64 * 1024);
    void *p = ra_arena_alloc(a, 1000);
    CHECK(p && ((uintptr_t)p % 16) == 0, "aligned");
    CHECK(ra_arena_array(a, SIZE_MAX / 2, 4) == NULL, "overflowing array refused");
    CHECK(ra_arena_alloc(a, 1 << 20) == NULL, "memory limit enforced");
    CHECK(ra_arena_alloc(a, 100) != NULL, "arena usable after a refused allocation");
    CHECK(ra_arena_used(a) <= 64 * 1024, "used %zu", ra_arena_used(a));
    char *s = ra_arena_printf(a, "%s-%d", "x", 42);
    CHECK(s && strcmp(s, "x-42") == 0, "printf %s", s ? s : "(null)");
    ra_arena_destroy(a);

    /* A block too large for the head's free space (but with 4 KiB or more
     * left there) gets a chunk of its own size behind the head, not a
     * doubled chunk: fill a 16 MiB head to 6000 free bytes, then ask for
     * 8000 bytes fifty times. */
    a = ra_arena_create(0);
    size_t big = (16u << 20) - 6000;
    CHECK(ra_arena_alloc(a, big) && ra_arena_alloc(a, 16) && ra_arena_alloc(a, (16u << 20) - 16 - 6000), "alloc");
    size_t before = ra_arena_used(a);
    for (int i = 0; i < 50; i++) CHECK(ra_arena_alloc(a, 8000), "alloc 8000");
    CHECK(ra_arena_used(a) - before < 50 * 8200, "50 blocks of 8000 bytes took %zu bytes of arena",
          ra_arena_used(a) - before);
    ra_arena_destroy(a);

    /* A large arena's slabs: past 32 MiB, blocks of 64 KiB to 1 MiB share
     * 8 MiB chunks.  200 blocks of 64 KiB .. 1 MiB (plus small ones between
     * them), each filled with its own byte, must all keep their bytes (no
     * two overlap), the zeroed ones start at zero, the arena's count stays
     * near what was asked (slabs leave at most an eighth over), and an arena
     * with a limit refuses past it.  Then the blocks move to another arena
     * (ra_arena_adopt) and stay readable. */
    a = ra_arena_create(0);
    enum {
        NB = 200
    };
    uint8_t *blk[NB];
    size_t len[NB], asked = 0;
    bool ok = true;
    for (int i = 0; i < NB; i++) {
        len[i] = ((size_t)64 << 10) + (size_t)((i * 7919) % 960) * 1024;
        blk[i] = (uint8_t *)(i % 3 ? ra_arena_alloc(a, len[i]) : ra_arena_array_uninit(a, len[i], 1));
        if (!blk[i]) {
            ok = false;
            break;
        }
        if (i % 3)
            for (size_t k = 0; k < len[i]; k += 4093) ok = ok && blk[i][k] == 0;
        memset(blk[i], i & 0xff, len[i]);
        asked += len[i];
        if (i % 5 == 0) ok = ok && ra_arena_alloc(a, 100 + (size_t)i) != NULL;
    }
    CHECK(ok, "slab blocks allocated, the zeroed ones zero");
    ra_arena *b = ra_arena_create(0);
    CHECK(ra_arena_alloc(b, 10) && ra_arena_adopt(b, a), "adopt");
    for (int i = 0; ok && i < NB; i++)
        for (size_t k = 0; k < len[i]; k += 511) ok = ok && blk[i][k] == (uint8_t)(i & 0xff);
    CHECK(ok, "slab blocks keep their bytes (no two overlap)");
    CHECK(ra_arena_used(b) < asked + asked / 4 + ((size_t)40 << 20), "%zu bytes of arena for %zu asked",
          ra_arena_used(b), asked);
    ra_arena_destroy(b);
    a = ra_arena_create((size_t)40 << 20);
    size_t got = 0;
    while (ra_arena_alloc(a, (size_t)1 << 20)) got++;
    CHECK(got >= 30 && got < 40 && ra_arena_used(a) <= ((size_t)40 << 20),
          "limited arena: %zu blocks of 1 MiB, %zu bytes", got, ra_arena_used(a));
    ra_arena_destroy(a);

    ra_writer w;
    ra_writer_init(&w);
    ra_wr_u32le(&w, 0x11223344);
    ra_wr_u16be(&w, 0xAABB);
    ra_wr_f32le(&w, 1.0f);
    const uint8_t want[] = {0x44, 0x33, 0x22, 0x11, 0xAA, 0xBB, 0, 0, 0x80, 0x3f};
    CHECK(w.size == sizeof want && memcmp(w.data, want, sizeof want) == 0, "writer bytes");
    ra_writer_free(&w);
}

/* Key chunks (ra_arena_keys_memdup, ra_arena_take_keys): 300 key arrays of
 * 1 .. 60,000 bytes, each filled with its own byte, one of them used by two
 * "channels" and one by none.  Every array keeps its bytes until it is
 * dropped; the chunks go as their last array is dropped (the heap's live
 * bytes fall as the arrays are dropped in order, so the early release
 * happens), and at the end the thread's heap statistics are back to where
 * they were with only the arena's own memory left. */
static void test_key_chunks(void)
{
    enum {
        N = 300
    };
    ra_heap_stats h0 = ra_heap_get();
    ra_arena *a = ra_arena_create(0);
    CHECK(ra_arena_alloc(a, 100) != NULL, "alloc");
    uint8_t *arr[N];
    size_t len[N];
    uint8_t src[60000];
    for (int i = 0; i < N; i++) {
        len[i] = 1 + (size_t)(i * 7919) % 60000;
        memset(src, i & 0xFF, len[i]);
        arr[i] = ra_arena_keys_memdup(a, src, len[i], 1);
        CHECK(arr[i] && ((uintptr_t)arr[i] % 16) == 0, "key array %d", i);
        if (!arr[i]) return;
    }
    ra_heap_stats h1 = ra_heap_get();
    ra_key_chunks *k = ra_arena_take_keys(a);
    CHECK(k != NULL, "key chunks taken");
    for (int i = 0; i < N; i++)
        if (i != 7) ra_key_chunks_use(k, arr[i]);
    ra_key_chunks_use(k, arr[100]); /* a shared array: two channels */
    ra_key_chunks_use(k, &len[0]);  /* not a key array: ignored */
    ra_key_chunks_ready(k);
    size_t chunks = ra_key_chunks_left(k), mid = 0;
    CHECK(chunks >= 2, "%zu key chunks", chunks);
    bool bytes_kept = true;
    for (int i = 0; i < N; i++) {
        if (i == 7) continue;
        for (size_t b = 0; b < len[i]; b++) bytes_kept &= arr[i][b] == (uint8_t)(i & 0xFF);
        ra_key_chunks_drop(k, arr[i]);
        if (i == N / 2) mid = ra_key_chunks_left(k);
    }
    CHECK(bytes_kept, "every key array kept its bytes until it was dropped");
    CHECK(arr[100][0] == 100 && arr[100][len[100] - 1] == 100, "the shared array outlives its first drop");
    CHECK(mid > 0 && mid < chunks, "half the arrays dropped: %zu of %zu chunks left", mid, chunks);
    CHECK(ra_key_chunks_left(k) == 1, "all but the shared array dropped: %zu chunks left", ra_key_chunks_left(k));
    ra_key_chunks_drop(k, arr[100]);
    CHECK(ra_key_chunks_left(k) == 0, "all dropped: %zu chunks left", ra_key_chunks_left(k));
    ra_key_chunks_free(k);
    ra_heap_stats h2 = ra_heap_get();
    CHECK(h2.live_bytes < h1.live_bytes - (int64_t)(N * 30000 / 2), "the key chunks were freed: %lld -> %lld bytes",
          (long long)h1.live_bytes, (long long)h2.live_bytes);
    ra_arena_destroy(a);
    ra_heap_stats h3 = ra_heap_get();
    CHECK(h3.live_blocks == h0.live_blocks && h3.live_bytes == h0.live_bytes,
          "heap back to %lld blocks / %lld bytes, is %lld / %lld", (long long)h0.live_blocks, (long long)h0.live_bytes,
          (long long)h3.live_blocks, (long long)h3.live_bytes);
    CHECK(ra_arena_take_keys(NULL) == NULL, "no arena, no key chunks");
}

static void test_math(void)
{
    ra_quat q = ra_q_axis_angle(ra_v3(0, 1, 0), RA_PI / 2);
    ra_vec3 v = ra_q_rotate(q, ra_v3(1, 0, 0));
    CHECK(fabs(v.x) < 1e-12 && fabs(v.z + 1) < 1e-12, "rotate +90 about Y: (%g,%g,%g)", v.x, v.y, v.z);
    ra_mat4 m = ra_m4_compose(ra_v3(1, 2, 3), q, ra_v3(2, 3, 4));
    ra_vec3 t, s;
    ra_quat r;
    CHECK(ra_m4_decompose(&m, &t, &r, &s), "decompose");
    CHECK(fabs(t.y - 2) < 1e-12 && fabs(s.z - 4) < 1e-12 && ra_q_angle_between(r, q) < 1e-9, "decompose values");
    /* shortest vs raw slerp on a negative dot */
    ra_quat a = ra_q_axis_angle(ra_v3(0, 1, 0), 20 * RA_PI / 180);
    ra_quat b = ra_q_neg(ra_q_axis_angle(ra_v3(0, 1, 0), 60 * RA_PI / 180));
    ra_quat mid_s = ra_q_slerp_shortest(a, b, 0.5), mid_r = ra_q_slerp_raw(a, b, 0.5);
    CHECK(ra_q_angle_between(mid_s, ra_q_axis_angle(ra_v3(0, 1, 0), 40 * RA_PI / 180)) < 1e-9, "shortest arc mid");
    CHECK(ra_q_angle_between(mid_r, ra_q_axis_angle(ra_v3(0, 1, 0), -140 * RA_PI / 180)) < 1e-9, "long arc mid");
    ra_quat e = ra_q_from_euler_xyz(0.3, -0.2, 0.1);
    ra_quat e2 = ra_q_mul(ra_q_axis_angle(ra_v3(0, 0, 1), 0.1),
                          ra_q_mul(ra_q_axis_angle(ra_v3(0, 1, 0), -0.2), ra_q_axis_angle(ra_v3(1, 0, 0), 0.3)));
    CHECK(ra_q_angle_between(e, e2) < 1e-12, "euler xyz");
    ra_mat4 mm = ra_m4_mirror_z(&m);
    ra_mat4 back = ra_m4_mirror_z(&mm);
    CHECK(ra_m4_max_abs_diff(&back, &m) == 0, "mirror is an involution");
    CHECK(ra_step_epsilon(1.0) == 1e-4 && ra_step_epsilon(5000.0) > 1e-4, "step epsilon");
}

/* ra_f32_floor's bit step against nextafterf: random doubles of every
 * magnitude and sign, and the edges (zeros, tiny negatives that round to
 * -0, subnormals, FLT_MAX and beyond, infinities, NaN). */
static float f32_floor_ref(double t)
{
    float f = (float)t;
    return (double)f > t ? nextafterf(f, -INFINITY) : f;
}

static void test_f32_floor(void)
{
    const double edge[] = {0.0,    -0.0,      -1e-300,  1e-300,     -1e-46,     1e-46,          1e-45,
                           -1e-45, 1.5e-45,   -1.5e-45, 1e-38,      -1e-38,     FLT_MAX,        -FLT_MAX,
                           3.5e38, -3.5e38,   1e300,    -1e300,     INFINITY,   -INFINITY,      0.1,
                           -0.1,   1.0 / 3.0, -1.0 / 3, 16777217.0, -16777217., 0x1.fffffffp127};
    int bad = 0;
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        float a = ra_f32_floor(edge[i]), b = f32_floor_ref(edge[i]);
        if (memcmp(&a, &b, sizeof a) != 0 && bad++ < 3)
            CHECK(0, "ra_f32_floor(%.17g) = %.9g, nextafterf %.9g", edge[i], a, b);
    }
    float n = ra_f32_floor(NAN);
    CHECK(n != n, "ra_f32_floor(NaN) is NaN");
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double t = ldexp((double)(x >> 11) / 9007199254740992.0, (int)(x % 300) - 150) * (x & 1024 ? -1 : 1);
        float a = ra_f32_floor(t), b = f32_floor_ref(t);
        if (memcmp(&a, &b, sizeof a) != 0 && bad++ < 3)
            CHECK(0, "ra_f32_floor(%.17g) = %.9g, nextafterf %.9g", t, a, b);
    }
    CHECK(bad == 0, "%d values differ from nextafterf's", bad);
}

static void test_json(void)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_json j;
    ra_json_init_buffer(&j, &w, false);
    ra_json_begin_object(&j);
    ra_json_key(&j, "a\"b");
    ra_json_string_n(&j, "x\n\x01\xff", 4);
    ra_json_key(&j, "n");
    ra_json_begin_array(&j);
    ra_json_number(&j, 0.1f);
    ra_json_number(&j, NAN);
    ra_json_int(&j, -3);
    ra_json_end_array(&j);
    ra_json_end_object(&j);
    ra_wr_u8(&w, 0);
    const char *want = "{\"a\\\"b\":\"x\\n\\u0001\\u00ff\",\"n\":[0.100000001,null,-3]}";
    CHECK(strcmp((const char *)w.data, want) == 0, "json: %s", (const char *)w.data);
    ra_writer_free(&w);
}

/* ra_json_numbers writes what begin_array, ra_json_number per value and
 * end_array write, pretty or not, for rows of 0 to 10 numbers (composed at
 * once up to 8) of every kind ra_json_number prints: whole, float32, a
 * double needing 17 digits, NaN, infinity, negative zero, tiny and huge. */
static void test_json_numbers(void)
{
    static const double v[] = {0.1f, -3, 1e300, NAN, 0.1, -0.0, 5e-324, INFINITY, 123456789, 1.5e-7, 2};
    int bad = 0;
    for (int pretty = 0; pretty < 2; pretty++)
        for (size_t n = 0; n <= 10; n++) {
            ra_writer a, b;
            ra_writer_init(&a);
            ra_writer_init(&b);
            ra_json ja, jb;
            ra_json_init_buffer(&ja, &a, pretty);
            ra_json_init_buffer(&jb, &b, pretty);
            ra_json_begin_object(&ja);
            ra_json_begin_object(&jb);
            ra_json_key(&ja, "rows");
            ra_json_key(&jb, "rows");
            ra_json_begin_array(&ja);
            ra_json_begin_array(&jb);
            for (size_t row = 0; row < 2; row++) {
                ra_json_numbers(&ja, v + row, n);
                ra_json_begin_array(&jb);
                for (size_t i = 0; i < n; i++) ra_json_number(&jb, v[row + i]);
                ra_json_end_array(&jb);
            }
            ra_json_end_array(&ja);
            ra_json_end_array(&jb);
            ra_json_end_object(&ja);
            ra_json_end_object(&jb);
            if (a.failed || b.failed || a.size != b.size || memcmp(a.data, b.data, a.size)) {
                bad++;
                fprintf(stderr, "ra_json_numbers n=%zu pretty=%d: %.*s\n  want %.*s\n", n, pretty, (int)a.size,
                        (const char *)a.data, (int)b.size, (const char *)b.data);
            }
            ra_writer_free(&a);
            ra_writer_free(&b);
        }
    CHECK(bad == 0, "ra_json_numbers: %d rows differ from the per-token writer's", bad);
}

/* ra_json_g9 (ra_json_number's %.9g of float32 values) against snprintf:
 * 2,000,000 floats (random bit patterns of every exponent it takes, numbers
 * near powers of ten, binary fractions with exact ties at the ninth digit,
 * short decimals); where it answers it must print the same bytes, and it
 * must answer for nearly all of them (else snprintf does the work; the
 * exact ties go to snprintf). */
static void test_json_float_digits(void)
{
    uint32_t x = 12345;
    long n = 0, answered = 0, bad = 0;
    for (int i = 0; i < 2000000; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        float f;
        if (i % 4 == 0) {
            uint32_t bits = (x & 0x807FFFFFu) | ((uint32_t)(110 + (x >> 7) % 65) << 23); /* 2^-17 .. 2^47 */
            memcpy(&f, &bits, 4);
        } else if (i % 4 == 1) {
            static const double p10[] = {1e-4, 1e-3, 0.01, 0.1, 1,   10,  1e2,  1e3,
                                         1e4,  1e5,  1e6,  1e7, 1e8, 1e9, 1e13, 1e14};
            f = (float)(p10[x % 16] * (1 + ((double)(x >> 8) / 16777216.0 - 0.5) * 1e-6));
            if (x & 1) f = nextafterf(f, (x & 2) ? 1e30f : 0);
        } else if (i % 4 == 2) {
            f = (float)((double)(x % 2000000000u) / 16.0); /* exact ties at the ninth digit */
        } else {
            f = (float)(x % 100000) * 1e-3f * (x & 1 ? -1 : 1);
        }
        double v = f;
        if (!(fabs(v) >= 1e-5 && fabs(v) < 1e15)) continue;
        n++;
        char got[40], want[40];
        if (!ra_json_g9(v, got)) continue;
        answered++;
        snprintf(want, sizeof want, "%.9g", v);
        if (strcmp(got, want) != 0 && bad++ < 5) fprintf(stderr, "float %a: %s, %%.9g %s\n", v, got, want);
    }
    CHECK(bad == 0, "ra_json_g9: %ld of %ld floats print other than %%.9g", bad, answered);
    CHECK(n > 1500000 && answered * 100 > n * 95, "ra_json_g9 answered %ld of %ld", answered, n);
}

static void test_strmap(void)
{
    ra_arena *a = ra_arena_create(0);
    ra_strmap m;
    CHECK(ra_strmap_init(&m, a, 2), "init");
    char names[200][8];
    for (int i = 0; i < 200; i++) {
        snprintf(names[i], sizeof names[i], "n%d", i);
        uint32_t *v = ra_strmap_slot(&m, names[i]);
        *v = (uint32_t)i + 1;
    }
    const uint32_t *g = ra_strmap_get(&m, "n123");
    CHECK(g && *g == 124 && m.count == 200, "lookup after growth");
    CHECK(ra_strmap_get(&m, "nope") == NULL, "missing");
    ra_arena_destroy(a);
}

/* ra_meta_add_refs: entries appended after those set before, in order, as
 * given (the key and string pointers kept, not copied), over several
 * growths; n = 0 changes nothing. */
static void test_meta_add_refs(void)
{
    ra_arena *a = ra_arena_create(0);
    ra_meta_list m = {0};
    CHECK(ra_meta_set_int(a, &m, "first", 7) && ra_meta_add_refs(a, &m, NULL, 0) && m.count == 1,
          "one set, none added");
    static const char *const keys[] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"};
    static const char text[] = "shared text";
    size_t total = 1;
    for (size_t round = 0; round < 6; round++) {
        ra_meta e[10];
        for (size_t i = 0; i < 10; i++) {
            e[i].key = keys[i];
            e[i].type = i % 2 ? RA_META_STRING : RA_META_INT;
            if (i % 2) e[i].u.s = text;
            else e[i].u.i = (int64_t)(round * 100 + i);
        }
        static const size_t ns[6] = {8, 3, 10, 5, 10, 7}; /* the first one past the room by one */
        size_t n = ns[round];
        CHECK(ra_meta_add_refs(a, &m, e, n) && m.count == total + n && m.cap >= m.count,
              "round %zu: %zu added, within the capacity (%zu of %zu)", round, n, m.count, m.cap);
        for (size_t i = 0; i < n; i++) {
            const ra_meta *g = &m.items[total + i];
            bool same = g->key == keys[i] && g->type == e[i].type &&
                        (i % 2 ? g->u.s == text : g->u.i == (int64_t)(round * 100 + i));
            CHECK(same, "round %zu, entry %zu: as given", round, i);
        }
        total += n;
    }
    CHECK(m.count == total && m.cap >= total && m.items[0].u.i == 7 && !strcmp(m.items[0].key, "first"),
          "%zu entries, the first one kept", total);
    ra_arena_destroy(a);
}

/* ra_archive_warn: 100,000 warnings in an arena of 16 MiB (growing the list
 * by one copied it each time: 4 W^2 bytes, 40 GB here) */
static void test_archive_warnings(void)
{
    ra_archive ar;
    memset(&ar, 0, sizeof ar);
    ar.arena = ra_arena_create(16u << 20);
    bool ok = ar.arena != NULL;
    for (int i = 0; ok && i < 100000; i++) ok = ra_archive_warn(&ar, "entry %d is not listed", i);
    CHECK(ok && ar.warning_count == 100000 && !strcmp(ar.warnings[99999], "entry 99999 is not listed") &&
              !strcmp(ar.warnings[0], "entry 0 is not listed"),
          "100000 warnings kept in order (%zu, %zu bytes)", ar.warning_count, ar.arena ? ra_arena_used(ar.arena) : 0);
    ra_arena_destroy(ar.arena);
}

/* ra_scene_warn: repeats counted on their message; past RA_MAX_WARNINGS - 1
 * distinct messages every new one is counted in the last entry, and a
 * repeat of a kept one still on its own. */
static void test_warning_cap(void)
{
    ra_arena *a = ra_arena_create(0);
    ra_scene s;
    ra_scene_init(&s, a, "test");
    for (int i = 0; i < 1000; i++) ra_scene_warn(&s, "warning %d", i);
    for (int i = 0; i < 1000; i += 100) ra_scene_warn(&s, "warning %d", i); /* 0 .. 200 kept, 300 .. 900 not */
    bool kept = s.warning_count == RA_MAX_WARNINGS;
    for (size_t i = 0; kept && i + 1 < s.warning_count; i++) {
        char want[32];
        snprintf(want, sizeof want, "warning %zu", i);
        kept = !strcmp(s.warnings[i].msg, want) && s.warnings[i].count == (i % 100 ? 1u : 2u);
    }
    CHECK(kept, "%zu entries, the first %d messages in order with their repeats", s.warning_count, RA_MAX_WARNINGS - 1);
    const ra_warning *last = s.warning_count ? &s.warnings[s.warning_count - 1] : NULL;
    CHECK(last && !strcmp(last->msg, RA_MORE_WARNINGS) && last->count == 1000 - (RA_MAX_WARNINGS - 1) + 7,
          "the last entry counts the %d others and 7 repeats of them (%u)", 1000 - (RA_MAX_WARNINGS - 1),
          last ? last->count : 0);
    ra_arena_destroy(a);
}

/* A step function baked into keys: linear playback must keep the step. */
typedef struct {
    double at;
} step_ctx;
static ra_trs step_eval(const void *ctx, double t)
{
    const step_ctx *c = ctx;
    ra_trs r = {ra_v3(t < c->at ? 0 : 5, 0, 0), ra_q_identity(), ra_v3(1, 1, 1)};
    return r;
}
/* A 320-degree turn about Y (the long arc) over one second. */
static ra_trs spin_eval(const void *ctx, double t)
{
    (void)ctx;
    double f = t < 0 ? 0 : t > 1 ? 1 : t;
    ra_trs r = {ra_v3(0, 0, 0), ra_q_axis_angle(ra_v3(0, 1, 0), (20 - 320 * f) * RA_PI / 180), ra_v3(1, 1, 1)};
    return r;
}

static void test_bake(void)
{
    ra_arena *a = ra_arena_create(0);
    step_ctx c = {0.5};
    double br[] = {0.5};
    ra_channel ch;
    ra_error e;
    ra_error_clear(&e);
    memset(&ch, 0, sizeof ch);
    CHECK(ra_bake_channel(a, step_eval, &c, br, 1, NULL, &ch, &e) == RA_OK, "bake step");
    /* playback: 0 until just before 0.5, 5 from 0.5 on */
    ra_scene s;
    ra_scene_init(&s, a, "test");
    ra_scene_add_node(&s, "n", -1, NULL);
    ra_animation an = {"a", 1, 1, &ch, 1, NULL, 0};
    s.animations = &an;
    s.animation_count = 1;
    ch.node = 0;
    for (int ms = 0; ms <= 1000; ms++) {
        ra_mat4 m = ra_scene_sample_local(&s, 0, 0, ms / 1000.0);
        double want = ms < 500 ? 0 : 5;
        if (fabs(m.m[0][3] - want) > 1e-9) {
            CHECK(0, "step at %d ms: %g", ms, m.m[0][3]);
            break;
        }
    }
    CHECK(ch.position_count == 3, "step needs 3 keys, got %zu", ch.position_count);

    double br2[] = {0, 1};
    memset(&ch, 0, sizeof ch);
    CHECK(ra_bake_channel(a, spin_eval, NULL, br2, 2, NULL, &ch, &e) == RA_OK, "bake spin");
    double worst = 0;
    for (int ms = 0; ms <= 1000; ms++) {
        ra_mat4 m = ra_scene_sample_local(&s, 0, 0, ms / 1000.0);
        ra_trs want = spin_eval(NULL, ms / 1000.0);
        ra_mat4 w = ra_m4_compose(want.t, want.r, want.s);
        double d = ra_m4_max_abs_diff(&m, &w);
        if (d > worst) worst = d;
    }
    CHECK(worst < 1e-6, "long arc reproduced by shortest-arc playback, max error %g", worst);
    for (size_t k = 1; k < ch.rotation_count; k++)
        CHECK(ra_q_dot(ch.rotation[k - 1].q, ch.rotation[k].q) > 0, "hemisphere-continuous keys");
    ra_arena_destroy(a);
}

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* ra_breaks_sort against qsort: one to 40 ascending runs of random lengths
 * (some empty, some shared values), and a reversed list (every run one long). */
static void test_breaks_sort(void)
{
    uint32_t seed = 12345;
    for (int round = 0; round < 200; round++) {
        ra_breaks b = {0};
        bool ok = true;
        int runs = round < 190 ? 1 + round % 40 : 0;
        for (int r = 0; r < runs && ok; r++) {
            double t = 0;
            seed = seed * 1664525u + 1013904223u;
            for (uint32_t k = 0, len = seed >> 25; k < len && ok; k++) {
                seed = seed * 1664525u + 1013904223u;
                t += (seed >> 28) * 0.25; /* steps of 0 .. 3.75: repeated values */
                ok = ra_breaks_push(&b, t);
            }
        }
        for (int k = 0; runs == 0 && k < 300 && ok; k++) ok = ra_breaks_push(&b, 300.0 - k);
        CHECK(ok, "out of memory building breaks");
        double *want = ra_malloc((b.n ? b.n : 1) * sizeof *want);
        CHECK(want != NULL, "out of memory");
        if (!ok || !want) {
            ra_free(b.v);
            return;
        }
        if (b.n) memcpy(want, b.v, b.n * sizeof *want);
        qsort(want, b.n, sizeof *want, cmp_dbl);
        CHECK(ra_breaks_sort(&b), "round %d: sort out of memory", round);
        size_t bad = b.n;
        for (size_t i = 0; i < b.n && bad == b.n; i++)
            if (b.v[i] != want[i]) bad = i;
        CHECK(bad == b.n, "round %d (%d runs, %zu values): differs from qsort at %zu", round, runs, b.n, bad);
        ra_free(want);
        ra_free(b.v);
    }
}

static void test_options(void)
{
    ra_options o;
    ra_options_init(&o);
    char store[128];
    CHECK(ra_options_parse_list(&o, "coords=native; ticks=native,x=1", store, sizeof store), "parse");
    CHECK(ra_options_is(&o, "coords", "native") && ra_options_is(&o, "ticks", "native"), "values");
    CHECK(ra_options_get_double(&o, "x", 0) == 1, "double");
    ra_options_init(&o);
    CHECK(!ra_options_parse_list(&o, "novalue", store, sizeof store), "malformed refused");
}

/* repeated and reserved names get "#2", "#3"... in order */
static void test_unique_names(void)
{
    ra_arena *a = ra_arena_create(0);
    const char *names[6] = {"RootNode", "door", "door", "RootNode", "door#2", "x"};
    static const char *const reserved[1] = {"RootNode"};
    CHECK(ra_names_make_unique(a, names, 6, reserved, 1), "make_unique");
    static const char *const want[6] = {"RootNode#2", "door", "door#2", "RootNode#3", "door#2#2", "x"};
    for (int i = 0; i < 6; i++) CHECK(!strcmp(names[i], want[i]), "name %d: %s, expected %s", i, names[i], want[i]);
    /* two names that differ only after RA_NAME_MAX bytes: cut, then told apart */
    char *l1 = calloc(1501, 1), *l2 = calloc(1501, 1);
    memset(l1, 'n', 1500), memset(l2, 'n', 1500), l2[1200] = 'x';
    const char *longs[2] = {l1, l2};
    CHECK(ra_names_make_unique(a, longs, 2, NULL, 0), "make_unique long");
    CHECK(strlen(longs[0]) == RA_NAME_MAX && strlen(longs[1]) == RA_NAME_MAX + 2 &&
              !strcmp(longs[1] + RA_NAME_MAX, "#2"),
          "long names cut at %u bytes and made unique: %zu, %zu", RA_NAME_MAX, strlen(longs[0]), strlen(longs[1]));
    free(l1), free(l2);
    ra_arena_destroy(a);
}

/* The next number of a 64-bit linear congruential stream, uniform in [0, 1)
 * (its top 53 bits): the same sequence on every machine and compiler. */
static double rnd01(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*seed >> 11) / 9007199254740992.0;
}

/* ra_key_cut_apply against the exact slerp: random key pairs at arcs from
 * 0.05 to 179 degrees (some on opposite hemispheres, some a step apart),
 * cut at 0.5 to 20 degrees, so that spans take from 1 to past the
 * recurrence's 16 pieces.  Every inserted key must lie within 2e-14 (sum
 * over the components: the recurrence's bound, 7.4e-15 per weight) of
 * ra_q_slerp_shortest(k0, k1, j / np) (sign of the quaternion aside) at
 * k0.t + (k1.t - k0.t) j / np, be of length 1 within 2e-14, on the
 * previous key's hemisphere, and the count must be ra_key_cut_count's. */
static size_t g_cut_n;
static ra_quat_key g_cut[4096];
static void cut_sink(void *ctx, const ra_quat_key *k, size_t at, size_t n)
{
    (void)ctx;
    for (size_t i = 0; i < n && at + i < 4096; i++) g_cut[at + i] = k[i];
    if (at + n > g_cut_n) g_cut_n = at + n;
}

static void test_key_cut(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double worst = 0, worst_len = 0;
    long pieces = 0, recurrence = 0, halving = 0, beyond = 0;
    for (int it = 0; it < 4000; it++) {
        (void)rnd01(&seed); /* skipped: the pairs stay those this test has always drawn */
        double u[8];
        for (int i = 0; i < 8; i++) u[i] = rnd01(&seed);
        ra_vec3 axis = ra_v3(u[0] - 0.5, u[1] - 0.5, u[2] - 0.5);
        double arc = (0.05 + u[3] * 178.95) * RA_PI / 180, cut = (0.5 + u[4] * 19.5) * RA_PI / 180;
        ra_quat k0q = ra_q_normalize(ra_q_from_euler_xyz(u[5] * 6, u[6] * 6, u[7] * 6));
        ra_quat k1q = ra_q_mul(ra_q_axis_angle(axis, arc), k0q);
        if (it % 3 == 1) k1q = ra_q_neg(k1q);
        ra_quat_key k[2] = {{1.5, k0q}, {it % 50 == 7 ? 1.5 + 1e-5 : 1.5 + 0.25 + u[3], k1q}};
        ra_key_cutter c;
        ra_key_cutter_init(&c, cut);
        size_t added = ra_key_cut_count(&c, k, 2), np = added + 1;
        if (np > 4000) continue;
        g_cut_n = 0;
        ra_key_cut_apply(&c, k, 2, cut_sink, NULL);
        CHECK(g_cut_n == added + 2, "cut %d: %zu keys written, %zu counted", it, g_cut_n, added + 2);
        if (g_cut_n != added + 2) continue;
        pieces += (long)np;
        recurrence += np > 1 && np <= 16 && (np & (np - 1));
        halving += np > 1 && np <= 16 && !(np & (np - 1));
        beyond += np > 16;
        for (size_t j = 1; j < np; j++) {
            const ra_quat_key *q = &g_cut[j];
            ra_quat e = ra_q_slerp_shortest(k0q, k1q, (double)j / (double)np);
            double dp = fabs(q->q.w - e.w) + fabs(q->q.x - e.x) + fabs(q->q.y - e.y) + fabs(q->q.z - e.z);
            double dn = fabs(q->q.w + e.w) + fabs(q->q.x + e.x) + fabs(q->q.y + e.y) + fabs(q->q.z + e.z);
            double d = fmin(dp, dn), l = fabs(ra_q_len(q->q) - 1);
            worst = fmax(worst, d);
            worst_len = fmax(worst_len, l);
            double t = k[0].t + (k[1].t - k[0].t) * ((double)j / (double)np);
            CHECK(d <= 2e-14 && l <= 2e-14 && q->t == t && ra_q_dot(q->q, g_cut[j - 1].q) >= 0,
                  "cut %d, key %zu of %zu: %.3g from the slerp, length off by %.3g, t %.17g (want %.17g)", it, j, np, d,
                  l, q->t, t);
        }
    }
    CHECK(recurrence > 1000 && halving > 300 && beyond > 50, "spans by the recurrence %ld, by halving %ld, beyond %ld",
          recurrence, halving, beyond);
    printf("key cut: %ld pieces (%ld spans by the recurrence, %ld by halving, %ld beyond), worst %.3g from slerp, "
           "length %.3g\n",
           pieces, recurrence, halving, beyond, worst, worst_len);
}

/* Rotation simplification on the circle (keys about Z alone) against the
 * general test: random tracks of half angles moving smoothly with turns,
 * stops and jumps, wrapping past +-pi and with keys negated (q and -q are one
 * rotation), at the bakers' tolerances; the keys kept must be the same, and
 * every key dropped within tol of the playback of those kept. */
static void test_simplify_circle(void)
{
    uint64_t seed = 0x2545f4914f6cdd1dull;
    long tracks = 0, keys = 0, kept = 0, negated = 0;
    double worst = 0;
    enum {
        N = 400
    };
    static ra_quat_key gen[N], circ[N], orig[N];
    for (int it = 0; it < 600; it++) {
        size_t n = 3 + (size_t)(rnd01(&seed) * (N - 3));
        double tol = it % 3 ? 4e-6 : 1e-5, max_angle = (30 + rnd01(&seed) * 150) * RA_PI / 180;
        double h = (rnd01(&seed) - 0.5) * 2 * RA_PI, rate = (rnd01(&seed) - 0.5) * 8, t = rnd01(&seed);
        for (size_t i = 0; i < n; i++) {
            double u = rnd01(&seed);
            if (u < 0.05) rate = (rnd01(&seed) - 0.5) * 8;          /* a turn */
            else if (u < 0.08) rate = 0;                            /* a stop */
            else if (u < 0.10) h += (rnd01(&seed) - 0.5) * 1.5;     /* a jump */
            else if (u < 0.40) rate += (rnd01(&seed) - 0.5) * 1e-3; /* a drift */
            double dt = 1.0 / 60;
            t += dt;
            h += rate * dt;
            orig[i].t = t;
            orig[i].q = (ra_quat){cos(h), 0, 0, sin(h)};
            if (rnd01(&seed) < 0.1) orig[i].q = ra_q_neg(orig[i].q), negated++;
        }
        memcpy(gen, orig, n * sizeof *gen);
        memcpy(circ, orig, n * sizeof *circ);
        size_t ng = n, nc = n;
        CHECK(ra_quat_keys_simplify(gen, &ng, tol, max_angle, false) &&
                  ra_quat_keys_simplify(circ, &nc, tol, max_angle, true),
              "track %d: simplified", it);
        bool same = ng == nc && !memcmp(gen, circ, ng * sizeof *gen);
        CHECK(same, "track %d (%zu keys, tol %g): general keeps %zu, the circle %zu", it, n, tol, ng, nc);
        tracks++, keys += (long)n, kept += (long)nc;
        /* every original key against the playback of the kept ones */
        for (size_t i = 0, s = 0; i < n && nc >= 2; i++) {
            while (s + 2 < nc && circ[s + 1].t <= orig[i].t) s++;
            double f = (orig[i].t - circ[s].t) / (circ[s + 1].t - circ[s].t);
            if (f < 0 || f > 1) continue;
            double err = ra_q_angle_between(ra_q_slerp_shortest(circ[s].q, circ[s + 1].q, f), orig[i].q);
            worst = fmax(worst, err);
            CHECK(err <= tol * (1 + 1e-6) + 1e-12, "track %d key %zu: %.3g from playback (tol %g)", it, i, err, tol);
        }
    }
    CHECK(kept < keys / 2, "the tracks simplify (%ld of %ld keys kept)", kept, keys);
    printf("simplify on the circle: %ld tracks, %ld keys (%ld negated), %ld kept, worst %.3g from playback\n", tracks,
           keys, negated, kept, worst);
}

/* The shortcuts of ra_quat_keys_simplify (a key far from a short or a long
 * span's nlerp is kept without the span's roots) against the same greedy
 * walk deciding every key with ra_q_slerp_near_exact alone: random tracks
 * about random axes, keys at uneven times turning 0.01 to 20 degrees a key
 * on average, some keys on the slerp between their neighbours (off the
 * nlerp, by up to the deviation the shortcuts allow for), at tolerances
 * from 1e-7 to 1e-3.  The keys kept must be the same.  (At the Metroid
 * Prime bake's 1e-9, ra_q_slerp_near's own nlerp shortcut keeps a few keys
 * lying within rounding of the slerp that the exact test drops: the walk
 * with near_shortcut decides by ra_q_slerp_near, for test_simplify_tiny_tol.) */
static size_t simplify_walk(ra_quat_key *k, size_t n, double tol, double max_angle, bool near_shortcut)
{
    if (n < 3) return n;
    double c = cos(fmin(max_angle, RA_PI) / 2);
    size_t o = 1, run = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        const ra_quat_key *a = &k[o - 1], *b = &k[i + 1];
        ra_slerp_span span = ra_q_slerp_span(a->q, b->q);
        bool drop = run < 64 && ra_q_dot(a->q, b->q) > 0 && span.dev >= 0 && !ra_q_angle_over(a->q, b->q, c);
        for (size_t j = i - run; drop && j <= i; j++)
            if (!(near_shortcut ? ra_q_slerp_near : ra_q_slerp_near_exact)(&span, (k[j].t - a->t) / (b->t - a->t),
                                                                           k[j].q, tol))
                drop = false;
        if (drop) {
            run++;
            continue;
        }
        k[o++] = k[i];
        run = 0;
    }
    k[o++] = k[n - 1];
    return o;
}

/* A random track of n keys turning about `step` radians a key about a
 * wandering axis at uneven times (a key on the slerp lies off the nlerp),
 * with some keys (three in ten) on the slerp of their neighbours, to be
 * dropped. */
static void random_track(ra_quat_key *k, size_t n, double step, uint64_t *seed)
{
    ra_vec3 axis = ra_v3(rnd01(seed) - 0.5, rnd01(seed) - 0.5, rnd01(seed) - 0.5);
    ra_quat q = ra_q_axis_angle(ra_v3(rnd01(seed) - 0.5, rnd01(seed) - 0.5, rnd01(seed) - 0.5), rnd01(seed) * 6);
    double t = rnd01(seed);
    for (size_t i = 0; i < n; i++) {
        double u = rnd01(seed);
        if (u < 0.05) axis = ra_v3(rnd01(seed) - 0.5, rnd01(seed) - 0.5, rnd01(seed) - 0.5); /* a turn */
        else if (u < 0.15) axis = ra_v3_add(axis, ra_v3(rnd01(seed) * 0.1, 0, rnd01(seed) * 0.1));
        t += (0.2 + 1.6 * rnd01(seed)) / 30;
        q = ra_q_normalize(ra_q_mul(ra_q_axis_angle(axis, step * (0.5 + rnd01(seed))), q));
        k[i] = (ra_quat_key){t, q};
    }
    for (size_t i = 1; i + 1 < n; i++)
        if (rnd01(seed) < 0.3) {
            double f = (k[i].t - k[i - 1].t) / (k[i + 1].t - k[i - 1].t);
            k[i].q = ra_q_slerp_shortest(k[i - 1].q, k[i + 1].q, f);
        }
}

static void test_simplify_shortcuts(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    long tracks = 0, keys = 0, kept = 0;
    enum {
        N = 300
    };
    static ra_quat_key orig[N], fast[N], exact[N];
    static const double tols[] = {1e-6, 1e-7, 4e-6, 1e-5, 1e-3};
    for (int it = 0; it < 1500; it++) {
        size_t n = 3 + (size_t)(rnd01(&seed) * (N - 3));
        double tol = tols[it % 5], max_angle = (30 + rnd01(&seed) * 150) * RA_PI / 180;
        double step = 0.01 * pow(2000.0, rnd01(&seed)) * RA_PI / 180; /* 0.01 to 20 degrees a key */
        random_track(orig, n, step, &seed);
        memcpy(fast, orig, n * sizeof *fast);
        memcpy(exact, orig, n * sizeof *exact);
        size_t nf = n;
        CHECK(ra_quat_keys_simplify(fast, &nf, tol, max_angle, false), "track %d: simplified", it);
        size_t ne = simplify_walk(exact, n, tol, max_angle, false);
        CHECK(nf == ne && !memcmp(fast, exact, nf * sizeof *fast),
              "track %d (%zu keys, %.3g degrees a key, tol %g): the shortcuts keep %zu keys, the exact test %zu", it, n,
              step * 180 / RA_PI, tol, nf, ne);
        tracks++, keys += (long)n, kept += (long)nf;
    }
    CHECK(kept < keys * 9 / 10 && kept > keys / 2, "the tracks simplify in part (%ld of %ld keys kept)", kept, keys);
    printf("simplify shortcuts: %ld tracks, %ld keys, %ld kept, as the exact test keeps\n", tracks, keys, kept);
}

/* At Metroid Prime's tolerance (1e-9) the shortcuts, whose cosine bounds
 * cannot resolve tol there, must keep the keys ra_q_slerp_near keeps (a
 * key more than about 1e-7 off the slerp; one on it is dropped).  Tracks
 * turning 0.2 to 5 degrees a key (spans long enough that the shortest-span
 * shortcut, whose rounding the walk below does not share, never answers),
 * three keys in ten on the slerp of their neighbours: the keys kept must be
 * the walk's that decides every key by ra_q_slerp_near. */
static void test_simplify_tiny_tol(void)
{
    uint64_t seed = 0x452821e638d01377ull;
    long keys = 0, kept = 0;
    enum {
        N = 300
    };
    static ra_quat_key orig[N], fast[N], walk[N];
    for (int it = 0; it < 600; it++) {
        size_t n = 3 + (size_t)(rnd01(&seed) * (N - 3));
        double max_angle = (30 + rnd01(&seed) * 150) * RA_PI / 180;
        double step = 0.2 * pow(25.0, rnd01(&seed)) * RA_PI / 180;
        random_track(orig, n, step, &seed);
        memcpy(fast, orig, n * sizeof *fast);
        memcpy(walk, orig, n * sizeof *walk);
        size_t nf = n;
        CHECK(ra_quat_keys_simplify(fast, &nf, 1e-9, max_angle, false), "track %d: simplified", it);
        size_t nw = simplify_walk(walk, n, 1e-9, max_angle, true);
        CHECK(nf == nw && !memcmp(fast, walk, nf * sizeof *fast),
              "track %d (%zu keys, %.3g degrees a key): the shortcuts keep %zu keys, ra_q_slerp_near %zu", it, n,
              step * 180 / RA_PI, nf, nw);
        keys += (long)n, kept += (long)nf;
    }
    CHECK(kept < keys * 9 / 10 && kept > keys / 2, "the tracks simplify in part (%ld of %ld keys kept)", kept, keys);
    printf("simplify at tol 1e-9: %ld keys, %ld kept, as ra_q_slerp_near keeps\n", keys, kept);
}

/* ra_quat_arc_pieces tells most pairs one piece without normalising them:
 * its answer must be the normalised test's (below, as it was written
 * before) for pairs of any length, the 4D angle between them on either
 * side of max_angle by 1e-16 to 1e-3 of it, and for zero, huge, tiny and
 * non-finite ones. */
static size_t arc_pieces_ref(ra_quat q0, ra_quat q1, double max_angle)
{
    double d = ra_q_dot(ra_q_normalize(q0), ra_q_normalize(q1));
    if (d > 1) d = 1;
    if (d < -1) d = -1;
    if (!(max_angle > 0) || max_angle > 1.5) max_angle = 1.5;
    if (d >= cos(max_angle)) return 1;
    size_t pieces = (size_t)ceil(acos(d) / max_angle);
    return pieces < 1 ? 1 : pieces;
}

static void test_arc_pieces(void)
{
    uint64_t seed = 0x243f6a8885a308d3ull;
    long pairs = 0, one = 0, near_edge = 0;
    static const double lens[] = {1, 1e-3, 1e3, 1e-49, 1e49, 1e-52, 1e52, 0.7, 1.3};
    for (int it = 0; it < 200000; it++) {
        double max_angle = it % 7 == 0 ? 1.5 : 0.01 + rnd01(&seed) * 1.6; /* past 1.5 too */
        double edge = max_angle > 1.5 ? 1.5 : max_angle;
        /* q1 at 4D angle edge (1 + e) from q0, e of either sign from 1e-16 to 1e-3 */
        double e = pow(10, -16 + 13 * rnd01(&seed)) * (rnd01(&seed) < 0.5 ? -1 : 1);
        double ang = it % 5 == 0 ? rnd01(&seed) * 3 : edge * (1 + e);
        ra_quat a =
            ra_q_normalize(ra_q(rnd01(&seed) - 0.5, rnd01(&seed) - 0.5, rnd01(&seed) - 0.5, rnd01(&seed) - 0.5));
        ra_quat p = ra_q(rnd01(&seed) - 0.5, rnd01(&seed) - 0.5, rnd01(&seed) - 0.5, rnd01(&seed) - 0.5);
        p = ra_q_normalize(ra_q_add(p, ra_q_scale(a, -ra_q_dot(p, a)))); /* unit, perpendicular to a */
        ra_quat b = ra_q_add(ra_q_scale(a, cos(ang)), ra_q_scale(p, sin(ang)));
        ra_quat q0 = ra_q_scale(a, lens[it % 9]), q1 = ra_q_scale(b, lens[(it / 9) % 9]);
        if (it % 101 == 0) q1 = ra_q(0, 0, 0, 0);
        if (it % 103 == 0) q0.x = NAN;
        if (it % 107 == 0) q1.w = INFINITY;
        size_t got = ra_quat_arc_pieces(q0, q1, max_angle), want = arc_pieces_ref(q0, q1, max_angle);
        CHECK(got == want, "pair %d (lengths %g, %g, angle %.17g of max %.17g): %zu pieces, the normalised test %zu",
              it, lens[it % 9], lens[(it / 9) % 9], ang, max_angle, got, want);
        pairs++, one += got == 1, near_edge += it % 5 && fabs(e) < 1e-12;
    }
    CHECK(one > pairs / 4 && one < pairs * 3 / 4, "both answers are tested (%ld of %ld pairs one piece)", one, pairs);
    printf("arc pieces: %ld pairs (%ld within 1e-12 of the edge), %ld one piece, as normalised\n", pairs, near_edge,
           one);
}

#if defined(__unix__)
static bool folder_has(const ra_folder *f, const char *name)
{
    for (size_t i = 0; f && i < f->count; i++)
        if (!strcmp(f->names[i], name)) return true;
    return false;
}

static bool same_ascii_nocase(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn) return false;
    for (size_t i = 0; i < an; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return false;
    return true;
}

/* ra_folder_find and ra_folder_find_ext against a scan of f: for each key,
 * the chain is every name equal to it (or with that extension) ignoring
 * case, in listing order, and nothing else */
static void check_folder_index(const ra_folder *f, const char *const *keys, size_t nkeys)
{
    for (int ext = 0; ext < 2; ext++) {
        for (size_t k = 0; k < nkeys; k++) {
            const char *key = keys[k];
            size_t kl = strlen(key), i = ext ? ra_folder_find_ext(f, key, kl) : ra_folder_find(f, key, kl);
            for (size_t j = 0; j < f->count; j++) {
                const char *name = f->names[j], *dot = strrchr(name, '.'), *e = dot && dot != name ? dot + 1 : "";
                bool want =
                    ext ? same_ascii_nocase(e, strlen(e), key, kl) : same_ascii_nocase(name, strlen(name), key, kl);
                if (!want) continue;
                CHECK(i == j, "%s %s: name %zu (%s) next, got %zu", ext ? "extension" : "name", key, j, name, i);
                if (i != j) break;
                i = ext ? ra_folder_find_ext_next(f, i) : ra_folder_find_next(f, i);
            }
            CHECK(i == SIZE_MAX, "%s %s: the chain ends with the names that match", ext ? "extension" : "name", key);
        }
    }
}

static void touch_file(const char *dir, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "create %s", path);
    if (f) fclose(f);
}
#endif

/* ra_folder_open: a settled folder's listing (its change time over 2 s old)
 * is given again until the folder changes; one changed in the last seconds
 * is listed on every call; a listing held while the cache replaces it stays
 * readable until closed.  Sleeps 3 s, once, for the folders to settle. */
static void test_folder(void)
{
#if defined(__unix__)
    char dir[] = "/tmp/ra_unit_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    const char *extra[] = {"a.x", "b.x", "A.X", ".x", "noext", "z.tar.X", "Noext"};
    for (int i = 0; i < 7; i++) touch_file(dir, extra[i]);
    char sub[5][64];
    for (int i = 0; i < 5; i++) {
        snprintf(sub[i], sizeof sub[i], "%s/d%d", dir, i);
        CHECK(mkdir(sub[i], 0700) == 0, "mkdir %s", sub[i]);
        touch_file(sub[i], "only");
    }
    sleep(3);
    const ra_folder *f1 = ra_folder_open(dir), *f2 = ra_folder_open(dir);
    CHECK(f1 && f1->count == 12 && folder_has(f1, "a.x") && folder_has(f1, "d4") && !folder_has(f1, "."),
          "the folder's twelve names, without . and ..");
    const char *keys[] = {"a.x",   "A.x",   "b.X",   ".x",      ".X", "x",  "X",       "",
                          "noext", "NOEXT", "tar.x", "z.tar.x", "d3", "D3", "missing", "tar"};
    if (f1) check_folder_index(f1, keys, sizeof keys / sizeof keys[0]);
    const size_t ax = f1 ? ra_folder_find_ext(f1, "X", 1) : SIZE_MAX;
    CHECK(ax != SIZE_MAX && ra_folder_find_ext_next(f1, ax) != SIZE_MAX, "several names with the extension x");
    CHECK(f2 == f1, "a settled folder is listed once");
    ra_folder_close(f1);
    ra_folder_close(f2);
    touch_file(dir, "c.x");
    const ra_folder *f3 = ra_folder_open(dir), *f4 = ra_folder_open(dir);
    CHECK(f3 && f3 != f1 && f3->count == 13 && folder_has(f3, "c.x"), "a new name is seen");
    CHECK(f4 && f4 != f3 && f4->count == 13, "a folder changed in the last seconds is listed on every call");
    if (f3) check_folder_index(f3, keys, sizeof keys / sizeof keys[0]);
    ra_folder_close(f3);
    ra_folder_close(f4);
    /* d0 held while d1 ... d4 take the cache's four places */
    const ra_folder *held = ra_folder_open(sub[0]);
    CHECK(held && held == ra_folder_open(sub[0]), "d0 kept");
    ra_folder_close(held);
    for (int i = 1; i < 5; i++) {
        const ra_folder *o = ra_folder_open(sub[i]);
        CHECK(o && o->count == 1 && !strcmp(o->names[0], "only"), "%s: its one name", sub[i]);
        ra_folder_close(o);
    }
    CHECK(held->count == 1 && !strcmp(held->names[0], "only"), "held while replaced: still readable");
    const ra_folder *fresh = ra_folder_open(sub[0]);
    CHECK(fresh && fresh != held && fresh->count == 1, "replaced in the cache: listed again");
    ra_folder_close(fresh);
    ra_folder_close(held);
    char file[160];
    snprintf(file, sizeof file, "%s/a.x", dir);
    CHECK(ra_folder_open(file) == NULL && ra_folder_open("/nonexistent/ra_unit") == NULL,
          "a file and a missing path are not folders");
    const ra_folder *kept = ra_folder_open(sub[4]);
    ra_folder_flush();
    const ra_folder *after = ra_folder_open(sub[4]);
    CHECK(after && after != kept && after->count == 1, "listed again after the flush");
    CHECK(kept->count == 1 && !strcmp(kept->names[0], "only"), "held through the flush: still readable");
    ra_folder_close(kept);
    ra_folder_close(after);
    ra_folder_flush();
    char joined[160], tiny[8];
    CHECK(ra_regular_in(dir, "a.x", joined, sizeof joined) && !strcmp(joined, file) &&
              !ra_regular_in(dir, "d0", joined, sizeof joined) &&
              !ra_regular_in("/nonexistent", "ra_unit", joined, sizeof joined),
          "a file is regular, a folder and a missing path are not");
    CHECK(!ra_regular_in(dir, "a.x", tiny, sizeof tiny), "a path longer than the buffer is not taken");
#endif
    /* ra_path_parts: the folder, the base and its stem as the companion searches split them */
    static const struct {
        const char *path, *dir, *base;
        size_t stem;
    } parts[] = {
        {"/a/b/x.anim", "/a/b", "x.anim", 1},
        {"x.anim", ".", "x.anim", 1},
        {"/x.anim", "/", "x.anim", 1},
        {"d/x.y.anim", "d", "x.y.anim", 3},
        {"d/.hidden", "d", ".hidden", 7},
        {"d/noext", "d", "noext", 5},
        {"d/", "d", "", 0},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        char d[16];
        const char *base = NULL;
        size_t stem = 99;
        bool ok = ra_path_parts(parts[i].path, d, sizeof d, &base, &stem);
        CHECK(ok && !strcmp(d, parts[i].dir) && base && !strcmp(base, parts[i].base) && stem == parts[i].stem,
              "%s: folder %s, base %s, stem %zu (got %s, %s, %zu)", parts[i].path, parts[i].dir, parts[i].base,
              parts[i].stem, ok ? d : "-", base ? base : "-", stem);
    }
    char small[6];
    const char *base;
    size_t stem;
    CHECK(ra_path_parts("abcd/x", small, sizeof small, &base, &stem) && !strcmp(small, "abcd") &&
              !ra_path_parts("abcde/x", small, sizeof small, &base, &stem) &&
              !ra_path_parts("", small, sizeof small, &base, &stem) &&
              !ra_path_parts(NULL, small, sizeof small, &base, &stem),
          "a folder of dir_size - 2 bytes fits, one longer and an empty path do not");
#if defined(__unix__)
    for (int i = 0; i < 5; i++) {
        char p[400];
        snprintf(p, sizeof p, "%s/only", sub[i]);
        remove(p);
        rmdir(sub[i]);
    }
    for (int i = 0; i < 7; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s/%s", dir, extra[i]);
        remove(p);
    }
    snprintf(file, sizeof file, "%s/c.x", dir);
    remove(file);
    rmdir(dir);
#endif
}

/* ra_file_bytes_get: a regular file mapped (the same bytes as ra_read_file_max
 * reads), an empty file and a pipe read, and every refusal the same status
 * and message as ra_read_file_max's. */
static void test_file_bytes(void)
{
    char dir[] = "/tmp/ra_unit_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[64], empty[64], fifo[64];
    snprintf(path, sizeof path, "%s/f.bin", dir);
    snprintf(empty, sizeof empty, "%s/e.bin", dir);
    snprintf(fifo, sizeof fifo, "%s/p", dir);
    const size_t n = 100003; /* not a whole number of pages */
    uint8_t *bytes = malloc(n);
    for (size_t i = 0; i < n; i++) bytes[i] = (uint8_t)(i * 131 + (i >> 9));
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(bytes, 1, n, f) == n, "write %s", path);
    if (f) fclose(f);
    f = fopen(empty, "wb");
    if (f) fclose(f);
    ra_error e;
    ra_error_clear(&e);
    ra_file_bytes fb;
    CHECK(ra_file_bytes_get(path, n, &fb, &e) == RA_OK && fb.size == n && !memcmp(fb.data, bytes, n),
          "a file of exactly max bytes: its bytes");
#if defined(__unix__)
    CHECK(fb.mapped == fb.data, "a regular file is mapped");
#endif
    ra_file_bytes_free(&fb);
    CHECK(fb.data == NULL && fb.size == 0 && fb.mapped == NULL, "freed: cleared");
    CHECK(ra_file_bytes_get(empty, n, &fb, &e) == RA_OK && fb.size == 0 && fb.mapped == NULL, "an empty file: read");
    ra_file_bytes_free(&fb);

    /* refusals: the status and line ra_read_file_max gives */
    const char *paths[] = {path, dir, "/nonexistent/ra_unit_file"};
    const size_t maxes[] = {n - 1, n, n};
    for (int i = 0; i < 3; i++) {
        ra_error e1, e2;
        ra_error_clear(&e1);
        ra_error_clear(&e2);
        uint8_t *d = NULL;
        size_t sz = 0;
        ra_status s1 = ra_read_file_max(paths[i], maxes[i], &d, &sz, &e1);
        ra_status s2 = ra_file_bytes_get(paths[i], maxes[i], &fb, &e2);
        char l1[RA_ERROR_TEXT_MAX], l2[RA_ERROR_TEXT_MAX];
        ra_error_format(&e1, l1, sizeof l1);
        ra_error_format(&e2, l2, sizeof l2);
        CHECK(s1 != RA_OK && s1 == s2 && !strcmp(l1, l2) && fb.data == NULL, "%s refused alike: '%s' / '%s'", paths[i],
              l1, l2);
        ra_free(d);
    }

#if defined(__unix__)
    /* a pipe has no size: read, and refused once it passes max */
    if (mkfifo(fifo, 0600) == 0) {
        for (int over = 0; over < 2; over++) {
            pid_t pid = fork();
            CHECK(pid >= 0, "fork");
            if (pid < 0) break; /* (the read below would wait for a writer forever) */
            if (pid == 0) {
                FILE *w = fopen(fifo, "wb");
                size_t put = w ? fwrite(bytes, 1, n, w) : 0;
                if (w) fclose(w);
                _exit(put == n ? 0 : 1);
            }
            ra_status st = ra_file_bytes_get(fifo, over ? n - 1 : n, &fb, &e);
            if (over) {
                /* (the writer ends on SIGPIPE once the reader has gone) */
                CHECK(st == RA_ERR_LIMIT && !strcmp(e.field, "max_file_size"), "a pipe over max: refused (%d)", st);
            } else {
                CHECK(st == RA_OK && fb.size == n && fb.mapped == NULL && !memcmp(fb.data, bytes, n),
                      "a pipe: read whole");
            }
            ra_file_bytes_free(&fb);
            kill(pid, SIGKILL); /* a writer left waiting by a failed read does not hold the test */
            int status = 0;
            waitpid(pid, &status, 0);
        }
        unlink(fifo);
    }
#endif
    free(bytes);
    unlink(path);
    unlink(empty);
    rmdir(dir);
}

int main(void)
{
    test_heap_blocks(); /* first: before anything large is freed */
    test_unique_names();
    test_cursor();
    test_arena_writer();
    test_key_chunks();
    test_math();
    test_f32_floor();
    test_json();
    test_json_numbers();
    test_json_float_digits();
    test_strmap();
    test_meta_add_refs();
    test_warning_cap();
    test_archive_warnings();
    test_bake();
    test_key_cut();
    test_simplify_circle();
    test_simplify_shortcuts();
    test_simplify_tiny_tol();
    test_arc_pieces();
    test_breaks_sort();
    test_options();
    test_file_bytes();
    test_folder();
    return ra_test_finish("test_unit");
}
