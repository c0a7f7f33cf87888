/* Homeworld .mad semantics: the game's TCB spline and transform (pose) and
 * the scene sampled from them (to_scene).  The rules are written out in
 * test_models/homeworld/RULES.md; in short:
 *
 *  - each channel is the Kochanek-Bartels Hermite of bsCurveUpdate on the
 *    object's whole key array, phantom keys included
 *    (docs/formats/homeworld.md §2);
 *  - (x, y, z, h, p, b) give the ship-space local matrix T = (y, z, -x),
 *    R = Rx(-h) Rz(p) Ry(-b) (docs/formats/homeworld.md §3); the root turns
 *    ship space (up +X, forward +Z) into Y up;
 *  - an animation record is a window [start, end] of the shared timeline,
 *    played by the objects whose bit is set; the others stay at rest.
 * Assimp has no TCB curve, so each window is sampled: a uniform grid at
 * sample_rate Hz (default 60) plus every real key time and both ends. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "retroanim/homeworld.h"
#include "retroanim/ra_parallel.h"

#define FMT "homeworld_mad"

enum {
    SPACE_SHIP,
    SPACE_LIGHTWAVE
};

typedef struct hw_state {
    ra_mat4 basis; /* local = basis * M_ship * basis^T */
    int space;
    bool native;
    double sample_rate;
    double max_key_angle; /* radians: largest rotation between two keys (at most 90 degrees) */
    int32_t *node_obj;    /* node -> the .mad object animating it, -1 */
    int32_t *obj_node;    /* .mad object -> the node its channels drive */
} hw_state;

const hw_mad *hw_document_mad(const ra_document *doc)
{
    if (!doc || !doc->format || strcmp(doc->format->id, FMT) != 0) return NULL;
    return doc->model;
}

