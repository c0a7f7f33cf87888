/* retroanim — the neutral scene every format's to_scene produces and the
 * Assimp shim turns into an aiScene.
 *
 * Times are in SECONDS everywhere in ra_scene.  Keys played back the way
 * Assimp consumers play them (linear position and scale, shortest-arc slerp,
 * first/last key held outside the keyed range) reproduce the game's pose.
 * All memory belongs to the scene's arena. */
#ifndef RETROANIM_RA_SCENE_H
#define RETROANIM_RA_SCENE_H

#include "ra_base.h"
#include "ra_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The scene's types (ra_scene, ra_node, ra_channel, ...) are public: retroanim.h. */

/* ra_scene_warn keeps RA_MAX_WARNINGS entries: the first RA_MAX_WARNINGS - 1
 * distinct messages, each with its count of repeats, then RA_MORE_WARNINGS
 * counting every later message that is not one of them. */
#define RA_MAX_WARNINGS 256
#define RA_MORE_WARNINGS "further warnings of other kinds (not listed one by one; the count is theirs)"

/* Builders.  Each returns false (and records RA_ERR_NO_MEMORY in err) on failure. */
void ra_scene_init(ra_scene *s, ra_arena *arena, const char *format);
/* Adds a node; returns its index or -1. */
int32_t ra_scene_add_node(ra_scene *s, const char *name, int32_t parent, const ra_mat4 *transform);
/* ch takes from's keys (the arrays are shared, not copied) */
void ra_channel_share_keys(ra_channel *ch, const ra_channel *from);
int32_t ra_scene_find_node(const ra_scene *s, const char *name);
bool ra_meta_set_bool(ra_arena *a, ra_meta_list *m, const char *key, bool v);
bool ra_meta_set_int(ra_arena *a, ra_meta_list *m, const char *key, int64_t v);
bool ra_meta_set_double(ra_arena *a, ra_meta_list *m, const char *key, double v);
bool ra_meta_set_string(ra_arena *a, ra_meta_list *m, const char *key, const char *v);
/* The same without a copy: v lives as long as a (made in it, or static), and
 * several lists may point to one text. */
bool ra_meta_set_string_ref(ra_arena *a, ra_meta_list *m, const char *key, const char *v);
/* The n entries e appended to m as they are, in one growth: nothing looked
 * up (their keys are distinct and not in m) and nothing copied (keys and
 * string values live as long as a: literals, or made in it).  For a reader
 * giving each of many items the same few keys (an archive's item list,
 * made again at every import from it). */
bool ra_meta_add_refs(ra_arena *a, ra_meta_list *m, const ra_meta *e, size_t n);
bool ra_meta_set_vec3(ra_arena *a, ra_meta_list *m, const char *key, ra_vec3 v);
/* Sets e's key in m to e's value (of any type; a string is copied). */
bool ra_meta_set(ra_arena *a, ra_meta_list *m, const ra_meta *e);
/* One metadata value as JSON (as `dump` prints it), and a whole list as an object. */
struct ra_json;
void ra_meta_value_json(struct ra_json *j, const ra_meta *e);
void ra_meta_dump_json(struct ra_json *j, const ra_meta_list *m);
/* Longest node name (bytes) before a "#k" suffix: Assimp's aiString keeps
 * 1023 bytes, so longer names could become equal in an aiScene. */
#define RA_NAME_MAX 1000u
/* Makes names[0..n) unique in order: a name longer than RA_NAME_MAX bytes is
 * cut to that, then a name already used (or reserved) gets "#2", "#3", ...
 * appended.  Rewrites the array in place. */
bool ra_names_make_unique(ra_arena *a, const char **names, size_t n, const char *const *reserved, size_t nreserved);

/* A camera's frame in its node's space: the unit view direction (towards
 * look_at), the unit up made perpendicular to it (any perpendicular when the
 * up is missing or along the view) and right = view x up.  The writers turn
 * it into their camera conventions (glTF looks down -Z, FBX down +X). */
