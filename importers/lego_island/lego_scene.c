/* LEGO Island .ani semantics: the engine's playback rules (pose) and the
 * scene built from them (to_scene).  Both use the same evaluation functions
 * below, which follow docs/formats/lego_island.md §3-§6:
 *   - FindKeys bracketing: nothing before the first key, hold after the last;
 *   - translation/scale lerp, rotation by the engine's slerp (no shortest-arc
 *     flip, 0x02 negates the end quaternion, 0x04 holds the start key);
 *   - local = S.R + T (row vectors) = T.R(q*).S (column vectors);
 *   - the camera from position/target look-at, roll as a step.
 * The native frame is the game's (left-handed, Y up) written with column
 * vectors; the converted frame mirrors Z into a right-handed frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#include "retroanim/lego_wdb.h"
#include "retroanim/ra_parallel.h"

#define FMT "lego_ani"

/* How the tracks of a node (translation, rotation, scale; the SORT_M bit
 * only tells the morph keys' order) or of the camera (position, target,
 * roll) are searched (find_keys): those in time order (SORT_* bits) by
 * binary search, the others by their record keys:
 * the positions m >= 1 whose time is above that of every key from 1 to m -
 * 1, in order (the engine's scan stops at the first key later than t,
 * which is always one of them). */
typedef struct lego_order {
    unsigned sorted;
    const uint32_t *rec[3];
    uint32_t nrec[3];
} lego_order;

typedef struct lego_state {
    const lego_node **scene_node; /* scene node index -> file node (NULL: RootNode / camera) */
    lego_order *order;            /* scene node index -> how its tracks are searched */
    lego_order camera_order;
    int32_t camera_node; /* -1 without camera */
    bool native;         /* coords=native */
} lego_state;

/* ---- engine evaluation (times in ms, values as the file stores them) ------------------- */

/* Time (ms) of key i of an array of any key type: every key starts with its
 * time/flags word. */
static double key_time_at(const void *keys, size_t stride, uint32_t i)
{
    return (double)lego_key_time(*(const uint32_t *)((const char *)keys + (size_t)i * stride));
}

/* FindKeys, stateless (a fresh search from key 0).  Returns n (0, 1 or 2) and
 * the index of the bracketing key in *idx.  The engine scans forward while
 * the next key's time is <= t; on keys in time order that is the last key
 * with time <= t, found here by binary search, so long tracks stay O(log n)
 * per evaluation.  On keys out of order the scan stops before the first key
 * from 1 on later than t: a record key of the track (lego_order), found by
 * binary search over their times, which increase (a scan per evaluation made
 * a long track cost its square).  o NULL: the engine's scan itself. */
static int find_keys(const void *keys, size_t stride, uint32_t n, const lego_order *o, int track, double t,
                     uint32_t *idx)
{
#define KT(i) key_time_at(keys, stride, (uint32_t)(i))
    if (n == 0) return 0;
    if (t < KT(0)) return 0;
    if (t > KT(n - 1)) {
        *idx = n - 1;
        return 1;
    }
    uint32_t i = 0;
    if (o && (o->sorted >> track & 1u)) {
        uint32_t lo = 0, hi = n; /* invariant: KT(lo) <= t, and hi == n or KT(hi) > t */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (KT(mid) <= t) lo = mid;
            else hi = mid;
        }
        i = lo;
    } else if (o && o->rec[track]) {
        const uint32_t *r = o->rec[track];
        uint32_t lo = 0, hi = o->nrec[track]; /* the first record later than t: r[hi], or none (n - 1) */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (KT(r[mid]) > t) hi = mid;
            else lo = mid + 1;
        }
        i = hi < o->nrec[track] ? r[hi] - 1 : n - 1;
    } else {
        while (i < n - 1 && t >= KT(i + 1)) i++;
    }
    *idx = i;
    if (t == KT(i)) return 1;
    if (i < n - 1) return 2;
    return 0;
#undef KT
}

/* Which tracks of a node (or of the camera) are in time order. */
enum {
    SORT_T = 1,
    SORT_R = 2,
    SORT_S = 4,
    SORT_M = 8,
    SORT_CAM_POS = 1,
    SORT_CAM_TGT = 2,
    SORT_CAM_ROLL = 4
};

static double key_time(uint32_t raw) { return (double)lego_key_time(raw); }

static bool trans_active(const lego_trans_key *k)
{
    return (lego_key_flags(k->raw) & LEGO_FLAG_ACTIVE) || fabsf(k->x) > 1e-5f || fabsf(k->y) > 1e-5f ||
           fabsf(k->z) > 1e-5f;
}
static bool rot_active(const lego_rot_key *k) { return (lego_key_flags(k->raw) & LEGO_FLAG_ACTIVE) || k->w != 1.0f; }

static double interp(double t, uint32_t raw1, double v1, uint32_t raw2, double v2)
{
    /* the engine's Interpolate, in float in the game; double here */
    return v1 + (v2 - v1) * (t - key_time(raw1)) / (key_time(raw2) - key_time(raw1));
}

/* GetTranslation: added to the matrix; zero when nothing contributes. */
static ra_vec3 eval_trans(const lego_trans_key *k, uint16_t n, const lego_order *o, int track, double t)
{
    uint32_t i = 0;
    switch (find_keys(k, sizeof *k, n, o, track, t, &i)) {
    case 1:
        if (!trans_active(&k[i])) return ra_v3(0, 0, 0);
        return ra_v3(k[i].x, k[i].y, k[i].z);
    case 2:
        if (!trans_active(&k[i]) && !trans_active(&k[i + 1])) return ra_v3(0, 0, 0);
        return ra_v3(interp(t, k[i].raw, k[i].x, k[i + 1].raw, k[i + 1].x),
                     interp(t, k[i].raw, k[i].y, k[i + 1].raw, k[i + 1].y),
                     interp(t, k[i].raw, k[i].z, k[i + 1].raw, k[i + 1].z));
    default: return ra_v3(0, 0, 0);
    }
}

/* GetScale: the active flag is ignored; 1 when nothing contributes. */
static ra_vec3 eval_scale(const lego_trans_key *k, uint16_t n, const lego_order *o, double t)
{
    uint32_t i = 0;
    switch (find_keys(k, sizeof *k, n, o, 2, t, &i)) {
    case 1: return ra_v3(k[i].x, k[i].y, k[i].z);
    case 2:
        return ra_v3(interp(t, k[i].raw, k[i].x, k[i + 1].raw, k[i + 1].x),
                     interp(t, k[i].raw, k[i].y, k[i + 1].raw, k[i + 1].y),
                     interp(t, k[i].raw, k[i].z, k[i + 1].raw, k[i + 1].z));
    default: return ra_v3(1, 1, 1);
    }
}

/* The engine's slerp threshold: a dot within this of 1 lerps, within this
 * of -1 takes the perpendicular fallback (direct_ok refuses those pairs). */
#define ENGINE_SLERP_EPS 0.00001

/* MxQuaternionTransformer::Interpolate with both ends set.  Quaternions are
 * (w,x,y,z) here; the engine stores them x,y,z,w. */
