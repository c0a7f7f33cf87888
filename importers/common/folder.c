/* The names in a folder, listed once while the folder is unchanged
 * (ra_base.h, ra_folder_open).
 *
 * A load looks for its companions (a skeleton, a model, its skin, its
 * textures, a .geo) by listing the folder of the file it reads, once per
 * companion.  In an extracted game folder of thousands of files that made a
 * batch quadratic: every file read the whole folder several times.  The last
 * RA_FOLDER_KEEP listings are kept here and given again while the folder is
 * the same (device, inode, modification and change times) and its change
 * time lies more than RA_FOLDER_SETTLED seconds before the listing began: a
 * name added during or after the listing then moves the change time past the
 * one kept, where a change within one tick of the file system's clock might
 * not.  The change time, not only the modification time: a program can set
 * the latter back (tar, rsync), never the former. */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "retroanim/ra_base.h"

#define RA_FOLDER_KEEP 4
#define RA_FOLDER_SETTLED 2

typedef struct folder {
    ra_folder pub; /* first: the pointer given out */
    /* the names by their case-folded form and by their case-folded
     * extension: open-addressing tables (mask + 1 slots) of the first index
     * + 1 of each distinct key, and per name the next index with its key
     * (SIZE_MAX: none), in listing order */
    size_t mask, *by_name, *by_ext, *next_name, *next_ext;
    char *path; /* as asked for (the cache's key, checked by dev and ino) */
    dev_t dev;
    ino_t ino;
    struct timespec mtime, ctime;
    size_t refs;   /* the callers holding it */
    bool kept;     /* in the cache (else freed by its last close) */
    uint64_t used; /* when it was last given: the least recent is replaced */
} folder;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static folder *g_kept[RA_FOLDER_KEEP];
static uint64_t g_clock;

static void folder_free(folder *f)
{
    if (!f) return;
    free((void *)f->pub.names);
    free(f->by_name); /* the four index arrays are one block */
    free(f->path);
    free(f);
}

static bool same_time(struct timespec a, struct timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

static bool same_stat(const folder *f, const struct stat *st)
{
    return f->dev == st->st_dev && f->ino == st->st_ino && same_time(f->mtime, st->st_mtim) &&
           same_time(f->ctime, st->st_ctim);
}

/* ASCII case folding, as the searches compare names */
static inline unsigned char fold(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c; }

static bool same_folded(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn) return false;
    for (size_t i = 0; i < an; i++)
        if (fold((unsigned char)a[i]) != fold((unsigned char)b[i])) return false;
    return true;
}

static size_t hash_folded(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ fold((unsigned char)s[i])) * 1099511628211ull;
    return (size_t)(h ^ h >> 29);
}

/* A name's extension: after its last dot (the whole name has none when
 * that dot is its first byte), empty without one. */
static const char *ext_of(const char *name, size_t n, size_t *len)
{
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name) dot = name + n;
    else dot++;
    *len = (size_t)(name + n - dot);
    return dot;
}

/* The slot of key in table t: its first name's, or the empty one where it goes. */
static size_t *slot_of(const folder *f, size_t *t, const char *key, size_t kn, bool ext)
{
    for (size_t h = hash_folded(key, kn) & f->mask;; h = (h + 1) & f->mask) {
        if (!t[h]) return &t[h];
        const char *o = f->pub.names[t[h] - 1];
        size_t on = strlen(o), ol = on;
        if (ext) o = ext_of(o, on, &ol);
        if (same_folded(o, ol, key, kn)) return &t[h];
    }
}

/* The two indexes of f's names; false when out of memory.  Built last name
 * first, so that each key's chain runs in listing order. */
static bool index_folder(folder *f)
{
    size_t n = f->pub.count, cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > SIZE_MAX / sizeof(size_t) / 2 - n) return false;
    size_t *block = calloc(2 * cap + 2 * (n ? n : 1), sizeof *block);
    if (!block) return false;
    f->mask = cap - 1;
    f->by_name = block, f->by_ext = block + cap, f->next_name = block + 2 * cap, f->next_ext = f->next_name + n;
    for (size_t i = n; i-- > 0;) {
        const char *name = f->pub.names[i];
        size_t nl = strlen(name), el;
        const char *e = ext_of(name, nl, &el);
        size_t *a = slot_of(f, f->by_name, name, nl, false), *b = slot_of(f, f->by_ext, e, el, true);
        f->next_name[i] = *a ? *a - 1 : SIZE_MAX;
        f->next_ext[i] = *b ? *b - 1 : SIZE_MAX;
        *a = i + 1, *b = i + 1;
    }
    return true;
}

size_t ra_folder_find(const ra_folder *pub, const char *name, size_t len)
{
    folder *f = (folder *)pub;
    size_t i = *slot_of(f, f->by_name, name, len, false);
    return i ? i - 1 : SIZE_MAX;
}

size_t ra_folder_find_next(const ra_folder *pub, size_t i) { return ((const folder *)pub)->next_name[i]; }

size_t ra_folder_find_ext(const ra_folder *pub, const char *ext, size_t len)
{
    folder *f = (folder *)pub;
    size_t i = *slot_of(f, f->by_ext, ext, len, true);
    return i ? i - 1 : SIZE_MAX;
}

size_t ra_folder_find_ext_next(const ra_folder *pub, size_t i) { return ((const folder *)pub)->next_ext[i]; }

