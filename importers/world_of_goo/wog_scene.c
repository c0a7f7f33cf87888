/* World of Goo semantics: the playback rules of docs/formats/world_of_goo.md
 * §4 (pose) and the scene built from them (to_scene, §5 and §7).
 *
 *  - A channel's keys are its non-null slots; key i governs the segment to
 *    the next key: LINEAR interpolates, NONE holds.  Before the first key the
 *    first value holds, after the last key the last value; of two keys at the
 *    same time the later one wins at that instant.
 *  - Transform entries compose in list order (entry 0 applied first, so the
 *    shipped [SCALE, ROTATE, TRANSLATE] gives T.R.S); the option
 *    transform_order=reverse takes the other reading.
 *  - A standalone animation loops with the period of its last frame time; a
 *    movie actor whose animation is shorter than the movie loops inside it.
 *  - The 2D plane is the scene's XY plane, y as stored (flip_y=true mirrors
 *    it), angles in degrees, counter-clockwise positive.
 * A node takes transform entries only while they follow Assimp's S, R, T
 * order; a list that does not (a repeated type, or another order) becomes a
 * chain of nodes, each exact. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "retroanim/wog.h"
#include "retroanim/ra_parallel.h"

#define FMT_ANIM "wog_anim"
#define FMT_MOVIE "wog_movie"

/* the keyed slots of one channel, in slot order.  A channel keyed in every
 * slot (the usual case) is the model's own arrays; another takes 8 bytes a
 * key (a large movie holds a million of them while its scene is baked). */
typedef struct ktrack {
    uint32_t n;
    const float *t;           /* the slot's frame time, as stored */
    const int32_t *k;         /* its keyframe: an index into keys (>= 0) */
    const wog_keyframe *keys; /* the animation's */
} ktrack;

/* key i's time (in double, as every computation with it) and keyframe */
static inline double kt(const ktrack *tr, size_t i) { return tr->t[i]; }
static inline const wog_keyframe *kf(const ktrack *tr, size_t i) { return &tr->keys[(uint32_t)tr->k[i]]; }

/* How an animation's time runs: a standalone animation loops after its
 * period (the scene's duration is one period); a movie actor shorter than
 * the movie starts over at each period; a movie actor as long as the movie
 * (or longer) plays once. */
enum {
    LOOP_NONE,
    LOOP_AFTER,
    LOOP_ALWAYS
};

/* one scene node's share of an animation */
typedef struct wpart {
    const wog_anim *a;     /* NULL: the root */
    const ktrack *tracks;  /* per transform entry of a */
    const uint32_t *order; /* transform entries in application order */
    uint32_t first, count; /* this node's entries: order[first .. first+count) */
    double period;         /* loop period (the last frame time) */
    int loop;              /* LOOP_* */
} wpart;

typedef struct wog_state {
    wpart *part; /* per scene node */
    bool flip_y;
    double length; /* the animation's duration */
} wog_state;

const wog_file *wog_document_file(const ra_document *doc)
{
    if (!doc || !doc->format || strncmp(doc->format->id, "wog_", 4) != 0) return NULL;
    return doc->model;
}

/* ---- the engine's rules --------------------------------------------------------------------------------- */
/* index of the key governing tau: the last key with time <= tau (-1 before
 * the first).  hint (may be NULL) keeps the last answer + 1: the baker
 * samples mostly in time order, so it or the next is usually right. */
static int64_t find_key(const ktrack *tr, double tau, uint32_t *hint)
{
    for (uint32_t lo = hint ? *hint : 0, k = 0; hint && k < 2 && lo <= tr->n; k++, lo++)
        if ((lo == 0 || kt(tr, lo - 1) <= tau) && (lo == tr->n || !(kt(tr, lo) <= tau))) {
            *hint = lo;
            return (int64_t)lo - 1;
        }
    uint32_t lo = 0, hi = tr->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (kt(tr, mid) <= tau) lo = mid + 1;
        else hi = mid;
    }
    if (hint) *hint = lo;
    return (int64_t)lo - 1;
}

/* The channel's value at tau: v[0..1] = x, y (scale, translate) or v[0] = angle / alpha. */
static void chan_value(const ktrack *tr, int what, double tau, double v[2], uint32_t *hint)
{
#define VAL(key, o)                                                                                                    \
    do {                                                                                                               \
        if (what == WOG_XFORM_ROTATE) (o)[0] = (key)->angle, (o)[1] = 0;                                               \
        else if (what == 3) (o)[0] = (key)->alpha, (o)[1] = 0;                                                         \
        else (o)[0] = (key)->x, (o)[1] = (key)->y;                                                                     \
    } while (0)
    v[0] = v[1] = 0;
    if (!tr->n) return;
    int64_t found = find_key(tr, tau, hint);
    size_t i = found < 0 ? 0 : (size_t)found;
    VAL(kf(tr, i), v);
    if (i + 1 >= tr->n || kf(tr, i)->interpolation != WOG_INTERP_LINEAR || tau <= kt(tr, i)) return;
    double w[2], f = (tau - kt(tr, i)) / (kt(tr, i + 1) - kt(tr, i));
    VAL(kf(tr, i + 1), w);
    v[0] += (w[0] - v[0]) * f;
    v[1] += (w[1] - v[1]) * f;
#undef VAL
}

static double local_time(const wpart *p, double t)
{
    if (!(p->period > 0)) return t;
    switch (p->loop) {
    case LOOP_AFTER: return t > p->period ? fmod(t, p->period) : t;
    case LOOP_ALWAYS: return t >= p->period ? fmod(t, p->period) : t;
    default: return t;
    }
}

/* One transform entry as a matrix (column vectors), y mirrored when flip. */
static ra_mat4 entry_matrix(const wpart *p, uint32_t e, double tau, bool flip)
{
    ra_mat4 m = ra_m4_identity();
    if (!p->tracks[e].n) return m;
    double v[2];
    int type = p->a->transform_types[e];
    chan_value(&p->tracks[e], type, tau, v, NULL);
    if (type == WOG_XFORM_SCALE) {
        m.m[0][0] = v[0], m.m[1][1] = v[1];
    } else if (type == WOG_XFORM_ROTATE) {
        double r = v[0] * RA_PI / 180.0 * (flip ? -1 : 1), c = cos(r), s = sin(r);
        m.m[0][0] = c, m.m[0][1] = -s, m.m[1][0] = s, m.m[1][1] = c;
    } else {
        m.m[0][3] = v[0], m.m[1][3] = flip ? -v[1] : v[1];
    }
    return m;
}

/* The part's local matrix by multiplying its entries (the reference). */
static ra_mat4 part_matrix(const wpart *p, double t, bool flip)
{
    ra_mat4 m = ra_m4_identity();
    if (!p->a) return m;
    double tau = local_time(p, t);
    for (uint32_t i = 0; i < p->count; i++) {
        ra_mat4 x = entry_matrix(p, p->order[p->first + i], tau, flip);
        m = ra_m4_mul(&x, &m);
    }
    return m;
}

static ra_status wog_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    (void)anim;
    (void)err;
    const wog_state *st = doc->state;
    for (size_t i = 0; i < doc->scene.node_count; i++) {
        ra_mat4 local = part_matrix(&st->part[i], t, st->flip_y);
        int32_t par = doc->scene.nodes[i].parent;
        world[i] = par >= 0 ? ra_m4_mul(&world[par], &local) : local;
    }
    return RA_OK;
}