/* ---- the game's spline ------------------------------------------------------------------------------------- */
/* The segment of tau: the largest i in [1, n-3] with t_i <= tau (t_i < tau when left). */
static int64_t segment(const float *t, int64_t n, double tau, bool left)
{
    int64_t lo = 1, hi = n - 3; /* answer in [lo, hi]; t_1 <= tau (< when left) holds */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (left ? t[mid] < tau : t[mid] <= tau) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static double ratio(double len, double den, unsigned *flags)
{
    double r = den > 0 ? len / den : NAN;
    if (isfinite(r)) return r;
    if (flags) *flags |= HW_SPLINE_RATIO_FALLBACK;
    return 0.5;
}

/* Where tau falls, shared by the six channels of an object (they have the
 * same key times and TCB): a held key, or a segment with its Hermite weights. */
typedef struct spline_seg {
    int64_t hold;                      /* the key whose value holds, -1 in a segment, -2 without keys (0) */
    int64_t i;                         /* the segment [t_i, t_i+1] */
    double s, len;                     /* where in it, and its length */
    double a0, b0, a1, b1, adj0, adj1; /* out = adj0 (a0 dP0 + b0 dP1), in = adj1 (a1 dP1 + b1 dP2) */
} spline_seg;

static spline_seg seg_at(const hw_object *o, double tau, bool left, unsigned *flags)
{
    int64_t n = o->key_count;
    const float *t = o->times;
    spline_seg g = {-2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (n <= 0) return g;
    if (n < 4) g.hold = n == 1 ? 0 : 1;
    else if (left ? tau <= t[1] : tau < t[1]) g.hold = 1;
    else if (left ? tau > t[n - 2] : tau >= t[n - 2]) g.hold = n - 2;
    if (g.hold >= 0) return g;
    g.hold = -1;
    int64_t i = segment(t, n, tau, left);
    double t0 = t[i], t1 = t[i + 1];
    g.i = i;
    g.len = t1 - t0;
    g.s = (tau - t0) / g.len;
    const hw_tcb *k0 = &o->tcb[i], *k1 = &o->tcb[i + 1];
    g.adj0 = ratio(g.len, t1 - t[i - 1], flags);
    g.adj1 = ratio(g.len, t[i + 2] - t0, flags);
    g.a0 = (1.0 - k0->tension) * (1.0 + k0->continuity) * (1.0 + k0->bias);
    g.b0 = (1.0 - k0->tension) * (1.0 - k0->continuity) * (1.0 - k0->bias);
    g.a1 = (1.0 - k1->tension) * (1.0 - k1->continuity) * (1.0 + k1->bias);
    g.b1 = (1.0 - k1->tension) * (1.0 + k1->continuity) * (1.0 - k1->bias);
    return g;
}

static double seg_value(const spline_seg *g, const float *P, double *d1, double *d2, unsigned *flags)
{
    if (d1) *d1 = 0;
    if (d2) *d2 = 0;
    if (g->hold == -2) return 0;
    if (g->hold >= 0) return P[g->hold];
    int64_t i = g->i;
    double p0 = P[i - 1], p1 = P[i], p2 = P[i + 1], p3 = P[i + 2], s = g->s, len = g->len;
    double out = g->adj0 * (g->a0 * (p1 - p0) + g->b0 * (p2 - p1));
    double in = g->adj1 * (g->a1 * (p2 - p1) + g->b1 * (p3 - p2));
    double s2 = s * s, s3 = s2 * s;
    double v = (2 * s3 - 3 * s2 + 1) * p1 + (-2 * s3 + 3 * s2) * p2 + (s3 - 2 * s2 + s) * out + (s3 - s2) * in;
    if (!(fabs(v) <= FLT_MAX)) { /* past float range (or NaN): what consumers store is a float */
        if (flags) *flags |= HW_SPLINE_NOT_FINITE;
        return 0;
    }
    if (d1) *d1 = ((6 * s2 - 6 * s) * (p1 - p2) + (3 * s2 - 4 * s + 1) * out + (3 * s2 - 2 * s) * in) / len;
    if (d2) *d2 = ((12 * s - 6) * (p1 - p2) + (6 * s - 4) * out + (6 * s - 2) * in) / (len * len);
    return v;
}

double hw_spline(const hw_object *o, int c, double tau, bool left, double *d1, double *d2, unsigned *flags)
{
    spline_seg g = seg_at(o, tau, left, flags);
    return seg_value(&g, o->path[c], d1, d2, flags);
}

/* ---- the game's transform ---------------------------------------------------------------------------------- */
static void values_at(const hw_object *o, double tau, bool left, double v[HW_CHANNELS], unsigned *flags)
{
    spline_seg g = seg_at(o, tau, left, flags);
    for (int c = 0; c < HW_CHANNELS; c++) v[c] = seg_value(&g, o->path[c], NULL, NULL, flags);
}

/* values_at for many instants of one object, mostly increasing: the
 * segment found from the last one where the key times are in order (the
 * binary search's answer is then the only segment that fits), and each
 * segment's weights and tangents worked out once.  Bit for bit values_at. */
typedef struct seg_cache {
    bool sorted;  /* t[2..n-3] never decrease: a segment that fits is segment()'s */
    int64_t i;    /* the segment below, -1 none */
    spline_seg g; /* its weights (s unused) */
    unsigned flags;
    double t0, p1[HW_CHANNELS], p2[HW_CHANNELS], out[HW_CHANNELS], in[HW_CHANNELS];
} seg_cache;

static void seg_cache_init(seg_cache *c, const hw_object *o)
{
    int64_t n = o->key_count;
    c->i = -1;
    c->sorted = true;
    for (int64_t k = 2; k + 1 <= n - 3; k++)
        if (!(o->times[k] <= o->times[k + 1])) c->sorted = false;
}

static bool seg_fits(const float *t, int64_t n, double tau, bool left, int64_t i)
{
    if (i < 1 || i > n - 3) return false;
    if (i > 1 && !(left ? t[i] < tau : t[i] <= tau)) return false;
    return i == n - 3 || !(left ? t[i + 1] < tau : t[i + 1] <= tau);
}

static void values_at_cached(const hw_object *o, seg_cache *c, double tau, bool left, double v[HW_CHANNELS],
                             unsigned *flags)
{
    int64_t n = o->key_count;
    const float *t = o->times;
    if (n < 4 || (left ? tau <= t[1] : tau < t[1]) || (left ? tau > t[n - 2] : tau >= t[n - 2])) {
        values_at(o, tau, left, v, flags); /* a held key (or none) */
        return;
    }
    int64_t i = -1;
    if (c->sorted && c->i >= 0)
        for (int64_t k = c->i - 1; k <= c->i + 4; k++)
            if (seg_fits(t, n, tau, left, k)) {
                i = k;
                break;
            }
    if (i < 0) i = segment(t, n, tau, left);
    if (i != c->i) {
        /* seg_at's and seg_value's sums for segment i */
        unsigned fl = 0;
        double t0 = t[i], t1 = t[i + 1];
        spline_seg *g = &c->g;
        g->len = t1 - t0;
        const hw_tcb *k0 = &o->tcb[i], *k1 = &o->tcb[i + 1];
        g->adj0 = ratio(g->len, t1 - t[i - 1], &fl);
        g->adj1 = ratio(g->len, t[i + 2] - t0, &fl);
        g->a0 = (1.0 - k0->tension) * (1.0 + k0->continuity) * (1.0 + k0->bias);
        g->b0 = (1.0 - k0->tension) * (1.0 - k0->continuity) * (1.0 - k0->bias);
        g->a1 = (1.0 - k1->tension) * (1.0 - k1->continuity) * (1.0 + k1->bias);
        g->b1 = (1.0 - k1->tension) * (1.0 + k1->continuity) * (1.0 - k1->bias);
        for (int ch = 0; ch < HW_CHANNELS; ch++) {
            const float *P = o->path[ch];
            double p0 = P[i - 1], p1 = P[i], p2 = P[i + 1], p3 = P[i + 2];
            c->p1[ch] = p1;
            c->p2[ch] = p2;
            c->out[ch] = g->adj0 * (g->a0 * (p1 - p0) + g->b0 * (p2 - p1));
            c->in[ch] = g->adj1 * (g->a1 * (p2 - p1) + g->b1 * (p3 - p2));
        }
        c->t0 = t0;
        c->flags = fl;
        c->i = i;
    }
    if (flags) *flags |= c->flags;
    double s = (tau - c->t0) / c->g.len, s2 = s * s, s3 = s2 * s;
    for (int ch = 0; ch < HW_CHANNELS; ch++) {
        double p1 = c->p1[ch], p2 = c->p2[ch], out = c->out[ch], in = c->in[ch];
        double x = (2 * s3 - 3 * s2 + 1) * p1 + (-2 * s3 + 3 * s2) * p2 + (s3 - 2 * s2 + s) * out + (s3 - s2) * in;
        if (!(fabs(x) <= FLT_MAX)) {
            if (flags) *flags |= HW_SPLINE_NOT_FINITE;
            x = 0;
        }
        v[ch] = x;
    }
}

/* nisObjectEulerToMatrix and the (y, z, -x) translation, in closed form (docs/formats/homeworld.md §3) */
static ra_mat4 ship_matrix(const double v[HW_CHANNELS])
{
    double ch = cos(v[HW_H]), sh = sin(v[HW_H]), cp = cos(v[HW_P]), sp = sin(v[HW_P]);
    double cb = cos(v[HW_B]), sb = sin(v[HW_B]);
    ra_mat4 m = {{{cp * cb, -sp, -cp * sb, v[HW_Y]},
                  {ch * sp * cb + sh * sb, ch * cp, sh * cb - ch * sp * sb, v[HW_Z]},
                  {ch * sb - sh * sp * cb, -sh * cp, ch * cb + sh * sp * sb, -v[HW_X]},
                  {0, 0, 0, 1}}};
    return m;
}

static ra_mat4 local_matrix(const hw_state *st, const double v[HW_CHANNELS])
{
    ra_mat4 m = ship_matrix(v);
    if (st->space == SPACE_SHIP) return m;
    ra_mat4 bt = ra_m4_transpose(&st->basis), x = ra_m4_mul(&m, &bt);
    return ra_m4_mul(&st->basis, &x);
}

/* The same transform as translation and quaternion, built independently of
 * the matrix above (the tests compare the two). */
/* ra_q_axis_angle about a unit axis (0 X, 1 Y, 2 Z), its length's sqrt
 * and division by 1 left out (both exact); the zero components keep their
 * products for their signs */
static ra_quat axis_q(int axis, double a)
{
    double s = sin(a / 2), c = cos(a / 2);
    return ra_q(c, axis == 0 ? 1 * s : 0 * s, axis == 1 ? 1 * s : 0 * s, axis == 2 ? 1 * s : 0 * s);
}

/* ra_q_mul(q, axis_q(axis, a)) without the products of the axis
 * quaternion's zeros: each component is the same two products summed (x - 0
 * and x + 0 are x; at most the sign of a zero could differ) */
static inline ra_quat times_axis(ra_quat q, int axis, double a)
{
    double s = sin(a / 2), c = cos(a / 2);
    switch (axis) {
    case 0: return ra_q(q.w * c - q.x * s, q.w * s + q.x * c, q.y * c + q.z * s, q.z * c - q.y * s);
    case 1: return ra_q(q.w * c - q.y * s, q.x * c - q.z * s, q.w * s + q.y * c, q.x * s + q.z * c);
    default: return ra_q(q.w * c - q.z * s, q.x * c + q.y * s, q.y * c - q.x * s, q.w * s + q.z * c);
    }
}

static ra_trs local_trs(const hw_state *st, const double v[HW_CHANNELS])
{
    ra_trs r = {ra_v3(0, 0, 0), ra_q_identity(), ra_v3(1, 1, 1)};
    double h = v[HW_H], p = v[HW_P], b = v[HW_B];
    /* (A B) C of three rotations about axes, A B C as written in the docs */
    if (st->space == SPACE_SHIP) {
        r.t = ra_v3(v[HW_Y], v[HW_Z], -v[HW_X]);
        r.r = times_axis(times_axis(axis_q(0, -h), 2, p), 1, -b);
    } else if (!st->native) { /* LightWave, Z mirrored into a right-handed frame */
        r.t = ra_v3(v[HW_X], v[HW_Y], -v[HW_Z]);
        r.r = times_axis(times_axis(axis_q(1, -h), 0, -p), 2, b);
    } else { /* LightWave as stored (left-handed) */
        r.t = ra_v3(v[HW_X], v[HW_Y], v[HW_Z]);
        r.r = times_axis(times_axis(axis_q(1, h), 0, p), 2, b);
    }
    return r;
}

static bool takes_part(const hw_object *o, size_t anim) { return anim < 32 && (o->animation_bits >> anim & 1u); }

static ra_status hw_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    (void)err;
    const hw_mad *m = doc->model;
    const hw_state *st = doc->state;
    world[0] = doc->scene.nodes[0].transform;
    const hw_animation *a = anim < (size_t)m->animation_count ? &m->animations[anim] : NULL;
    bool play = a != NULL;
    double u = t;
    if (a) {
        double d = (double)a->end - a->start;
        if ((a->flags & HW_MAD_FLAG_LOOP) && d > 0 && u > d) u = fmod(u, d);
        if (!(u >= 0 && u <= d)) play = false; /* NaN too */
    }
    /* nodes are in pre-order: a bound, playing object's matrix REPLACES its
     * rest (.geo localMatrix); W = W(parent) * M */
    for (size_t i = 1; i < doc->scene.node_count; i++) {
        int32_t j = st->node_obj[i];
        ra_mat4 local = doc->scene.nodes[i].transform;
        if (j >= 0 && play && takes_part(&m->objects[j], anim)) {
            double v[HW_CHANNELS];
            values_at(&m->objects[j], (double)a->start + u, false, v, NULL);
            local = local_matrix(st, v);
        }
        int32_t p = doc->scene.nodes[i].parent;
        world[i] = ra_m4_mul(&world[p >= 0 ? p : 0], &local);
    }
    return RA_OK;
}

/* ---- sampling ------------------------------------------------------------------------------------------------ */
enum {
    SAMPLE_GRID,
    SAMPLE_KEY,
    SAMPLE_STEP,
    SAMPLE_END
};
typedef struct sample {
    double u;
    int kind;
} sample;

static int cmp_sample(const void *x, const void *y)
{
    const sample *a = x, *b = y;
    if (a->u != b->u) return a->u < b->u ? -1 : 1;
    return b->kind - a->kind;
}

static bool in_order(const sample *c, size_t from, size_t to)
{
    for (size_t i = from + 1; i < to; i++)
        if (cmp_sample(&c[i - 1], &c[i]) > 0) return false;
    return true;
}

/* c[0, n) sorted by cmp_sample, as three runs [0, m1), [m1, m2), [m2, n),
 * each usually in order already (one that is not is sorted first), merged
 * in one pass into a new array: the order of merging the first two runs and
 * then the third, the left side first on ties.  c is freed; NULL: out of
 * memory. */
static sample *merge_runs(sample *c, size_t m1, size_t m2, size_t n)
{
    const size_t run[4] = {0, m1, m2, n};
    for (int r = 0; r < 3; r++)
        if (!in_order(c, run[r], run[r + 1])) qsort(c + run[r], run[r + 1] - run[r], sizeof *c, cmp_sample);
    sample *out = ra_malloc(n * sizeof *out);
    if (out) {
        size_t i = 0, j = m1, k = m2;
        for (size_t o = 0; o < n; o++) {
            /* the next of the first two runs merged, then it against the third's */
            size_t *x = i < m1 && (j >= m2 || cmp_sample(&c[i], &c[j]) <= 0) ? &i : j < m2 ? &j : NULL;
            if (x && (k >= n || cmp_sample(&c[*x], &c[k]) <= 0)) out[o] = c[(*x)++];
            else out[o] = c[k++];
        }
    }
    ra_free(c);
    return out;
}

/* ra_step_epsilon without the call where it is its floor 1e-4: below 255
 * four float32 steps are at most 2^-14 */
static inline double step_eps(double t) { return fabs(t) < 255 ? 1e-4 : ra_step_epsilon(t); }

/* The instants one window needs for one object, sorted, at least one step
 * epsilon apart (two before a step, whose left value is written at u - eps):
 * the window's ends win over everything, a step over a key time, a key time
 * over a grid point next to it. */
static sample *window_samples(const hw_object *o, const hw_animation *a, double rate, size_t *count)
{
    double d = (double)a->end - a->start;
    double grid = floor(d * rate + 1e-9);
    int64_t n = o->key_count;
    size_t cap = (size_t)grid + 3 + (n > 2 ? (size_t)n : 0);
    sample *c = ra_malloc(cap * sizeof *c);
    if (!c) return NULL;
    size_t k = 0;
    /* three runs, each in order (the keys when the file's times are): the
     * window's ends, the grid, the key times; merged rather than sorted */
    c[k++] = (sample){0, SAMPLE_END};
    c[k++] = (sample){d, SAMPLE_END};
    for (double g = 0; g <= grid; g++) c[k++] = (sample){g / rate, SAMPLE_GRID};
    size_t keys = k;
    for (int64_t i = 1; n >= 4 && i <= n - 2; i++) {
        double u = (double)o->times[i] - a->start;
        if (u > 0 && u < d) c[k++] = (sample){u, i >= 2 && o->times[i] == o->times[i - 1] ? SAMPLE_STEP : SAMPLE_KEY};
    }
    if (!(c = merge_runs(c, 2, keys, k))) return NULL;
    size_t out = 0;
    for (size_t i = 0; i < k; i++) {
        sample s = c[i];
        double gap = step_eps(s.u) * (s.kind == SAMPLE_STEP ? 2 : 1);
        while (out && s.u - c[out - 1].u < gap && c[out - 1].kind < s.kind) out--;
        if (out && s.u - c[out - 1].u < gap) {
            /* a step too close after the window's start to write its left
             * value: its right value is a plain key (the start keeps its own) */
            if (s.kind == SAMPLE_STEP && c[out - 1].kind == SAMPLE_END && s.u - c[out - 1].u >= step_eps(s.u))
                s.kind = SAMPLE_KEY;
            else continue;
        }
        c[out++] = s;
    }
    *count = out;
    return c;
}

typedef struct baker {
    ra_arena *arena;
    const hw_state *st;
    const hw_object *o;
    double start;
    ra_vec_track pos;
    ra_quat_track rot;
    size_t *left; /* keys this load may still write */
    unsigned flags;
    double cos_half_max; /* cos(max_key_angle / 2) */
    seg_cache seg;
} baker;

static ra_trs trs_at(baker *b, double u, bool left)
{
    double v[HW_CHANNELS];
    values_at_cached(b->o, &b->seg, b->start + u, left, v, &b->flags);
    return local_trs(b->st, v);
}

static bool push(baker *b, double u, const ra_trs *r)
{
    if (!*b->left) return false;
    --*b->left;
    return ra_vec_track_push(b->arena, &b->pos, u, r->t) && ra_quat_track_push(b->arena, &b->rot, u, r->r);
}

/* Between two samples a slerp must not turn more than 90 degrees, or the
 * consumer's shortest arc may go the wrong way round, nor more than
 * max_key_angle: halve until it does. */
static bool push_between(baker *b, double u0, const ra_quat *q0, double u1, const ra_trs *r1, int depth)
{
    if (depth < 24 && ra_q_angle_over(*q0, r1->r, b->cos_half_max) && u1 - u0 > 2 * step_eps(u1)) {
        double um = 0.5 * (u0 + u1);
        ra_trs rm = trs_at(b, um, false);
        if (!push_between(b, u0, q0, um, &rm, depth + 1)) return false;
        return push_between(b, um, &rm.r, u1, r1, depth + 1);
    }
    return push(b, u1, r1);
}

/* Drops the interior keys whose value (the bytes after the time) equals both
 * neighbours': linear and slerp playback is the same without them. */
static size_t drop_repeats(void *keys, size_t count, size_t stride)
{
    uint8_t *k = keys;
    const size_t off = sizeof(double), len = stride - off; /* {double t; value} */
    size_t o = 0;
    for (size_t i = 0; i < count; i++) {
        uint8_t *v = k + i * stride;
        if (o >= 2 && !memcmp(v + off, k + (o - 1) * stride + off, len) &&
            !memcmp(v + off, k + (o - 2) * stride + off, len)) {
            memmove(k + (o - 1) * stride, v, stride); /* the run's last key moves up */
            continue;
        }
        if (k + o * stride != v) memmove(k + o * stride, v, stride); /* in place until the first repeat */
        o++;
    }
    return o;
}

static ra_status limit_error(ra_error *err, size_t limit)
{
    return ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "max_samples",
                   "sampling the animations needs more than %zu keys (max_samples; a lower sample_rate "
                   "needs fewer)",
                   limit);
}

