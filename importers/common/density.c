/* Key density for consumers that interpolate quaternion components.
 *
 * Blender (and any consumer that lerps the four components of a rotation and
 * normalises) departs from slerp between two keys.  For keys a rotation angle
 * theta apart the largest departure is K * theta^3 radians of rotation
 * (K = 1/(144 sqrt 3) = 0.00401 for small theta, 0.00402 at 30 degrees;
 * 0.0042 is used).  A rotation error d at a node moves the world matrix of a
 * node below it by at most d * P * (1 + r), where r bounds the distance from
 * the node to anything below it and P the scale of its ancestors.  Summed over
 * the rotating nodes of the longest such chain (the scene's lever sum L), an
 * error of at most RA_DENSITY_TOL per world-matrix entry needs
 * theta <= cbrt(RA_DENSITY_TOL / (K * L)).  Keys are inserted on the slerp
 * path between keys further apart than that, which leaves slerp playback
 * exactly as it was. */
#include <math.h>
#include <string.h>

#include "retroanim/ra_document.h"

#define NLERP_K 0.0042
#define SIN_CACHE 16                    /* most pieces of one span cut by the sines' recurrence */
#define MIN_ANGLE (0.1 * RA_PI / 180.0) /* below this the keys would explode: the bound is then not met */

/* How far a channel's keys reach: the largest squared length of its
 * translations and the largest component of its scalings, NaN where it has
 * none (or only NaN keys).  The lever sum takes one square root of the
 * first (the root is correctly rounded, so monotonic: the root of the largest
 * is the largest root), and ra_fmax skips NaN as the key-by-key loop did. */
void ra_channel_reach(const ra_channel *ch, double reach[2])
{
    double m = NAN;
    for (size_t i = 0; i < ch->position_count; i++) m = ra_fmax(m, ra_v3_dot(ch->position[i].v, ch->position[i].v));
    reach[0] = m;
    m = NAN;
    for (size_t i = 0; i < ch->scaling_count; i++) {
        const ra_vec3 v = ch->scaling[i].v;
        m = ra_fmax(m, ra_fmax(fabs(v.x), ra_fmax(fabs(v.y), fabs(v.z))));
    }
    reach[1] = m;
}

/* reach: ra_channel_reach of every channel (the animations' channels one after
 * another, two values each), or NULL to work it out here */
static double lever_sum(const ra_scene *s, const double *reach)
{
    size_t n = s->node_count;
    if (!n) return 1;
    /* per node: largest translation, largest scale (>= 1), the subtree's
     * extent and scale below it, the ancestors' scale, the lever sum so far */
    double *tmax = ra_malloc(n * 6 * sizeof *tmax);
    char *rot = ra_malloc(n);
    if (!tmax || !rot) {
        ra_free(tmax);
        ra_free(rot);
        return -1;
    }
    double *smax = tmax + n, *ext = smax + n, *sub = ext + n, *above = sub + n, *acc = above + n;
    memset(rot, 0, n);
    for (size_t i = 0; i < n; i++) {
        const ra_mat4 *m = &s->nodes[i].transform;
        tmax[i] = ra_v3_len(ra_v3(m->m[0][3], m->m[1][3], m->m[2][3]));
        double c = 0; /* the longest column bounds how far the matrix stretches */
        for (int k = 0; k < 3; k++) c = ra_fmax(c, ra_v3_len(ra_v3(m->m[0][k], m->m[1][k], m->m[2][k])));
        smax[i] = ra_fmax(1.0, c);
        ext[i] = 0;
        sub[i] = 1;
    }
    size_t ci = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++, ci++) {
            const ra_channel *ch = &s->animations[a].channels[c];
            double own[2];
            if (!reach) ra_channel_reach(ch, own);
            const double *r = reach ? reach + 2 * ci : own;
            tmax[ch->node] = ra_fmax(tmax[ch->node], sqrt(r[0]));
            smax[ch->node] = ra_fmax(smax[ch->node], r[1]);
            if (ch->rotation_count > 1) rot[ch->node] = 1;
        }
    /* bottom-up (children follow their parent in pre-order): how far the
     * subtree reaches from a node's origin, and how much it scales */
    for (size_t i = n; i-- > 1;) {
        size_t p = (size_t)s->nodes[i].parent;
        ext[p] = ra_fmax(ext[p], tmax[i] + smax[i] * ext[i]);
        sub[p] = ra_fmax(sub[p], smax[i] * sub[i]);
    }
    /* top-down: a rotation error d at node a moves what hangs below it by at
     * most d * above(a) * s(a) * (sub(a) + ext(a)) per world-matrix entry */
    double worst = 1;
    for (size_t i = 0; i < n; i++) {
        size_t p = i ? (size_t)s->nodes[i].parent : 0;
        above[i] = i ? above[p] * smax[p] : 1;
        acc[i] = (i ? acc[p] : 0) + (rot[i] ? above[i] * smax[i] * (sub[i] + ext[i]) : 0);
        if (acc[i] > worst) worst = acc[i];
    }
    ra_free(rot);
    ra_free(tmax);
    return isfinite(worst) ? worst : HUGE_VAL;
}

