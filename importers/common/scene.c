/* The neutral scene: builders, consumer-style playback, key tracks, checks, JSON. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "retroanim/ra_document.h"
#include "retroanim/ra_parallel.h"

void ra_scene_init(ra_scene *s, ra_arena *arena, const char *format)
{
    memset(s, 0, sizeof *s);
    s->arena = arena;
    s->format = format;
}

void ra_channel_share_keys(ra_channel *ch, const ra_channel *from)
{
    ch->position = from->position, ch->position_count = from->position_count;
    ch->rotation = from->rotation, ch->rotation_count = from->rotation_count;
    ch->scaling = from->scaling, ch->scaling_count = from->scaling_count;
}

int32_t ra_scene_add_node(ra_scene *s, const char *name, int32_t parent, const ra_mat4 *transform)
{
    if (s->node_count >= (size_t)INT32_MAX) return -1;
    if (s->node_count == s->node_cap) {
        size_t cap = s->node_cap ? s->node_cap * 2 : 16;
        ra_node *n = ra_arena_grow(s->arena, s->nodes, s->node_count, cap, sizeof *n);
        if (!n) return -1;
        s->nodes = n;
        s->node_cap = cap;
    }
    ra_node *n = &s->nodes[s->node_count];
    memset(n, 0, sizeof *n);
    n->name = ra_arena_strndup(s->arena, name, strlen(name));
    if (!n->name) return -1;
    n->parent = parent;
    n->transform = transform ? *transform : ra_m4_identity();
    return (int32_t)s->node_count++;
}

void ra_camera_axes(const ra_camera *c, ra_vec3 *view, ra_vec3 *up, ra_vec3 *right)
{
    ra_vec3 f = ra_v3_sub(c->look_at, c->position);
    double fl = ra_v3_len(f);
    f = fl > 0 ? ra_v3_scale(f, 1 / fl) : ra_v3(0, 0, -1);
    ra_vec3 x = ra_v3_cross(f, c->up);
    double xl = ra_v3_len(x);
    if (!(xl > 1e-12)) {
        x = ra_v3_cross(f, fabs(f.y) < 0.9 ? ra_v3(0, 1, 0) : ra_v3(1, 0, 0));
        xl = ra_v3_len(x);
    }
    x = ra_v3_scale(x, 1 / xl);
    *view = f;
    *up = ra_v3_cross(x, f);
    *right = x;
}

int32_t ra_scene_find_node(const ra_scene *s, const char *name)
{
    for (size_t i = 0; i < s->node_count; i++)
        if (strcmp(s->nodes[i].name, name) == 0) return (int32_t)i;
    return -1;
}

/* room for n more entries in m (doubling); false when out of memory */
static bool meta_reserve(ra_arena *a, ra_meta_list *m, size_t n)
{
    if (n <= m->cap - m->count) return true;
    size_t cap = m->cap ? m->cap : 8;
    while (cap - m->count < n) {
        if (cap > SIZE_MAX / 4 / sizeof *m->items) return false;
        cap *= 2;
    }
    ra_meta *g = ra_arena_grow(a, m->items, m->count, cap, sizeof *g);
    if (!g) return false;
    m->items = g;
    m->cap = cap;
    return true;
}

/* a new entry of key at m's end */
static ra_meta *meta_append(ra_arena *a, ra_meta_list *m, const char *key)
{
    if (!meta_reserve(a, m, 1)) return NULL;
    ra_meta *e = &m->items[m->count];
    e->key = ra_arena_strndup(a, key, strlen(key));
    if (!e->key) return NULL;
    m->count++;
    return e;
}

static ra_meta *meta_slot(ra_arena *a, ra_meta_list *m, const char *key)
{
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->items[i].key, key) == 0) return &m->items[i];
    return meta_append(a, m, key);
}

bool ra_meta_set(ra_arena *a, ra_meta_list *m, const ra_meta *e)
{
    if (e->type == RA_META_STRING) return ra_meta_set_string(a, m, e->key, e->u.s);
    ra_meta *d = meta_slot(a, m, e->key);
    if (!d) return false;
    d->type = e->type;
    d->u = e->u;
    return true;
}

bool ra_meta_set_bool(ra_arena *a, ra_meta_list *m, const char *key, bool v)
{
    ra_meta *e = meta_slot(a, m, key);
    if (!e) return false;
    e->type = RA_META_BOOL;
    e->u.b = v;
    return true;
}
bool ra_meta_set_int(ra_arena *a, ra_meta_list *m, const char *key, int64_t v)
{
    ra_meta *e = meta_slot(a, m, key);
    if (!e) return false;
    e->type = RA_META_INT;
    e->u.i = v;
    return true;
}
bool ra_meta_set_double(ra_arena *a, ra_meta_list *m, const char *key, double v)
{
    ra_meta *e = meta_slot(a, m, key);
    if (!e) return false;
    e->type = RA_META_DOUBLE;
    e->u.d = v;
    return true;
}
bool ra_meta_set_string(ra_arena *a, ra_meta_list *m, const char *key, const char *v)
{
    const char *copy = ra_arena_strndup(a, v, strlen(v));
    return copy && ra_meta_set_string_ref(a, m, key, copy);
}
bool ra_meta_set_string_ref(ra_arena *a, ra_meta_list *m, const char *key, const char *v)
{
    ra_meta *e = meta_slot(a, m, key);
    if (!e) return false;
    e->type = RA_META_STRING;
    e->u.s = v;
    return true;
}
bool ra_meta_add_refs(ra_arena *a, ra_meta_list *m, const ra_meta *e, size_t n)
{
    if (!meta_reserve(a, m, n)) return false;
    if (n) memcpy(m->items + m->count, e, n * sizeof *e);
    m->count += n;
    return true;
}

bool ra_meta_set_vec3(ra_arena *a, ra_meta_list *m, const char *key, ra_vec3 v)
{
    ra_meta *e = meta_slot(a, m, key);
    if (!e) return false;
    e->type = RA_META_VEC3;
    e->u.v = v;
    return true;
}
const ra_meta *ra_meta_get(const ra_meta_list *m, const char *key)
{
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->items[i].key, key) == 0) return &m->items[i];
    return NULL;
}

static _Thread_local size_t g_warnings_lost;

size_t ra_warnings_lost(void) { return g_warnings_lost; }
void ra_warnings_lost_add(size_t n) { g_warnings_lost += n; }

void ra_scene_warn(ra_scene *s, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (ra_parallel_defer_warning(s, buf)) return; /* a job's: replayed in job order */
    /* RA_MAX_WARNINGS distinct messages are kept; the ones after them are
     * counted in one last entry (each new message was compared with all
     * before it: a file of many distinct warnings cost their square) */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < s->warning_count; i++)
            if (strcmp(s->warnings[i].msg, buf) == 0) {
                s->warnings[i].count++;
                return;
            }
        if (pass || s->warning_count < RA_MAX_WARNINGS - 1) break;
        snprintf(buf, sizeof buf, "%s", RA_MORE_WARNINGS); /* a new message past the kept ones */
    }
    if (s->warning_count == s->warning_cap) {
        size_t cap = s->warning_cap ? s->warning_cap * 2 : 8;
        ra_warning *w = ra_arena_grow(s->arena, s->warnings, s->warning_count, cap, sizeof *w);
        if (!w) {
            g_warnings_lost++;
            return;
        }
        s->warnings = w;
        s->warning_cap = cap;
    }
    const char *m = ra_arena_strndup(s->arena, buf, strlen(buf));
    if (!m) {
        g_warnings_lost++;
        return;
    }
    s->warnings[s->warning_count].msg = m;
    s->warnings[s->warning_count].count = 1;
    s->warning_count++;
}