static ra_quat engine_slerp(ra_quat s, ra_quat e, double f)
{
    double d = s.x * e.x + s.y * e.y + s.z * e.z + s.w * e.w;
    if (d + 1.0 > ENGINE_SLERP_EPS) {
        double a, b;
        if (1.0 - d > ENGINE_SLERP_EPS) {
            double th = acos(d), den = sin(th);
            a = sin((1.0 - f) * th) / den;
            b = sin(f * th) / den;
        } else {
            a = 1.0 - f;
            b = f;
        }
        return ra_q((float)(s.w * a + e.w * b), (float)(s.x * a + e.x * b), (float)(s.y * a + e.y * b),
                    (float)(s.z * a + e.z * b));
    }
    /* near-antipodal: the engine builds a perpendicular quaternion
     * (x,y,z,w) = (-y, x, -w, z) and interpolates only x, y, z towards it;
     * w stays the start's z. */
    double a = sin((1.0 - f) * 1.570796326794895), b = sin(f * 1.570796326794895);
    double px = -s.y, py = s.x, pz = -s.w, pw = s.z;
    return ra_q((float)pw, (float)(s.x * a + px * b), (float)(s.y * a + py * b), (float)(s.z * a + pz * b));
}

/* GetRotation: the quaternion the engine turns into a matrix (not normalised:
 * FromQuaternion scales by 2/|q|^2, so only the direction matters). */
static ra_quat eval_rot(const lego_rot_key *k, uint16_t n, const lego_order *o, double t)
{
    uint32_t i = 0;
    switch (find_keys(k, sizeof *k, n, o, 1, t, &i)) {
    case 1:
        if (!rot_active(&k[i])) return ra_q_identity();
        return ra_q(k[i].w, k[i].x, k[i].y, k[i].z);
    case 2: {
        if (!rot_active(&k[i]) && !rot_active(&k[i + 1])) return ra_q_identity();
        ra_quat s = ra_q(k[i].w, k[i].x, k[i].y, k[i].z);
        uint32_t fl = lego_key_flags(k[i + 1].raw);
        if (fl & LEGO_FLAG_SKIP) return s;
        ra_quat e = ra_q(k[i + 1].w, k[i + 1].x, k[i + 1].y, k[i + 1].z);
        if (fl & LEGO_FLAG_NEGATE) e = ra_q_neg(e);
        double f = (t - key_time(k[i].raw)) / (key_time(k[i + 1].raw) - key_time(k[i].raw));
        return engine_slerp(s, e, f);
    }
    default: return ra_q_identity();
    }
}

/* The node's local transform at t ms, column-vector form in the chosen frame. */
static ra_trs node_local(const lego_node *nd, const lego_order *o, double t_ms, bool native)
{
    ra_trs r;
    r.t = eval_trans(nd->trans, nd->num_trans, o, 0, t_ms);
    r.s = eval_scale(nd->scale, nd->num_scale, o, t_ms);
    /* row-vector engine matrix -> column vectors: the conjugate rotation */
    r.r = ra_q_normalize(ra_q_conj(eval_rot(nd->rot, nd->num_rot, o, t_ms)));
    if (!native) {
        r.t.z = -r.t.z;
        r.r = ra_q(r.r.w, -r.r.x, -r.r.y, r.r.z);
    }
    return r;
}

ra_mat4 lego_node_matrix(const lego_node *nd, double t_ms, bool native)
{
    ra_trs l = node_local(nd, NULL, t_ms, native);
    return ra_m4_compose(l.t, l.r, l.s);
}

/* CalculateCameraTransform's basis at t: the position, and the columns
 * right, up (both turned by the roll) and forward; false where the engine
 * leaves the matrix as it was (target at the position, or looking straight
 * up or down). */
static bool camera_basis(const lego_camera *cam, const lego_order *o, double t_ms, ra_vec3 *pos, ra_vec3 col[3])
{
    ra_vec3 tgt = eval_trans(cam->target, cam->num_target, o, 1, t_ms);
    *pos = eval_trans(cam->pos, cam->num_pos, o, 0, t_ms);
    ra_vec3 fwd = ra_v3_sub(tgt, *pos);
    double lf = ra_v3_len(fwd);
    if (!(lf > 0)) return false;
    fwd = ra_v3_scale(fwd, 1 / lf);
    ra_vec3 right = ra_v3_cross(ra_v3(0, 1, 0), fwd);
    double lr = ra_v3_len(right);
    if (!(lr > 0)) return false;
    right = ra_v3_scale(right, 1 / lr);
    ra_vec3 up = ra_v3_cross(fwd, right);
    uint32_t i = 0;
    double roll = 0;
    if (find_keys(cam->roll, sizeof *cam->roll, cam->num_roll, o, 2, t_ms, &i) != 0) roll = cam->roll[i].z;
    double c = cos(roll), s = sin(roll);
    col[0] = ra_v3_add(ra_v3_scale(right, c), ra_v3_scale(up, s));
    col[1] = ra_v3_add(ra_v3_scale(right, -s), ra_v3_scale(up, c));
    col[2] = fwd;
    return true;
}

/* How many keys camera_native looks back over for an earlier orientation */
#define CAMERA_HOLD_KEYS 64

/* CalculateCameraTransform with an identity presenter matrix, as a
 * column-vector world matrix in the native frame.  Where the engine leaves
 * the matrix as it was, the camera holds the previous orientation at its own
 * position.  Position and target are linear between their keys, so a
 * degenerate stretch starts at one of their key times (or is an instant):
 * the orientation held is that of the instant just before t, else of just
 * before (or at) the latest key at or before t that has one, newest first,
 * over at most CAMERA_HOLD_KEYS keys; the identity orientation when none
 * has (a camera degenerate from its first key). */
static ra_mat4 camera_native(const lego_camera *cam, const lego_order *o, double t_ms)
{
    ra_vec3 pos, col[3], p2, held[3];
    if (camera_basis(cam, o, t_ms, &pos, col)) return ra_m4_from_columns(col[0], col[1], col[2], pos);
    const double eps = 1e-3; /* ms: far below a frame, far above the rounding of key times */
    if (t_ms - eps >= 0 && camera_basis(cam, o, t_ms - eps, &p2, held))
        return ra_m4_from_columns(held[0], held[1], held[2], pos);
    uint32_t ip = 0, it = 0;
    bool hp = find_keys(cam->pos, sizeof *cam->pos, cam->num_pos, o, 0, t_ms, &ip) != 0;
    bool ht = find_keys(cam->target, sizeof *cam->target, cam->num_target, o, 1, t_ms, &it) != 0;
    for (int step = 0; step < CAMERA_HOLD_KEYS && (hp || ht); step++) {
        double kp = hp ? key_time(cam->pos[ip].raw) : -1, kt = ht ? key_time(cam->target[it].raw) : -1;
        bool from_pos = kp >= kt;
        double k = from_pos ? kp : kt;
        if ((k < t_ms && camera_basis(cam, o, k, &p2, held)) ||
            (k - eps >= 0 && k - eps < t_ms && camera_basis(cam, o, k - eps, &p2, held)))
            return ra_m4_from_columns(held[0], held[1], held[2], pos);
        if (from_pos) hp = ip-- > 0;
        else ht = it-- > 0;
    }
    return ra_m4_translation(pos);
}

static ra_mat4 camera_world(const lego_camera *cam, const lego_order *o, double t_ms, bool native)
{
    ra_mat4 m = camera_native(cam, o, t_ms);
    return native ? m : ra_m4_mirror_z(&m);
}

