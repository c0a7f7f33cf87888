/* Baking a time function (a game's playback rules) into keys that
 * linear / shortest-arc playback reproduces.  See ra_scene.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/ra_scene.h"

/* ra_step_epsilon without the call where it is its floor 1e-4: below 255
 * four float32 steps are at most 2^-14 */
static inline double step_eps(double t) { return fabs(t) < 255 ? 1e-4 : ra_step_epsilon(t); }

void ra_bake_params_default(ra_bake_params *p)
{
    p->angle_tol = 4e-6;
    p->value_tol = 1e-6;
    p->max_key_angle = 150.0 * RA_PI / 180.0;
    p->max_depth = 16;
    p->samples_left = NULL;
    p->max_samples = 0;
    p->format = "retroanim";
    p->span_pieces = NULL;
    p->span_rotations = NULL;
    p->continuous_at = NULL;
}

typedef struct sample {
    double t;
    ra_trs v;
    bool smooth_after; /* the function is continuous from this key to the next */
    bool rot_only;     /* inside a span where translation and scale are linear: a rotation sample */
} sample;

typedef struct bake {
    ra_arena *a;
    ra_eval_fn eval;
    const void *ctx;
    const ra_bake_params *p;
    double cos_half_max; /* cos(max_key_angle / 2) */
    sample *s;
    size_t n, cap;
    bool failed;
} bake;

/* one more sample from the load's budget */
static bool take_sample(bake *b)
{
    size_t *left = b->p->samples_left;
    if (!left) return true;
    if (*left == 0) {
        b->failed = true;
        return false;
    }
    --*left;
    return true;
}

/* Grows an array of n elements of `size` bytes (*v, room for *cap) to at
 * least twice its capacity (from `first`), through the thread's scratch
 * blocks (ra_scratch_take); false when out of memory (the old array is
 * kept). */
static bool grow_scratch(void **v, size_t n, size_t *cap, size_t first, size_t size)
{
    size_t want = *cap ? *cap * 2 : first, got = 0;
    if (want > SIZE_MAX / size) return false;
    void *nv = ra_scratch_take(want * size, &got);
    if (!nv) return false;
    if (n) memcpy(nv, *v, n * size);
    ra_scratch_give(*v, *cap * size);
    *v = nv;
    *cap = got / size;
    return true;
}

static void push(bake *b, double t, ra_trs v, bool smooth_after)
{
    if (b->failed || !take_sample(b)) return;
    if (b->n && t <= b->s[b->n - 1].t) {
        /* same instant: the later sample wins */
        b->s[b->n - 1].v = v;
        b->s[b->n - 1].smooth_after = smooth_after;
        return;
    }
    if (b->n == b->cap && !grow_scratch((void **)&b->s, b->n, &b->cap, 32, sizeof *b->s)) {
        b->failed = true;
        return;
    }
    b->s[b->n++] = (sample){t, v, smooth_after, false};
}

static double vec_err(ra_vec3 a, ra_vec3 b)
{
    double e = fabs(a.x - b.x);
    if (fabs(a.y - b.y) > e) e = fabs(a.y - b.y);
    if (fabs(a.z - b.z) > e) e = fabs(a.z - b.z);
    return e;
}

/* A value no larger than piece_ok's value tolerance
 * tol * (1 + max(|e.t|, |e.s|)), without its square roots: the largest
 * component bounds each length from below (less 2^-50 for the rounding of
 * the sums and roots), and the rounded operations are monotonic.  -1 (no
 * floor) where a component is NaN, which the largest component would skip. */
static double tol_floor(double tol, const ra_trs *e)
{
    const double c[6] = {e->t.x, e->t.y, e->t.z, e->s.x, e->s.y, e->s.z};
    double m = 0, sum = 0;
    for (int k = 0; k < 6; k++) {
        double a = fabs(c[k]);
        if (a > m) m = a;
        sum += c[k];
    }
    if (sum != sum) return -1;
    return tol * (1 + m * (1 - 0x1p-50));
}

/* The function at the quarter points of a piece: q[1] is its midpoint, q[0]
 * and q[2] the midpoints of its halves.  Each is evaluated when first needed;
 * a piece that is split hands q[0] and q[2] to its halves as their
 * midpoints, so a refinement evaluates every instant once. */
typedef struct probes {
    bool have[3];
    ra_trs v[3];
} probes;

/* Is the piece [x, y] reproduced by playback within tolerance?  The
 * midpoint is tested first (it may be known already), then the quarters. */