/* ---- baking --------------------------------------------------------------------------------------------- */
typedef struct bake_ctx {
    const wpart *p;
    bool flip;
    uint32_t *hint; /* per transform entry of the part: find_key's last answer */
} bake_ctx;

/* The same part as T, R, S (its entries are in S, R, T order, at most one of each). */
static ra_trs part_trs(const void *vctx, double t)
{
    const bake_ctx *c = vctx;
    const wpart *p = c->p;
    ra_trs r = {ra_v3(0, 0, 0), ra_q_identity(), ra_v3(1, 1, 1)};
    double tau = local_time(p, t);
    for (uint32_t i = 0; i < p->count; i++) {
        uint32_t e = p->order[p->first + i];
        if (!p->tracks[e].n) continue;
        double v[2];
        int type = p->a->transform_types[e];
        chan_value(&p->tracks[e], type, tau, v, &c->hint[i]);
        if (type == WOG_XFORM_SCALE) {
            r.s = ra_v3(v[0], v[1], 1);
        } else if (type == WOG_XFORM_ROTATE) {
            double half = v[0] * RA_PI / 360.0 * (c->flip ? -1 : 1);
            r.r = ra_q(cos(half), 0, 0, sin(half));
        } else {
            r.t = ra_v3(v[0], c->flip ? -v[1] : v[1], 0);
        }
    }
    return r;
}

/* The local times tau0 <= tau1 of the times t0 < t1, where the part's
 * local time moves with the time between them (no loop wrap, not held);
 * false otherwise. */
static bool local_follows(const wpart *p, double t0, double t1, double *tau0, double *tau1)
{
    *tau0 = local_time(p, t0), *tau1 = local_time(p, t1);
    return *tau1 >= *tau0 && fabs((*tau1 - *tau0) - (t1 - t0)) <= 1e-9 * (1 + fabs(t1));
}

/* Does key interval k (-1: the hold before the first key) end on the value
 * of key k + 1: interpolated into it, or the first key's value held? */
static bool reaches_next(const ktrack *tr, int64_t k)
{
    return k < 0 || kf(tr, (size_t)k)->interpolation == WOG_INTERP_LINEAR;
}

/* ra_bake_params.span_pieces: between two samples inside one key interval
 * of every track of the part (no loop wrap between them), its translation
 * and scale are linear in time, which playback reproduces exactly, and its
 * rotation turns about Z at a constant rate, which slerp reproduces exactly
 * over pieces shorter than half a turn: pieces of at most half of
 * max_key_angle.  Anything else (a key or a wrap inside): 0, verified. */
static uint32_t part_span_pieces(const void *vctx, double t0, double t1, const ra_bake_params *bp, bool *linear_ts)
{
    const bake_ctx *c = vctx;
    const wpart *p = c->p;
    double tau0, tau1;
    if (!local_follows(p, t0, t1, &tau0, &tau1)) return 0;
    double turn = 0; /* degrees */
    for (uint32_t i = 0; i < p->count; i++) {
        uint32_t e = p->order[p->first + i];
        const ktrack *tr = &p->tracks[e];
        if (!tr->n) continue;
        int64_t k0 = find_key(tr, tau0, &c->hint[i]), k1 = find_key(tr, tau1, &c->hint[i]);
        /* a span ending on a key (after a breakpoint part_continuous found
         * smooth) ends the interval before it where that interval's value
         * reaches the key's: interpolated into it, or the first key held */
        if (k1 == k0 + 1 && kt(tr, (size_t)k1) == tau1 && reaches_next(tr, k0)) k1 = k0;
        if (k0 != k1) return 0;
        if (p->a->transform_types[e] != WOG_XFORM_ROTATE || k0 < 0 || (uint64_t)k0 + 1 >= tr->n) continue;
        size_t k = (size_t)k0;
        if (kf(tr, k)->interpolation != WOG_INTERP_LINEAR || !(kt(tr, k + 1) > kt(tr, k))) continue;
        turn = fabs((double)kf(tr, k + 1)->angle - kf(tr, k)->angle) * (tau1 - tau0) / (kt(tr, k + 1) - kt(tr, k));
    }
    double n = ceil(turn * RA_PI / 180.0 / (0.5 * bp->max_key_angle));
    if (!(n >= 1)) n = 1;
    *linear_ts = true;
    return n <= 65536 ? (uint32_t)n : 0;
}

/* ra_bake_params.continuous_at: the part is continuous at t where its
 * loop neither wraps nor holds within two step epsilons either side (the
 * local time moves with the time) and, on every track, that stretch stays
 * in one key interval (or before the first key, whose value holds there)
 * or crosses one key into which it is interpolated linearly (or the first
 * key, from its held value): a key whose interval is not interpolated (a
 * hold, then the jump) or two keys at one time keep the samples at t - eps
 * and t + eps. */
static bool part_continuous(const void *vctx, double t)
{
    const bake_ctx *c = vctx;
    const wpart *p = c->p;
    double e = 2 * ra_step_epsilon(t), tau0, tau1;
    if (!local_follows(p, t - e, t + e, &tau0, &tau1)) return false; /* a wrap, or held */
    for (uint32_t i = 0; i < p->count; i++) {
        const ktrack *tr = &p->tracks[p->order[p->first + i]];
        if (!tr->n) continue;
        int64_t k0 = find_key(tr, tau0, &c->hint[i]), k1 = find_key(tr, tau1, &c->hint[i]);
        if (k1 != k0 && !(k1 == k0 + 1 && reaches_next(tr, k0))) return false;
    }
    return true;
}

/* Most breakpoints one load bakes, over all its nodes (short loops inside a
 * long movie, spins of many turns, many actors sharing one animation): this
 * many, plus one per 4 bytes of the file (a keyed frame takes at least its
 * 4-byte frame time), so that large valid files are never refused. */
#define WOG_MAX_BREAKS (1u << 19)
static double break_budget(const ra_document *doc) { return (double)WOG_MAX_BREAKS + (double)doc->source_size / 4; }

/* A part's breakpoint count against the load's budget (in node order, so the
 * budget runs out where one thread baking in order would find it). */
static ra_status part_budget(const ra_document *doc, const wpart *p, double duration, double max_key_angle,
                             double *budget, ra_error *err)
{
    double reps = 1;
    if (p->loop == LOOP_ALWAYS && p->period > 0) reps = ceil(duration / p->period);
    const double step = fmin(90.0, max_key_angle * 180.0 / RA_PI);
    double per = 1;
    for (uint32_t i = 0; i < p->count; i++) {
        uint32_t e = p->order[p->first + i];
        const ktrack *tr = &p->tracks[e];
        per += tr->n;
        for (uint32_t k = 0; p->a->transform_types[e] == WOG_XFORM_ROTATE && k + 1 < tr->n; k++)
            if (kf(tr, k)->interpolation == WOG_INTERP_LINEAR)
                per += ceil(fabs((double)kf(tr, k + 1)->angle - kf(tr, k)->angle) / step);
    }
    if (reps * per > *budget)
        return ra_fail(err, RA_ERR_LIMIT, doc->format->id, RA_NO_OFFSET, "",
                       "more than %.0f keys to bake (spins of many turns, or an animation of %.9g s looping %.0f "
                       "times in the movie's %.9g s)",
                       break_budget(doc), p->period, reps, duration);
    *budget -= reps * per;
    return RA_OK;
}

