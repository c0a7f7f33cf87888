/* NIFF: playback rules (test_models/niff/RULES.md, README "NIFF"), the
 * reference evaluator `pose` and to_scene, plus the format's registry entry.
 *
 * Every object's local transform is a function of the NIFF frame number
 * given by its AnimGroup (STATIC/CONST, FULL, KEY chains, NIFF 2 channels,
 * billboards).  to_scene bakes each of them, and each camera placed by its
 * eye, look-at and up objects, into keys that linear/slerp playback follows
 * within the baker's tolerances. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "retroanim/niff.h"
#include "retroanim/ra_parallel.h"

#define FMT "niff"
/* Most breakpoints one load bakes: NIFF_BREAKS_BASE plus one per
 * NIFF_BREAK_BYTES bytes of file.  What a file holds is baked whatever its
 * size; the base bounds what repetition adds (loops repeated inside a long
 * scene, cameras and billboards sampled at every key of the objects that
 * place them). */
#define NIFF_BREAKS_BASE (1u << 14)
#define NIFF_BREAK_BYTES 4
/* a segment turning more than this many quarter turns is cut at this many */
#define NIFF_MAX_CUTS 256
#define NIFF_VALUE_TOL 3e-6 /* relative to 1 + the value's magnitude */
#define NIFF_ANGLE_TOL 4e-6 /* radians */
/* deepest recursion of the world evaluation: tree depth plus billboard
 * and camera aims (each level is two small frames) */
#define NIFF_MAX_AIM_DEPTH 1024
/* A frame this close (relative to itself) past a loop's seam still shows the
 * end: the keys put the jump four float32 steps after the seam (below). */
#define NIFF_SEAM_SNAP 1e-6

enum {
    G_IDENTITY,
    G_CONST,
    G_FULL,
    G_KEY,
    G_CHANNELS,
    G_BILLBOARD
};

typedef struct gplay {
    const niff_group *g;
    int kind;
    uint8_t axes[3];     /* Euler axes in application order */
    uint32_t *order;     /* KEY: the chain (indices into anims) */
    uint32_t n;          /* KEY: chain length; FULL: anim_num */
    double period;       /* frames (0: constant) */
    uint32_t loop;       /* anim_loop */
    double base[9];      /* Anim(0): tx ty tz rx ry rz sx sy sz (identity without one) */
    const niff_anim *bb; /* billboard Anim */
} gplay;

typedef struct nstate {
    const niff_file *f;
    double fps;
    int32_t *obj_node;        /* ObjList index -> scene node */
    int32_t *lod_by;          /* item -> the object whose LOD link placed it, or -1 */
    uint32_t *lod_k;          /* and that link's position in its obj_lod_link */
    int32_t *node_cam;        /* scene node -> CamList index, or -1 */
    int32_t *bb_look, *bb_up; /* billboard node -> nodes of its targets (-1: none) */
    gplay *gp;                /* per AnimGroup */
    const gplay **node_gp;    /* scene node -> its group's playback, or NULL */
    int *up_mode;             /* per camera: UP_RELATIVE, UP_DIRECTION, UP_FIXED */
    int32_t *parent;          /* scene node -> parent node (-1 for the root) */
    size_t node_count;
} nstate;

enum {
    UP_RELATIVE,
    UP_DIRECTION,
    UP_FIXED
};

const niff_file *niff_document_file(const ra_document *doc)
{
    return doc && doc->format && strcmp(doc->format->id, FMT) == 0 ? doc->model : NULL;
}

/* ---- rotation orders (docs/formats/niff.md §2) ---------------------------------------------------------- */
static const struct {
    uint32_t code;
    const char *name;
    uint8_t axes[3]; /* application order */
} rot_orders[6] = {{0x00010203, "XYZ", {0, 1, 2}}, {0x00010302, "XZY", {0, 2, 1}}, {0x00020103, "YXZ", {1, 0, 2}},
                   {0x00030102, "YZX", {1, 2, 0}}, {0x00020301, "ZXY", {2, 0, 1}}, {0x00030201, "ZYX", {2, 1, 0}}};

static int rot_order_index(uint32_t code)
{
    for (int i = 0; i < 6; i++)
        if (rot_orders[i].code == code) return i;
    return -1;
}

/* (c, s e_a) q, a rotation about axis a times q: ra_q_mul without the
 * terms of the axis quaternion's zeros (the same value; at most the sign
 * of a zero differs) */
static ra_quat axis_mul(int a, double c, double s, ra_quat q)
{
    switch (a) {
    case 0: return ra_q(c * q.w - s * q.x, c * q.x + s * q.w, c * q.y - s * q.z, c * q.z + s * q.y);
    case 1: return ra_q(c * q.w - s * q.y, c * q.x + s * q.z, c * q.y + s * q.w, c * q.z - s * q.x);
    default: return ra_q(c * q.w - s * q.z, c * q.x - s * q.y, c * q.y + s * q.x, c * q.z + s * q.w);
    }
}

/* The rotation of Euler angles whose halves have cosines c[] and sines s[]
 * (indexed by axis), applied in the order axes[]: the later axis multiplies
 * from the left. */
static inline ra_quat euler_quat_cs(const uint8_t axes[3], const double c[3], const double s[3])
{
    int a = axes[0];
    ra_quat q = ra_q(c[a], a == 0 ? s[a] : 0, a == 1 ? s[a] : 0, a == 2 ? s[a] : 0);
    for (int i = 1; i < 3; i++) q = axis_mul(axes[i], c[axes[i]], s[axes[i]], q);
    return q;
}

static ra_quat euler_quat(const uint8_t axes[3], const double r[3])
{
    double c[3], s[3];
    for (int a = 0; a < 3; a++) {
        double h = 0.5 * r[a];
        c[a] = cos(h), s[a] = sin(h); /* one sincos */
    }
    return euler_quat_cs(axes, c, s);
}

/* ---- curves ---------------------------------------------------------------------------------------------- */
static double ease(uint32_t interp, double u)
{
    switch (interp) {
    case NIFF_INTERP_STATIC: return 0;
    case NIFF_INTERP_SLOWIN: return u + u * u - u * u * u;
    case NIFF_INTERP_SLOWOUT: return 2 * u * u - u * u * u;
    case NIFF_INTERP_SLOW: return 3 * u * u - 2 * u * u * u;
    default: return u;
    }
}
/* the largest slope of ease() on [0, 1] (for cutting long rotations) */
static double ease_slope(uint32_t interp)
{
    return interp == NIFF_INTERP_STATIC                                    ? 0
           : interp == NIFF_INTERP_SLOW                                    ? 1.5
           : interp == NIFF_INTERP_SLOWIN || interp == NIFF_INTERP_SLOWOUT ? 4.0 / 3.0
                                                                           : 1.0;
}

static void anim_values(const niff_anim *a, double v[9])
{
    for (int i = 0; i < 3; i++) {
        v[i] = a->t[i];
        v[3 + i] = a->r[i];
        v[6 + i] = a->s[i];
    }
}

static bool is_trs_tag(uint32_t tag)
{
    return tag == NIFF_TAG_ANIM_STATIC || tag == NIFF_TAG_ANIM_CONST || tag == NIFF_TAG_ANIM_FULL ||
           tag == NIFF_TAG_ANIM_KEY;
}

/* The frame inside the group's loop.  At a whole number of periods the
 * final value shows (f = P plays frame P, not frame 0): Nintendo's previewer
 * restarts a loop only once time is past its end (docs/formats/niff.md §6). */
static double loop_frame(const gplay *gp, double f)
{
    if (!(f > 0)) return 0;
    double p = gp->period;
    if (!(p > 0)) return f;
    if (gp->loop != 0 && !(f < p * gp->loop)) return p;
    double r = f < p ? f : fmod(f, p);     /* fmod is exact: f itself below one period */
    return r > f * NIFF_SEAM_SNAP ? r : p; /* at the seam within rounding: the end */
}