static bool piece_ok(bake *b, const sample *x, const sample *y, probes *q)
{
    if (ra_q_angle_over(x->v.r, y->v.r, b->cos_half_max)) return false;
    double tm = 0.5 * (x->t + y->t);
    const double at[3] = {0.5 * (x->t + tm), tm, 0.5 * (tm + y->t)}, len = y->t - x->t;
    static const int order[3] = {1, 0, 2};
    ra_slerp_span span = ra_q_slerp_span(x->v.r, y->v.r);
    for (int k = 0; k < 3; k++) {
        int i = order[k];
        if (!q->have[i]) {
            q->v[i] = b->eval(b->ctx, at[i]);
            q->have[i] = true;
        }
        const ra_trs *e = &q->v[i];
        double f = (at[i] - x->t) / len;
        double et = vec_err(ra_v3_lerp(x->v.t, y->v.t, f), e->t), es = vec_err(ra_v3_lerp(x->v.s, y->v.s, f), e->s);
        double lo = tol_floor(b->p->value_tol, e);
        if (!(et <= lo && es <= lo)) {
            double tv = b->p->value_tol * (1 + ra_fmax(ra_v3_len(e->t), ra_v3_len(e->s)));
            if (et > tv) return false;
            if (es > tv) return false;
        }
        if (!ra_q_slerp_near(&span, f, e->r, b->p->angle_tol)) return false;
    }
    return true;
}

/* The final samples, in time order, as the tracks take them: every
 * sample's rotation goes to the rotation track as it comes, and the
 * translation and scale of those that are not rotation samples (most of a
 * long smooth span's are) to a short list for their tracks.  No sample is
 * kept whole: writing each (96 bytes) and reading it back was most of
 * ra_bake_channel's own time. */
typedef struct vec_sample {
    double t;
    ra_vec3 pos, scale;
} vec_sample;

typedef struct samples {
    ra_arena *a;
    ra_quat_track rot; /* scratch */
    vec_sample *v;     /* scratch */
    size_t nv, vcap;
} samples;

static bool append(samples *o, sample v)
{
    if (!ra_quat_track_push(o->a, &o->rot, v.t, v.v.r)) return false;
    if (v.rot_only) return true;
    if (o->nv == o->vcap && !grow_scratch((void **)&o->v, o->nv, &o->vcap, 64, sizeof *o->v)) return false;
    o->v[o->nv++] = (vec_sample){v.t, v.v.t, v.v.s};
    return true;
}

/* Appends the interior samples of [x, y] in time order (x and y excluded).
 * mid: the function at the piece's midpoint when already evaluated. */
static void refine(bake *b, const sample *x, const sample *y, int depth, const ra_trs *mid, samples *out)
{
    if (b->failed || depth >= b->p->max_depth) return;
    probes q;
    q.have[0] = q.have[2] = false;
    q.have[1] = mid != NULL;
    if (mid) q.v[1] = *mid;
    if (piece_ok(b, x, y, &q)) return;
    double tm = 0.5 * (x->t + y->t);
    if (!(tm > x->t && tm < y->t) || !take_sample(b)) return;
    sample m = {tm, q.have[1] ? q.v[1] : b->eval(b->ctx, tm), true, false};
    refine(b, x, &m, depth + 1, q.have[0] ? &q.v[0] : NULL, out);
    if (!append(out, m)) b->failed = true;
    refine(b, &m, y, depth + 1, q.have[2] ? &q.v[2] : NULL, out);
}

/* Appends the ends of the np equal pieces of [x, y] but y (span_pieces);
 * rotation samples in batches from span_rotations where it answers. */
static void uniform(bake *b, const sample *x, const sample *y, uint32_t np, bool rot_only, samples *out)
{
    enum {
        BATCH = 32
    };
    ra_quat rot[BATCH];
    uint32_t first = 0, have = 0; /* rot holds the pieces first .. first + have - 1 */
    bool batched = rot_only && b->p->span_rotations;
    for (uint32_t j = 1; j < np && !b->failed; j++) {
        double t = x->t + (y->t - x->t) * ((double)j / (double)np);
        if (!(t > x->t && t < y->t)) continue;
        if (!take_sample(b)) return;
        if (batched && j >= first + have) {
            first = j;
            have = np - j < BATCH ? np - j : BATCH;
            batched = b->p->span_rotations(b->ctx, x->t, y->t, np, first, have, rot);
        }
        sample s = batched ? (sample){t, {x->v.t, rot[j - first], x->v.s}, true, true}
                           : (sample){t, b->eval(b->ctx, t), true, rot_only};
        if (!append(out, s)) b->failed = true;
    }
}

/* The keys of a translation or scale track: built in a scratch buffer sized
 * for every sample (so pushing never grows it), simplified, and only then
 * copied into the arena, which thus holds just the keys that remain (the
 * rotation track is such a buffer already). */
static bool dup_vec(ra_arena *a, const samples *fs, int which, ra_vec_key **out, size_t *count, double tol)
{
    ra_vec_track tr;
    if (!ra_vec_track_reserve(&tr, fs->nv)) return false;
    for (size_t k = 0; k < fs->nv; k++) ra_vec_track_push(a, &tr, fs->v[k].t, which ? fs->v[k].scale : fs->v[k].pos);
    return ra_vec_track_commit(a, &tr, tol, out, count);
}

static ra_status bake_failed(const ra_bake_params *p, ra_error *err)
{
    if (p->samples_left && *p->samples_left == 0)
        return ra_fail(err, RA_ERR_LIMIT, p->format, RA_NO_OFFSET, "max_samples",
                       "baking the animation needs more than %zu samples", p->max_samples);
    return ra_fail_nomem(err, p->format);
}

