/* Errors, arena, cursor, writer and file helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#define RA_CAN_MAP 1
#endif

#include "retroanim/ra_base.h"
#include "retroanim/ra_output.h"

#if defined(__GLIBC__)
#include <malloc.h>
#define RA_BLOCK_BYTES(p) ((int64_t)malloc_usable_size(p))
#else
#define RA_BLOCK_BYTES(p) ((int64_t)0)
#endif

/* ---- heap -------------------------------------------------------------------------- */
static _Thread_local ra_heap_stats g_heap;
static _Thread_local uint64_t g_fail_at; /* the allocation number that fails; 0 none */

static bool heap_refuse(void)
{
    uint64_t n = ++g_heap.allocations;
    if (g_fail_at && n == g_fail_at) {
        g_fail_at = 0;
        g_heap.failures++;
        return true;
    }
    return false;
}

static void heap_gain(void *p)
{
    g_heap.live_blocks++;
    g_heap.live_bytes += RA_BLOCK_BYTES(p);
    if (g_heap.live_bytes > g_heap.peak_bytes) g_heap.peak_bytes = g_heap.live_bytes;
}

void *ra_malloc(size_t size)
{
    if (heap_refuse()) return NULL;
    void *p = malloc(size ? size : 1);
    if (p) heap_gain(p);
    return p;
}

void *ra_calloc(size_t n, size_t size)
{
    if (heap_refuse()) return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p) heap_gain(p);
    return p;
}

void *ra_realloc(void *p, size_t size)
{
    if (!p) return ra_malloc(size);
    if (heap_refuse()) return NULL;
    int64_t before = RA_BLOCK_BYTES(p);
    void *q = realloc(p, size ? size : 1);
    if (!q) return NULL;
    g_heap.live_bytes += RA_BLOCK_BYTES(q) - before;
    if (g_heap.live_bytes > g_heap.peak_bytes) g_heap.peak_bytes = g_heap.live_bytes;
    return q;
}

void ra_free(void *p)
{
    if (!p) return;
    g_heap.live_blocks--;
    g_heap.live_bytes -= RA_BLOCK_BYTES(p);
    free(p);
}

ra_heap_stats ra_heap_get(void) { return g_heap; }

void ra_heap_reset(void)
{
    memset(&g_heap, 0, sizeof g_heap);
    g_fail_at = 0;
}

void ra_heap_fail_nth(uint64_t n) { g_fail_at = n ? g_heap.allocations + n : 0; }

bool ra_heap_failing(void) { return g_fail_at != 0; }

void ra_heap_absorb(const ra_heap_stats *w)
{
    int64_t peak = g_heap.live_bytes + w->peak_bytes;
    g_heap.allocations += w->allocations;
    g_heap.failures += w->failures;
    g_heap.live_blocks += w->live_blocks;
    g_heap.live_bytes += w->live_bytes;
    if (peak > g_heap.peak_bytes) g_heap.peak_bytes = peak;
}

const char *ra_status_name(ra_status s)
{
    switch (s) {
    case RA_OK: return "ok";
    case RA_ERR_TRUNCATED: return "truncated";
    case RA_ERR_BAD_MAGIC: return "bad magic";
    case RA_ERR_BAD_VALUE: return "bad value";
    case RA_ERR_LIMIT: return "limit exceeded";
    case RA_ERR_NO_MEMORY: return "out of memory";
    case RA_ERR_UNSUPPORTED: return "unsupported";
    case RA_ERR_IO: return "i/o error";
    case RA_ERR_USAGE: return "usage";
    default: return "unknown";
    }
}

void ra_error_clear(ra_error *e)
{
    if (!e) return;
    memset(e, 0, sizeof *e);
    e->code = RA_OK;
    e->offset = RA_NO_OFFSET;
    e->format = "retroanim";
}

