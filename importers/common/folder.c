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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "retroanim/ra_base.h"

#define RA_FOLDER_KEEP 4
#define RA_FOLDER_SETTLED 2

typedef struct folder {
    ra_folder pub; /* first: the pointer given out */
    char *path;    /* as asked for (the cache's key, checked by dev and ino) */
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
    free(f->path);
    free(f);
}

static bool same_time(struct timespec a, struct timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

static bool same_stat(const folder *f, const struct stat *st)
{
    return f->dev == st->st_dev && f->ino == st->st_ino && same_time(f->mtime, st->st_mtim) &&
           same_time(f->ctime, st->st_ctim);
}

/* The folder's names, in the order the system lists them, in one block: the
 * pointers, then the strings.  NULL when it cannot be read or memory runs
 * out. */
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

bool ra_is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