/* Seconds to the engine's milliseconds.  Key times are whole milliseconds;
 * t * 1000 is snapped to them so that a key's own time (1.011 s) selects the
 * key, as the engine's integer clock does. */
static double to_ms(double t)
{
    double ms = t * 1000.0, r = nearbyint(ms);
    return fabs(ms - r) < 1e-6 ? r : ms;
}

/* ---- pose ---------------------------------------------------------------------------- */
static ra_status lego_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    (void)anim;
    (void)err;
    const lego_ani *a = doc->model;
    const lego_state *st = doc->state;
    double t_ms = to_ms(t);
    for (size_t i = 0; i < doc->scene.node_count; i++) {
        const lego_node *nd = st->scene_node[i];
        ra_mat4 local;
        if (nd) {
            ra_trs l = node_local(nd, &st->order[i], t_ms, st->native);
            local = ra_m4_compose(l.t, l.r, l.s);
        } else if ((int32_t)i == st->camera_node) {
            local = camera_world(a->camera, &st->camera_order, t_ms, st->native);
        } else {
            local = ra_m4_identity();
        }
        int32_t p = doc->scene.nodes[i].parent;
        world[i] = p >= 0 ? ra_m4_mul(&world[p], &local) : local;
    }
    return RA_OK;
}

/* ---- names ------------------------------------------------------------------------------ */
typedef struct flat {
    const lego_node *node;
    int32_t parent; /* index in the flat list, -1 for the file root */
    const char *name;
} flat;

static bool flatten(const lego_node *n, int32_t parent, flat *out, size_t *count, size_t cap, int depth)
{
    if (*count >= cap || depth > LEGO_MAX_DEPTH_LIMIT) return false;
    size_t me = (*count)++;
    out[me] = (flat){n, parent, NULL};
    for (uint32_t i = 0; i < n->num_children; i++)
        if (!flatten(&n->children[i], (int32_t)me, out, count, cap, depth + 1)) return false;
    return true;
}

/* Actor names compare case-insensitively and without a leading '*'. */
static char *actor_key(ra_arena *ar, const char *name)
{
    if (name[0] == '*') name++;
    size_t n = strlen(name);
    char *k = ra_arena_strndup(ar, name, n);
    if (k)
        for (size_t i = 0; i < n; i++) k[i] = (char)tolower((unsigned char)k[i]);
    return k;
}

/* Raw names are cut at RA_NAME_MAX before they are compared (Assimp's
 * aiString holds 1023 bytes), as ra_names_make_unique does with the result. */
static const char *cut_name(ra_arena *ar, const char *name)
{
    size_t n = strlen(name);
    return n <= RA_NAME_MAX ? name : ra_arena_strndup(ar, name, RA_NAME_MAX);
}

/* docs/formats/lego_island.md §5 and §11: unique names.  A raw name shared
 * by several nodes becomes "<Q>:<name>" on each of them, Q being the nearest
 * ancestor named like an actor, else the nearest ancestor that is a child of
 * the file's root, else the parent.  Empty names become node_<pre-order
 * index>; what still collides (or takes RootNode / Camera) gets #2, #3, ...
 * in pre-order.  Linear time: the ancestors are found with per-node memos
 * filled in pre-order. */
static bool assign_names(const lego_ani *a, ra_arena *ar, flat *f, size_t n)
{
    static const char *const reserved[] = {"RootNode", "Camera"};
    const char **base = ra_arena_array(ar, n, sizeof *base);
    int32_t *actor_anc = ra_arena_array(ar, n, sizeof *actor_anc); /* nearest actor-named ancestor */
    int32_t *top_anc = ra_arena_array(ar, n, sizeof *top_anc);     /* nearest ancestor under the file root */
    ra_strmap raw, actors;
    if (!base || !actor_anc || !top_anc || !ra_strmap_init(&raw, ar, n) || !ra_strmap_init(&actors, ar, a->num_actors))
        return false;
    for (uint32_t i = 0; i < a->num_actors; i++) {
        if (!a->actors[i].name_len) continue;
        char *k = actor_key(ar, a->actors[i].name);
        if (!k || !ra_strmap_slot(&actors, k)) return false;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t *c = ra_strmap_slot(&raw, f[i].node->name);
        if (!c) return false;
        (*c)++;
        int32_t p = f[i].parent;
        actor_anc[i] = top_anc[i] = -1;
        if (p < 0) continue;
        char *pk = f[p].node->name_len ? actor_key(ar, f[p].node->name) : NULL;
        if (f[p].node->name_len && !pk) return false;
        actor_anc[i] = pk && ra_strmap_get(&actors, pk) ? p : actor_anc[p];
        top_anc[i] = p > 0 && f[p].parent == 0 && f[p].node->name_len ? p : top_anc[p];
    }
    for (size_t i = 0; i < n; i++) {
        const lego_node *nd = f[i].node;
        if (nd->name_len == 0 || nd->name[0] == 0) {
            base[i] = ra_arena_printf(ar, "node_%zu", i);
            if (!base[i]) return false;
            continue;
        }
        base[i] = cut_name(ar, nd->name);
        if (!base[i]) return false;
        if (*ra_strmap_get(&raw, nd->name) < 2) continue;
        int32_t q = actor_anc[i] >= 0 ? actor_anc[i] : top_anc[i];
        if (q < 0 && f[i].parent >= 0 && f[f[i].parent].node->name_len) q = f[i].parent;
        if (q >= 0) {
            const char *qn = f[q].node->name;
            size_t ql = strlen(qn), nl = strlen(nd->name);
            if (ql > RA_NAME_MAX / 2) ql = RA_NAME_MAX / 2;
            if (nl > RA_NAME_MAX - ql - 1) nl = RA_NAME_MAX - ql - 1;
            base[i] = ra_arena_printf(ar, "%.*s:%.*s", (int)ql, qn, (int)nl, nd->name);
            if (!base[i]) return false;
        }
    }
    if (!ra_names_make_unique(ar, base, n, reserved, 2)) return false;
    for (size_t i = 0; i < n; i++) f[i].name = base[i];
    return true;
}

/* ---- to_scene ------------------------------------------------------------------------------ */
typedef struct node_ctx {
    const lego_node *node;
    const lego_order *order;
    bool native;
} node_ctx;

static ra_trs eval_node_cb(const void *ctx, double t)
{
    const node_ctx *c = ctx;
    return node_local(c->node, c->order, to_ms(t), c->native);
}

typedef struct cam_ctx {
    const lego_camera *cam;
    const lego_order *order;
    bool native;
} cam_ctx;

static ra_trs eval_cam_cb(const void *ctx, double t)
{
    const cam_ctx *c = ctx;
    ra_mat4 m = camera_world(c->cam, c->order, to_ms(t), c->native);
    ra_trs r;
    ra_m4_decompose(&m, &r.t, &r.r, &r.s);
    r.s = ra_v3(1, 1, 1);
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* key times (seconds) of a key array, appended to breaks */
static void add_breaks(double *br, size_t *nb, const void *keys, size_t stride, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) br[(*nb)++] = key_time_at(keys, stride, i) / 1000.0;
}

static double max_key_ms(const void *keys, size_t stride, uint32_t n, double m)
{
    for (uint32_t i = 0; i < n; i++) {
        double t = key_time_at(keys, stride, i);
        if (t > m) m = t;
    }
    return m;
}

