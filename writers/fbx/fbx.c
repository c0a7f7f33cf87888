/* Binary FBX writer: ra_scene -> .fbx (7.4; 7.5 when offsets pass 4 GiB).
 *
 * The file is a tree of records; each record's header holds its end offset,
 * property count and property bytes, known only once the record is written.
 * Records are written with a zero header that is filled in when the record
 * closes: in the write buffer while it is still there, else by a patch of the
 * temporary file (ra_outfile_patch).  Records nest at most five deep (the
 * node hierarchy lives in Connections), so the stack of open records is a
 * fixed array. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "retroanim/ra_fbx.h"
#include "retroanim/ra_json.h"
#include "retroanim/ra_output.h"
#include "retroanim/ra_document.h"
#include "retroanim/ra_image.h"

#define FMT "fbx"
#define KTIME_PER_SECOND 46186158000LL
#define BUF_SIZE (1u << 16)
#define MAX_OPEN 8
#define MAX_SPLIT_DEPTH 24

/* object ids: a kind in bits 40..43, an index below (all below 2^53, which
 * JavaScript readers keep exact) */
enum {
    ID_MODEL = 1,
    ID_LIMB_ATTR,
    ID_VIEW_MODEL,
    ID_CAMERA_ATTR,
    ID_STACK,
    ID_LAYER,
    ID_CURVE_NODE,
    ID_CURVE,
    ID_MESH_MODEL,
    ID_GEOMETRY,
    ID_MATERIAL,
    ID_TEXTURE,
    ID_VIDEO,
    ID_SKIN,
    ID_CLUSTER /* index: mesh << 16 | joint */
};
static int64_t obj_id(int kind, uint64_t index) { return (int64_t)(((uint64_t)kind << 40) | index); }

typedef struct open_rec {
    uint64_t start, props_start, props_end;
    uint32_t nprops;
    bool children;
    bool sentinel; /* a null record even without children (AnimationStack, AnimationLayer) */
} open_rec;

/* One rotation track's keys as Euler curves (scratch, reused). */
typedef struct euler_keys {
    int64_t *t;
    float *v[3];
    size_t n, cap;
} euler_keys;

typedef struct fw {
    const ra_scene *s;
    const ra_fbx_options *o;
    ra_error *err;
    ra_outfile f;
    uint8_t *buf;
    size_t n;
    uint64_t base; /* file offset of buf[0] */
    bool wide;     /* 7.5: 64-bit header fields */
    int version;
    open_rec st[MAX_OPEN];
    int depth;
    bool overflow; /* 7.4 and an offset passed 4 GiB */
    bool nomem;
    double tol;     /* Euler playback tolerance (radians) */
    bool *limb;     /* per node: a joint of a skin */
    int64_t *ticks; /* scratch for one vec track */
    size_t ticks_cap;
    euler_keys ek;
    uint64_t curves, keys;
    uint64_t total;       /* bytes of the file written */
    size_t too_long;      /* keys of a track past what an FBX array holds, or 0 */
    uint8_t *abuf, *zbuf; /* scratch: an array's little-endian bytes, and deflated */
    size_t acap, zcap;
    struct conn_link *links;
    uint64_t curve_nodes; /* the curve nodes write_animations writes */
    size_t link_count, link_cap;
} fw;

/* ---- bytes --------------------------------------------------------------------------------- */
static uint64_t pos(const fw *w) { return w->base + w->n; }

static void flush(fw *w)
{
    ra_outfile_write(&w->f, w->buf, w->n);
    w->base += w->n;
    w->n = 0;
}

static void put(fw *w, const void *p, size_t len)
{
    if (!w->wide && pos(w) + len > UINT32_MAX) w->overflow = true; /* 7.4: start again as 7.5 */
    if (w->overflow) return;
    if (w->n + len > BUF_SIZE) flush(w);
    if (len > BUF_SIZE) {
        ra_outfile_write(&w->f, p, len);
        w->base += len;
        return;
    }
    memcpy(w->buf + w->n, p, len);
    w->n += len;
}

static void le32(uint8_t *b, uint32_t u)
{
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(u >> (8 * i));
}
static void le64(uint8_t *b, uint64_t u)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (8 * i));
}
static void put_u8(fw *w, uint8_t v) { put(w, &v, 1); }
static void put_u32(fw *w, uint32_t v)
{
    uint8_t b[4];
    le32(b, v);
    put(w, b, 4);
}
static void put_u64(fw *w, uint64_t v)
{
    uint8_t b[8];
    le64(b, v);
    put(w, b, 8);
}

/* ---- records ------------------------------------------------------------------------------- */
static size_t header_size(const fw *w) { return w->wide ? 25 : 13; }

static void rec_begin_x(fw *w, const char *name, bool sentinel)
{
    if (w->depth >= MAX_OPEN) { /* cannot happen: the writer nests at most five deep */
        w->nomem = true;
        return;
    }
    if (w->depth > 0) {
        open_rec *p = &w->st[w->depth - 1];
        if (!p->children) {
            p->children = true;
            p->props_end = pos(w);
        }
    }
    size_t len = strlen(name);
    uint8_t zero[25] = {0};
    if (w->n + header_size(w) + len > BUF_SIZE) flush(w); /* the header stays in one piece */
    open_rec *r = &w->st[w->depth++];
    r->start = pos(w);
    put(w, zero, header_size(w) - 1);
    put_u8(w, (uint8_t)len);
    put(w, name, len);
    r->props_start = pos(w);
    r->props_end = 0;
    r->nprops = 0;
    r->children = false;
    r->sentinel = sentinel;
}
static void rec_begin(fw *w, const char *name) { rec_begin_x(w, name, false); }

static void rec_end(fw *w)
{
    if (w->depth <= 0) return;
    open_rec *r = &w->st[--w->depth];
    if (!r->children) r->props_end = pos(w);
    if (r->children || r->nprops == 0 || r->sentinel) {
        uint8_t zero[25] = {0};
        put(w, zero, header_size(w));
    }
    if (w->overflow) return; /* the file is started again as 7.5 */
    uint64_t end = pos(w), plen = r->props_end - r->props_start;
    uint8_t h[24];
    size_t hn;
    if (w->wide) {
        le64(h, end);
        le64(h + 8, r->nprops);
        le64(h + 16, plen);
        hn = 24;
    } else {
        if (end > UINT32_MAX) w->overflow = true;
        le32(h, (uint32_t)end);
        le32(h + 4, r->nprops);
        le32(h + 8, (uint32_t)plen);
        hn = 12;
    }
    if (r->start >= w->base) {
        memcpy(w->buf + (r->start - w->base), h, hn);
    } else {
        flush(w);
        ra_outfile_patch(&w->f, r->start, h, hn);
    }
}

static void prop_count(fw *w) { w->st[w->depth - 1].nprops++; }
static void p_i32(fw *w, int32_t v)
{
    put_u8(w, 'I');
    put_u32(w, (uint32_t)v);
    prop_count(w);
}
static void p_i64(fw *w, int64_t v)
{
    put_u8(w, 'L');
    put_u64(w, (uint64_t)v);
    prop_count(w);
}
static void p_f64(fw *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    put_u8(w, 'D');
    put_u64(w, u);
    prop_count(w);
}
static void p_bool(fw *w, bool v)
{
    put_u8(w, 'C');
    put_u8(w, v ? 1 : 0);
    prop_count(w);
}
static void p_bytes(fw *w, char type, const void *s, size_t len)
{
    put_u8(w, (uint8_t)type);
    put_u32(w, (uint32_t)len);
    put(w, s, len);
    prop_count(w);
}
static void p_str(fw *w, const char *s) { p_bytes(w, 'S', s, strlen(s)); }
/* "name\0\1Class": an object's name and class in one string */
static void p_name(fw *w, const char *name, const char *cls)
{
    size_t a = strlen(name), b = strlen(cls);
    put_u8(w, 'S');
    put_u32(w, (uint32_t)(a + 2 + b));
    put(w, name, a);
    put(w, "\0\1", 2);
    put(w, cls, b);
    prop_count(w);
}
static void p_array_head(fw *w, char type, size_t count, size_t elem)
{
    put_u8(w, (uint8_t)type);
    put_u32(w, (uint32_t)count);
    put_u32(w, 0); /* not compressed */
    put_u32(w, (uint32_t)(count * elem));
    prop_count(w);
}
/* An array property ready to write: its little-endian bytes, deflated when
 * that is shorter (encoding 1, as FBX files hold their large arrays; zlib
 * at its fastest level).  The key times are prepared once and written for
 * the three curves of a curve node; float values are written raw (they
 * shrink by a few percent for a third more time). */