/* A part's channel (a job of ra_parallel_for: w's arena and samples). */
static ra_status bake_part(const ra_document *doc, const wpart *p, bool flip, double duration, double max_key_angle,
                           ra_channel *ch, bool *cut, ra_worker *w, ra_error *err)
{
    const char *fmt = doc->format->id;
    ra_breaks b = {0};
    double reps = 1;
    if (p->loop == LOOP_ALWAYS && p->period > 0) reps = ceil(duration / p->period);
    /* A long spin is cut into pieces of at most `step` degrees up front:
     * sampling alone cannot see whole turns between two samples. */
    const double step = fmin(90.0, max_key_angle * 180.0 / RA_PI);
    bool ok = true, past = false;
    for (double r = 0; r < reps && ok; r++) {
        double off = r * p->period;
        if (r > 0) ok = ra_breaks_push(&b, off); /* the wrap back to the start */
        for (uint32_t i = 0; i < p->count && ok; i++) {
            uint32_t e = p->order[p->first + i];
            const ktrack *tr = &p->tracks[e];
            for (uint32_t k = 0; k < tr->n && ok; k++) {
                double t = off + kt(tr, k);
                if (t > duration) {
                    past = true;
                    continue;
                }
                ok = ra_breaks_push(&b, t);
                if (p->a->transform_types[e] != WOG_XFORM_ROTATE || k + 1 >= tr->n ||
                    kf(tr, k)->interpolation != WOG_INTERP_LINEAR)
                    continue;
                double n = ceil(fabs((double)kf(tr, k + 1)->angle - kf(tr, k)->angle) / step);
                for (double m = 1; m < n && ok; m++) {
                    double tm = t + (kt(tr, k + 1) - kt(tr, k)) * m / n;
                    if (tm <= duration) ok = ra_breaks_push(&b, tm);
                }
            }
        }
    }
    if (ok && past) ok = ra_breaks_push(&b, duration);
    *cut = past && p->loop != LOOP_ALWAYS; /* a loop ending mid-period is no cut */
    if (!ok || !ra_breaks_sort(&b)) {
        ra_free(b.v);
        return ra_fail_nomem(err, fmt);
    }
    ra_bake_params bp;
    ra_bake_params_default(&bp);
    bp.max_key_angle = max_key_angle;
    bp.samples_left = &w->samples_left;
    bp.max_samples = ra_document_max_samples(doc);
    bp.format = fmt;
    bp.span_pieces = part_span_pieces;
    bp.continuous_at = part_continuous;
    bake_ctx ctx = {p, flip, ra_calloc(p->count ? p->count : 1, sizeof(uint32_t))};
    if (!ctx.hint) {
        ra_free(b.v);
        return ra_fail_nomem(err, fmt);
    }
    ra_status rs = ra_bake_channel(w->arena, part_trs, &ctx, b.v, b.n, &bp, ch, err);
    ra_free(ctx.hint);
    ra_free(b.v);
    return rs;
}

/* ---- nodes and channels ----------------------------------------------------------------------------------- */
/* one animated thing: the standalone animation or one actor */
typedef struct group {
    const wog_anim *a;
    uint32_t actor; /* movie: its index in the file */
    const char *name;
    ktrack *tracks; /* per transform entry */
    ktrack alpha, color, sound;
    uint32_t *order, norder; /* keyed transform entries in application order */
    uint32_t runs;           /* nodes the entries need (at least 1) */
    double period;
    int loop;
    int32_t same;         /* an earlier group with the same animation (its model and keys are shared), or -1 */
    size_t first_channel; /* its channels: first_channel .. + runs */
    const char *meta[3];  /* alpha, colour, sound key lists */
    size_t meta_len[3];   /* their bytes */
} group;

static bool make_track(ra_arena *ar, const wog_anim *a, const wog_frames *f, ktrack *tr)
{
    memset(tr, 0, sizeof *tr);
    if (!f->slot) return true;
    tr->keys = a->keys;
    for (uint32_t j = 0; j < a->num_frames; j++) tr->n += f->slot[j] >= 0;
    if (tr->n == a->num_frames) {
        tr->t = a->frame_times;
        tr->k = f->slot;
        return true;
    }
    float *t = ra_arena_array(ar, tr->n, sizeof *t);
    int32_t *k = ra_arena_array(ar, tr->n, sizeof *k);
    if (!t || !k) return false;
    uint32_t o = 0;
    for (uint32_t j = 0; j < a->num_frames; j++)
        if (f->slot[j] >= 0) {
            t[o] = a->frame_times[j];
            k[o++] = f->slot[j];
        }
    tr->t = t;
    tr->k = k;
    return true;
}

/* keys whose nextFrameIndex is not the next keyed slot (the chain disagrees with the slots) */
static size_t chain_mismatches(const wog_anim *a, const wog_frames *f)
{
    size_t bad = 0;
    if (!f->slot) return 0;
    int64_t prev = -1;
    for (uint32_t j = 0; j <= a->num_frames; j++) {
        if (j < a->num_frames && f->slot[j] < 0) continue;
        if (prev >= 0 && a->keys[f->slot[prev]].next_frame_index != (j < a->num_frames ? (int32_t)j : -1)) bad++;
        prev = j;
    }
    return bad;
}

static ra_status make_group(ra_document *doc, const wog_anim *a, bool reverse, group *g, size_t *mismatch)
{
    ra_arena *ar = doc->arena;
    uint32_t nt = a->xform ? a->num_transforms : 0;
    g->tracks = ra_arena_array(ar, nt, sizeof *g->tracks);
    g->order = ra_arena_array(ar, nt, sizeof *g->order);
    if (!g->tracks || !g->order) return RA_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < nt; i++) {
        if (!make_track(ar, a, &a->xform[i], &g->tracks[i])) return RA_ERR_NO_MEMORY;
        *mismatch += chain_mismatches(a, &a->xform[i]);
    }
    if (!make_track(ar, a, &a->alpha, &g->alpha) || !make_track(ar, a, &a->color, &g->color) ||
        !make_track(ar, a, &a->sound, &g->sound))
        return RA_ERR_NO_MEMORY;
    *mismatch += chain_mismatches(a, &a->alpha) + chain_mismatches(a, &a->color) + chain_mismatches(a, &a->sound);
    g->norder = 0;
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t e = reverse ? nt - 1 - i : i;
        if (g->tracks[e].n) g->order[g->norder++] = e; /* an entry without keys is the identity */
    }
    /* runs of strictly increasing type (S < R < T): one node each */
    g->runs = 1;
    for (uint32_t i = 1; i < g->norder; i++)
        if (a->transform_types[g->order[i]] <= a->transform_types[g->order[i - 1]]) g->runs++;
    g->period = a->frame_times[a->num_frames - 1];
    return RA_OK;
}

/* Most metadata text the key lists of one load may take (aliasing slots can
 * name one long sound id many times): this much plus 8 bytes per byte of the
 * file (a listed key costs at least 4 bytes of the file and at most about 30
 * characters of text). */