double ra_scene_lever_sum(const ra_scene *s) { return lever_sum(s, NULL); }

static double angle_of_lever(double l)
{
    if (l < 0) return -1;
    double a = cbrt(RA_DENSITY_TOL / (NLERP_K * l));
    if (!(a >= MIN_ANGLE)) a = MIN_ANGLE;
    return a;
}

double ra_scene_auto_key_angle_reach(const ra_scene *s, const double *reach)
{
    return angle_of_lever(lever_sum(s, reach));
}
double ra_scene_auto_key_angle(const ra_scene *s) { return ra_scene_auto_key_angle_reach(s, NULL); }

/* ra_step_epsilon without the call where it is its floor 1e-4: below 255
 * four float32 steps are at most 2^-14 */
static inline double step_eps(double t) { return fabs(t) < 255 ? 1e-4 : ra_step_epsilon(t); }

void ra_key_cutter_init(ra_key_cutter *c, double max_angle)
{
    if (!(max_angle >= MIN_ANGLE)) max_angle = MIN_ANGLE;
    c->max_angle = max_angle;
    /* an arc at most pi/2 (|dot| >= 0) fits p pieces from p max_angle / 2 >= pi/2 on */
    for (int p = 1; p <= RA_KEY_CUT_TABLE; p++)
        c->cos_p[p - 1] = 0.5 * max_angle * p >= RA_PI / 2 ? -1 : cos(0.5 * max_angle * p);
}

/* The pieces the span between two rotation keys is cut into: the fewest p
 * with the arc (om, its half angle, at most pi/2) over p at most half
 * max_angle, that is |dot| >= cos(p max_angle / 2).  A step (two keys a step
 * epsilon apart) stays one piece.  Up to RA_KEY_CUT_TABLE pieces by the
 * table, without an acos; beyond it from the acos.  At most 1800 (0.1
 * degree). */
static uint32_t span_pieces(const ra_key_cutter *c, const ra_quat_key *k0, const ra_quat_key *k1, double *d)
{
    *d = fabs(ra_q_dot(k0->q, k1->q));
    /* (a NaN dot, of keys the scene check refuses afterwards, is one piece) */
    if (!(*d < c->cos_p[0]) || k1->t - k0->t <= 1.5 * step_eps(k1->t)) return 1;
    for (uint32_t p = 2; p <= RA_KEY_CUT_TABLE; p++)
        if (*d >= c->cos_p[p - 1]) return p;
    double p = ceil(2 * acos(ra_fmin(*d, 1)) / c->max_angle);
    return p > RA_KEY_CUT_TABLE ? (uint32_t)p : RA_KEY_CUT_TABLE + 1;
}

size_t ra_key_cut_count(const ra_key_cutter *c, const ra_quat_key *k, size_t n)
{
    size_t added = 0;
    double d;
    for (size_t i = 1; i < n; i++) added += span_pieces(c, &k[i - 1], &k[i], &d) - 1;
    return added;
}

/* the keys of ra_key_cut_apply gather here and go to the sink in batches */
#define CUT_BATCH 128