/* ---- consumer playback -------------------------------------------------------------- */
static size_t find_key_index(const double *times, size_t stride, size_t n, double t)
{
    /* last index i with time[i] <= t (binary search; keys are increasing) */
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        double tm = *(const double *)((const char *)times + mid * stride);
        if (tm <= t) lo = mid;
        else hi = mid;
    }
    return lo;
}

static ra_vec3 sample_vec(const ra_vec_key *k, size_t n, double t)
{
    if (t <= k[0].t) return k[0].v;
    if (t >= k[n - 1].t) return k[n - 1].v;
    size_t i = find_key_index(&k[0].t, sizeof *k, n, t);
    double dt = k[i + 1].t - k[i].t;
    double f = dt > 0 ? (t - k[i].t) / dt : 0;
    return ra_v3_lerp(k[i].v, k[i + 1].v, f);
}
static ra_quat sample_quat(const ra_quat_key *k, size_t n, double t)
{
    if (t <= k[0].t) return ra_q_normalize(k[0].q);
    if (t >= k[n - 1].t) return ra_q_normalize(k[n - 1].q);
    size_t i = find_key_index(&k[0].t, sizeof *k, n, t);
    double dt = k[i + 1].t - k[i].t;
    double f = dt > 0 ? (t - k[i].t) / dt : 0;
    return ra_q_slerp_shortest(k[i].q, k[i + 1].q, f);
}

ra_mat4 ra_scene_sample_local(const ra_scene *s, size_t anim, uint32_t node, double t)
{
    const ra_node *nd = &s->nodes[node];
    if (anim >= s->animation_count) return nd->transform;
    const ra_animation *a = &s->animations[anim];
    const ra_channel *ch = NULL;
    for (size_t i = 0; i < a->channel_count; i++)
        if (a->channels[i].node == node) {
            ch = &a->channels[i];
            break;
        }
    if (!ch) return nd->transform;
    ra_vec3 T, S;
    ra_quat R;
    ra_m4_decompose(&nd->transform, &T, &R, &S);
    if (ch->position_count) T = sample_vec(ch->position, ch->position_count, t);
    if (ch->rotation_count) R = sample_quat(ch->rotation, ch->rotation_count, t);
    if (ch->scaling_count) S = sample_vec(ch->scaling, ch->scaling_count, t);
    return ra_m4_compose(T, R, S);
}

void ra_scene_sample_world(const ra_scene *s, size_t anim, double t, ra_mat4 *out)
{
    for (size_t i = 0; i < s->node_count; i++) {
        ra_mat4 l = ra_scene_sample_local(s, anim, (uint32_t)i, t);
        int32_t p = s->nodes[i].parent;
        out[i] = p >= 0 ? ra_m4_mul(&out[p], &l) : l;
    }
}

/* ---- key tracks ------------------------------------------------------------------------ */
double ra_step_epsilon(double t)
{
    double e = 1e-4;
    double u = 4 * ra_f32_ulp(t);
    return u > e ? u : e;
}

/* doubles a track's key array: in the arena, or with ra_realloc for scratch tracks */
static bool grow(ra_arena *a, void **keys, size_t count, size_t *cap, size_t size, bool heap)
{
    size_t ncap = *cap ? *cap * 2 : 8;
    void *k = NULL;
    if (heap) k = ncap <= SIZE_MAX / size ? ra_realloc(*keys, ncap * size) : NULL;
    else k = ra_arena_grow(a, *keys, count, ncap, size);
    if (!k) return false;
    *keys = k;
    *cap = ncap;
    return true;
}

/* ---- scratch blocks kept between the channels a thread bakes -------------------------
 * Scratch tracks of a few hundred KiB, freed after every channel, made
 * glibc trim and regrow its heap each time: fresh pages, faulted and
 * cleared again (a fifth of a large Homeworld load).  A thread keeps up to
 * SPARE blocks of 64 KiB or more until ra_scratch_flush. */
#define SPARE 4
#define SPARE_MIN ((size_t)64 << 10)
static _Thread_local struct {
    void *p;
    size_t bytes;
} g_spare[SPARE];

void *ra_scratch_take(size_t bytes, size_t *got)
{
    int best = -1;
    for (int i = 0; i < SPARE; i++)
        if (g_spare[i].p && g_spare[i].bytes >= bytes && (best < 0 || g_spare[i].bytes < g_spare[best].bytes)) best = i;
    if (best >= 0 && bytes >= SPARE_MIN / 4) {
        void *p = g_spare[best].p;
        *got = g_spare[best].bytes;
        g_spare[best].p = NULL;
        return p;
    }
    *got = bytes;
    return ra_malloc(bytes);
}

void ra_scratch_give(void *p, size_t bytes)
{
    if (!p) return;
    if (bytes < SPARE_MIN) {
        ra_free(p);
        return;
    }
    int slot = -1, smallest = 0;
    for (int i = 0; i < SPARE && slot < 0; i++)
        if (!g_spare[i].p) slot = i;
        else if (g_spare[i].bytes < g_spare[smallest].bytes) smallest = i;
    if (slot < 0) { /* all kept: this one replaces the smallest if it is larger */
        if (g_spare[smallest].bytes >= bytes) {
            ra_free(p);
            return;
        }
        ra_free(g_spare[smallest].p);
        slot = smallest;
    }
    g_spare[slot].p = p;
    g_spare[slot].bytes = bytes;
}

void ra_scratch_flush(void)
{
    for (int i = 0; i < SPARE; i++) {
        ra_free(g_spare[i].p);
        g_spare[i].p = NULL;
    }
}

bool ra_vec_track_reserve(ra_vec_track *tr, size_t cap)
{
    if (!cap) cap = 1;
    size_t got = 0;
    void *k = cap <= SIZE_MAX / sizeof(ra_vec_key) ? ra_scratch_take(cap * sizeof(ra_vec_key), &got) : NULL;
    *tr = (ra_vec_track){k, 0, got / sizeof(ra_vec_key), true};
    return tr->keys != NULL;
}

bool ra_quat_track_reserve(ra_quat_track *tr, size_t cap)
{
    if (!cap) cap = 1;
    size_t got = 0;
    void *k = cap <= SIZE_MAX / sizeof(ra_quat_key) ? ra_scratch_take(cap * sizeof(ra_quat_key), &got) : NULL;
    *tr = (ra_quat_track){k, 0, got / sizeof(ra_quat_key), true};
    return tr->keys != NULL;
}

void ra_vec_track_release(ra_vec_track *tr)
{
    if (tr->heap) ra_scratch_give(tr->keys, tr->cap * sizeof *tr->keys);
    *tr = (ra_vec_track){0};
}

void ra_quat_track_release(ra_quat_track *tr)
{
    if (tr->heap) ra_scratch_give(tr->keys, tr->cap * sizeof *tr->keys);
    *tr = (ra_quat_track){0};
}

/* ---- the key budget of the load under way on this thread (max_keys) ---------------- */
static _Thread_local double g_keys_left = HUGE_VAL;
static _Thread_local bool g_keys_over;

ra_key_budget ra_key_budget_begin(double max_keys)
{
    ra_key_budget saved = {g_keys_left, g_keys_over};
    g_keys_left = max_keys;
    g_keys_over = false;
    return saved;
}

bool ra_key_budget_end(ra_key_budget saved)
{
    bool over = g_keys_over;
    g_keys_left = saved.left;
    g_keys_over = saved.over;
    return over;
}

