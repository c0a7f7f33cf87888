/* retroanim — base services shared by every format: status and error values,
 * the per-load arena, the bounds-checked read cursor and the byte writer.
 *
 * Every read of file bytes goes through ra_cursor.  A failed read records the
 * format, the field and the byte offset in the ra_error it points to, and the
 * error is sticky: every later read on that cursor fails too, so a format
 * reader can check once at the end of a block. */
#ifndef RETROANIM_RA_BASE_H
#define RETROANIM_RA_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "retroanim/retroanim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ra_status, ra_error, ra_error_clear, ra_error_format: retroanim.h */

/* The largest max_depth (node nesting) any format accepts.  Every path a
 * scene takes must survive it: Assimp 5.2.5's FBX exporter recurses per
 * level and overflows an 8 MiB stack near 6,000 levels, and its Collada
 * exporter is quadratic in depth (a 6,000-deep chain runs for minutes); at
 * 1,024 every exporter finishes in about a second (tests/test_cli.sh). */
#define RA_MAX_DEPTH_LIMIT 1024

/* Records the failure unless one is recorded already (the first one wins).
 * Returns the code, so callers can `return ra_fail(...)`. */
ra_status ra_fail(ra_error *e, ra_status code, const char *format, uint64_t offset, const char *field, const char *fmt,
                  ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* The one out-of-memory error: "out of memory", no field, no offset. */
ra_status ra_fail_nomem(ra_error *e, const char *format);
/* An error about something another read refused (a companion file, an
 * archive item): inner's code, "PREFIX: inner's formatted text". */
ra_status ra_fail_wrap(ra_error *e, const ra_error *inner, const char *format, uint64_t offset, const char *field,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* ---- the library's heap ------------------------------------------------------
 * Every allocation the C layers make goes through ra_malloc / ra_calloc /
 * ra_realloc / ra_free (blocks are ordinary malloc blocks: free() works on
 * them too, it only skips the accounting).  Per thread, the heap counts its
 * calls, live blocks and bytes and the peak, and can be told to fail the
 * n-th allocation from now: the allocation-failure and hostile-file tests
 * use this, and it costs a few thread-local additions. */
void *ra_malloc(size_t size);
void *ra_calloc(size_t n, size_t size);
void *ra_realloc(void *p, size_t size);
void ra_free(void *p);

typedef struct ra_heap_stats {
    uint64_t allocations; /* calls of ra_malloc/ra_calloc/ra_realloc since the reset */
    uint64_t failures;    /* of them, failed on purpose (ra_heap_fail_nth) */
    int64_t live_blocks;  /* blocks allocated and not freed since the reset */
    int64_t live_bytes;   /* their bytes (malloc_usable_size; 0 where it is unknown) */
    int64_t peak_bytes;   /* the most live_bytes has been since the reset */
} ra_heap_stats;

/* This thread's counters. */
ra_heap_stats ra_heap_get(void);
/* Zeroes this thread's counters and cancels a planned failure. */
void ra_heap_reset(void);
/* The n-th allocation call from now on this thread returns NULL (n >= 1);
 * n = 0 cancels.  One failure per call of this function. */
void ra_heap_fail_nth(uint64_t n);
/* An allocation failure is pending on this thread (ra_heap_fail_nth). */
bool ra_heap_failing(void);
/* Adds another thread's counters (a worker's, when it is done) to this
 * thread's: what it allocated and left live is now this thread's. */
void ra_heap_absorb(const ra_heap_stats *other);

/* ---- arena: one free releases everything a load produced ---------------- */

/* memory_limit 0 = no limit (bytes of arena memory, chunk overhead included) */
ra_arena *ra_arena_create(size_t memory_limit);
void ra_arena_destroy(ra_arena *a);
/* Zeroed memory, 16-byte aligned.  NULL on failure (limit or malloc). */
void *ra_arena_alloc(ra_arena *a, size_t size);
/* n * size with the multiply checked for overflow; n == 0 gives a valid pointer. */
void *ra_arena_array(ra_arena *a, size_t n, size_t size);
/* The same without zeroing, for arrays the caller fills completely at once
 * (key arrays copied in, or read element by element with the document
 * discarded on failure). */
void *ra_arena_array_uninit(ra_arena *a, size_t n, size_t size);
/* A copy of n elements at src (src may be NULL when n is 0): for scratch
 * built on the heap whose final contents move into the arena. */
void *ra_arena_memdup(ra_arena *a, const void *src, size_t n, size_t size);
/* The same for a channel's key array (ra_scene's position, rotation and
 * scaling keys; src NULL: not filled): these live in chunks of their own, which a consumer that
 * copies the keys out may free as it goes (ra_arena_take_keys). */
void *ra_arena_keys_memdup(ra_arena *a, const void *src, size_t n, size_t size);
/* The same for a format model's bulk arrays (a track's keys as stored, which
 * the scene never points into): each in a chunk of its own, which
 * ra_arena_free_bulk frees (ra_document_free_bulk, once the scene is built). */
void *ra_arena_bulk_memdup(ra_arena *a, const void *src, size_t n, size_t size);
void ra_arena_free_bulk(ra_arena *a);
/* The key chunks (none: an empty set), taken out of the arena (NULL: out of
 * memory, and then the arena keeps them), for a consumer that copies every channel's
 * keys out and then discards the document: _use counts each array that
 * points into a chunk (every channel's, shared arrays once per channel),
 * _ready frees the chunks no array uses, _drop (on any thread) counts an
 * array copied and frees its chunk after the last, _free frees what is
 * left.  The scene's key arrays are invalid from _ready on. */
typedef struct ra_key_chunks ra_key_chunks;
ra_key_chunks *ra_arena_take_keys(ra_arena *a);
void ra_key_chunks_use(ra_key_chunks *k, const void *p);
void ra_key_chunks_ready(ra_key_chunks *k);
void ra_key_chunks_drop(ra_key_chunks *k, const void *p);
void ra_key_chunks_free(ra_key_chunks *k);
size_t ra_key_chunks_left(const ra_key_chunks *k); /* chunks not freed yet (when no _drop runs) */
/* The same set of the model's bulk arrays (ra_arena_bulk_memdup), for a bake
 * that frees each one once no job left to run reads it
 * (ra_document.free_bulk_early); what is left goes with ra_key_chunks_free. */
ra_key_chunks *ra_arena_take_bulk(ra_arena *a);
/* Grows an arena array (copying); the old block stays in the arena. */
void *ra_arena_grow(ra_arena *a, void *old, size_t old_n, size_t new_n, size_t size);
/* Makes *v (an arena array of *cap elements of size bytes) hold at least need
 * elements: doubling from first (or *cap), growing with ra_arena_grow.
 * false when out of memory or need cannot be reached. */
bool ra_arena_reserve(ra_arena *a, void **v, size_t *cap, size_t need, size_t size, size_t first);
char *ra_arena_strndup(ra_arena *a, const char *s, size_t n);
char *ra_arena_printf(ra_arena *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
size_t ra_arena_used(const ra_arena *a);
/* What a may still allocate under its memory limit (at least 1), or 0 when
 * it has none: the limit of a worker's arena (ra_parallel.h). */
size_t ra_arena_room(const ra_arena *a);
/* Moves src's memory into dst (src is freed; its allocations stay valid and
 * now live as long as dst).  false when dst is then past its memory limit
 * (the memory moves all the same). */
bool ra_arena_adopt(ra_arena *dst, ra_arena *src);

/* ---- a reader's independent parts, read as jobs ------------------------------
 * (a World of Goo movie's animations, a Metroid Prime bitstream's channels)
 * job(job_ctx, i, arena, err) reads the i-th of n parts into `arena`.  A
 * runner runs them all, on any threads, each job's arena living as long as
 * the reader's (ra_document_read_runner: the load's threads).  It returns
 * the error of the lowest job that fails, else `late` with late_err: the
 * reader's own error found after the parts the jobs read (one thread reports
 * it after them).  `work` is about the number of keys the jobs read. */
typedef ra_status (*ra_read_job)(void *job_ctx, size_t i, ra_arena *arena, ra_error *err);
typedef ra_status (*ra_read_runner)(void *run_ctx, size_t n, double work, ra_read_job job, void *job_ctx,
                                    ra_status late, const ra_error *late_err, ra_error *err);
/* The runner of a reader given none: the jobs in order on this thread, in
 * the arena run_ctx. */
ra_status ra_read_run_serial(void *run_ctx, size_t n, double work, ra_read_job job, void *job_ctx, ra_status late,
                             const ra_error *late_err, ra_error *err);

/* ---- string map (open addressing, in an arena): name -> uint32 value ------ */
typedef struct ra_strmap {
    ra_arena *arena;
    const char **keys;
    uint32_t *values;
    size_t cap, count;
} ra_strmap;

bool ra_strmap_init(ra_strmap *m, ra_arena *a, size_t expected);
/* Pointer to the value of key (inserted with value 0 when missing), NULL when
 * out of memory.  The key string must outlive the map. */
uint32_t *ra_strmap_slot(ra_strmap *m, const char *key);
const uint32_t *ra_strmap_get(const ra_strmap *m, const char *key);

/* ---- bounds-checked cursor ------------------------------------------------ */
typedef struct ra_cursor {
    const uint8_t *data;
    size_t size;
    size_t pos;
    const char *format; /* for error messages */
    ra_error *err;      /* sticky: once err->code != RA_OK every read fails */
} ra_cursor;

void ra_cursor_init(ra_cursor *c, const void *data, size_t size, const char *format, ra_error *err);
static inline bool ra_cursor_ok(const ra_cursor *c) { return c->err->code == RA_OK; }
static inline size_t ra_cursor_left(const ra_cursor *c) { return c->size - c->pos; }

/* Unchecked 32-bit loads, for code that has checked the range already
 * (signature tests on a prefix, the bit reader over a checked block). */
static inline uint32_t ra_load_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t ra_load_u16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t ra_load_u32be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
/* the same bits as an IEEE float */
static inline float ra_load_f32le(const uint8_t *p)
{
    uint32_t u = ra_load_u32le(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline float ra_load_f32be(const uint8_t *p)
{
    uint32_t u = ra_load_u32be(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The reads of fixed-size values.  They are inline (every loader's inner
 * loop): n bytes are taken when the cursor has no error and n bytes are left;
 * otherwise ra_cursor_short records the truncation (out of line) and the
 * read fails, leaving *v unchanged. */
bool ra_cursor_short(ra_cursor *c, size_t n, const char *field);
static inline const uint8_t *ra_cursor_take(ra_cursor *c, size_t n, const char *field)
{
    if (c->err->code != RA_OK || n > c->size - c->pos) {
        ra_cursor_short(c, n, field);
        return NULL;
    }
    const uint8_t *p = c->data + c->pos;
    c->pos += n;
    return p;
}
static inline bool ra_rd_u8(ra_cursor *c, uint8_t *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 1, field);
    if (p) *v = p[0];
    return p != NULL;
}
static inline bool ra_rd_u16le(ra_cursor *c, uint16_t *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 2, field);
    if (p) *v = (uint16_t)(p[0] | p[1] << 8);
    return p != NULL;
}
static inline bool ra_rd_u16be(ra_cursor *c, uint16_t *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 2, field);
    if (p) *v = (uint16_t)(p[0] << 8 | p[1]);
    return p != NULL;
}
static inline bool ra_rd_u32le(ra_cursor *c, uint32_t *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 4, field);
    if (p) *v = ra_load_u32le(p);
    return p != NULL;
}
static inline bool ra_rd_u32be(ra_cursor *c, uint32_t *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 4, field);
    if (p) *v = ra_load_u32be(p);
    return p != NULL;
}
static inline bool ra_rd_s16le(ra_cursor *c, int16_t *v, const char *field)
{
    uint16_t u;
    if (!ra_rd_u16le(c, &u, field)) return false;
    memcpy(v, &u, 2);
    return true;
}
static inline bool ra_rd_s16be(ra_cursor *c, int16_t *v, const char *field)
{
    uint16_t u;
    if (!ra_rd_u16be(c, &u, field)) return false;
    memcpy(v, &u, 2);
    return true;
}
static inline bool ra_rd_s32le(ra_cursor *c, int32_t *v, const char *field)
{
    uint32_t u;
    if (!ra_rd_u32le(c, &u, field)) return false;
    memcpy(v, &u, 4);
    return true;
}
static inline bool ra_rd_s32be(ra_cursor *c, int32_t *v, const char *field)
{
    uint32_t u;
    if (!ra_rd_u32be(c, &u, field)) return false;
    memcpy(v, &u, 4);
    return true;
}
static inline bool ra_rd_f32le(ra_cursor *c, float *v, const char *field)
{
    uint32_t u;
    if (!ra_rd_u32le(c, &u, field)) return false;
    memcpy(v, &u, 4);
    return true;
}
static inline bool ra_rd_f32be(ra_cursor *c, float *v, const char *field)
{
    uint32_t u;
    if (!ra_rd_u32be(c, &u, field)) return false;
    memcpy(v, &u, 4);
    return true;
}
static inline bool ra_rd_f64le(ra_cursor *c, double *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 8, field);
    if (!p) return false;
    uint64_t u = (uint64_t)ra_load_u32le(p + 4) << 32 | ra_load_u32le(p);
    memcpy(v, &u, 8);
    return true;
}
static inline bool ra_rd_f64be(ra_cursor *c, double *v, const char *field)
{
    const uint8_t *p = ra_cursor_take(c, 8, field);
    if (!p) return false;
    uint64_t u = (uint64_t)ra_load_u32be(p) << 32 | ra_load_u32be(p + 4);
    memcpy(v, &u, 8);
    return true;
}
bool ra_rd_bytes(ra_cursor *c, void *out, size_t n, const char *field);
bool ra_rd_skip(ra_cursor *c, size_t n, const char *field);
/* n bytes copied into the arena with a NUL appended (the bytes may hold NULs). */
bool ra_rd_str(ra_cursor *c, ra_arena *a, size_t n, char **out, const char *field);
/* A NUL-terminated string (the NUL is consumed), copied into the arena; with
 * out NULL it is only skipped. */
bool ra_rd_cstr(ra_cursor *c, ra_arena *a, char **out, const char *field);
/* Ids with their positions, sorted by (id, position), to find the first item
 * with an id in log time. */
typedef struct ra_id_slot {
    uint32_t id, index;
} ra_id_slot;
/* n items of `stride` bytes, each starting with its uint32 id.  NULL when out of memory. */
ra_id_slot *ra_sorted_ids(ra_arena *ar, const void *items, size_t n, size_t stride);
/* Position of the first item with this id, or -1. */
int64_t ra_find_id(const ra_id_slot *t, size_t n, uint32_t id);

/* Checks that `count` items of at least `min_item_bytes` each can still fit in
 * the bytes left, before anything is allocated for them. */
bool ra_cursor_check_count(ra_cursor *c, uint64_t count, size_t min_item_bytes, const char *field);
/* Records an error at the current (or a given) position. */
bool ra_cursor_fail(ra_cursor *c, ra_status code, uint64_t offset, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Out of memory (ra_fail_nomem) on the cursor's error; false. */
bool ra_cursor_nomem(ra_cursor *c);
/* Subtraction-form range check: off + len fits in size. */
static inline bool ra_range_ok(size_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

/* ---- byte writer ------------------------------------------------------------ */
typedef struct ra_writer {
    uint8_t *data; /* ra_malloc'd; caller frees with ra_writer_free or takes ownership (ra_free) */
    size_t size;
    size_t cap;
    bool failed; /* an allocation failed; data is incomplete */
} ra_writer;

void ra_writer_init(ra_writer *w);
void ra_writer_free(ra_writer *w);
/* Room for n more bytes past w->size (out of line: the buffer grows);
 * false, with w->failed set, when out of memory. */
bool ra_wr_grow(ra_writer *w, size_t n);
/* Appends n bytes; false once an allocation has failed.  Inline: every
 * writer's field and the JSON writer's every token take this path. */
static inline bool ra_wr_bytes(ra_writer *w, const void *p, size_t n)
{
    if (w->failed || (n > w->cap - w->size && !ra_wr_grow(w, n))) return false;
    if (n) memcpy(w->data + w->size, p, n);
    w->size += n;
    return true;
}
bool ra_wr_u8(ra_writer *w, uint8_t v);
bool ra_wr_u16le(ra_writer *w, uint16_t v);
bool ra_wr_u16be(ra_writer *w, uint16_t v);
bool ra_wr_u32le(ra_writer *w, uint32_t v);
bool ra_wr_u32be(ra_writer *w, uint32_t v);
bool ra_wr_f32le(ra_writer *w, float v);
bool ra_wr_f32be(ra_writer *w, float v);
bool ra_wr_f64le(ra_writer *w, double v);

/* The file name of a path without its folder and its last extension, in the
 * arena; `fallback` when there is none (or for Assimp's in-memory
 * placeholder name "$$$___magic___$$$").  NULL when out of memory. */
const char *ra_file_stem(ra_arena *ar, const char *path, const char *fallback);

/* ---- whole-file helpers (C layers only use these in tools and tests) ------ */
/* Reads a file into ra_malloc'd memory (release it with ra_free); returns RA_OK or RA_ERR_IO / RA_ERR_NO_MEMORY. */
ra_status ra_read_file(const char *path, uint8_t **data, size_t *size, ra_error *err);
/* The same, refusing (RA_ERR_LIMIT, field max_file_size) a file of more than
 * max bytes: a regular file by its size before anything is read, a stream
 * (a pipe, /dev/zero) once it passes max; a directory is an RA_ERR_IO. */
ra_status ra_read_file_max(const char *path, size_t max, uint8_t **data, size_t *size, ra_error *err);
/* The rest of an open stream (standard input, say), refusing it once it
 * passes max bytes; hint: the bytes expected (0: unknown), allocated at
 * once.  what names the input in the messages ("the file", "the input").
 * The stream is left open. */
ra_status ra_read_stream_max(FILE *f, size_t hint, size_t max, const char *what, uint8_t **data, size_t *size,
                             ra_error *err);
/* A folder's names (every entry but "." and ".."), in the order the system
 * lists them.  The last few listings are kept and given again while the
 * folder is the same (device, inode, modification and change times) and its
 * change time was settled (over 2 s old) when it was listed, so companions searched for one
 * file after another in a large folder read it once.  The names live in
 * plain malloc'd memory outside the heap's counters (they outlast a load).
 * NULL when it is not a folder, cannot be read or memory runs out (the
 * searches then find nothing, as an unreadable folder did).  Release with
 * ra_folder_close; ra_folder_flush frees the listings kept and not held. */
typedef struct ra_folder {
    size_t count;
    const char *const *names;
} ra_folder;
const ra_folder *ra_folder_open(const char *path);
void ra_folder_close(const ra_folder *f);
void ra_folder_flush(void);
/* The names of f equal to name[0, len) ignoring ASCII case, in listing order,
 * without a scan: the first one's index (SIZE_MAX: none), then each next
 *     for (size_t i = ra_folder_find(f, s, n); i != SIZE_MAX; i = ra_folder_find_next(f, i))
 * The _ext pair does the same for the names whose extension (after the last
 * dot that is not the name's first byte; "" without one) is ext[0, len). */
size_t ra_folder_find(const ra_folder *f, const char *name, size_t len);
size_t ra_folder_find_next(const ra_folder *f, size_t i);
size_t ra_folder_find_ext(const ra_folder *f, const char *ext, size_t len);
size_t ra_folder_find_ext_next(const ra_folder *f, size_t i);
/* The parts of a path that a companion search needs: its folder, copied
 * into dir ("." when the path has none, "/" for a file at the root), its
 * base name (in path) and the length of the base's stem (up to its last
 * dot; the whole base when that dot is its first byte).  false for an empty
 * path or a folder longer than dir_size - 2 bytes. */
bool ra_path_parts(const char *path, char *dir, size_t dir_size, const char **base, size_t *stem_len);
/* dir/name written into path (path_size bytes); true when it fits and names
 * a regular file (following links).  The companion searches' check of a
 * name they found in a listing. */
bool ra_regular_in(const char *dir, const char *name, char *path, size_t path_size);
/* A file's bytes, read-only: a regular file that is not empty is mapped
 * where the system can (POSIX), its pages filled in one call, with neither a
 * copy nor a page fault per page; anything else (and a file that cannot be
 * mapped) is read with ra_read_file_max, whose refusals and messages it
 * shares.  Release with ra_file_bytes_free.  A mapped file another program
 * changes while it is read is seen as it changes; one cut short, or a read
 * error of the disk, ends the process with SIGBUS, as any mapped input does. */
typedef struct ra_file_bytes {
    const uint8_t *data;
    size_t size;
    void *mapped; /* the mapping (NULL: data is ra_malloc'd) */
} ra_file_bytes;
ra_status ra_file_bytes_get(const char *path, size_t max, ra_file_bytes *out, ra_error *err);
void ra_file_bytes_free(ra_file_bytes *b);
/* Written whole or not at all (ra_output.h): a failure leaves an existing file as it was. */
ra_status ra_write_file(const char *path, const void *data, size_t size, ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