/* The folder's names, in the order the system lists them, in one block: the
 * pointers, then the strings, and their indexes.  NULL when it cannot be
 * read or memory runs out. */
static folder *list_folder(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return NULL;
    folder *f = calloc(1, sizeof *f);
    char *text = NULL;
    size_t *offsets = NULL, count = 0, cap = 0, used = 0, room = 0;
    bool ok = f != NULL;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(e->d_name) + 1;
        if (count == cap) {
            size_t c = cap ? cap * 2 : 64;
            size_t *o = c <= SIZE_MAX / sizeof *o ? realloc(offsets, c * sizeof *o) : NULL;
            if (!o) {
                ok = false;
                break;
            }
            offsets = o, cap = c;
        }
        if (n > room - used) {
            size_t r = room ? room * 2 : 4096;
            while (r - used < n) r *= 2;
            char *t = realloc(text, r);
            if (!t) {
                ok = false;
                break;
            }
            text = t, room = r;
        }
        memcpy(text + used, e->d_name, n);
        offsets[count++] = used;
        used += n;
    }
    closedir(d);
    /* the pointers and the strings in one block */
    char **names = NULL;
    if (ok && count <= (SIZE_MAX - used) / sizeof *names - 1) names = malloc((count + 1) * sizeof *names + used);
    if (names) {
        char *s = (char *)(names + count + 1);
        if (used) memcpy(s, text, used);
        for (size_t i = 0; i < count; i++) names[i] = s + offsets[i];
        names[count] = NULL;
    }
    free(text);
    free(offsets);
    if (!names) {
        free(f);
        return NULL;
    }
    f->pub.names = (const char *const *)names;
    f->pub.count = count;
    if (!index_folder(f)) {
        folder_free(f);
        return NULL;
    }
    return f;
}

const ra_folder *ra_folder_open(const char *path)
{
    struct stat st0, st1;
    if (!path || !*path || stat(path, &st0) != 0 || !S_ISDIR(st0.st_mode)) return NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < RA_FOLDER_KEEP; i++) {
        folder *f = g_kept[i];
        if (f && same_stat(f, &st0) && !strcmp(f->path, path)) {
            f->refs++;
            f->used = ++g_clock;
            pthread_mutex_unlock(&g_lock);
            return &f->pub;
        }
    }
    pthread_mutex_unlock(&g_lock);
    struct timespec began;
    bool clock_ok = clock_gettime(CLOCK_REALTIME, &began) == 0;
    folder *f = list_folder(path);
    if (!f) return NULL;
    f->refs = 1;
    f->dev = st0.st_dev;
    f->ino = st0.st_ino;
    f->mtime = st0.st_mtim;
    f->ctime = st0.st_ctim;
    /* kept: unchanged while it was listed, and settled before */
    bool settled = clock_ok && stat(path, &st1) == 0 && same_stat(f, &st1) &&
                   st0.st_ctim.tv_sec < began.tv_sec - RA_FOLDER_SETTLED;
    size_t plen = strlen(path) + 1;
    if (settled && (f->path = malloc(plen)) != NULL) {
        memcpy(f->path, path, plen);
        pthread_mutex_lock(&g_lock);
        int slot = 0; /* the same folder listed again, else an empty slot, else the least recently given */
        for (int i = 0; i < RA_FOLDER_KEEP; i++) {
            if (g_kept[i] && !strcmp(g_kept[i]->path, path)) {
                slot = i;
                break;
            }
            if (!g_kept[i] || (g_kept[slot] && g_kept[i]->used < g_kept[slot]->used)) slot = i;
        }
        folder *old = g_kept[slot];
        if (old) {
            old->kept = false;
            if (!old->refs) folder_free(old);
        }
        f->kept = true;
        f->used = ++g_clock;
        g_kept[slot] = f;
        pthread_mutex_unlock(&g_lock);
    }
    return &f->pub;
}

void ra_folder_close(const ra_folder *pub)
{
    if (!pub) return;
    folder *f = (folder *)pub; /* pub is its first member */
    pthread_mutex_lock(&g_lock);
    bool last = --f->refs == 0 && !f->kept;
    pthread_mutex_unlock(&g_lock);
    if (last) folder_free(f);
}

void ra_folder_flush(void)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < RA_FOLDER_KEEP; i++) {
        folder *f = g_kept[i];
        if (!f) continue;
        f->kept = false;
        if (!f->refs) folder_free(f);
        g_kept[i] = NULL;
    }
    pthread_mutex_unlock(&g_lock);
}

bool ra_path_parts(const char *path, char *dir, size_t dir_size, const char **base, size_t *stem_len)
{
    if (!path || !*path) return false;
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) : 0;
    const char *b = slash ? slash + 1 : path;
    const char *dot = strrchr(b, '.');
    if (dir_len + 2 > dir_size) return false;
    if (slash) { /* "/x.anim": "/" */
        size_t n = dir_len ? dir_len : 1;
        memcpy(dir, path, n);
        dir[n] = 0;
    } else {
        memcpy(dir, ".", 2);
    }
    *base = b;
    *stem_len = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    return true;
}

bool ra_regular_in(const char *dir, const char *name, char *path, size_t path_size)
{
    int n = snprintf(path, path_size, "%s/%s", dir, name);
    struct stat st;
    return n > 0 && (size_t)n < path_size && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