double ra_keys_left(void) { return g_keys_left; }

bool ra_keys_charge(size_t n)
{
    if ((double)n > g_keys_left) {
        g_keys_over = true;
        return false;
    }
    g_keys_left -= (double)n;
    return true;
}

bool ra_vec_track_commit(ra_arena *a, ra_vec_track *tr, double tol, ra_vec_key **out, size_t *count)
{
    ra_vec_track_simplify(tr, tol);
    *out = ra_keys_charge(tr->count) ? ra_arena_keys_memdup(a, tr->keys, tr->count, sizeof **out) : NULL;
    *count = *out ? tr->count : 0;
    ra_vec_track_release(tr);
    return *out != NULL;
}

bool ra_quat_track_commit(ra_arena *a, ra_quat_track *tr, double tol, double max_angle, ra_quat_key **out,
                          size_t *count)
{
    bool ok = ra_quat_track_simplify(tr, tol, max_angle);
    *out = ok && ra_keys_charge(tr->count) ? ra_arena_keys_memdup(a, tr->keys, tr->count, sizeof **out) : NULL;
    *count = *out ? tr->count : 0;
    ra_quat_track_release(tr);
    return *out != NULL;
}

bool ra_vec_track_grow(ra_arena *a, ra_vec_track *tr)
{
    return grow(a, (void **)&tr->keys, tr->count, &tr->cap, sizeof *tr->keys, tr->heap);
}

bool ra_quat_track_grow(ra_arena *a, ra_quat_track *tr)
{
    return grow(a, (void **)&tr->keys, tr->count, &tr->cap, sizeof *tr->keys, tr->heap);
}

/* the largest piece of an arc: max_angle, at most 1.5 (and 1.5 where it is not positive) */
static double arc_cap(double max_angle) { return !(max_angle > 0) || max_angle > 1.5 ? 1.5 : max_angle; }

double ra_quat_arc_cos(double max_angle) { return cos(arc_cap(max_angle)); }

size_t ra_quat_arc_pieces(ra_quat q0, ra_quat q1, double max_angle)
{
    max_angle = arc_cap(max_angle);
    /* cos(max_angle), kept for the next call (a load passes one angle) */
    static _Thread_local double last_angle = -1, last_cos = 0;
    if (max_angle != last_angle) {
        last_cos = cos(max_angle);
        last_angle = max_angle;
    }
    if (ra_quat_arc_one_piece(q0, q1, last_cos)) return 1;
    double d = ra_q_dot(ra_q_normalize(q0), ra_q_normalize(q1));
    if (d > 1) d = 1;
    if (d < -1) d = -1;
    if (d >= last_cos) return 1;                       /* one piece: no acos */
    size_t pieces = (size_t)ceil(acos(d) / max_angle); /* the 4D angle of the engine's great circle */
    return pieces < 1 ? 1 : pieces;
}

bool ra_quat_track_arc_n(ra_arena *a, ra_quat_track *tr, double t0, ra_quat q0, double t1, ra_quat q1, size_t pieces)
{
    if (pieces <= 1) return ra_quat_track_push(a, tr, t1, q1); /* no slerp */
    q0 = ra_q_normalize(q0);
    q1 = ra_q_normalize(q1);
    /* ra_q_slerp_raw(q0, q1, f) with its arc worked out once */
    double d = ra_q_dot(q0, q1) / (ra_q_len(q0) * ra_q_len(q1));
    if (d > 1) d = 1;
    if (d < -1) d = -1;
    double th = acos(d), s = sin(th);
    for (size_t k = 1; k <= pieces; k++) {
        double f = (double)k / (double)pieces;
        ra_quat q = q1;
        if (k < pieces) {
            if (s < 1e-9) {
                q = ra_q_normalize(ra_q_add(ra_q_scale(q0, 1 - f), ra_q_scale(q1, f)));
            } else {
                double ka = sin((1 - f) * th) / s, kb = sin(f * th) / s;
                q = ra_q_normalize(ra_q_add(ra_q_scale(q0, ka), ra_q_scale(q1, kb)));
            }
        }
        if (!ra_quat_track_push(a, tr, t0 + (t1 - t0) * f, q)) return false;
    }
    return true;
}

bool ra_quat_track_arc(ra_arena *a, ra_quat_track *tr, double t0, ra_quat q0, double t1, ra_quat q1, double max_angle)
{
    return ra_quat_track_arc_n(a, tr, t0, q0, t1, q1, ra_quat_arc_pieces(q0, q1, max_angle));
}

/* The vector test is a sleeve: playback from the last kept key a to a later
 * key b reproduces every key j between them within tol_j exactly when the
 * slope (b - a) / (tb - ta) of each axis lies in the intersection of the
 * slopes [(vj - tol_j - va) / (tj - ta), (vj + tol_j - va) / (tj - ta)] of
 * the keys between.  The intersection is kept as the keys pass, so each key
 * costs O(1) and no run needs a bound. */
static double vec_axis(ra_vec3 v, int c) { return c == 0 ? v.x : c == 1 ? v.y : v.z; }

void ra_vec_track_simplify(ra_vec_track *tr, double tol)
{
    if (tr->count < 3) return;
    ra_vec_key *k = tr->keys;
    size_t o = 1; /* keys kept so far: k[0..o-1] */
    double lo[3], hi[3];
    bool open = false; /* lo/hi hold the sleeve of the keys dropped since k[o-1] */
    for (size_t i = 1; i + 1 < tr->count; i++) {
        const ra_vec_key *a = &k[o - 1], *b = &k[i + 1];
        double scale = 1 + ra_fmax(fabs(k[i].v.x), ra_fmax(fabs(k[i].v.y), fabs(k[i].v.z)));
        double e = tol * scale * (1 - 1e-9), dt = k[i].t - a->t, db = b->t - a->t;
        double nlo[3], nhi[3];
        bool drop = dt > 0 && db > dt;
        for (int c = 0; drop && c < 3; c++) {
            double av = vec_axis(a->v, c), kv = vec_axis(k[i].v, c);
            nlo[c] = (kv - e - av) / dt;
            nhi[c] = (kv + e - av) / dt;
            if (open) {
                nlo[c] = ra_fmax(nlo[c], lo[c]);
                nhi[c] = ra_fmin(nhi[c], hi[c]);
            }
            double s = (vec_axis(b->v, c) - av) / db;
            if (!(s >= nlo[c] && s <= nhi[c])) drop = false;
        }
        if (drop) {
            memcpy(lo, nlo, sizeof lo);
            memcpy(hi, nhi, sizeof hi);
            open = true;
            continue;
        }
        /* keep k[i]; the dropped keys before it are gone */
        k[o++] = k[i];
        open = false;
    }
    k[o++] = k[tr->count - 1];
    tr->count = o;
}

/* A rotation key is dropped when playback between the last kept key and the
 * next key reproduces it (and every key dropped since) within tol.  The
 * look-back is bounded so long runs stay linear in time. */
#define SIMPLIFY_RUN 64

/* Rotations about Z alone (every key's x and y exactly 0, as World of Goo's
 * 2D bake makes them) lie on the circle of the w and z components: key q is
 * its half angle atan2(q.z, q.w) there, the shortest-arc slerp between two
 * keys moves it linearly, and q and -q are one rotation.  So ra_q_slerp_near
 * is decided by arithmetic: no sine per key where the span is too long for
 * the nlerp shortcut (a long run's keys were each tested up to 64 times). */