/* Channel key search: the last key with key <= f (-1 before the first). */
static int64_t find_chkey(const niff_chkey *k, uint32_t n, double f)
{
    int64_t lo = 0, hi = (int64_t)n - 1, r = -1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (k[mid].key <= f) {
            r = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return r;
}

static void channel_eval(const niff_chkey *k, uint32_t n, unsigned nv, double f, double *out)
{
    int64_t i = find_chkey(k, n, f);
    if (i < 0) i = 0;
    const niff_chkey *a = &k[i];
    if ((uint32_t)i + 1 >= n || f <= a->key || a->interp == NIFF2_INTERP_CONST) {
        for (unsigned c = 0; c < nv; c++) out[c] = a->v[c];
        return;
    }
    const niff_chkey *b = &k[i + 1];
    double span = (double)b->key - a->key, u = (f - a->key) / span;
    for (unsigned c = 0; c < nv; c++) {
        if (a->interp == NIFF2_INTERP_HERMITE) {
            double u2 = u * u, u3 = u2 * u;
            out[c] = (2 * u3 - 3 * u2 + 1) * a->v[c] + (u3 - 2 * u2 + u) * span * a->d[c] +
                     (-2 * u3 + 3 * u2) * b->v[c] + (u3 - u2) * span * b->d[c];
        } else {
            out[c] = a->v[c] + (b->v[c] - a->v[c]) * u;
        }
    }
}

/* The KEY chain's keys around loop frame lf: lo the last at or before it
 * and *hi the next (lo itself before the first key and from the last on,
 * where the value holds). */
static uint32_t key_span(const gplay *gp, double lf, uint32_t *hi)
{
    const niff_anim *an = gp->g->anims;
    uint32_t lo = 0;
    *hi = gp->n - 1;
    if (lf <= an[gp->order[0]].key) {
        *hi = 0;
    } else if (lf >= an[gp->order[*hi]].key) {
        lo = *hi;
    } else {
        while (*hi - lo > 1) {
            uint32_t mid = (lo + *hi) / 2;
            if (an[gp->order[mid]].key <= lf) lo = mid;
            else *hi = mid;
        }
    }
    return lo;
}

/* The translation, Euler angles and scale (v[0..8]) of a FULL or KEY group
 * at loop frame lf; the group's base values for other kinds. */
static void group_values(const gplay *gp, double lf, double v[9])
{
    memcpy(v, gp->base, 9 * sizeof *v);
    const niff_group *g = gp->g;
    if (gp->kind == G_FULL && gp->n) {
        double fl = floor(lf);
        uint32_t i = fl >= gp->n - 1 ? gp->n - 1 : (uint32_t)fl;
        double u = lf - i;
        anim_values(&g->anims[i], v);
        if (i + 1 < gp->n && u > 0) {
            double w[9];
            anim_values(&g->anims[i + 1], w);
            for (int c = 0; c < 9; c++) v[c] += (w[c] - v[c]) * u;
        }
    } else if (gp->kind == G_KEY && gp->n) {
        const niff_anim *an = g->anims;
        uint32_t hi, lo = key_span(gp, lf, &hi);
        const niff_anim *a = &an[gp->order[lo]];
        anim_values(a, v);
        if (hi > lo) {
            const niff_anim *b = &an[gp->order[hi]];
            double s = ease(a->interp, (lf - a->key) / ((double)b->key - a->key)), w[9];
            anim_values(b, w);
            for (int c = 0; c < 9; c++) v[c] += (w[c] - v[c]) * s;
        }
    }
}

/* Local transform of a non-billboard group at frame f. */
static ra_trs group_trs(const gplay *gp, double f)
{
    double v[9];
    ra_quat q;
    bool have_q = false;
    double lf = loop_frame(gp, f);
    group_values(gp, lf, v);
    const niff_group *g = gp->g;
    if (gp->kind == G_CHANNELS) {
        const niff_channels *ch = &g->ch;
        double out[6];
        if (ch->count[NIFF_CH_TRANSLATION])
            channel_eval(ch->keys[NIFF_CH_TRANSLATION], ch->count[NIFF_CH_TRANSLATION], 3, lf, v);
        int sc = ch->count[NIFF_CH_CLASSICAL_SCALE] ? NIFF_CH_CLASSICAL_SCALE : NIFF_CH_UNIQUE_SCALE;
        if (ch->count[sc]) channel_eval(ch->keys[sc], ch->count[sc], 3, lf, v + 6);
        if (ch->count[NIFF_CH_ROTATE_X] || ch->count[NIFF_CH_ROTATE_Y] || ch->count[NIFF_CH_ROTATE_Z]) {
            for (int a = 0; a < 3; a++) {
                v[3 + a] = 0;
                if (ch->count[NIFF_CH_ROTATE_X + a])
                    channel_eval(ch->keys[NIFF_CH_ROTATE_X + a], ch->count[NIFF_CH_ROTATE_X + a], 1, lf, v + 3 + a);
            }
        } else if (ch->count[NIFF_CH_ROTATE_AXIS]) {
            channel_eval(ch->keys[NIFF_CH_ROTATE_AXIS], ch->count[NIFF_CH_ROTATE_AXIS], 4, lf, out);
            ra_vec3 axis = ra_v3(out[0], out[1], out[2]);
            double l = ra_v3_len(axis);
            q = l > 0 ? ra_q_axis_angle(ra_v3_scale(axis, 1 / l), out[3]) : ra_q_identity();
            have_q = true;
        } else if (ch->count[NIFF_CH_ORIENTATION_XY]) {
            channel_eval(ch->keys[NIFF_CH_ORIENTATION_XY], ch->count[NIFF_CH_ORIENTATION_XY], 6, lf, out);
            ra_vec3 x = ra_v3(out[0], out[1], out[2]), y = ra_v3(out[3], out[4], out[5]);
            double lx = ra_v3_len(x);
            q = ra_q_identity();
            if (lx > 0) {
                x = ra_v3_scale(x, 1 / lx);
                y = ra_v3_sub(y, ra_v3_scale(x, ra_v3_dot(y, x)));
                double ly = ra_v3_len(y);
                if (ly > 0) {
                    y = ra_v3_scale(y, 1 / ly);
                    ra_mat4 m = ra_m4_from_columns(x, y, ra_v3_cross(x, y), ra_v3(0, 0, 0));
                    ra_vec3 t, s;
                    if (!ra_m4_decompose(&m, &t, &q, &s)) q = ra_q_identity();
                }
            }
            have_q = true;
        }
    }
    ra_trs r;
    r.t = ra_v3(v[0], v[1], v[2]);
    r.r = have_q ? q : euler_quat(gp->axes, v + 3);
    r.s = ra_v3(v[6], v[7], v[8]);
    return r;
}

/* ---- the world at a frame -------------------------------------------------------------------------------- */
static ra_vec3 origin(const ra_mat4 *m) { return ra_v3(m->m[0][3], m->m[1][3], m->m[2][3]); }

static bool unit(ra_vec3 *v, double eps)
{
    double l = ra_v3_len(*v);
    if (!(l > eps)) return false;
    *v = ra_v3_scale(*v, 1 / l);
    return true;
}

/* World matrix of a frame at `at` with +Z along `dir` (billboard) or -Z
 * (camera) and +Y toward `up`.  When the directions are degenerate the
 * rotation is identity and *ok (if given) is set false. */
static ra_mat4 aim(ra_vec3 at, ra_vec3 dir, ra_vec3 up, bool camera, bool *ok)
{
    ra_vec3 z = camera ? ra_v3_scale(dir, -1) : dir, x;
    bool good = unit(&z, 1e-9) && (x = ra_v3_cross(up, z), unit(&x, 1e-9));
    if (ok) *ok = good;
    return good ? ra_m4_from_columns(x, ra_v3_cross(z, x), z, at) : ra_m4_translation(at);
}

typedef struct wctx {
    const nstate *st;
    double f;
    ra_mat4 *world;
    ra_mat4 *local; /* per node, as computed (NULL: not kept) */
    uint8_t *state; /* per node: 0 to do, 1 in progress, 2 done */
    bool cycle;     /* a billboard depends on itself */
    bool deep;      /* billboards aim at billboards more than NIFF_MAX_AIM_DEPTH deep */
} wctx;

static ra_vec3 target_origin(wctx *w, int32_t node, ra_vec3 fallback, int depth);

static const ra_mat4 *world_of(wctx *w, int32_t node, int depth)
{
    const nstate *st = w->st;
    if (w->state[node] == 2) return &w->world[node];
    if (w->state[node] == 1 || depth > NIFF_MAX_AIM_DEPTH) {
        if (w->state[node] == 1) w->cycle = true;
        else w->deep = true;
        w->world[node] = ra_m4_identity();
        return &w->world[node];
    }
    w->state[node] = 1;
    int32_t p = st->parent[node];
    ra_mat4 pw = p >= 0 ? *world_of(w, p, depth + 1) : ra_m4_identity();
    ra_mat4 local = ra_m4_identity();
    const gplay *gp = st->node_gp[node];
    int32_t cam = st->node_cam[node];
    if (cam >= 0) {
        const niff_cam *c = &st->f->cams[cam];
        ra_vec3 zero = ra_v3(0, 0, 0);
        ra_vec3 e = c->eye_obj != NIFF_NONE ? target_origin(w, st->obj_node[c->eye_obj], zero, depth) : zero;
        ra_vec3 l = c->lookat_obj != NIFF_NONE ? target_origin(w, st->obj_node[c->lookat_obj], zero, depth)
                                               : ra_v3_add(e, ra_v3(0, 0, -1));
        ra_vec3 u = c->up_obj != NIFF_NONE ? target_origin(w, st->obj_node[c->up_obj], zero, depth) : zero;
        int mode = st->up_mode[cam];
        ra_vec3 up = mode == UP_RELATIVE ? ra_v3_sub(u, e) : mode == UP_DIRECTION ? u : ra_v3(0, 1, 0);
        local = aim(e, ra_v3_sub(l, e), up, true, NULL);
    } else if (gp && gp->kind == G_BILLBOARD) {
        ra_vec3 s = origin(&pw);
        int32_t ln = st->bb_look[node], un = st->bb_up[node];
        ra_vec3 l = ln >= 0 ? target_origin(w, ln, s, depth) : s;
        ra_vec3 y0 = ra_v3_sub(un >= 0 ? target_origin(w, un, s, depth) : s, s);
        ra_vec3 pt, ps;
        ra_quat pq;
        bool aimed = false;
        ra_mat4 wm = aim(ra_v3(0, 0, 0), ra_v3_sub(l, s), y0, false, &aimed);
        if (unit(&y0, 0) && aimed && ra_m4_decompose(&pw, &pt, &pq, &ps)) {
            /* the aimed rotation relative to the parent's world rotation; the
             * parent's scale still applies (a TRS node cannot undo a shear) */
            ra_mat4 pr = ra_m4_from_quat(ra_q_conj(pq));
            local = ra_m4_mul(&pr, &wm);
        }
    } else if (gp) {
        ra_trs r = group_trs(gp, w->f);
        local = ra_m4_compose(r.t, r.r, r.s);
    }
    if (w->local) w->local[node] = local;
    w->world[node] = ra_m4_mul(&pw, &local);
    w->state[node] = 2;
    return &w->world[node];
}

static ra_vec3 target_origin(wctx *w, int32_t node, ra_vec3 fallback, int depth)
{
    if (node < 0) return fallback;
    const ra_mat4 *m = world_of(w, node, depth + 1);
    return origin(m);
}

/* Every node's world (and, if `local` is given, local) matrix at frame f.
 * 0, or AIM_CYCLE / AIM_DEEP when billboards depend on themselves or on
 * each other too deeply. */
enum {
    AIM_CYCLE = 1,
    AIM_DEEP = 2
};
static int eval_world(const nstate *st, double f, ra_mat4 *world, ra_mat4 *local, uint8_t *state)
{
    memset(state, 0, st->node_count);
    wctx w = {st, f, world, local, state, false, false};
    for (size_t n = 0; n < st->node_count; n++) world_of(&w, (int32_t)n, 0);
    return w.cycle ? AIM_CYCLE : w.deep ? AIM_DEEP : 0;
}

/* Seconds to NIFF frames; a time that is a whole frame up to rounding
 * (62/60 s * 30) is that frame, so the value at a step is the one after it. */
static double to_frame(const nstate *st, double t)
{
    double f = t * st->fps, r;
    if (!(f > -1e15 && f < 1e15)) f = f > 0 ? 1e15 : 0; /* NaN, infinities, beyond any loop */
    r = nearbyint(f);
    return fabs(f - r) < 1e-6 ? r : f;
}

static ra_status niff_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    (void)anim;
    const nstate *st = doc->state;
    uint8_t *state = ra_malloc(st->node_count ? st->node_count : 1);
    if (!state) return ra_fail_nomem(err, FMT);
    eval_world(st, to_frame(st, t), world, NULL, state);
    ra_free(state);
    return RA_OK;
}

/* ---- baking ---------------------------------------------------------------------------------------------- */
/* Breakpoints of [a, b] cut so that no piece turns more than 90 degrees
 * (`turn` bounds the rotation over the segment, radians).  A segment that
 * turns more than NIFF_MAX_CUTS quarter turns is refused (*fast is set):
 * nothing sensible spins that fast, and following it would take millions
 * of keys. */
static bool push_segment(ra_breaks *b, double fa, double fb, double turn, bool *fast)
{
    if (!ra_breaks_push(b, fa)) return false;
    double n = ceil(turn / (RA_PI / 2));
    if (!(n <= NIFF_MAX_CUTS)) {
        *fast = true;
        return false;
    }
    for (double m = 1; m < n; m++)
        if (!ra_breaks_push(b, fa + (fb - fa) * m / n)) return false;
    return true;
}

static double chan_turn(const niff_chkey *a, const niff_chkey *b, unsigned first, unsigned count)
{
    if (a->interp == NIFF2_INTERP_CONST) return 0;
    double span = (double)b->key - a->key, t = 0;
    for (unsigned c = first; c < first + count; c++) {
        double dv = fabs((double)b->v[c] - a->v[c]);
        t += a->interp == NIFF2_INTERP_HERMITE ? 1.5 * dv + span * (fabs(a->d[c]) + fabs(b->d[c])) : dv;
    }
    return t;
}

/* One period of a group's breakpoints, in frames.  On a segment that
 * turns too fast, *fast is set and *bad is the offset of its rotation. */
static bool group_breaks(const gplay *gp, ra_breaks *b, bool *fast, uint64_t *bad)
{
    const niff_group *g = gp->g;
    if (!ra_breaks_push(b, 0)) return false;
    if (gp->kind == G_FULL) {
        for (uint32_t i = 0; i + 1 < gp->n; i++) {
            double turn = 0;
            for (int c = 0; c < 3; c++) turn += fabs((double)g->anims[i + 1].r[c] - g->anims[i].r[c]);
            *bad = g->anims[i + 1].offset + 24;
            if (!push_segment(b, i, i + 1, turn, fast)) return false;
        }
        return ra_breaks_push(b, gp->n ? gp->n - 1 : 0);
    }
    if (gp->kind == G_KEY) {
        for (uint32_t i = 0; i < gp->n; i++) {
            const niff_anim *a = &g->anims[gp->order[i]];
            if (i + 1 == gp->n) return ra_breaks_push(b, a->key);
            const niff_anim *n = &g->anims[gp->order[i + 1]];
            double turn = 0;
            for (int c = 0; c < 3; c++) turn += fabs((double)n->r[c] - a->r[c]);
            *bad = n->offset + 36;
            if (!push_segment(b, a->key, n->key, turn * ease_slope(a->interp), fast)) return false;
        }
        return true;
    }
    if (gp->kind == G_CHANNELS) {
        uint64_t pos = g->ch.offset + NIFF_CH_HEAD_BYTES;
        for (int c = 0; c < NIFF_CH_COUNT; c++) {
            const niff_chkey *k = g->ch.keys[c];
            unsigned rec = 8 + 8 * (unsigned)niff_channel_values[c];
            for (uint32_t i = 0; i < g->ch.count[c]; i++, pos += rec) {
                double turn = 0;
                if (i + 1 < g->ch.count[c]) {
                    if (c >= NIFF_CH_ROTATE_X && c <= NIFF_CH_ROTATE_Z) turn = chan_turn(&k[i], &k[i + 1], 0, 1);
                    if (c == NIFF_CH_ROTATE_AXIS)
                        turn = chan_turn(&k[i], &k[i + 1], 3, 1) + RA_PI * chan_turn(&k[i], &k[i + 1], 0, 3);
                    if (c == NIFF_CH_ORIENTATION_XY) turn = RA_PI * chan_turn(&k[i], &k[i + 1], 0, 6);
                }
                *bad = pos + rec + 8;
                if (!push_segment(b, k[i].key, i + 1 < g->ch.count[c] ? k[i + 1].key : k[i].key, turn, fast))
                    return false;
            }
        }
        return true;
    }
    return true;
}

/* How many periods of the group play inside `dur` frames. */
static double group_cycles(const gplay *gp, double dur)
{
    if (!(gp->period > 0)) return 1;
    double c = ceil(dur / gp->period);
    if (gp->loop && c > gp->loop) c = gp->loop;
    return c < 1 ? 1 : c;
}

/* One period of the group's breakpoints, sorted (group_breaks): RA_OK, or
 * what refuses them (a segment that turns too fast at *bad, or out of
 * memory); one.v is freed then. */
static ra_status period_breaks(const gplay *gp, ra_breaks *one, uint64_t *bad)
{
    bool fast = false;
    *bad = RA_NO_OFFSET;
    if (group_breaks(gp, one, &fast, bad) && ra_breaks_sort(one)) return RA_OK;
    ra_free(one->v);
    *one = (ra_breaks){0};
    return fast ? RA_ERR_BAD_VALUE : RA_ERR_NO_MEMORY;
}

/* The group's breakpoints over the scene (seconds), repeated per period,
 * from one period's (period_breaks' answer `st` and its arrays, which are
 * freed here). */
static ra_status scene_breaks(const gplay *gp, ra_status st, ra_breaks one, uint64_t bad, double dur, double fps,
                              ra_breaks *out, double *budget, ra_error *err)
{
    if (st == RA_ERR_BAD_VALUE)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, bad, "rotation",
                       "the rotation turns more than %d quarter turns between two keys", NIFF_MAX_CUTS);
    if (st != RA_OK) return ra_fail_nomem(err, FMT);
    double cycles = group_cycles(gp, dur);
    if (cycles * (double)(one.n + 1) > *budget) {
        ra_free(one.v);
        return ra_fail(err, RA_ERR_LIMIT, FMT, gp->g->offset, "anim_loop",
                       "too many keys to bake (an AnimGroup of %.9g frames plays %.0f times in the scene's %.9g "
                       "frames; a load bakes at most %u keys plus one per %u bytes of file)",
                       gp->period, cycles, dur, NIFF_BREAKS_BASE, NIFF_BREAK_BYTES);
    }
    *budget -= cycles * (double)(one.n + 1);
    bool ok = true;
    for (double c = 0; c < cycles && ok; c++) {
        double off = c * gp->period;
        for (size_t i = 0; i < one.n && ok; i++) {
            if (off + one.v[i] > dur) continue;
            double t = (off + one.v[i]) / fps;
            if (c > 0 && i == 0) {
                /* a seam: the end shows at t and until four float32 steps past it, so that players reading
                 * float32 (or float32 milliseconds) key times at t see the end, not the jump after it */
                float tf = (float)t;
                for (int k = 0; k < 4; k++) tf = nextafterf(tf, INFINITY);
                ok = ra_breaks_push(out, t);
                t = tf;
            }
            if (ok) ok = ra_breaks_push(out, t);
        }
    }
    if (ok && gp->period > 0) ok = ra_breaks_push(out, dur / fps); /* a loop cut by the end of the scene */
    ra_free(one.v);
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}