#define DEFLATE_FROM 128
typedef struct packed_array {
    char type;
    size_t n;
    uint32_t encoding;
    const uint8_t *bytes; /* w->abuf or w->zbuf */
    size_t len;
} packed_array;

static bool pack_i64(fw *w, const int64_t *v, size_t n, packed_array *out)
{
    size_t raw = 8 * n;
    if (raw > w->acap) {
        uint8_t *na = ra_realloc(w->abuf, raw);
        if (!na) return false;
        w->abuf = na;
        w->acap = raw;
    }
    for (size_t i = 0; i < n; i++) le64(w->abuf + 8 * i, (uint64_t)v[i]);
    *out = (packed_array){'l', n, 0, w->abuf, raw};
    if (raw < DEFLATE_FROM) return true;
    uLongf zn = compressBound((uLong)raw);
    if (zn > w->zcap) {
        uint8_t *nz = ra_realloc(w->zbuf, zn);
        if (!nz) return false;
        w->zbuf = nz;
        w->zcap = zn;
    }
    if (compress2(w->zbuf, &zn, w->abuf, (uLong)raw, Z_BEST_SPEED) == Z_OK && zn < raw)
        *out = (packed_array){'l', n, 1, w->zbuf, zn};
    return true;
}

static void p_packed(fw *w, const packed_array *a)
{
    put_u8(w, (uint8_t)a->type);
    put_u32(w, (uint32_t)a->n);
    put_u32(w, a->encoding);
    put_u32(w, (uint32_t)a->len);
    put(w, a->bytes, a->len);
    prop_count(w);
}

static void p_f32_array(fw *w, const float *v, size_t n)
{
    p_array_head(w, 'f', n, 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        put_u32(w, u);
    }
}

/* float data as an array of doubles ('d'), with a transform of each value */
static void p_f64_array(fw *w, const float *v, size_t n, size_t stride, size_t comps, bool flip_second)
{
    size_t count = n * comps;
    p_array_head(w, 'd', count, 8);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < comps; c++) {
            double x = v[i * stride + c];
            if (flip_second && c == 1) x = 1 - x;
            uint64_t u;
            memcpy(&u, &x, 8);
            put_u64(w, u);
        }
}

/* one-property records */
static void r_i32(fw *w, const char *name, int32_t v)
{
    rec_begin(w, name);
    p_i32(w, v);
    rec_end(w);
}
static void r_i64(fw *w, const char *name, int64_t v)
{
    rec_begin(w, name);
    p_i64(w, v);
    rec_end(w);
}
static void r_f64(fw *w, const char *name, double v)
{
    rec_begin(w, name);
    p_f64(w, v);
    rec_end(w);
}
static void r_str(fw *w, const char *name, const char *v)
{
    rec_begin(w, name);
    p_str(w, v);
    rec_end(w);
}
static void r_vec(fw *w, const char *name, double x, double y, double z)
{
    rec_begin(w, name);
    p_f64(w, x);
    p_f64(w, y);
    p_f64(w, z);
    rec_end(w);
}

/* Properties70 entries: P: name, type, label, flags, values */
static void prop_head(fw *w, const char *name, const char *type, const char *label, const char *flags)
{
    rec_begin(w, "P");
    p_str(w, name);
    p_str(w, type);
    p_str(w, label);
    p_str(w, flags);
}
static void P_int(fw *w, const char *name, const char *type, const char *label, int32_t v)
{
    prop_head(w, name, type, label, "");
    p_i32(w, v);
    rec_end(w);
}
static void P_f64(fw *w, const char *name, const char *type, const char *label, const char *flags, double v)
{
    prop_head(w, name, type, label, flags);
    p_f64(w, v);
    rec_end(w);
}
static void P_vec(fw *w, const char *name, const char *type, const char *label, const char *flags, ra_vec3 v)
{
    prop_head(w, name, type, label, flags);
    p_f64(w, v.x);
    p_f64(w, v.y);
    p_f64(w, v.z);
    rec_end(w);
}
static void P_time(fw *w, const char *name, int64_t v)
{
    prop_head(w, name, "KTime", "Time", "");
    p_i64(w, v);
    rec_end(w);
}
static void P_str(fw *w, const char *name, const char *type, const char *flags, const char *v)
{
    prop_head(w, name, type, "", flags);
    p_str(w, v);
    rec_end(w);
}

/* a metadata entry as a user property (flag "U"), in the types Blender reads */
static void P_meta(fw *w, const ra_meta *m)
{
    switch (m->type) {
    case RA_META_BOOL:
        prop_head(w, m->key, "Bool", "", "U");
        p_i32(w, m->u.b ? 1 : 0);
        break;
    case RA_META_INT:
        if (m->u.i >= INT32_MIN && m->u.i <= INT32_MAX) {
            prop_head(w, m->key, "Integer", "", "U");
            p_i32(w, (int32_t)m->u.i);
        } else { /* FBX user integers are 32-bit */
            prop_head(w, m->key, "Number", "", "U");
            p_f64(w, (double)m->u.i);
        }
        break;
    case RA_META_DOUBLE:
        prop_head(w, m->key, "Number", "", "U");
        p_f64(w, m->u.d);
        break;
    case RA_META_STRING:
        prop_head(w, m->key, "KString", "", "U");
        p_str(w, m->u.s ? m->u.s : "");
        break;
    case RA_META_VEC3:
        prop_head(w, m->key, "Vector3D", "Vector", "U");
        p_f64(w, m->u.v.x);
        p_f64(w, m->u.v.y);
        p_f64(w, m->u.v.z);
        break;
    default: return;
    }
    rec_end(w);
}

/* ---- rotations as Euler angles ------------------------------------------------------------- */
typedef struct eul {
    double x, y, z;
} eul;

static double wrap_near(double v, double ref)
{
    const double two_pi = 6.283185307179586476925;
    return v + two_pi * nearbyint((ref - v) / two_pi);
}

/* The X, Y, Z angles (radians; q = qz * qy * qx, FBX's XYZ order) of q that
 * lie nearest prev: of the two solutions, each wrapped by whole turns, the
 * one closer to prev.  At gimbal lock Z keeps prev's value. */
static eul euler_near(ra_quat q, eul prev)
{
    ra_mat4 m = ra_m4_from_quat(ra_q_normalize(q));
    double cy = sqrt(m.m[0][0] * m.m[0][0] + m.m[1][0] * m.m[1][0]);
    eul a, b;
    a.y = atan2(-m.m[2][0], cy);
    if (cy > 3e-8) { /* below, atan2 of the tiny entries loses more than treating cy as 0 */
        a.x = atan2(m.m[2][1], m.m[2][2]);
        a.z = atan2(m.m[1][0], m.m[0][0]);
        b.x = a.x + M_PI;
        b.y = (a.y >= 0 ? M_PI : -M_PI) - a.y;
        b.z = a.z + M_PI;
    } else {
        a.z = prev.z;
        a.x = m.m[2][0] < 0 ? prev.z + atan2(m.m[0][1], m.m[0][2]) : -prev.z + atan2(-m.m[0][1], -m.m[0][2]);
        b = a;
    }
    a.x = wrap_near(a.x, prev.x);
    a.y = wrap_near(a.y, prev.y);
    a.z = wrap_near(a.z, prev.z);
    b.x = wrap_near(b.x, prev.x);
    b.y = wrap_near(b.y, prev.y);
    b.z = wrap_near(b.z, prev.z);
    double da = fabs(a.x - prev.x) + fabs(a.y - prev.y) + fabs(a.z - prev.z);
    double db = fabs(b.x - prev.x) + fabs(b.y - prev.y) + fabs(b.z - prev.z);
    return db < da ? b : a;
}

static eul eul_lerp(eul a, eul b, double f)
{
    eul r = {a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f, a.z + (b.z - a.z) * f};
    return r;
}

/* A time in seconds as KTime, at the float32 second at or before it: players
 * keep key times as float32 seconds (three.js) or frames, and one that rounded
 * a key up would play the value before a step at the step's own time (the
 * glTF writer writes the same float32 times). */
static int64_t ktime(double t)
{
    double k = nearbyint((double)ra_f32_floor(t) * (double)KTIME_PER_SECOND);
    if (!(k > -9.2e18)) return INT64_MIN / 2;
    if (!(k < 9.2e18)) return INT64_MAX / 2;
    return (int64_t)k;
}