static bool about_z(const ra_quat_key *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (k[i].q.x != 0 || k[i].q.y != 0) return false;
    return true;
}
/* is the rotation between half angles h and g (modulo pi) within tol? */
static inline bool half_angles_near(double h, double g, double tol)
{
    double d = h - g;
    if (fabs(d) > RA_PI / 2) d = remainder(d, RA_PI);
    return 2 * fabs(d) <= tol;
}

/* Is e off the nlerp wa a + wb b by more than the angle whose cos(T/2) is
 * lim (cc^2 < lim^2 den: cos(T/2) >= 1 - T^2/8)?  The weights may be
 * scaled together: the test does not change. */
static inline bool off_nlerp(ra_quat a, double wa, ra_quat b, double wb, ra_quat e, double lim)
{
    ra_quat nl = ra_q_add(ra_q_scale(a, wa), ra_q_scale(b, wb));
    double cc = ra_q_dot(nl, e), den = ra_q_dot(nl, nl) * ra_q_dot(e, e);
    return cc * cc < lim * lim * den;
}

/* Keeps k[i] as k[(*o)++], and in *last, which the next keys' tests read:
 * read back from k just after it was written, each test waited for the
 * store to reach memory.  Most keys stay where they are: no store at all. */
static inline void keep_key(ra_quat_key *k, size_t i, size_t *o, ra_quat_key *last)
{
    *last = k[i];
    if (*o != i) k[*o] = *last;
    ++*o;
}

bool ra_quat_keys_simplify(ra_quat_key *k, size_t *count, double tol, double max_angle, bool circle)
{
    size_t n = *count;
    if (n < 3) return true;
    /* the half angles, compacted beside the keys.  Only where the general
     * test resolves tol: its acos cannot tell angles below about 3e-8 apart,
     * the circle can (tighter tolerances keep the general test's answers). */
    double *h = NULL;
    if (circle && tol >= 1e-6 && about_z(k, n)) {
        if (!(h = ra_malloc(n * sizeof *h))) return false;
        for (size_t i = 0; i < n; i++) h[i] = atan2(k[i].q.z, k[i].q.w);
    }
    size_t o = 1, run = 0;
    /* the rotation between a and b is at most max_angle where |a.b| >= cos(max_angle / 2) |a| |b| */
    double c = cos(ra_fmin(max_angle, RA_PI) / 2);
    /* The keys that stay (most, where a bake sampled only what playback
     * needs) are told first without the span's square roots: below th2_small
     * (the span's theta^2 bound) its nlerp deviation is under tol / 100, so
     * a key off the nlerp by more than 1.02 tol is off by more than tol plus
     * the deviation, which ra_q_slerp_near refuses: the same answer. */
    const double th2_small = pow(0.01 * tol / 0.04, 2.0 / 3.0) * (1 - 1e-9), hi_small = 1.02 * tol;
    const double lim_small = 1.0 - hi_small * hi_small / 8;
    /* A key on a longer span (most of a bake's per-frame keys) is told
     * without the span's square roots and divisions too, where it is far
     * from the nlerp: dev^2 = 0.0016 theta^6 and (tol + dev)^2 <= 2 tol^2 +
     * 2 dev^2, so with theta^2 bounded as below, a key off the nlerp by more
     * than sqrt(2 tol^2 + 0.0032 th2^3) is off by more than tol + dev, which
     * ra_q_slerp_near refuses (and so does a span of cs <= 1/2 or longer than
     * max_angle, which nothing is dropped between).  The nlerp's weights
     * need no division: the test does not change when nl is scaled.  Its
     * hi^2 lies at least a third of itself above ra_q_slerp_near's (dev^2
     * overestimated at least 1.5^3 times, from cs > 1/2 and nn >= 1/2; tol^2
     * twice), and hi^2 of 1e-12 or more keeps that margin (at least 9e-14 in
     * lim^2) far above the rounding of either test's cc^2 / den (about
     * 1e-15), so it never keeps a key the exact test would drop. */
    /* From tol 1.1e-6 on, a long span's key is told by a closer bound,
     * for one square root: its dev = 0.04 th2^1.5 from the th2 bound above
     * is at least ra_q_slerp_near's, so a key off the nlerp by more than
     * hi = 1.02 (tol + dev) is off by more than its tol + dev.  Kept below
     * hi = 1, where both lim lie above 7/8, the two lim^2 are at least
     * 0.04 tol^2 / 8 * 1.75 >= 1e-14 apart, far above the rounding of
     * either test (most of NIFF's keys the shortcut above left to the slow
     * path lie 1.02 to 1.41 times tol + dev off the nlerp). */
    const bool tight = tol >= 1.1e-6;
    ra_quat_key last = k[0]; /* k[o - 1], see keep_key */
    const ra_quat_key *a = &last;
    for (size_t i = 1; i + 1 < n; i++) {
        const ra_quat_key *b = &k[i + 1];
        if (!h && run == 0 && lim_small > 0) {
            double d = ra_q_dot(a->q, b->q), nn = ra_q_dot(a->q, a->q) * ra_q_dot(b->q, b->q);
            /* theta^2 <= 2.196 (1 - cs), and 1 - cs <= 1 - cs^2 = (nn - d^2) / nn <= 2 (nn - d^2) for
             * nn >= 1/2 and 0 <= cs <= 1 (1e-14 nn: more than the rounding of d^2 and of cs) */
            double th2 = 2.196 * 2 * (nn - d * d + 1e-14 * nn);
            bool far = false;
            if (d > 0 && nn >= 0.5 && th2 < th2_small) {
                double f = (k[i].t - a->t) / (b->t - a->t);
                far = off_nlerp(a->q, 1 - f, b->q, f, k[i].q, lim_small);
            } else if (d > 0 && nn >= 0.5) {
                double hi2;
                if (!tight) {
                    hi2 = 2 * tol * tol + 0.0032 * th2 * th2 * th2;
                } else { /* one root for a closer bound (see tight) */
                    double hi = 1.02 * (tol + 0.04 * th2 * sqrt(th2));
                    hi2 = hi < 1 ? hi * hi : 0;
                }
                if (hi2 >= 1e-12 && hi2 < 8)
                    far = off_nlerp(a->q, b->t - k[i].t, b->q, k[i].t - a->t, k[i].q, 1.0 - hi2 / 8);
            }
            if (far) {
                keep_key(k, i, &o, &last);
                continue;
            }
        }
        /* dropped only between keys on one hemisphere less than 60 degrees (4D) apart, where the span's nlerp shortcut holds */
        ra_slerp_span span = ra_q_slerp_span(a->q, b->q);
        bool drop = run < SIMPLIFY_RUN && ra_q_dot(a->q, b->q) > 0 && span.dev >= 0 && !ra_q_angle_over(a->q, b->q, c);
        /* on the circle: b's half angle seen from a's, on a's hemisphere (a.b > 0) */
        double ha = h ? h[o - 1] : 0, dh = h ? remainder(h[i + 1] - ha, 2 * RA_PI) : 0;
        for (size_t j = i - run; drop && j <= i; j++) {
            double f = (k[j].t - a->t) / (b->t - a->t);
            if (!(h ? half_angles_near(ha + f * dh, h[j], tol) : ra_q_slerp_near(&span, f, k[j].q, tol))) drop = false;
        }
        if (drop) {
            run++;
            continue;
        }
        if (h) h[o] = h[i];
        keep_key(k, i, &o, &last);
        run = 0;
    }
    k[o++] = k[n - 1];
    ra_free(h);
    *count = o;
    return true;
}

bool ra_quat_track_simplify(ra_quat_track *tr, double tol, double max_angle)
{
    return ra_quat_keys_simplify(tr->keys, &tr->count, tol, max_angle, true);
}