#define WOG_MAX_META ((size_t)16 << 20)
static size_t meta_budget(const ra_document *doc)
{
    return WOG_MAX_META + (doc->source_size < SIZE_MAX / 16 ? 8 * doc->source_size : SIZE_MAX / 2);
}

/* One channel's key list as JSON text in ar, *len its bytes, charged to
 * *left; NULL when out of memory, or with *too_big when it is more than
 * *left. */
static const char *json_keys(ra_arena *ar, const ktrack *tr, int what, const uint8_t *strings, uint32_t strings_size,
                             size_t *left, bool *too_big, size_t *len)
{
    ra_writer w;
    ra_writer_init(&w);
    ra_json j;
    ra_json_init_buffer(&j, &w, false);
    ra_json_begin_array(&j);
    for (uint32_t i = 0; i < tr->n; i++) {
        if (w.size > *left) {
            *too_big = true;
            break;
        }
        const wog_keyframe *k = kf(tr, i);
        if (what == 5) {
            const char *s = wog_string(strings, strings_size, k->sound_str_idx);
            ra_json_begin_array(&j);
            ra_json_number(&j, kt(tr, i));
            ra_json_string(&j, s ? s : "");
            ra_json_end_array(&j);
            continue;
        }
        /* [time, alpha or "0x%08X" colour, "linear" or "none"], composed
         * here and written at once: the lists of a movie have a key per
         * frame and actor, and the writer's per-token calls were most of
         * their cost */
        char b[2 * RA_JSON_NUMBER_MAX + 32];
        size_t n = 0;
        b[n++] = '[';
        n += ra_json_number_text(kt(tr, i), b + n);
        b[n++] = ',';
        if (what == 3) {
            n += ra_json_int_text(k->alpha, b + n);
        } else {
            static const char digit[] = "0123456789ABCDEF";
            memcpy(b + n, "\"0x", 3), n += 3;
            for (int d = 28; d >= 0; d -= 4) b[n++] = digit[(uint32_t)k->color >> d & 15u];
            b[n++] = '"';
        }
        const char *interp = k->interpolation == WOG_INTERP_LINEAR ? ",\"linear\"]" : ",\"none\"]";
        size_t li = strlen(interp);
        memcpy(b + n, interp, li), n += li;
        ra_json_raw_n(&j, b, n);
    }
    ra_json_end_array(&j);
    if (w.size > *left) *too_big = true; /* the last entry may have crossed it */
    const char *s = w.failed || *too_big ? NULL : ra_arena_strndup(ar, (const char *)w.data, w.size);
    if (s) *left -= w.size, *len = w.size;
    ra_writer_free(&w);
    return s;
}

/* group g's key list c (0 alpha, 1 colour, 2 sound), and its text (json_keys) */
static const ktrack *list_track(const group *g, int c) { return c == 0 ? &g->alpha : c == 1 ? &g->color : &g->sound; }
static const char *list_json(ra_arena *ar, const group *g, int c, size_t *left, bool *too_big, size_t *len)
{
    return json_keys(ar, list_track(g, c), 3 + c, g->a->strings, g->a->strings_size, left, too_big, len);
}

/* the key lists as node metadata (groups sharing an animation share the text) */
static ra_status set_keys_meta(ra_document *doc, ra_meta_list *md, group *g, const group *same, size_t *left,
                               ra_error *err)
{
    ra_arena *ar = doc->arena;
    static const char *const key[3] = {"wog.alpha", "wog.color", "wog.sound"};
    for (int c = 0; c < 3; c++) {
        if (!list_track(g, c)->n) continue;
        bool too_big = false;
        if (same) g->meta[c] = same->meta[c];
        else if (g->meta[c] && g->meta_len[c] <= *left) *left -= g->meta_len[c]; /* made on the threads */
        else if (g->meta[c]) too_big = true;
        else g->meta[c] = list_json(ar, g, c, left, &too_big, &g->meta_len[c]);
        if (too_big)
            return ra_fail(err, RA_ERR_LIMIT, doc->format->id, RA_NO_OFFSET, key[c],
                           "the alpha, colour and sound key lists exceed %zu MiB of metadata", meta_budget(doc) >> 20);
        if (!g->meta[c] || !ra_meta_set_string_ref(ar, md, key[c], g->meta[c]))
            return ra_fail_nomem(err, doc->format->id);
    }
    return ra_meta_set_double(ar, md, "wog.period", g->period) ? RA_OK : ra_fail_nomem(err, doc->format->id);
}

static const char *actor_string(const wog_movie *m, int32_t idx)
{
    const char *s = wog_string(m->strings, m->strings_size, idx);
    return s ? s : "";
}

static bool set_actor_meta(ra_arena *ar, ra_meta_list *md, const wog_movie *m, uint32_t i)
{
    const wog_actor *a = &m->actors[i];
    static const char *const just[3] = {"left", "center", "right"};
    char jbuf[16];
    const char *js = a->justification >= 0 && a->justification < 3 ? just[a->justification] : NULL;
    if (!js) snprintf(jbuf, sizeof jbuf, "%d", a->justification), js = jbuf;
    /* only the fields of the actor's type: 2D Boy leaves the others at index 0, the empty string, the
     * Python exporter at 0 too, which is its first string */
    const bool text = a->type == WOG_ACTOR_TEXT;
    return ra_meta_set_int(ar, md, "wog.actor", i) &&
           ra_meta_set_string(ar, md, "wog.actorType", text ? "text" : "image") &&
           ra_meta_set_string(ar, md, "wog.image", text ? "" : actor_string(m, a->image_idx)) &&
           ra_meta_set_string(ar, md, "wog.label", text ? actor_string(m, a->label_idx) : "") &&
           ra_meta_set_string(ar, md, "wog.font", text ? actor_string(m, a->font_idx) : "") &&
           ra_meta_set_string(ar, md, "wog.justification", js) &&
           ra_meta_set_double(ar, md, "wog.maxWidth", a->label_max_width) &&
           ra_meta_set_double(ar, md, "wog.wrapWidth", a->label_wrap_width) &&
           ra_meta_set_double(ar, md, "wog.depth", a->depth);
}

typedef struct depth_key {
    float depth;
    uint32_t actor;
} depth_key;

/* by depth, then file order (stable) */
static int cmp_depth(const void *x, const void *y)
{
    const depth_key *a = x, *b = y;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->actor < b->actor ? -1 : a->actor > b->actor;
}

/* the file name without folder and without ".anim.binltl" / ".movie.binuni" ... */
static const char *wog_stem(ra_arena *ar, const char *path, const char *fallback)
{
    const char *s = ra_file_stem(ar, path, fallback);
    if (!s || s == fallback) return s;
    size_t n = strlen(s);
    if (n > 5 && !strcasecmp(s + n - 5, ".anim")) return ra_arena_strndup(ar, s, n - 5);
    if (n > 6 && !strcasecmp(s + n - 6, ".movie")) return ra_arena_strndup(ar, s, n - 6);
    return s;
}

/* What the steps of wog_to_scene share. */
typedef struct wog_build {
    ra_document *doc;
    const wog_file *f;
    ra_scene *s;
    ra_arena *ar;
    const char *fmt;
    wog_state *st;
    bool reverse, flip; /* transform_order=reverse, flip_y */
    ra_scene_start start;
    group *g; /* the animation, or the movie's actors by depth */
    uint32_t ng;
    const char *stem;
    size_t nodes, mismatch, chains;
    const char **names; /* scene node names, RootNode first */
    bool any_cut;
    /* the channels to bake (node's part, channel, cut flag) and the channels
     * that share an earlier one's keys, filled in node order */
    struct part_job *jobs;
    size_t njobs;
    uint32_t *share; /* pairs: channel, the channel whose keys it takes */
    size_t nshare;
} wog_build;