static ra_status bake_object(ra_arena *ar, const hw_state *st, const hw_object *o, const hw_animation *a,
                             ra_channel *ch, size_t *left, size_t limit, unsigned *flags, ra_error *err)
{
    /* the samples the window needs at least, before any is made */
    double need = floor(((double)a->end - a->start) * st->sample_rate) + 3 + (o->key_count > 0 ? o->key_count : 0);
    if (need > (double)*left) return limit_error(err, limit);
    size_t ns = 0;
    sample *smp = window_samples(o, a, st->sample_rate, &ns);
    if (!smp) return ra_fail_nomem(err, FMT);
    baker b = {ar, st, o, a->start, {0}, {0}, left, 0, cos(st->max_key_angle / 2), {0}};
    seg_cache_init(&b.seg, o);
    bool ok = true;
    if (ns > *left) ok = false;
    /* the tracks hold at least one key per sample; subdivisions grow them.
     * They are scratch: only the keys that remain go to the arena. */
    if (ok && !(ra_vec_track_reserve(&b.pos, ns + 1) && ra_quat_track_reserve(&b.rot, ns + 1))) {
        ra_vec_track_release(&b.pos);
        ra_free(smp);
        return ra_fail_nomem(err, FMT);
    }
    double pu = 0;
    ra_quat pq = ra_q_identity();
    for (size_t i = 0; ok && i < ns; i++) {
        double u = smp[i].u;
        if (smp[i].kind == SAMPLE_STEP) {
            double e = step_eps(u);
            ra_trs l = trs_at(&b, u, true);
            ok = i == 0 || push_between(&b, pu, &pq, u - e, &l, 0);
            if (ok) {
                ra_trs r = trs_at(&b, u, false);
                ok = push(&b, u, &r);
            }
        } else {
            ra_trs r = trs_at(&b, u, false);
            ok = i == 0 ? push(&b, u, &r) : push_between(&b, pu, &pq, u, &r, 0);
        }
        pu = u;
        if (b.rot.count) {
            /* the key as stored, read a double at a time (volatile: not merged
             * into 16-byte loads, which would straddle the push's just-made
             * stores and wait for them: a fifth of this function's time) */
            const volatile ra_quat *k = &b.rot.keys[b.rot.count - 1].q;
            pq = ra_q(k->w, k->x, k->y, k->z);
        }
    }
    ra_free(smp);
    if (ok) {
        b.pos.count = drop_repeats(b.pos.keys, b.pos.count, sizeof *b.pos.keys);
        b.rot.count = drop_repeats(b.rot.keys, b.rot.count, sizeof *b.rot.keys);
        bool fits = ra_keys_charge(b.pos.count + b.rot.count); /* max_keys */
        ch->position = fits ? ra_arena_keys_memdup(ar, b.pos.keys, b.pos.count, sizeof *ch->position) : NULL;
        ch->rotation = fits ? ra_arena_keys_memdup(ar, b.rot.keys, b.rot.count, sizeof *ch->rotation) : NULL;
        ch->position_count = b.pos.count, ch->rotation_count = b.rot.count;
    }
    ra_vec_track_release(&b.pos);
    ra_quat_track_release(&b.rot);
    if (!ok) return *left == 0 || ns > *left ? limit_error(err, limit) : ra_fail_nomem(err, FMT);
    if (!ch->position || !ch->rotation) return ra_fail_nomem(err, FMT);
    ch->scaling = ra_arena_alloc(ar, sizeof *ch->scaling);
    if (!ch->scaling) return ra_fail_nomem(err, FMT);
    ch->scaling[0] = (ra_vec_key){0, ra_v3(1, 1, 1)};
    ch->scaling_count = 1;
    *flags |= b.flags;
    return RA_OK;
}

/* ---- metadata ------------------------------------------------------------------------------------------------ */
/* Most text the per-key TCB lists of one load may take. */
#define HW_MAX_META ((size_t)16 << 20)

/* The object's TCB list as JSON text, ra_malloc'd in *out (its length in
 * *len), cut short once it is longer than cap (and then never kept).
 * false: out of memory. */
static bool tcb_text(const hw_object *o, size_t cap, char **out, size_t *len)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_json j;
    ra_json_init_buffer(&j, &w, false);
    ra_json_begin_array(&j);
    for (int32_t k = 0; k < o->key_count && w.size <= cap; k++) {
        const double v[3] = {o->tcb[k].tension, o->tcb[k].continuity, o->tcb[k].bias};
        ra_json_numbers(&j, v, 3);
    }
    ra_json_end_array(&j);
    *out = NULL;
    *len = 0;
    if (w.failed) {
        ra_writer_free(&w);
        return false;
    }
    *out = (char *)w.data;
    *len = w.size;
    return true;
}

/* The objects' TCB texts as jobs of ra_parallel_for (formatting the
 * numbers took a large load's one thread 25 ms before its bake began):
 * each text made whole, up to the whole budget, while the texts made so far
 * hold less than HW_MAX_TCB_JOBS; the others (text NULL, len 0) are made in
 * turn, cut at what the budget has left then (a text longer than the room a
 * job had is made again in turn). */
#define HW_MAX_TCB_JOBS (4 * HW_MAX_META)

typedef struct tcb_jobs {
    const hw_object *objects;
    char **text; /* NULL: every text is made in turn */
    size_t *len;
    atomic_size_t held; /* the bytes of the texts made */
} tcb_jobs;

static ra_status tcb_job(void *ctx, size_t k, ra_worker *w, ra_error *err)
{
    (void)w;
    tcb_jobs *tj = ctx;
    size_t held = atomic_load_explicit(&tj->held, memory_order_relaxed);
    if (held >= HW_MAX_TCB_JOBS) return RA_OK;
    size_t cap = HW_MAX_TCB_JOBS - held < HW_MAX_META ? HW_MAX_TCB_JOBS - held : HW_MAX_META;
    char *text;
    size_t len;
    if (!tcb_text(&tj->objects[k], cap, &text, &len)) return ra_fail_nomem(err, FMT);
    if (len > cap) { /* longer than the budget, or than the room left */
        ra_free(text);
        return RA_OK;
    }
    atomic_fetch_add_explicit(&tj->held, len, memory_order_relaxed);
    tj->text[k] = text;
    tj->len[k] = len;
    return RA_OK;
}

static void tcb_free(tcb_jobs *tj, size_t n)
{
    for (size_t k = 0; tj->text && k < n; k++) ra_free(tj->text[k]);
    ra_free(tj->text);
    ra_free(tj->len);
}

