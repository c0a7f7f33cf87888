/* Vectors, quaternions, matrices. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "retroanim/ra_math.h"

ra_quat ra_q_axis_angle(ra_vec3 axis, double a)
{
    double l = ra_v3_len(axis);
    if (!(l > 0)) return ra_q_identity();
    double s = sin(a / 2) / l;
    return (ra_quat){cos(a / 2), axis.x * s, axis.y * s, axis.z * s};
}

ra_quat ra_q_slerp_raw(ra_quat a, ra_quat b, double t)
{
    double d = ra_q_dot(a, b) / (ra_q_len(a) * ra_q_len(b));
    if (d > 1) d = 1;
    if (d < -1) d = -1;
    double th = acos(d);
    double s = sin(th);
    if (s < 1e-9) return ra_q_normalize(ra_q_add(ra_q_scale(a, 1 - t), ra_q_scale(b, t)));
    double ka = sin((1 - t) * th) / s, kb = sin(t * th) / s;
    return ra_q_normalize(ra_q_add(ra_q_scale(a, ka), ra_q_scale(b, kb)));
}

/* aiQuaternion::Interpolate's arc from a to b (b on a's hemisphere, c = a.b):
 * its angle and sine, or so = 0 where it blends linearly */
static void arc_of(double c, double *om, double *so)
{
    *om = 0, *so = 0;
    if (1.0 - c > 1e-6) {
        *om = acos(c);
        *so = sin(*om);
    }
}

static ra_quat arc_mix(ra_quat a, ra_quat b, double om, double so, double t)
{
    double s0 = 1 - t, s1 = t;
    if (so != 0) {
        s0 = sin((1 - t) * om) / so;
        s1 = sin(t * om) / so;
    }
    return ra_q_normalize(ra_q_add(ra_q_scale(a, s0), ra_q_scale(b, s1)));
}

ra_slerp_arc ra_q_slerp_arc(ra_quat a, ra_quat b)
{
    double c = ra_q_dot(a, b);
    if (c < 0) {
        c = -c;
        b = ra_q_neg(b);
    }
    ra_slerp_arc r = {a, b, 0, 0};
    arc_of(c, &r.om, &r.so);
    return r;
}

ra_slerp_arc ra_q_slerp_arc_om(ra_quat a, ra_quat b, double om)
{
    double c = ra_q_dot(a, b);
    if (c < 0) {
        c = -c;
        b = ra_q_neg(b);
    }
    ra_slerp_arc r = {a, b, 0, 0};
    if (1.0 - c > 1e-6) { /* arc_of with its acos given */
        r.om = om;
        r.so = sin(om);
    }
    return r;
}

ra_quat ra_q_slerp_arc_at(const ra_slerp_arc *arc, double t) { return arc_mix(arc->a, arc->b, arc->om, arc->so, t); }

ra_quat ra_q_slerp_shortest(ra_quat a, ra_quat b, double t)
{
    /* the same algorithm as aiQuaternion::Interpolate */
    double c = ra_q_dot(a, b);
    if (c < 0) {
        c = -c;
        b = ra_q_neg(b);
    }
    double om, so;
    arc_of(c, &om, &so);
    return arc_mix(a, b, om, so, t);
}

double ra_q_angle_between(ra_quat a, ra_quat b)
{
    double d = fabs(ra_q_dot(ra_q_normalize(a), ra_q_normalize(b)));
    if (d > 1) d = 1;
    return 2 * acos(d);
}

/* ra_q_angle_between(a, b) <= tol, the acos left out where the cosine is
 * clearly on one side: above cos(0.99 tol/2) the angle is within tol, below
 * cos(1.01 tol/2) beyond it, whatever the rounding of cos and acos (for tol
 * in [1e-6, 3] the margin is over 20 times their error there). */
static bool angle_within(ra_quat a, ra_quat b, double tol)
{
    double d = fabs(ra_q_dot(ra_q_normalize(a), ra_q_normalize(b)));
    if (d > 1) d = 1;
    if (tol >= 1e-6 && tol <= 3) {
        static _Thread_local double c_tol[2] = {-1, -1}, c_hi[2], c_lo[2];
        static _Thread_local int c_next;
        int k = c_tol[0] == tol ? 0 : c_tol[1] == tol ? 1 : -1;
        if (k < 0) {
            k = c_next;
            c_next ^= 1;
            c_tol[k] = tol;
            c_hi[k] = cos(0.99 * tol / 2);
            c_lo[k] = cos(1.01 * tol / 2);
        }
        if (d >= c_hi[k]) return true;
        if (d < c_lo[k]) return false;
    }
    return 2 * acos(d) <= tol;
}

