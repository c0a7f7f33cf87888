/* retroanim — small double-precision math shared by every format.
 *
 * Conventions (the same as Assimp's): column vectors, matrices stored
 * row-major as m[row][col], translation in m[0][3], m[1][3], m[2][3].
 * Quaternions are (w, x, y, z) and rotate column vectors: v' = q v q*. */
#ifndef RETROANIM_RA_MATH_H
#define RETROANIM_RA_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "retroanim/retroanim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RA_PI 3.14159265358979323846

/* The small operations are inline: they sit on every loader's hot path. */

/* The largest float32 not above t.  Files store key times as float32
 * seconds; a time rounded up would put a step's landing key after the
 * instant it lands, so every writer rounds down. */
static inline float ra_f32_floor(double t)
{
    float f = (float)t;
    if ((double)f > t) {
        /* nextafterf(f, -INFINITY) by the bit pattern (f is neither NaN
         * nor -infinity here): a zero steps to -FLT_TRUE_MIN, a positive
         * value (infinity too) to the pattern below, a negative one to the
         * pattern above */
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        u = f == 0 ? 0x80000001u : u >> 31 ? u + 1 : u - 1;
        memcpy(&f, &u, sizeof f);
    }
    return f;
}
/* fmax / fmin exactly as glibc's x86-64 ones (maxsd / minsd, the non-NaN
 * operand when one is NaN), inline: the libm calls sit on hot loops. */