static bool ek_push(fw *w, int64_t t, eul e)
{
    euler_keys *k = &w->ek;
    if (k->n && t <= k->t[k->n - 1]) t = k->t[k->n - 1] + 1;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 256;
        int64_t *nt = ra_realloc(k->t, cap * sizeof *nt);
        if (!nt) return false;
        k->t = nt;
        for (int c = 0; c < 3; c++) {
            float *nv = ra_realloc(k->v[c], cap * sizeof *nv);
            if (!nv) return false;
            k->v[c] = nv;
        }
        k->cap = cap;
    }
    const double deg = 180.0 / M_PI;
    k->t[k->n] = t;
    k->v[0][k->n] = (float)(e.x * deg);
    k->v[1][k->n] = (float)(e.y * deg);
    k->v[2][k->n] = (float)(e.z * deg);
    k->n++;
    return true;
}

/* One slerp span of the track (a -> b over [ta, tb]) and the part [fa, fb]
 * of it whose ends have the Euler keys ea, eb: keys in between until linear
 * Euler playback stays within w->tol of the slerp (checked at a quarter, half
 * and three quarters of every part). */
typedef struct span {
    ra_quat a, b;
    double ta, tb;
} span;

static bool split(fw *w, const span *sp, double fa, double fb, eul ea, eul eb, int depth)
{
    double fm = 0.5 * (fa + fb);
    double ta = sp->ta + fa * (sp->tb - sp->ta), tb = sp->ta + fb * (sp->tb - sp->ta);
    /* players must tell the keys apart: three.js keeps float32 seconds, and
     * Blender float32 frames (from 1) and takes a key within 1e-4 frames of
     * the time it plays as the start of its segment; a part shorter than
     * 10 us (2.4e-3 frames at 240 fps) or 16 float32 steps is not cut */
    if (depth >= MAX_SPLIT_DEPTH || tb - ta < fmax(1e-5, 16 * ra_f32_ulp(tb + 1))) return true;
    /* three.js resamples a part where an angle moves 180 degrees or more
     * (and drops its last key): keep every angle's step below 90 */
    bool fine = fabs(eb.x - ea.x) < M_PI / 2 && fabs(eb.y - ea.y) < M_PI / 2 && fabs(eb.z - ea.z) < M_PI / 2;
    for (int i = 1; i <= 3 && fine; i++) {
        double f = fa + (fb - fa) * 0.25 * i;
        ra_quat want = ra_q_slerp_shortest(sp->a, sp->b, f);
        eul e = eul_lerp(ea, eb, 0.25 * i);
        fine = ra_q_angle_between(want, ra_q_from_euler_xyz(e.x, e.y, e.z)) <= w->tol;
    }
    if (fine) return true;
    eul em = euler_near(ra_q_slerp_shortest(sp->a, sp->b, fm), eul_lerp(ea, eb, 0.5));
    return split(w, sp, fa, fm, ea, em, depth + 1) && ek_push(w, ktime(sp->ta + fm * (sp->tb - sp->ta)), em) &&
           split(w, sp, fm, fb, em, eb, depth + 1);
}

/* The rotation track as Euler keys in w->ek, with a hold key at the duration. */
static bool euler_track(fw *w, const ra_quat_key *q, size_t n, double duration, eul start)
{
    w->ek.n = 0;
    eul e = euler_near(q[0].q, start);
    if (!ek_push(w, ktime(q[0].t), e)) return false;
    for (size_t i = 0; i + 1 < n; i++) {
        span sp = {ra_q_normalize(q[i].q), ra_q_normalize(q[i + 1].q), q[i].t, q[i + 1].t};
        eul eb = euler_near(sp.b, e);
        if (!split(w, &sp, 0, 1, e, eb, 0) || !ek_push(w, ktime(q[i + 1].t), eb)) return false;
        e = eb; /* angles keep growing on a node that keeps turning: players interpolate them as they are */
    }
    if (q[n - 1].t < duration && ktime(duration) > w->ek.t[w->ek.n - 1] && !ek_push(w, ktime(duration), e))
        return false;
    return true;
}

/* ---- the scene ----------------------------------------------------------------------------- */
static void rest_trs(const ra_mat4 *m, ra_vec3 *t, eul *r, ra_vec3 *s)
{
    ra_quat q;
    ra_m4_decompose(m, t, &q, s);
    eul zero = {0, 0, 0};
    *r = euler_near(q, zero);
}

static ra_vec3 deg3(eul e)
{
    const double d = 180.0 / M_PI;
    return ra_v3(e.x * d, e.y * d, e.z * d);
}

/* The rotation that turns +X to the camera's view direction and +Y to its
 * up, placed at its position: the local transform of its view model. */
static ra_mat4 camera_frame(const ra_camera *c)
{
    ra_vec3 f, y, x;
    ra_camera_axes(c, &f, &y, &x);
    return ra_m4_from_columns(f, y, x, c->position);
}

static void model_props(fw *w, const ra_mat4 *m)
{
    ra_vec3 t, s;
    eul r;
    rest_trs(m, &t, &r, &s);
    P_int(w, "InheritType", "enum", "", 1); /* RSrs: parent world times local */
    P_vec(w, "Lcl Translation", "Lcl Translation", "", "A", t);
    P_vec(w, "Lcl Rotation", "Lcl Rotation", "", "A", deg3(r));
    P_vec(w, "Lcl Scaling", "Lcl Scaling", "", "A", s);
}

static void model_tail(fw *w)
{
    rec_begin(w, "Shading");
    p_bool(w, true);
    rec_end(w);
    r_str(w, "Culling", "CullingOff");
}