typedef struct bake_ctx {
    const nstate *st;
    int32_t node;
    ra_mat4 *world, *local;
    uint8_t *state;
} bake_ctx;

static ra_trs trs_of(const ra_mat4 *m)
{
    ra_trs r;
    if (!ra_m4_decompose(m, &r.t, &r.r, &r.s)) {
        r.t = origin(m);
        r.r = ra_q_identity();
        r.s = ra_v3(0, 0, 0);
    }
    return r;
}

static ra_trs bake_eval(const void *vctx, double t)
{
    const bake_ctx *c = vctx;
    const nstate *st = c->st;
    const gplay *gp = st->node_gp[c->node];
    double f = to_frame(st, t);
    if (gp && gp->kind != G_BILLBOARD && st->node_cam[c->node] < 0) return group_trs(gp, f);
    /* only the nodes this one depends on; its local matrix as computed */
    memset(c->state, 0, st->node_count);
    wctx w = {st, f, c->world, c->local, c->state, false, false};
    world_of(&w, c->node, 0);
    return trs_of(&c->local[c->node]);
}

/* The rotation change (radians, per axis) of a FULL group, or a KEY group
 * between two linearly interpolated keys, over the loop frames [l0, l1]
 * inside one interpolation span; false where the span is not such a piece
 * (eased keys, channels, or a span across a frame).  Constant values (held
 * before the first or after the last value): zero change. */
static bool linear_turn(const gplay *gp, double l0, double l1, double d[3])
{
    d[0] = d[1] = d[2] = 0;
    const niff_anim *an = gp->g->anims;
    if (gp->kind == G_FULL && gp->n) {
        double fl = floor(l0);
        if (fl >= gp->n - 1) return true;
        uint32_t i = (uint32_t)fl;
        if (l1 > (double)i + 1 + 1e-9) return false;
        for (int k = 0; k < 3; k++) d[k] = ((double)an[i + 1].r[k] - an[i].r[k]) * (l1 - l0);
        return true;
    }
    if (gp->kind != G_KEY || !gp->n) return false;
    uint32_t lo = 0, hi = gp->n - 1;
    if (l1 <= an[gp->order[0]].key || l0 >= an[gp->order[hi]].key) return true;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (an[gp->order[mid]].key <= l0) lo = mid;
        else hi = mid;
    }
    const niff_anim *a = &an[gp->order[lo]], *b = &an[gp->order[hi]];
    if (!(a->key <= l0 + 1e-9 && l1 <= b->key + 1e-9) || b->key <= a->key) return false;
    if (a->interp == NIFF_INTERP_STATIC) return true;
    if (ease(a->interp, 0.5) != 0.5 || ease(a->interp, 0.25) != 0.25) return false; /* eased: not linear */
    for (int k = 0; k < 3; k++) d[k] = ((double)b->r[k] - a->r[k]) * (l1 - l0) / ((double)b->key - a->key);
    return true;
}

/* The loop frames l0 <= l1 of the seconds t0 < t1, where the group's loop
 * frame moves with the frame between them (no wrap, not held at the end);
 * false otherwise. */
static bool loop_follows(const nstate *st, const gplay *gp, double t0, double t1, double *l0, double *l1)
{
    double f0 = to_frame(st, t0), f1 = to_frame(st, t1);
    *l0 = loop_frame(gp, f0), *l1 = loop_frame(gp, f1);
    return *l1 >= *l0 && fabs((*l1 - *l0) - (f1 - f0)) <= 1e-9 * (1 + fabs(f1));
}

/* The loop frames l0 <= l1 of the seconds t0 < t1 and the rotation change
 * over them (linear_turn) where the node plays its own group and [t0, t1]
 * lies in one of its linear interpolation spans (loop_follows); false
 * otherwise. */
static bool linear_span(const bake_ctx *c, double t0, double t1, double *l0, double *l1, double d[3])
{
    const nstate *st = c->st;
    const gplay *gp = st->node_gp[c->node];
    if (!gp || gp->kind == G_BILLBOARD || st->node_cam[c->node] >= 0) return false;
    return loop_follows(st, gp, t0, t1, l0, l1) && linear_turn(gp, *l0, *l1, d);
}

/* ra_bake_params.span_pieces for a node playing its own group: between two
 * frames of a FULL group (or two linear keys) translation and scale are
 * linear in time, which playback reproduces exactly, and the rotation is
 * the Euler angles interpolated linearly.  With a', b', c' the angles'
 * changes over the span (u in [0, 1]), the composed rotation's angular
 * velocity is a' e1 + b' R1 e2 + c' R1 R2 e3, whose derivative is at most
 * A = |a'b'| + |a'c'| + |b'c'|; the rotation then departs from the slerp of
 * its ends by at most A/8 radians, A/(8 n^2) in n equal pieces.  n is
 * chosen for half the tolerance (the bound leaves out terms of higher order
 * in the angle, kept small by pieces of at most 0.1 rad), and pieces of at
 * most half of max_key_angle. */
static uint32_t bake_span_pieces(const void *vctx, double t0, double t1, const ra_bake_params *p, bool *linear_ts)
{
    double l0, l1, d[3];
    if (!linear_span(vctx, t0, t1, &l0, &l1, d)) return 0;
    double a = fabs(d[0]), b = fabs(d[1]), cc = fabs(d[2]), acc = a * b + a * cc + b * cc, turn = a + b + cc;
    double n = ceil(sqrt(acc / (4 * p->angle_tol)));
    n = fmax(n, ceil(turn / fmin(0.1, 0.5 * p->max_key_angle)));
    if (!(n >= 1)) n = 1;
    *linear_ts = true;
    return n <= 65536 ? (uint32_t)n : 0;
}

/* ra_bake_params.continuous_at: a node playing its own FULL or KEY group is
 * continuous at t where its loop neither wraps nor holds within two step
 * epsilons either side (the loop frame moves with the frame), and, for a
 * KEY group, that stretch stays in one key's segment or crosses one key
 * whose segment before it is not STATIC (every other ease reaches 1 at its
 * end and starts from 0): FULL frames and KEY segments are continuous in
 * the loop frame.  Anything else (a seam, a step, two keys at one frame,
 * channels, cameras, billboards) keeps its samples at t - eps and t + eps. */
static bool bake_continuous(const void *vctx, double t)
{
    const bake_ctx *c = vctx;
    const nstate *st = c->st;
    const gplay *gp = st->node_gp[c->node];
    if (!gp || !gp->n || (gp->kind != G_FULL && gp->kind != G_KEY) || st->node_cam[c->node] >= 0) return false;
    double e = 2 * ra_step_epsilon(t), l0, l1;
    if (!loop_follows(st, gp, t - e, t + e, &l0, &l1)) return false; /* a wrap, or held */
    if (gp->kind == G_FULL) return true;
    uint32_t h0, h1, k0 = key_span(gp, l0, &h0), k1 = key_span(gp, l1, &h1);
    return k1 == k0 || (k1 == k0 + 1 && gp->g->anims[gp->order[k0]].interp != NIFF_INTERP_STATIC);
}

/* bake_span_rotations' samples: the cosines and sines of the half angles
 * at the first, turned by the step's from one to the next */
typedef struct span_turns {
    const nstate *st;
    const gplay *gp;
    double t0, t1;
    uint32_t np, j0, n;
    double cs[3], sn[3], dc[3], ds[3];
} span_turns;

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
turn_span(span_turns *p, int a0, int a1, int a2, ra_quat *out)
{
    const uint8_t axes[3] = {(uint8_t)a0, (uint8_t)a1, (uint8_t)a2};
    const nstate *st = p->st;
    double *cs = p->cs, *sn = p->sn;
    for (uint32_t k = 0; k < p->n; k++) {
        double t = p->t0 + (p->t1 - p->t0) * ((double)(p->j0 + k) / (double)p->np), f = to_frame(st, t);
        out[k] = f != t * st->fps ? group_trs(p->gp, f).r : euler_quat_cs(axes, cs, sn);
        for (int a = 0; a < 3; a++) {
            double x = cs[a] * p->dc[a] - sn[a] * p->ds[a];
            sn[a] = sn[a] * p->dc[a] + cs[a] * p->ds[a];
            cs[a] = x;
        }
    }
}

/* ra_bake_params.span_rotations on such a span: each half angle moves by a
 * constant step per piece (linear_turn's change over np), so its cosine and
 * sine are turned by the step's (one complex product) instead of a sincos
 * per sample.  Each batch starts from a direct sincos: 32 products drift by
 * a few 1e-16 rad.  A sample whose time to_frame snaps to a whole frame is
 * evaluated as the game has it. */
static bool bake_span_rotations(const void *vctx, double t0, double t1, uint32_t np, uint32_t j0, uint32_t n,
                                ra_quat *out)
{
    const bake_ctx *c = vctx;
    const nstate *st = c->st;
    const gplay *gp = st->node_gp[c->node];
    double l0, l1, d[3], v0[9];
    if (!linear_span(c, t0, t1, &l0, &l1, d)) return false;
    group_values(gp, l0, v0);
    double cs[3], sn[3], dc[3], ds[3];
    for (int a = 0; a < 3; a++) {
        double step = 0.5 * d[a] / np, h = 0.5 * v0[3 + a] + step * j0;
        cs[a] = cos(h), sn[a] = sin(h), dc[a] = cos(step), ds[a] = sin(step);
    }
    span_turns span = {st,
                       gp,
                       t0,
                       t1,
                       np,
                       j0,
                       n,
                       {cs[0], cs[1], cs[2]},
                       {sn[0], sn[1], sn[2]},
                       {dc[0], dc[1], dc[2]},
                       {ds[0], ds[1], ds[2]}};
    /* the order of axes a constant in each loop, so that euler_quat_cs's
     * choices of axis fold away (the same products) */
    switch (gp->axes[0] * 9 + gp->axes[1] * 3 + gp->axes[2]) {
    case 0 * 9 + 1 * 3 + 2: turn_span(&span, 0, 1, 2, out); break;
    case 0 * 9 + 2 * 3 + 1: turn_span(&span, 0, 2, 1, out); break;
    case 1 * 9 + 0 * 3 + 2: turn_span(&span, 1, 0, 2, out); break;
    case 1 * 9 + 2 * 3 + 0: turn_span(&span, 1, 2, 0, out); break;
    case 2 * 9 + 0 * 3 + 1: turn_span(&span, 2, 0, 1, out); break;
    case 2 * 9 + 1 * 3 + 0: turn_span(&span, 2, 1, 0, out); break;
    default: turn_span(&span, gp->axes[0], gp->axes[1], gp->axes[2], out); break;
    }
    return true;
}

/* ---- building the playback of each group ----------------------------------------------------------------- */
typedef struct keyref {
    uint32_t key, index;
} keyref;

static int cmp_keyref(const void *x, const void *y)
{
    const keyref *a = x, *b = y;
    return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->index < b->index ? -1 : a->index > b->index);
}

/* The KEY chain from Anim(0) (RULES.md "KEY"). */
static ra_status key_chain(ra_document *doc, gplay *gp, size_t *unused, ra_error *err)
{
    const niff_group *g = gp->g;
    uint32_t n = g->anim_num;
    keyref *sorted = ra_malloc((n ? n : 1) * sizeof *sorted);
    uint8_t *seen = ra_calloc(n ? n : 1, 1);
    gp->order = ra_arena_array(doc->arena, n, sizeof *gp->order);
    if (!sorted || !seen || !gp->order) {
        ra_free(sorted);
        ra_free(seen);
        return ra_fail_nomem(err, FMT);
    }
    for (uint32_t i = 0; i < n; i++) sorted[i] = (keyref){g->anims[i].key, i};
    qsort(sorted, n, sizeof *sorted, cmp_keyref);
    ra_status rs = RA_OK;
    uint32_t cur = 0;
    gp->n = 0;
    while (n) {
        gp->order[gp->n++] = cur;
        seen[cur] = 1;
        const niff_anim *a = &g->anims[cur];
        if (a->next_key == NIFF_NONE) break;
        int64_t next = -1;
        if (a->next_key > a->key) {
            if (cur + 1 < n && g->anims[cur + 1].key == a->next_key && !seen[cur + 1]) {
                next = cur + 1;
            } else {
                size_t lo = 0, hi = n;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (sorted[mid].key < a->next_key) lo = mid + 1;
                    else hi = mid;
                }
                for (; lo < n && sorted[lo].key == a->next_key && next < 0; lo++)
                    if (!seen[sorted[lo].index]) next = sorted[lo].index;
            }
        }
        if (next < 0) {
            if (cur + 1 == n) {
                ra_scene_warn(
                    &doc->scene,
                    "the last KEY Anim's next_key is neither 0xFFFFFFFF nor a later key; the chain ends there");
                break;
            }
            rs = ra_fail(err, RA_ERR_BAD_VALUE, FMT, a->offset + 16, "next_key",
                         a->next_key <= a->key ? "next_key %u does not come after this Anim's key %u"
                                               : "next_key %u names no Anim of the group (this Anim's key is %u)",
                         a->next_key, a->key);
            break;
        }
        cur = (uint32_t)next;
    }
    *unused += n - gp->n;
    ra_free(sorted);
    ra_free(seen);
    return rs;
}