ra_status ra_fail(ra_error *e, ra_status code, const char *format, uint64_t offset, const char *field, const char *fmt,
                  ...)
{
    if (!e || e->code != RA_OK) return e ? e->code : code;
    e->code = code;
    e->format = format ? format : "retroanim";
    e->offset = offset;
    snprintf(e->field, sizeof e->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

ra_status ra_fail_nomem(ra_error *e, const char *format)
{
    return ra_fail(e, RA_ERR_NO_MEMORY, format, RA_NO_OFFSET, "", "out of memory");
}

ra_status ra_fail_wrap(ra_error *e, const ra_error *inner, const char *format, uint64_t offset, const char *field,
                       const char *fmt, ...)
{
    char prefix[RA_ERROR_TEXT_MAX], text[RA_ERROR_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    ra_error_format(inner, text, sizeof text);
    return ra_fail(e, inner->code, format, offset, field, "%s: %s", prefix, text);
}

size_t ra_error_format(const ra_error *e, char *buf, size_t size)
{
    int n;
    if (e->field[0] && e->offset != RA_NO_OFFSET)
        n = snprintf(buf, size, "%s: %s (%s) (at byte %llu)", e->format, e->msg, e->field,
                     (unsigned long long)e->offset);
    else if (e->field[0]) n = snprintf(buf, size, "%s: %s (%s)", e->format, e->msg, e->field);
    else if (e->offset != RA_NO_OFFSET)
        n = snprintf(buf, size, "%s: %s (at byte %llu)", e->format, e->msg, (unsigned long long)e->offset);
    else n = snprintf(buf, size, "%s: %s", e->format, e->msg);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- arena ---------------------------------------------------------------- */
typedef struct ra_chunk {
    struct ra_chunk *next;
    size_t size, used;
    /* payload follows, 16-byte aligned */
} ra_chunk;

struct ra_arena {
    ra_chunk *head;
    ra_chunk *slab; /* where a large arena's large blocks go (see arena_take) */
    ra_chunk *keys; /* chunks of channel key arrays only (ra_arena_keys_memdup), the one being filled first */
    ra_chunk *bulk; /* a model's bulk arrays (ra_arena_bulk_memdup), a chunk each */
    size_t limit, total;
    size_t key_bytes; /* the key chunks' payload bytes */
};

#define RA_CHUNK_HDR ((sizeof(ra_chunk) + 15u) & ~(size_t)15u)
#define RA_CHUNK_MIN 4096u
#define RA_CHUNK_MAX (16u << 20)
#define RA_SLAB ((size_t)8 << 20)

/* A chunk of 4 MiB or more is filled front to back: on Linux its 2 MiB-aligned
 * interior may be backed by transparent huge pages, one page fault per 2 MiB
 * instead of 512 (half of a large LEGO load's time went to page faults).  A
 * no-op where huge pages are off or unknown. */
static void advise_huge(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes < 2 * huge) return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* glibc serves a block above its mmap threshold from pages mapped for it and
 * unmaps them when it is freed.  The threshold starts at 128 KiB and rises to
 * the size of such a block once one is freed (up to 32 MiB on a 64-bit
 * system), so a large load's slabs and key chunks were all mapped on their
 * own: the key chunks released while the aiScene is filled
 * (ra_key_chunks_drop) went back to the system, and the aiScene's arrays
 * faulted in fresh pages (the stock tool's import of Homeworld x16: 110,000
 * page faults, 74,000 with the threshold raised first).  At the first chunk
 * glibc would map (128 KiB), a slab's worth is allocated and freed, once per
 * process: the threshold rises above a slab, as it does anyway when a load
 * frees its first slab, only before the slabs instead of after them (a load
 * too small for slabs leaves it at a slab rather than at its largest block).
 * Chunks up to a slab then come from the heap, and what they leave is
 * reused.  A program that set M_MMAP_THRESHOLD itself keeps it: glibc adjusts
 * only its own. */
static void raise_mmap_threshold(void)
{
#if defined(__GLIBC__)
    static atomic_bool done;
    if (atomic_load_explicit(&done, memory_order_relaxed) || atomic_exchange(&done, true)) return;
    static void *volatile block; /* volatile: a malloc freed unused would be left out */
    block = malloc(RA_CHUNK_HDR + RA_SLAB);
    free(block);
#endif
}

/* A new chunk of want payload bytes, counted and limited; NULL on failure. */
static ra_chunk *new_chunk(ra_arena *a, size_t want)
{
    if (want > SIZE_MAX - RA_CHUNK_HDR) return NULL;
    size_t bytes = RA_CHUNK_HDR + want;
    if (a->limit && (bytes > a->limit || a->total > a->limit - bytes)) return NULL;
    if (bytes >= ((size_t)128 << 10)) raise_mmap_threshold();
    ra_chunk *nc = ra_malloc(bytes);
    if (!nc) return NULL;
    advise_huge(nc, bytes);
    nc->size = want;
    nc->used = 0;
    a->total += bytes;
    return nc;
}

ra_arena *ra_arena_create(size_t memory_limit)
{
    ra_arena *a = ra_calloc(1, sizeof *a);
    if (a) a->limit = memory_limit;
    return a;
}

static void free_chunks(ra_chunk *c)
{
    while (c) {
        ra_chunk *n = c->next;
        ra_free(c);
        c = n;
    }
}

void ra_arena_destroy(ra_arena *a)
{
    if (!a) return;
    free_chunks(a->head);
    free_chunks(a->keys);
    free_chunks(a->bulk);
    ra_free(a);
}

size_t ra_arena_used(const ra_arena *a) { return a ? a->total : 0; }

size_t ra_arena_room(const ra_arena *a)
{
    if (!a || !a->limit) return 0;
    return a->total < a->limit ? a->limit - a->total : 1;
}

/* src's chunk list behind the head of dst's, which stays the chunk allocations come from */
static void splice_chunks(ra_chunk **dst, ra_chunk *src)
{
    ra_chunk *last = src;
    while (last && last->next) last = last->next;
    if (!last) return;
    if (*dst) {
        last->next = (*dst)->next;
        (*dst)->next = src;
    } else {
        *dst = src;
    }
}

bool ra_arena_adopt(ra_arena *dst, ra_arena *src)
{
    if (!src) return true;
    splice_chunks(&dst->head, src->head);
    splice_chunks(&dst->keys, src->keys);
    splice_chunks(&dst->bulk, src->bulk);
    dst->total += src->total;
    dst->key_bytes += src->key_bytes;
    ra_free(src);
    return !dst->limit || dst->total <= dst->limit;
}

ra_status ra_read_run_serial(void *run_ctx, size_t n, double work, ra_read_job job, void *job_ctx, ra_status late,
                             const ra_error *late_err, ra_error *err)
{
    (void)work;
    for (size_t i = 0; i < n; i++)
        if (job(job_ctx, i, run_ctx, err) != RA_OK) return err->code;
    if (late != RA_OK) *err = *late_err;
    return late;
}

/* nc into the list at *head: behind c, the chunk being filled (a large
 * block's own chunk, so c's free space is not wasted), or as the new head. */
static ra_chunk *link_chunk(ra_chunk **head, ra_chunk *c, ra_chunk *nc, bool behind)
{
    if (behind) {
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        *head = nc;
    }
    return nc;
}

/* need bytes from c (which has them) */
static void *carve(ra_chunk *c, size_t need)
{
    void *p = (uint8_t *)c + RA_CHUNK_HDR + c->used;
    c->used += need;
    return p;
}

/* The bytes a block of size bytes takes from a chunk: rounded up to 16, at
 * least 16; 0 when the rounding overflows. */
static size_t block_bytes(size_t size)
{
    size_t need = (size + 15u) & ~(size_t)15u;
    if (need < size) return 0;
    return need ? need : 16;
}

static void *arena_take(ra_arena *a, size_t size, bool zero)
{
    if (!a) return NULL;
    size_t need = block_bytes(size);
    if (!need) return NULL;
    ra_chunk *c = a->head;
    /* Once the arena holds 32 MiB, blocks of 64 KiB to 1 MiB (a channel's
     * keys) are carved from 8 MiB slabs, which take huge pages, instead of
     * chunks of their own size (an eighth of a slab at most is left over
     * when one is full; the slab being filled is heap not yet used). */
    if (need >= ((size_t)64 << 10) && need <= RA_SLAB / 8 && a->total >= ((size_t)32 << 20)) {
        ra_chunk *sl = a->slab;
        if (!sl || sl->size - sl->used < need) {
            if (!(sl = new_chunk(a, RA_SLAB))) return NULL;
            sl->next = c->next; /* behind the head (the arena has one: it holds 32 MiB) */
            c->next = sl;
            a->slab = sl;
        }
        void *p = carve(sl, need);
        if (zero) memset(p, 0, need);
        return p;
    }
    if (!c || c->size - c->used < need) {
        /* a large block gets a chunk of its own size behind the head, so the
         * head's free space is not wasted (nor a doubled chunk spent on it) */
        bool behind = c && need > RA_CHUNK_MIN && c->size - c->used >= RA_CHUNK_MIN;
        size_t want = behind ? need : c ? c->size * 2 : RA_CHUNK_MIN;
        if (!behind && want > RA_CHUNK_MAX) want = RA_CHUNK_MAX;
        if (want < need) want = need;
        ra_chunk *nc = new_chunk(a, want);
        if (!nc) return NULL;
        c = link_chunk(&a->head, c, nc, behind);
    }
    void *p = carve(c, need);
    if (zero) memset(p, 0, need);
    return p;
}

void *ra_arena_alloc(ra_arena *a, size_t size) { return arena_take(a, size, true); }

void *ra_arena_array_uninit(ra_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return arena_take(a, n * size, false);
}

void *ra_arena_memdup(ra_arena *a, const void *src, size_t n, size_t size)
{
    void *p = ra_arena_array_uninit(a, n, size);
    if (p && n) memcpy(p, src, n * size);
    return p;
}

/* A new key chunk holds an eighth of the key chunks so far (at least 4 KiB,
 * at most 8 MiB), so that the one being filled, which is counted whole,
 * leaves at most an eighth unused; an array larger than that gets a chunk of
 * its own behind it.  So does an array larger than an eighth of a chunk
 * below 4 MiB: a chunk that fits only one or two such arrays was left with a
 * third of it unused (the room a chunk cannot give the next array is lost),
 * and chunks that small take no huge pages anyway.  Chunks of 4 MiB or more
 * share out arrays up to their size, so that they stay backed by huge pages. */
#define RA_KEY_CHUNK_MIN RA_CHUNK_MIN
#define RA_KEY_CHUNK_HUGE ((size_t)4 << 20)

void *ra_arena_keys_memdup(ra_arena *a, const void *src, size_t n, size_t size)
{
    if (!a || (size && n > SIZE_MAX / size)) return NULL;
    size_t need = block_bytes(n * size);
    if (!need) return NULL;
    ra_chunk *c = a->keys;
    if (!c || c->size - c->used < need) {
        /* the room left in the arena's own chunk or slab first: it is
         * counted already (such keys are not released early) */
        ra_chunk *h = a->head && a->head->size - a->head->used >= need ? a->head : a->slab;
        if (h && h->size - h->used >= need) c = h;
    }
    if (!c || c->size - c->used < need) {
        size_t want = a->key_bytes / 8;
        if (want < RA_KEY_CHUNK_MIN) want = RA_KEY_CHUNK_MIN;
        if (want > RA_SLAB) want = RA_SLAB;
        bool own = need > (want >= RA_KEY_CHUNK_HUGE ? want : want / 8);
        ra_chunk *nc = new_chunk(a, own ? need : want);
        if (!nc) return NULL;
        a->key_bytes += nc->size;
        c = link_chunk(&a->keys, c, nc, own && c);
    }
    void *p = carve(c, need);
    if (n && src) memcpy(p, src, n * size);
    return p;
}

/* Every bulk array in a chunk of its own, never in the arena's other room:
 * the list is freed all at once (ra_arena_free_bulk), and the allocator then
 * serves the aiScene's arrays from the small ones' memory, without page
 * faults.  (Shared chunks growing to huge-page size were tried: the model's
 * read took fewer faults, but direct compaction stalled it at times, and the
 * aiScene's arrays then faulted in fresh pages: LEGO's copy took 40,000
 * faults, not 27,000.) */
void *ra_arena_bulk_memdup(ra_arena *a, const void *src, size_t n, size_t size)
{
    if (!a || (size && n > SIZE_MAX / size)) return NULL;
    size_t need = block_bytes(n * size);
    ra_chunk *nc = need ? new_chunk(a, need) : NULL;
    if (!nc) return NULL;
    void *p = carve(link_chunk(&a->bulk, a->bulk, nc, false), need);
    if (n && src) memcpy(p, src, n * size);
    return p;
}

void ra_arena_free_bulk(ra_arena *a)
{
    if (!a) return;
    for (ra_chunk *c = a->bulk; c; c = c->next) a->total -= RA_CHUNK_HDR + c->size;
    free_chunks(a->bulk);
    a->bulk = NULL;
}

/* ---- key chunks released early (ra_arena_take_keys) ---- */
typedef struct key_chunk {
    uintptr_t lo, hi; /* the payload's bytes */
    ra_chunk *c;
    atomic_size_t users;
} key_chunk;

struct ra_key_chunks {
    key_chunk *v;
    size_t n;
    /* chunks freed (on any thread), for the heap statistics of the thread
     * that took them, which ra_key_chunks_free brings up to date */
    atomic_llong freed_blocks, freed_bytes;
};

static void release_chunk(ra_key_chunks *k, key_chunk *kc)
{
    if (!kc->c) return;
    atomic_fetch_add(&k->freed_blocks, 1);
    atomic_fetch_add(&k->freed_bytes, (long long)RA_BLOCK_BYTES(kc->c));
    free(kc->c);
    kc->c = NULL;
}

static int key_chunk_cmp(const void *a, const void *b)
{
    uintptr_t x = ((const key_chunk *)a)->lo, y = ((const key_chunk *)b)->lo;
    return x < y ? -1 : x > y;
}

/* The chunks of *list (none: an empty set), taken out of the arena (NULL:
 * out of memory, and then the arena keeps them). */
static ra_key_chunks *take_chunks(ra_arena *a, ra_chunk **list)
{
    size_t n = 0;
    for (ra_chunk *c = *list; c; c = c->next) n++;
    ra_key_chunks *k = ra_malloc(sizeof *k);
    key_chunk *v = ra_malloc((n ? n : 1) * sizeof *v);
    if (!k || !v) {
        ra_free(k);
        ra_free(v);
        return NULL; /* the arena keeps them: nothing is released early */
    }
    size_t i = 0;
    for (ra_chunk *c = *list; c; c = c->next, i++) {
        v[i].lo = (uintptr_t)c + RA_CHUNK_HDR;
        v[i].hi = v[i].lo + c->used;
        v[i].c = c;
        atomic_init(&v[i].users, 0);
        a->total -= RA_CHUNK_HDR + c->size;
    }
    qsort(v, n, sizeof *v, key_chunk_cmp);
    *list = NULL;
    k->v = v;
    k->n = n;
    atomic_init(&k->freed_blocks, 0);
    atomic_init(&k->freed_bytes, 0);
    return k;
}

ra_key_chunks *ra_arena_take_keys(ra_arena *a)
{
    ra_key_chunks *k = a ? take_chunks(a, &a->keys) : NULL;
    if (k) a->key_bytes = 0;
    return k;
}

ra_key_chunks *ra_arena_take_bulk(ra_arena *a) { return a ? take_chunks(a, &a->bulk) : NULL; }

static key_chunk *find_key_chunk(ra_key_chunks *k, const void *p)
{
    uintptr_t x = (uintptr_t)p;
    size_t lo = 0, hi = k ? k->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x < k->v[mid].lo) hi = mid;
        else if (x >= k->v[mid].hi) lo = mid + 1;
        else return &k->v[mid];
    }
    return NULL;
}

void ra_key_chunks_use(ra_key_chunks *k, const void *p)
{
    key_chunk *kc = find_key_chunk(k, p);
    if (kc) atomic_fetch_add(&kc->users, 1);
}

void ra_key_chunks_ready(ra_key_chunks *k)
{
    for (size_t i = 0; k && i < k->n; i++)
        if (atomic_load(&k->v[i].users) == 0) release_chunk(k, &k->v[i]);
}

void ra_key_chunks_drop(ra_key_chunks *k, const void *p)
{
    key_chunk *kc = find_key_chunk(k, p);
    if (kc && atomic_fetch_sub(&kc->users, 1) == 1) release_chunk(k, kc);
}

size_t ra_key_chunks_left(const ra_key_chunks *k)
{
    size_t n = 0;
    for (size_t i = 0; k && i < k->n; i++) n += k->v[i].c != NULL;
    return n;
}

void ra_key_chunks_free(ra_key_chunks *k)
{
    if (!k) return;
    for (size_t i = 0; i < k->n; i++) release_chunk(k, &k->v[i]);
    g_heap.live_blocks -= atomic_load(&k->freed_blocks);
    g_heap.live_bytes -= atomic_load(&k->freed_bytes);
    ra_free(k->v);
    ra_free(k);
}

void *ra_arena_array(ra_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return ra_arena_alloc(a, n * size);
}

void *ra_arena_grow(ra_arena *a, void *old, size_t old_n, size_t new_n, size_t size)
{
    void *p = ra_arena_array(a, new_n, size);
    if (p && old && old_n) memcpy(p, old, (old_n < new_n ? old_n : new_n) * size);
    return p;
}

bool ra_arena_reserve(ra_arena *a, void **v, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap) return true;
    if (need > SIZE_MAX / 2) return false;
    size_t n = *cap ? *cap * 2 : first ? first : 1;
    while (n < need) n *= 2;
    void *p = ra_arena_grow(a, *v, *cap, n, size);
    if (!p) return false;
    *v = p;
    *cap = n;
    return true;
}

char *ra_arena_strndup(ra_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX) return NULL;
    char *p = ra_arena_alloc(a, n + 1);
    if (p && n) memcpy(p, s, n);
    return p;
}