/* ---- invariants ---------------------------------------------------------------------------- */
static bool finite_v(ra_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* The key checks of scene_check without branches, for whole tracks: true
 * when every key is finite, in [0, lim], after the one before, and (for
 * rotations) of length within 1e-3 of 1 (squared, with a margin that only
 * sends borderline keys to the exact check).  A false answer is looked at
 * key by key for the message. */
static bool vec_keys_fine(const ra_vec_key *k, size_t n, double lim)
{
    bool bad = false;
    double prev = -1;
    for (size_t i = 0; i < n; i++) {
        double t = k[i].t, x = k[i].v.x, y = k[i].v.y, z = k[i].v.z;
        bad |= !(t > prev) | !(t <= lim) | !(x - x == 0) | !(y - y == 0) | !(z - z == 0);
        prev = t;
    }
    return !bad && (!n || k[0].t >= 0);
}
static bool quat_keys_fine(const ra_quat_key *k, size_t n, double lim)
{
    const double lo = 0.998001 * (1 + 1e-12), hi = 1.002001 * (1 - 1e-12); /* (1 -+ 1e-3)^2 */
    bool bad = false;
    double prev = -1;
    for (size_t i = 0; i < n; i++) {
        const ra_quat q = k[i].q;
        double t = k[i].t, l2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
        bad |= !(t > prev) | !(t <= lim) | !(l2 >= lo) | !(l2 <= hi);
        prev = t;
    }
    return !bad && (!n || k[0].t >= 0);
}

/* A channel's keys all fine (the fast checks above) */
static bool channel_keys_fine(const ra_channel *ch, double duration)
{
    double lim = duration + 1e-9;
    return vec_keys_fine(ch->position, ch->position_count, lim) && vec_keys_fine(ch->scaling, ch->scaling_count, lim) &&
           quat_keys_fine(ch->rotation, ch->rotation_count, lim);
}

/* fine: NULL, or for every channel in order (the animations' channels one
 * after another) whether its keys passed channel_keys_fine already */
static ra_status scene_check(const ra_scene *s, ra_arena *tmp, const uint8_t *fine, ra_error *err)
{
#define BAD(...) return ra_fail(err, RA_ERR_BAD_VALUE, "retroanim", RA_NO_OFFSET, "scene", __VA_ARGS__)
    if (s->node_count == 0) BAD("scene has no nodes");
    ra_strmap names;
    if (!ra_strmap_init(&names, tmp, s->node_count))
        return ra_fail(err, RA_ERR_NO_MEMORY, "retroanim", RA_NO_OFFSET, "scene", "out of memory checking the scene");
    for (size_t i = 0; i < s->node_count; i++) {
        uint32_t *u = s->nodes[i].name ? ra_strmap_slot(&names, s->nodes[i].name) : NULL;
        if (u && (*u)++) BAD("node name %s is not unique", s->nodes[i].name);
    }
    for (size_t i = 0; i < s->node_count; i++) {
        const ra_node *n = &s->nodes[i];
        if (!n->name || !n->name[0]) BAD("node %zu has no name", i);
        if (i == 0 ? n->parent != -1 : (n->parent < 0 || (size_t)n->parent >= i))
            BAD("node %zu (%s) has parent %d", i, n->name, n->parent);
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                if (!isfinite(n->transform.m[r][c])) BAD("node %s has a non-finite transform", n->name);
    }
    uint8_t *seen = ra_arena_alloc(tmp, s->node_count);
    size_t chi = 0; /* the channel's index in fine */
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        if (seen) memset(seen, 0, s->node_count);
        if (!an->name) BAD("animation %zu has no name", a);
        if (!(an->ticks_per_second > 0) || !isfinite(an->duration) || an->duration < 0)
            BAD("animation %s has bad rate or duration", an->name);
        if (an->channel_count == 0) BAD("animation %s has no channel", an->name);
        for (size_t c = 0; c < an->channel_count; c++) {
            const ra_channel *ch = &an->channels[c];
            if (ch->node >= s->node_count) BAD("channel %zu of %s names no node", c, an->name);
            if (seen && seen[ch->node]++) BAD("two channels on node %s", s->nodes[ch->node].name);
            if (!ch->position_count && !ch->rotation_count && !ch->scaling_count)
                BAD("channel on %s has no keys", s->nodes[ch->node].name);
            const char *nm = s->nodes[ch->node].name;
            bool ok = fine ? fine[chi++] : channel_keys_fine(ch, an->duration);
            if (ok) continue; /* (else the loops below name the first bad key) */
            for (size_t k = 0; k < ch->position_count; k++) {
                if (!finite_v(ch->position[k].v) || !isfinite(ch->position[k].t))
                    BAD("non-finite position key on %s", nm);
                if (k && !(ch->position[k].t > ch->position[k - 1].t))
                    BAD("position key times of %s not increasing", nm);
                if (ch->position[k].t > an->duration + 1e-9 || ch->position[k].t < 0)
                    BAD("position key of %s outside [0, duration]", nm);
            }
            for (size_t k = 0; k < ch->scaling_count; k++) {
                if (!finite_v(ch->scaling[k].v) || !isfinite(ch->scaling[k].t)) BAD("non-finite scaling key on %s", nm);
                if (k && !(ch->scaling[k].t > ch->scaling[k - 1].t)) BAD("scaling key times of %s not increasing", nm);
                if (ch->scaling[k].t > an->duration + 1e-9 || ch->scaling[k].t < 0)
                    BAD("scaling key of %s outside [0, duration]", nm);
            }
            for (size_t k = 0; k < ch->rotation_count; k++) {
                ra_quat q = ch->rotation[k].q;
                if (!isfinite(q.w) || !isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z) ||
                    !isfinite(ch->rotation[k].t))
                    BAD("non-finite rotation key on %s", nm);
                if (fabs(ra_q_len(q) - 1) > 1e-3) BAD("rotation key of %s is not a unit quaternion", nm);
                if (k && !(ch->rotation[k].t > ch->rotation[k - 1].t))
                    BAD("rotation key times of %s not increasing", nm);
                if (ch->rotation[k].t > an->duration + 1e-9 || ch->rotation[k].t < 0)
                    BAD("rotation key of %s outside [0, duration]", nm);
            }
        }
        for (size_t v = 0; v < an->visibility_count; v++) {
            const ra_vis_track *vt = &an->visibility[v];
            if (vt->node >= s->node_count) BAD("visibility track %zu of %s names no node", v, an->name);
            for (size_t k = 0; k < vt->count; k++) {
                double t = vt->keys[k].t;
                if (!(t >= 0 && t <= an->duration + 1e-9))
                    BAD("visibility key of %s outside [0, duration]", s->nodes[vt->node].name);
                if (k && t < vt->keys[k - 1].t) BAD("visibility key times of %s decrease", s->nodes[vt->node].name);
            }
        }
    }
    for (size_t k = 0; k < s->skin_count; k++)
        for (size_t i = 0; i < s->skins[k].joint_count; i++)
            if (s->skins[k].joints[i] >= s->node_count) BAD("skin %zu names no node", k);
    for (size_t k = 0; k < s->texture_count; k++) {
        const ra_texture *t = &s->textures[k];
        if (!t->name || !*t->name) BAD("texture %zu has no name", k);
        if (!t->width || !t->height || !t->rgba || t->width > 65535 || t->height > 65535)
            BAD("texture %s: no pixels or a side outside [1, 65535]", t->name);
    }
    for (size_t k = 0; k < s->material_count; k++) {
        const ra_material *m = &s->materials[k];
        if (!m->name || !*m->name) BAD("material %zu has no name", k);
        if (m->texture >= (int64_t)s->texture_count || m->texture < -1) BAD("material %s names no texture", m->name);
        for (int c = 0; c < 4; c++)
            if (!(m->base_color[c] >= 0 && m->base_color[c] <= 1)) BAD("material %s: colour outside [0, 1]", m->name);
    }
    for (size_t k = 0; k < s->mesh_count; k++) {
        const ra_mesh *m = &s->meshes[k];
        if (!m->name || !*m->name) BAD("mesh %zu has no name", k);
        if (m->node >= s->node_count) BAD("mesh %s hangs on no node", m->name);
        if (m->material >= (int64_t)s->material_count || m->material < -1) BAD("mesh %s names no material", m->name);
        if (!m->vertex_count || !m->positions || !m->triangle_count || !m->indices)
            BAD("mesh %s has no vertices or no triangles", m->name);
        if (m->skin >= (int64_t)s->skin_count || m->skin < -1 || (m->skin >= 0 && (!m->joints || !m->weights)))
            BAD("mesh %s: bad skin", m->name);
        for (size_t i = 0; i < 3 * m->triangle_count; i++)
            if (m->indices[i] >= m->vertex_count) BAD("mesh %s: index %zu names no vertex", m->name, i);
        for (size_t i = 0; i < 3 * (size_t)m->vertex_count; i++)
            if (!isfinite(m->positions[i]) || (m->normals && !isfinite(m->normals[i])))
                BAD("mesh %s: a position or normal is not finite", m->name);
        for (size_t i = 0; m->uvs && i < 2 * (size_t)m->vertex_count; i++)
            if (!isfinite(m->uvs[i])) BAD("mesh %s: a texture coordinate is not finite", m->name);
        for (size_t i = 0; m->colors && i < 4 * (size_t)m->vertex_count; i++)
            if (!(m->colors[i] >= 0 && m->colors[i] <= 1)) BAD("mesh %s: a colour outside [0, 1]", m->name);
        for (size_t v = 0; m->skin >= 0 && v < m->vertex_count; v++)
            for (int i = 0; i < 4; i++)
                if (m->joints[4 * v + (size_t)i] >= s->skins[m->skin].joint_count ||
                    !(m->weights[4 * v + (size_t)i] >= 0))
                    BAD("mesh %s: vertex %zu names no joint of its skin", m->name, v);
    }
    for (size_t c = 0; c < s->camera_count; c++) {
        const ra_camera *cam = &s->cameras[c];
        if (cam->node >= s->node_count || strcmp(s->nodes[cam->node].name, cam->name) != 0)
            BAD("camera %zu is not placed by a node of its name", c);
        if (!(cam->clip_far > cam->clip_near)) BAD("camera %s: far <= near", cam->name);
    }
    return RA_OK;