static ra_status make_play(ra_document *doc, const niff_group *g, gplay *gp, ra_error *err)
{
    ra_scene *s = &doc->scene;
    gp->g = g;
    gp->loop = g->loop;
    int ro = rot_order_index(g->rot_order);
    if (ro < 0) {
        ra_scene_warn(s, "unknown anim_rot_mtx_order value(s); XYZ used");
        ro = 0;
    } else if (ro == 3 || ro == 4) {
        ra_scene_warn(s, "rotation order YZX or ZXY: read with the specification's names (Nintendo's previewer reads "
                         "these two codes the other way round)");
    }
    memcpy(gp->axes, rot_orders[ro].axes, 3);
    for (int i = 0; i < 9; i++) gp->base[i] = i >= 6 ? 1 : 0;
    if (g->anim_num && is_trs_tag(g->anims[0].tag)) anim_values(&g->anims[0], gp->base);
    const char *want = NULL;
    if (g->has_channels && g->ch.use) {
        gp->kind = G_CHANNELS;
        for (int c = 0; c < NIFF_CH_COUNT; c++)
            for (uint32_t k = 0; k < g->ch.count[c]; k++) {
                if (g->ch.keys[c][k].key > gp->period) gp->period = g->ch.keys[c][k].key;
                if (g->ch.keys[c][k].interp > NIFF2_INTERP_HERMITE)
                    ra_scene_warn(s, "unknown NIFF 2 channel interpolation type(s); played as linear");
            }
        if (g->ch.use & ~0xFFu)
            ra_scene_warn(s, "NIFF 2 constraint channels are not played (their settings are in metadata)");
        if (g->ch.count[NIFF_CH_UNIQUE_SCALE] && !g->ch.count[NIFF_CH_CLASSICAL_SCALE])
            ra_scene_warn(s, "NIFF 2 unique scale is played as an ordinary (classical) scale");
        return RA_OK;
    }
    switch (g->type) {
    case NIFF_ANIM_FULL:
        gp->kind = G_FULL;
        gp->n = g->anim_num;
        gp->period = g->anim_num ? g->anim_num - 1 : 0;
        want = "FULL";
        break;
    case NIFF_ANIM_KEY:
        gp->kind = G_KEY;
        want = "KEY";
        break;
    case NIFF_ANIM_BILLBOARD:
        gp->kind = g->anim_num ? G_BILLBOARD : G_IDENTITY;
        gp->bb = g->anim_num ? &g->anims[0] : NULL;
        want = "BILLBOARD_OBJ";
        break;
    default:
        if (g->type != NIFF_ANIM_STATIC) ra_scene_warn(s, "unknown anim_type value(s); played as STATIC");
        gp->kind = g->anim_num && is_trs_tag(g->anims[0].tag) ? G_CONST : G_IDENTITY;
        if (g->anim_num > 1) ra_scene_warn(s, "a STATIC AnimGroup holds more than one Anim; Anim(0) is used");
        return RA_OK;
    }
    /* each Anim is read again only where the reader's summary does not
     * show them all of the group's kind (with known KEY interpolations):
     * where an error or a warning is due, or the summary was not made */
    const unsigned plain = gp->kind == G_KEY    ? NIFF_ANIM_TAGS_KEY
                           : gp->kind == G_FULL ? NIFF_ANIM_TAGS_TRS
                                                : NIFF_ANIM_TAGS_BILLBOARD;
    const bool checked = (g->anim_tags & NIFF_ANIM_TAGS_READ) && !(g->anim_tags & ~(NIFF_ANIM_TAGS_READ | plain));
    for (uint32_t i = 0; !checked && i < g->anim_num; i++) {
        uint32_t tag = g->anims[i].tag;
        bool ok = gp->kind == G_KEY    ? tag == NIFF_TAG_ANIM_KEY
                  : gp->kind == G_FULL ? is_trs_tag(tag) && tag != NIFF_TAG_ANIM_KEY
                                       : tag == NIFF_TAG_ANIM_BILLBOARD;
        if (!ok)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, g->anims[i].offset, "anim_tag",
                           "a %s AnimGroup holds an Anim with the tag 0x%08x", want, tag);
        if (gp->kind == G_KEY && g->anims[i].interp != NIFF_INTERP_STATIC && g->anims[i].interp != NIFF_INTERP_LINEAR &&
            g->anims[i].interp != NIFF_INTERP_SLOWIN && g->anims[i].interp != NIFF_INTERP_SLOWOUT &&
            g->anims[i].interp != NIFF_INTERP_SLOW)
            ra_scene_warn(s, "unknown KEY interpolation type(s); played as linear");
    }
    if (gp->kind == G_KEY) {
        size_t unused = 0;
        ra_status rs = key_chain(doc, gp, &unused, err);
        if (rs != RA_OK) return rs;
        if (unused) ra_scene_warn(s, "KEY Anims that the next_key chain from Anim(0) does not reach are not played");
        gp->period = gp->n ? g->anims[gp->order[gp->n - 1]].key : 0;
        if (!gp->n) gp->kind = G_IDENTITY;
    }
    return RA_OK;
}

/* ---- nodes ----------------------------------------------------------------------------------------------- */
static const char *name_text(const niff_file *f, uint32_t idx)
{
    return idx < f->name_count ? f->names[idx].text : NULL;
}

/* Placeable items: the objects (ObjList order), then the IK chain roots,
 * joints and effectors (docs/formats/niff.md §3 "IK chains"). */
static uint32_t item_count(const niff_file *f)
{
    return f->obj_count + f->chain_count[0] + f->chain_count[1] + f->chain_count[2];
}

/* The chain element of item i (NULL for an object). */
static const niff_chain *item_chain(const niff_file *f, uint32_t i)
{
    if (i < f->obj_count) return NULL;
    i -= f->obj_count;
    for (uint32_t k = 0; k < 3; k++) {
        if (i < f->chain_count[k]) return &f->chains[k][i];
        i -= f->chain_count[k];
    }
    return NULL;
}

/* The item number of chain element `index` of kind k. */
static uint32_t chain_item(const niff_file *f, uint32_t k, uint32_t index)
{
    uint32_t i = f->obj_count;
    for (uint32_t j = 0; j < k; j++) i += f->chain_count[j];
    return i + index;
}

/* Item, then camera node names (RULES.md "Scene nodes"), unique in that
 * order, and after them the root's: `root`, which they avoid. */
static const char **node_names(ra_arena *ar, const niff_file *f, const char *root)
{
    static const char *const kinds[3] = {"chain_root", "joint", "effector"};
    uint32_t items = item_count(f);
    size_t n = (size_t)items + f->cam_count;
    const char **names = root ? ra_arena_array(ar, n + 1, sizeof *names) : NULL;
    if (!names) return NULL;
    names[n] = root;
    for (uint32_t i = 0; i < items; i++) {
        const niff_chain *c = item_chain(f, i);
        const char *t = name_text(f, c ? c->name_index : f->objs[i].name_index);
        if (t && *t) names[i] = t;
        else if (c) names[i] = ra_arena_printf(ar, "%s%u", kinds[c->kind], (unsigned)(c - f->chains[c->kind]));
        else names[i] = ra_arena_printf(ar, "obj%u", i);
        if (!names[i]) return NULL;
    }
    for (uint32_t i = 0; i < f->cam_count; i++) {
        const char *t = name_text(f, f->cams[i].name_index);
        names[items + i] = t && *t ? t : ra_arena_printf(ar, "cam%u", i);
        if (!names[items + i]) return NULL;
    }
    return ra_names_make_unique(ar, names, n, &root, 1) ? names : NULL;
}

typedef struct frame {
    uint32_t item, next; /* next link to follow */
    int32_t node;
} frame;

/* An item's links in the order they are followed: an object's children, LOD
 * objects and chain roots; a chain element's objects, then its next joint
 * and its effector. */
static uint32_t link_count(const niff_file *f, uint32_t i)
{
    const niff_chain *c = item_chain(f, i);
    if (c) return c->obj.n + (c->joint_index != NIFF_NONE) + (c->effector_index != NIFF_NONE);
    const niff_obj *o = &f->objs[i];
    return o->state == NIFF_OBJ_CLEAR ? 0 : o->child.n + o->lod_num + o->chain_root.n;
}

/* Link k of item i as an item number (UINT32_MAX for a link to none), its field and the field's offset. */
static uint32_t link_at(const niff_file *f, uint32_t i, uint32_t k, uint64_t *off, const char **field)
{
    const niff_chain *c = item_chain(f, i);
    if (c) {
        *off = c->offset;
        if (k < c->obj.n) {
            *field = "obj_index";
            *off += (c->kind == NIFF_CHAIN_JOINT ? 64u : c->kind == NIFF_CHAIN_ROOT ? 44u : 40u) + 4ull * k;
            return c->obj.v[k] == NIFF_NONE ? UINT32_MAX : c->obj.v[k];
        }
        if (k == c->obj.n && c->joint_index != NIFF_NONE) {
            *field = "joint_index";
            *off += c->kind == NIFF_CHAIN_JOINT ? 44u : 32u;
            return chain_item(f, NIFF_CHAIN_JOINT, c->joint_index);
        }
        *field = "effector_index";
        *off += 48;
        return chain_item(f, NIFF_CHAIN_EFFECTOR, c->effector_index);
    }
    const niff_obj *o = &f->objs[i];
    if (k < o->child.n) {
        *field = "obj_child_link";
        *off = o->offset + 88 + 8ull * o->lod_num + 4ull * k;
        return o->child.v[k];
    }
    k -= o->child.n;
    if (k < o->lod_num) {
        *field = "obj_lod_link";
        *off = o->offset + 88 + 4ull * o->lod_num + 4ull * k;
        return o->lod_link[k];
    }
    *field = "obj_chain_root_link";
    *off = o->chain_root_offset + 4ull * (k - o->lod_num);
    uint32_t link = o->chain_root.v[k - o->lod_num];
    return link == NIFF_NONE ? UINT32_MAX : chain_item(f, NIFF_CHAIN_ROOT, link);
}

/* Places item `root` and its subtree under the scene root, depth first. */
static ra_status place_tree(ra_document *doc, nstate *st, const char **names, uint32_t root, frame *stack,
                            uint8_t *on_path, size_t *dup_links, size_t *dup_chain, int max_depth, ra_error *err)
{
    const niff_file *f = st->f;
    ra_scene *s = &doc->scene;
    ra_mat4 id = ra_m4_identity();
    size_t top = 0;
    int32_t node = ra_scene_add_node(s, names[root], 0, &id);
    if (node < 0) return ra_fail_nomem(err, FMT);
    st->obj_node[root] = node;
    stack[top++] = (frame){root, 0, node};
    on_path[root] = 1;
    while (top) {
        frame *fr = &stack[top - 1];
        if (fr->next >= link_count(f, fr->item)) {
            on_path[fr->item] = 0;
            top--;
            continue;
        }
        uint64_t off = 0;
        const char *field = "";
        uint32_t c = link_at(f, fr->item, fr->next++, &off, &field);
        if (c == UINT32_MAX) continue;
        bool chain = c >= f->obj_count;
        if (on_path[c] && !chain)
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT, off, field, "object %u links to its own ancestor %u (a cycle)",
                           fr->item, c);
        if (st->obj_node[c] >= 0) {
            (*(chain ? dup_chain : dup_links))++;
            continue;
        }
        if ((int)top >= max_depth)
            return ra_fail(err, RA_ERR_LIMIT, FMT, off, field, "the object tree is deeper than max_depth=%d",
                           max_depth);
        node = ra_scene_add_node(s, names[c], fr->node, &id);
        if (node < 0) return ra_fail_nomem(err, FMT);
        st->obj_node[c] = node;
        if (!strcmp(field, "obj_lod_link")) { /* link fr->next - 1: after the object's children */
            st->lod_by[c] = (int32_t)fr->item;
            st->lod_k[c] = fr->next - 1 - f->objs[fr->item].child.n;
        }
        on_path[c] = 1;
        stack[top++] = (frame){c, 0, node};
    }
    return RA_OK;
}

static bool set_group_meta(ra_arena *ar, ra_meta_list *md, const niff_file *f, uint32_t gi, const char *const *names);

static bool set_obj_meta(ra_arena *ar, ra_meta_list *md, const niff_file *f, uint32_t i, const char *const *names)
{
    const niff_obj *o = &f->objs[i];
    static const char *const types[3] = {"NULL", "3D", "BILLBOARD"};
    bool ok = ra_meta_set_int(ar, md, "niff.obj_index", i) &&
              ra_meta_set_string(ar, md, "niff.obj_type", o->type < 3 ? types[o->type] : "unknown") &&
              ra_meta_set_bool(ar, md, "niff.obj_active", o->state != NIFF_OBJ_CLEAR);
    if (ok && o->have_link_billboard) ok = ra_meta_set_bool(ar, md, "niff.have_link_billboard", true);
    if (ok && o->shape_link != NIFF_NONE) ok = ra_meta_set_int(ar, md, "niff.shape_link", o->shape_link);
    if (!ok || o->anim_link == NIFF_NONE || o->state == NIFF_OBJ_CLEAR) return ok;
    return set_group_meta(ar, md, f, o->anim_link, names);
}