static void write_models(fw *w)
{
    const ra_scene *s = w->s;
    for (size_t i = 0; i < s->node_count && !w->nomem; i++) {
        const ra_node *nd = &s->nodes[i];
        if (w->limb[i]) {
            rec_begin(w, "NodeAttribute");
            p_i64(w, obj_id(ID_LIMB_ATTR, i));
            p_name(w, nd->name, "NodeAttribute");
            p_str(w, "LimbNode");
            rec_begin(w, "Properties70");
            P_f64(w, "Size", "double", "Number", "", 1.0);
            rec_end(w);
            r_str(w, "TypeFlags", "Skeleton");
            rec_end(w);
        }
        rec_begin(w, "Model");
        p_i64(w, obj_id(ID_MODEL, i));
        p_name(w, nd->name, "Model");
        p_str(w, w->limb[i] ? "LimbNode" : "Null");
        r_i32(w, "Version", 232);
        rec_begin(w, "Properties70");
        model_props(w, &nd->transform);
        for (size_t k = 0; k < nd->meta.count; k++) P_meta(w, &nd->meta.items[k]);
        if (i == 0) { /* the scene's metadata and warnings on the root */
            for (size_t k = 0; k < s->meta.count; k++)
                if (!ra_meta_get(&nd->meta, s->meta.items[k].key)) P_meta(w, &s->meta.items[k]);
            if (s->warning_count) {
                ra_writer jb;
                ra_writer_init(&jb);
                ra_json j;
                ra_json_init_buffer(&j, &jb, false);
                ra_json_begin_array(&j);
                for (size_t k = 0; k < s->warning_count; k++) ra_json_string(&j, s->warnings[k].msg);
                ra_json_end_array(&j);
                ra_wr_u8(&jb, 0);
                if (j.failed || jb.failed) w->nomem = true;
                else P_str(w, "retroanim.warnings", "KString", "U", (const char *)jb.data);
                ra_writer_free(&jb);
            }
        }
        rec_end(w);
        model_tail(w);
        rec_end(w);
    }
    for (size_t c = 0; c < s->camera_count; c++) {
        const ra_camera *cam = &s->cameras[c];
        char name[RA_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s.view", cam->name);
        double aspect = cam->aspect > 0 && isfinite(cam->aspect) ? cam->aspect : 1;
        double half = cam->horizontal_fov > 0 && cam->horizontal_fov < M_PI / 2 ? cam->horizontal_fov : M_PI / 4;
        const double film_w = 35.0, inch = 25.4; /* a 35 mm film gate, in the inches FBX counts in */
        double focal = 0.5 * film_w / tan(half);
        double vhalf = atan(tan(half) / aspect);
        rec_begin(w, "NodeAttribute");
        p_i64(w, obj_id(ID_CAMERA_ATTR, c));
        p_name(w, name, "NodeAttribute");
        p_str(w, "Camera");
        rec_begin(w, "Properties70");
        P_vec(w, "Position", "Vector", "", "A", ra_v3(0, 0, 0));
        P_vec(w, "UpVector", "Vector", "", "A", ra_v3(0, 1, 0));
        P_vec(w, "InterestPosition", "Vector", "", "A", ra_v3(1, 0, 0));
        P_int(w, "CameraProjectionType", "enum", "", cam->orthographic ? 1 : 0);
        P_int(w, "ApertureMode", "enum", "", 1); /* horizontal: FieldOfView is the width's angle */
        P_f64(w, "AspectWidth", "double", "Number", "", aspect);
        P_f64(w, "AspectHeight", "double", "Number", "", 1.0);
        P_f64(w, "FilmWidth", "double", "Number", "", film_w / inch);
        P_f64(w, "FilmHeight", "double", "Number", "", film_w / aspect / inch);
        P_f64(w, "FilmAspectRatio", "double", "Number", "", aspect);
        P_f64(w, "FieldOfView", "FieldOfView", "", "A", 2 * half * 180 / M_PI);
        P_f64(w, "FieldOfViewX", "FieldOfViewX", "", "A", 2 * half * 180 / M_PI);
        P_f64(w, "FieldOfViewY", "FieldOfViewY", "", "A", 2 * vhalf * 180 / M_PI);
        P_f64(w, "FocalLength", "Number", "", "A", focal);
        P_f64(w, "NearPlane", "double", "Number", "", cam->clip_near);
        P_f64(w, "FarPlane", "double", "Number", "", cam->clip_far);
        if (cam->orthographic)
            P_f64(w, "OrthoZoom", "double", "Number", "", 2 * fmax(cam->ortho_xmag, cam->ortho_ymag));
        rec_end(w);
        r_str(w, "TypeFlags", "Camera");
        r_i32(w, "GeometryVersion", 124);
        r_vec(w, "Position", 0, 0, 0);
        r_vec(w, "Up", 0, 1, 0);
        r_vec(w, "LookAt", 1, 0, 0);
        r_i32(w, "ShowInfoOnMoving", 1);
        r_i32(w, "ShowAudio", 0);
        r_vec(w, "AudioColor", 0, 1, 0);
        r_f64(w, "CameraOrthoZoom", 1);
        rec_end(w);

        ra_mat4 m = camera_frame(cam);
        rec_begin(w, "Model");
        p_i64(w, obj_id(ID_VIEW_MODEL, c));
        p_name(w, name, "Model");
        p_str(w, "Camera");
        r_i32(w, "Version", 232);
        rec_begin(w, "Properties70");
        model_props(w, &m);
        P_int(w, "DefaultAttributeIndex", "int", "Integer", 0);
        rec_end(w);
        model_tail(w);
        rec_end(w);
    }
}

/* ---- geometry ---------------------------------------------------------------------------------- */
static void layer_element(fw *w, const char *rec, int version, const char *mapping, const char *reference)
{
    rec_begin(w, rec);
    p_i32(w, 0);
    r_i32(w, "Version", version);
    r_str(w, "Name", strcmp(rec, "LayerElementUV") ? "" : "UVMap");
    r_str(w, "MappingInformationType", mapping);
    r_str(w, "ReferenceInformationType", reference);
}

/* Each scene mesh as a Geometry and a Mesh model under its node's model. */
static void write_meshes(fw *w)
{
    const ra_scene *s = w->s;
    for (size_t i = 0; i < s->mesh_count && !w->nomem; i++) {
        const ra_mesh *m = &s->meshes[i];
        size_t nv = m->vertex_count, nt = m->triangle_count;
        rec_begin(w, "Geometry");
        p_i64(w, obj_id(ID_GEOMETRY, i));
        p_name(w, m->name, "Geometry");
        p_str(w, "Mesh");
        rec_begin(w, "Properties70");
        rec_end(w);
        r_i32(w, "GeometryVersion", 124);
        rec_begin(w, "Vertices");
        p_f64_array(w, m->positions, nv, 3, 3, false);
        rec_end(w);
        rec_begin(w, "PolygonVertexIndex");
        p_array_head(w, 'i', 3 * nt, 4);
        for (size_t k = 0; k < 3 * nt; k++) put_u32(w, k % 3 == 2 ? ~m->indices[k] : m->indices[k]);
        rec_end(w);
        if (m->normals) {
            layer_element(w, "LayerElementNormal", 102, "ByVertice", "Direct");
            rec_begin(w, "Normals");
            p_f64_array(w, m->normals, nv, 3, 3, false);
            rec_end(w);
            rec_end(w);
        }
        if (m->colors) {
            layer_element(w, "LayerElementColor", 101, "ByVertice", "Direct");
            rec_begin(w, "Colors");
            p_f64_array(w, m->colors, nv, 4, 4, false);
            rec_end(w);
            rec_end(w);
        }
        if (m->uvs) { /* FBX counts v up from the image's bottom */
            layer_element(w, "LayerElementUV", 101, "ByVertice", "Direct");
            rec_begin(w, "UV");
            p_f64_array(w, m->uvs, nv, 2, 2, true);
            rec_end(w);
            rec_end(w);
        }
        layer_element(w, "LayerElementMaterial", 101, "AllSame", "IndexToDirect");
        rec_begin(w, "Materials");
        p_array_head(w, 'i', 1, 4);
        put_u32(w, 0);
        rec_end(w);
        rec_end(w);
        rec_begin(w, "Layer");
        p_i32(w, 0);
        r_i32(w, "Version", 100);
        const char *layers[4] = {m->normals ? "LayerElementNormal" : NULL, m->colors ? "LayerElementColor" : NULL,
                                 m->uvs ? "LayerElementUV" : NULL, "LayerElementMaterial"};
        for (int k = 0; k < 4; k++) {
            if (!layers[k]) continue;
            rec_begin(w, "LayerElement");
            r_str(w, "Type", layers[k]);
            r_i32(w, "TypedIndex", 0);
            rec_end(w);
        }
        rec_end(w);
        rec_end(w);

        rec_begin(w, "Model");
        p_i64(w, obj_id(ID_MESH_MODEL, i));
        p_name(w, m->name, "Model");
        p_str(w, "Mesh");
        r_i32(w, "Version", 232);
        rec_begin(w, "Properties70");
        for (size_t k = 0; k < m->meta.count; k++) P_meta(w, &m->meta.items[k]);
        rec_end(w);
        model_tail(w);
        rec_end(w);
    }
    for (size_t i = 0; i < s->material_count && !w->nomem; i++) {
        const ra_material *m = &s->materials[i];
        rec_begin(w, "Material");
        p_i64(w, obj_id(ID_MATERIAL, i));
        p_name(w, m->name, "Material");
        p_str(w, "");
        r_i32(w, "Version", 102);
        r_str(w, "ShadingModel", "lambert"); /* unlit: emissive colour (FBX has no unlit model) */
        r_i32(w, "MultiLayer", 0);
        rec_begin(w, "Properties70");
        ra_vec3 c = ra_v3(m->base_color[0], m->base_color[1], m->base_color[2]);
        P_vec(w, "DiffuseColor", "Color", "", "A", c);
        P_f64(w, "DiffuseFactor", "Number", "", "A", 1.0);
        if (m->unlit) {
            P_vec(w, "EmissiveColor", "Color", "", "A", c);
            P_f64(w, "EmissiveFactor", "Number", "", "A", 1.0);
        }
        P_f64(w, "TransparencyFactor", "Number", "", "A", 1 - m->base_color[3]);
        P_f64(w, "Opacity", "double", "Number", "", m->base_color[3]);
        for (size_t k = 0; k < m->meta.count; k++) P_meta(w, &m->meta.items[k]);
        rec_end(w);
        rec_end(w);
    }
    for (size_t t = 0; t < s->texture_count && !w->nomem; t++) {
        const ra_texture *tx = &s->textures[t];
        char file[RA_NAME_MAX + 8];
        snprintf(file, sizeof file, "%s.png", tx->name);
        uint8_t *png = NULL;
        size_t size = 0;
        if (ra_png_encode(tx->rgba, tx->width, tx->height, &png, &size, w->err) != RA_OK) {
            w->nomem = true;
            return;
        }
        rec_begin(w, "Video");
        p_i64(w, obj_id(ID_VIDEO, t));
        p_name(w, tx->name, "Video");
        p_str(w, "Clip");
        r_str(w, "Type", "Clip");
        rec_begin(w, "Properties70");
        P_str(w, "Path", "KString", "XRefUrl", file);
        rec_end(w);
        r_i32(w, "UseMipMap", 0);
        r_str(w, "Filename", file);
        r_str(w, "RelativeFilename", file);
        rec_begin(w, "Content");
        p_bytes(w, 'R', png, size);
        rec_end(w);
        rec_end(w);
        ra_free(png);

        rec_begin(w, "Texture");
        p_i64(w, obj_id(ID_TEXTURE, t));
        p_name(w, tx->name, "Texture");
        p_str(w, "");
        r_str(w, "Type", "TextureVideoClip");
        r_i32(w, "Version", 202);
        rec_begin(w, "TextureName");
        p_name(w, tx->name, "Texture");
        rec_end(w);
        rec_begin(w, "Properties70");
        P_int(w, "WrapModeU", "enum", "", tx->wrap_s == RA_WRAP_CLAMP ? 1 : 0);
        P_int(w, "WrapModeV", "enum", "", tx->wrap_t == RA_WRAP_CLAMP ? 1 : 0);
        rec_end(w);
        rec_begin(w, "Media");
        p_name(w, tx->name, "Video");
        rec_end(w);
        r_str(w, "FileName", file);
        r_str(w, "RelativeFilename", file);
        r_vec(w, "ModelUVTranslation", 0, 0, 0);
        r_vec(w, "ModelUVScaling", 1, 1, 0);
        r_str(w, "Texture_Alpha_Source", "None");
        rec_end(w);
    }
}

/* The joints of mesh m's skin that get a Cluster (at most 0x10000), with
 * the vertex slots each weights: at[j] .. at[j + 1] in slot (the 4 slots
 * of each vertex, v * 4 + k, with a weight above 0), in vertex order.  One
 * pass over the slots, where each joint's scan of them all cost joints x
 * vertices.  NULL at[] when out of memory (w->nomem). */
typedef struct clusters {
    size_t joints;
    size_t *at;
    uint32_t *slot;
} clusters;

static clusters mesh_clusters(fw *w, const ra_mesh *m)
{
    clusters c = {0, NULL, NULL};
    size_t nj = w->s->skins[m->skin].joint_count, ns = 4 * (size_t)m->vertex_count;
    c.joints = nj < 0x10000 ? nj : 0x10000;
    c.at = ra_calloc(c.joints + 2, sizeof *c.at);
    c.slot = ra_malloc((ns ? ns : 1) * sizeof *c.slot);
    if (!c.at || !c.slot) {
        ra_free(c.at), ra_free(c.slot);
        c.at = NULL, c.slot = NULL;
        w->nomem = true;
        return c;
    }
    for (size_t v = 0; v < ns; v++)
        if (m->weights[v] > 0 && m->joints[v] < c.joints) c.at[m->joints[v] + 2]++;
    for (size_t j = 0; j < c.joints; j++) c.at[j + 2] += c.at[j + 1];
    for (size_t v = 0; v < ns; v++) /* at[j + 1]: where joint j's next slot goes */
        if (m->weights[v] > 0 && m->joints[v] < c.joints) c.slot[c.at[m->joints[v] + 1]++] = (uint32_t)v;
    return c;
}

static void clusters_free(clusters *c)
{
    ra_free(c->at);
    ra_free(c->slot);
}

/* A 4x4 matrix as FBX holds it: 16 doubles, column by column. */
static void r_matrix(fw *w, const char *name, const ra_mat4 *m)
{
    rec_begin(w, name);
    p_array_head(w, 'd', 16, 8);
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            double x = m->m[r][c];
            uint64_t u;
            memcpy(&u, &x, 8);
            put_u64(w, u);
        }
    rec_end(w);
}