static const char *animations_json(ra_arena *ar, const hw_mad *m)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_json j;
    ra_json_init_buffer(&j, &w, false);
    ra_json_begin_array(&j);
    for (int32_t a = 0; a < m->animation_count; a++) {
        const hw_animation *an = &m->animations[a];
        ra_json_begin_object(&j);
        ra_json_key(&j, "name"),
            ra_json_string_n(&j, an->name, an->name_length < HW_MAD_MAX_NAME ? an->name_length : HW_MAD_MAX_NAME);
        ra_json_key(&j, "startTime"), ra_json_number(&j, an->start);
        ra_json_key(&j, "endTime"), ra_json_number(&j, an->end);
        ra_json_key(&j, "flags"), ra_json_uint(&j, an->flags);
        ra_json_end_object(&j);
    }
    ra_json_end_array(&j);
    const char *s = w.failed ? NULL : ra_arena_strndup(ar, (const char *)w.data, w.size);
    ra_writer_free(&w);
    return s;
}

/* a header float: a number, or its text when it is not finite (metadata holds no NaN) */
static bool set_number(ra_arena *ar, ra_meta_list *md, const char *key, float v)
{
    if (isfinite(v)) return ra_meta_set_double(ar, md, key, v);
    const char *t = ra_arena_printf(ar, "%g", v);
    return t && ra_meta_set_string(ar, md, key, t);
}

/* ---- to_scene ------------------------------------------------------------------------------------------------ */
static bool has_key_at(const hw_object *o, float t)
{
    for (int32_t k = 1; k + 1 < o->key_count; k++)
        if (o->times[k] == t) return true;
    return false;
}

/* Warnings about what the file does that the game would not do well: one
 * line per kind, with how many objects and the first one's name. */
enum {
    W_BITS,
    W_FEW_KEYS,
    W_STEP,
    W_RATIO,
    W_WINDOW,
    W_KINDS
};

static void warn_file(ra_scene *s, const hw_mad *m, const char *const *names, size_t size)
{
    static const char *const what[W_KINDS] = {
        "have animation bits beyond the file's animations (ignored)",
        "have fewer than 4 keys with the phantom keys (held constant)",
        "have real keys at equal times (the curve steps there)",
        ("have a tangent time ratio whose denominator is <= 0 (a phantom key out of time order): 0.5 is used "
         "where the game would divide by it"),
        "take part in an animation without a key at its start or end (the game needs both): played on the spline",
    };
    size_t count[W_KINDS] = {0};
    const char *first[W_KINDS] = {0};
    if (m->version != HW_MAD_VERSION)
        ra_scene_warn(s, "version is %.9g, not 0.91 (retail builds of the game do not check it)", m->version);
    if (!(isfinite(m->fps) && m->fps > 0))
        ra_scene_warn(s, "framesPerSecond is %.9g; 30 is used as the native rate", m->fps);
    if (m->strings_from_tail)
        ra_scene_warn(s, "stringBlock (%u) lies outside the file: its last %d bytes are read, as the 32-bit game does",
                      m->string_block_offset, (int)m->string_block_length);
    else if ((uint64_t)m->string_block_offset + (uint64_t)m->string_block_length != size)
        ra_scene_warn(s, "the string block is not the last %d bytes of the file (the 32-bit game reads those instead)",
                      (int)m->string_block_length);
    for (int32_t j = 0; j < m->object_count; j++) {
        const hw_object *o = &m->objects[j];
        int64_t n = o->key_count;
        bool w[W_KINDS] = {0};
        w[W_BITS] = m->animation_count < 32 && (o->animation_bits >> m->animation_count);
        w[W_FEW_KEYS] = n < 4;
        for (int64_t k = 2; k + 1 < n; k++) w[W_STEP] |= o->times[k] == o->times[k - 1];
        for (int64_t i = 1; i + 2 < n; i++)
            w[W_RATIO] |= o->times[i + 1] > o->times[i] &&
                          (!(o->times[i + 1] > o->times[i - 1]) || !(o->times[i + 2] > o->times[i]));
        for (int32_t a = 0; a < m->animation_count; a++) {
            const hw_animation *an = &m->animations[a];
            w[W_WINDOW] |= takes_part(o, (size_t)a) && n >= 4 && (!has_key_at(o, an->start) || !has_key_at(o, an->end));
        }
        for (int k = 0; k < W_KINDS; k++)
            if (w[k] && !count[k]++) first[k] = names[j];
    }
    for (int k = 0; k < W_KINDS; k++)
        if (count[k]) ra_scene_warn(s, "%zu object(s) (the first: '%.200s') %s", count[k], first[k], what[k]);
}

/* What the steps of hw_to_scene share. */
typedef struct hw_build {
    ra_document *doc;
    const hw_mad *m;
    ra_scene *s;
    ra_arena *ar;
    hw_state *st;
    ra_scene_start start;
    const char **names; /* the objects' node names */
    size_t renamed, cut;
    bool meta_cut;
    double fps;
    size_t limit, left;       /* the sample budget */
    hw_geo *geo;              /* the ship's geometry, or NULL */
    const char **geo_name_of; /* node -> its .geo object's stored name (NULL: none) */
    int32_t *geo_node;        /* .geo object -> node */
    const char *geo_path, *geo_source;
    unsigned flags; /* HW_SPLINE_* seen while sampling */
} hw_build;

/* The playback frame: space and coords give the basis of the keys and the root's turn. */
static ra_status hw_frame(hw_build *b, ra_mat4 *root, ra_error *err)
{
    hw_state *st = b->st = b->doc->state = ra_arena_alloc(b->ar, sizeof *b->st);
    if (!st) return ra_fail_nomem(err, FMT);
    st->native = b->start.native;
    st->space = ra_options_is(&b->doc->options, "space", "lightwave") ? SPACE_LIGHTWAVE : SPACE_SHIP;
    st->sample_rate = ra_options_get_double(&b->doc->options, "sample_rate", 60.0);
    st->max_key_angle = fmin(RA_PI / 2, b->start.max_key_angle);
    /* P: LightWave -> ship (docs/formats/homeworld.md §3); F mirrors Z */
    const ra_mat4 P = {{{0, 1, 0, 0}, {0, 0, 1, 0}, {-1, 0, 0, 0}, {0, 0, 0, 1}}};
    const ra_mat4 F = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, 1}}};
    ra_mat4 pt = ra_m4_transpose(&P);
    st->basis = st->space == SPACE_SHIP ? ra_m4_identity() : st->native ? pt : ra_m4_mul(&F, &pt);
    *root = ra_m4_identity();
    if (st->space == SPACE_SHIP && !st->native) /* ship (up +X, right +Y, forward +Z) -> Y up: Rz(+90) */
        *root = (ra_mat4){{{0, -1, 0, 0}, {1, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
    return RA_OK;
}

/* Unique node names: the stored ones, object<j> for empty ones. */
static ra_status hw_names(hw_build *b, ra_error *err)
{
    size_t no = (size_t)b->m->object_count;
    const char **names = b->names = ra_arena_array(b->ar, no, sizeof *names);
    if (!names) return ra_fail_nomem(err, FMT);
    for (size_t j = 0; j < no; j++) {
        const hw_object *o = &b->m->objects[j];
        if (!o->name_length) {
            names[j] = ra_arena_printf(b->ar, "object%zu", j);
            b->renamed++;
        } else {
            names[j] = o->name; /* ra_names_make_unique cuts it at RA_NAME_MAX */
            b->cut += o->name_length > HW_MAD_MAX_NAME;
        }
        if (!names[j]) return ra_fail_nomem(err, FMT);
    }
    static const char *const reserved[1] = {"RootNode"};
    return ra_names_make_unique(b->ar, names, no, reserved, 1) ? RA_OK : ra_fail_nomem(err, FMT);
}

/* ---- the ship's geometry (.geo / .peo) ---------------------------------------------------------------------- */
/* Object i and its children (kid[i] the first, kid[ng + k] the one after
 * k, in file order; -1: none) as nodes under parent. */
static bool add_geo_subtree(hw_build *b, const hw_geo *g, uint32_t i, int32_t parent, const char *const *names,
                            const int32_t *kid)
{
    int32_t node = ra_scene_add_node(b->s, names[i], parent, &g->objects[i].local);
    if (node < 0) return false;
    b->geo_node[i] = node;
    for (int32_t k = kid[i]; k >= 0; k = kid[g->object_count + (size_t)k]) /* depth <= HW_GEO_MAX_DEPTH */
        if (!add_geo_subtree(b, g, (uint32_t)k, node, names, kid)) return false;
    return true;
}

/* The .geo objects as nodes (pre-order, children by oMother), each at its
 * localMatrix; the .mad paths whose name equals an object's bind to it. */
static ra_status hw_geo_nodes(hw_build *b, ra_error *err)
{
    const hw_geo *g = b->geo;
    ra_arena *ar = b->ar;
    size_t ng = g->object_count, no = (size_t)b->m->object_count;
    const char **names = ra_arena_array(ar, ng + no + 1, sizeof *names);
    b->geo_node = ra_arena_array(ar, ng + 1, sizeof *b->geo_node);
    if (!names || !b->geo_node) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < ng; i++) {
        names[i] = g->objects[i].name && *g->objects[i].name ? g->objects[i].name : ra_arena_printf(ar, "geo%zu", i);
        if (!names[i]) return ra_fail_nomem(err, FMT);
    }
    /* the .mad objects no .geo object is named after: flat under the root
     * (the first .geo object of a name, looked up: a scan of them per .mad
     * object cost their product) */
    size_t nu = 0, unbound = 0;
    int32_t *bind = ra_arena_array(ar, no + 1, sizeof *bind);
    ra_strmap by_name;
    if (!bind || !ra_strmap_init(&by_name, ar, ng)) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < ng; i++) {
        uint32_t *v = g->objects[i].name ? ra_strmap_slot(&by_name, g->objects[i].name) : NULL;
        if (g->objects[i].name && !v) return ra_fail_nomem(err, FMT);
        if (v && !*v) *v = (uint32_t)i + 1;
    }
    for (size_t j = 0; j < no; j++) {
        const uint32_t *v = ra_strmap_get(&by_name, b->m->objects[j].name);
        bind[j] = v ? (int32_t)*v - 1 : -1;
        if (bind[j] < 0) names[ng + nu++] = b->names[j];
    }
    static const char *const reserved[1] = {"RootNode"};
    if (!ra_names_make_unique(ar, names, ng + nu, reserved, 1)) return ra_fail_nomem(err, FMT);
    /* each object's children, listed once (a scan of all objects per object cost their square) */
    int32_t *kid = ra_malloc((2 * ng + 1) * sizeof *kid);
    if (!kid) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < ng; i++) kid[i] = -1;
    for (size_t k = ng; k-- > 0;) {
        int32_t m = g->objects[k].mother;
        kid[ng + k] = m >= 0 && (size_t)m < ng ? kid[m] : -1;
        if (m >= 0 && (size_t)m < ng) kid[m] = (int32_t)k;
    }
    bool added = true;
    for (size_t i = 0; i < ng && added; i++)
        if (g->objects[i].mother < 0) added = add_geo_subtree(b, g, (uint32_t)i, 0, names, kid);
    ra_free(kid);
    if (!added) return ra_fail_nomem(err, FMT);
    b->geo_name_of = ra_arena_array(ar, b->s->node_count + no + 1, sizeof *b->geo_name_of);
    if (!b->geo_name_of) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < ng; i++) {
        b->geo_name_of[b->geo_node[i]] = g->objects[i].name;
        ra_meta_list *md = &b->s->nodes[b->geo_node[i]].meta;
        if (!ra_meta_set_int(ar, md, "homeworld.geo_object", (int64_t)i) ||
            !ra_meta_set_int(ar, md, "homeworld.geo_flags", g->objects[i].flags))
            return ra_fail_nomem(err, FMT);
    }
    for (size_t j = 0, u = 0; j < no; j++) {
        if (bind[j] >= 0) {
            b->st->obj_node[j] = b->geo_node[bind[j]];
            b->names[j] = b->s->nodes[b->geo_node[bind[j]]].name;
        } else {
            b->names[j] = names[ng + u++];
            unbound++;
        }
    }
    if (unbound)
        ra_scene_warn(b->s, "%zu .mad path(s) name no object of the .geo: they stand flat under the root", unbound);
    return RA_OK;
}