static bool keys_sorted(const void *keys, size_t stride, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (key_time_at(keys, stride, i) < key_time_at(keys, stride, i - 1)) return false;
    return true;
}

/* Track `track` of o: in time order (its SORT bit), else its record keys
 * (lego_order) in the arena; false when out of memory.  nd: the node whose
 * track it is, for what the reader noted of it (NULL: a camera track). */
static bool order_track(ra_arena *ar, lego_order *o, int track, const void *keys, size_t stride, uint32_t n,
                        const lego_node *nd)
{
    if (nd && nd->keys_noted ? nd->keys_in_order[track] : keys_sorted(keys, stride, n)) {
        o->sorted |= 1u << track;
        return true;
    }
    uint32_t *r = ra_arena_array_uninit(ar, n, sizeof *r), nr = 0;
    if (!r) return false;
    double best = 0;
    for (uint32_t m = 1; m < n; m++) {
        double t = key_time_at(keys, stride, m);
        if (m == 1 || t > best) r[nr++] = m, best = t;
    }
    o->rec[track] = r;
    o->nrec[track] = nr;
    return true;
}

/* Visibility keys as JSON text [[seconds, 0|1], ...], NUL-terminated in w. */
static void visibility_json(ra_writer *w, const lego_morph_key *k, uint16_t n)
{
    ra_json j;
    ra_json_init_buffer(&j, w, false);
    ra_json_begin_array(&j);
    for (uint16_t i = 0; i < n; i++) {
        ra_json_begin_array(&j);
        ra_json_number(&j, key_time(k[i].raw) / 1000.0);
        ra_json_int(&j, k[i].visible ? 1 : 0);
        ra_json_end_array(&j);
    }
    ra_json_end_array(&j);
    ra_wr_u8(w, 0);
}

/* ---- direct conversion ---------------------------------------------------------------------
 * Consumers play a track by lerp (translation, scale) and shortest-arc slerp
 * (rotation) between its own keys.  For most nodes that is already the
 * engine's playback, so their keys are written as they are, one track at a
 * time, with no sampling: every track in strict time order, every
 * translation and rotation key active (or exactly zero / identity, which
 * the engine's inactive rule also gives), no hold flag (0x04), unit
 * quaternions and no near-antipodal pair (the engine's perpendicular
 * fallback).  The engine's slerp then follows the great circle between the
 * keys: the short arc is one key, the long arc (negative dot) or an arc wider
 * than max_key_angle is split into pieces.  Before the first key the engine
 * has nothing (zero, identity, unit scale): a step at the first key.  Every
 * other node goes through the baker. */
static bool direct_ok(const lego_node *nd, unsigned sorted)
{
    if (sorted != (SORT_T | SORT_R | SORT_S | SORT_M)) return false;
    for (uint16_t i = 0; i < nd->num_trans; i++) {
        const lego_trans_key *k = &nd->trans[i];
        if (i && lego_key_time(k->raw) <= lego_key_time(k[-1].raw)) return false;
        if (!trans_active(k) && (k->x != 0 || k->y != 0 || k->z != 0)) return false;
    }
    for (uint16_t i = 1; i < nd->num_scale; i++)
        if (lego_key_time(nd->scale[i].raw) <= lego_key_time(nd->scale[i - 1].raw)) return false;
    for (uint16_t i = 0; i < nd->num_rot; i++) {
        const lego_rot_key *k = &nd->rot[i];
        double n2 = (double)k->w * k->w + (double)k->x * k->x + (double)k->y * k->y + (double)k->z * k->z;
        if (!(fabs(n2 - 1) <= 1e-6)) return false;
        if (!rot_active(k) && (k->x != 0 || k->y != 0 || k->z != 0)) return false;
        if (!i) continue;
        if (lego_key_time(k->raw) <= lego_key_time(k[-1].raw) || (lego_key_flags(k->raw) & LEGO_FLAG_SKIP))
            return false;
        double d = (double)k[-1].w * k->w + (double)k[-1].x * k->x + (double)k[-1].y * k->y + (double)k[-1].z * k->z;
        if (lego_key_flags(k->raw) & LEGO_FLAG_NEGATE) d = -d;
        if (!(d + 1.0 > ENGINE_SLERP_EPS)) return false;
    }
    return true;
}

/* The times where a track holds the engine's value before its first key (at
 * t0 s; t0 < 0: the track has no keys, so that value all along): 0 and just
 * before t0, for a step at t0.  Returns how many it wrote into at[2]. */
static size_t lead_in(double t0, double at[2])
{
    size_t m = 0;
    if (t0 != 0) at[m++] = 0;
    if (t0 > 0 && t0 - ra_step_epsilon(t0) > 0) at[m++] = t0 - ra_step_epsilon(t0);
    return m;
}

/* One vector track: `before` until the first key (a step there), then the keys. */
static bool direct_vec(ra_arena *ar, const lego_trans_key *k, uint16_t n, ra_vec3 before, bool native, double tol,
                       ra_vec_key **out, size_t *count)
{
    ra_vec_track tr;
    if (!ra_vec_track_reserve(&tr, (size_t)n + 2)) return false;
    double at[2];
    for (size_t j = 0, m = lead_in(n ? key_time(k[0].raw) / 1000.0 : -1, at); j < m; j++)
        ra_vec_track_push(ar, &tr, at[j], before);
    for (uint16_t i = 0; i < n; i++)
        ra_vec_track_push(ar, &tr, key_time(k[i].raw) / 1000.0, ra_v3(k[i].x, k[i].y, native ? k[i].z : -k[i].z));
    return ra_vec_track_commit(ar, &tr, tol, out, count);
}

/* The scene's rotation of an engine quaternion: the conjugate (row vectors
 * -> column vectors), Z mirrored in the converted frame. */
static ra_quat scene_rot(double w, double x, double y, double z, bool native)
{
    return native ? ra_q(w, -x, -y, -z) : ra_q(w, x, y, -z);
}

static bool direct_rot(ra_arena *ar, const lego_rot_key *k, uint16_t n, bool native, const ra_bake_params *bp,
                       ra_quat_key **out, size_t *count)
{
    ra_quat_track tr;
    if (!ra_quat_track_reserve(&tr, (size_t)n + 2)) return false;
    bool ok = true;
    double at[2];
    for (size_t j = 0, m = lead_in(n ? key_time(k[0].raw) / 1000.0 : -1, at); ok && j < m; j++)
        ok = ra_quat_track_push(ar, &tr, at[j], ra_q_identity());
    double cmin = cos(bp->max_key_angle / 2); /* a wider rotation between two keys is split */
    for (uint16_t i = 0; ok && i < n; i++) {
        double t = key_time(k[i].raw) / 1000.0, sg = (lego_key_flags(k[i].raw) & LEGO_FLAG_NEGATE) ? -1 : 1;
        ra_quat e = scene_rot(sg * k[i].w, sg * k[i].x, sg * k[i].y, sg * k[i].z, native);
        if (!i) {
            ok = ra_quat_track_push(ar, &tr, t, e);
            continue;
        }
        ra_quat s = scene_rot(k[i - 1].w, k[i - 1].x, k[i - 1].y, k[i - 1].z, native);
        double d = ra_q_dot(s, e);
        if (d >= cmin) {
            ok = ra_quat_track_push(ar, &tr, t, e);
            continue;
        }
        /* the arc's pieces count against the bake budget */
        size_t pieces = ra_quat_arc_pieces(s, e, bp->max_key_angle / 2);
        if (bp->samples_left && pieces > *bp->samples_left) {
            *bp->samples_left = 0;
            ok = false;
            break;
        }
        if (bp->samples_left) *bp->samples_left -= pieces;
        ok = ra_quat_track_arc_n(ar, &tr, key_time(k[i - 1].raw) / 1000.0, s, t, e, pieces);
    }
    if (!ok) {
        ra_quat_track_release(&tr);
        return false;
    }
    return ra_quat_track_commit(ar, &tr, bp->angle_tol, bp->max_key_angle, out, count);
}