/* Skinned meshes: a Skin deformer on the geometry and a Cluster per joint that weights a vertex. */
static void write_skins(fw *w)
{
    const ra_scene *s = w->s;
    ra_mat4 *world = NULL;
    for (size_t i = 0; i < s->mesh_count && !w->nomem; i++) {
        const ra_mesh *m = &s->meshes[i];
        if (m->skin < 0) continue;
        if (!world) {
            world = ra_malloc(s->node_count * sizeof *world);
            if (!world) {
                w->nomem = true;
                return;
            }
            for (size_t n = 0; n < s->node_count; n++)
                world[n] =
                    n ? ra_m4_mul(&world[(size_t)s->nodes[n].parent], &s->nodes[n].transform) : s->nodes[0].transform;
        }
        const ra_skin *sk = &s->skins[m->skin];
        rec_begin(w, "Deformer");
        p_i64(w, obj_id(ID_SKIN, i));
        p_name(w, m->name, "Deformer");
        p_str(w, "Skin");
        r_i32(w, "Version", 101);
        r_f64(w, "Link_DeformAcuracy", 50);
        rec_end(w);
        clusters cl = mesh_clusters(w, m);
        for (size_t j = 0; cl.at && j < cl.joints; j++) {
            size_t n = cl.at[j + 1] - cl.at[j];
            if (!n) continue;
            const uint32_t *slot = cl.slot + cl.at[j];
            rec_begin(w, "Deformer");
            p_i64(w, obj_id(ID_CLUSTER, (uint64_t)i << 16 | j));
            p_name(w, s->nodes[sk->joints[j]].name, "SubDeformer");
            p_str(w, "Cluster");
            r_i32(w, "Version", 100);
            rec_begin(w, "Indexes");
            p_array_head(w, 'i', n, 4);
            for (size_t k = 0; k < n; k++) put_u32(w, slot[k] / 4);
            rec_end(w);
            rec_begin(w, "Weights");
            p_array_head(w, 'd', n, 8);
            for (size_t k = 0; k < n; k++) {
                double x = m->weights[slot[k]];
                uint64_t u;
                memcpy(&u, &x, 8);
                put_u64(w, u);
            }
            rec_end(w);
            /* Transform maps the geometry into the bone's space at bind time (inverse bone world x mesh world),
             * TransformLink is the bone's world at bind time (ufbx: geometry_to_bone, bind_to_world) */
            ra_mat4 inv, g2b;
            if (!ra_m4_invert_affine(&world[sk->joints[j]], &inv)) inv = ra_m4_identity();
            g2b = inv; /* the skinned geometry is in the scene's frame, its model at the top */
            r_matrix(w, "Transform", &g2b);
            r_matrix(w, "TransformLink", &world[sk->joints[j]]);
            rec_end(w);
        }
        clusters_free(&cl);
    }
    ra_free(world);
}

static void connect_meshes(fw *w);

static const char *const curve_node_names[3] = {"T", "R", "S"};
static const char *const lcl_names[3] = {"Lcl Translation", "Lcl Rotation", "Lcl Scaling"};
static const char *const axis_names[3] = {"d|X", "d|Y", "d|Z"};

/* the curve nodes and curves of one track: k = the track's index in the file */
static void write_curves(fw *w, const int64_t *t, float *const v[3], size_t n, uint64_t k, int path)
{
    packed_array times;
    if (n > (UINT32_MAX - 64) / 8) { /* FBX array sizes are 32-bit, in 7.5 too */
        w->too_long = n;
        w->nomem = true; /* stops the writing loops */
        return;
    }
    if (!pack_i64(w, t, n, &times)) {
        w->nomem = true;
        return;
    }
    rec_begin(w, "AnimationCurveNode");
    p_i64(w, obj_id(ID_CURVE_NODE, k));
    p_name(w, curve_node_names[path], "AnimCurveNode");
    p_str(w, "");
    rec_begin(w, "Properties70");
    for (int c = 0; c < 3; c++) P_f64(w, axis_names[c], "Number", "", "A", v[c][0]);
    rec_end(w);
    rec_end(w);
    for (int c = 0; c < 3; c++) {
        rec_begin(w, "AnimationCurve");
        p_i64(w, obj_id(ID_CURVE, k * 3 + (uint64_t)c));
        p_name(w, "", "AnimCurve");
        p_str(w, "");
        r_f64(w, "Default", v[c][0]);
        r_i32(w, "KeyVer", 4009);
        rec_begin(w, "KeyTime");
        p_packed(w, &times);
        rec_end(w);
        rec_begin(w, "KeyValueFloat");
        p_f32_array(w, v[c], n);
        rec_end(w);
        static const int32_t flags = 0x4; /* linear */
        static const float data[4] = {0, 0, 0, 0};
        rec_begin(w, "KeyAttrFlags");
        p_array_head(w, 'i', 1, 4);
        put_u32(w, (uint32_t)flags);
        rec_end(w);
        rec_begin(w, "KeyAttrDataFloat");
        p_f32_array(w, data, 4);
        rec_end(w);
        rec_begin(w, "KeyAttrRefCount");
        p_array_head(w, 'i', 1, 4);
        put_u32(w, (uint32_t)n);
        rec_end(w);
        rec_end(w);
    }
    w->curves += 3;
    w->keys += n;
}