/* A chain element's fields, and those of its group. */
static bool set_chain_meta(ra_arena *ar, ra_meta_list *md, const niff_file *f, const niff_chain *c,
                           const char *const *names)
{
    static const char *const kinds[3] = {"chain_root", "joint", "effector"};
    bool ok = ra_meta_set_string(ar, md, "niff.chain_kind", kinds[c->kind]) &&
              ra_meta_set_int(ar, md, "niff.chain_index", c - f->chains[c->kind]);
    if (ok && c->kind == NIFF_CHAIN_JOINT)
        ok = ra_meta_set_int(ar, md, "niff.joint_type", c->type) &&
             ra_meta_set_double(ar, md, "niff.joint_length", c->length);
    if (!ok || c->anim_index == NIFF_NONE) return ok;
    return set_group_meta(ar, md, f, c->anim_index, names);
}

/* The fields of AnimGroup gi on the node that plays it. */
static bool set_group_meta(ra_arena *ar, ra_meta_list *md, const niff_file *f, uint32_t gi, const char *const *names)
{
    bool ok = true;
    const niff_group *g = &f->groups[gi];
    static const char *const kinds[5] = {"STATIC", "?", "FULL", "KEY", "BILLBOARD_OBJ"};
    int ro = rot_order_index(g->rot_order);
    ok = ra_meta_set_int(ar, md, "niff.anim_group", gi) &&
         ra_meta_set_string(ar, md, "niff.anim_type", g->type < 5 && g->type != 1 ? kinds[g->type] : "unknown") &&
         ra_meta_set_int(ar, md, "niff.frame_rate", g->frame_rate) &&
         ra_meta_set_int(ar, md, "niff.anim_loop", g->loop) &&
         ra_meta_set_string(ar, md, "niff.rot_order", ro >= 0 ? rot_orders[ro].name : "XYZ (unknown code)");
    const char *gn = name_text(f, g->name_index);
    if (ok && gn) ok = ra_meta_set_string(ar, md, "niff.anim_name", gn);
    if (ok && g->has_channels && g->ch.use) ok = ra_meta_set_int(ar, md, "niff.use_animation_channel", g->ch.use);
    if (ok && g->has_channels && (g->ch.use & ~0xFFu)) {
        char buf[28 * 12 + 4] = "[";
        for (int k = 0; k < 28; k++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%u", k ? "," : "", g->ch.constraint[k]);
        strcat(buf, "]");
        ok = ra_meta_set_string(ar, md, "niff.constraints", buf);
    }
    if (ok && g->type == NIFF_ANIM_BILLBOARD && g->anim_num && g->anims[0].tag == NIFF_TAG_ANIM_BILLBOARD) {
        const niff_anim *a = &g->anims[0];
        if (a->lookat_obj != NIFF_NONE) ok = ra_meta_set_string(ar, md, "niff.billboard.lookat", names[a->lookat_obj]);
        if (ok && a->upper_obj != NIFF_NONE)
            ok = ra_meta_set_string(ar, md, "niff.billboard.upper", names[a->upper_obj]);
    }
    return ok;
}

/* The groups a node's transform depends on: its ancestors' and, for a
 * camera or billboard, those of the objects that aim it (marks in `seen`).
 * *cut is set when aims deeper than NIFF_MAX_AIM_DEPTH were not followed
 * (the marks may then miss a group that world_of reads). */
static void collect_deps(const nstate *st, int32_t node, uint8_t *seen, uint8_t *gseen, int depth, bool *cut)
{
    for (int32_t n = node; n >= 0 && !seen[n]; n = st->parent[n]) {
        seen[n] = 1;
        const gplay *gp = st->node_gp[n];
        if (gp) gseen[gp - st->gp] = 1;
        if (depth > NIFF_MAX_AIM_DEPTH) {
            *cut = true;
            continue;
        }
        int32_t cam = st->node_cam[n];
        if (cam >= 0) {
            const niff_cam *c = &st->f->cams[cam];
            const uint32_t t[3] = {c->eye_obj, c->lookat_obj, c->up_obj};
            for (int k = 0; k < 3; k++)
                if (t[k] != NIFF_NONE) collect_deps(st, st->obj_node[t[k]], seen, gseen, depth + 1, cut);
        } else if (gp && gp->kind == G_BILLBOARD) {
            if (st->bb_look[n] >= 0) collect_deps(st, st->bb_look[n], seen, gseen, depth + 1, cut);
            if (st->bb_up[n] >= 0) collect_deps(st, st->bb_up[n], seen, gseen, depth + 1, cut);
        }
    }
}

/* A channel to bake (the others share a group's keys): its node and, for a
 * camera or billboard, the breakpoints of every group it depends on. */
typedef struct bake_job {
    int32_t node;
    ra_channel *ch;
    ra_breaks own; /* dependent channels: their breakpoints; else empty */
    const ra_breaks *breaks;
    size_t dep0, ndep; /* the groups whose records it reads: bake_deps.v[dep0 ..] */
} bake_job;

/* The groups each job reads, for freeing a group's records after the last
 * job that reads them (ra_document.free_bulk_early).  ok false: nothing is
 * freed early, for more than max entries (many cameras each depending on
 * many groups); false from deps_push: out of memory. */
typedef struct bake_deps {
    uint32_t *v;
    size_t n, cap, max;
    bool ok;
} bake_deps;

static bool deps_push(bake_deps *d, uint32_t g)
{
    if (!d->ok) return true;
    if (d->n == d->max) {
        d->ok = false;
        return true;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        uint32_t *v = cap < SIZE_MAX / sizeof *v ? ra_realloc(d->v, cap * sizeof *v) : NULL;
        if (!v) return d->ok = false;
        d->v = v, d->cap = cap;
    }
    d->v[d->n++] = g;
    return true;
}

/* fn (use or drop) on each of a group's record arrays. */
static void group_chunks(ra_key_chunks *k, const niff_group *g, void (*fn)(ra_key_chunks *, const void *))
{
    if (g->anim_num) fn(k, g->anims);
    for (int c = 0; c < NIFF_CH_COUNT; c++)
        if (g->ch.count[c]) fn(k, g->ch.keys[c]);
}

/* Each worker's world/local/state scratch for dependent channels. */
typedef struct bake_scratch {
    ra_mat4 *world; /* 2 x nodes: world, then local */
    uint8_t *state;
} bake_scratch;

typedef struct bake_jobs {
    const nstate *st;
    bake_job *jobs;
    bake_scratch *scratch; /* one per worker */
    const ra_bake_params *bp;
    ra_key_chunks *bulk; /* the model's records, freed as the jobs end (NULL: kept) */
    const uint32_t *deps;
} bake_jobs;

static ra_status bake_one(void *vctx, size_t j, ra_worker *w, ra_error *err)
{
    const bake_jobs *bj = vctx;
    const bake_job *job = &bj->jobs[j];
    const nstate *st = bj->st;
    bake_scratch *sc = &bj->scratch[w->index];
    if (!sc->world) {
        sc->world = ra_malloc(2 * st->node_count * sizeof *sc->world);
        sc->state = ra_malloc(st->node_count ? st->node_count : 1);
        if (!sc->world || !sc->state) return ra_fail_nomem(err, FMT);
    }
    ra_bake_params bp = *bj->bp;
    bp.samples_left = &w->samples_left;
    bake_ctx ctx = {st, job->node, sc->world, sc->world + st->node_count, sc->state};
    ra_status rs = ra_bake_channel(w->arena, bake_eval, &ctx, job->breaks->v, job->breaks->n, &bp, job->ch, err);
    for (size_t k = 0; bj->bulk && k < job->ndep; k++)
        group_chunks(bj->bulk, &st->f->groups[bj->deps[job->dep0 + k]], ra_key_chunks_drop);
    return rs;
}

/* One period of every group's breakpoints (period_breaks) as jobs of
 * ra_parallel_for, before bake_animation takes them in group order: the
 * groups some node plays, but IDENTITY, CONST and BILLBOARD (st[g]
 * PERIOD_NONE).  A job stores its answer (RA_OK, RA_ERR_BAD_VALUE at
 * bad[g], RA_ERR_NO_MEMORY); once the periods made hold more entries than
 * the whole breakpoint budget the jobs after it make none (PERIOD_LATER),
 * and bake_animation makes them in turn, after the budget has refused the
 * file or not: so the arrays held at once stay within the budget and a
 * few groups, and every answer is the one of the groups in order.  (Jobs
 * are handed out in group order, so the periods made when a group starts
 * are mostly of groups before it, and past the budget the budget refuses
 * the file before that group is reached; but a job held up after taking
 * its group may see later groups' periods, and such a PERIOD_LATER group
 * is reached.) */
enum {
    PERIOD_NONE = -1,
    PERIOD_LATER = -2
};
typedef struct period_jobs {
    const nstate *st;
    const uint8_t *gseen;
    int32_t *status; /* per group: PERIOD_NONE, PERIOD_LATER or a ra_status */
    ra_breaks *one;
    uint64_t *bad;
    double budget;
    atomic_size_t made; /* entries of the periods made */
} period_jobs;

static ra_status period_job(void *ctx, size_t g, ra_worker *w, ra_error *err)
{
    (void)w;
    (void)err;
    period_jobs *pj = ctx;
    const gplay *gp = &pj->st->gp[g];
    if (!pj->gseen[g] || gp->kind == G_IDENTITY || gp->kind == G_CONST || gp->kind == G_BILLBOARD) {
        pj->status[g] = PERIOD_NONE;
        return RA_OK;
    }
    if ((double)atomic_load(&pj->made) > pj->budget) {
        pj->status[g] = PERIOD_LATER;
        return RA_OK;
    }
    pj->status[g] = (int32_t)period_breaks(gp, &pj->one[g], &pj->bad[g]);
    atomic_fetch_add(&pj->made, pj->one[g].n);
    return RA_OK;
}

/* The jobs of period_jobs, on the load's threads (pj->status stays NULL
 * for a file without groups). */
static ra_status plan_periods(ra_document *doc, period_jobs *pj, ra_error *err)
{
    const niff_file *f = pj->st->f;
    size_t n = f->group_count;
    if (!n) return RA_OK;
    double work = 0; /* the records the periods read */
    for (size_t g = 0; g < n; g++) {
        if (!pj->gseen[g]) continue;
        work += f->groups[g].anim_num;
        for (int c = 0; c < NIFF_CH_COUNT; c++) work += f->groups[g].ch.count[c];
    }
    pj->status = ra_malloc(n * sizeof *pj->status);
    pj->one = ra_calloc(n, sizeof *pj->one);
    pj->bad = ra_malloc(n * sizeof *pj->bad);
    if (!pj->status || !pj->one || !pj->bad) {
        ra_free(pj->status);
        ra_free(pj->one);
        ra_free(pj->bad);
        pj->status = NULL, pj->one = NULL, pj->bad = NULL;
        return ra_fail_nomem(err, FMT);
    }
    atomic_init(&pj->made, 0);
    return ra_parallel_for(doc, ra_document_threads(doc, work), n, period_job, pj, NULL, err);
}

static void free_periods(period_jobs *pj, size_t n)
{
    for (size_t g = 0; pj->one && g < n; g++) ra_free(pj->one[g].v);
    ra_free(pj->status);
    ra_free(pj->one);
    ra_free(pj->bad);
}

/* One animation over `dur` frames: a channel per animated object (objects
 * sharing a group share its keys), then the cameras and billboards, sampled
 * at the breakpoints of every group they depend on.  The channels to bake
 * are planned first (in order, with the breakpoint budget), then baked as
 * jobs of ra_parallel_for, then the sharing channels take their keys. */
static ra_status bake_animation(ra_document *doc, nstate *st, double dur, double max_key_angle, ra_error *err)
{
    const niff_file *f = st->f;
    ra_arena *ar = doc->arena;
    ra_scene *s = &doc->scene;
    size_t nodes = st->node_count;
    ra_animation *an = ra_arena_alloc(ar, sizeof *an);
    int32_t *first_ch = ra_arena_array(ar, f->group_count, sizeof *first_ch);
    int32_t *share_of = ra_arena_array(ar, nodes, sizeof *share_of); /* channel -> channel it shares; -1 */
    ra_breaks *gb = ra_calloc(f->group_count ? f->group_count : 1, sizeof *gb);
    bake_job *jobs = ra_calloc(nodes ? nodes : 1, sizeof *jobs);
    uint8_t *seen = ra_malloc(nodes), *gseen = ra_malloc(f->group_count ? f->group_count : 1);
    ra_status rs = RA_OK;
    if (!an || !first_ch || !share_of || !gb || !jobs || !seen || !gseen ||
        !(an->channels = ra_arena_array(ar, nodes, sizeof *an->channels)))
        rs = ra_fail_nomem(err, FMT);
    double budget = NIFF_BREAKS_BASE + (double)doc->source_size / NIFF_BREAK_BYTES;
    ra_bake_params bp;
    size_t samples_left;
    ra_document_bake_params(doc, &bp, &samples_left);
    bp.max_key_angle = max_key_angle;
    /* NIFF's curves (eased KEY segments, Hermite channels, Euler
     * interpolation) are not linear in anything: at the default 1e-6 a
     * smoothstep of a few units needs ~800 keys.  1e-5 relative and 1e-5 rad
     * keep consumers within 1e-4 of the game at a third of the keys. */
    bp.value_tol = NIFF_VALUE_TOL;
    bp.angle_tol = NIFF_ANGLE_TOL;
    bp.span_pieces = bake_span_pieces;
    bp.span_rotations = bake_span_rotations;
    bp.continuous_at = bake_continuous;
    double kt = ra_options_get_double(&doc->options, "key_tolerance", 0);
    if (kt > 0) bp.value_tol = bp.angle_tol = kt;
    if (gseen) memset(gseen, 0, f->group_count ? f->group_count : 1);
    for (size_t n = 0; gseen && n < nodes; n++)
        if (st->node_gp[n]) gseen[st->node_gp[n] - st->gp] = 1; /* groups some node plays */
    period_jobs pj = {.st = st, .gseen = gseen, .budget = budget};
    if (rs == RA_OK) rs = plan_periods(doc, &pj, err);
    for (uint32_t i = 0; rs == RA_OK && i < f->group_count; i++) {
        first_ch[i] = -1;
        const gplay *gp = &st->gp[i];
        if (!pj.status || pj.status[i] == PERIOD_NONE) continue;
        ra_breaks one = pj.one[i];
        uint64_t bad = pj.bad[i];
        ra_status ps = pj.status[i] == PERIOD_LATER ? period_breaks(gp, &one, &bad) : (ra_status)pj.status[i];
        pj.one[i] = (ra_breaks){0};
        if ((rs = scene_breaks(gp, ps, one, bad, dur, st->fps, &gb[i], &budget, err)) == RA_OK &&
            !ra_breaks_sort(&gb[i]))
            rs = ra_fail_nomem(err, FMT);
    }
    free_periods(&pj, f->group_count);
    /* the plan; a breakpoint budget overrun stops it, after the jobs before it */
    size_t njobs = 0;
    ra_status late = RA_OK;
    ra_error late_err;
    ra_error_clear(&late_err);
    double work = 0;
    bake_deps deps = {NULL, 0, 0, 4 * ((size_t)f->group_count + nodes) + 1024, doc->free_bulk_early};
    for (size_t n = 1; rs == RA_OK && late == RA_OK && n < nodes; n++) {
        const gplay *gp = st->node_gp[n];
        bool dependent = st->node_cam[n] >= 0 || (gp && gp->kind == G_BILLBOARD);
        if (!dependent && (!gp || gp->kind == G_CONST)) continue;
        ra_channel *ch = &an->channels[an->channel_count];
        ch->node = (uint32_t)n;
        ch->pre_state = ch->post_state = RA_BEHAVIOUR_DEFAULT;
        share_of[an->channel_count] = -1;
        if (!dependent) {
            uint32_t gi = (uint32_t)(gp - st->gp);
            if (gp->loop == 0 && gp->period > 0) ch->pre_state = ch->post_state = RA_BEHAVIOUR_REPEAT;
            if (first_ch[gi] >= 0) {
                share_of[an->channel_count] = first_ch[gi];
            } else {
                jobs[njobs++] = (bake_job){(int32_t)n, ch, {0}, &gb[gi], deps.n, 1};
                if (!deps_push(&deps, gi)) late = ra_fail_nomem(&late_err, FMT);
                work += (double)gb[gi].n;
                first_ch[gi] = (int32_t)an->channel_count;
            }
            an->channel_count++;
            continue;
        }
        memset(seen, 0, nodes);
        memset(gseen, 0, f->group_count);
        bool cut = false;
        collect_deps(st, (int32_t)n, seen, gseen, 0, &cut);
        ra_breaks all = {0};
        bool ok = ra_breaks_push(&all, 0) && ra_breaks_push(&all, dur / st->fps);
        for (uint32_t g = 0; ok && g < f->group_count; g++)
            for (size_t k = 0; ok && gseen[g] && k < gb[g].n; k++) ok = ra_breaks_push(&all, gb[g].v[k]);
        if (!ok || !ra_breaks_sort(&all)) {
            ra_free(all.v);
            late = ra_fail_nomem(&late_err, FMT);
            break;
        }
        size_t m = 0;
        for (size_t k = 0; k < all.n; k++)
            if (!m || all.v[k] != all.v[m - 1]) all.v[m++] = all.v[k];
        all.n = m;
        if ((double)all.n > budget) {
            ra_free(all.v);
            late = ra_fail(&late_err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "",
                           "too many keys to bake (cameras and billboards are sampled at every key of the objects "
                           "that place them; a load bakes at most %u keys plus one per %u bytes of file)",
                           NIFF_BREAKS_BASE, NIFF_BREAK_BYTES);
            break;
        }
        budget -= (double)all.n;
        work += (double)all.n * (double)nodes;
        jobs[njobs] = (bake_job){(int32_t)n, ch, all, NULL, deps.n, 0};
        jobs[njobs].breaks = &jobs[njobs].own;
        bool pushed = true;
        for (uint32_t g = 0; pushed && g < f->group_count; g++)
            if (cut || gseen[g]) pushed = deps_push(&deps, g);
        jobs[njobs].ndep = deps.n - jobs[njobs].dep0;
        if (!pushed) late = ra_fail_nomem(&late_err, FMT);
        njobs++;
        an->channel_count++;
    }
    if (rs == RA_OK) {
        unsigned threads = ra_document_threads(doc, work);
        bake_scratch *scratch = ra_calloc(threads, sizeof *scratch);
        bake_jobs bj = {st, jobs, scratch, &bp, NULL, deps.v};
        /* the records of each group go after the last job that reads them
         * (the others before the first): the model does not stay whole
         * beside the baked keys.  Nothing after the bake reads them. */
        if (deps.ok && (bj.bulk = ra_arena_take_bulk(ar))) {
            for (size_t j = 0; j < njobs; j++)
                for (size_t k = 0; k < jobs[j].ndep; k++)
                    group_chunks(bj.bulk, &f->groups[deps.v[jobs[j].dep0 + k]], ra_key_chunks_use);
            ra_key_chunks_ready(bj.bulk);
        }
        if (!scratch || (deps.ok && !bj.bulk)) rs = ra_fail_nomem(err, FMT);
        else rs = ra_parallel_for_late(doc, threads, njobs, bake_one, &bj, &samples_left, late, &late_err, err);
        ra_key_chunks_free(bj.bulk);
        for (unsigned t = 0; scratch && t < threads; t++) {
            ra_free(scratch[t].world);
            ra_free(scratch[t].state);
        }
        ra_free(scratch);
    }
    for (size_t c = 0; rs == RA_OK && c < an->channel_count; c++)
        if (share_of[c] >= 0) ra_channel_share_keys(&an->channels[c], &an->channels[share_of[c]]);
    if (rs == RA_OK && an->channel_count) {
        an->name = ra_file_stem(ar, doc->filename, "niff");
        an->ticks_per_second = st->fps;
        an->duration = dur / st->fps;
        if (!an->name) rs = ra_fail_nomem(err, FMT);
        s->animations = an;
        s->animation_count = 1;
    }
    for (uint32_t i = 0; gb && i < f->group_count; i++) ra_free(gb[i].v);
    for (size_t j = 0; jobs && j < njobs; j++) ra_free(jobs[j].own.v);
    ra_free(jobs);
    ra_free(deps.v);
    ra_free(gb);
    ra_free(seen);
    ra_free(gseen);
    return rs;
}

/* What the steps of niff_to_scene share. */
typedef struct niff_build {
    ra_document *doc;
    const niff_file *f;
    ra_arena *ar;
    ra_scene *s;
    nstate *st;
    ra_scene_start start;
    const char **names; /* objects, then cameras, then RootNode */
    size_t nodes;
    int max_depth;
    size_t dup_links, unreached, dup_chain, chain_unreached;
    uint32_t items;         /* objects and chain elements */
    double dur;             /* frames */
    ra_mat4 *world, *local; /* scratch: one pose of every node */
    uint8_t *wstate;
} niff_build;

/* RootNode, the SceneList's trees (with the IK chains their objects link),
 * the objects not reached from it, chain elements no object links, then the
 * cameras. */
static ra_status niff_nodes(niff_build *b, ra_error *err)
{
    const niff_file *f = b->f;
    nstate *st = b->st;
    uint32_t items = b->items = item_count(f);
    b->nodes = st->node_count = 1 + (size_t)items + f->cam_count;
    b->names = node_names(b->ar, f, "RootNode");
    st->obj_node = ra_arena_array(b->ar, items, sizeof *st->obj_node);
    st->lod_by = ra_arena_array(b->ar, items, sizeof *st->lod_by);
    st->lod_k = ra_arena_array(b->ar, items, sizeof *st->lod_k);
    if (!b->names || !st->obj_node || !st->lod_by || !st->lod_k) return ra_fail_nomem(err, FMT);
    for (uint32_t i = 0; i < items; i++) st->obj_node[i] = st->lod_by[i] = -1;
    ra_mat4 id = ra_m4_identity();
    if (ra_scene_add_node(b->s, b->names[b->nodes - 1], -1, &id) < 0) return ra_fail_nomem(err, FMT);
    size_t depth_cap = (size_t)b->max_depth + 1 < (size_t)items + 1 ? (size_t)b->max_depth + 1 : (size_t)items + 1;
    frame *stack = ra_malloc(depth_cap * sizeof *stack);
    uint8_t *on_path = ra_calloc(items ? items : 1, 1);
    ra_status rs = stack && on_path ? RA_OK : ra_fail_nomem(err, FMT);
    for (uint32_t k = 0; rs == RA_OK && k < f->scene.obj.n + items; k++) {
        uint32_t o = k < f->scene.obj.n ? f->scene.obj.v[k] : k - f->scene.obj.n;
        if (st->obj_node[o] >= 0) {
            if (k < f->scene.obj.n) b->dup_links++;
            continue;
        }
        if (k >= f->scene.obj.n) (*(o < f->obj_count ? &b->unreached : &b->chain_unreached))++;
        rs = place_tree(b->doc, st, b->names, o, stack, on_path, &b->dup_links, &b->dup_chain, b->max_depth, err);
    }
    ra_free(stack);
    ra_free(on_path);
    for (uint32_t c = 0; rs == RA_OK && c < f->cam_count; c++)
        if (ra_scene_add_node(b->s, b->names[items + c], 0, &id) < 0) rs = ra_fail_nomem(err, FMT);
    return rs;
}

/* Which group plays each node, what billboards aim at, the animation's length. */
static ra_status niff_playback_links(niff_build *b, ra_error *err)
{
    const niff_file *f = b->f;
    nstate *st = b->st;
    size_t nodes = b->nodes;
    st->node_cam = ra_arena_array(b->ar, nodes, sizeof *st->node_cam);
    st->bb_look = ra_arena_array(b->ar, nodes, sizeof *st->bb_look);
    st->bb_up = ra_arena_array(b->ar, nodes, sizeof *st->bb_up);
    st->node_gp = ra_arena_array(b->ar, nodes, sizeof *st->node_gp);
    st->parent = ra_arena_array(b->ar, nodes, sizeof *st->parent);
    st->up_mode = ra_arena_array(b->ar, f->cam_count, sizeof *st->up_mode);
    if (!st->node_cam || !st->bb_look || !st->bb_up || !st->node_gp || !st->parent || !st->up_mode)
        return ra_fail_nomem(err, FMT);
    for (size_t n = 0; n < nodes; n++) {
        st->node_cam[n] = st->bb_look[n] = st->bb_up[n] = -1;
        st->parent[n] = b->s->nodes[n].parent;
    }
    for (uint32_t c = 0; c < f->cam_count; c++) st->node_cam[1 + b->items + c] = (int32_t)c;
    for (uint32_t i = 0; i < b->items; i++) {
        const niff_chain *ch = item_chain(f, i);
        const niff_obj *o = ch ? NULL : &f->objs[i];
        int32_t n = st->obj_node[i];
        uint32_t gi = ch ? ch->anim_index : o->state == NIFF_OBJ_CLEAR ? NIFF_NONE : o->anim_link;
        if (gi == NIFF_NONE) continue;
        const gplay *gp = &st->gp[gi];
        if (gp->kind == G_IDENTITY) continue;
        st->node_gp[n] = gp;
        if (gp->kind == G_BILLBOARD) {
            st->bb_look[n] = gp->bb->lookat_obj != NIFF_NONE ? st->obj_node[gp->bb->lookat_obj] : -1;
            st->bb_up[n] = gp->bb->upper_obj != NIFF_NONE ? st->obj_node[gp->bb->upper_obj] : -1;
        }
        double len = gp->loop ? gp->period * gp->loop : gp->period;
        if (len > b->dur) b->dur = len;
    }
    return RA_OK;
}

/* The rest pose (frame 0) and each camera's up convention, chosen once at 0. */
static ra_status niff_rest_pose(niff_build *b, ra_error *err)
{
    const niff_file *f = b->f;
    nstate *st = b->st;
    b->world = ra_malloc(2 * b->nodes * sizeof *b->world);
    b->local = b->world ? b->world + b->nodes : NULL;
    b->wstate = ra_malloc(b->nodes);
    if (!b->world || !b->wstate) return ra_fail_nomem(err, FMT);
    ra_mat4 *world = b->world;
    for (uint32_t c = 0; c < f->cam_count; c++) st->up_mode[c] = UP_FIXED;
    int aimfail = eval_world(st, 0, world, b->local, b->wstate);
    for (uint32_t c = 0; c < f->cam_count; c++) {
        const niff_cam *cam = &f->cams[c];
        if (cam->up_obj == NIFF_NONE) continue;
        ra_vec3 e = cam->eye_obj != NIFF_NONE ? origin(&world[st->obj_node[cam->eye_obj]]) : ra_v3(0, 0, 0);
        ra_vec3 l = cam->lookat_obj != NIFF_NONE ? origin(&world[st->obj_node[cam->lookat_obj]])
                                                 : ra_v3_add(e, ra_v3(0, 0, -1));
        ra_vec3 u = origin(&world[st->obj_node[cam->up_obj]]), fw = ra_v3_sub(l, e), rel = ra_v3_sub(u, e);
        bool fok = unit(&fw, 1e-9);
        ra_vec3 cand[2] = {rel, u};
        for (int k = 0; k < 2 && fok; k++) {
            if (!unit(&cand[k], 1e-6) || !(ra_v3_len(ra_v3_cross(cand[k], fw)) >= 0.1)) continue;
            st->up_mode[c] = k == 0 ? UP_RELATIVE : UP_DIRECTION;
            break;
        }
    }
    if (!aimfail) aimfail = eval_world(st, 0, world, b->local, b->wstate);
    if (aimfail == AIM_DEEP)
        return ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "billboard",
                       "billboards and cameras aim at objects placed by other billboards more than %d levels deep",
                       NIFF_MAX_AIM_DEPTH);
    if (aimfail) {
        for (uint32_t i = 0; i < f->obj_count; i++)
            if (st->node_gp[st->obj_node[i]] && st->node_gp[st->obj_node[i]]->kind == G_BILLBOARD)
                return ra_fail(err, RA_ERR_BAD_VALUE, FMT, st->node_gp[st->obj_node[i]]->bb->offset + 12,
                               "lookat_obj_index",
                               "a billboard looks at (or up to) an object that depends on its own orientation");
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, RA_NO_OFFSET, "billboard",
                       "billboards depend on each other in a cycle");
    }
    for (size_t n = 1; n < b->nodes; n++) b->s->nodes[n].transform = b->local[n];
    return RA_OK;
}