static float unit8(uint32_t rgb, int shift) { return (float)((rgb >> shift) & 0xFFu) / 255.0f; }

/* The objects the game draws: meshRender walks from object 0 along
 * oSister, and below each object along oDaughter and then that daughter's
 * oSister; it never reads oMother.  LWExport gives parent-less objects no
 * sisters, so a second parent-less object is not reached.  *disagree counts
 * the drawn objects whose oMother is not the object those links draw them
 * under (the nodes follow oMother).  NULL: out of memory. */
static bool *drawn_objects(ra_arena *ar, const hw_geo *g, size_t *disagree)
{
    uint32_t n = g->object_count;
    bool *drawn = ra_arena_array(ar, n + 1, sizeof *drawn);
    int32_t *todo = ra_arena_array(ar, n + 1, sizeof *todo), *under = ra_arena_array(ar, n + 1, sizeof *under);
    *disagree = 0;
    if (!drawn || !todo || !under) return NULL;
    size_t top = 0;
    if (n) todo[top++] = 0, drawn[0] = true, under[0] = -1;
    while (top) { /* each object is pushed once (drawn marks it), so the stack holds at most n */
        int32_t i = todo[--top];
        const hw_geo_object *o = &g->objects[i];
        *disagree += o->mother != under[i];
        const int32_t next[2] = {o->daughter, o->sister}, parent[2] = {i, under[i]};
        for (int k = 0; k < 2; k++)
            if (next[k] >= 0 && !drawn[next[k]])
                drawn[next[k]] = true, under[next[k]] = parent[k], todo[top++] = next[k];
    }
    return drawn;
}

/* Materials (diffuse colour, two-sided; the .lif texture only named) and one
 * mesh per object and material, three vertices per triangle (UVs are per corner). */
static ra_status hw_geo_meshes(hw_build *b, ra_error *err)
{
    const hw_geo *g = b->geo;
    ra_arena *ar = b->ar;
    ra_scene *s = b->s;
    size_t nm = g->material_count;
    s->materials = ra_arena_array(ar, nm ? nm : 1, sizeof *s->materials);
    const char **mnames = ra_arena_array(ar, nm + 1, sizeof *mnames);
    if (!s->materials || !mnames) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < nm; i++) {
        const hw_geo_material *gm = &g->materials[i];
        mnames[i] = gm->name && *gm->name ? gm->name : ra_arena_printf(ar, "material%zu", i);
        if (!mnames[i]) return ra_fail_nomem(err, FMT);
    }
    if (!ra_names_make_unique(ar, mnames, nm, NULL, 0)) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < nm; i++) {
        const hw_geo_material *gm = &g->materials[i];
        ra_material *m = &s->materials[i];
        m->name = mnames[i];
        m->base_color[0] = unit8(gm->diffuse, 0), m->base_color[1] = unit8(gm->diffuse, 8);
        m->base_color[2] = unit8(gm->diffuse, 16), m->base_color[3] = 1;
        m->texture = -1;
        m->double_sided = (gm->flags & HW_GEO_MDF_2SIDED) != 0;
        if (!ra_meta_set_int(ar, &m->meta, "homeworld.flags", gm->flags) ||
            (gm->texture && !ra_meta_set_string(ar, &m->meta, "homeworld.texture", gm->texture)))
            return ra_fail_nomem(err, FMT);
    }
    s->material_count = nm;
    /* count the meshes: (object, material) pairs with triangles, of the objects the game draws */
    size_t disagree = 0;
    bool *drawn = drawn_objects(ar, g, &disagree);
    if (!drawn) return ra_fail_nomem(err, FMT);
    if (disagree)
        ra_scene_warn(s,
                      "%zu object(s) of the .geo have an oMother other than the object their daughter and sister "
                      "links draw them under: the nodes follow oMother",
                      disagree);
    size_t nmesh = 0, hidden = 0;
    for (uint32_t i = 0; i < g->object_count; i++) {
        if (drawn[i]) continue;
        hidden++;
        if (!ra_meta_set_int(ar, &s->nodes[b->geo_node[i]].meta, "homeworld.geo_drawn", 0))
            return ra_fail_nomem(err, FMT);
    }
    if (hidden)
        ra_scene_warn(s,
                      "%zu object(s) of the .geo are not drawn by the game (not reached from object 0 by the "
                      "sister and daughter links): they keep their nodes, without meshes",
                      hidden);
    uint32_t *tri = ra_arena_array(ar, nm ? nm : 1, sizeof *tri);
    if (!tri) return ra_fail_nomem(err, FMT);
    for (size_t pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < g->object_count; i++) {
            const hw_geo_object *o = &g->objects[i];
            if (!drawn[i]) continue;
            memset(tri, 0, (nm ? nm : 1) * sizeof *tri);
            for (int32_t k = 0; k < o->polygon_count; k++) tri[o->polygons[k].material]++;
            for (size_t mi = 0; mi < nm; mi++) {
                if (!tri[mi]) continue;
                if (!pass) {
                    nmesh++;
                    continue;
                }
                ra_mesh *me = &s->meshes[s->mesh_count];
                size_t nv = 3 * (size_t)tri[mi];
                if (nv > UINT32_MAX)
                    return ra_fail(err, RA_ERR_LIMIT, "homeworld_geo", o->offset, "nPolygons", "too many");
                float *pos = ra_arena_array(ar, 3 * nv, sizeof *pos), *nrm = ra_arena_array(ar, 3 * nv, sizeof *nrm);
                float *uv = ra_arena_array(ar, 2 * nv, sizeof *uv);
                uint32_t *idx = ra_arena_array(ar, nv, sizeof *idx);
                const char *nm_ = ra_arena_printf(ar, "%s.%s", s->nodes[b->geo_node[i]].name, mnames[mi]);
                if (!pos || !nrm || !uv || !idx || !nm_) return ra_fail_nomem(err, FMT);
                size_t c = 0;
                /* the game shades a material without MDF_Smoothing flat, each
                 * polygon with its face normal (meshCurrentMaterial's
                 * GL_FLAT); LWExport gives such a surface's vertices normal 0 */
                bool smooth = (g->materials[mi].flags & HW_GEO_MDF_SMOOTHING) != 0;
                for (int32_t k = 0; k < o->polygon_count; k++) {
                    const hw_geo_polygon *q = &o->polygons[k];
                    if (q->material != mi) continue;
                    for (int v = 0; v < 3; v++, c++) {
                        const hw_geo_vertex *gv = &o->vertices[q->v[v]];
                        int32_t ni = smooth && gv->normal >= 0 ? gv->normal : q->face_normal;
                        const float *n = o->normals[ni].n;
                        double len = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
                        for (int a = 0; a < 3; a++) {
                            pos[3 * c + (size_t)a] = gv->p[a];
                            nrm[3 * c + (size_t)a] = len > 0 ? (float)(n[a] / len) : (a == 2 ? 1.0f : 0.0f);
                        }
                        uv[2 * c] = q->st[v][0], uv[2 * c + 1] = q->st[v][1]; /* v = t (see the format page) */
                        idx[c] = (uint32_t)c;
                    }
                }
                memset(me, 0, sizeof *me);
                me->name = nm_;
                me->node = (uint32_t)b->geo_node[i];
                me->material = (int32_t)mi;
                me->vertex_count = (uint32_t)nv;
                me->positions = pos, me->normals = nrm, me->uvs = uv, me->indices = idx;
                me->triangle_count = tri[mi];
                me->skin = -1;
                s->mesh_count++;
            }
        }
        if (!pass) {
            s->meshes = ra_arena_array(ar, nmesh ? nmesh : 1, sizeof *s->meshes);
            if (!s->meshes) return ra_fail_nomem(err, FMT);
        }
    }
    return RA_OK;
}