/* position or scaling keys as three curves (with a hold key at the duration) */
static bool vec_curves(fw *w, const ra_vec_key *keys, size_t n, double duration, uint64_t k, int path)
{
    size_t m = n + 1;
    if (m > w->ticks_cap) {
        int64_t *nt = ra_realloc(w->ticks, m * (sizeof *nt + 3 * sizeof(float)));
        if (!nt) return false;
        w->ticks = nt;
        w->ticks_cap = m;
    }
    float *v[3] = {(float *)(w->ticks + m), (float *)(w->ticks + m) + m, (float *)(w->ticks + m) + 2 * m};
    size_t c = 0;
    for (size_t i = 0; i < n; i++, c++) {
        int64_t t = ktime(keys[i].t);
        w->ticks[c] = c && t <= w->ticks[c - 1] ? w->ticks[c - 1] + 1 : t;
        v[0][c] = (float)keys[i].v.x;
        v[1][c] = (float)keys[i].v.y;
        v[2][c] = (float)keys[i].v.z;
    }
    if (keys[n - 1].t < duration && ktime(duration) > w->ticks[c - 1]) {
        w->ticks[c] = ktime(duration);
        for (int a = 0; a < 3; a++) v[a][c] = v[a][c - 1];
        c++;
    }
    write_curves(w, w->ticks, v, c, k, path);
    return true;
}

/* A connection of the animation objects, kept until Connections is written:
 * prop < 0 is an object-object link, else an object-property link to
 * lcl_names[prop] (0..2) or axis_names[prop - 3]. */
typedef struct conn_link {
    int64_t child, parent;
    int prop;
} conn_link;

static bool add_link(fw *w, int64_t child, int64_t parent, int prop)
{
    if (w->link_count == w->link_cap) {
        size_t cap = w->link_cap ? w->link_cap * 2 : 256;
        conn_link *nl = ra_realloc(w->links, cap * sizeof *nl);
        if (!nl) return false;
        w->links = nl;
        w->link_cap = cap;
    }
    w->links[w->link_count++] = (conn_link){child, parent, prop};
    return true;
}

/* the links of curve node k (a T, R or S track of `node` in stack a) */
static bool link_track(fw *w, uint64_t k, size_t a, uint32_t node, int path)
{
    bool ok = add_link(w, obj_id(ID_CURVE_NODE, k), obj_id(ID_LAYER, a), -1) &&
              add_link(w, obj_id(ID_CURVE_NODE, k), obj_id(ID_MODEL, node), path);
    for (int x = 0; x < 3 && ok; x++)
        ok = add_link(w, obj_id(ID_CURVE, k * 3 + (uint64_t)x), obj_id(ID_CURVE_NODE, k), 3 + x);
    return ok;
}

/* A constant track (two keys: 0 and the duration) of node's rest value for
 * path (0 T, 1 R, 2 S). */
static bool rest_track(fw *w, uint32_t node, int path, double duration, uint64_t k, size_t a)
{
    ra_vec3 t, sc;
    eul r;
    rest_trs(&w->s->nodes[node].transform, &t, &r, &sc);
    ra_vec3 v = path == 0 ? t : path == 1 ? deg3(r) : sc;
    float x[2] = {(float)v.x, (float)v.x}, y[2] = {(float)v.y, (float)v.y}, z[2] = {(float)v.z, (float)v.z};
    float *vals[3] = {x, y, z};
    int64_t times[2] = {0, ktime(duration)};
    write_curves(w, times, vals, times[1] > 0 ? 2 : 1, k, path);
    return link_track(w, k, a, node, path);
}

/* Does every key of the track hold the node's rest value?  Such a track
 * changes nothing a player shows. */
static bool vec_at_rest(const ra_vec_key *k, size_t n, ra_vec3 rest)
{
    for (size_t i = 0; i < n; i++)
        if ((float)k[i].v.x != (float)rest.x || (float)k[i].v.y != (float)rest.y || (float)k[i].v.z != (float)rest.z)
            return false;
    return true;
}
static bool quat_at_rest(const ra_quat_key *k, size_t n, ra_quat rest)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabs(fabs(ra_q_dot(ra_q_normalize(k[i].q), rest)) - 1) <= 1e-12)) return false;
    return true;
}

/* The tracks of a channel (bit 0 T, 1 R, 2 S) that hold something other
 * than the node's rest value. */
static int track_mask(const ra_scene *s, const ra_channel *ch)
{
    ra_vec3 t, sc;
    ra_quat r;
    ra_m4_decompose(&s->nodes[ch->node].transform, &t, &r, &sc);
    r = ra_q_normalize(r);
    return (ch->position_count && !vec_at_rest(ch->position, ch->position_count, t) ? 1 : 0) |
           (ch->rotation_count && !quat_at_rest(ch->rotation, ch->rotation_count, r) ? 2 : 0) |
           (ch->scaling_count && !vec_at_rest(ch->scaling, ch->scaling_count, sc) ? 4 : 0);
}

/* Does some track of the animation move a node away from its rest?  Then
 * the tracks that stay at rest are left out (a stack keeps at least its
 * tracks, so players still list it). */
static bool stack_moves(const ra_scene *s, const ra_animation *an)
{
    for (size_t c = 0; c < an->channel_count; c++)
        if (track_mask(s, &an->channels[c])) return true;
    return false;
}

/* The curve nodes write_animations writes (Definitions counts them first);
 * UINT64_MAX when out of memory. */
static uint64_t count_curve_nodes(const ra_scene *s)
{
    if (s->animation_count > 1) { /* every animated node, T, R and S, in every stack */
        bool *animated = ra_calloc(s->node_count, 1);
        if (!animated) return UINT64_MAX;
        uint64_t n_animated = 0;
        for (size_t a = 0; a < s->animation_count; a++)
            for (size_t c = 0; c < s->animations[a].channel_count; c++) {
                uint32_t nd = s->animations[a].channels[c].node;
                n_animated += !animated[nd];
                animated[nd] = true;
            }
        ra_free(animated);
        return 3 * n_animated * s->animation_count;
    }
    uint64_t n = 0;
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        bool trim = stack_moves(s, an);
        for (size_t c = 0; c < an->channel_count; c++) {
            const ra_channel *ch = &an->channels[c];
            int mask = trim ? track_mask(s, ch) : 7;
            n += (uint64_t)((ch->position_count && (mask & 1)) + (ch->rotation_count && (mask & 2)) +
                            (ch->scaling_count && (mask & 4)));
        }
    }
    return n;
}

/* Writes the stacks, layers, curve nodes and curves.  Track k is the k-th
 * curve node written.  With more than one animation, every node that some
 * animation animates gets all three tracks in every stack, constant at rest
 * where the animation has none: players that bake one action per object and
 * stack (Blender) otherwise keep another stack's values for them (Blender's
 * importer even carries them from one stack's bake into the next). */
static bool write_animations(fw *w)
{
    const ra_scene *s = w->s;
    uint64_t k = 0;
    bool full = s->animation_count > 1;
    bool *animated = ra_calloc(s->node_count, 2 * sizeof *animated);
    if (!animated) return false;
    bool *here = animated + s->node_count;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++) animated[s->animations[a].channels[c].node] = true;
    bool ok = true;
    for (size_t a = 0; a < s->animation_count && ok && !w->overflow && !w->nomem; a++) {
        const ra_animation *an = &s->animations[a];
        int64_t dur = ktime(an->duration);
        rec_begin(w, "AnimationStack");
        p_i64(w, obj_id(ID_STACK, a));
        p_name(w, an->name, "AnimStack");
        p_str(w, "");
        rec_begin(w, "Properties70");
        P_time(w, "LocalStart", 0);
        P_time(w, "LocalStop", dur);
        P_time(w, "ReferenceStart", 0);
        P_time(w, "ReferenceStop", dur);
        P_f64(w, "retroanim.duration", "Number", "", "U", an->duration);
        P_f64(w, "retroanim.native_ticks_per_second", "Number", "", "U", an->ticks_per_second);
        rec_end(w);
        rec_end(w);
        rec_begin_x(w, "AnimationLayer", true);
        p_i64(w, obj_id(ID_LAYER, a));
        p_name(w, an->name, "AnimLayer");
        p_str(w, "");
        rec_end(w);
        ok = add_link(w, obj_id(ID_LAYER, a), obj_id(ID_STACK, a), -1);
        memset(here, 0, s->node_count * sizeof *here);
        bool trim = !full && stack_moves(s, an);
        for (size_t c = 0; c < an->channel_count && ok && !w->overflow && !w->nomem; c++) {
            const ra_channel *ch = &an->channels[c];
            here[ch->node] = true;
            int mask = trim ? track_mask(s, ch) : 7;
            if (ch->position_count && (mask & 1))
                ok = vec_curves(w, ch->position, ch->position_count, an->duration, k++, 0) &&
                     link_track(w, k - 1, a, ch->node, 0);
            else if (full) ok = rest_track(w, ch->node, 0, an->duration, k++, a);
            if (ok && ch->rotation_count && (mask & 2)) {
                ra_vec3 t, sc;
                eul r;
                rest_trs(&s->nodes[ch->node].transform, &t, &r, &sc);
                ok = euler_track(w, ch->rotation, ch->rotation_count, an->duration, r);
                if (ok) write_curves(w, w->ek.t, w->ek.v, w->ek.n, k, 1);
                ok = ok && link_track(w, k++, a, ch->node, 1);
            } else if (ok && full) {
                ok = rest_track(w, ch->node, 1, an->duration, k++, a);
            }
            if (ok && ch->scaling_count && (mask & 4))
                ok = vec_curves(w, ch->scaling, ch->scaling_count, an->duration, k++, 2) &&
                     link_track(w, k - 1, a, ch->node, 2);
            else if (ok && full) ok = rest_track(w, ch->node, 2, an->duration, k++, a);
        }
        for (uint32_t i = 0; i < s->node_count && ok && full; i++)
            for (int p = 0; p < 3 && ok && animated[i] && !here[i]; p++) ok = rest_track(w, i, p, an->duration, k++, a);
    }
    ra_free(animated);
    return ok;
}