typedef struct part_job {
    const wpart *p;
    ra_channel *ch;
    bool cut;
} part_job;

/* The groups: the animation, or the actors by depth; groups playing the same
 * animation share its tracks. */
static ra_status wog_groups(wog_build *b, ra_error *err)
{
    const wog_file *f = b->f;
    ra_arena *ar = b->ar;
    group *g = b->g = ra_arena_array(ar, b->ng, sizeof *g);
    if (!g) return ra_fail_nomem(err, b->fmt);
    if (f->is_movie) {
        depth_key *idx = ra_arena_array(ar, b->ng, sizeof *idx);
        if (!idx) return ra_fail_nomem(err, b->fmt);
        for (uint32_t i = 0; i < b->ng; i++) idx[i] = (depth_key){f->movie.actors[i].depth, i};
        if (b->ng) qsort(idx, b->ng, sizeof *idx, cmp_depth);
        b->st->length = f->movie.length;
        for (uint32_t i = 0; i < b->ng; i++) {
            uint32_t a = idx[i].actor;
            const wog_actor *ac = &f->movie.actors[a];
            const char *id = actor_string(&f->movie, ac->type == WOG_ACTOR_TEXT ? ac->label_idx : ac->image_idx);
            if (ac->type == WOG_ACTOR_TEXT && id[0] == '$') id++;
            g[i].a = &f->movie.anims[a];
            g[i].actor = a;
            g[i].name = *id ? ra_arena_printf(ar, "actor%02u_%s", a, id) : ra_arena_printf(ar, "actor%02u", a);
            if (!g[i].name) return ra_fail_nomem(err, b->fmt);
        }
    } else {
        g[0].a = &f->anim;
        g[0].name = b->stem;
    }
    b->nodes = 1;
    ra_strmap seen; /* an animation's offset -> the first group playing it + 1 */
    if (!ra_strmap_init(&seen, ar, b->ng)) return ra_fail_nomem(err, b->fmt);
    for (uint32_t i = 0; i < b->ng; i++) {
        g[i].same = -1;
        char *key = ra_arena_printf(ar, "%llu", (unsigned long long)g[i].a->offset);
        uint32_t *slot = key ? ra_strmap_slot(&seen, key) : NULL;
        if (!slot) return ra_fail_nomem(err, b->fmt);
        if (*slot) {
            const group *first = &g[*slot - 1];
            g[i].same = (int32_t)(*slot - 1);
            g[i].tracks = first->tracks, g[i].alpha = first->alpha, g[i].color = first->color;
            g[i].sound = first->sound, g[i].order = first->order, g[i].norder = first->norder;
            g[i].runs = first->runs, g[i].period = first->period;
        } else {
            *slot = i + 1;
            if (make_group(b->doc, g[i].a, b->reverse, &g[i], &b->mismatch) != RA_OK) return ra_fail_nomem(err, b->fmt);
        }
        if (!f->is_movie) b->st->length = g[i].period, g[i].loop = LOOP_AFTER;
        else g[i].loop = g[i].period > 0 && g[i].period < f->movie.length ? LOOP_ALWAYS : LOOP_NONE;
        b->nodes += g[i].runs;
    }
    return RA_OK;
}

/* Node names: helpers "<name>_part<k>" above the node that carries the name. */
static ra_status wog_names(wog_build *b, ra_error *err)
{
    const char **names = b->names = ra_arena_array(b->ar, b->nodes, sizeof *names);
    b->st->part = ra_arena_array(b->ar, b->nodes, sizeof *b->st->part);
    if (!names || !b->st->part) return ra_fail_nomem(err, b->fmt);
    names[0] = "RootNode";
    size_t ni = 1;
    for (uint32_t i = 0; i < b->ng; i++)
        for (uint32_t r = b->g[i].runs; r-- > 0;) {
            names[ni] = r ? ra_arena_printf(b->ar, "%s_part%u", b->g[i].name, r) : b->g[i].name;
            if (!names[ni++]) return ra_fail_nomem(err, b->fmt);
        }
    static const char *const reserved[] = {"RootNode"};
    return ra_names_make_unique(b->ar, names + 1, b->nodes - 1, reserved, 1) ? RA_OK : ra_fail_nomem(err, b->fmt);
}

/* The alpha, colour and sound key lists of the groups that do not share an
 * earlier one's, made on the load's threads before the nodes: set_keys_meta
 * then takes them in order and charges the budget as one thread would.  A
 * list not made here (the lists made so far passed the budget, or it alone
 * did) is made there, on one thread, which reports it as it always did. */
typedef struct meta_pass {
    group *g;
    uint32_t *job; /* group * 3 + channel */
    size_t budget;
    atomic_size_t used;
    const char *fmt;
} meta_pass;

static ra_status meta_job(void *ctx, size_t j, ra_worker *w, ra_error *err)
{
    meta_pass *mp = ctx;
    group *g = &mp->g[mp->job[j] / 3];
    int c = (int)(mp->job[j] % 3);
    if (atomic_load_explicit(&mp->used, memory_order_relaxed) > mp->budget) return RA_OK;
    size_t left = mp->budget;
    bool too_big = false;
    g->meta[c] = list_json(w->arena, g, c, &left, &too_big, &g->meta_len[c]);
    if (!g->meta[c] && !too_big) return ra_fail_nomem(err, mp->fmt);
    if (g->meta[c]) atomic_fetch_add_explicit(&mp->used, g->meta_len[c], memory_order_relaxed);
    return RA_OK;
}

static ra_status wog_meta_lists(wog_build *b, ra_error *err)
{
    double work = 0;
    size_t n = 0;
    for (uint32_t i = 0; i < b->ng; i++)
        if (b->g[i].same < 0) work += (double)b->g[i].alpha.n + b->g[i].color.n + b->g[i].sound.n;
    unsigned threads = ra_document_threads(b->doc, work);
    if (threads <= 1) return RA_OK;
    meta_pass mp = {.g = b->g, .budget = meta_budget(b->doc), .fmt = b->fmt};
    atomic_init(&mp.used, 0);
    if (!(mp.job = ra_malloc(3 * (size_t)b->ng * sizeof *mp.job))) return ra_fail_nomem(err, b->fmt);
    for (uint32_t i = 0; i < b->ng; i++)
        for (int c = 0; c < 3 && b->g[i].same < 0; c++)
            if (list_track(&b->g[i], c)->n) mp.job[n++] = 3 * i + (uint32_t)c;
    ra_status rs = ra_parallel_for(b->doc, threads, n, meta_job, &mp, NULL, err);
    ra_free(mp.job);
    return rs;
}

/* Group i's nodes (one per run of its transform list, outermost first) and
 * their channels; *ni is the index of the next name. */