static bool direct_node(ra_arena *ar, const lego_node *nd, bool native, const ra_bake_params *bp, ra_channel *ch)
{
    return direct_vec(ar, nd->trans, nd->num_trans, ra_v3(0, 0, 0), native, bp->value_tol, &ch->position,
                      &ch->position_count) &&
           direct_vec(ar, nd->scale, nd->num_scale, ra_v3(1, 1, 1), true, bp->value_tol, &ch->scaling,
                      &ch->scaling_count) &&
           direct_rot(ar, nd->rot, nd->num_rot, native, bp, &ch->rotation, &ch->rotation_count);
}

/* What the steps of lego_to_scene share. */
typedef struct lego_build {
    ra_document *doc;
    const lego_ani *a;
    ra_scene *s;
    ra_arena *ar;
    lego_state *st;
    flat *f; /* the file's nodes in pre-order: scene node i + 1 */
    size_t n;
    ra_scene_start start;
    double last_ms; /* the last key time of any track */
} lego_build;

/* The file's nodes under RootNode, with their rest pose (the engine's pose at 0). */
static ra_status lego_nodes(lego_build *b, ra_error *err)
{
    lego_state *st = b->st;
    ra_scene *s = b->s;
    size_t total = b->n + 1 + (b->a->camera ? 1 : 0);
    st->scene_node = ra_arena_array(b->ar, total, sizeof *st->scene_node);
    st->order = ra_arena_array(b->ar, total, sizeof *st->order);
    if (!st->scene_node || !st->order) return ra_fail_nomem(err, FMT);
    if (ra_scene_add_node(s, "RootNode", -1, NULL) != 0) return ra_fail_nomem(err, FMT);
    size_t unsorted = 0, zero_quats = 0;
    const char *first_unsorted = NULL, *first_zero = NULL;
    for (size_t i = 0; i < b->n; i++) {
        const lego_node *nd = b->f[i].node;
        lego_order *o = &st->order[i + 1];
        if (!order_track(b->ar, o, 0, nd->trans, sizeof *nd->trans, nd->num_trans, nd) ||
            !order_track(b->ar, o, 1, nd->rot, sizeof *nd->rot, nd->num_rot, nd) ||
            !order_track(b->ar, o, 2, nd->scale, sizeof *nd->scale, nd->num_scale, nd))
            return ra_fail_nomem(err, FMT);
        /* morph keys are never searched (visibility_json, the visibility steps): their order only */
        if (keys_sorted(nd->morph, sizeof *nd->morph, nd->num_morph)) o->sorted |= SORT_M;
        unsigned sorted = o->sorted;
        if (sorted != (SORT_T | SORT_R | SORT_S | SORT_M) && !unsorted++) first_unsorted = b->f[i].name;
        bool zero = nd->keys_noted && nd->rot_zero;
        for (uint16_t k = 0; !nd->keys_noted && !zero && k < nd->num_rot; k++)
            zero = nd->rot[k].w == 0 && nd->rot[k].x == 0 && nd->rot[k].y == 0 && nd->rot[k].z == 0;
        if (zero && !zero_quats++) first_zero = b->f[i].name;
        ra_trs l = node_local(nd, o, 0, st->native);
        ra_mat4 m = ra_m4_compose(l.t, l.r, l.s);
        int32_t idx = ra_scene_add_node(s, b->f[i].name, b->f[i].parent < 0 ? 0 : b->f[i].parent + 1, &m);
        if (idx < 0) return ra_fail_nomem(err, FMT);
        st->scene_node[idx] = nd;
        ra_node *sn = &s->nodes[idx];
        if (!ra_meta_set_string(b->ar, &sn->meta, "lego.raw_name", nd->name)) return ra_fail_nomem(err, FMT);
        if (nd->num_morph) {
            ra_writer w;
            ra_writer_init(&w);
            visibility_json(&w, nd->morph, nd->num_morph);
            bool ok = !w.failed && ra_meta_set_string(b->ar, &sn->meta, "lego.visibility", (const char *)w.data);
            ra_writer_free(&w);
            if (!ok) return ra_fail_nomem(err, FMT);
        }
    }
    /* one warning per kind, however many nodes it concerns */
    if (unsorted)
        ra_scene_warn(
            s, "keys of %zu node(s) are not in time order (first: %s); played as the engine's key search finds them",
            unsorted, first_unsorted);
    if (zero_quats)
        ra_scene_warn(s, "%zu node(s) have a zero rotation quaternion (first: %s); identity is used", zero_quats,
                      first_zero);
    return RA_OK;
}

/* The camera track's node "Camera" under RootNode and its aiCamera. */
static ra_status lego_camera_node(lego_build *b, ra_error *err)
{
    const lego_camera *cam = b->a->camera;
    lego_state *st = b->st;
    ra_scene *s = b->s;
    if (!cam) return RA_OK;
    lego_order *o = &st->camera_order;
    if (!order_track(b->ar, o, 0, cam->pos, sizeof *cam->pos, cam->num_pos, NULL) ||
        !order_track(b->ar, o, 1, cam->target, sizeof *cam->target, cam->num_target, NULL) ||
        !order_track(b->ar, o, 2, cam->roll, sizeof *cam->roll, cam->num_roll, NULL))
        return ra_fail_nomem(err, FMT);
    if (o->sorted != (SORT_CAM_POS | SORT_CAM_TGT | SORT_CAM_ROLL))
        ra_scene_warn(s, "camera keys are not in time order; played as the engine's key search finds them");
    ra_mat4 m = camera_world(cam, o, 0, st->native);
    int32_t idx = ra_scene_add_node(s, "Camera", 0, &m);
    if (idx < 0) return ra_fail_nomem(err, FMT);
    st->camera_node = idx;
    s->cameras = ra_arena_alloc(b->ar, sizeof *s->cameras);
    s->non_skeleton = ra_arena_alloc(b->ar, sizeof(uint32_t));
    if (!s->cameras || !s->non_skeleton) return ra_fail_nomem(err, FMT);
    s->camera_count = 1;
    ra_camera *c = &s->cameras[0];
    c->name = s->nodes[idx].name;
    c->node = (uint32_t)idx;
    c->horizontal_fov = RA_PI / 4; /* half of the engine's 90 degrees */
    c->aspect = 4.0 / 3.0;
    c->clip_near = 0.1;
    c->clip_far = 500;
    c->position = ra_v3(0, 0, 0);
    c->look_at = ra_v3(0, 0, st->native ? 1 : -1);
    c->up = ra_v3(0, 1, 0);
    s->non_skeleton[0] = (uint32_t)idx;
    s->non_skeleton_count = 1;
    if (!cam->num_target && cam->num_pos)
        ra_scene_warn(
            s, "camera has position keys but no target keys; the engine reads an undefined target, the origin is used");
    return RA_OK;
}