static void conn(fw *w, const char *type, int64_t child, int64_t parent, const char *prop)
{
    rec_begin(w, "C");
    p_str(w, type);
    p_i64(w, child);
    p_i64(w, parent);
    if (prop) p_str(w, prop);
    rec_end(w);
}

static void write_connections(fw *w)
{
    const ra_scene *s = w->s;
    rec_begin(w, "Connections");
    for (size_t i = 0; i < s->node_count; i++) {
        conn(w, "OO", obj_id(ID_MODEL, i), i ? obj_id(ID_MODEL, (uint64_t)s->nodes[i].parent) : 0, NULL);
        if (w->limb[i]) conn(w, "OO", obj_id(ID_LIMB_ATTR, i), obj_id(ID_MODEL, i), NULL);
    }
    for (size_t c = 0; c < s->camera_count; c++) {
        conn(w, "OO", obj_id(ID_VIEW_MODEL, c), obj_id(ID_MODEL, s->cameras[c].node), NULL);
        conn(w, "OO", obj_id(ID_CAMERA_ATTR, c), obj_id(ID_VIEW_MODEL, c), NULL);
    }
    connect_meshes(w);
    for (size_t i = 0; i < w->link_count; i++) {
        const conn_link *l = &w->links[i];
        conn(w, l->prop < 0 ? "OO" : "OP", l->child, l->parent,
             l->prop < 0   ? NULL
             : l->prop < 3 ? lcl_names[l->prop]
                           : axis_names[l->prop - 3]);
    }
    rec_end(w);
}

static void connect_meshes(fw *w)
{
    const ra_scene *s = w->s;
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        /* a skinned mesh's vertices are in the scene's frame (retroanim.h): its model hangs on the FBX root */
        conn(w, "OO", obj_id(ID_MESH_MODEL, i), m->skin >= 0 ? 0 : obj_id(ID_MODEL, m->node), NULL);
        conn(w, "OO", obj_id(ID_GEOMETRY, i), obj_id(ID_MESH_MODEL, i), NULL);
        if (m->material >= 0) conn(w, "OO", obj_id(ID_MATERIAL, (uint64_t)m->material), obj_id(ID_MESH_MODEL, i), NULL);
    }
    for (size_t i = 0; i < s->material_count; i++)
        if (s->materials[i].texture >= 0)
            conn(w, "OP", obj_id(ID_TEXTURE, (uint64_t)s->materials[i].texture), obj_id(ID_MATERIAL, i),
                 "DiffuseColor");
    for (size_t t = 0; t < s->texture_count; t++) conn(w, "OO", obj_id(ID_VIDEO, t), obj_id(ID_TEXTURE, t), NULL);
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        if (m->skin < 0) continue;
        const ra_skin *sk = &s->skins[m->skin];
        conn(w, "OO", obj_id(ID_SKIN, i), obj_id(ID_GEOMETRY, i), NULL);
        clusters cl = mesh_clusters(w, m);
        for (size_t j = 0; cl.at && j < cl.joints; j++) {
            if (cl.at[j + 1] == cl.at[j]) continue;
            conn(w, "OO", obj_id(ID_CLUSTER, (uint64_t)i << 16 | j), obj_id(ID_SKIN, i), NULL);
            conn(w, "OO", obj_id(ID_MODEL, sk->joints[j]), obj_id(ID_CLUSTER, (uint64_t)i << 16 | j), NULL);
        }
        clusters_free(&cl);
    }
}

/* The frame rate declared: the first animation's when it is a whole number
 * from 10 to 240, else 30.  Keys keep their exact times either way; the rate
 * is what an editor shows (Blender sets its scene's rate from it, and at a
 * rate of 1 it cannot place a sub-frame finer than 1e-4 frames = 0.1 ms). */
static double frame_rate(const ra_scene *s, int *mode)
{
    double r = s->animation_count ? s->animations[0].ticks_per_second : 30;
    if (!(r >= 10 && r <= 240 && r == floor(r))) r = 30;
    static const struct {
        double fps;
        int mode;
    } known[] = {{120, 1}, {100, 2}, {60, 3}, {50, 4}, {48, 5}, {30, 6}, {25, 10}, {24, 11}, {96, 15}, {72, 16}};
    *mode = 14; /* custom: CustomFrameRate */
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].fps == r) *mode = known[i].mode;
    return r;
}

static void write_header_sections(fw *w)
{
    const ra_scene *s = w->s;
    char creator[96];
    if (w->o->creator) {
        snprintf(creator, sizeof creator, "%s", w->o->creator);
    } else {
        uint32_t v = ra_version();
        snprintf(creator, sizeof creator, "retroanim %u.%u.%u", v / 1000000, v / 1000 % 1000, v % 1000);
    }
    rec_begin(w, "FBXHeaderExtension");
    r_i32(w, "FBXHeaderVersion", 1003);
    r_i32(w, "FBXVersion", w->version);
    r_i32(w, "EncryptionType", 0);
    r_str(w, "Creator", creator);
    rec_end(w);
    r_str(w, "Creator", creator);

    int mode;
    double fps = frame_rate(s, &mode);
    double longest = 0;
    for (size_t a = 0; a < s->animation_count; a++) longest = fmax(longest, s->animations[a].duration);
    rec_begin(w, "GlobalSettings");
    r_i32(w, "Version", 1000);
    rec_begin(w, "Properties70");
    P_int(w, "UpAxis", "int", "Integer", 1);
    P_int(w, "UpAxisSign", "int", "Integer", 1);
    P_int(w, "FrontAxis", "int", "Integer", 2);
    P_int(w, "FrontAxisSign", "int", "Integer", 1);
    P_int(w, "CoordAxis", "int", "Integer", 0);
    P_int(w, "CoordAxisSign", "int", "Integer", 1);
    P_int(w, "OriginalUpAxis", "int", "Integer", 1);
    P_int(w, "OriginalUpAxisSign", "int", "Integer", 1);
    P_f64(w, "UnitScaleFactor", "double", "Number", "", 100.0); /* centimetres per unit: 1 unit = 1 m */
    P_f64(w, "OriginalUnitScaleFactor", "double", "Number", "", 100.0);
    P_int(w, "TimeMode", "enum", "", mode);
    P_int(w, "TimeProtocol", "enum", "", 2);
    P_int(w, "SnapOnFrameMode", "enum", "", 0);
    P_time(w, "TimeSpanStart", 0);
    P_time(w, "TimeSpanStop", ktime(longest));
    P_f64(w, "CustomFrameRate", "double", "Number", "", fps);
    rec_end(w);
    rec_end(w);

    rec_begin(w, "Documents");
    r_i32(w, "Count", 1);
    rec_begin(w, "Document");
    p_i64(w, 1);
    p_str(w, "");
    p_str(w, "Scene");
    rec_begin(w, "Properties70");
    prop_head(w, "SourceObject", "object", "", "");
    rec_end(w);
    P_str(w, "ActiveAnimStackName", "KString", "", s->animation_count ? s->animations[0].name : "");
    rec_end(w);
    r_i64(w, "RootNode", 0);
    rec_end(w);
    rec_end(w);
    rec_begin(w, "References");
    rec_end(w);

    size_t limbs = 0, deformers = 0;
    for (size_t i = 0; i < s->node_count; i++) limbs += w->limb[i];
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        if (m->skin < 0) continue;
        deformers++;
        clusters cl = mesh_clusters(w, m);
        for (size_t j = 0; cl.at && j < cl.joints; j++) deformers += cl.at[j + 1] > cl.at[j];
        clusters_free(&cl);
    }
    uint64_t curve_nodes = w->curve_nodes;
    struct {
        const char *type;
        uint64_t count;
    } defs[] = {
        {"GlobalSettings", 1},
        {"Model", s->node_count + s->camera_count + s->mesh_count},
        {"Geometry", s->mesh_count},
        {"Material", s->material_count},
        {"Texture", s->texture_count},
        {"Video", s->texture_count},
        {"Deformer", deformers},
        {"NodeAttribute", limbs + s->camera_count},
        {"AnimationStack", s->animation_count},
        {"AnimationLayer", s->animation_count},
        {"AnimationCurveNode", curve_nodes},
        {"AnimationCurve", 3 * (uint64_t)curve_nodes},
    };
    uint64_t total = 0;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) total += defs[i].count;
    rec_begin(w, "Definitions");
    r_i32(w, "Version", 100);
    r_i32(w, "Count", total > INT32_MAX ? INT32_MAX : (int32_t)total);
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        if (!defs[i].count) continue;
        rec_begin(w, "ObjectType");
        p_str(w, defs[i].type);
        r_i32(w, "Count", defs[i].count > INT32_MAX ? INT32_MAX : (int32_t)defs[i].count);
        rec_end(w);
    }
    rec_end(w);
}