bool ra_q_slerp_near_exact(ra_slerp_span *s, double f, ra_quat e, double tol)
{
    /* ra_q_slerp_shortest with the span's arc (worked out once per span),
     * and the angle to e */
    if (!s->arc) {
        arc_of(ra_q_dot(s->a, s->b), &s->om, &s->so);
        s->arc = true;
    }
    return angle_within(arc_mix(s->a, s->b, s->om, s->so, f), e, tol);
}

ra_vec3 ra_q_rotate(ra_quat q, ra_vec3 v)
{
    ra_quat p = {0, v.x, v.y, v.z};
    ra_quat r = ra_q_mul(ra_q_mul(q, p), ra_q_conj(q));
    return (ra_vec3){r.x, r.y, r.z};
}

ra_quat ra_q_from_euler_xyz(double x, double y, double z)
{
    ra_quat qx = ra_q_axis_angle(ra_v3(1, 0, 0), x);
    ra_quat qy = ra_q_axis_angle(ra_v3(0, 1, 0), y);
    ra_quat qz = ra_q_axis_angle(ra_v3(0, 0, 1), z);
    return ra_q_mul(qz, ra_q_mul(qy, qx));
}

ra_mat4 ra_m4_identity(void)
{
    ra_mat4 r;
    memset(&r, 0, sizeof r);
    r.m[0][0] = r.m[1][1] = r.m[2][2] = r.m[3][3] = 1;
    return r;
}
ra_mat4 ra_m4_mul(const ra_mat4 *a, const ra_mat4 *b)
{
    ra_mat4 r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a->m[i][k] * b->m[k][j];
            r.m[i][j] = s;
        }
    return r;
}
ra_mat4 ra_m4_transpose(const ra_mat4 *a)
{
    ra_mat4 r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) r.m[i][j] = a->m[j][i];
    return r;
}
ra_mat4 ra_m4_from_quat(ra_quat q)
{
    q = ra_q_normalize(q);
    ra_mat4 r = ra_m4_identity();
    double w = q.w, x = q.x, y = q.y, z = q.z;
    r.m[0][0] = 1 - 2 * (y * y + z * z);
    r.m[0][1] = 2 * (x * y - w * z);
    r.m[0][2] = 2 * (x * z + w * y);
    r.m[1][0] = 2 * (x * y + w * z);
    r.m[1][1] = 1 - 2 * (x * x + z * z);
    r.m[1][2] = 2 * (y * z - w * x);
    r.m[2][0] = 2 * (x * z - w * y);
    r.m[2][1] = 2 * (y * z + w * x);
    r.m[2][2] = 1 - 2 * (x * x + y * y);
    return r;
}
ra_mat4 ra_m4_translation(ra_vec3 t)
{
    ra_mat4 r = ra_m4_identity();
    r.m[0][3] = t.x;
    r.m[1][3] = t.y;
    r.m[2][3] = t.z;
    return r;
}
ra_mat4 ra_m4_compose(ra_vec3 t, ra_quat q, ra_vec3 s)
{
    ra_mat4 r = ra_m4_from_quat(q);
    for (int i = 0; i < 3; i++) {
        r.m[i][0] *= s.x;
        r.m[i][1] *= s.y;
        r.m[i][2] *= s.z;
    }
    r.m[0][3] = t.x;
    r.m[1][3] = t.y;
    r.m[2][3] = t.z;
    return r;
}