/* The channel of file node i: its keys as they are where slerp and lerp play
 * them as the engine does, else baked from the engine's rules.  A job of
 * ra_parallel_for: it allocates from w's arena and takes w's samples. */
static ra_status lego_node_channel(const lego_build *b, size_t i, ra_channel *ch, ra_worker *w, ra_error *err)
{
    const lego_node *nd = b->f[i].node;
    const lego_state *st = b->st;
    ra_bake_params bp = b->start.bake;
    bp.samples_left = &w->samples_left;
    ch->node = (uint32_t)(i + 1);
    if (direct_ok(nd, st->order[i + 1].sorted)) {
        /* keys as they are; they count against the bake budget like samples */
        size_t keys = (size_t)nd->num_trans + nd->num_rot + nd->num_scale;
        if (keys > w->samples_left) return ra_fail_max_samples(b->doc, err);
        w->samples_left -= keys;
        if (!direct_node(w->arena, nd, st->native, &bp, ch))
            return w->samples_left ? ra_fail_nomem(err, FMT) : ra_fail_max_samples(b->doc, err);
        return RA_OK;
    }
    size_t nb = 0, cap = (size_t)nd->num_trans + nd->num_rot + nd->num_scale;
    double *br = ra_malloc(cap * sizeof *br);
    if (!br) return ra_fail_nomem(err, FMT);
    add_breaks(br, &nb, nd->trans, sizeof *nd->trans, nd->num_trans);
    add_breaks(br, &nb, nd->rot, sizeof *nd->rot, nd->num_rot);
    add_breaks(br, &nb, nd->scale, sizeof *nd->scale, nd->num_scale);
    qsort(br, nb, sizeof *br, cmp_double);
    node_ctx ctx = {nd, &st->order[i + 1], st->native};
    ra_status rs = ra_bake_channel(w->arena, eval_node_cb, &ctx, br, nb, &bp, ch, err);
    ra_free(br);
    return rs;
}

/* The animated nodes' channels, as jobs: job j fills channels[j] from file node node_of[j]. */
typedef struct node_jobs {
    const lego_build *b;
    const size_t *node_of;
    ra_channel *channels;
} node_jobs;

static ra_status node_job(void *ctx, size_t j, ra_worker *w, ra_error *err)
{
    const node_jobs *nj = ctx;
    return lego_node_channel(nj->b, nj->node_of[j], &nj->channels[j], w, err);
}

/* The camera's channel: the look-at rule sampled until within camera_tolerance. */
static ra_status lego_camera_channel(lego_build *b, ra_channel *ch, ra_error *err)
{
    const lego_camera *cam = b->a->camera;
    size_t nb = 0, cap = (size_t)cam->num_pos + cam->num_target + cam->num_roll;
    double *br = ra_malloc((cap ? cap : 1) * sizeof *br);
    if (!br) return ra_fail_nomem(err, FMT);
    add_breaks(br, &nb, cam->pos, sizeof *cam->pos, cam->num_pos);
    add_breaks(br, &nb, cam->target, sizeof *cam->target, cam->num_target);
    add_breaks(br, &nb, cam->roll, sizeof *cam->roll, cam->num_roll);
    qsort(br, nb, sizeof *br, cmp_double);
    cam_ctx ctx = {cam, &b->st->camera_order, b->st->native};
    ra_bake_params cp = b->start.bake;
    cp.angle_tol = ra_options_get_double(&b->doc->options, "camera_tolerance", 0.001) * RA_PI / 180.0;
    cp.max_depth = 20;
    ch->node = (uint32_t)b->st->camera_node;
    ra_status rs = ra_bake_channel(b->ar, eval_cam_cb, &ctx, br, nb, &cp, ch, err);
    ra_free(br);
    return rs;
}

/* Visibility steps (the morph keys) on the nodes that have them.  Keys out of
 * time order stay in the node's metadata only: the engine's key search
 * assumes order. */
static ra_status lego_visibility(lego_build *b, ra_animation *an, ra_error *err)
{
    size_t nvis = 0;
    for (size_t i = 0; i < b->n; i++) nvis += b->f[i].node->num_morph > 0;
    if (!nvis) return RA_OK;
    an->visibility = ra_arena_array(b->ar, nvis, sizeof *an->visibility);
    if (!an->visibility) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < b->n; i++) {
        const lego_node *nd = b->f[i].node;
        if (!nd->num_morph) continue;
        if (!keys_sorted(nd->morph, sizeof *nd->morph, nd->num_morph)) {
            ra_scene_warn(b->s, "visibility keys out of time order: kept in node metadata only");
            continue;
        }
        ra_vis_track *vt = &an->visibility[an->visibility_count++];
        vt->node = (uint32_t)(i + 1);
        vt->keys = ra_arena_array_uninit(b->ar, nd->num_morph, sizeof *vt->keys);
        if (!vt->keys) return ra_fail_nomem(err, FMT);
        for (uint16_t k = 0; k < nd->num_morph; k++) {
            vt->keys[k].t = key_time(nd->morph[k].raw) / 1000.0;
            vt->keys[k].visible = nd->morph[k].visible != 0;
        }
        vt->count = nd->num_morph;
    }
    return RA_OK;
}

/* The last key time (ms) of every track of the file, camera included. */
static double lego_last_key_ms(const lego_build *b)
{
    double last = 0;
    for (size_t i = 0; i < b->n; i++) {
        const lego_node *nd = b->f[i].node;
        if (nd->keys_noted) {
            for (int t = 0; t < 3; t++) last = ra_fmax(last, (double)nd->last_key_ms[t]);
        } else {
            last = max_key_ms(nd->trans, sizeof *nd->trans, nd->num_trans, last);
            last = max_key_ms(nd->rot, sizeof *nd->rot, nd->num_rot, last);
            last = max_key_ms(nd->scale, sizeof *nd->scale, nd->num_scale, last);
        }
        last = max_key_ms(nd->morph, sizeof *nd->morph, nd->num_morph, last);
    }
    if (b->a->camera) {
        last = max_key_ms(b->a->camera->pos, sizeof(lego_trans_key), b->a->camera->num_pos, last);
        last = max_key_ms(b->a->camera->target, sizeof(lego_trans_key), b->a->camera->num_target, last);
        last = max_key_ms(b->a->camera->roll, sizeof(lego_rotz_key), b->a->camera->num_roll, last);
    }
    return last;
}

/* The one animation: a channel per animated node, the camera's, the
 * visibility steps; its duration covers every key. */
