/* Running a to_scene loop's jobs on several threads with the output of one
 * (ra_parallel.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "retroanim/ra_parallel.h"

unsigned ra_document_threads(const ra_document *doc, double work)
{
    if (ra_heap_failing()) return 1;
    double opt = ra_options_get_double(&doc->options, "threads", 0);
    if (opt >= 1) return opt > RA_MAX_THREADS ? RA_MAX_THREADS : (unsigned)opt;
    if (!(work >= RA_PARALLEL_MIN_WORK)) return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) return 1;
    return cpus > (long)RA_MAX_THREADS ? RA_MAX_THREADS : (unsigned)cpus;
}

/* ---- warnings of a job, kept for the replay in job order ------------------------- */
typedef struct kept_warning {
    size_t job, seq;
    ra_scene *scene;
    const char *msg;
} kept_warning;

typedef struct worker {
    ra_worker w;
    struct shared *sh;
    pthread_t thread;
    bool started;
    size_t job; /* the job under way (for its warnings) */
    kept_warning *warn;
    size_t nwarn, warn_cap, warn_lost;
    size_t fail_job; /* the lowest job of this worker that failed; SIZE_MAX none */
    ra_error err;
    size_t samples_start;
    double keys_used;
    bool keys_over;
    ra_heap_stats heap; /* a thread's own allocations, for the caller's statistics */
} worker;

typedef struct shared {
    ra_job_fn job;
    void *ctx;
    size_t n;
    atomic_size_t next;
    atomic_size_t stop; /* the lowest failing job yet: jobs after it are not started */
    double keys_left;   /* the key budget when the loop began */
} shared;

static _Thread_local worker *g_worker; /* the worker this thread is, during a loop */

bool ra_parallel_defer_warning(ra_scene *s, const char *msg)
{
    worker *k = g_worker;
    if (!k) return false;
    if (k->nwarn == k->warn_cap) {
        size_t cap = k->warn_cap ? k->warn_cap * 2 : 8;
        kept_warning *nw = ra_realloc(k->warn, cap * sizeof *nw);
        if (!nw) {
            k->warn_lost++; /* counted on the calling thread at the replay (ra_warnings_lost) */
            return true;
        }
        k->warn = nw;
        k->warn_cap = cap;
    }
    const char *m = ra_arena_strndup(k->w.arena, msg, strlen(msg));
    if (!m) {
        k->warn_lost++;
        return true;
    }
    k->warn[k->nwarn] = (kept_warning){k->job, k->nwarn, s, m};
    k->nwarn++;
    return true;
}

static void run_jobs(worker *k)
{
    shared *sh = k->sh;
    g_worker = k;
    ra_key_budget saved = ra_key_budget_begin(sh->keys_left);
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
        if (i >= sh->n || i > atomic_load_explicit(&sh->stop, memory_order_relaxed)) break;
        k->job = i;
        ra_error e;
        ra_error_clear(&e);
        if (sh->job(sh->ctx, i, &k->w, &e) != RA_OK) {
            if (i < k->fail_job) {
                k->fail_job = i;
                k->err = e;
            }
            size_t cur = atomic_load_explicit(&sh->stop, memory_order_relaxed);
            while (i < cur && !atomic_compare_exchange_weak_explicit(&sh->stop, &cur, i, memory_order_relaxed,
                                                                     memory_order_relaxed)) {
            }
            break;
        }
    }
    k->keys_used = sh->keys_left - ra_keys_left();
    k->keys_over = ra_key_budget_end(saved);
    g_worker = NULL;
    if (k->w.index) ra_scratch_flush(); /* a worker's own thread: nothing stays behind */
}

static void *thread_main(void *arg)
{
    worker *k = arg;
    run_jobs(k);
    k->heap = ra_heap_get();
    return NULL;
}