char *ra_arena_printf(ra_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = ra_arena_alloc(a, (size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* ---- string map -------------------------------------------------------------- */
static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

bool ra_strmap_init(ra_strmap *m, ra_arena *a, size_t expected)
{
    memset(m, 0, sizeof *m);
    m->arena = a;
    size_t cap = 16;
    while (cap < expected * 2 + 1) {
        if (cap > SIZE_MAX / 4) return false;
        cap *= 2;
    }
    m->keys = ra_arena_array(a, cap, sizeof *m->keys);
    m->values = ra_arena_array(a, cap, sizeof *m->values);
    m->cap = cap;
    return m->keys && m->values;
}

static size_t strmap_find(const char *const *keys, size_t cap, const char *key)
{
    size_t i = (size_t)str_hash(key) & (cap - 1);
    while (keys[i] && strcmp(keys[i], key) != 0) i = (i + 1) & (cap - 1);
    return i;
}

uint32_t *ra_strmap_slot(ra_strmap *m, const char *key)
{
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap * 2;
        const char **nk = ra_arena_array(m->arena, cap, sizeof *nk);
        uint32_t *nv = ra_arena_array(m->arena, cap, sizeof *nv);
        if (!nk || !nv) return NULL;
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = strmap_find(nk, cap, m->keys[i]);
                nk[j] = m->keys[i];
                nv[j] = m->values[i];
            }
        m->keys = nk;
        m->values = nv;
        m->cap = cap;
    }
    size_t i = strmap_find(m->keys, m->cap, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->values[i] = 0;
        m->count++;
    }
    return &m->values[i];
}

const uint32_t *ra_strmap_get(const ra_strmap *m, const char *key)
{
    if (!m->cap) return NULL;
    size_t i = strmap_find(m->keys, m->cap, key);
    return m->keys[i] ? &m->values[i] : NULL;
}

/* ---- cursor ------------------------------------------------------------------ */
void ra_cursor_init(ra_cursor *c, const void *data, size_t size, const char *format, ra_error *err)
{
    c->data = data;
    c->size = data ? size : 0;
    c->pos = 0;
    c->format = format;
    c->err = err;
}

bool ra_cursor_fail(ra_cursor *c, ra_status code, uint64_t offset, const char *field, const char *fmt, ...)
{
    if (c->err->code != RA_OK) return false;
    char msg[sizeof c->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ra_fail(c->err, code, c->format, offset, field, "%s", msg);
    return false;
}

bool ra_cursor_nomem(ra_cursor *c)
{
    ra_fail_nomem(c->err, c->format);
    return false;
}

bool ra_cursor_short(ra_cursor *c, size_t n, const char *field)
{
    if (c->err->code == RA_OK)
        ra_fail(c->err, RA_ERR_TRUNCATED, c->format, c->pos, field, "truncated: %zu bytes needed, %zu left", n,
                c->size - c->pos);
    return false;
}

bool ra_rd_bytes(ra_cursor *c, void *out, size_t n, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, n, field);
    if (!p) return false;
    if (n) memcpy(out, p, n);
    return true;
}
bool ra_rd_skip(ra_cursor *c, size_t n, const char *field) { return ra_cursor_take(c, n, field) != NULL; }
bool ra_rd_str(ra_cursor *c, ra_arena *a, size_t n, char **out, const char *field)
{
    size_t at = c->pos;
    const uint8_t *p = ra_cursor_take(c, n, field);
    if (!p) return false;
    char *s = ra_arena_strndup(a, (const char *)p, n);
    if (!s) {
        ra_fail(c->err, RA_ERR_NO_MEMORY, c->format, at, field, "out of memory for a %zu-byte string", n);
        return false;
    }
    *out = s;
    return true;
}
bool ra_rd_cstr(ra_cursor *c, ra_arena *a, char **out, const char *field)
{
    if (c->err->code != RA_OK) return false;
    const uint8_t *p = c->data + c->pos;
    const uint8_t *nul = memchr(p, 0, c->size - c->pos);
    if (!nul) {
        ra_fail(c->err, RA_ERR_TRUNCATED, c->format, c->pos, field, "string without its terminating NUL");
        return false;
    }
    size_t n = (size_t)(nul - p);
    if (!out) c->pos += n;
    else if (!ra_rd_str(c, a, n, out, field)) return false;
    c->pos++; /* the NUL */
    return true;
}

bool ra_cursor_check_count(ra_cursor *c, uint64_t count, size_t min_item_bytes, const char *field)
{
    if (c->err->code != RA_OK) return false;
    uint64_t left = c->size - c->pos;
    if (min_item_bytes && count > left / min_item_bytes) {
        ra_fail(c->err, RA_ERR_TRUNCATED, c->format, c->pos, field, "count %llu needs at least %llu bytes, %llu left",
                (unsigned long long)count, (unsigned long long)count * min_item_bytes, (unsigned long long)left);
        return false;
    }
    return true;
}

/* ---- writer ---------------------------------------------------------------------- */
void ra_writer_init(ra_writer *w) { memset(w, 0, sizeof *w); }
void ra_writer_free(ra_writer *w)
{
    ra_free(w->data);
    memset(w, 0, sizeof *w);
}
bool ra_wr_grow(ra_writer *w, size_t n)
{
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->size < n) {
        if (cap > SIZE_MAX / 2) {
            w->failed = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *d = ra_realloc(w->data, cap);
    if (!d) {
        w->failed = true;
        return false;
    }
    w->data = d;
    w->cap = cap;
    return true;
}
static bool wr_le(ra_writer *w, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    return ra_wr_bytes(w, b, (size_t)n);
}
static bool wr_be(ra_writer *w, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    return ra_wr_bytes(w, b, (size_t)n);
}
bool ra_wr_u8(ra_writer *w, uint8_t v) { return ra_wr_bytes(w, &v, 1); }
bool ra_wr_u16le(ra_writer *w, uint16_t v) { return wr_le(w, v, 2); }
bool ra_wr_u16be(ra_writer *w, uint16_t v) { return wr_be(w, v, 2); }
bool ra_wr_u32le(ra_writer *w, uint32_t v) { return wr_le(w, v, 4); }
bool ra_wr_u32be(ra_writer *w, uint32_t v) { return wr_be(w, v, 4); }
bool ra_wr_f32le(ra_writer *w, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return wr_le(w, u, 4);
}
bool ra_wr_f32be(ra_writer *w, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return wr_be(w, u, 4);
}
bool ra_wr_f64le(ra_writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return wr_le(w, u, 8);
}

/* ---- files ------------------------------------------------------------------------ */
ra_status ra_read_file_max(const char *path, size_t max, uint8_t **data, size_t *size, ra_error *err)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "cannot open: %s", strerror(errno));
    /* a regular file's size is known before anything is read; a stream (a
     * pipe, /dev/zero) is read until it passes the limit */
    struct stat st;
    bool known = fstat(fileno(f), &st) == 0;
    if (known && S_ISDIR(st.st_mode)) {
        fclose(f);
        return ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "is a directory");
    }
    if (known && S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max) {
        fclose(f);
        return ra_fail(err, RA_ERR_LIMIT, "retroanim", RA_NO_OFFSET, "max_file_size",
                       "the file has %llu bytes, more than max_file_size (%zu)", (unsigned long long)st.st_size, max);
    }
    size_t hint = known && S_ISREG(st.st_mode) ? (size_t)st.st_size : 0; /* (at most max) */
    ra_status rs = ra_read_stream_max(f, hint, max, "the file", data, size, err);
    fclose(f);
    return rs;
}