/* Every object's fields on its node; the file's version on the scene. */
static ra_status niff_metadata(niff_build *b, ra_error *err)
{
    const niff_file *f = b->f;
    bool ok = true;
    for (uint32_t i = 0; i < b->items && ok; i++) {
        ra_meta_list *md = &b->s->nodes[b->st->obj_node[i]].meta;
        const niff_chain *c = item_chain(f, i);
        ok = c ? set_chain_meta(b->ar, md, f, c, b->names) : set_obj_meta(b->ar, md, f, i, b->names);
    }
    /* LOD levels: placed as children (the specification), all shown, where the game draws one by distance;
     * an object placed through a LOD link names its level, that link's position */
    size_t lods = 0;
    for (uint32_t l = 0; l < f->obj_count && ok; l++) {
        if (b->st->lod_by[l] < 0) continue;
        const niff_obj *o = &f->objs[b->st->lod_by[l]];
        uint32_t k = b->st->lod_k[l];
        ra_meta_list *md = &b->s->nodes[b->st->obj_node[l]].meta;
        ok = ra_meta_set_int(b->ar, md, "niff.lod_level", k) &&
             ra_meta_set_double(b->ar, md, "niff.lod_distance", o->lod_dist[k]);
        lods++;
    }
    if (!ok) return ra_fail_nomem(err, FMT);
    if (lods)
        ra_scene_warn(b->s,
                      "%zu object(s) are LOD levels (obj_lod_link): all are shown, where the game draws one by "
                      "distance; node metadata niff.lod_level and niff.lod_distance tell them apart",
                      lods);
    ra_status rs =
        ra_scene_standard_meta(b->doc, b->st->fps, "NIFF's own frame: right-handed, Y up, Z toward the viewer", err);
    if (rs != RA_OK) return rs;
    char ver[16];
    snprintf(ver, sizeof ver, "0x%08X", f->version);
    ok = ra_meta_set_string(b->ar, &b->s->meta, "niff.version", ver) &&
         ra_meta_set_int(b->ar, &b->s->meta, "niff.major", niff_is_v2(f->version) ? 2 : 1);
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}