#undef BAD
}

ra_status ra_scene_check(const ra_scene *s, ra_error *err)
{
    ra_error_clear(err); /* a public entry: the caller's error need not be clear */
    ra_arena *tmp = ra_arena_create(0);
    if (!tmp)
        return ra_fail(err, RA_ERR_NO_MEMORY, "retroanim", RA_NO_OFFSET, "scene", "out of memory checking the scene");
    ra_status st = scene_check(s, tmp, NULL, err);
    ra_arena_destroy(tmp);
    return st;
}

bool ra_channel_hold_rest(ra_arena *a, const ra_scene *s, uint32_t node, ra_channel *ch)
{
    ra_vec3 t, sc;
    ra_quat q;
    ra_m4_decompose(&s->nodes[node].transform, &t, &q, &sc);
    ch->node = node;
    ch->position = ra_arena_alloc(a, sizeof *ch->position);
    ch->rotation = ra_arena_alloc(a, sizeof *ch->rotation);
    ch->scaling = ra_arena_alloc(a, sizeof *ch->scaling);
    if (!ch->position || !ch->rotation || !ch->scaling) return false;
    ch->position[0] = (ra_vec_key){0, t};
    ch->rotation[0] = (ra_quat_key){0, q};
    ch->scaling[0] = (ra_vec_key){0, sc};
    ch->position_count = ch->rotation_count = ch->scaling_count = 1;
    return true;
}

size_t ra_scene_channel_count(const ra_scene *s, double *keys)
{
    size_t n = 0;
    double k = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++) {
            const ra_channel *ch = &s->animations[a].channels[c];
            k += (double)ch->position_count + (double)ch->rotation_count + (double)ch->scaling_count;
            n++;
        }
    if (keys) *keys = k;
    return n;
}

/* ---- the passes over the baked keys ------------------------------------------------
 * After a bake, every key is read by the scene check's key tests, the
 * translations and scalings by the lever sum (the automatic key angle) and
 * the rotations by the count of the density keys.  Made as two parallel
 * passes, each reading its keys once while they are in cache for all that
 * needs them: the translations and scalings, then (the angle known) the
 * rotations. */
typedef struct key_pass {
    ra_channel **ch;
    double *duration;            /* its animation's */
    uint8_t *fine;               /* channel_keys_fine */
    double *reach;               /* ra_channel_reach (two per channel); NULL: not wanted */
    size_t *added;               /* the keys the density cut inserts; NULL: no cut */
    const ra_key_cutter *cutter; /* with added */
    const char *format;
} key_pass;

/* pass 1: the translations and scalings */
static ra_status vec_job(void *ctx, size_t i, ra_worker *w, ra_error *err)
{
    (void)w;
    (void)err;
    key_pass *kp = ctx;
    const ra_channel *ch = kp->ch[i];
    double lim = kp->duration[i] + 1e-9;
    kp->fine[i] =
        vec_keys_fine(ch->position, ch->position_count, lim) && vec_keys_fine(ch->scaling, ch->scaling_count, lim);
    if (kp->reach) ra_channel_reach(ch, kp->reach + 2 * i);
    return RA_OK;
}

/* pass 2: the rotations */
static ra_status rot_job(void *ctx, size_t i, ra_worker *w, ra_error *err)
{
    (void)w;
    (void)err;
    key_pass *kp = ctx;
    const ra_channel *ch = kp->ch[i];
    kp->fine[i] = kp->fine[i] && quat_keys_fine(ch->rotation, ch->rotation_count, kp->duration[i] + 1e-9);
    if (kp->added) kp->added[i] = ra_key_cut_count(kp->cutter, ch->rotation, ch->rotation_count);
    return RA_OK;
}

static void copy_sink(void *ctx, const ra_quat_key *k, size_t at, size_t n)
{
    memcpy((ra_quat_key *)ctx + at, k, n * sizeof *k);
}

/* the density keys inserted into a channel's rotations, and its new keys tested */
static ra_status cut_job(void *ctx, size_t i, ra_worker *w, ra_error *err)
{
    key_pass *kp = ctx;
    if (!kp->added[i]) return RA_OK;
    ra_channel *ch = kp->ch[i];
    ra_quat_key *out = ra_arena_keys_memdup(w->arena, NULL, ch->rotation_count + kp->added[i], sizeof *out);
    if (!out) return ra_fail_nomem(err, kp->format);
    ra_key_cut_apply(kp->cutter, ch->rotation, ch->rotation_count, copy_sink, out);
    ch->rotation = out;
    ch->rotation_count += kp->added[i];
    kp->fine[i] = kp->fine[i] && quat_keys_fine(ch->rotation, ch->rotation_count, kp->duration[i] + 1e-9);
    return RA_OK;
}

static ra_status pass_nomem(ra_error *err)
{
    return ra_fail(err, RA_ERR_NO_MEMORY, "retroanim", RA_NO_OFFSET, "scene", "out of memory checking the scene");
}