static ra_status lego_animation(lego_build *b, ra_error *err)
{
    size_t animated = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->f[i].node->num_trans || b->f[i].node->num_rot || b->f[i].node->num_scale) animated++;
    const lego_camera *cam = b->a->camera;
    bool cam_anim = cam && (cam->num_pos || cam->num_target || cam->num_roll);
    b->last_ms = lego_last_key_ms(b);
    bool vis = false; /* a visibility track (lego_visibility: keys in time order) */
    for (size_t i = 0; i < b->n; i++) {
        const lego_node *nd = b->f[i].node;
        vis |= nd->num_morph > 0 && keys_sorted(nd->morph, sizeof *nd->morph, nd->num_morph);
    }
    if (!animated && !cam_anim && !vis) return RA_OK;
    /* visibility keys alone (a LegoHideAnimPresenter's kind of file): one
     * constant channel on the file's root node keeps the animation, which
     * every consumer wants to have a channel */
    bool hold = !animated && !cam_anim;
    ra_animation *an = b->s->animations = ra_arena_alloc(b->ar, sizeof *b->s->animations);
    if (!an) return ra_fail_nomem(err, FMT);
    b->s->animation_count = 1;
    an->name = "Animation";
    an->ticks_per_second = 1000.0;
    an->duration = (b->a->duration > b->last_ms ? b->a->duration : b->last_ms) / 1000.0;
    an->channel_count = animated + (cam_anim ? 1 : 0) + (hold ? 1 : 0);
    an->channels = ra_arena_array(b->ar, an->channel_count, sizeof *an->channels);
    if (!an->channels) return ra_fail_nomem(err, FMT);
    size_t ci = 0;
    size_t *node_of = ra_malloc((animated ? animated : 1) * sizeof *node_of);
    if (!node_of) return ra_fail_nomem(err, FMT);
    double work = 0;
    for (size_t i = 0; i < b->n; i++) {
        const lego_node *nd = b->f[i].node;
        if (!nd->num_trans && !nd->num_rot && !nd->num_scale) continue;
        node_of[ci++] = i;
        work += (double)nd->num_trans + nd->num_rot + nd->num_scale;
    }
    node_jobs nj = {b, node_of, an->channels};
    ra_status rs = ra_parallel_for(b->doc, ra_document_threads(b->doc, work), animated, node_job, &nj,
                                   &b->start.samples_left, err);
    ra_free(node_of);
    if (rs == RA_OK && cam_anim) rs = lego_camera_channel(b, &an->channels[ci++], err);
    if (rs == RA_OK && hold && !ra_channel_hold_rest(b->ar, b->s, 1, &an->channels[ci++]))
        return ra_fail_nomem(err, FMT);
    if (rs == RA_OK) rs = lego_visibility(b, an, err);
    /* keys never lie past the duration (Assimp's validator rejects that) */
    for (size_t c = 0; rs == RA_OK && c < an->channel_count; c++) {
        ra_channel *ch = &an->channels[c];
        double m = 0;
        if (ch->position_count) m = fmax(m, ch->position[ch->position_count - 1].t);
        if (ch->rotation_count) m = fmax(m, ch->rotation[ch->rotation_count - 1].t);
        if (ch->scaling_count) m = fmax(m, ch->scaling[ch->scaling_count - 1].t);
        if (m > an->duration) an->duration = m;
    }
    return rs;
}

/* The header's fields, the actors, the bytes after the animation. */
static ra_status lego_metadata(lego_build *b, ra_error *err)
{
    const lego_ani *a = b->a;
    ra_arena *ar = b->ar;
    ra_meta_list *md = &b->s->meta;
    ra_status rs = ra_scene_standard_meta(
        b->doc, 1000.0, b->st->native ? "native (left-handed, Y up)" : "converted (right-handed, Y up, Z mirrored)",
        err);
    if (rs != RA_OK) return rs;
    bool ok = ra_meta_set_int(ar, md, "lego.duration_ms", a->duration) &&
              ra_meta_set_bool(ar, md, "lego.has_header", a->has_header);
    if (ok && a->has_header) {
        ok = ra_meta_set_double(ar, md, "lego.bounding_radius", a->bounding_radius) &&
             ra_meta_set_vec3(ar, md, "lego.bounding_center",
                              ra_v3(a->center[0], a->center[1], b->st->native ? a->center[2] : -a->center[2])) &&
             ra_meta_set_int(ar, md, "lego.val3", a->val3) &&
             ra_meta_set_int(ar, md, "lego.has_camera_anim", a->parse_scene);
    }
    if (ok) {
        ra_writer w;
        ra_writer_init(&w);
        ra_json j;
        ra_json_init_buffer(&j, &w, false);
        ra_json_begin_array(&j);
        for (uint32_t i = 0; i < a->num_actors; i++) {
            ra_json_begin_object(&j);
            ra_json_key(&j, "name");
            ra_json_string_n(&j, a->actors[i].name, a->actors[i].name_len);
            ra_json_key(&j, "type");
            ra_json_uint(&j, a->actors[i].type);
            ra_json_end_object(&j);
        }
        ra_json_end_array(&j);
        ra_wr_u8(&w, 0);
        ok = !w.failed && ra_meta_set_string(ar, md, "lego.actors", (const char *)w.data);
        ra_writer_free(&w);
    }
    if (ok && a->trailing_size) ok = ra_meta_set_int(ar, md, "lego.trailing_bytes", (int64_t)a->trailing_size);
    if (!ok) return ra_fail_nomem(err, FMT);
    if (a->duration < b->last_ms)
        ra_scene_warn(b->s, "keys run to %.0f ms, past the duration of %d ms; the scene duration covers them",
                      b->last_ms, a->duration);
    return RA_OK;
}

static ra_status lego_to_scene(ra_document *doc, ra_error *err)
{
    lego_build b = {doc, doc->model, &doc->scene, doc->arena, NULL, NULL, 0, {0}, 0};
    ra_scene_start_init(doc, 150.0, &b.start);
    b.st = doc->state = ra_arena_alloc(b.ar, sizeof *b.st);
    if (!b.st) return ra_fail_nomem(err, FMT);
    b.st->native = b.start.native;
    b.st->camera_node = -1;
    b.n = b.a->node_count;
    b.f = ra_arena_array(b.ar, b.n, sizeof *b.f);
    if (!b.f) return ra_fail_nomem(err, FMT);
    size_t count = 0;
    if (!flatten(&b.a->root, -1, b.f, &count, b.n, 0) || count != b.n)
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, RA_NO_OFFSET, "node", "node tree inconsistent");
    if (!assign_names(b.a, b.ar, b.f, b.n)) return ra_fail_nomem(err, FMT);
    ra_status rs = lego_nodes(&b, err);
    if (rs == RA_OK) rs = lego_camera_node(&b, err);
    if (rs == RA_OK) rs = lego_animation(&b, err);
    if (rs == RA_OK) rs = lego_metadata(&b, err);
    if (rs == RA_OK) rs = lego_wdb_bind(doc, b.a, b.st->scene_node, b.st->native, err);
    return rs;
}

/* ---- dump --source -------------------------------------------------------------------------- */
static void dump_keys_head(ra_json *j, uint32_t raw)
{
    ra_json_key(j, "time");
    ra_json_uint(j, lego_key_time(raw));
    ra_json_key(j, "flags");
    ra_json_uint(j, lego_key_flags(raw));
}

