/* Files written whole or not at all: a temporary file beside the target,
 * renamed over it once complete. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "retroanim/ra_output.h"

/* Temporary files still open, for ra_outfile_remove_all_temporary (a signal
 * handler): fixed slots holding copies of the paths, claimed and released
 * with atomic operations so that a handler never sees a half-written one. */
#define LIVE_SLOTS 64
#define LIVE_PATH 4096
static char live_path[LIVE_SLOTS][LIVE_PATH];
static volatile sig_atomic_t live_used[LIVE_SLOTS];

static int live_add(const char *p)
{
    size_t n = strlen(p);
    if (n >= LIVE_PATH) return -1;
    for (int i = 0; i < LIVE_SLOTS; i++) {
        int expect = 0;
        if (__atomic_compare_exchange_n((int *)&live_used[i], &expect, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            memcpy(live_path[i], p, n + 1);
            __atomic_store_n((int *)&live_used[i], 1, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}
/* frees the slot live_add gave (only its owner touches it: no other thread
 * reads the path but a signal handler) */
static void live_remove(int slot)
{
    if (slot >= 0) __atomic_store_n((int *)&live_used[slot], 0, __ATOMIC_RELEASE);
}
/* A temporary file is created and registered with SIGINT and SIGTERM blocked
 * in its thread, and counted in g_opening meanwhile: the handler (on another
 * thread) first sets g_dying, so that no new file is started, then waits for
 * the files being created to be registered, so that it removes them all. */
static atomic_int g_opening, g_dying;

void ra_outfile_remove_all_temporary(void)
{
    atomic_store(&g_dying, 1);
    while (atomic_load(&g_opening) > 0) {
    }
    for (int i = 0; i < LIVE_SLOTS; i++)
        if (__atomic_load_n((int *)&live_used[i], __ATOMIC_ACQUIRE) == 1) unlink(live_path[i]);
}

/* mkstemp and registration, with the signals blocked (see above); -1 and
 * errno on failure */
static int create_registered(ra_outfile *o)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    atomic_fetch_add(&g_opening, 1);
    int fd = -1;
    if (atomic_load(&g_dying)) {
        errno = EINTR;
    } else if ((fd = mkstemp(o->tmp)) >= 0) {
        o->slot = live_add(o->tmp);
    }
    int e = errno;
    atomic_fetch_sub(&g_opening, 1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return fd;
}

static void release(ra_outfile *o)
{
    if (o->tmp) live_remove(o->slot);
    ra_free(o->tmp);
    ra_free(o->path);
    o->tmp = o->path = NULL;
    o->fp = NULL;
}

ra_status ra_outfile_open(ra_outfile *o, const char *path, ra_error *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    size_t n = strlen(path);
    if (!n) return ra_fail(err, RA_ERR_USAGE, "retroanim", RA_NO_OFFSET, "", "empty output path");
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    static const char suffix[] = ".retroanim-tmp-XXXXXX";
    o->path = ra_malloc(n + 1);
    o->tmp = ra_malloc(n + 2 + sizeof suffix);
    if (!o->path || !o->tmp) {
        release(o);
        return ra_fail(err, RA_ERR_NO_MEMORY, "retroanim", RA_NO_OFFSET, "", "out of memory");
    }
    memcpy(o->path, path, n + 1);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or a pipe (/dev/stdout, /dev/full): written in place, never
         * replaced by a rename */
        ra_free(o->tmp);
        o->tmp = NULL;
        o->fp = fopen(path, "wb");
        if (!o->fp) {
            int e = errno;
            release(o);
            return ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "cannot write %s: %s", path, strerror(e));
        }
        return RA_OK;
    }
    memcpy(o->tmp, path, dir);
    o->tmp[dir] = '.';
    memcpy(o->tmp + dir + 1, path + dir, n - dir);
    memcpy(o->tmp + n + 1, suffix, sizeof suffix);
    int fd = create_registered(o);
    if (fd < 0) {
        int e = errno;
        release(o);
        return ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "cannot create a file beside %s: %s", path,
                       strerror(e));
    }
    /* mkstemp makes 0600; give the file the mode a plain create would */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        release(o);
        return ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "cannot write %s: %s", path, strerror(e));
    }
    return RA_OK;
}

bool ra_outfile_write(ra_outfile *o, const void *data, size_t n)
{
    if (o->error) return false;
    if (n && fwrite(data, 1, n, o->fp) != n) {
        o->error = errno ? errno : EIO;
        return false;
    }
    return true;
}

bool ra_outfile_patch(ra_outfile *o, uint64_t offset, const void *data, size_t n)
{
    if (o->error) return false;
    if (offset > (uint64_t)INT64_MAX || fflush(o->fp) != 0 || fseeko(o->fp, (off_t)offset, SEEK_SET) != 0 ||
        fwrite(data, 1, n, o->fp) != n || fseeko(o->fp, 0, SEEK_END) != 0) {
        o->error = errno ? errno : EIO;
        return false;
    }
    return true;
}

void ra_outfile_abort(ra_outfile *o)
{
    if (o->fp) fclose(o->fp);
    if (o->tmp) unlink(o->tmp);
    release(o);
}

ra_status ra_outfile_commit(ra_outfile *o, ra_error *err)
{
    int e = o->error;
    if (!e && fflush(o->fp) != 0) e = errno ? errno : EIO;
    if (!e && o->tmp && fsync(fileno(o->fp)) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    if (fclose(o->fp) != 0 && !e) e = errno ? errno : EIO;
    o->fp = NULL;
    if (!e && o->tmp && rename(o->tmp, o->path) != 0) e = errno;
    if (e) {
        if (o->tmp) unlink(o->tmp);
        ra_fail(err, RA_ERR_IO, "retroanim", RA_NO_OFFSET, "", "cannot write %s: %s", o->path, strerror(e));
        release(o);
        return RA_ERR_IO;
    }
    release(o);
    return RA_OK;
}