bool ra_m4_decompose(const ra_mat4 *m, ra_vec3 *t, ra_quat *q, ra_vec3 *s)
{
    *t = ra_v3(m->m[0][3], m->m[1][3], m->m[2][3]);
    ra_vec3 c0 = {m->m[0][0], m->m[1][0], m->m[2][0]};
    ra_vec3 c1 = {m->m[0][1], m->m[1][1], m->m[2][1]};
    ra_vec3 c2 = {m->m[0][2], m->m[1][2], m->m[2][2]};
    double sx = ra_v3_len(c0), sy = ra_v3_len(c1), sz = ra_v3_len(c2);
    if (ra_v3_dot(ra_v3_cross(c0, c1), c2) < 0) sx = -sx;
    *s = ra_v3(sx, sy, sz);
    if (sx == 0 || sy == 0 || sz == 0) {
        *q = ra_q_identity();
        return false;
    }
    c0 = ra_v3_scale(c0, 1 / sx);
    c1 = ra_v3_scale(c1, 1 / sy);
    c2 = ra_v3_scale(c2, 1 / sz);
    /* rotation matrix r[i][j] = column j component i */
    double r00 = c0.x, r10 = c0.y, r20 = c0.z, r01 = c1.x, r11 = c1.y, r21 = c1.z, r02 = c2.x, r12 = c2.y, r22 = c2.z;
    double tr = r00 + r11 + r22;
    ra_quat o;
    if (tr > 0) {
        double k = sqrt(tr + 1.0) * 2;
        o = (ra_quat){0.25 * k, (r21 - r12) / k, (r02 - r20) / k, (r10 - r01) / k};
    } else if (r00 > r11 && r00 > r22) {
        double k = sqrt(1.0 + r00 - r11 - r22) * 2;
        o = (ra_quat){(r21 - r12) / k, 0.25 * k, (r01 + r10) / k, (r02 + r20) / k};
    } else if (r11 > r22) {
        double k = sqrt(1.0 + r11 - r00 - r22) * 2;
        o = (ra_quat){(r02 - r20) / k, (r01 + r10) / k, 0.25 * k, (r12 + r21) / k};
    } else {
        double k = sqrt(1.0 + r22 - r00 - r11) * 2;
        o = (ra_quat){(r10 - r01) / k, (r02 + r20) / k, (r12 + r21) / k, 0.25 * k};
    }
    *q = ra_q_normalize(o);
    return true;
}

ra_vec3 ra_m4_apply_point(const ra_mat4 *m, ra_vec3 p)
{
    return ra_v3(m->m[0][0] * p.x + m->m[0][1] * p.y + m->m[0][2] * p.z + m->m[0][3],
                 m->m[1][0] * p.x + m->m[1][1] * p.y + m->m[1][2] * p.z + m->m[1][3],
                 m->m[2][0] * p.x + m->m[2][1] * p.y + m->m[2][2] * p.z + m->m[2][3]);
}

double ra_m4_max_abs_diff(const ra_mat4 *a, const ra_mat4 *b)
{
    double d = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double e = fabs(a->m[i][j] - b->m[i][j]);
            if (!(e <= d)) d = e; /* NaN propagates */
        }
    return d;
}

ra_mat4 ra_m4_from_columns(ra_vec3 x, ra_vec3 y, ra_vec3 z, ra_vec3 t)
{
    ra_mat4 r = ra_m4_identity();
    const ra_vec3 c[4] = {x, y, z, t};
    for (int k = 0; k < 4; k++) {
        r.m[0][k] = c[k].x;
        r.m[1][k] = c[k].y;
        r.m[2][k] = c[k].z;
    }
    return r;
}

bool ra_m4_invert_affine(const ra_mat4 *m, ra_mat4 *out)
{
    const double(*a)[4] = m->m;
    double c00 = a[1][1] * a[2][2] - a[1][2] * a[2][1], c01 = a[1][2] * a[2][0] - a[1][0] * a[2][2],
           c02 = a[1][0] * a[2][1] - a[1][1] * a[2][0];
    double det = a[0][0] * c00 + a[0][1] * c01 + a[0][2] * c02;
    if (!(fabs(det) > 1e-300)) return false;
    double id = 1.0 / det;
    ra_mat4 r = ra_m4_identity();
    r.m[0][0] = c00 * id;
    r.m[1][0] = c01 * id;
    r.m[2][0] = c02 * id;
    r.m[0][1] = (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * id;
    r.m[1][1] = (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * id;
    r.m[2][1] = (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * id;
    r.m[0][2] = (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * id;
    r.m[1][2] = (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * id;
    r.m[2][2] = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * id;
    for (int i = 0; i < 3; i++) r.m[i][3] = -(r.m[i][0] * a[0][3] + r.m[i][1] * a[1][3] + r.m[i][2] * a[2][3]);
    *out = r;
    return true;
}

ra_mat4 ra_m4_mirror_z(const ra_mat4 *m)
{
    ra_mat4 r = *m;
    for (int i = 0; i < 4; i++) {
        r.m[2][i] = -r.m[2][i];
        r.m[i][2] = -r.m[i][2];
    }
    return r;
}

double ra_f32_ulp(double x)
{
    float f = (float)fabs(x);
    if (!isfinite(f)) return INFINITY;
    /* nextafterf(f, INFINITY) for a finite f >= 0: the next bit pattern
     * (FLT_MAX's is infinity's, as nextafterf gives) */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u++;
    float g;
    memcpy(&g, &u, sizeof g);
    return (double)g - (double)f;
}