ra_status ra_document_key_passes(ra_document *doc, bool cut, double max_keys, ra_arena *tmp, uint8_t **fine,
                                 ra_error *err)
{
    ra_scene *s = &doc->scene;
    double total;
    size_t nch = ra_scene_channel_count(s, &total);
    *fine = ra_arena_array(tmp, nch ? nch : 1, 1);
    key_pass kp = {ra_arena_array(tmp, nch ? nch : 1, sizeof *kp.ch),
                   ra_arena_array(tmp, nch ? nch : 1, sizeof *kp.duration),
                   *fine,
                   cut ? ra_arena_array(tmp, 2 * (nch ? nch : 1), sizeof *kp.reach) : NULL,
                   NULL,
                   NULL,
                   s->format};
    if (!kp.ch || !kp.duration || !kp.fine || (cut && !kp.reach)) return pass_nomem(err);
    size_t i = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++, i++) {
            kp.ch[i] = &s->animations[a].channels[c];
            kp.duration[i] = s->animations[a].duration;
        }
    unsigned threads = ra_document_threads(doc, total);
    ra_status st = ra_parallel_for(doc, threads, nch, vec_job, &kp, NULL, err);
    ra_key_cutter cutter;
    if (st == RA_OK && cut) {
        double angle = ra_scene_auto_key_angle_reach(s, kp.reach);
        if (!(angle > 0)) return ra_fail(err, RA_ERR_NO_MEMORY, doc->format->id, RA_NO_OFFSET, "", "out of memory");
        if (doc->defer_key_cut) doc->key_cut_angle = angle;
        if (!nch) return RA_OK;
        ra_key_cutter_init(&cutter, angle);
        kp.cutter = &cutter;
        if (!(kp.added = ra_arena_array(tmp, nch, sizeof *kp.added))) return pass_nomem(err);
    }
    if (st == RA_OK) st = ra_parallel_for(doc, threads, nch, rot_job, &kp, NULL, err);
    if (st != RA_OK || !kp.added) return st;
    double added = 0;
    for (i = 0; i < nch; i++) added += (double)kp.added[i];
    if (added > 0 && total + added > max_keys)
        return ra_fail(err, RA_ERR_LIMIT, s->format, RA_NO_OFFSET, "max_keys",
                       "the animations need %.0f keys with rotation keys at most %.3g degrees apart, more than "
                       "max_keys (%.0f)",
                       total + added, cutter.max_angle * 180 / RA_PI, max_keys);
    if (doc->defer_key_cut) {
        /* the counts, for the consumer that inserts the keys (ConvertSettings::cut_added);
         * without memory it counts them itself */
        doc->key_cut_added = ra_arena_memdup(doc->arena, kp.added, nch, sizeof *kp.added);
        return RA_OK;
    }
    return added > 0 ? ra_parallel_for(doc, threads, nch, cut_job, &kp, NULL, err) : RA_OK;
}

ra_status ra_scene_check_fine(const ra_scene *s, ra_arena *tmp, const uint8_t *fine, ra_error *err)
{
    return scene_check(s, tmp, fine, err);
}

ra_status ra_document_check_scene(ra_document *doc, ra_error *err)
{
    ra_error_clear(err);
    ra_arena *tmp = ra_arena_create(0);
    if (!tmp) return pass_nomem(err);
    uint8_t *fine = NULL;
    ra_status st = ra_document_key_passes(doc, false, 0, tmp, &fine, err);
    if (st == RA_OK) st = scene_check(&doc->scene, tmp, fine, err);
    ra_arena_destroy(tmp);
    return st;
}

/* ---- JSON ---------------------------------------------------------------------------------- */
static void json_mat(ra_json *j, const ra_mat4 *m)
{
    ra_json_begin_array(j);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) ra_json_number(j, m->m[r][c]);
    ra_json_end_array(j);
}
/* "key": [[t, x, y, z], ...] */
static void json_vec_keys(ra_json *j, const char *key, const ra_vec_key *k, size_t n)
{
    ra_json_key(j, key);
    ra_json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        ra_json_begin_array(j);
        ra_json_number(j, k[i].t);
        ra_json_number(j, k[i].v.x);
        ra_json_number(j, k[i].v.y);
        ra_json_number(j, k[i].v.z);
        ra_json_end_array(j);
    }
    ra_json_end_array(j);
}

static const char *behaviour_name(ra_behaviour b)
{
    switch (b) {
    case RA_BEHAVIOUR_CONSTANT: return "constant";
    case RA_BEHAVIOUR_LINEAR: return "linear";
    case RA_BEHAVIOUR_REPEAT: return "repeat";
    default: return "default";
    }
}
void ra_meta_value_json(ra_json *j, const ra_meta *e)
{
    switch (e->type) {
    case RA_META_BOOL: ra_json_bool(j, e->u.b); break;
    case RA_META_INT: ra_json_int(j, e->u.i); break;
    case RA_META_DOUBLE: ra_json_number(j, e->u.d); break;
    case RA_META_STRING: ra_json_string(j, e->u.s); break;
    case RA_META_VEC3: ra_json_vec3(j, e->u.v); break;
    }
}
void ra_meta_dump_json(ra_json *j, const ra_meta_list *m)
{
    ra_json_begin_object(j);
    for (size_t i = 0; i < m->count; i++) {
        ra_json_key(j, m->items[i].key);
        ra_meta_value_json(j, &m->items[i]);
    }
    ra_json_end_object(j);
}

/* "key": [[a, b, ...], ...]: n records of k floats */
static void json_float_records(ra_json *j, const char *key, const float *v, size_t n, size_t k)
{
    if (!v) return;
    ra_json_key(j, key);
    ra_json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        ra_json_begin_array(j);
        for (size_t c = 0; c < k; c++) ra_json_number(j, v[i * k + c]);
        ra_json_end_array(j);
    }
    ra_json_end_array(j);
}

static void json_name_or_null(ra_json *j, const char *key, const char *name)
{
    ra_json_key(j, key);
    if (name) ra_json_string(j, name);
    else ra_json_raw(j, "null");
}