void ra_camera_axes(const ra_camera *c, ra_vec3 *view, ra_vec3 *up, ra_vec3 *right);

/* Adds a warning (deduplicated by text).  A warning that cannot be kept (out
 * of memory) is counted on this thread: ra_warnings_lost() gives the count
 * so far, and a load that lost one fails with RA_ERR_NO_MEMORY (document.c)
 * instead of returning a scene without it. */
void ra_scene_warn(ra_scene *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
size_t ra_warnings_lost(void);
void ra_warnings_lost_add(size_t n);

/* The channels of every animation (keys: NULL, or their keys, positions,
 * rotations and scalings together). */
size_t ra_scene_channel_count(const ra_scene *s, double *keys);
/* Makes *ch one key per track at t = 0 holding node `node` at its rest
 * transform (as ra_m4_decompose splits it): the channel an animation keeps
 * when nothing else of it moves a node (Assimp wants a channel).  The
 * channel's states are left as they are.  false: out of memory. */
bool ra_channel_hold_rest(ra_arena *a, const ra_scene *s, uint32_t node, ra_channel *ch);

/* ---- key density for consumers that interpolate quaternion components -------
 * Blender lerps the four components of a rotation and normalises; keys close
 * enough together make that play within RA_DENSITY_TOL (per world-matrix
 * entry) of slerp.  The lever sum bounds how much a rotation error of one
 * radian at every rotating node moves any world-matrix entry; the automatic
 * key angle (radians) is cbrt(RA_DENSITY_TOL / (0.0042 * lever sum)), at least
 * 0.1 degree (both return -1 when out of memory).  A load
 * (ra_document_key_passes) inserts keys on the slerp path (slerp playback
 * does not change) so that no two rotation keys are further apart than that
 * angle, except the two keys of a step; it fails with RA_ERR_LIMIT when the
 * scene would then hold more than max_keys keys. */
#define RA_DENSITY_TOL 2.5e-5
double ra_scene_lever_sum(const ra_scene *s);
double ra_scene_auto_key_angle(const ra_scene *s);
/* How far a channel's keys reach, for the lever sum: the largest squared
 * length of its translations and the largest component of its scalings
 * (NaN where it has none).  _reach: the automatic key angle from the reach
 * of every channel (the animations' channels one after another, two values
 * each), worked out by the caller (NULL: here). */
void ra_channel_reach(const ra_channel *ch, double reach[2]);
double ra_scene_auto_key_angle_reach(const ra_scene *s, const double *reach);
/* One rotation track's cut (the automatic density's rule for one
 * channel), with a cutter made once for a max_angle: _count gives the keys
 * the cut inserts, _apply hands the n + count keys to sink in order, in
 * batches (at: the index of the batch's first key).  The inserted keys lie
 * on the slerp path, so playback by slerp is unchanged; each key is on the
 * same hemisphere as the one before it. */
#define RA_KEY_CUT_TABLE 16
typedef struct ra_key_cutter {
    double max_angle;               /* radians, at least 0.1 degree */
    double cos_p[RA_KEY_CUT_TABLE]; /* cos_p[p - 1]: the least |dot| of two keys that p pieces cover */
} ra_key_cutter;
typedef void (*ra_key_sink)(void *ctx, const ra_quat_key *k, size_t at, size_t n);
void ra_key_cutter_init(ra_key_cutter *c, double max_angle);
size_t ra_key_cut_count(const ra_key_cutter *c, const ra_quat_key *k, size_t n);
void ra_key_cut_apply(const ra_key_cutter *c, const ra_quat_key *k, size_t n, ra_key_sink sink, void *ctx);

/* ---- consumer-style playback of the baked keys ------------------------------ */
/* Local transform of a node at time t (seconds) in animation `anim`, as Assimp
 * consumers play it: a missing track (or a node without channel) uses the
 * node's rest transform component. */
ra_mat4 ra_scene_sample_local(const ra_scene *s, size_t anim, uint32_t node, double t);

/* ---- key track builder: how formats bake engine rules into keys ------------ */
/* Keys are appended in increasing time.  A value jump at time t (a step, a
 * value before a first key, a duplicate time) is written as two keys: the
 * left value at t - eps and the right value at t, where eps is
 * ra_step_epsilon(t): 0.1 ms, or more where float32 seconds cannot resolve
 * that.  Quaternions are made hemisphere-continuous as they are appended. */
typedef struct ra_vec_track {
    ra_vec_key *keys;
    size_t count, cap;
    bool heap; /* keys are ra_malloc'd scratch (ra_*_track_reserve): grown with ra_realloc */
} ra_vec_track;
typedef struct ra_quat_track {
    ra_quat_key *keys;
    size_t count, cap;
    bool heap;
} ra_quat_track;

double ra_step_epsilon(double t);
/* room for one more key: the array doubled (the pushes' slow path) */
bool ra_vec_track_grow(ra_arena *a, ra_vec_track *tr);
bool ra_quat_track_grow(ra_arena *a, ra_quat_track *tr);
/* Inline: every baked key passes here (as a call, with the key's 32 or 40
 * bytes through the stack, a tenth of some bakers' time). */
static inline bool ra_vec_track_push(ra_arena *a, ra_vec_track *tr, double t, ra_vec3 v)
{
    if (tr->count && t <= tr->keys[tr->count - 1].t) {
        /* same instant: the later value replaces (callers order jumps with eps) */
        tr->keys[tr->count - 1].v = v;
        return true;
    }
    if (tr->count == tr->cap && !ra_vec_track_grow(a, tr)) return false;
    ra_vec_key *k = &tr->keys[tr->count++];
    k->t = t, k->v = v;
    return true;
}
static inline bool ra_quat_track_push(ra_arena *a, ra_quat_track *tr, double t, ra_quat q)
{
    q = ra_q_normalize(q);
    if (tr->count) {
        ra_quat prev = tr->keys[tr->count - 1].q;
        if (t <= tr->keys[tr->count - 1].t) {
            if (tr->count > 1 && ra_q_dot(tr->keys[tr->count - 2].q, q) < 0) q = ra_q_neg(q);
            tr->keys[tr->count - 1].q = q;
            return true;
        }
        if (ra_q_dot(prev, q) < 0) q = ra_q_neg(q);
    }
    if (tr->count == tr->cap && !ra_quat_track_grow(a, tr)) return false;
    ra_quat_key *k = &tr->keys[tr->count++];
    k->t = t, k->q = q;
    return true;
}
/* Appends the arc from q0 (at t0, already pushed) to q1 at t1 following the
 * great circle q0 -> q1 without shortest-arc flip, subdivided so that each
 * piece spans at most max_angle radians of 4D arc (< pi/2), which a
 * shortest-arc consumer then follows exactly. */
bool ra_quat_track_arc(ra_arena *a, ra_quat_track *tr, double t0, ra_quat q0, double t1, ra_quat q1, double max_angle);
/* The pieces ra_quat_track_arc cuts that arc into (max_angle capped at 1.5),
 * and the same arc in a given number of pieces: for callers that count the
 * keys before they are made. */
size_t ra_quat_arc_pieces(ra_quat q0, ra_quat q1, double max_angle);
bool ra_quat_track_arc_n(ra_arena *a, ra_quat_track *tr, double t0, ra_quat q0, double t1, ra_quat q1, size_t pieces);
/* cos(max_angle) capped as ra_quat_arc_pieces caps it */
double ra_quat_arc_cos(double max_angle);
/* An arc of one piece, told without normalising (most arcs, between the
 * frames of a smooth track): where q0.q1 >= cos |q0| |q1| (1 + 5e-10) the
 * dot of the normalised pair is above cos by at least 5e-10 cos >= 3.5e-11
 * (cos >= cos 1.5), far beyond the rounding of either (about 1e-15 for
 * lengths between 1e-50 and 1e50), so it is one piece.  false: undecided.
 * cos_max: ra_quat_arc_cos(max_angle). */
static inline bool ra_quat_arc_one_piece(ra_quat q0, ra_quat q1, double cos_max)
{
    double d0 = ra_q_dot(q0, q1), n0 = ra_q_dot(q0, q0), n1 = ra_q_dot(q1, q1);
    return d0 > 0 && n0 >= 1e-100 && n0 <= 1e100 && n1 >= 1e-100 && n1 <= 1e100 &&
           d0 * d0 >= cos_max * cos_max * (n0 * n1) * (1 + 1e-9);
}
/* ra_quat_track_arc with the arc of one piece pushed inline (a bake that
 * pushes every frame through it); cos_max: ra_quat_arc_cos(max_angle) */
static inline bool ra_quat_track_arc_c(ra_arena *a, ra_quat_track *tr, double t0, ra_quat q0, double t1, ra_quat q1,
                                       double max_angle, double cos_max)
{
    if (ra_quat_arc_one_piece(q0, q1, cos_max)) return ra_quat_track_push(a, tr, t1, q1);
    return ra_quat_track_arc(a, tr, t0, q0, t1, q1, max_angle);
}
/* Removes keys that repeat both neighbours' value (exact for linear and slerp).
 * A rotation key is only removed when the two keys around it stay within
 * max_angle radians of rotation, so a track split for consumers that
 * interpolate per component (max_key_angle) keeps its split. */
void ra_vec_track_simplify(ra_vec_track *tr, double tol);
/* false when out of memory (the keys are then as they were) */
bool ra_quat_track_simplify(ra_quat_track *tr, double tol, double max_angle);
/* The same on *count keys in place (*count becomes how many remain); circle:
 * tracks of rotations about Z alone are tested on their circle (arithmetic,
 * where the general test takes sines; the answers are the same), false:
 * always the general test. */
bool ra_quat_keys_simplify(ra_quat_key *k, size_t *count, double tol, double max_angle, bool circle);
/* Scratch tracks: the keys live in ra_malloc'd memory with room for `cap`
 * keys (growing if needed), so a track built key by key leaves nothing
 * behind in the arena.  _commit simplifies the track, copies the keys that
 * remain into the arena (*out, *count) and frees the scratch; _release frees
 * it without committing.  Both return false when out of memory (the scratch
 * is freed either way). */
bool ra_vec_track_reserve(ra_vec_track *tr, size_t cap);
bool ra_quat_track_reserve(ra_quat_track *tr, size_t cap);
bool ra_vec_track_commit(ra_arena *a, ra_vec_track *tr, double tol, ra_vec_key **out, size_t *count);
bool ra_quat_track_commit(ra_arena *a, ra_quat_track *tr, double tol, double max_angle, ra_quat_key **out,
                          size_t *count);
void ra_vec_track_release(ra_vec_track *tr);
/* Released scratch of 64 KiB or more stays with its thread for the next
 * channel's tracks (the heap would otherwise be trimmed and regrown, its
 * pages faulted again); this frees what the calling thread keeps.
 * ra_document_build_scene and ra_parallel_for's workers call it when done. */
void ra_scratch_flush(void);
/* The same for any scratch: a block of at least `bytes` (its size in *got),
 * and its return (bytes: its size; NULL is ignored). */
void *ra_scratch_take(size_t bytes, size_t *got);
void ra_scratch_give(void *p, size_t bytes);
/* The keys a load may still commit (max_keys), per thread: ra_document_build_scene
 * opens the budget around to_scene; the _commit functions (and any baker that
 * copies keys into the arena itself) charge what they keep, and a charge past
 * the budget fails like an allocation, so a file over max_keys stops baking at
 * once.  _end restores the budget _begin saved (loads may nest) and says
 * whether a charge failed. */
typedef struct ra_key_budget {
    double left;
    bool over;
} ra_key_budget;
ra_key_budget ra_key_budget_begin(double max_keys);
bool ra_key_budget_end(ra_key_budget saved);
bool ra_keys_charge(size_t n);
/* What is left of this thread's budget (HUGE_VAL outside a load). */
double ra_keys_left(void);
void ra_quat_track_release(ra_quat_track *tr);

/* ---- baking a transform function into keys ----------------------------------------
 * A format describes a node's local transform as a function of time `eval`
 * (the game's rules) plus its breakpoints: the times where the function may
 * jump or change from one interpolation piece to the next.  Between two
 * breakpoints the function must be continuous.  ra_bake_channel samples it at
 * each breakpoint (with the left value at b - eps and the right value at
 * b + eps, so steps survive linear playback, unless the format knows there
 * is no step there: continuous_at), then subdivides every piece
 * until linear/shortest-arc playback of the keys stays within the tolerances,
 * and finally drops keys that playback reproduces anyway.  Before the first
 * breakpoint and after the last one the function must be constant. */
typedef struct ra_trs {
    ra_vec3 t;
    ra_quat r;
    ra_vec3 s;
} ra_trs;
typedef ra_trs (*ra_eval_fn)(const void *ctx, double t_seconds);

typedef struct ra_bake_params {
    double angle_tol;     /* radians of rotation error allowed between keys (default 4e-6) */
    double value_tol;     /* absolute position/scale error allowed (default 1e-6) */
    double max_key_angle; /* largest rotation between two keys, radians (default 150 deg, max < 180) */
    int max_depth;        /* subdivision depth per piece (default 16) */
    size_t *samples_left; /* NULL: unlimited; else each sample taken counts down, and at 0 the bake
                             fails with RA_ERR_LIMIT (field max_samples) */
    size_t max_samples;   /* the budget samples_left started from, for that message */
    const char *format;   /* format id of the errors */
    /* Optional: how many equal pieces suffice between the samples at t0 < t1
     * (the function continuous there), by a bound the format computes for
     * that span (angle_tol and max_key_angle from these parameters); each
     * piece's end is then sampled once, without the verification at its
     * quarter points.  *linear_ts set: translation and scale are linear in
     * time on the span, so only the rotation takes those samples.  0: not
     * known here, subdivided and verified as usual. */
    uint32_t (*span_pieces)(const void *ctx, double t0, double t1, const struct ra_bake_params *p, bool *linear_ts);
    /* Optional, with span_pieces: on a span it cut with *linear_ts set, the
     * rotations at the ends j0 .. j0 + n - 1 (n <= 32) of its np pieces
     * (out[k] at t0 + (t1 - t0) (j0 + k) / np) for less than one evaluation
     * each: the evaluations' values up to rounding (taken as samples, not
     * verified).  false: not known here, evaluated one by one. */
    bool (*span_rotations)(const void *ctx, double t0, double t1, uint32_t np, uint32_t j0, uint32_t n, ra_quat *out);
    /* Optional: true when the function is known to have no jump at the
     * breakpoint t (continuous within a few step epsilons either side).
     * Such a breakpoint, neither the first nor the last, takes one sample,
     * at t, and the piece after it is smooth: no left value at t - eps nor
     * right value at t + eps.  false: not known, sampled as a step. */
    bool (*continuous_at)(const void *ctx, double t);
} ra_bake_params;

void ra_bake_params_default(ra_bake_params *p);

/* A growable list of breakpoint times (ra_malloc'd: ra_free(b.v) when done). */
typedef struct ra_breaks {
    double *v;
    size_t n, cap;
} ra_breaks;
bool ra_breaks_push(ra_breaks *b, double t);
/* Sorts ascending (duplicates stay; ra_bake_channel accepts them).  false:
 * out of memory for the merge buffer (the list is left as it was). */
bool ra_breaks_sort(ra_breaks *b);
/* breaks: sorted ascending, may hold duplicates.  Fills ch->position/rotation/
 * scaling (all three tracks) in ch; ch->node is left to the caller.  Fails
 * with RA_ERR_NO_MEMORY, or RA_ERR_LIMIT when the sample budget runs out. */
ra_status ra_bake_channel(ra_arena *a, ra_eval_fn eval, const void *ctx, const double *breaks, size_t nbreaks,
                          const ra_bake_params *p, ra_channel *ch, ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