static inline double ra_fmax(double a, double b) { return a > b || b != b ? a : b; }
static inline double ra_fmin(double a, double b) { return a < b || b != b ? a : b; }
static inline ra_vec3 ra_v3(double x, double y, double z)
{
    ra_vec3 r = {x, y, z};
    return r;
}
static inline ra_vec3 ra_v3_add(ra_vec3 a, ra_vec3 b) { return ra_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline ra_vec3 ra_v3_sub(ra_vec3 a, ra_vec3 b) { return ra_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline ra_vec3 ra_v3_scale(ra_vec3 a, double s) { return ra_v3(a.x * s, a.y * s, a.z * s); }
static inline ra_vec3 ra_v3_lerp(ra_vec3 a, ra_vec3 b, double t)
{
    return ra_v3(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}
static inline ra_vec3 ra_v3_cross(ra_vec3 a, ra_vec3 b)
{
    return ra_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double ra_v3_dot(ra_vec3 a, ra_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline double ra_v3_len(ra_vec3 a) { return sqrt(ra_v3_dot(a, a)); }

static inline ra_quat ra_q(double w, double x, double y, double z)
{
    ra_quat r = {w, x, y, z};
    return r;
}
static inline ra_quat ra_q_identity(void) { return ra_q(1, 0, 0, 0); }
static inline ra_quat ra_q_mul(ra_quat a, ra_quat b)
{
    return ra_q(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}
static inline ra_quat ra_q_conj(ra_quat q) { return ra_q(q.w, -q.x, -q.y, -q.z); }
static inline ra_quat ra_q_neg(ra_quat q) { return ra_q(-q.w, -q.x, -q.y, -q.z); }
static inline ra_quat ra_q_scale(ra_quat q, double s) { return ra_q(q.w * s, q.x * s, q.y * s, q.z * s); }
static inline ra_quat ra_q_add(ra_quat a, ra_quat b) { return ra_q(a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z); }
static inline double ra_q_dot(ra_quat a, ra_quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }
static inline double ra_q_len(ra_quat q) { return sqrt(ra_q_dot(q, q)); }
/* Unit quaternion; the zero quaternion (or a non-finite one) gives identity. */
static inline ra_quat ra_q_normalize(ra_quat q)
{
    double l = ra_q_len(q);
    if (!(l > 0) || !isfinite(l)) return ra_q_identity();
    return ra_q_scale(q, 1.0 / l);
}
ra_quat ra_q_axis_angle(ra_vec3 axis, double radians);
/* Rotation as consumers play it: shortest arc, normalised result
 * (what aiQuaternion::Interpolate and glTF slerp do). */
ra_quat ra_q_slerp_shortest(ra_quat a, ra_quat b, double t);
/* ra_q_slerp_shortest's arc between a and b worked out once, for many t:
 * ra_q_slerp_arc_at(&arc, t) == ra_q_slerp_shortest(a, b, t) bit for bit. */
typedef struct ra_slerp_arc {
    ra_quat a, b;  /* b on a's hemisphere */
    double om, so; /* so == 0: linear weights */
} ra_slerp_arc;
ra_slerp_arc ra_q_slerp_arc(ra_quat a, ra_quat b);
/* the same with om = acos(|a.b|) already worked out (bit for bit that acos) */
ra_slerp_arc ra_q_slerp_arc_om(ra_quat a, ra_quat b, double om);
ra_quat ra_q_slerp_arc_at(const ra_slerp_arc *arc, double t);
/* Plain slerp along the great circle from a to b, no hemisphere flip
 * (t may lie outside [0,1]: the circle is continued). */
ra_quat ra_q_slerp_raw(ra_quat a, ra_quat b, double t);
/* Angle between two rotations in radians (sign of the quaternions ignored). */
double ra_q_angle_between(ra_quat a, ra_quat b);
/* Playback between two unit rotations a and b, for testing keys against it:
 * ra_q_slerp_span once per pair, then ra_q_slerp_near per key: is
 * ra_q_angle_between(ra_q_slerp_shortest(a, b, f), e) <= tol?  Decided
 * without trigonometry where the normalised lerp settles it (it stays within
 * dev = 0.04 theta^3 of the slerp for a 4D arc theta <= pi/3); computed
 * exactly otherwise. */
typedef struct ra_slerp_span {
    ra_quat a, b;  /* b on a's hemisphere */
    double dev;    /* nlerp-to-slerp bound; < 0: the arc is too long for the shortcut */
    bool arc;      /* om and so are set (on the first key the shortcut leaves undecided) */
    double om, so; /* the arc's angle and its sine for the exact slerp; so == 0: linear weights */
} ra_slerp_span;
/* inline: once per baked piece and per simplified key */
static inline ra_slerp_span ra_q_slerp_span(ra_quat a, ra_quat b)
{
    double d = ra_q_dot(a, b);
    if (d < 0) {
        d = -d;
        b = ra_q_neg(b);
    }
    ra_slerp_span s = {a, b, -1, false, 0, 0};
    double nn = ra_q_dot(a, a) * ra_q_dot(b, b), cs = nn > 0 ? ra_fmin(1.0, d / sqrt(nn)) : 0;
    if (cs > 0.5) {
        /* theta^2 <= 1.098 * 2 (1 - cos theta) for theta <= pi/3 */
        double th2 = 1.098 * 2.0 * (1.0 - cs);
        s.dev = 0.04 * th2 * sqrt(th2);
    }
    return s;
}
/* ra_q_slerp_near's exact test (the shortcut left it undecided) */
bool ra_q_slerp_near_exact(ra_slerp_span *s, double f, ra_quat e, double tol);
static inline bool ra_q_slerp_near(ra_slerp_span *s, double f, ra_quat e, double tol)
{
    if (s->dev >= 0) {
        double dev = s->dev;
        ra_quat nl = ra_q_add(ra_q_scale(s->a, 1 - f), ra_q_scale(s->b, f));
        double c = ra_q_dot(nl, e), c2 = c * c, den = ra_q_dot(nl, nl) * ra_q_dot(e, e);
        /* off by more than tol + dev: cos(T/2) >= 1 - T^2/8 */
        double hi = tol + dev, lim = 1.0 - hi * hi / 8;
        if (lim > 0 && c2 < lim * lim * den) return false;
        /* within tol - dev: cos(x) <= 1 - x^2/2 + x^4/24 */
        double x = (tol - dev) / 2, x2 = x * x;
        lim = 1.0 - x2 / 2 + x2 * x2 / 24;
        if (x > 0 && lim > 0 && c2 >= lim * lim * den) return true;
    }
    return ra_q_slerp_near_exact(s, f, e, tol);
}
/* Is the rotation between a and b more than the angle whose half has cosine
 * cos_half (precomputed: cos(angle / 2))?  No trigonometry. */
static inline bool ra_q_angle_over(ra_quat a, ra_quat b, double cos_half)
{
    double d = ra_q_dot(a, b);
    return cos_half >= 0 && d * d < cos_half * cos_half * ra_q_dot(a, a) * ra_q_dot(b, b);
}
ra_vec3 ra_q_rotate(ra_quat q, ra_vec3 v);
/* Euler angles in radians applied in the order X, then Y, then Z
 * (q = qz * qy * qx). */
ra_quat ra_q_from_euler_xyz(double x, double y, double z);

ra_mat4 ra_m4_identity(void);
ra_mat4 ra_m4_mul(const ra_mat4 *a, const ra_mat4 *b);
ra_mat4 ra_m4_transpose(const ra_mat4 *a);
/* T * R * S */
ra_mat4 ra_m4_compose(ra_vec3 t, ra_quat r, ra_vec3 s);
ra_mat4 ra_m4_from_quat(ra_quat q);
ra_mat4 ra_m4_translation(ra_vec3 t);
/* Splits an affine matrix into T, R, S (positive scale unless det < 0, then
 * x scale is negated).  Returns false if the matrix is singular. */
bool ra_m4_decompose(const ra_mat4 *m, ra_vec3 *t, ra_quat *r, ra_vec3 *s);
/* The matrix whose columns are the axes x, y, z and the origin t. */
ra_mat4 ra_m4_from_columns(ra_vec3 x, ra_vec3 y, ra_vec3 z, ra_vec3 t);
/* Inverse of an affine matrix (last row 0 0 0 1); false if it is singular. */
bool ra_m4_invert_affine(const ra_mat4 *m, ra_mat4 *out);
ra_vec3 ra_m4_apply_point(const ra_mat4 *m, ra_vec3 p);
double ra_m4_max_abs_diff(const ra_mat4 *a, const ra_mat4 *b);
/* The mirror F*M*F with F = diag(1,1,-1,1): converts between a left-handed and
 * a right-handed frame by negating Z. */
ra_mat4 ra_m4_mirror_z(const ra_mat4 *m);

/* float32 spacing at x (the gap to the next representable float). */
double ra_f32_ulp(double x);

#ifdef __cplusplus
}
#endif
#endif