static void dump_geometry(const ra_scene *s, ra_json *j)
{
    static const char *const wraps[3] = {"repeat", "clamp", "mirror"}, *const alphas[3] = {"opaque", "mask", "blend"};
    ra_json_key(j, "meshes");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->mesh_count; i++) {
        const ra_mesh *m = &s->meshes[i];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, m->name);
        ra_json_key(j, "node");
        ra_json_string(j, s->nodes[m->node].name);
        json_name_or_null(j, "material", m->material >= 0 ? s->materials[m->material].name : NULL);
        ra_json_key(j, "vertex_count");
        ra_json_uint(j, m->vertex_count);
        ra_json_key(j, "triangle_count");
        ra_json_uint(j, m->triangle_count);
        json_float_records(j, "positions", m->positions, m->vertex_count, 3);
        json_float_records(j, "normals", m->normals, m->vertex_count, 3);
        json_float_records(j, "colors", m->colors, m->vertex_count, 4);
        json_float_records(j, "uvs", m->uvs, m->vertex_count, 2);
        ra_json_key(j, "triangles");
        ra_json_begin_array(j);
        for (size_t t = 0; t < m->triangle_count; t++) {
            ra_json_begin_array(j);
            for (int c = 0; c < 3; c++) ra_json_uint(j, m->indices[3 * t + (size_t)c]);
            ra_json_end_array(j);
        }
        ra_json_end_array(j);
        if (m->skin >= 0) {
            ra_json_key(j, "skin");
            ra_json_uint(j, (uint64_t)m->skin);
            ra_json_key(j, "joints");
            ra_json_begin_array(j);
            for (size_t v = 0; v < 4 * (size_t)m->vertex_count; v++) ra_json_uint(j, m->joints[v]);
            ra_json_end_array(j);
            json_float_records(j, "weights", m->weights, m->vertex_count, 4);
        }
        ra_json_key(j, "metadata");
        ra_meta_dump_json(j, &m->meta);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "materials");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->material_count; i++) {
        const ra_material *m = &s->materials[i];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, m->name);
        ra_json_key(j, "base_color");
        ra_json_begin_array(j);
        for (int c = 0; c < 4; c++) ra_json_number(j, m->base_color[c]);
        ra_json_end_array(j);
        json_name_or_null(j, "texture", m->texture >= 0 ? s->textures[m->texture].name : NULL);
        ra_json_key(j, "alpha_mode");
        ra_json_string(j, alphas[m->alpha_mode <= RA_ALPHA_BLEND ? m->alpha_mode : 0]);
        ra_json_key(j, "alpha_cutoff");
        ra_json_number(j, m->alpha_cutoff);
        ra_json_key(j, "double_sided");
        ra_json_bool(j, m->double_sided);
        ra_json_key(j, "unlit");
        ra_json_bool(j, m->unlit);
        ra_json_key(j, "metadata");
        ra_meta_dump_json(j, &m->meta);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "skins"); /* what a skinned mesh's skin and joints refer to */
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->skin_count; i++) {
        const ra_skin *sk = &s->skins[i];
        ra_json_begin_object(j);
        json_name_or_null(j, "name", sk->name);
        ra_json_key(j, "joints");
        ra_json_begin_array(j);
        for (size_t k = 0; k < sk->joint_count; k++) ra_json_string(j, s->nodes[sk->joints[k]].name);
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "textures");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->texture_count; i++) {
        const ra_texture *t = &s->textures[i];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, t->name);
        ra_json_key(j, "width");
        ra_json_uint(j, t->width);
        ra_json_key(j, "height");
        ra_json_uint(j, t->height);
        ra_json_key(j, "wrap_s");
        ra_json_string(j, wraps[t->wrap_s <= RA_WRAP_MIRROR ? t->wrap_s : 0]);
        ra_json_key(j, "wrap_t");
        ra_json_string(j, wraps[t->wrap_t <= RA_WRAP_MIRROR ? t->wrap_t : 0]);
        ra_json_key(j, "nearest");
        ra_json_bool(j, t->nearest);
        json_name_or_null(j, "source_format", t->source_format);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

void ra_scene_dump_json(const ra_scene *s, ra_json *j)
{
    ra_json_begin_object(j);
    ra_json_key(j, "format");
    ra_json_string(j, s->format);
    ra_json_key(j, "nodes");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->node_count; i++) {
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, s->nodes[i].name);
        ra_json_key(j, "parent");
        ra_json_int(j, s->nodes[i].parent);
        ra_json_key(j, "transform");
        json_mat(j, &s->nodes[i].transform);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "cameras");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->camera_count; i++) {
        const ra_camera *c = &s->cameras[i];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, c->name);
        ra_json_key(j, "horizontal_fov");
        ra_json_number(j, c->horizontal_fov);
        ra_json_key(j, "aspect");
        ra_json_number(j, c->aspect);
        ra_json_key(j, "near");
        ra_json_number(j, c->clip_near);
        ra_json_key(j, "far");
        ra_json_number(j, c->clip_far);
        ra_json_key(j, "position");
        ra_json_vec3(j, c->position);
        ra_json_key(j, "look_at");
        ra_json_vec3(j, c->look_at);
        ra_json_key(j, "up");
        ra_json_vec3(j, c->up);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "animations");
    ra_json_begin_array(j);
    for (size_t a = 0; a < s->animation_count; a++) {
        const ra_animation *an = &s->animations[a];
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, an->name);
        ra_json_key(j, "ticks_per_second");
        ra_json_number(j, an->ticks_per_second);
        ra_json_key(j, "duration");
        ra_json_number(j, an->duration);
        ra_json_key(j, "channels");
        ra_json_begin_array(j);
        for (size_t c = 0; c < an->channel_count; c++) {
            const ra_channel *ch = &an->channels[c];
            ra_json_begin_object(j);
            ra_json_key(j, "node");
            ra_json_string(j, s->nodes[ch->node].name);
            ra_json_key(j, "pre_state");
            ra_json_string(j, behaviour_name(ch->pre_state));
            ra_json_key(j, "post_state");
            ra_json_string(j, behaviour_name(ch->post_state));
            json_vec_keys(j, "position", ch->position, ch->position_count);
            ra_json_key(j, "rotation");
            ra_json_begin_array(j);
            for (size_t k = 0; k < ch->rotation_count; k++) {
                ra_json_begin_array(j);
                ra_json_number(j, ch->rotation[k].t);
                ra_json_number(j, ch->rotation[k].q.w);
                ra_json_number(j, ch->rotation[k].q.x);
                ra_json_number(j, ch->rotation[k].q.y);
                ra_json_number(j, ch->rotation[k].q.z);
                ra_json_end_array(j);
            }
            ra_json_end_array(j);
            json_vec_keys(j, "scaling", ch->scaling, ch->scaling_count);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    if (s->mesh_count || s->material_count || s->texture_count) dump_geometry(s, j);
    ra_json_key(j, "metadata");
    ra_meta_dump_json(j, &s->meta);
    ra_json_key(j, "node_metadata");
    ra_json_begin_object(j);
    for (size_t i = 0; i < s->node_count; i++) {
        if (!s->nodes[i].meta.count) continue;
        ra_json_key(j, s->nodes[i].name);
        ra_meta_dump_json(j, &s->nodes[i].meta);
    }
    ra_json_end_object(j);
    ra_json_key(j, "warnings");
    ra_json_begin_array(j);
    for (size_t i = 0; i < s->warning_count; i++) ra_json_string(j, s->warnings[i].msg);
    ra_json_end_array(j);
    ra_json_end_object(j);
}

bool ra_names_make_unique(ra_arena *ar, const char **names, size_t n, const char *const *reserved, size_t nreserved)
{
    ra_strmap used;
    if (!ra_strmap_init(&used, ar, n + nreserved)) return false;
    for (size_t r = 0; r < nreserved; r++) {
        uint32_t *u = ra_strmap_slot(&used, reserved[r]);
        if (!u) return false;
        *u = 1; /* taken: a name equal to it gets "#2" */
    }
    for (size_t i = 0; i < n; i++) {
        /* bounded search: many names may start inside one long string */
        if (strnlen(names[i], RA_NAME_MAX + 1) > RA_NAME_MAX) {
            names[i] = ra_arena_strndup(ar, names[i], RA_NAME_MAX);
            if (!names[i]) return false;
        }
        const char *cand = names[i];
        for (;;) {
            uint32_t *u = ra_strmap_slot(&used, cand);
            if (!u) return false;
            if (*u == 0) {
                *u = 1;
                break;
            }
            /* the value kept on a used base name is the next suffix to try
             * (looked up afresh: a slot pointer dies when the map grows) */
            uint32_t *next = ra_strmap_slot(&used, names[i]);
            if (!next) return false;
            uint32_t k = *next < 2 ? 2 : *next;
            *next = k + 1;
            cand = ra_arena_printf(ar, "%s#%u", names[i], k);
            if (!cand) return false;
        }
        names[i] = cand;
    }
    return true;
}