ra_status ra_read_stream_max(FILE *f, size_t hint, size_t max, const char *what, uint8_t **data, size_t *size,
                             ra_error *err)
{
    *data = NULL;
    *size = 0;
    /* read straight into the buffer: allocated at the hint (and a byte to
     * see the end), grown by at least 64 KiB at a time past it (a stream, or
     * a file that grows meanwhile) */
    ra_writer w;
    ra_writer_init(&w);
    const size_t piece = 65536;
    if (hint && hint < SIZE_MAX - piece) {
        w.data = ra_malloc(hint + 1);
        w.cap = w.data ? hint + 1 : 0;
        w.failed = !w.data;
    }
    size_t n;
    for (;;) {
        if (w.failed || (w.cap == w.size && !ra_wr_grow(&w, piece))) {
            ra_writer_free(&w);
            return ra_fail(err, RA_ERR_NO_MEMORY, "retroanim", RA_NO_OFFSET, "", "out of memory reading %s", what);
        }
        size_t room = w.cap - w.size;
        if ((n = fread(w.data + w.size, 1, room, f)) == 0) break;
        if (w.size + n > max) {
            ra_writer_free(&w);
            return ra_fail(err, RA_ERR_LIMIT, "retroanim", RA_NO_OFFSET, "max_file_size",
                           "%s has more than max_file_size (%zu) bytes", what, max);
        }
        w.size += n;
    }
    if (ferror(f)) {
        ra_writer_free(&w);
        return ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "cannot read %s", what);
    }
    *data = w.data;
    *size = w.size;
    return RA_OK;
}