static ra_status wog_group_nodes(wog_build *b, uint32_t i, ra_animation *an, size_t *ni, double *budget,
                                 size_t *meta_left, ra_error *err)
{
    group *gi = &b->g[i];
    gi->first_channel = an->channel_count;
    const group *same = gi->same >= 0 ? &b->g[gi->same] : NULL;
    /* split the application order into the runs, outermost (applied last) first */
    uint32_t *cuts = ra_arena_array(b->ar, gi->runs + 1, sizeof *cuts);
    if (!cuts) return ra_fail_nomem(err, b->fmt);
    uint32_t nc = 0;
    cuts[nc++] = 0;
    for (uint32_t k = 1; k < gi->norder; k++)
        if (gi->a->transform_types[gi->order[k]] <= gi->a->transform_types[gi->order[k - 1]]) cuts[nc++] = k;
    cuts[nc] = gi->norder;
    if (gi->runs > 1) b->chains++;
    int32_t parent = 0;
    ra_mat4 id = ra_m4_identity();
    for (uint32_t r = gi->runs; r-- > 0;) {
        int32_t node = ra_scene_add_node(b->s, b->names[(*ni)++], parent, &id);
        if (node < 0) return ra_fail_nomem(err, b->fmt);
        wpart *p = &b->st->part[node];
        *p = (wpart){.a = gi->a,
                     .tracks = gi->tracks,
                     .order = gi->order,
                     .first = cuts[r],
                     .count = cuts[r + 1] - cuts[r],
                     .period = gi->period,
                     .loop = gi->loop};
        ra_channel *ch = &an->channels[an->channel_count++];
        ch->node = (uint32_t)node;
        ch->pre_state = ch->post_state = gi->loop != LOOP_NONE ? RA_BEHAVIOUR_REPEAT : RA_BEHAVIOUR_CONSTANT;
        if (same) {
            /* the same animation with the same timing: the same keys (taken once baked) */
            b->share[2 * b->nshare] = (uint32_t)(an->channel_count - 1);
            b->share[2 * b->nshare + 1] = (uint32_t)(same->first_channel + (gi->runs - 1 - r));
            b->nshare++;
        } else {
            ra_status rs = part_budget(b->doc, p, b->st->length, b->start.max_key_angle, budget, err);
            if (rs != RA_OK) return rs;
            b->jobs[b->njobs++] = (part_job){p, ch, false};
        }
        if (r == 0) {
            ra_meta_list *md = &b->s->nodes[node].meta;
            ra_status rs = set_keys_meta(b->doc, md, gi, same, meta_left, err);
            if (rs != RA_OK) return rs;
            if (b->f->is_movie && !set_actor_meta(b->ar, md, &b->f->movie, gi->actor))
                return ra_fail_nomem(err, b->fmt);
        }
        parent = node;
    }
    return RA_OK;
}

static ra_status part_job_run(void *ctx, size_t j, ra_worker *w, ra_error *err)
{
    const wog_build *b = ctx;
    part_job *pj = &b->jobs[j];
    return bake_part(b->doc, pj->p, b->flip, b->st->length, b->start.max_key_angle, pj->ch, &pj->cut, w, err);
}

/* RootNode, then every group's nodes and channels in one animation. */
static ra_status wog_animation(wog_build *b, ra_error *err)
{
    ra_mat4 id = ra_m4_identity();
    if (ra_scene_add_node(b->s, "RootNode", -1, &id) < 0) return ra_fail_nomem(err, b->fmt);
    ra_animation *an = ra_arena_alloc(b->ar, sizeof *an);
    if (!an || !(an->channels = ra_arena_array(b->ar, b->nodes - 1, sizeof *an->channels)))
        return ra_fail_nomem(err, b->fmt);
    an->name = b->stem;
    an->ticks_per_second = 1.0;
    an->duration = b->st->length;
    size_t ni = 1, meta_left = meta_budget(b->doc);
    double budget = break_budget(b->doc);
    b->jobs = ra_malloc(b->nodes * sizeof *b->jobs);
    b->share = ra_malloc(2 * b->nodes * sizeof *b->share);
    if (!b->jobs || !b->share) return ra_fail_nomem(err, b->fmt);
    /* the nodes in order; a failure stops them after the bakes planned before it */
    ra_status late = wog_meta_lists(b, err);
    if (late != RA_OK) return late;
    ra_error late_err;
    ra_error_clear(&late_err);
    for (uint32_t i = 0; late == RA_OK && i < b->ng; i++)
        late = wog_group_nodes(b, i, an, &ni, &budget, &meta_left, &late_err);
    double work = 0;
    for (size_t j = 0; j < b->njobs; j++)
        for (uint32_t k = 0; k < b->jobs[j].p->count; k++)
            work += b->jobs[j].p->tracks[b->jobs[j].p->order[b->jobs[j].p->first + k]].n;
    ra_status rs = ra_parallel_for_late(b->doc, ra_document_threads(b->doc, work), b->njobs, part_job_run, b,
                                        &b->start.samples_left, late, &late_err, err);
    if (rs != RA_OK) return rs;
    for (size_t j = 0; j < b->njobs; j++) b->any_cut |= b->jobs[j].cut;
    for (size_t k = 0; k < b->nshare; k++)
        ra_channel_share_keys(&an->channels[b->share[2 * k]], &an->channels[b->share[2 * k + 1]]);
    b->s->animations = an;
    b->s->animation_count = an->channel_count ? 1 : 0;
    return RA_OK;
}

/* The layout, the options that shaped the scene, the file's counts, warnings. */
static ra_status wog_metadata(wog_build *b, ra_error *err)
{
    const wog_file *f = b->f;
    ra_arena *ar = b->ar;
    ra_meta_list *md = &b->s->meta;
    char order[16 * 11] = ""; /* WOG_MAX_TRANSFORMS names of at most 10 characters */
    const wog_anim *a0 = f->is_movie ? NULL : &f->anim;
    for (uint32_t i = 0; a0 && a0->transform_types && i < a0->num_transforms; i++) {
        static const char *const tn[3] = {"scale", "rotate", "translate"};
        int t = a0->transform_types[i];
        snprintf(order + strlen(order), sizeof order - strlen(order), "%s%s", i ? "," : "",
                 t >= 0 && t < 3 ? tn[t] : "?");
    }
    ra_status rs = ra_scene_standard_meta(
        b->doc, 1.0,
        b->flip ? "the file's 2D plane as the XY plane, y mirrored (flip_y), Z towards the viewer"
                : "the file's 2D plane as the XY plane, y as stored, Z towards the viewer",
        err);
    if (rs != RA_OK) return rs;
    bool ok = ra_meta_set_string(ar, md, "wog.layout", wog_layout_name(f->layout)) &&
              ra_meta_set_string(ar, md, "wog.transform_order", b->reverse ? "reverse" : "list") &&
              ra_meta_set_bool(ar, md, "wog.flip_y", b->flip);
    if (ok && f->is_movie)
        ok = ra_meta_set_double(ar, md, "wog.length", f->movie.length) &&
             ra_meta_set_int(ar, md, "wog.actors", f->movie.num_actors);
    if (ok && !f->is_movie)
        ok = ra_meta_set_int(ar, md, "wog.frames", f->anim.num_frames) &&
             ra_meta_set_string(ar, md, "wog.transforms", order);
    if (!ok) return ra_fail_nomem(err, b->fmt);
    ra_scene *s = b->s;
    if (b->mismatch)
        ra_scene_warn(s, "%zu key(s) whose nextFrameIndex is not the next keyed slot; playback follows the slots",
                      b->mismatch);
    if (b->any_cut) ra_scene_warn(s, "an actor's animation runs past the movie's length; it is cut there");
    if (b->chains)
        ra_scene_warn(s,
                      "%zu animation(s) whose transform list does not follow scale, rotate, translate: each run of it "
                      "is a node of its own (<name>_part<k> above <name>)",
                      b->chains);
    if (f->is_movie && f->movie.num_actors == 0) ra_scene_warn(s, "the movie has no actors");
    size_t unaligned = f->is_movie ? f->movie.unaligned : 0;
    for (uint32_t i = 0; i < b->ng; i++)
        if (b->g[i].same < 0) unaligned += b->g[i].a->unaligned; /* a shared animation once */
    if (unaligned)
        ra_scene_warn(s,
                      "%zu offset(s) are not a multiple of 4 (2D Boy aligns every structure; the old <-> new "
                      "converter does not): read as they are",
                      unaligned);
    return RA_OK;
}