/* The ship geometry of a .mad: its stem with .geo or .peo (any case), the
 * shallowest, then the first path ignoring case (LOD0 before LOD1), a .geo
 * before a .peo at the same place (the rule of the .big's pairing, hw_big.c),
 * names equal but for case in byte order. */
typedef struct geo_search {
    const char *stem;
    size_t stem_len;
    char best[4096];
    int best_depth;
    size_t dirs_left; /* folders that may still be opened */
} geo_search;

static bool geo_better(const geo_search *g, const char *path, int depth)
{
    if (!g->best[0] || depth != g->best_depth) return !g->best[0] || depth < g->best_depth;
    size_t n = strlen(path), bn = strlen(g->best);
    int c = strncasecmp(path, g->best, (n < bn ? n : bn) - 4);
    if (c == 0 && n != bn) c = n < bn ? -1 : 1;
    if (c) return c < 0;
    bool geo = !strcasecmp(path + n - 4, ".geo"), best_geo = !strcasecmp(g->best + bn - 4, ".geo");
    /* equal but for case (a case-sensitive file system): byte order, not the folder's listing order */
    return geo != best_geo ? geo : strcmp(path, g->best) < 0;
}

static void geo_walk(geo_search *g, const char *dir, int depth);

/* dir/name at depth, told by name to be a candidate geometry (file) or a
 * folder to enter (folder): kept if it is better, entered if it is one */
static void geo_entry(geo_search *g, const char *dir, const char *name, int depth, bool file, bool folder)
{
    char path[4096];
    int k = snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    if (k <= 0 || (size_t)k >= sizeof path || stat(path, &sb) != 0) return;
    if (S_ISREG(sb.st_mode) && file) {
        if (geo_better(g, path, depth)) {
            memcpy(g->best, path, (size_t)k + 1);
            g->best_depth = depth;
        }
    } else if (S_ISDIR(sb.st_mode) && folder) {
        geo_walk(g, path, depth + 1); /* bounded: depth 3, dirs_left folders */
    }
}

/* dir (a path of at most 4095 bytes) at depth: the .mad's folder is 0, where
 * only the folder named like the stem is entered (the game's ship folder,
 * R1/Probe/ beside R1/Probe.MAD); below it every folder, down to depth 3.
 * The best file does not depend on the order it is met in (geo_better). */
static void geo_walk(geo_search *g, const char *dir, int depth)
{
    if (!g->dirs_left) return;
    g->dirs_left--;
    const ra_folder *d = ra_folder_open(dir);
    if (!d) return;
    if (depth == 0) {
        /* the .mad's folder: STEM.geo, STEM.peo and the folder STEM (any
         * case), looked up in the listing's index (a batch over a folder of
         * many ships read every name per ship) */
        char key[4096 + 8];
        if (g->stem_len + 5 <= sizeof key) {
            memcpy(key, g->stem, g->stem_len);
            static const char *const ext[2] = {".geo", ".peo"};
            for (int e = 0; e < 2; e++) {
                memcpy(key + g->stem_len, ext[e], 4);
                for (size_t i = ra_folder_find(d, key, g->stem_len + 4); i != SIZE_MAX; i = ra_folder_find_next(d, i))
                    geo_entry(g, dir, d->names[i], depth, true, false);
            }
            for (size_t i = ra_folder_find(d, key, g->stem_len); i != SIZE_MAX; i = ra_folder_find_next(d, i))
                geo_entry(g, dir, d->names[i], depth, false, true);
        }
        ra_folder_close(d);
        return;
    }
    for (size_t i = 0; i < d->count; i++) {
        const char *name = d->names[i];
        size_t n = strlen(name);
        if (name[0] == '.') continue;
        bool file = n == g->stem_len + 4 && !strncasecmp(name, g->stem, g->stem_len) &&
                    (!strcasecmp(name + n - 4, ".geo") || !strcasecmp(name + n - 4, ".peo"));
        if (file || depth < 3) geo_entry(g, dir, name, depth, file, depth < 3); /* told by name before any stat() */
    }
    ra_folder_close(d);
}

/* The .geo / .peo: --option geo=PATH (none: without), else one with the
 * .mad's stem (any case): beside it (1 returned); else in the game's layout
 * of an extracted data folder, below the folder named like the stem
 * (R1/Probe.MAD and R1/Probe/rl0/LOD0/Probe.geo; 2 returned), at most 3
 * folders down and 256 folders read below the .mad's.  0: none. */
static int find_geo(const char *mad, char *out, size_t out_size)
{
    char dir[4096];
    const char *base;
    size_t stem;
    if (!ra_path_parts(mad, dir, sizeof dir, &base, &stem)) return 0;
    geo_search g = {base, stem, {0}, 0, 1 + 256};
    geo_walk(&g, dir, 0);
    size_t n = strlen(g.best);
    if (!n || n >= out_size) return 0;
    memcpy(out, g.best, n + 1);
    return g.best_depth == 0 ? 1 : 2;
}

/* The .geo bytes (a file's, or the archive's entry) read into b->geo. */
static ra_status use_geo(hw_build *b, const uint8_t *data, size_t size, const char *path, ra_error *err)
{
    hw_geo *g = ra_arena_alloc(b->ar, sizeof *g);
    ra_status rs = g ? hw_geo_read(data, size, b->ar, g, err) : ra_fail_nomem(err, "homeworld_geo");
    if (rs != RA_OK) return rs;
    b->geo = g;
    b->geo_path = ra_arena_strndup(b->ar, path, strlen(path));
    return b->geo_path ? RA_OK : ra_fail_nomem(err, FMT);
}

static ra_status load_geo(hw_build *b, const char *path, ra_error *err)
{
    ra_file_bytes f;
    ra_status rs = ra_file_bytes_get(path, ra_max_file_size(&b->doc->options), &f, err);
    if (rs != RA_OK) return rs;
    rs = use_geo(b, f.data, f.size, path, err);
    ra_file_bytes_free(&f);
    return rs;
}

/* The geometry: --option geo (none: without; a path the archive holds, or a
 * file), else the archive's entry for this .mad, else a sibling file.  Given
 * by the option it must read; found, a broken one is a warning. */
static ra_status hw_find_geo(hw_build *b, ra_error *err)
{
    const char *opt = ra_options_get(&b->doc->options, "geo");
    const ra_document *d = b->doc;
    b->geo_source = "none";
    if (opt && !strcmp(opt, "none")) return RA_OK;
    if (b->st->space != SPACE_SHIP) {
        if ((opt && *opt) || d->companion)
            ra_scene_warn(b->s, "the .geo is used in ship space only (space=lightwave): not read");
        return RA_OK;
    }
    ra_error e;
    ra_error_clear(&e);
    bool given = opt && *opt;
    const char *what = d->in_archive && d->companion ? d->companion_name : opt;
    char path[4096];
    ra_status rs;
    if (d->in_archive && d->companion) {
        rs = use_geo(b, d->companion, d->companion_size, what, &e);
        b->geo_source = given ? "option" : "archive";
    } else if (given) {
        rs = load_geo(b, opt, &e);
        b->geo_source = "option";
    } else {
        int where = d->in_archive ? 0 : find_geo(d->filename, path, sizeof path);
        if (!where) return RA_OK;
        what = path;
        rs = load_geo(b, path, &e);
        b->geo_source = where == 1 ? "sibling" : "ship_folder";
    }
    if (rs == RA_OK) return RA_OK;
    if (given) return ra_fail_wrap(err, &e, "homeworld_geo", e.offset, "geo", "geometry %s", what);
    if (rs == RA_ERR_NO_MEMORY) return ra_fail(err, rs, FMT, RA_NO_OFFSET, "geo", "out of memory reading %s", what);
    char buf[400];
    ra_error_format(&e, buf, sizeof buf);
    ra_scene_warn(b->s, "the geometry %s could not be read (%s); loading without it", what, buf);
    b->geo_source = "unreadable";
    b->geo = NULL;
    return RA_OK;
}

static ra_status hw_object_nodes(hw_build *b, const tcb_jobs *tj, ra_error *err);

/* RootNode and one node per object, resting at its first real key, with its fields. */
static ra_status hw_nodes(hw_build *b, const ra_mat4 *root, ra_error *err)
{
    ra_arena *ar = b->ar;
    if (ra_scene_add_node(b->s, "RootNode", -1, root) < 0) return ra_fail_nomem(err, FMT);
    size_t no = (size_t)b->m->object_count;
    hw_state *st = b->st;
    st->obj_node = ra_arena_array(ar, no ? no : 1, sizeof *st->obj_node);
    if (!st->obj_node) return ra_fail_nomem(err, FMT);
    for (size_t j = 0; j < no; j++) st->obj_node[j] = -1;
    ra_status rs = b->geo ? hw_geo_nodes(b, err) : RA_OK;
    if (rs != RA_OK) return rs;
    /* every object's TCB text; then, in object order, those that fit what
     * the budget has left are kept */
    tcb_jobs tj = {b->m->objects, NULL, NULL, 0};
    double work = 0;
    for (size_t j = 0; j < no; j++) work += 3.0 * (b->m->objects[j].key_count > 0 ? b->m->objects[j].key_count : 0);
    unsigned threads = ra_document_threads(b->doc, work);
    if (threads > 1 && no > 1) {
        tj.text = ra_calloc(no, sizeof *tj.text);
        tj.len = ra_calloc(no, sizeof *tj.len);
        rs =
            tj.text && tj.len ? ra_parallel_for(b->doc, threads, no, tcb_job, &tj, NULL, err) : ra_fail_nomem(err, FMT);
    }
    if (rs == RA_OK) rs = hw_object_nodes(b, &tj, err);
    tcb_free(&tj, no);
    return rs;
}