#if defined(RA_CAN_MAP)
/* a regular file that is not empty and not over max */
static bool mappable(const struct stat *st, size_t max)
{
    return S_ISREG(st->st_mode) && st->st_size > 0 && (uint64_t)st->st_size <= (uint64_t)max &&
           (uint64_t)st->st_size <= SIZE_MAX;
}
#endif

ra_status ra_file_bytes_get(const char *path, size_t max, ra_file_bytes *out, ra_error *err)
{
    *out = (ra_file_bytes){0};
#if defined(RA_CAN_MAP)
    /* told by the path first: a FIFO is opened once only (by the read
     * below), as a second open would wait for a writer that has gone; then
     * by what was opened (the path may have changed in between: O_NONBLOCK
     * keeps a FIFO put there from blocking the open) */
    struct stat st;
    int fd = stat(path, &st) == 0 && mappable(&st, max) ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && mappable(&st, max)) {
        int flags = MAP_PRIVATE;
#if defined(MAP_POPULATE)
        flags |= MAP_POPULATE; /* one call instead of a fault per page (or per 16 with fault-around) */
#endif
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, flags, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            *out = (ra_file_bytes){p, (size_t)st.st_size, p};
            return RA_OK;
        }
    }
    if (fd >= 0) close(fd);
#endif
    /* not mapped: read, with ra_read_file_max's checks and messages */
    uint8_t *data = NULL;
    size_t size = 0;
    ra_status rs = ra_read_file_max(path, max, &data, &size, err);
    if (rs == RA_OK) *out = (ra_file_bytes){data, size, NULL};
    return rs;
}