static void write_takes(fw *w)
{
    const ra_scene *s = w->s;
    rec_begin(w, "Takes");
    r_str(w, "Current", s->animation_count ? s->animations[0].name : "");
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        int64_t dur = ktime(an->duration);
        char file[RA_NAME_MAX + 16];
        snprintf(file, sizeof file, "%s.tak", an->name);
        rec_begin(w, "Take");
        p_str(w, an->name);
        r_str(w, "FileName", file);
        rec_begin(w, "LocalTime");
        p_i64(w, 0);
        p_i64(w, dur);
        rec_end(w);
        rec_begin(w, "ReferenceTime");
        p_i64(w, 0);
        p_i64(w, dur);
        rec_end(w);
        rec_end(w);
    }
    rec_end(w);
}

static void write_footer(fw *w)
{
    /* the fixed footer FBX files end with: an id, zeros, padding to 16 bytes,
     * the version, 120 zeros and a closing magic */
    static const uint8_t foot_id[16] = {0xfa, 0xbc, 0xab, 0x09, 0xd0, 0xc8, 0xd4, 0x66,
                                        0xb1, 0x76, 0xfb, 0x83, 0x1c, 0xf7, 0x26, 0x7e};
    static const uint8_t magic[16] = {0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e,
                                      0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b};
    uint8_t zero[120] = {0};
    put(w, foot_id, 16);
    put(w, zero, 4);
    size_t pad = (size_t)(16 - pos(w) % 16);
    put(w, zero, pad);
    put_u32(w, (uint32_t)w->version);
    put(w, zero, 120);
    put(w, magic, 16);
}

static ra_status write_file(fw *w, const char *path)
{
    ra_status st = ra_outfile_open(&w->f, path, w->err);
    if (st != RA_OK) return st;
    if (fseeko(w->f.fp, 0, SEEK_CUR) != 0) { /* a pipe or a socket: record headers are patched in place */
        ra_outfile_abort(&w->f);
        return ra_fail(w->err, RA_ERR_IO, FMT, RA_NO_OFFSET, "",
                       "the output cannot seek: FBX is written with "
                       "seeks; write to a file");
    }
    w->n = 0;
    w->base = 0;
    w->depth = 0;
    w->overflow = false;
    w->curves = w->keys = 0;
    w->link_count = 0;
    w->too_long = 0;
    put(w, "Kaydara FBX Binary  \0\x1a\0", 23);
    put_u32(w, (uint32_t)w->version);
    write_header_sections(w);
    rec_begin(w, "Objects");
    write_models(w);
    write_meshes(w);
    write_skins(w);
    bool ok = !w->nomem && write_animations(w);
    rec_end(w);
    if (ok && !w->nomem && !w->overflow && w->curves != 3 * w->curve_nodes) { /* Definitions announced another count */
        ra_outfile_abort(&w->f);
        return ra_fail(w->err, RA_ERR_UNSUPPORTED, FMT, RA_NO_OFFSET, "",
                       "internal error: %llu curves written, "
                       "%llu announced",
                       (unsigned long long)w->curves, 3 * (unsigned long long)w->curve_nodes);
    }
    if (ok) {
        write_connections(w);
        write_takes(w);
        uint8_t zero[25] = {0};
        put(w, zero, header_size(w)); /* the top level's null record */
        write_footer(w);
        w->total = pos(w);
        flush(w);
    }
    if (w->too_long) {
        ra_outfile_abort(&w->f);
        return ra_fail(w->err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "",
                       "a track of %zu keys passes the 4 GiB an FBX "
                       "array holds (write .glb or .gltf)",
                       w->too_long);
    }
    if (!ok || w->nomem) {
        ra_outfile_abort(&w->f);
        return ra_fail(w->err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    }
    if (w->overflow) {
        ra_outfile_abort(&w->f);
        return RA_ERR_LIMIT; /* the caller retries with 7.5 */
    }
    return ra_outfile_commit(&w->f, w->err);
}

void ra_fbx_options_default(ra_fbx_options *o) { memset(o, 0, sizeof *o); }

ra_status ra_fbx_write(const ra_scene *s, const char *path, const ra_fbx_options *opt, ra_write_stats *stats,
                       ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    ra_fbx_options def;
    ra_fbx_options_default(&def);
    if (!opt) opt = &def;
    if (!s || !s->node_count) return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "", "the scene has no nodes");
    ra_status sc = ra_scene_check(s, err); /* hand-made scenes too: node indices, parents, tracks */
    if (sc != RA_OK) return sc;
    if (opt->version != 0 && opt->version != 7400 && opt->version != 7500)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "version", "FBX version %d: 7400 or 7500", opt->version);
    fw w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.o = opt;
    w.err = err;
    w.buf = ra_malloc(BUF_SIZE);
    w.limb = ra_calloc(s->node_count, sizeof *w.limb);
    if (!w.buf || !w.limb) {
        ra_free(w.buf);
        ra_free(w.limb);
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    }
    for (size_t k = 0; k < s->skin_count; k++)
        for (size_t i = 0; i < s->skins[k].joint_count; i++)
            if (s->skins[k].joints[i] < s->node_count) w.limb[s->skins[k].joints[i]] = true;
    double lever = opt->euler_tolerance > 0 ? 1 : ra_scene_lever_sum(s); /* < 0: out of memory */
    w.tol =
        opt->euler_tolerance > 0 ? opt->euler_tolerance : fmin(1e-3, fmax(1e-7, RA_DENSITY_TOL / fmax(lever, 1e-12)));
    w.curve_nodes = lever < 0 ? UINT64_MAX : count_curve_nodes(s); /* for Definitions, before the curves */
    if (w.curve_nodes == UINT64_MAX) {
        ra_free(w.buf);
        ra_free(w.limb);
        return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    }
    w.version = opt->version ? opt->version : 7400;
    w.wide = w.version >= 7500;
    ra_status st = write_file(&w, path);
    if (st == RA_ERR_LIMIT && w.overflow && !opt->version) { /* past 4 GiB: 64-bit offsets */
        w.version = 7500;
        w.wide = true;
        st = write_file(&w, path);
    }
    if (st == RA_ERR_LIMIT && w.overflow)
        ra_fail(err, RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "",
                "the scene needs more than the 4 GiB FBX 7.4 can hold "
                "(write FBX 7.5)");
    if (st == RA_OK && stats) {
        memset(stats, 0, sizeof *stats);
        stats->nodes = s->node_count + s->camera_count;
        stats->animations = s->animation_count;
        stats->cameras = s->camera_count;
        stats->skins = s->skin_count;
        stats->channels = (size_t)w.curves;
        stats->keys = w.keys; /* key times per curve node (one T, R or S track), as glTF counts them */
        stats->bytes = w.total;
    }
    ra_free(w.buf);
    ra_free(w.limb);
    ra_free(w.ticks);
    ra_free(w.abuf);
    ra_free(w.zbuf);
    ra_free(w.links);
    ra_free(w.ek.t);
    for (int c = 0; c < 3; c++) ra_free(w.ek.v[c]);
    return st;
}