/* Camera c on its node: field of view, aspect and clip planes made valid,
 * orthographic where the view has an area; the stored values as metadata. */
static bool niff_camera(niff_build *b, uint32_t c)
{
    ra_scene *s = b->s;
    const niff_cam *cam = &b->f->cams[c];
    uint32_t node = 1 + b->items + c;
    ra_camera *rc = &s->cameras[s->camera_count++];
    s->non_skeleton[s->non_skeleton_count++] = node;
    rc->name = b->names[b->items + c];
    rc->node = node;
    double aspect = cam->aspect;
    if (!(aspect > 0) || !isfinite(aspect)) {
        ra_scene_warn(s, "a camera's aspect is not a positive number; 4:3 is used");
        aspect = 4.0 / 3.0;
    }
    double fovy = cam->fovy; /* NaN fails the test below */
    if (!(fovy > 0 && fovy < 180)) {
        if (cam->type != 1)
            ra_scene_warn(s, "a perspective camera's field of view is outside (0, 180) degrees; 45 is used");
        fovy = 45;
    }
    rc->horizontal_fov = atan(tan(fovy * RA_PI / 360.0) * aspect);
    rc->aspect = aspect;
    double cn = cam->near_clip, cf = cam->far_clip;
    if (!(cn > 0) || !isfinite(cn)) cn = 0.01;
    if (!(cf > cn) || !isfinite(cf)) cf = cn * 1e5;
    if (cn != cam->near_clip || cf != cam->far_clip)
        ra_scene_warn(
            s, "a camera's near/far clip planes are not 0 < near < far; replaced (the stored values are metadata)");
    rc->clip_near = cn;
    rc->clip_far = cf;
    if (cam->type == 1) { /* orthographic: half the view's width and height */
        double xm = fabs((double)cam->right - (double)cam->left) / 2,
               ym = fabs((double)cam->top - (double)cam->bottom) / 2;
        rc->orthographic = xm > 0 && ym > 0 && isfinite(xm) && isfinite(ym);
        if (rc->orthographic) {
            rc->ortho_xmag = xm;
            rc->ortho_ymag = ym;
        } else {
            ra_scene_warn(s, "an orthographic camera's view has no area; it is written as a perspective camera");
        }
    }
    rc->position = ra_v3(0, 0, 0);
    rc->look_at = ra_v3(0, 0, -1);
    rc->up = ra_v3(0, 1, 0);
    static const char *const modes[3] = {"relative (up object - eye)", "direction (the up object's position)",
                                         "fixed (0, 1, 0)"};
    ra_arena *ar = b->ar;
    const char **names = b->names;
    ra_meta_list *md = &s->nodes[node].meta;
    bool ok = ra_meta_set_int(ar, md, "niff.cam_index", c) &&
              ra_meta_set_string(ar, md, "niff.cam_type", cam->type == 1 ? "ORTHO" : "PERSP") &&
              ra_meta_set_double(ar, md, "niff.cam_fovy_degrees", cam->fovy) &&
              ra_meta_set_string(ar, md, "niff.cam_up_convention", modes[b->st->up_mode[c]]) &&
              (cam->eye_obj == NIFF_NONE || ra_meta_set_string(ar, md, "niff.cam_eye", names[cam->eye_obj])) &&
              (cam->lookat_obj == NIFF_NONE || ra_meta_set_string(ar, md, "niff.cam_lookat", names[cam->lookat_obj])) &&
              (cam->up_obj == NIFF_NONE || ra_meta_set_string(ar, md, "niff.cam_up", names[cam->up_obj]));
    if (ok && cam->type == 1)
        ok = ra_meta_set_vec3(ar, md, "niff.ortho_right_left_top", ra_v3(cam->right, cam->left, cam->top)) &&
             ra_meta_set_double(ar, md, "niff.ortho_bottom", cam->bottom);
    return ok && ra_meta_set_vec3(ar, md, "niff.cam_near_far_scale", ra_v3(cam->near_clip, cam->far_clip, cam->scale));
}

static ra_status niff_cameras(niff_build *b, ra_error *err)
{
    uint32_t n = b->f->cam_count;
    if (!n) return RA_OK;
    b->s->cameras = ra_arena_array(b->ar, n, sizeof *b->s->cameras);
    b->s->non_skeleton = ra_arena_array(b->ar, n, sizeof *b->s->non_skeleton);
    bool ok = b->s->cameras && b->s->non_skeleton;
    for (uint32_t c = 0; ok && c < n; c++) ok = niff_camera(b, c);
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}

static ra_status niff_to_scene(ra_document *doc, ra_error *err)
{
    niff_build b;
    memset(&b, 0, sizeof b);
    b.doc = doc;
    b.f = doc->model;
    b.ar = doc->arena;
    b.s = &doc->scene;
    ra_scene_start_init(doc, 150.0, &b.start);
    b.max_depth = (int)ra_options_get_double(&doc->options, "max_depth", 256);
    nstate *st = b.st = doc->state = ra_arena_alloc(b.ar, sizeof *b.st);
    if (!st) return ra_fail_nomem(err, FMT);
    st->f = b.f;
    st->fps = ra_options_get_double(&doc->options, "fps", 30.0);
    /* playback of every group */
    st->gp = ra_arena_array(b.ar, b.f->group_count, sizeof *st->gp);
    if (!st->gp) return ra_fail_nomem(err, FMT);
    ra_status rs = RA_OK;
    for (uint32_t i = 0; rs == RA_OK && i < b.f->group_count; i++)
        rs = make_play(doc, &b.f->groups[i], &st->gp[i], err);
    if (rs == RA_OK) rs = niff_nodes(&b, err);
    if (rs == RA_OK) rs = niff_playback_links(&b, err);
    if (rs == RA_OK) rs = niff_rest_pose(&b, err);
    if (rs == RA_OK) rs = niff_metadata(&b, err);
    if (rs == RA_OK) rs = niff_cameras(&b, err);
    if (rs == RA_OK) rs = niff_build_geometry(doc, b.f, st->obj_node, err);
    if (rs == RA_OK && b.dur > 0) rs = bake_animation(doc, st, b.dur, b.start.max_key_angle, err);
    ra_free(b.world);
    ra_free(b.wstate);
    if (rs != RA_OK) return rs;
    if (b.dup_links)
        ra_scene_warn(b.s, "%zu link(s) to an object placed already are ignored (an object has one parent)",
                      b.dup_links);
    if (b.unreached)
        ra_scene_warn(b.s, "%zu object tree(s) not reached from the SceneList are placed under the root", b.unreached);
    if (b.dup_chain) ra_scene_warn(b.s, "%zu link(s) to an IK chain element placed already are ignored", b.dup_chain);
    if (b.chain_unreached)
        ra_scene_warn(b.s, "%zu IK chain element(s) that no object links are placed under the root", b.chain_unreached);
    return RA_OK;
}

/* ---- read / write / dump ----------------------------------------------------------------------------------- */
static ra_status niff_read_doc(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    niff_file *f = ra_arena_alloc(doc->arena, sizeof *f);
    if (!f) return ra_fail_nomem(err, FMT);
    doc->model = f;
    return niff_read_run(data, size, doc->arena, f, err, ra_document_read_runner, doc);
}

static ra_status niff_write_doc(const ra_document *doc, ra_writer *w, ra_error *err)
{
    return niff_write(doc->model, w, err);
}

static void dump_links(ra_json *j, const char *key, const uint32_t *v, uint32_t n)
{
    if (key) ra_json_key(j, key); /* NULL: an element of an array */
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < n; i++) {
        if (v[i] == NIFF_NONE) ra_json_int(j, -1);
        else ra_json_uint(j, v[i]);
    }
    ra_json_end_array(j);
}

static void dump_index(ra_json *j, const char *key, uint32_t v)
{
    ra_json_key(j, key);
    if (v == NIFF_NONE) ra_json_int(j, -1);
    else ra_json_uint(j, v);
}

static void dump_floats(ra_json *j, const char *key, const float *v, unsigned n)
{
    ra_json_key(j, key);
    ra_json_begin_array(j);
    for (unsigned i = 0; i < n; i++) ra_json_number(j, v[i]);
    ra_json_end_array(j);
}

static void dump_ext(ra_json *j, const niff_ext *e)
{
    if (!e->nintendo.size && !e->user.size) return;
    ra_json_key(j, "ext_bytes");
    ra_json_begin_array(j);
    ra_json_uint(j, e->nintendo.size);
    ra_json_uint(j, e->user.size);
    ra_json_end_array(j);
}

static void dump_anim(ra_json *j, const niff_anim *a)
{
    ra_json_begin_object(j);
    ra_json_key(j, "offset");
    ra_json_uint(j, a->offset);
    static const char *const tags[5] = {"STATIC", "CONST", "FULL", "KEY", "BILLBOARD_OBJ"};
    ra_json_key(j, "tag");
    uint32_t t = a->tag - NIFF_TAG_ANIM_STATIC;
    ra_json_string(j, t < 5 ? tags[t] : "unknown");
    if (a->tag == NIFF_TAG_ANIM_KEY) {
        ra_json_key(j, "key");
        ra_json_uint(j, a->key);
        dump_index(j, "next_key", a->next_key);
        ra_json_key(j, "interpolation_type");
        ra_json_uint(j, a->interp);
    }
    if (is_trs_tag(a->tag)) {
        dump_floats(j, "translate", a->t, 3);
        dump_floats(j, "rotate", a->r, 3);
        ra_json_key(j, "rotate_expand_flag");
        ra_json_uint(j, a->expand_flag);
        dump_floats(j, "scale", a->s, 3);
    } else if (a->tag == NIFF_TAG_ANIM_BILLBOARD) {
        dump_index(j, "lookat_obj_index", a->lookat_obj);
        dump_index(j, "upper_obj_index", a->upper_obj);
    }
    if (a->extra.size) {
        ra_json_key(j, "extra_bytes");
        ra_json_uint(j, a->extra.size);
    }
    ra_json_end_object(j);
}