void ra_file_bytes_free(ra_file_bytes *b)
{
#if defined(RA_CAN_MAP)
    if (b->mapped) munmap(b->mapped, b->size);
    else
#endif
        ra_free((void *)b->data);
    *b = (ra_file_bytes){0};
}

ra_status ra_read_file(const char *path, uint8_t **data, size_t *size, ra_error *err)
{
    return ra_read_file_max(path, SIZE_MAX, data, size, err);
}

ra_status ra_write_file(const char *path, const void *data, size_t size, ra_error *err)
{
    ra_outfile o;
    ra_status st = ra_outfile_open(&o, path, err);
    if (st != RA_OK) return st;
    ra_outfile_write(&o, data, size);
    return ra_outfile_commit(&o, err);
}

const char *ra_file_stem(ra_arena *ar, const char *path, const char *fallback)
{
    if (!path || !*path) return fallback;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    if (!n || strstr(b, "$$$")) return fallback;
    return ra_arena_strndup(ar, b, n);
}

/* ---- ids ---------------------------------------------------------------------------------- */
static int cmp_slot(const void *x, const void *y)
{
    const ra_id_slot *a = x, *b = y;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

ra_id_slot *ra_sorted_ids(ra_arena *ar, const void *items, size_t n, size_t stride)
{
    ra_id_slot *t = ra_arena_array(ar, n, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++) {
        memcpy(&t[i].id, (const uint8_t *)items + i * stride, sizeof t[i].id);
        t[i].index = (uint32_t)i;
    }
    qsort(t, n, sizeof *t, cmp_slot);
    return t;
}

int64_t ra_find_id(const ra_id_slot *t, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && t[lo].id == id ? (int64_t)t[lo].index : -1;
}
