/* retroanim — inside the library: baking a scene's channels on several
 * threads with the output of one.
 *
 * A format's to_scene hands ra_parallel_for the jobs of one loop (one job per
 * channel, say).  Each job writes only its own results (its channel) and
 * allocates from its worker's arena; ra_parallel_for moves those arenas into
 * the document's when every job is done, so the scene holds the same keys
 * in the same places whatever the number of threads.  What a job shares with
 * the others is accounted per worker and summed afterwards:
 *   - the sample budget (max_samples): each worker starts from what is left,
 *     and the sum of what they took is charged (over it: RA_ERR_LIMIT);
 *   - the key budget (max_keys, ra_keys_charge) the same way;
 *   - warnings (ra_scene_warn from a job) are kept and replayed in job
 *     order, so the scene's warnings are those of the one-thread run;
 *   - the heap statistics (ra_heap_get) of the workers are added to the
 *     calling thread's;
 *   - the memory limit: each worker's arena may use what the document's has
 *     left, and the sum is checked when they are merged.
 * A failing job stops the jobs after it; the error returned is that of the
 * lowest failing job, as one thread running them in order would report. */
#ifndef RETROANIM_RA_PARALLEL_H
#define RETROANIM_RA_PARALLEL_H

#include "ra_document.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ra_worker {
    ra_arena *arena;     /* allocate the job's results here */
    size_t samples_left; /* this worker's sample budget: point bake params' samples_left here */
    unsigned index;      /* 0 .. threads - 1: a slot in per-worker tallies */
} ra_worker;

/* One job: fills result i.  Returns RA_OK or an error in err. */
typedef ra_status (*ra_job_fn)(void *ctx, size_t i, ra_worker *w, ra_error *err);

/* The threads a load of doc may use for a loop of `work` units (keys or
 * samples it expects): the option `threads` when given (1 = this thread
 * only), else the processors online (at most RA_MAX_THREADS) when the work is
 * at least RA_PARALLEL_MIN_WORK, else 1.  Always 1 while an allocation
 * failure is pending (ra_heap_fail_nth counts this thread's allocations). */
#define RA_MAX_THREADS 16u
#define RA_PARALLEL_MIN_WORK 200000.0
unsigned ra_document_threads(const ra_document *doc, double work);

/* Runs job(ctx, i, ...) for every i in [0, n) on `threads` threads (the
 * calling thread is one of them).  *samples_left is the load's sample budget
 * (NULL: unlimited); it is charged what the jobs took.  With threads <= 1 the
 * jobs run in order on this thread with the document's arena. */
ra_status ra_parallel_for(ra_document *doc, unsigned threads, size_t n, ra_job_fn job, void *ctx, size_t *samples_left,
                          ra_error *err);

/* ra_parallel_for over the jobs planned before a planning step failed with
 * `late` (RA_OK: none failed), its error in late_err: the jobs run; their own
 * error comes first, else the late one (so that a failure reports what the
 * same load reports with one thread, where the jobs would have run first). */
ra_status ra_parallel_for_late(ra_document *doc, unsigned threads, size_t n, ra_job_fn job, void *ctx,
                               size_t *samples_left, ra_status late, const ra_error *late_err, ra_error *err);

/* The ra_read_runner of a load: run_ctx is its document, the jobs run on
 * its threads (ra_document_threads for `work`), each in its worker's arena
 * (ra_parallel_for_late). */
ra_status ra_document_read_runner(void *run_ctx, size_t n, double work, ra_read_job job, void *job_ctx, ra_status late,
                                  const ra_error *late_err, ra_error *err);

/* For ra_scene_warn: true when the calling thread runs a job, in which case
 * the message is kept for the replay (scene.c). */
bool ra_parallel_defer_warning(ra_scene *s, const char *msg);

#ifdef __cplusplus
}
#endif
#endif