static ra_status wog_to_scene(ra_document *doc, ra_error *err)
{
    wog_build b;
    memset(&b, 0, sizeof b);
    b.doc = doc;
    b.f = doc->model;
    b.s = &doc->scene;
    b.ar = doc->arena;
    b.fmt = doc->format->id;
    b.reverse = ra_options_is(&doc->options, "transform_order", "reverse");
    b.flip = ra_options_get_bool(&doc->options, "flip_y", false);
    ra_scene_start_init(doc, 150.0, &b.start);
    b.st = doc->state = ra_arena_alloc(b.ar, sizeof *b.st);
    if (!b.st) return ra_fail_nomem(err, b.fmt);
    b.st->flip_y = b.flip;
    b.ng = b.f->is_movie ? b.f->movie.num_actors : 1;
    b.stem = wog_stem(b.ar, doc->filename, b.f->is_movie ? "movie" : "anim");
    if (!b.stem) return ra_fail_nomem(err, b.fmt);
    ra_status rs = wog_groups(&b, err);
    if (rs == RA_OK) rs = wog_names(&b, err);
    if (rs == RA_OK) rs = wog_animation(&b, err);
    ra_free(b.jobs);
    ra_free(b.share);
    if (rs == RA_OK) rs = wog_metadata(&b, err);
    return rs;
}

/* ---- read / write ------------------------------------------------------------------------------------------ */
static int layout_for(const ra_document *doc, const uint8_t *data, size_t size, bool movie, ra_error *err)
{
    const char *fmt = movie ? FMT_MOVIE : FMT_ANIM;
    const char *opt = ra_options_get(&doc->options, "layout");
    if (opt) {
        int l = wog_layout_from_name(opt);
        if (l < 0)
            ra_fail(err, RA_ERR_USAGE, fmt, RA_NO_OFFSET, "layout",
                    "layout must be binltl, binbig, binltl64 or binuni, not '%s'", opt);
        return l;
    }
    int l = wog_sniff_layout(data, size, movie);
    if (l >= 0) return l;
    const char *fn = doc->filename;
    size_t n = fn ? strlen(fn) : 0;
    static const char *const ext[4] = {".binltl", ".binbig", ".binltl64", ".binuni"};
    for (int i = 0; i < 4; i++) {
        size_t e = strlen(ext[i]);
        if (n >= e && !strcasecmp(fn + n - e, ext[i])) return i;
    }
    return WOG_LAYOUT_BINLTL;
}

static ra_status wog_read(ra_document *doc, const uint8_t *data, size_t size, ra_error *err, bool movie)
{
    wog_file *f = ra_arena_alloc(doc->arena, sizeof *f);
    if (!f) return ra_fail_nomem(err, doc->format->id);
    int l = layout_for(doc, data, size, movie, err);
    if (l < 0) return err->code;
    f->layout = (wog_layout)l;
    f->is_movie = movie;
    doc->model = f;
    return movie ? wog_movie_read_run(data, size, f->layout, doc->arena, &f->movie, err, ra_document_read_runner, doc)
                 : wog_anim_read(data, size, f->layout, doc->arena, &f->anim, err);
}

static ra_status wog_read_anim(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    return wog_read(doc, data, size, err, false);
}
static ra_status wog_read_movie(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    return wog_read(doc, data, size, err, true);
}

static ra_status wog_write(const ra_document *doc, ra_writer *w, ra_error *err)
{
    const wog_file *f = doc->model;
    return f->is_movie ? wog_movie_write(&f->movie, f->layout, w, err) : wog_anim_write(&f->anim, f->layout, w, err);
}

/* ---- dump --source ----------------------------------------------------------------------------------------- */
static void dump_frames(ra_json *j, const wog_anim *a, const wog_frames *f)
{
    if (!f->present) {
        ra_json_null(j);
        return;
    }
    ra_json_begin_array(j);
    for (uint32_t s = 0; s < a->num_frames; s++) {
        if (!f->slot || f->slot[s] < 0) {
            ra_json_null(j);
            continue;
        }
        const wog_keyframe *k = &a->keys[f->slot[s]];
        ra_json_begin_object(j);
        ra_json_key(j, "offset"), ra_json_uint(j, wog_key_offset(a, (uint32_t)f->slot[s]));
        ra_json_key(j, "x"), ra_json_number(j, k->x);
        ra_json_key(j, "y"), ra_json_number(j, k->y);
        ra_json_key(j, "angle"), ra_json_number(j, k->angle);
        ra_json_key(j, "alpha"), ra_json_int(j, k->alpha);
        ra_json_key(j, "color"), ra_json_int(j, k->color);
        ra_json_key(j, "nextFrameIndex"), ra_json_int(j, k->next_frame_index);
        ra_json_key(j, "soundStrIdx"), ra_json_int(j, k->sound_str_idx);
        ra_json_key(j, "interpolation"), ra_json_int(j, k->interpolation);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

static void dump_strings(ra_json *j, const uint8_t *t, uint32_t n)
{
    /* every NUL-terminated string of the table with its index */
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < n;) {
        const char *s = wog_string(t, n, i);
        size_t len = s ? strlen(s) : n - i;
        if (len || i == 0) {
            ra_json_begin_object(j);
            ra_json_key(j, "index"), ra_json_uint(j, i);
            ra_json_key(j, "string"), ra_json_string_n(j, (const char *)t + i, len);
            ra_json_end_object(j);
        }
        i += (uint32_t)len + 1;
    }
    ra_json_end_array(j);
}

static void dump_anim(ra_json *j, const wog_anim *a)
{
    static const char *const pn[7] = {"mTransformTypes", "mFrameTimes",  "mXformFrames", "mAlphaFrames",
                                      "mColorFrames",    "mSoundFrames", "pStringTable"};
    ra_json_begin_object(j);
    ra_json_key(j, "offset"), ra_json_uint(j, a->offset);
    ra_json_key(j, "mHasColor"), ra_json_int(j, a->has_color);
    ra_json_key(j, "mHasAlpha"), ra_json_int(j, a->has_alpha);
    ra_json_key(j, "mHasSound"), ra_json_int(j, a->has_sound);
    ra_json_key(j, "mHasTransform"), ra_json_int(j, a->has_transform);
    ra_json_key(j, "mNumTransforms"), ra_json_uint(j, a->num_transforms);
    ra_json_key(j, "mNumFrames"), ra_json_uint(j, a->num_frames);
    ra_json_key(j, "null_pointers");
    ra_json_begin_array(j);
    for (int i = 0; i < 7; i++)
        if (a->null_ptrs & (1u << i)) ra_json_string(j, pn[i]);
    ra_json_end_array(j);
    ra_json_key(j, "mTransformTypes");
    ra_json_begin_array(j);
    for (uint32_t i = 0; a->transform_types && i < a->num_transforms; i++) ra_json_int(j, a->transform_types[i]);
    ra_json_end_array(j);
    ra_json_key(j, "mFrameTimes");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < a->num_frames; i++) ra_json_number(j, a->frame_times[i]);
    ra_json_end_array(j);
    ra_json_key(j, "mXformFrames");
    if (!a->xform) {
        ra_json_null(j);
    } else {
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < a->num_transforms; i++) dump_frames(j, a, &a->xform[i]);
        ra_json_end_array(j);
    }
    ra_json_key(j, "mAlphaFrames"), dump_frames(j, a, &a->alpha);
    ra_json_key(j, "mColorFrames"), dump_frames(j, a, &a->color);
    ra_json_key(j, "mSoundFrames"), dump_frames(j, a, &a->sound);
    ra_json_key(j, "string_table_bytes"), ra_json_uint(j, a->strings_size);
    ra_json_key(j, "strings"), dump_strings(j, a->strings, a->strings_size);
    ra_json_end_object(j);
}