void ra_key_cut_apply(const ra_key_cutter *c, const ra_quat_key *k, size_t n, ra_key_sink sink, void *ctx)
{
    if (!n) return;
    double sn[SIN_CACHE + 1];
    ra_quat_key buf[CUT_BATCH];
    size_t o = 0, done = 0;
    ra_quat prev = k[0].q;
    buf[o++] = k[0];
#define CUT_PUT(T, Q)                                                                                                  \
    do {                                                                                                               \
        if (o == CUT_BATCH) {                                                                                          \
            sink(ctx, buf, done, o);                                                                                   \
            done += o;                                                                                                 \
            o = 0;                                                                                                     \
        }                                                                                                              \
        ra_quat q_ = (Q);                                                                                              \
        if (ra_q_dot(q_, prev) < 0) q_ = ra_q_neg(q_);                                                                 \
        buf[o].t = (T);                                                                                                \
        buf[o++].q = prev = q_;                                                                                        \
    } while (0)
    for (size_t i = 1; i < n; i++) {
        ra_quat_key k0 = k[i - 1], k1 = k[i];
        double d;
        uint32_t np = span_pieces(c, &k0, &k1, &d);
        if (np > 1 && np <= SIN_CACHE && !(np & (np - 1))) {
            /* a power of two: the slerp's points j / np by halving, each
             * point the normalised sum of the two it halves (the slerp's
             * midpoint of unit a and b is (a + b) sin(om / 2) / sin(om),
             * of length 1), without the arc's acos and sines */
            /* m[0] is a and m[np] b, taken from here: stored in 8-byte
             * pieces and read back at once as pairs, they held the sums up
             * until the stores reached the cache */
            ra_quat m[SIN_CACHE + 1];
            ra_quat a = k0.q, b = ra_q_dot(k0.q, k1.q) < 0 ? ra_q_neg(k1.q) : k1.q;
            for (uint32_t step = np / 2; step; step /= 2)
                for (uint32_t j = step; j < np; j += 2 * step)
                    m[j] = ra_q_normalize(ra_q_add(j == step ? a : m[j - step], j + step == np ? b : m[j + step]));
            for (uint32_t j = 1; j < np; j++) CUT_PUT(k0.t + (k1.t - k0.t) * ((double)j / (double)np), m[j]);
        } else if (np > 1) {
            /* the rotations j / np of the way along the slerp arc (om, its
             * half angle) from k0 to k1 on k0's hemisphere */
            double om = acos(d);
            if (1.0 - d > 1e-6 && np <= SIN_CACHE) {
                /* sin(j x), x = om / np, by the recurrence sin((j+1) x) =
                 * 2 cos x sin(j x) - sin((j-1) x), up to sin(np x), the
                 * arc's own sine: each key is (sin((np - j) x) a + sin(j x)
                 * b) / sin(om), without a division, a square root or a sine
                 * per key.  A unit of rounding in step k reaches sin(j x)
                 * times sin((j - k) x) / sin x, so the weights are off by
                 * about 2^-53 om np^2 / 6 at most: 7.4e-15 for np <= 16
                 * (beyond, each key is slerped: the error grows as np^2).
                 * Measured: within 5e-15 of ra_q_slerp_shortest's keys on
                 * the bench files, their length within 3.2e-15 of 1. */
                ra_quat a = k0.q, b = ra_q_dot(k0.q, k1.q) < 0 ? ra_q_neg(k1.q) : k1.q;
                double x = om / (double)np, c2 = 2 * cos(x);
                sn[0] = 0;
                sn[1] = sin(x);
                for (uint32_t j = 2; j <= np; j++) sn[j] = c2 * sn[j - 1] - sn[j - 2];
                double inv = 1 / sn[np];
                for (uint32_t j = 1; j < np; j++) {
                    double w0 = sn[np - j] * inv, w1 = sn[j] * inv;
                    ra_quat q = {w0 * a.w + w1 * b.w, w0 * a.x + w1 * b.x, w0 * a.y + w1 * b.y, w0 * a.z + w1 * b.z};
                    CUT_PUT(k0.t + (k1.t - k0.t) * ((double)j / (double)np), q);
                }
            } else { /* more pieces than the cache, or an arc too short for the sines: slerp each */
                ra_slerp_arc arc = ra_q_slerp_arc_om(k0.q, k1.q, om);
                for (uint32_t j = 1; j < np; j++) {
                    double f = (double)j / (double)np;
                    CUT_PUT(k0.t + (k1.t - k0.t) * f, ra_q_slerp_arc_at(&arc, f));
                }
            }
        }
        CUT_PUT(k1.t, k1.q);
    }
#undef CUT_PUT
    sink(ctx, buf, done, o);
}