static void dump_trans(ra_json *j, const char *key, const lego_trans_key *k, uint16_t n)
{
    ra_json_key(j, key);
    ra_json_begin_array(j);
    for (uint16_t i = 0; i < n; i++) {
        ra_json_begin_object(j);
        dump_keys_head(j, k[i].raw);
        ra_json_key(j, "x");
        ra_json_number(j, k[i].x);
        ra_json_key(j, "y");
        ra_json_number(j, k[i].y);
        ra_json_key(j, "z");
        ra_json_number(j, k[i].z);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

static void dump_node(ra_json *j, const lego_node *n, int depth)
{
    ra_json_begin_object(j);
    ra_json_key(j, "name");
    ra_json_string_n(j, n->name, n->name_len);
    dump_trans(j, "translation_keys", n->trans, n->num_trans);
    ra_json_key(j, "rotation_keys");
    ra_json_begin_array(j);
    for (uint16_t i = 0; i < n->num_rot; i++) {
        ra_json_begin_object(j);
        dump_keys_head(j, n->rot[i].raw);
        ra_json_key(j, "w");
        ra_json_number(j, n->rot[i].w);
        ra_json_key(j, "x");
        ra_json_number(j, n->rot[i].x);
        ra_json_key(j, "y");
        ra_json_number(j, n->rot[i].y);
        ra_json_key(j, "z");
        ra_json_number(j, n->rot[i].z);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    dump_trans(j, "scale_keys", n->scale, n->num_scale);
    ra_json_key(j, "morph_keys");
    ra_json_begin_array(j);
    for (uint16_t i = 0; i < n->num_morph; i++) {
        ra_json_begin_object(j);
        dump_keys_head(j, n->morph[i].raw);
        ra_json_key(j, "visible");
        ra_json_uint(j, n->morph[i].visible);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "children");
    ra_json_begin_array(j);
    /* the JSON writer nests at most RA_JSON_MAX_DEPTH levels; deeper trees are cut with a marker */
    if (depth < (RA_JSON_MAX_DEPTH - 8) / 2) {
        for (uint32_t i = 0; i < n->num_children; i++) dump_node(j, &n->children[i], depth + 1);
    } else if (n->num_children) {
        ra_json_string(j, "(deeper levels omitted)");
    }
    ra_json_end_array(j);
    ra_json_end_object(j);
}

static void lego_dump_source(const ra_document *doc, ra_json *j)
{
    const lego_ani *a = doc->model;
    ra_json_begin_object(j);
    ra_json_key(j, "format");
    ra_json_string(j, doc->format->id);
    if (a->has_header) {
        ra_json_key(j, "magic");
        ra_json_int(j, a->magic);
        ra_json_key(j, "bounding_radius");
        ra_json_number(j, a->bounding_radius);
        ra_json_key(j, "center_x");
        ra_json_number(j, a->center[0]);
        ra_json_key(j, "center_y");
        ra_json_number(j, a->center[1]);
        ra_json_key(j, "center_z");
        ra_json_number(j, a->center[2]);
        ra_json_key(j, "has_camera_anim");
        ra_json_int(j, a->parse_scene);
        ra_json_key(j, "unused");
        ra_json_int(j, a->val3);
    }
    ra_json_key(j, "num_actors");
    ra_json_uint(j, a->num_actors);
    ra_json_key(j, "actors");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < a->num_actors; i++) {
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string_n(j, a->actors[i].name, a->actors[i].name_len);
        if (a->actors[i].name_len) {
            ra_json_key(j, "type");
            ra_json_uint(j, a->actors[i].type);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "duration");
    ra_json_int(j, a->duration);
    if (a->camera) {
        ra_json_key(j, "camera_anim");
        ra_json_begin_object(j);
        dump_trans(j, "translation_keys", a->camera->pos, a->camera->num_pos);
        dump_trans(j, "target_keys", a->camera->target, a->camera->num_target);
        ra_json_key(j, "rotation_keys");
        ra_json_begin_array(j);
        for (uint16_t i = 0; i < a->camera->num_roll; i++) {
            ra_json_begin_object(j);
            dump_keys_head(j, a->camera->roll[i].raw);
            ra_json_key(j, "z");
            ra_json_number(j, a->camera->roll[i].z);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_key(j, "root_node");
    dump_node(j, &a->root, 0);
    ra_json_key(j, "trailing_bytes");
    ra_json_uint(j, a->trailing_size);
    ra_json_end_object(j);
}

/* ---- format entries ---------------------------------------------------------------------------- */
/* Sees only the first bytes (Assimp's CanRead passes a prefix): the magic,
 * plus finite bounding-sphere floats and a camera flag of 0 or 1, so that a
 * random file starting with 11 00 00 00 is not claimed. */
static int lego_detect(const uint8_t *d, size_t n)
{
    if (n < 28) return 0;
    uint32_t w[7];
    for (int i = 0; i < 7; i++) w[i] = ra_load_u32le(d + 4 * i);
    if (w[0] != LEGO_ANI_MAGIC) return 0;
    for (int i = 1; i <= 4; i++) {
        float f;
        memcpy(&f, &w[i], 4);
        if (!isfinite(f)) return 10;
    }
    if (w[5] > 1) return 20; /* the engine only tests != 0, but real files hold 0 or 1 */
    return 60;
}

static ra_status read_common(ra_document *doc, const uint8_t *data, size_t size, bool body, ra_error *err)
{
    lego_ani *a = ra_arena_alloc(doc->arena, sizeof *a);
    if (!a) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory");
    double md = ra_options_get_double(&doc->options, "max_depth", LEGO_DEFAULT_MAX_DEPTH);
    if (!(md >= 1) || md > LEGO_MAX_DEPTH_LIMIT)
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "max_depth", "max_depth must be 1..%d",
                       LEGO_MAX_DEPTH_LIMIT);
    ra_status st =
        lego_ani_read_run(data, size, body, (uint32_t)md, doc->arena, a, true, err, ra_document_read_runner, doc);
    if (st == RA_OK) doc->model = a;
    return st;
}
static ra_status lego_read_full(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    return read_common(doc, data, size, false, err);
}
static ra_status lego_read_body(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    return read_common(doc, data, size, true, err);
}
static ra_status lego_write(const ra_document *doc, ra_writer *w, ra_error *err)
{
    return lego_ani_write(doc->model, w, err);
}

static const ra_option_decl lego_options[] = {
    {"camera_tolerance", RA_OPT_DOUBLE, 0, 10, true, NULL, "0.001",
     "largest orientation error between camera samples (degrees)"},
    {"wdb", RA_OPT_PATH, 0, 0, false, NULL, "searched",
     "WORLD.WDB whose models the actors wear; none: no meshes (default: found beside the file or in ../DATA)"},
};

const ra_format ra_format_lego_ani = {
    "lego_ani",
    "LEGO Island animation (.ani)",
    "ani",
    "s32 magic 0x11 at offset 0, finite bounding sphere, camera flag 0 or 1",
    lego_detect,
    lego_read_full,
    lego_to_scene,
    lego_pose,
    lego_dump_source,
    lego_write,
    .options = lego_options,
    .option_count = sizeof lego_options / sizeof lego_options[0],
};

const ra_format ra_format_lego_ani_body = {
    "lego_ani_body",
    "LEGO Island animation body, as embedded in WDB models (no header, no camera)",
    "",
    "never detected: select it with --option format=lego_ani_body",
    NULL,
    lego_read_body,
    lego_to_scene,
    lego_pose,
    lego_dump_source,
    lego_write,
    .options = lego_options,
    .option_count = sizeof lego_options / sizeof lego_options[0],
};