static void wog_dump_source(const ra_document *doc, ra_json *j)
{
    const wog_file *f = doc->model;
    ra_json_begin_object(j);
    ra_json_key(j, "format"), ra_json_string(j, doc->format->id);
    ra_json_key(j, "layout"), ra_json_string(j, wog_layout_name(f->layout));
    if (!f->is_movie) {
        ra_json_key(j, "animation"), dump_anim(j, &f->anim);
    } else {
        const wog_movie *m = &f->movie;
        ra_json_key(j, "length"), ra_json_number(j, m->length);
        ra_json_key(j, "numActors"), ra_json_uint(j, m->num_actors);
        ra_json_key(j, "actors");
        ra_json_begin_array(j);
        for (uint32_t i = 0; i < m->num_actors; i++) {
            const wog_actor *a = &m->actors[i];
            ra_json_begin_object(j);
            ra_json_key(j, "mType"), ra_json_int(j, a->type);
            ra_json_key(j, "mImageStrIdx"), ra_json_int(j, a->image_idx);
            ra_json_key(j, "image"), ra_json_string(j, actor_string(m, a->image_idx));
            ra_json_key(j, "mLabelTextStrIdx"), ra_json_int(j, a->label_idx);
            ra_json_key(j, "label"), ra_json_string(j, actor_string(m, a->label_idx));
            ra_json_key(j, "mFontStrIdx"), ra_json_int(j, a->font_idx);
            ra_json_key(j, "font"), ra_json_string(j, actor_string(m, a->font_idx));
            ra_json_key(j, "mLabelMaxWidth"), ra_json_number(j, a->label_max_width);
            ra_json_key(j, "mLabelWrapWidth"), ra_json_number(j, a->label_wrap_width);
            ra_json_key(j, "mLabelJustification"), ra_json_int(j, a->justification);
            ra_json_key(j, "mDepth"), ra_json_number(j, a->depth);
            ra_json_key(j, "animation"), dump_anim(j, &m->anims[i]);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        ra_json_key(j, "string_table_bytes"), ra_json_uint(j, m->strings_size);
        ra_json_key(j, "strings"), dump_strings(j, m->strings, m->strings_size);
    }
    ra_json_end_object(j);
}

/* ---- detection -------------------------------------------------------------------------------------------- */
static int wog_anim_detect(const uint8_t *d, size_t n)
{
    int l = wog_sniff_layout(d, n, false);
    if (l < 0) return 0;
    if (l == WOG_LAYOUT_BINUNI) return 100;
    bool be = l == WOG_LAYOUT_BINBIG;
    unsigned hs = l == WOG_LAYOUT_BINLTL64 ? 0x50 : 0x34, psz = l == WOG_LAYOUT_BINLTL64 ? 8 : 4;
    /* every pointer null or past the header */
    for (unsigned i = 0; i < 7; i++) {
        if (0x18 + (i + 1) * psz > n) break;
        uint32_t p = be ? ra_load_u32be(d + 0x18 + i * psz) : ra_load_u32le(d + 0x18 + i * psz);
        if (p && p < hs) return 0;
    }
    uint32_t types = be ? ra_load_u32be(d + 0x18) : ra_load_u32le(d + 0x18);
    return types == hs ? 80 : 55; /* 2D Boy's writer puts the types right after the header */
}

static int wog_movie_detect(const uint8_t *d, size_t n)
{
    int l = wog_sniff_layout(d, n, true);
    if (l < 0) return 0;
    if (l == WOG_LAYOUT_BINUNI) return 100;
    bool be = l == WOG_LAYOUT_BINBIG;
    unsigned hs = l == WOG_LAYOUT_BINLTL64 ? 0x20 : 0x14;
    uint32_t na = be ? ra_load_u32be(d + 4) : ra_load_u32le(d + 4);
    uint32_t pp = be ? ra_load_u32be(d + 12) : ra_load_u32le(d + (l == WOG_LAYOUT_BINLTL64 ? 16 : 12));
    return (uint64_t)pp == hs + 32ull * na ? 90 : 60;
}

static const ra_option_decl wog_options[] = {
    {"layout", RA_OPT_ENUM, 0, 0, false, "binltl|binbig|binltl64|binuni", "detected", "force the byte layout"},
    {"transform_order", RA_OPT_ENUM, 0, 0, false, "list|reverse", "list",
     "list: the transform entries in file order (T.R.S); reverse: S.R.T"},
    {"flip_y", RA_OPT_BOOL, 0, 0, false, NULL, "false", "mirror y (for y-down screen coordinates)"},
};

const ra_format ra_format_wog_anim = {
    FMT_ANIM,
    "World of Goo image animation (anim.binltl, .binltl64, .binuni, .binbig)",
    "anim.binltl anim.binltl64 anim.binuni anim.binbig",
    "BINUNIAN magic (1.5); otherwise four 0/1 flags, 0..16 transforms, 1..2^24 frame slots and header pointers "
    "past the header (pointer width and byte order from the header itself)",
    wog_anim_detect,
    wog_read_anim,
    wog_to_scene,
    wog_pose,
    wog_dump_source,
    wog_write,
    .options = wog_options,
    .option_count = sizeof wog_options / sizeof wog_options[0],
};

const ra_format ra_format_wog_movie = {
    FMT_MOVIE,
    "World of Goo movie (movie.binltl, .binltl64, .binuni, .binbig)",
    "movie.binltl movie.binltl64 movie.binuni movie.binbig",
    "BINUNIMO magic (1.5); otherwise a finite length >= 0 and the actor array right after the 20-byte (32 for "
    "64-bit) header",
    wog_movie_detect,
    wog_read_movie,
    wog_to_scene,
    wog_pose,
    wog_dump_source,
    wog_write,
    .options = wog_options,
    .option_count = sizeof wog_options / sizeof wog_options[0],
};