/* hw_nodes' node per object, with its fields and its TCB text (tj) */
static ra_status hw_object_nodes(hw_build *b, const tcb_jobs *tj, ra_error *err)
{
    ra_arena *ar = b->ar;
    size_t no = (size_t)b->m->object_count;
    hw_state *st = b->st;
    size_t meta_left = HW_MAX_META;
    for (size_t j = 0; j < no; j++) {
        const hw_object *o = &b->m->objects[j];
        int32_t node = st->obj_node[j];
        if (node < 0) { /* no .geo object: flat under the root, resting at its first real key */
            double v[HW_CHANNELS];
            /* at rest: the first real key's values (key 1: the left value at its time) */
            values_at(o, o->key_count >= 4 ? o->times[1] : 0, true, v, NULL);
            ra_mat4 rest = local_matrix(b->st, v);
            node = st->obj_node[j] = ra_scene_add_node(b->s, b->names[j], 0, &rest);
        }
        if (node < 0) return ra_fail_nomem(err, FMT);
        ra_meta_list *md = &b->s->nodes[node].meta;
        char *text = tj->text ? tj->text[j] : NULL;
        size_t len = tj->text ? tj->len[j] : 0;
        bool now = !text; /* made in turn */
        if (now && !tcb_text(o, meta_left, &text, &len)) return ra_fail_nomem(err, FMT);
        const char *tcb = len <= meta_left ? ra_arena_strndup(ar, text, len) : NULL;
        if (now) ra_free(text);
        if (len <= meta_left && !tcb) return ra_fail_nomem(err, FMT);
        if (tcb) meta_left -= len;
        b->meta_cut |= !tcb;
        /* the stored name where the node's differs (a cut name: its length) */
        bool same = !strcmp(b->names[j], o->name), long_name = o->name_length > HW_MAD_MAX_NAME;
        b->renamed += o->name_length && !long_name && !same; /* repeated (empty ones are counted above) */
        bool ok = ra_meta_set_int(ar, md, "homeworld.object", (int64_t)j) &&
                  (same || long_name || ra_meta_set_string(ar, md, "homeworld.name", o->name)) &&
                  (!long_name || ra_meta_set_int(ar, md, "homeworld.name_length", o->name_length)) &&
                  ra_meta_set_int(ar, md, "homeworld.animationBits", o->animation_bits) &&
                  ra_meta_set_int(ar, md, "homeworld.nameCRC", o->name_crc) &&
                  ra_meta_set_int(ar, md, "homeworld.nKeyframes", o->key_count) &&
                  (!tcb || ra_meta_set_string(ar, md, "homeworld.tcb", tcb));
        if (!ok) return ra_fail_nomem(err, FMT);
    }
    st->node_obj = ra_arena_array(ar, b->s->node_count, sizeof *st->node_obj);
    if (!st->node_obj) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < b->s->node_count; i++) st->node_obj[i] = -1;
    for (size_t j = 0; j < no; j++) st->node_obj[st->obj_node[j]] = (int32_t)j;
    if (b->geo) { /* every .geo object bound by name takes the path (several may share a name): the first of it */
        ra_strmap by_name;
        if (!ra_strmap_init(&by_name, ar, no)) return ra_fail_nomem(err, FMT);
        for (size_t j = 0; j < no; j++) {
            uint32_t *v = ra_strmap_slot(&by_name, b->m->objects[j].name);
            if (!v) return ra_fail_nomem(err, FMT);
            if (!*v) *v = (uint32_t)j + 1;
        }
        for (size_t i = 1; i < b->s->node_count; i++) {
            const char *gn = b->geo_name_of ? b->geo_name_of[i] : NULL;
            const uint32_t *v = gn && st->node_obj[i] < 0 ? ra_strmap_get(&by_name, gn) : NULL;
            if (v) st->node_obj[i] = (int32_t)*v - 1;
        }
        return hw_geo_meshes(b, err);
    }
    return RA_OK;
}

/* The objects of one animation as jobs of ra_parallel_for: job k bakes
 * object obj[k] into channel chan[k]; each worker ORs its spline flags. */
typedef struct object_jobs {
    const hw_build *b;
    const hw_animation *an;
    const size_t *obj;
    ra_channel *const *chan;
    unsigned *flags; /* per worker */
} object_jobs;

static ra_status object_job(void *ctx, size_t k, ra_worker *w, ra_error *err)
{
    const object_jobs *oj = ctx;
    const hw_build *b = oj->b;
    return bake_object(w->arena, b->st, &b->m->objects[oj->obj[k]], oj->an, oj->chan[k], &w->samples_left, b->limit,
                       &oj->flags[w->index], err);
}

/* Animation a: a channel per object taking part, sampled from the game's
 * spline; with nobody taking part, one constant channel at rest. */
static ra_status hw_bake_animation(hw_build *b, size_t a, ra_error *err)
{
    const hw_mad *m = b->m;
    const hw_animation *an = &m->animations[a];
    ra_animation *A = &b->s->animations[a];
    size_t no = (size_t)m->object_count;
    A->name = an->name_length > HW_MAD_MAX_NAME ? ra_arena_strndup(b->ar, an->name, HW_MAD_MAX_NAME) : an->name;
    if (!A->name) return ra_fail_nomem(err, FMT);
    b->cut += an->name_length > HW_MAD_MAX_NAME;
    A->ticks_per_second = b->fps;
    A->duration = (double)an->end - an->start;
    size_t nc = 0;
    for (size_t j = 0; j < no; j++) nc += takes_part(&m->objects[j], a);
    /* .geo objects sharing a bound name: each gets the channel (the same keys) */
    const int32_t *node_obj = b->st->node_obj;
    for (size_t i = 1; node_obj && i < b->s->node_count; i++)
        if (node_obj[i] >= 0 && b->st->obj_node[node_obj[i]] != (int32_t)i)
            nc += takes_part(&m->objects[node_obj[i]], a);
    A->channels = ra_arena_array(b->ar, nc ? nc : 1, sizeof *A->channels);
    if (!A->channels) return ra_fail_nomem(err, FMT);
    ra_behaviour beh = an->flags & HW_MAD_FLAG_LOOP ? RA_BEHAVIOUR_REPEAT : RA_BEHAVIOUR_DEFAULT;
    /* the channels in order (an object's twins after it), baked as jobs, then the twins copied */
    size_t *obj = ra_malloc((nc ? nc : 1) * sizeof *obj);
    ra_channel **chan = ra_malloc((nc ? nc : 1) * sizeof *chan);
    /* each object's twins in node order: twin[j] the first node, twin[no + i] the one after node i (-1: none) */
    size_t nn = b->s->node_count;
    int64_t *twin = ra_malloc((no + nn + 1) * sizeof *twin);
    size_t njobs = 0;
    double work = 0;
    if (!obj || !chan || !twin) {
        ra_free(obj);
        ra_free(chan);
        ra_free(twin);
        return ra_fail_nomem(err, FMT);
    }
    for (size_t j = 0; j < no; j++) twin[j] = -1;
    for (size_t i = nn; i-- > 1;) {
        twin[no + i] = -1;
        if (!node_obj || node_obj[i] < 0 || b->st->obj_node[node_obj[i]] == (int32_t)i) continue;
        twin[no + i] = twin[node_obj[i]];
        twin[node_obj[i]] = (int64_t)i;
    }
    for (size_t j = 0; j < no; j++) {
        if (!takes_part(&m->objects[j], a)) continue;
        ra_channel *ch = &A->channels[A->channel_count++];
        ch->node = (uint32_t)b->st->obj_node[j];
        ch->pre_state = ch->post_state = beh;
        obj[njobs] = j;
        chan[njobs++] = ch;
        work += ((double)an->end - an->start) * b->st->sample_rate + m->objects[j].key_count;
        for (int64_t i = twin[j]; i >= 0; i = twin[no + (size_t)i])
            A->channels[A->channel_count++].node = (uint32_t)i; /* a twin: keys below */
    }
    ra_free(twin);
    unsigned threads = ra_document_threads(b->doc, work);
    unsigned *flags = ra_calloc(threads, sizeof *flags);
    object_jobs oj = {b, an, obj, chan, flags};
    ra_status rs =
        flags ? ra_parallel_for(b->doc, threads, njobs, object_job, &oj, &b->left, err) : ra_fail_nomem(err, FMT);
    for (unsigned t = 0; flags && t < threads; t++) b->flags |= flags[t];
    ra_free(flags);
    ra_free(obj);
    ra_free(chan);
    /* the budget's own message (the workers' samples summed past it) */
    if (rs == RA_ERR_LIMIT && !strcmp(err->field, "max_samples")) rs = limit_error(err, b->limit);
    if (rs != RA_OK) return rs;
    /* a twin (no keys of its own) follows its object's channel */
    for (size_t c = 1; c < A->channel_count; c++)
        if (!A->channels[c].position && A->channels[c - 1].position) {
            uint32_t node = A->channels[c].node;
            A->channels[c] = A->channels[c - 1];
            A->channels[c].node = node;
        }
    if (nc) return RA_OK;
    /* Nobody takes part: everything rests.  A constant channel keeps the
     * record (Assimp wants one): the first object's, at rest (the root's
     * when there is no object). */
    ra_channel *ch = &A->channels[A->channel_count++];
    if (!ra_channel_hold_rest(b->ar, b->s, no ? (uint32_t)b->st->obj_node[0] : 0, ch)) return ra_fail_nomem(err, FMT);
    ch->pre_state = ch->post_state = beh;
    ra_scene_warn(b->s, "no object takes part in animation '%.200s'", an->name);
    return RA_OK;
}