ra_status ra_bake_channel(ra_arena *a, ra_eval_fn eval, const void *ctx, const double *breaks, size_t nbreaks,
                          const ra_bake_params *params, ra_channel *ch, ra_error *err)
{
    ra_bake_params defp;
    if (!params) {
        ra_bake_params_default(&defp);
        params = &defp;
    }
    bake b = {a, eval, ctx, params, cos(params->max_key_angle / 2), NULL, 0, 0, false};
    double t0 = nbreaks ? breaks[0] : 0;
    if (t0 > 0) {
        /* constant before the first breakpoint: one key at 0 holds it for consumers */
        push(&b, 0, eval(ctx, 0), true);
    }
    for (size_t i = 0; i < nbreaks; i++) {
        double t = breaks[i];
        if (i && t <= breaks[i - 1]) continue;
        double eps = step_eps(t);
        bool has_next = false;
        double next = 0;
        for (size_t j = i + 1; j < nbreaks; j++)
            if (breaks[j] > t) {
                has_next = true;
                next = breaks[j];
                break;
            }
        if (i && has_next && params->continuous_at && params->continuous_at(ctx, t)) {
            /* no jump at t: the instant alone, the piece after it smooth */
            push(&b, t, eval(ctx, t), true);
            continue;
        }
        double prev_key = b.n ? b.s[b.n - 1].t : -INFINITY;
        if (t - eps > prev_key && t - eps >= 0) push(&b, t - eps, eval(ctx, t - eps), false);
        push(&b, t, eval(ctx, t), false);
        if (has_next && t + eps < next - eps) push(&b, t + eps, eval(ctx, t + eps), true);
    }
    if (!b.n) push(&b, 0, eval(ctx, 0), false);
    if (b.failed) {
        ra_scratch_give(b.s, b.cap * sizeof *b.s);
        return bake_failed(params, err);
    }
    /* subdivide the smooth pieces */
    samples fs = {a, {0}, NULL, 0, 0};
    if (!ra_quat_track_reserve(&fs.rot, 2 * b.n + 64)) b.failed = true; /* grows as needed */
    for (size_t i = 0; i < b.n && !b.failed; i++) {
        if (!append(&fs, b.s[i])) b.failed = true;
        if (i + 1 < b.n && b.s[i].smooth_after) {
            bool linear_ts = false;
            uint32_t np =
                params->span_pieces ? params->span_pieces(ctx, b.s[i].t, b.s[i + 1].t, params, &linear_ts) : 0;
            if (np > (1u << 16)) np = 0; /* past any sensible density: verify instead */
            if (np) uniform(&b, &b.s[i], &b.s[i + 1], np, linear_ts, &fs);
            else refine(&b, &b.s[i], &b.s[i + 1], 0, NULL, &fs);
        }
    }
    ra_scratch_give(b.s, b.cap * sizeof *b.s);
    bool ok = !b.failed && dup_vec(a, &fs, 0, &ch->position, &ch->position_count, params->value_tol) &&
              dup_vec(a, &fs, 1, &ch->scaling, &ch->scaling_count, params->value_tol);
    if (ok) /* (releases the track) */
        ok = ra_quat_track_commit(a, &fs.rot, params->angle_tol, params->max_key_angle, &ch->rotation,
                                  &ch->rotation_count);
    else ra_quat_track_release(&fs.rot);
    ra_scratch_give(fs.v, fs.vcap * sizeof *fs.v);
    if (b.failed) return bake_failed(params, err);
    return ok ? RA_OK : ra_fail_nomem(err, params->format);
}

bool ra_breaks_push(ra_breaks *b, double t)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        double *nv = ra_realloc(b->v, cap * sizeof *nv);
        if (!nv) return false;
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = t;
    return true;
}

/* the end of the ascending run starting at v[i] */
static size_t run_end(const double *v, size_t i, size_t n)
{
    while (i + 1 < n && !(v[i + 1] < v[i])) i++;
    return i + 1;
}

/* Breakpoints come as a few ascending runs (one per track, per loop): the
 * runs are merged pairwise (stable, in the order qsort's merge sort gives)
 * until one is left. */
bool ra_breaks_sort(ra_breaks *b)
{
    size_t n = b->n;
    if (n < 2 || run_end(b->v, 0, n) == n) return true;
    double *v = b->v, *w = ra_malloc(n * sizeof *w);
    if (!w) return false;
    while (run_end(v, 0, n) < n) {
        for (size_t i = 0, o = 0; i < n;) {
            size_t m = run_end(v, i, n), e = m < n ? run_end(v, m, n) : n, x = i, y = m;
            while (x < m && y < e) w[o++] = v[y] < v[x] ? v[y++] : v[x++];
            while (x < m) w[o++] = v[x++];
            while (y < e) w[o++] = v[y++];
            i = e;
        }
        double *t = v;
        v = w, w = t;
    }
    if (v != b->v) memcpy(b->v, v, n * sizeof *v);
    ra_free(v == b->v ? w : v);
    return true;
}