static void dump_channels(ra_json *j, const niff_channels *ch)
{
    static const char *const cn[NIFF_CH_COUNT] = {"rotate_axis",    "rotate_x",    "rotate_y",     "rotate_z",
                                                  "orientation_xy", "translation", "unique_scale", "classical_scale"};
    ra_json_key(j, "channels");
    ra_json_begin_object(j);
    ra_json_key(j, "use_animation_channel");
    ra_json_uint(j, ch->use);
    dump_links(j, "constraint", ch->constraint, 28);
    for (int c = 0; c < NIFF_CH_COUNT; c++) {
        if (!ch->count[c]) continue;
        ra_json_key(j, cn[c]);
        ra_json_begin_array(j);
        for (uint32_t k = 0; k < ch->count[c]; k++) {
            const niff_chkey *key = &ch->keys[c][k];
            ra_json_begin_object(j);
            ra_json_key(j, "interpolation_type");
            ra_json_uint(j, key->interp);
            ra_json_key(j, "key");
            ra_json_uint(j, key->key);
            dump_floats(j, "values", key->v, niff_channel_values[c]);
            dump_floats(j, "differentials", key->d, niff_channel_values[c]);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    ra_json_end_object(j);
}

static void dump_vgroups(ra_json *j, const char *key, const niff_vgroup *g, uint32_t n)
{
    if (!n) return;
    ra_json_key(j, key);
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < n; i++) {
        ra_json_begin_object(j);
        ra_json_key(j, "offset");
        ra_json_uint(j, g[i].offset);
        ra_json_key(j, "count");
        ra_json_uint(j, g[i].count);
        dump_floats(j, "values", g[i].v, g[i].count * g[i].comps);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

/* The geometry and IK lists' views (written only for files that have them). */
static void dump_views(const niff_file *f, ra_json *j)
{
    static const char *const chain_keys[3] = {"chain_roots", "joints", "effectors"};
    for (int k = 0; k < 3; k++) {
        if (!f->chain_count[k]) continue;
        ra_json_key(j, chain_keys[k]);
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < f->chain_count[k]; i++) {
            const niff_chain *c = &f->chains[k][i];
            ra_json_begin_object(j);
            ra_json_key(j, "offset");
            ra_json_uint(j, c->offset);
            dump_index(j, "name_index", c->name_index);
            ra_json_key(j, "type");
            ra_json_uint(j, c->type);
            dump_index(j, "anim_index", c->anim_index);
            if (k != NIFF_CHAIN_EFFECTOR) dump_index(j, "joint_index", c->joint_index);
            if (k == NIFF_CHAIN_JOINT) {
                dump_index(j, "effector_index", c->effector_index);
                const float jf[4] = {c->length, c->resplane[0], c->resplane[1], c->resplane[2]};
                dump_floats(j, "length_resplane_axis", jf, 4);
            }
            dump_links(j, "obj_index", c->obj.v, c->obj.n);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    const niff_geometry *g = &f->geo;
    if (g->shape_count) {
        ra_json_key(j, "shapes");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < g->shape_count; i++) {
            const niff_shape *sh = &g->shapes[i];
            char kind[16];
            snprintf(kind, sizeof kind, "0x%08X", sh->geometry_kind);
            ra_json_begin_object(j);
            ra_json_key(j, "offset");
            ra_json_uint(j, sh->offset);
            dump_index(j, "name_index", sh->name_index);
            ra_json_key(j, "shape_type");
            ra_json_uint(j, sh->type);
            ra_json_key(j, "geometry_kind");
            ra_json_string(j, kind);
            dump_index(j, "tri_link", sh->tri_link);
            dump_index(j, "mat_link", sh->mat_link);
            dump_links(j, "part_links", sh->part.v, sh->part.n);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    dump_vgroups(j, "vtx_groups", g->vtx, g->vtx_count);
    dump_vgroups(j, "st_groups", g->st, g->st_count);
    dump_vgroups(j, "tri_color_groups", g->tri_color, g->tri_color_count);
    dump_vgroups(j, "vtx_color_groups", g->vtx_color, g->vtx_color_count);
    dump_vgroups(j, "tri_nv_groups", g->tri_nv, g->tri_nv_count);
    dump_vgroups(j, "vtx_nv_groups", g->vtx_nv, g->vtx_nv_count);
    if (g->trigroup_count) {
        ra_json_key(j, "tri_groups");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < g->trigroup_count; i++) {
            const niff_trigroup *t = &g->trigroups[i];
            ra_json_begin_object(j);
            ra_json_key(j, "offset");
            ra_json_uint(j, t->offset);
            dump_index(j, "name_index", t->name_index);
            ra_json_key(j, "tri_anim_type");
            ra_json_uint(j, t->anim_type);
            ra_json_key(j, "rest_groups_vtx_tricolor_vtxcolor_trinv_vtxnv_st");
            ra_json_begin_array(j);
            for (int a = 0; a < NIFF_REF_COUNT; a++)
                if (t->ref[a] == NIFF_NONE) ra_json_raw(j, "null");
                else ra_json_uint(j, t->ref[a]);
            ra_json_end_array(j);
            ra_json_key(j, "tris");
            ra_json_begin_array(j);
            for (uint32_t k = 0; k < t->tri_num; k++) {
                const niff_tri *tr = &t->tris[k];
                uint32_t v[14] = {tr->tri_nv, tr->tri_color};
                for (int c = 0; c < 3; c++) {
                    v[2 + 4 * c] = tr->vtx[c];
                    v[3 + 4 * c] = tr->st[c];
                    v[4 + 4 * c] = tr->vtx_nv[c];
                    v[5 + 4 * c] = tr->vtx_color[c];
                }
                dump_links(j, NULL, v, 14);
            }
            ra_json_end_array(j);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    if (g->part_count) {
        ra_json_key(j, "parts");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < g->part_count; i++) {
            const niff_part *p = &g->parts[i];
            ra_json_begin_object(j);
            dump_index(j, "name_index", p->name_index);
            dump_index(j, "mat_index", p->mat_index);
            dump_index(j, "tri_group_index", p->tri_group_index);
            dump_links(j, "tri_index", p->tri.v, p->tri.n);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    if (g->mat_count) {
        ra_json_key(j, "mats");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < g->mat_count; i++) {
            const niff_mat *m = &g->mats[i];
            ra_json_begin_object(j);
            dump_index(j, "name_index", m->name_index);
            const uint32_t v[6] = {m->type,          m->shade,         m->color_type[0],
                                   m->color_type[1], m->alpha_type[0], m->alpha_type[1]};
            dump_links(j, "type_shade_color0_color1_alpha0_alpha1", v, 6);
            dump_floats(j, "prim", m->prim, 4);
            if (m->has_diffuse) dump_floats(j, "diffuse", m->diffuse, 4);
            dump_links(j, "tex_index", m->tex.v, m->tex.n);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    if (g->tex_count) {
        ra_json_key(j, "texs");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < g->tex_count; i++) {
            const niff_tex *t = &g->texs[i];
            ra_json_begin_object(j);
            dump_index(j, "name_index", t->name_index);
            const uint32_t v[7] = {t->type, t->wrap_s, t->wrap_t, t->anim, t->img_w, t->img_h, t->img_index};
            dump_links(j, "type_wraps_wrapt_anim_w_h_img", v, 7);
            if (t->use_palette) dump_index(j, "color_palette_index", t->palette_index);
            if (t->has_filter) dump_index(j, "tex_filter", t->filter);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    for (int k = 0; k < 2; k++) { /* envelopes and cluster shapes: their parts and triangles */
        const niff_deform *d = k ? g->clusters : g->envelopes;
        uint32_t n = k ? g->cluster_count : g->envelope_count;
        if (!n) continue;
        ra_json_key(j, k ? "cluster_shapes" : "envelopes");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < n; i++) {
            ra_json_begin_object(j);
            ra_json_key(j, "offset");
            ra_json_uint(j, d[i].offset);
            dump_index(j, "name_index", d[i].name_index);
            dump_links(j, k ? "clusters" : "full_weighted_morph_parts", d[i].part_count, k ? 1 : NIFF_PART_KINDS);
            ra_json_key(j, "tri_count");
            ra_json_uint(j, d[i].tri_count);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
    }
    if (g->weight_count) {
        ra_json_key(j, "weight_group_sizes");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < g->weight_count; i++) ra_json_uint(j, g->weights[i].count);
        ra_json_end_array(j);
    }
    if (g->teximg_count || g->ciimg_count || g->palette_count) {
        ra_json_key(j, "image_counts");
        ra_json_begin_object(j);
        ra_json_key(j, "tex_img");
        ra_json_uint(j, g->teximg_count);
        ra_json_key(j, "ci_img");
        ra_json_uint(j, g->ciimg_count);
        ra_json_key(j, "color_palette");
        ra_json_uint(j, g->palette_count);
        ra_json_end_object(j);
    }
}

static void niff_dump_source(const ra_document *doc, ra_json *j)
{
    const niff_file *f = doc->model;
    char ver[16];
    snprintf(ver, sizeof ver, "0x%08X", f->version);
    ra_json_begin_object(j);
    ra_json_key(j, "format");
    ra_json_string(j, FMT);
    ra_json_key(j, "version");
    ra_json_string(j, ver);
    ra_json_key(j, "lists");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < f->list_count; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "0x%08X", f->lists[i].tag);
        ra_json_begin_object(j);
        ra_json_key(j, "tag");
        ra_json_string(j, tag);
        ra_json_key(j, "offset");
        ra_json_uint(j, f->lists[i].offset);
        ra_json_key(j, "parsed");
        ra_json_bool(j, f->lists[i].parsed);
        if (!f->lists[i].parsed) {
            ra_json_key(j, "bytes");
            ra_json_uint(j, f->lists[i].raw.size);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "scene");
    ra_json_begin_object(j);
    dump_index(j, "name_index", f->scene.name_index);
    dump_links(j, "obj_links", f->scene.obj.v, f->scene.obj.n);
    dump_links(j, "cam_links", f->scene.cam.v, f->scene.cam.n);
    ra_json_end_object(j);
    ra_json_key(j, "names");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < f->name_count; i++) ra_json_string(j, f->names[i].text);
    ra_json_end_array(j);
    ra_json_key(j, "objects");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < f->obj_count; i++) {
        const niff_obj *o = &f->objs[i];
        ra_json_begin_object(j);
        ra_json_key(j, "offset");
        ra_json_uint(j, o->offset);
        dump_index(j, "name_index", o->name_index);
        ra_json_key(j, "state");
        ra_json_uint(j, o->state);
        ra_json_key(j, "type");
        ra_json_uint(j, o->type);
        dump_links(j, "render", o->render, 6);
        ra_json_key(j, "have_link_billboard");
        ra_json_uint(j, o->have_link_billboard);
        dump_index(j, "parent_link", o->parent_link);
        dump_index(j, "shape_link", o->shape_link);
        dump_index(j, "mat_link", o->mat_link);
        dump_index(j, "anim_link", o->anim_link);
        dump_index(j, "coll_link", o->coll_link);
        dump_floats(j, "lod_dist", o->lod_dist, o->lod_num);
        dump_links(j, "lod_links", o->lod_link, o->lod_num);
        dump_links(j, "child_links", o->child.v, o->child.n);
        dump_ext(j, &o->ext);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "cameras");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < f->cam_count; i++) {
        const niff_cam *c = &f->cams[i];
        ra_json_begin_object(j);
        ra_json_key(j, "offset");
        ra_json_uint(j, c->offset);
        dump_index(j, "name_index", c->name_index);
        ra_json_key(j, "type");
        ra_json_uint(j, c->type);
        const float fl[9] = {c->near_clip, c->far_clip, c->right,  c->left, c->top,
                             c->bottom,    c->fovy,     c->aspect, c->scale};
        dump_floats(j, "near_far_right_left_top_bottom_fovy_aspect_scale", fl, 9);
        dump_index(j, "lookat_obj", c->lookat_obj);
        dump_index(j, "eye_obj", c->eye_obj);
        dump_index(j, "up_obj", c->up_obj);
        dump_ext(j, &c->ext);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "anim_groups");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < f->group_count; i++) {
        const niff_group *g = &f->groups[i];
        char ro[16];
        snprintf(ro, sizeof ro, "0x%08X", g->rot_order);
        ra_json_begin_object(j);
        ra_json_key(j, "offset");
        ra_json_uint(j, g->offset);
        ra_json_key(j, "header_size");
        ra_json_uint(j, g->header_size);
        dump_index(j, "name_index", g->name_index);
        ra_json_key(j, "anim_type");
        ra_json_uint(j, g->type);
        ra_json_key(j, "frame_rate");
        ra_json_uint(j, g->frame_rate);
        ra_json_key(j, "anim_loop");
        ra_json_uint(j, g->loop);
        ra_json_key(j, "anim_rot_mtx_order");
        ra_json_string(j, ro);
        ra_json_key(j, "anims");
        ra_json_begin_array(j);
        for (uint32_t k = 0; k < g->anim_num; k++) dump_anim(j, &g->anims[k]);
        ra_json_end_array(j);
        if (g->has_channels) dump_channels(j, &g->ch);
        dump_ext(j, &g->ext);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    dump_views(f, j);
    ra_json_end_object(j);
}

static const ra_option_decl niff_options[] = {
    {"fps", RA_OPT_DOUBLE, 0, 1000, true, NULL, "30", "the rate NIFF frames play at (frames per second)"},
    {"key_tolerance", RA_OPT_DOUBLE, 0, 0.1, true, NULL, "3e-6",
     "how closely baked keys follow curves (relative, and radians)"},
};

const ra_format ra_format_niff = {
    .id = FMT,
    .name = "Nintendo 64 NIFF (N64 Intermediate File Format 1.0 / 2.0)",
    .extensions = "niff nif",
    .detection = "content: file_size at byte 4, header tag 0 at 8, header size >= 100 at 12 with its extension "
                 "sizes, SceneList tag 0x00010000 right after the header (no magic; .nif also names NetImmerse files)",
    .detect = niff_detect,
    .read = niff_read_doc,
    .to_scene = niff_to_scene,
    .pose = niff_pose,
    .dump_source = niff_dump_source,
    .write = niff_write_doc,
    .options = niff_options,
    .option_count = sizeof niff_options / sizeof niff_options[0],
};