/* The header's fields, the frame, the animation records; the warnings. */
static ra_status hw_metadata(hw_build *b, ra_error *err)
{
    const hw_mad *m = b->m;
    hw_state *st = b->st;
    ra_arena *ar = b->ar;
    ra_scene *s = b->s;
    const char *frame = st->space == SPACE_SHIP
                            ? (st->native ? "Homeworld ship space (up +X, right +Y, forward +Z), as the game uses it"
                                          : "Homeworld ship space under a root turning it Y up (forward +Z, right -X)")
                            : (st->native ? "LightWave as stored (left-handed, Y up)"
                                          : "LightWave with Z mirrored (right-handed, Y up)");
    ra_status rs = ra_scene_standard_meta(b->doc, b->fps, frame, err);
    if (rs != RA_OK) return rs;
    const char *anims = animations_json(ar, m);
    bool ok = anims && set_number(ar, &s->meta, "homeworld.version", m->version) &&
              set_number(ar, &s->meta, "homeworld.framesPerSecond", m->fps) &&
              set_number(ar, &s->meta, "homeworld.length", m->length) &&
              ra_meta_set_double(ar, &s->meta, "homeworld.sample_rate", st->sample_rate) &&
              ra_meta_set_string(ar, &s->meta, "homeworld.space", st->space == SPACE_SHIP ? "ship" : "lightwave") &&
              ra_meta_set_string(ar, &s->meta, "homeworld.rest", "each object's first real key") &&
              ra_meta_set_string(ar, &s->meta, "homeworld.animations", anims);
    if (!ok) return ra_fail_nomem(err, FMT);
    warn_file(s, m, b->names, b->doc->source_size);
    if (b->renamed)
        ra_scene_warn(s, "%zu object name(s) were empty or repeated: renamed (object<j>, #2, ...)", b->renamed);
    if (b->cut) ra_scene_warn(s, "%zu name(s) longer than %u bytes were cut", b->cut, HW_MAD_MAX_NAME);
    if (b->meta_cut)
        ra_scene_warn(s, "the TCB lists exceed %zu MiB of metadata; some objects have none", HW_MAX_META >> 20);
    if (b->flags & HW_SPLINE_NOT_FINITE)
        ra_scene_warn(s, "a curve left the float range; 0 was used there (as the game's 64-bit port does with NaN)");
    if (!m->canonical)
        ra_scene_warn(s, "the file is not in the exporter's contiguous layout; it was read by its offsets");
    return RA_OK;
}

static ra_status hw_to_scene(ra_document *doc, ra_error *err)
{
    hw_build b;
    memset(&b, 0, sizeof b);
    b.doc = doc;
    b.m = doc->model;
    b.s = &doc->scene;
    b.ar = doc->arena;
    ra_scene_start_init(doc, 150.0, &b.start);
    /* Homeworld's own sample budget: its spline is sampled at a fixed rate */
    b.limit = b.left =
        (size_t)ra_options_get_double(&doc->options, "max_samples", (double)((1u << 19) + doc->source_size / 2));
    b.fps = isfinite(b.m->fps) && b.m->fps > 0 ? b.m->fps : 30.0;
    ra_mat4 root;
    ra_status rs = hw_frame(&b, &root, err);
    if (rs == RA_OK) rs = hw_find_geo(&b, err);
    if (rs == RA_OK && (!ra_meta_set_string(b.ar, &b.s->meta, "homeworld.geo_source", b.geo_source) ||
                        (b.geo && !ra_meta_set_string(b.ar, &b.s->meta, "homeworld.geo", b.geo_path))))
        rs = ra_fail_nomem(err, FMT);
    if (rs == RA_OK) rs = hw_names(&b, err);
    if (rs == RA_OK) rs = hw_nodes(&b, &root, err);
    if (rs != RA_OK) return rs;
    size_t na = (size_t)b.m->animation_count;
    b.s->animations = ra_arena_array(b.ar, na, sizeof *b.s->animations);
    if (!b.s->animations) return ra_fail_nomem(err, FMT);
    for (size_t a = 0; rs == RA_OK && a < na; a++) rs = hw_bake_animation(&b, a, err);
    if (rs != RA_OK) return rs;
    b.s->animation_count = na;
    return hw_metadata(&b, err);
}

/* ---- read / write / dump ---------------------------------------------------------------------------------- */
static ra_status hw_read(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    hw_mad *m = ra_arena_alloc(doc->arena, sizeof *m);
    if (!m) return ra_fail_nomem(err, FMT);
    doc->model = m;
    return hw_mad_read_run(data, size, doc->arena, m, err, ra_document_read_runner, doc);
}

static ra_status hw_write(const ra_document *doc, ra_writer *w, ra_error *err)
{
    return hw_mad_write(doc->model, w, err);
}

static void dump_floats(ra_json *j, const float *v, size_t n, size_t stride)
{
    ra_json_begin_array(j);
    for (size_t i = 0; i < n; i++) ra_json_number(j, v[i * stride]);
    ra_json_end_array(j);
}

/* a name, cut at HW_MAD_MAX_NAME bytes (records may share one long string) */
static void dump_name(ra_json *j, const char *name, uint32_t len)
{
    ra_json_string_n(j, name, len < HW_MAD_MAX_NAME ? len : HW_MAD_MAX_NAME);
    if (len > HW_MAD_MAX_NAME) ra_json_key(j, "name_length"), ra_json_uint(j, len);
}

static void hw_dump_source(const ra_document *doc, ra_json *j)
{
    const hw_mad *m = doc->model;
    static const char *const pname[HW_CHANNELS] = {"x", "y", "z", "h", "p", "b"};
    ra_json_begin_object(j);
    ra_json_key(j, "format"), ra_json_string(j, FMT);
    ra_json_key(j, "version"), ra_json_number(j, m->version);
    ra_json_key(j, "stringBlockLength"), ra_json_int(j, m->string_block_length);
    ra_json_key(j, "stringBlock"), ra_json_uint(j, m->string_block_offset);
    ra_json_key(j, "length"), ra_json_number(j, m->length);
    ra_json_key(j, "framesPerSecond"), ra_json_number(j, m->fps);
    ra_json_key(j, "nObjects"), ra_json_int(j, m->object_count);
    ra_json_key(j, "objPath"), ra_json_uint(j, m->objects_offset);
    ra_json_key(j, "nAnimations"), ra_json_int(j, m->animation_count);
    ra_json_key(j, "canonical_layout"), ra_json_bool(j, m->canonical);
    ra_json_key(j, "animations");
    ra_json_begin_array(j);
    for (int32_t a = 0; a < m->animation_count; a++) {
        const hw_animation *an = &m->animations[a];
        ra_json_begin_object(j);
        ra_json_key(j, "name"), ra_json_uint(j, an->name_offset);
        ra_json_key(j, "name_string"), dump_name(j, an->name, an->name_length);
        ra_json_key(j, "startTime"), ra_json_number(j, an->start);
        ra_json_key(j, "endTime"), ra_json_number(j, an->end);
        ra_json_key(j, "flags"), ra_json_uint(j, an->flags);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "objects");
    ra_json_begin_array(j);
    for (int32_t i = 0; i < m->object_count; i++) {
        const hw_object *o = &m->objects[i];
        size_t n = (size_t)o->key_count;
        ra_json_begin_object(j);
        ra_json_key(j, "name"), ra_json_uint(j, o->name_offset);
        ra_json_key(j, "name_string"), dump_name(j, o->name, o->name_length);
        ra_json_key(j, "nameCRC"), ra_json_uint(j, o->name_crc);
        ra_json_key(j, "pad");
        ra_json_begin_array(j);
        ra_json_uint(j, o->pad[0]), ra_json_uint(j, o->pad[1]);
        ra_json_end_array(j);
        ra_json_key(j, "animationBits"), ra_json_uint(j, o->animation_bits);
        ra_json_key(j, "nKeyframes"), ra_json_int(j, o->key_count);
        ra_json_key(j, "times_offset"), ra_json_uint(j, o->times_offset);
        ra_json_key(j, "parameters_offset"), ra_json_uint(j, o->tcb_offset);
        ra_json_key(j, "path_offsets");
        ra_json_begin_array(j);
        for (int c = 0; c < HW_CHANNELS; c++) ra_json_uint(j, o->path_offset[c]);
        ra_json_end_array(j);
        ra_json_key(j, "times"), dump_floats(j, o->times, n, 1);
        ra_json_key(j, "tension"), dump_floats(j, &o->tcb[0].tension, n, 3);
        ra_json_key(j, "continuity"), dump_floats(j, &o->tcb[0].continuity, n, 3);
        ra_json_key(j, "bias"), dump_floats(j, &o->tcb[0].bias, n, 3);
        for (int c = 0; c < HW_CHANNELS; c++) ra_json_key(j, pname[c]), dump_floats(j, o->path[c], n, 1);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_end_object(j);
}

static int hw_detect(const uint8_t *d, size_t n) { return n >= 8 && !memcmp(d, HW_MAD_IDENT, 8) ? 100 : 0; }

static const ra_option_decl hw_options[] = {
    {"sample_rate", RA_OPT_DOUBLE, 0, 100000, true, NULL, "60", "how often the TCB spline is sampled (Hz)"},
    {"geo", RA_OPT_PATH, 0, 0, false, NULL, "searched",
     "the ship's .geo/.peo geometry (default: the sibling of the same stem, else one in the ship's LOD folders "
     "(R1/Probe/rl0/LOD0/ for R1/Probe.mad), or in a .big the entry of that stem), or none"},
    {"space", RA_OPT_ENUM, 0, 0, false, "ship|lightwave", "ship",
     "ship: the game's ship frame; lightwave: the raw LightWave values"},
};

const ra_format ra_format_homeworld_mad = {
    FMT,
    "Homeworld mesh animation (.mad, \"Mellonn\" 0.91)",
    "mad",
    "the 8-byte identifier \"Mellonn\\0\" (Homeworld 2's IFF .mad is refused by name)",
    hw_detect,
    hw_read,
    hw_to_scene,
    hw_pose,
    hw_dump_source,
    hw_write,
    .options = hw_options,
    .option_count = sizeof hw_options / sizeof hw_options[0],
};