static int cmp_kept(const void *a, const void *b)
{
    const kept_warning *x = a, *y = b;
    if (x->job != y->job) return x->job < y->job ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The kept warnings of every worker, in the order one thread would have given them. */
static void replay_warnings(worker *ks, unsigned nk)
{
    size_t total = 0;
    for (unsigned t = 0; t < nk; t++) {
        total += ks[t].nwarn;
        ra_warnings_lost_add(ks[t].warn_lost);
    }
    if (!total) return;
    kept_warning *all = ra_malloc(total * sizeof *all);
    if (!all) {
        ra_warnings_lost_add(total);
        return;
    }
    size_t o = 0;
    for (unsigned t = 0; t < nk; t++)
        for (size_t j = 0; j < ks[t].nwarn; j++) all[o++] = ks[t].warn[j];
    qsort(all, total, sizeof *all, cmp_kept);
    for (size_t j = 0; j < total; j++) ra_scene_warn(all[j].scene, "%s", all[j].msg);
    ra_free(all);
}

ra_status ra_parallel_for(ra_document *doc, unsigned threads, size_t n, ra_job_fn job, void *ctx, size_t *samples_left,
                          ra_error *err)
{
    size_t budget = samples_left ? *samples_left : SIZE_MAX;
    if (threads > n) threads = (unsigned)n;
    if (threads <= 1) {
        ra_worker w = {doc->arena, budget, 0};
        ra_status st = RA_OK;
        for (size_t i = 0; st == RA_OK && i < n; i++) st = job(ctx, i, &w, err);
        if (samples_left) *samples_left = w.samples_left;
        return st;
    }
    worker *ks = ra_calloc(threads, sizeof *ks);
    if (!ks) return ra_fail_nomem(err, doc->format->id);
    shared sh = {job, ctx, n, 0, SIZE_MAX, ra_keys_left()};
    size_t room = ra_arena_room(doc->arena);
    ra_status st = RA_OK;
    unsigned made = 0;
    for (unsigned t = 0; t < threads; t++) {
        worker *k = &ks[t];
        k->sh = &sh;
        k->w.index = t;
        k->w.samples_left = k->samples_start = budget;
        k->fail_job = SIZE_MAX;
        /* the calling thread works in the document's arena; the others in
         * their own, which may use what the document's has left */
        k->w.arena = t == 0 ? doc->arena : ra_arena_create(room);
        if (!k->w.arena) {
            st = ra_fail_nomem(err, doc->format->id);
            break;
        }
        made++;
    }
    for (unsigned t = 1; st == RA_OK && t < threads; t++)
        ks[t].started = pthread_create(&ks[t].thread, NULL, thread_main, &ks[t]) == 0;
    if (st == RA_OK) run_jobs(&ks[0]);
    for (unsigned t = 1; t < threads; t++)
        if (ks[t].started) {
            pthread_join(ks[t].thread, NULL);
            ra_heap_absorb(&ks[t].heap);
        }
    /* the results (and the kept warnings' text) move into the document's arena */
    bool room_ok = true;
    for (unsigned t = 1; t < made; t++) room_ok = ra_arena_adopt(doc->arena, ks[t].w.arena) && room_ok;
    if (st == RA_OK) {
        /* the lowest failing job's error; else the budgets summed */
        size_t lowest = SIZE_MAX;
        unsigned who = 0;
        double keys = 0, taken = 0;
        bool keys_over = false;
        for (unsigned t = 0; t < threads; t++) {
            if (ks[t].fail_job < lowest) {
                lowest = ks[t].fail_job;
                who = t;
            }
            keys += ks[t].keys_used;
            keys_over = keys_over || ks[t].keys_over;
            taken += (double)(ks[t].samples_start - ks[t].w.samples_left);
        }
        /* a worker past the key budget: the load's budget is past it too */
        if (keys_over) (void)ra_keys_charge(SIZE_MAX);
        if (lowest != SIZE_MAX) {
            *err = ks[who].err;
            st = err->code;
        } else if (!room_ok) {
            st = ra_fail_nomem(err, doc->format->id); /* past memory_limit, as one arena would be */
        } else if (keys_over || !ra_keys_charge(keys > 0 ? (size_t)keys : 0)) {
            st = ra_fail_nomem(err, doc->format->id); /* named max_keys by ra_document_build_scene */
        } else if (samples_left && taken > (double)budget) {
            *samples_left = 0;
            st = ra_fail_max_samples(doc, err);
        } else if (samples_left) {
            *samples_left = budget - (size_t)taken;
        }
        if (st == RA_OK) replay_warnings(ks, threads);
    }
    for (unsigned t = 0; t < threads; t++) ra_free(ks[t].warn);
    ra_free(ks);
    return st;
}

ra_status ra_parallel_for_late(ra_document *doc, unsigned threads, size_t n, ra_job_fn job, void *ctx,
                               size_t *samples_left, ra_status late, const ra_error *late_err, ra_error *err)
{
    ra_status rs = ra_parallel_for(doc, threads, n, job, ctx, samples_left, err);
    if (rs != RA_OK || late == RA_OK) return rs;
    *err = *late_err;
    return late;
}

/* ---- a reader's jobs on the load's threads ------------------------------------- */
typedef struct read_run {
    ra_read_job job;
    void *job_ctx;
} read_run;

static ra_status read_job_run(void *ctx, size_t i, ra_worker *w, ra_error *err)
{
    const read_run *rr = ctx;
    return rr->job(rr->job_ctx, i, w->arena, err);
}

ra_status ra_document_read_runner(void *run_ctx, size_t n, double work, ra_read_job job, void *job_ctx, ra_status late,
                                  const ra_error *late_err, ra_error *err)
{
    read_run rr = {job, job_ctx};
    ra_document *doc = run_ctx;
    return ra_parallel_for_late(doc, ra_document_threads(doc, work), n, read_job_run, &rr, NULL, late, late_err, err);
}
