/* Metroid Prime ANIM + CINF semantics: the game's sampling
 * (docs/formats/metroid_prime.md §6), the scene (nodes from the CINF, keys at
 * the keyed frames with extra keys where the game's slerp takes the long arc),
 * pose, dump --source, detection. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_internal.h"
#include "retroanim/ra_parallel.h"

#define FMT "metroid_anim"
#define FMT_CINF "metroid_cinf"
#define FMT_CMDL "metroid_cmdl"

extern const ra_format ra_format_metroid_anim;
extern const ra_format ra_format_metroid_cinf;
extern const ra_format ra_format_metroid_cmdl;

typedef struct mp_doc {
    bool has_anim, has_cinf;
    mp_anim anim;
    mp_cinf cinf;
    const char *cinf_path;   /* the skeleton used, if any */
    const char *cinf_source; /* "option", "sibling", "folder", "archive", "none", "unreadable" */
    const char *stem;        /* animation name */
    mp_character ch;         /* the character's model, if any */
} mp_doc;

typedef struct mp_state {
    bool native;
    bool strip_root;
    int32_t *chan; /* per scene node: channel index or -1 */
    ra_vec3 *rest; /* per scene node: rest offset */
} mp_state;

/* ---- the game's sampling (docs/formats/metroid_prime.md §6) ---------------------------------------- */
/* CQuaternion slerp without the shortest-arc flip.  Keys that are exact
 * opposites are the same rotation: the game's formula divides by zero there,
 * the rotation is held. */
static ra_quat game_slerp(ra_quat a, ra_quat b, double f)
{
    if (ra_q_dot(a, b) <= -1.0 + 1e-12) return ra_q_normalize(a);
    return ra_q_slerp_raw(a, b, f);
}

static ra_quat safe_quat(ra_quat q)
{
    double l = ra_q_len(q);
    return l > 1e-6 ? ra_q_scale(q, 1.0 / l) : ra_q_identity();
}

static double key_time(const mp_anim *a, uint32_t j) { return (double)a->key_frames[j] * (double)a->interval; }

/* The two keys and the fraction the game blends at time t. */
static void sample_keys(const mp_anim *a, double t, uint32_t *k0, uint32_t *k1, double *f)
{
    uint32_t n = a->key_count;
    if (a->version == 0) {
        /* CAnimSource: frame = floor(t / interval), next = (frame + 1) mod K,
         * remainders under 10 us snapped to 0, fraction clamped to [0, 1] */
        if (t > a->duration) t = a->duration;
        if (t < 0) t = 0;
        double fi = floor(t / a->interval);
        if (fi > n - 1) fi = n - 1;
        double rem = t - fi * a->interval;
        if (fabs(rem) < 1e-5) rem = 0;
        double fr = rem / a->interval;
        *k0 = (uint32_t)fi;
        *k1 = (uint32_t)((*k0 + 1) % n);
        *f = fr < 0 ? 0 : fr > 1 ? 1 : fr;
        return;
    }
    /* CFBStreamedPairOfTotals: the keys around t, the last key held after it */
    if (t <= key_time(a, 0) || n == 1) {
        *k0 = *k1 = 0;
        *f = 0;
        return;
    }
    if (t >= key_time(a, n - 1)) {
        *k0 = *k1 = n - 1;
        *f = 0;
        return;
    }
    uint32_t lo = 0, hi = n - 1; /* key_time(lo) < t < key_time(hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_time(a, mid) <= t) lo = mid;
        else hi = mid;
    }
    *k0 = lo;
    *k1 = hi;
    *f = (t - key_time(a, lo)) / (key_time(a, hi) - key_time(a, lo));
}

static ra_trs eval_channel(const mp_anim *a, const mp_channel *ch, ra_vec3 rest, double t)
{
    ra_trs r = {rest, ra_q_identity(), ra_v3(1, 1, 1)};
    if (!a->key_count) return r;
    uint32_t k0, k1;
    double f;
    sample_keys(a, t, &k0, &k1, &f);
    if (ch->has_rot) r.r = game_slerp(safe_quat(mp_key_rot(a, ch, k0)), safe_quat(mp_key_rot(a, ch, k1)), f);
    if (ch->has_trans) r.t = ra_v3_lerp(mp_key_trans(a, ch, k0), mp_key_trans(a, ch, k1), f);
    if (ch->has_scale) r.s = ra_v3_lerp(mp_key_scale(a, ch, k0), mp_key_scale(a, ch, k1), f);
    return r;
}

/* Z-up file -> Y-up scene: the root turns -90 degrees about X, (x,y,z) -> (x,z,-y). */
static ra_mat4 root_transform(bool native)
{
    ra_mat4 m = ra_m4_identity();
    if (!native) {
        m.m[1][1] = 0, m.m[1][2] = 1;
        m.m[2][1] = -1, m.m[2][2] = 0;
    }
    return m;
}

static ra_status mp_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err)
{
    (void)anim;
    (void)err;
    const mp_doc *d = doc->model;
    const mp_state *st = doc->state;
    for (size_t i = 0; i < doc->scene.node_count; i++) {
        ra_mat4 local;
        if (i == 0) {
            local = root_transform(st->native);
        } else if (st->chan[i] >= 0) {
            ra_trs l = eval_channel(&d->anim, &d->anim.channels[st->chan[i]], st->rest[i], t);
            local = ra_m4_compose(l.t, l.r, l.s);
        } else {
            local = ra_m4_translation(st->rest[i]);
        }
        int32_t p = doc->scene.nodes[i].parent;
        world[i] = p >= 0 ? ra_m4_mul(&world[p], &local) : local;
    }
    return RA_OK;
}

/* ---- nodes ------------------------------------------------------------------------------------------ */
/* children of one parent sort by their place in the CINF build order, then file order */
typedef struct child_key {
    uint32_t parent_slot, rank, index;
} child_key;

static int cmp_child(const void *x, const void *y)
{
    const child_key *a = x, *b = y;
    if (a->parent_slot != b->parent_slot) return a->parent_slot < b->parent_slot ? -1 : 1;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* A JSON list of numbers as a NUL-terminated arena string. */
static const char *json_floats(ra_arena *ar, const float *v, int n)
{
    char buf[160];
    size_t o = 0;
    o += (size_t)snprintf(buf + o, sizeof buf - o, "[");
    for (int i = 0; i < n; i++) o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%.9g", i ? "," : "", v[i]);
    snprintf(buf + o, sizeof buf - o, "]");
    return ra_arena_strndup(ar, buf, strlen(buf));
}

/* Builds the node list: the CINF tree in pre-order (children in build order),
 * then the animated bones the CINF lacks, flat under the root. */
/* What the steps of build_nodes share: the skeleton as a tree, then the scene's nodes. */
typedef struct mp_tree {
    ra_document *doc;
    mp_state *st;
    ra_scene *s;
    ra_arena *ar;
    const mp_cinf *k;
    const mp_anim *a;
    size_t nb, nc;
    ra_id_slot *bones, *names, *build, *chans; /* sorted ids */
    int64_t *parent;                           /* per bone: parent bone index or -1 */
    bool *kept;                                /* per bone: the first record of its id */
    uint32_t *child_start, *children;          /* children lists (CSR); slot nb holds the roots */
    const char **nm;                           /* per scene node */
    int32_t *node_of_bone, *parent_node;
    uint32_t *bone_of_node;
    size_t nn; /* scene nodes so far */
} mp_tree;

/* Parent links (duplicated ids keep the first record) and the children of
 * every bone in the skeleton's build order. */
static ra_status mp_bone_tree(mp_tree *t, ra_error *err)
{
    const mp_cinf *k = t->k;
    size_t nb = t->nb;
    ra_arena *ar = t->ar;
    t->parent = ra_arena_array(ar, nb, sizeof *t->parent);
    uint32_t *rank = ra_arena_array(ar, nb, sizeof *rank);
    t->child_start = ra_arena_array(ar, nb + 2, sizeof *t->child_start);
    t->children = ra_arena_array(ar, nb + 1, sizeof *t->children);
    t->kept = ra_arena_array(ar, nb, sizeof *t->kept);
    child_key *ck = ra_arena_array(ar, nb, sizeof *ck);
    if (nb && (!t->parent || !rank || !t->child_start || !t->children || !t->kept || !ck))
        return ra_fail_nomem(err, FMT);
    size_t dup = 0;
    for (size_t i = 0; i < nb; i++) {
        t->kept[i] = ra_find_id(t->bones, nb, k->bones[i].id) == (int64_t)i;
        if (!t->kept[i]) dup++;
        t->parent[i] = mp_bone_parent(k, t->bones, i);
        int64_t r = ra_find_id(t->build, k->build_count, k->bones[i].id);
        rank[i] = r >= 0 ? (uint32_t)r : UINT32_MAX;
    }
    if (dup) ra_scene_warn(t->s, "the skeleton lists %zu bone id(s) twice; the first record of each is used", dup);
    size_t nk = 0;
    for (size_t i = 0; i < nb; i++)
        if (t->kept[i])
            ck[nk++] = (child_key){t->parent[i] >= 0 ? (uint32_t)t->parent[i] : (uint32_t)nb, rank[i], (uint32_t)i};
    qsort(ck, nk, sizeof *ck, cmp_child);
    for (size_t i = 0; i < nk; i++) {
        t->children[i] = ck[i].index;
        t->child_start[ck[i].parent_slot + 1]++;
    }
    for (size_t i = 0; i <= nb; i++) t->child_start[i + 1] += t->child_start[i];
    return RA_OK;
}

/* The skeleton's bones in pre-order, with an explicit stack (any depth):
 * names, rest offsets from the parent, channels. */
static ra_status mp_walk_bones(mp_tree *t, ra_error *err)
{
    const mp_cinf *k = t->k;
    size_t nb = t->nb;
    mp_state *st = t->st;
    uint32_t *stack = ra_arena_array(t->ar, nb + 1, sizeof *stack);
    if (!stack) return ra_fail_nomem(err, FMT);
    size_t sp = 0;
    for (uint32_t c = t->child_start[nb + 1]; c-- > t->child_start[nb];) stack[sp++] = t->children[c];
    while (sp) {
        uint32_t b = stack[--sp];
        const mp_bone *bone = &k->bones[b];
        int32_t me = (int32_t)t->nn++;
        t->node_of_bone[b] = me;
        t->parent_node[me] = t->parent[b] >= 0 ? t->node_of_bone[t->parent[b]] : 0;
        t->bone_of_node[me] = bone->id;
        ra_vec3 pos = ra_v3(bone->pos[0], bone->pos[1], bone->pos[2]);
        if (t->parent[b] >= 0) {
            const mp_bone *pb = &k->bones[t->parent[b]];
            pos = ra_v3_sub(pos, ra_v3(pb->pos[0], pb->pos[1], pb->pos[2]));
        }
        if (!(fabs(pos.x) <= FLT_MAX && fabs(pos.y) <= FLT_MAX && fabs(pos.z) <= FLT_MAX))
            return ra_fail(err, RA_ERR_BAD_VALUE, FMT_CINF, bone->offset, "bone.position",
                           "the offset from the parent bone exceeds the float range");
        st->rest[me] = pos;
        int64_t ni = ra_find_id(t->names, k->name_count, bone->id);
        t->nm[me] = ni >= 0 ? k->names[ni] : ra_arena_printf(t->ar, "bone_%u", bone->id);
        if (!t->nm[me]) return ra_fail_nomem(err, FMT);
        st->chan[me] = (int32_t)(t->a ? ra_find_id(t->chans, t->nc, bone->id) : -1);
        for (uint32_t c = t->child_start[b + 1]; c-- > t->child_start[b];) stack[sp++] = t->children[c];
    }
    return RA_OK;
}

/* Animated bones the skeleton lacks: bone_<id> nodes under the root (listed
 * in the metadata), and the warnings about the channels. */
static ra_status mp_missing_bones(mp_tree *t, ra_error *err)
{
    size_t missing = 0, dup_chan = 0, high_ids = 0;
    ra_writer mw;
    ra_writer_init(&mw);
    ra_wr_u8(&mw, '[');
    for (size_t c = 0; c < t->nc; c++) {
        uint32_t id = t->a->channels[c].bone_id;
        if (id >= MP_BONE_SLOTS) high_ids++;
        if (ra_find_id(t->chans, t->nc, id) != (int64_t)c) {
            dup_chan++;
            continue;
        }
        if (t->k && ra_find_id(t->bones, t->nb, id) >= 0) continue;
        int32_t me = (int32_t)t->nn++;
        t->parent_node[me] = 0;
        t->bone_of_node[me] = id;
        t->st->rest[me] = ra_v3(0, 0, 0);
        t->st->chan[me] = (int32_t)c;
        t->nm[me] = ra_arena_printf(t->ar, "bone_%u", id);
        if (!t->nm[me]) {
            ra_writer_free(&mw);
            return ra_fail_nomem(err, FMT);
        }
        if (t->k) {
            char num[16];
            snprintf(num, sizeof num, "%s%u", missing ? "," : "", id);
            ra_wr_bytes(&mw, num, strlen(num));
            missing++;
        }
    }
    ra_wr_bytes(&mw, "]", 2);
    bool ok = !mw.failed && (!missing || ra_meta_set_string(t->ar, &t->s->meta, "metroid.bones_missing_from_skeleton",
                                                            (const char *)mw.data));
    ra_writer_free(&mw);
    if (!ok) return ra_fail_nomem(err, FMT);
    ra_scene *s = t->s;
    if (missing)
        ra_scene_warn(s,
                      "%zu animated bone(s) are not in the skeleton; they are kept as bone_<id> nodes under the root",
                      missing);
    if (dup_chan)
        ra_scene_warn(s, "%zu channel(s) animate a bone an earlier channel animates; the first is used", dup_chan);
    if (high_ids)
        ra_scene_warn(s, "%zu channel(s) use bone ids of %u or more, which the game ignores", high_ids,
                      (unsigned)MP_BONE_SLOTS);
    return RA_OK;
}

/* The scene's nodes, the skeleton (a glTF skin, a Blender armature: every
 * node under the root) and the bones' bind data. */
static ra_status mp_add_nodes(mp_tree *t, ra_error *err)
{
    ra_scene *s = t->s;
    ra_arena *ar = t->ar;
    size_t nn = t->nn;
    static const char *const reserved[] = {"RootNode"};
    if (!ra_names_make_unique(ar, t->nm + 1, nn - 1, reserved, 1)) return ra_fail_nomem(err, FMT);
    for (size_t i = 0; i < nn; i++) {
        ra_mat4 m = i == 0 ? root_transform(t->st->native) : ra_m4_translation(t->st->rest[i]);
        if (ra_scene_add_node(s, t->nm[i], t->parent_node[i], &m) != (int32_t)i) return ra_fail_nomem(err, FMT);
        if (i && !ra_meta_set_int(ar, &s->nodes[i].meta, "metroid.bone_id", t->bone_of_node[i]))
            return ra_fail_nomem(err, FMT);
    }
    if (nn > 1) {
        s->skins = ra_arena_alloc(ar, sizeof *s->skins);
        uint32_t *joints = ra_arena_array_uninit(ar, nn - 1, sizeof *joints);
        if (!s->skins || !joints) return ra_fail_nomem(err, FMT);
        for (size_t i = 1; i < nn; i++) joints[i - 1] = (uint32_t)i;
        s->skins[0] = (ra_skin){"skeleton", -1, joints, nn - 1};
        s->skin_count = 1;
    }
    for (size_t b = 0; b < t->nb; b++) {
        if (!t->kept[b]) continue;
        const mp_bone *bone = &t->k->bones[b];
        ra_meta_list *md = &s->nodes[t->node_of_bone[b]].meta;
        bool ok = ra_meta_set_vec3(ar, md, "metroid.bind_position", ra_v3(bone->pos[0], bone->pos[1], bone->pos[2]));
        if (ok && t->k->game == 2) {
            const char *r1 = json_floats(ar, bone->rot_model, 4), *r2 = json_floats(ar, bone->rot_local, 4);
            ok = r1 && r2 && ra_meta_set_string(ar, md, "metroid.bind_rotation", r1) &&
                 ra_meta_set_string(ar, md, "metroid.bind_local_rotation", r2);
        }
        if (!ok) return ra_fail_nomem(err, FMT);
    }
    return RA_OK;
}

static ra_status build_nodes(ra_document *doc, ra_error *err)
{
    mp_doc *d = doc->model;
    mp_tree t;
    memset(&t, 0, sizeof t);
    t.doc = doc;
    t.st = doc->state;
    t.s = &doc->scene;
    t.ar = doc->arena;
    t.k = d->has_cinf ? &d->cinf : NULL;
    t.a = d->has_anim ? &d->anim : NULL;
    t.nb = t.k ? t.k->bone_count : 0;
    t.nc = t.a ? t.a->channel_count : 0;
    ra_arena *ar = t.ar;
    if (t.k) {
        t.bones = ra_sorted_ids(ar, t.k->bones, t.nb, sizeof *t.k->bones);
        t.names = ra_sorted_ids(ar, t.k->name_ids, t.k->name_count, sizeof *t.k->name_ids);
        t.build = ra_sorted_ids(ar, t.k->build_order, t.k->build_count, sizeof *t.k->build_order);
        if (!t.bones || !t.names || !t.build) return ra_fail_nomem(err, FMT);
    }
    if (t.a && !(t.chans = ra_sorted_ids(ar, t.a->channels, t.nc, sizeof *t.a->channels)))
        return ra_fail_nomem(err, FMT);
    size_t total = 1 + t.nb + t.nc;
    t.nm = ra_arena_array(ar, total, sizeof *t.nm);
    t.st->chan = ra_arena_array(ar, total, sizeof *t.st->chan);
    t.st->rest = ra_arena_array(ar, total, sizeof *t.st->rest);
    t.node_of_bone = ra_arena_array(ar, t.nb, sizeof *t.node_of_bone);
    t.parent_node = ra_arena_array(ar, total, sizeof *t.parent_node);
    t.bone_of_node = ra_arena_array(ar, total, sizeof *t.bone_of_node);
    if (!t.nm || !t.st->chan || !t.st->rest || (t.nb && !t.node_of_bone) || !t.parent_node || !t.bone_of_node)
        return ra_fail_nomem(err, FMT);
    t.nm[0] = "RootNode";
    t.parent_node[0] = -1;
    t.st->chan[0] = -1;
    t.nn = 1;
    ra_status rs = mp_bone_tree(&t, err);
    if (rs == RA_OK) rs = mp_walk_bones(&t, err);
    if (rs == RA_OK) rs = mp_missing_bones(&t, err);
    if (rs == RA_OK) rs = mp_add_nodes(&t, err);
    return rs;
}

/* ---- keys ------------------------------------------------------------------------------------------ */
/* Appends one channel's keys.  Between two consecutive points the game blends
 * with raw slerp / lerp, so the points themselves are the keys; where the
 * game's slerp takes the long arc (negative dot) the arc is split so that a
 * shortest-arc consumer follows it, and any arc longer than max_piece (4D
 * radians, half of max_key_angle) is split too. */
typedef struct point {
    double t;
    ra_quat q;
    ra_vec3 p, s;
} point;

/* The tracks are built in scratch memory (rotation arcs may add keys) and
 * only the keys that remain after simplifying are copied into the arena. */
static bool emit_points(ra_arena *ar, const mp_channel *ch, const point *pt, size_t n, double max_piece,
                        ra_channel *out, size_t *long_arcs)
{
    ra_vec_track tp = {0}, ts = {0};
    ra_quat_track tr = {0};
    bool rot = ch->has_rot && n, trans = ch->has_trans && n, scale = ch->has_scale && n;
    const double cmax = ra_quat_arc_cos(max_piece);
    bool ok = (!rot || ra_quat_track_reserve(&tr, n)) && (!trans || ra_vec_track_reserve(&tp, n)) &&
              (!scale || ra_vec_track_reserve(&ts, n));
    for (size_t i = 0; ok && i < n; i++) {
        if (rot) {
            if (i == 0) {
                ok = ra_quat_track_push(ar, &tr, pt[i].t, pt[i].q);
            } else {
                double d = ra_q_dot(pt[i - 1].q, pt[i].q);
                if (d <= -1.0 + 1e-12) {
                    /* the opposite quaternion: the same rotation, held */
                    ok = ra_quat_track_push(ar, &tr, pt[i].t, pt[i - 1].q);
                } else {
                    if (d < 0) (*long_arcs)++;
                    ok = ra_quat_track_arc_c(ar, &tr, pt[i - 1].t, pt[i - 1].q, pt[i].t, pt[i].q, max_piece, cmax);
                }
            }
        }
        if (ok && trans) ok = ra_vec_track_push(ar, &tp, pt[i].t, pt[i].p);
        if (ok && scale) ok = ra_vec_track_push(ar, &ts, pt[i].t, pt[i].s);
    }
    if (!ok) {
        ra_vec_track_release(&tp);
        ra_vec_track_release(&ts);
        ra_quat_track_release(&tr);
        return false;
    }
    /* each commit frees its scratch, also when it fails */
    ok = !trans || ra_vec_track_commit(ar, &tp, 1e-9, &out->position, &out->position_count);
    ok = (!scale || ra_vec_track_commit(ar, &ts, 1e-9, &out->scaling, &out->scaling_count)) && ok;
    ok = (!rot || ra_quat_track_commit(ar, &tr, 1e-9, 2 * max_piece, &out->rotation, &out->rotation_count)) && ok;
    return ok;
}

/* The times keys are emitted at: v2/v3 the keyed frames; v0 every frame up
 * to the duration, then the duration itself (the last frame blends back to
 * frame 0), and from K x interval on the game clamps that blend to frame 0. */
typedef struct mp_times {
    size_t np;       /* stored frames used */
    double dur;      /* the scene's duration */
    bool end_point;  /* a point at dur */
    bool wrap_point; /* a point at wrap_t */
    double wrap_t;
} mp_times;

static mp_times mp_times_of(const mp_anim *a)
{
    mp_times m = {0, a->duration, false, false, 0};
    uint32_t k = a->key_count;
    if (k) {
        for (uint32_t j = 0; j < k; j++)
            if (a->version != 0 || key_time(a, j) <= m.dur || j == 0) m.np++;
        if (a->version == 0 && m.dur > key_time(a, (uint32_t)m.np - 1)) m.end_point = true;
        if (a->version != 0 && key_time(a, k - 1) > m.dur) m.dur = key_time(a, k - 1);
    }
    if (a->version == 0 && k && key_time(a, 0) > m.dur) m.dur = key_time(a, 0);
    m.wrap_t = (double)k * a->interval;
    m.wrap_point = a->version == 0 && m.end_point && m.dur > m.wrap_t;
    return m;
}

/* One bone's keys: the stored values at their frames, the game's own
 * values at the extra points, emitted so slerp plays the game's arcs. */
static bool mp_bone_channel(const ra_document *doc, ra_arena *ar, uint32_t node, const mp_times *tm, point *pt,
                            double max_piece, ra_channel *out, size_t *long_arcs, size_t *zero_quats)
{
    const mp_anim *a = &((mp_doc *)doc->model)->anim;
    const mp_state *st = doc->state;
    const mp_channel *ch = &a->channels[st->chan[node]];
    for (size_t j = 0; j < tm->np; j++) {
        pt[j].t = key_time(a, (uint32_t)j);
        if (ch->has_rot) {
            ra_quat q = mp_key_rot(a, ch, (uint32_t)j);
            if (ra_q_len(q) <= 1e-6) (*zero_quats)++;
            pt[j].q = safe_quat(q);
        }
        if (ch->has_trans) pt[j].p = mp_key_trans(a, ch, (uint32_t)j);
        if (ch->has_scale) pt[j].s = mp_key_scale(a, ch, (uint32_t)j);
    }
    size_t n = tm->np;
    if (tm->wrap_point) {
        ra_trs e = eval_channel(a, ch, st->rest[node], tm->wrap_t);
        pt[n++] = (point){tm->wrap_t, e.r, e.t, e.s};
    }
    if (tm->end_point) {
        ra_trs e = eval_channel(a, ch, st->rest[node], tm->dur);
        pt[n++] = (point){tm->dur, e.r, e.t, e.s};
    }
    out->node = node;
    out->pre_state = out->post_state = a->looping ? RA_BEHAVIOUR_REPEAT : RA_BEHAVIOUR_CONSTANT;
    return emit_points(ar, ch, pt, n, max_piece, out, long_arcs);
}

/* The animated bones' channels as jobs of ra_parallel_for: job j fills
 * channels[j] for scene node node_of[j]; each worker has its points scratch
 * and its tallies. */
typedef struct bone_tally {
    point *pt;
    size_t long_arcs, zero_quats;
} bone_tally;

typedef struct bone_jobs {
    const ra_document *doc;
    const mp_times *tm;
    double max_piece;
    const uint32_t *node_of;
    ra_channel *channels;
    bone_tally *tally;   /* one per worker */
    ra_key_chunks *bulk; /* the model's key arrays, freed as the jobs end (NULL: kept) */
} bone_jobs;

/* fn (use or drop) on each of a channel's key arrays (bulk: read only by
 * its bone's job). */
static void channel_chunks(ra_key_chunks *k, const mp_channel *ch, void (*fn)(ra_key_chunks *, const void *))
{
    const void *arr[7] = {ch->rot, ch->trans, ch->scale, ch->qrot, ch->qtrans, ch->qscale, ch->wneg};
    for (int i = 0; i < 7; i++)
        if (arr[i]) fn(k, arr[i]);
}

static ra_status bone_job(void *ctx, size_t j, ra_worker *w, ra_error *err)
{
    const bone_jobs *bj = ctx;
    bone_tally *ty = &bj->tally[w->index];
    if (!ty->pt && !(ty->pt = ra_malloc((bj->tm->np + 2) * sizeof *ty->pt))) return ra_fail_nomem(err, FMT);
    bool ok = mp_bone_channel(bj->doc, w->arena, bj->node_of[j], bj->tm, ty->pt, bj->max_piece, &bj->channels[j],
                              &ty->long_arcs, &ty->zero_quats);
    if (bj->bulk) {
        const mp_doc *d = bj->doc->model;
        const mp_state *st = bj->doc->state;
        channel_chunks(bj->bulk, &d->anim.channels[st->chan[bj->node_of[j]]], ra_key_chunks_drop);
    }
    return ok ? RA_OK : ra_fail_nomem(err, FMT);
}

static ra_status build_animation(ra_document *doc, double max_piece, ra_error *err)
{
    mp_doc *d = doc->model;
    mp_state *st = doc->state;
    ra_scene *s = &doc->scene;
    const mp_anim *a = &d->anim;
    size_t animated = 0;
    /* the root-motion bone: 3 in Prime 1; Prime 2 renumbers bones from 0 and
     * names it in the header */
    uint32_t root = a->layout == MP_V0_MP2 || a->layout == MP_V2_MP2 ? a->root_bone : MP_ROOT_BONE;
    bool stripped = false;
    for (size_t i = 1; i < s->node_count; i++) {
        if (st->chan[i] < 0) continue;
        const mp_channel *ch = &a->channels[st->chan[i]];
        bool strip = st->strip_root && ch->bone_id == root;
        stripped = stripped || strip;
        if (strip || !(ch->has_rot || ch->has_trans || ch->has_scale)) {
            st->chan[i] = -1;
            continue;
        }
        animated++;
    }
    if (st->strip_root && !stripped)
        ra_scene_warn(s, "root_motion=strip: the root bone (id %u) has no channel here; nothing is stripped", root);
    if (!animated || !a->key_count) {
        /* Assimp refuses an animation without channels */
        ra_scene_warn(s, "no bone is animated%s; the scene has no animation",
                      st->strip_root ? " (root motion stripped)" : "");
        return RA_OK;
    }
    mp_times tm = mp_times_of(a);
    ra_animation *an = s->animations = ra_arena_alloc(doc->arena, sizeof *s->animations);
    if (!an) return ra_fail_nomem(err, FMT);
    s->animation_count = 1;
    an->name = d->stem;
    an->ticks_per_second = 1.0 / a->interval;
    an->duration = tm.dur;
    an->channel_count = animated;
    an->channels = ra_arena_array(doc->arena, an->channel_count, sizeof *an->channels);
    if (!an->channels) return ra_fail_nomem(err, FMT);
    size_t ci = 0, long_arcs = 0, zero_quats = 0;
    uint32_t *node_of = ra_arena_array_uninit(doc->arena, animated, sizeof *node_of);
    if (!node_of) return ra_fail_nomem(err, FMT);
    for (size_t i = 1; i < s->node_count; i++)
        if (st->chan[i] >= 0) node_of[ci++] = (uint32_t)i;
    unsigned threads = ra_document_threads(doc, (double)animated * (double)tm.np);
    bone_tally *tally = ra_calloc(threads, sizeof *tally);
    if (!tally) return ra_fail_nomem(err, FMT);
    bone_jobs bj = {doc, &tm, max_piece, node_of, an->channels, tally, NULL};
    /* each bone's key arrays go when its job ends (the stored arrays they
     * were read from, and the bones not animated, before the first): the
     * model does not stay whole beside the baked keys.  Nothing after the
     * bake reads them. */
    ra_status rs = RA_OK;
    if (doc->free_bulk_early && !(bj.bulk = ra_arena_take_bulk(doc->arena))) rs = ra_fail_nomem(err, FMT);
    for (size_t j = 0; bj.bulk && j < animated; j++)
        channel_chunks(bj.bulk, &a->channels[st->chan[node_of[j]]], ra_key_chunks_use);
    ra_key_chunks_ready(bj.bulk);
    if (rs == RA_OK) rs = ra_parallel_for(doc, threads, animated, bone_job, &bj, NULL, err);
    ra_key_chunks_free(bj.bulk);
    for (unsigned t = 0; t < threads; t++) {
        long_arcs += tally[t].long_arcs;
        zero_quats += tally[t].zero_quats;
        ra_free(tally[t].pt);
    }
    ra_free(tally);
    if (rs != RA_OK) return rs;
    if (long_arcs)
        ra_scene_warn(
            s,
            "%zu key pair(s) turn the long way (negative dot, as the game's slerp plays them); keys were added "
            "so shortest-arc players follow",
            long_arcs);
    if (zero_quats) ra_scene_warn(s, "%zu zero rotation key(s); identity is used", zero_quats);
    uint32_t k = a->key_count;
    if (a->version != 0 && key_time(a, k - 1) > (double)a->duration * (1 + 1e-6) + 1e-9)
        ra_scene_warn(s, "keys run to %.6g s, past the header duration of %.6g s; the scene duration covers them",
                      key_time(a, k - 1), (double)a->duration);
    return RA_OK;
}

/* ---- scene ------------------------------------------------------------------------------------------ */
/* The animation's header fields and what the reader noticed about them. */
static bool mp_anim_metadata(ra_document *doc, const mp_anim *a)
{
    ra_arena *ar = doc->arena;
    ra_meta_list *md = &doc->scene.meta;
    ra_scene *s = &doc->scene;
    const mp_state *st = doc->state;
    bool ok =
        ra_meta_set_string(ar, md, "metroid.layout", mp_layout_name(a->layout)) &&
        ra_meta_set_int(ar, md, "metroid.version", a->version) &&
        ra_meta_set_string(ar, md, "metroid.game", a->layout == MP_V0_MP2 || a->layout == MP_V2_MP2 ? "MP2" : "MP1") &&
        ra_meta_set_int(ar, md, "metroid.evnt_id", a->has_evnt && a->evnt_id != 0xFFFFFFFFu ? a->evnt_id : 0) &&
        ra_meta_set_bool(ar, md, "metroid.looping", a->looping != 0) &&
        ra_meta_set_int(ar, md, "metroid.root_bone_id", a->root_bone) &&
        ra_meta_set_double(ar, md, "metroid.interval", a->interval) &&
        ra_meta_set_double(ar, md, "metroid.duration", a->duration) &&
        ra_meta_set_int(ar, md, "metroid.frames", a->version == 0 ? a->key_count : a->bitmap_bits) &&
        ra_meta_set_int(ar, md, "metroid.keys", a->key_count) &&
        ra_meta_set_string(ar, md, "metroid.root_motion", st->strip_root ? "stripped" : "kept");
    if (ok && a->version != 0)
        ok = ra_meta_set_int(ar, md, "metroid.rotation_divisor", a->rot_div) &&
             ra_meta_set_double(ar, md, "metroid.translation_multiplier", a->trans_mult);
    if (ok && a->layout == MP_V2_MP2) ok = ra_meta_set_double(ar, md, "metroid.scale_multiplier", a->scale_mult);
    if (ok && a->trailing_size) ok = ra_meta_set_int(ar, md, "metroid.trailing_bytes", (int64_t)a->trailing_size);
    if (a->trailing_size && !mp_is_padding(a->trailing, a->trailing_size))
        ra_scene_warn(s, "%zu bytes after the animation data are not 0xFF padding; ignored", a->trailing_size);
    if (a->version != 0 &&
        (a->header_channels != a->desc_count || (a->layout != MP_V2_MP2 && a->channel_count_dup != a->desc_count)))
        ra_scene_warn(s, "the header says %u channels, the descriptor list holds %u; the descriptors are used",
                      a->header_channels, a->desc_count);
    if (a->version != 0 && a->bitmap_bits % 32 && a->bitmap[a->bitmap_bits / 32] >> (a->bitmap_bits % 32))
        ra_scene_warn(s, "key bitmap bits past frame %u are set; ignored", a->bitmap_bits - 1);
    if (a->key_count == 0) ra_scene_warn(s, "the animation has no frames");
    return ok;
}

/* Where the skeleton came from, its fields, and the animation's. */
static ra_status mp_metadata(ra_document *doc, ra_error *err)
{
    mp_doc *d = doc->model;
    ra_arena *ar = doc->arena;
    ra_meta_list *md = &doc->scene.meta;
    ra_scene *s = &doc->scene;
    const mp_state *st = doc->state;
    ra_status rs = ra_scene_standard_meta(
        doc, d->has_anim ? 1.0 / d->anim.interval : 0,
        st->native ? "native (right-handed, Z up)"
                   : "converted (right-handed, Y up: the root node turns the Z-up file -90 deg about X)",
        err);
    if (rs != RA_OK) return rs;
    bool ok = ra_meta_set_string(ar, md, "metroid.skeleton_source", d->cinf_source) &&
              ra_meta_set_bool(ar, md, "metroid.skeleton_found", d->has_cinf);
    if (ok && d->cinf_path) ok = ra_meta_set_string(ar, md, "metroid.skeleton", d->cinf_path);
    if (ok && d->ch.name) ok = ra_meta_set_string(ar, md, "metroid.character", d->ch.name);
    if (ok && d->ch.not_in_pak) ok = ra_meta_set_string(ar, md, "metroid.model_not_in_pak", d->ch.not_in_pak);
    if (ok && !d->has_anim && doc->format == &ra_format_metroid_cmdl)
        ok = ra_meta_set_string(ar, md, "metroid.layout", d->ch.cmdl.version == 4 ? "cmdl-mp2" : "cmdl-mp1");
    else if (ok && !d->has_anim)
        ok = ra_meta_set_string(ar, md, "metroid.layout", d->cinf.game == 2 ? "cinf-mp2" : "cinf-mp1");
    if (ok && d->has_cinf)
        ok = ra_meta_set_int(ar, md, "metroid.skeleton_game", d->cinf.game) &&
             ra_meta_set_int(ar, md, "metroid.skeleton_bones", d->cinf.bone_count);
    if (ok && d->has_anim) ok = mp_anim_metadata(doc, &d->anim);
    if (ok && d->has_cinf && d->cinf.trailing_size && !mp_is_padding(d->cinf.trailing, d->cinf.trailing_size))
        ra_scene_warn(s, "%zu bytes after the skeleton data are not 0xFF padding; ignored", d->cinf.trailing_size);
    if (!ok) return ra_fail_nomem(err, FMT);
    if (d->has_anim && !d->has_cinf)
        ra_scene_warn(s, "no skeleton (CINF) found: bones are bone_<id> nodes under the root, without rest offsets or "
                         "hierarchy (give one with --option cinf=PATH)");
    return RA_OK;
}

static ra_status mp_to_scene(ra_document *doc, ra_error *err)
{
    mp_doc *d = doc->model;
    ra_scene_start start;
    ra_scene_start_init(doc, 150.0, &start);
    mp_state *st = doc->state = ra_arena_alloc(doc->arena, sizeof *st);
    if (!st) return ra_fail_nomem(err, FMT);
    st->native = start.native;
    st->strip_root = ra_options_is(&doc->options, "root_motion", "strip");
    ra_status rs = build_nodes(doc, err);
    /* a 4D arc of half the rotation angle per piece */
    if (rs == RA_OK && d->has_anim) rs = build_animation(doc, start.max_key_angle / 2, err);
    if (rs == RA_OK && d->ch.has_cmdl) rs = mp_build_model(doc, &d->ch, st->native, err);
    if (rs == RA_OK) rs = mp_metadata(doc, err);
    return rs;
}

/* ---- read -------------------------------------------------------------------------------------------- */
static ra_status load_cinf(ra_document *doc, mp_doc *d, const char *path, ra_error *err)
{
    ra_file_bytes f;
    ra_status st = ra_file_bytes_get(path, ra_max_file_size(&doc->options), &f, err);
    if (st == RA_OK) {
        st = mp_cinf_read(f.data, f.size, 0, doc->arena, &d->cinf, err);
        ra_file_bytes_free(&f);
    }
    if (st != RA_OK) return st;
    d->has_cinf = true;
    d->cinf_path = ra_arena_strndup(doc->arena, path, strlen(path));
    return d->cinf_path ? RA_OK : ra_fail_nomem(err, FMT);
}

/* ---- the character: model, skin, textures ------------------------------------------------------------ */
/* A CMDL or CSKR from bytes, named `name` in messages and metadata. */
static ra_status read_part(ra_document *doc, mp_character *ch, bool skin, const uint8_t *data, size_t size,
                           const char *name, ra_error *err)
{
    ra_error e;
    ra_error_clear(&e);
    ra_status st = skin ? mp_cskr_read(data, size, doc->arena, &ch->cskr, &e)
                        : mp_cmdl_read(data, size, doc->arena, &ch->cmdl, &e);
    if (st == RA_ERR_NO_MEMORY) return ra_fail(err, st, FMT, RA_NO_OFFSET, skin ? "cskr" : "cmdl", "out of memory");
    if (st != RA_OK)
        return ra_fail_wrap(err, &e, skin ? "metroid_cskr" : FMT_CMDL, e.offset, skin ? "cskr" : "cmdl", "%s %s",
                            skin ? "skin" : "model", name);
    if (skin) ch->has_cskr = true, ch->cskr_path = name;
    else ch->has_cmdl = true, ch->cmdl_path = name;
    return RA_OK;
}

static ra_status read_part_file(ra_document *doc, mp_character *ch, bool skin, const char *path, ra_error *err)
{
    ra_file_bytes f;
    ra_error e;
    ra_error_clear(&e);
    ra_status st = ra_file_bytes_get(path, ra_max_file_size(&doc->options), &f, &e);
    if (st != RA_OK)
        return ra_fail_wrap(err, &e, skin ? "metroid_cskr" : FMT_CMDL, e.offset, skin ? "cskr" : "cmdl", "%s %s",
                            skin ? "skin" : "model", path);
    const char *name = ra_arena_strndup(doc->arena, path, strlen(path));
    st = name ? read_part(doc, ch, skin, f.data, f.size, name, err) : ra_fail_nomem(err, FMT);
    ra_file_bytes_free(&f);
    return st;
}

/* The option `key` (a path, or none), else the sibling STEM.<key> (one that
 * cannot be read is a warning). */
static ra_status loose_part(ra_document *doc, mp_character *ch, bool skin, ra_error *err)
{
    const char *key = skin ? "cskr" : "cmdl";
    const char *opt = ra_options_get(&doc->options, key);
    if (opt && *opt) return strcmp(opt, "none") ? read_part_file(doc, ch, skin, opt, err) : RA_OK;
    char path[4096];
    if (doc->in_archive || !mp_find_beside(doc->filename, key, true, path, sizeof path)) return RA_OK;
    ra_error e;
    ra_error_clear(&e);
    ra_status st = read_part_file(doc, ch, skin, path, &e);
    if (st == RA_ERR_NO_MEMORY) return ra_fail(err, st, FMT, RA_NO_OFFSET, key, "out of memory reading %s", path);
    if (st != RA_OK) {
        char buf[400];
        ra_error_format(&e, buf, sizeof buf);
        ra_scene_warn(&doc->scene, "the %s %s could not be read (%s); loading without it", skin ? "skin" : "model",
                      path, buf);
        if (skin) memset(&ch->cskr, 0, sizeof ch->cskr), ch->has_cskr = false;
        else memset(&ch->cmdl, 0, sizeof ch->cmdl), ch->has_cmdl = false;
    }
    return RA_OK;
}

static ra_status pak_texture(void *ctx, uint32_t id, const uint8_t **data, size_t *size, uint8_t **owned, ra_error *err)
{
    *owned = NULL;
    return mp_pak_resource(ctx, "TXTR", id, data, size, err);
}

/* The model and skin of an ANCS character in the pak (character=NAME, else
 * the first), with that character's skeleton when it is another's. */
static ra_status pak_character(ra_document *doc, mp_doc *d, ra_error *err)
{
    ra_archive *ar = doc->archive;
    mp_character *ch = &d->ch;
    const mp_pak_character *chars = NULL;
    size_t n = mp_pak_characters(ar, doc->archive_item, &chars), pick = 0;
    const char *want = ra_options_get(&doc->options, "character");
    if (want && *want) {
        while (pick < n && strcmp(chars[pick].name, want)) pick++;
        if (pick == n)
            return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "character",
                           "no character '%s' in the ANCS of this animation (%zu character(s); retroanim dump "
                           "--source lists them)",
                           want, n);
    }
    if (!n) return RA_OK;
    const mp_pak_character *pc = &chars[pick];
    ch->name = pc->name;
    const uint8_t *data = NULL;
    size_t size = 0;
    ra_error e;
    ra_error_clear(&e);
    if (pick && !ra_options_get(&doc->options, "cinf") && pc->cinf != chars[0].cinf) {
        memset(&d->cinf, 0, sizeof d->cinf);
        d->has_cinf = false;
        d->cinf_path = ra_arena_printf(doc->arena, "CINF %08X", pc->cinf);
        if (!d->cinf_path) return ra_fail_nomem(err, FMT);
        if (mp_pak_resource(ar, "CINF", pc->cinf, &data, &size, &e) != RA_OK ||
            mp_cinf_read(data, size, 0, doc->arena, &d->cinf, &e) != RA_OK)
            return ra_fail_wrap(err, &e, FMT_CINF, e.offset, "cinf", "skeleton %s of %s", d->cinf_path, pc->name);
        d->has_cinf = true;
        d->cinf_source = "archive";
    }
    for (int skin = 0; skin < 2; skin++) {
        const char *key = skin ? "cskr" : "cmdl";
        const char *opt = ra_options_get(&doc->options, key);
        ra_status st = RA_OK;
        if (skin && !ch->has_cmdl) { /* no model: the skin is only looked for, to say where both are */
            if (ch->not_in_pak && !(opt && *opt) &&
                mp_pak_resource(ar, "CSKR", pc->cskr, &data, &size, &e) == RA_ERR_USAGE) {
                ch->not_in_pak = ra_arena_printf(doc->arena, "%s, CSKR %08X", ch->not_in_pak, pc->cskr);
                if (!ch->not_in_pak) return ra_fail_nomem(err, FMT);
            }
            return RA_OK;
        }
        if (opt && *opt) {
            if (strcmp(opt, "none")) st = read_part_file(doc, ch, skin, opt, err);
        } else {
            uint32_t id = skin ? pc->cskr : pc->cmdl;
            ra_error_clear(&e);
            st = mp_pak_resource(ar, skin ? "CSKR" : "CMDL", id, &data, &size, &e);
            const char *name = ra_arena_printf(doc->arena, "%s %08X", skin ? "CSKR" : "CMDL", id);
            if (!name) return ra_fail_nomem(err, FMT);
            if (st == RA_ERR_USAGE) { /* shared resources live in other paks: said in the metadata */
                ch->not_in_pak = ch->not_in_pak ? ra_arena_printf(doc->arena, "%s, %s", ch->not_in_pak, name) : name;
                if (!ch->not_in_pak) return ra_fail_nomem(err, FMT);
                st = RA_OK;
            } else {
                /* a model or skin that cannot be unpacked or read is left out: the animation still exports */
                ra_error pe;
                ra_error_clear(&pe);
                if (st == RA_OK) {
                    st = skin ? mp_cskr_read(data, size, doc->arena, &ch->cskr, &pe)
                              : mp_cmdl_read(data, size, doc->arena, &ch->cmdl, &pe);
                    if (st == RA_OK && skin) ch->has_cskr = true, ch->cskr_path = name;
                    else if (st == RA_OK) ch->has_cmdl = true, ch->cmdl_path = name;
                } else {
                    pe = e;
                }
                if (st == RA_ERR_NO_MEMORY) return ra_fail(err, st, FMT, RA_NO_OFFSET, key, "out of memory");
                if (st != RA_OK) {
                    char buf[RA_ERROR_TEXT_MAX];
                    ra_error_format(&pe, buf, sizeof buf);
                    ra_scene_warn(&doc->scene, "the %s %s of %s could not be read (%s); loading without it",
                                  skin ? "skin" : "model", name, pc->name, buf);
                    if (skin) memset(&ch->cskr, 0, sizeof ch->cskr), ch->has_cskr = false;
                    else memset(&ch->cmdl, 0, sizeof ch->cmdl), ch->has_cmdl = false;
                    st = RA_OK;
                }
            }
        }
        if (st != RA_OK) return st;
    }
    if (!ch->has_cmdl) return RA_OK;
    return mp_character_textures(doc, ch, pak_texture, ar, err);
}

/* The character of a loose file (options, siblings) or of a pak item. */
static ra_status load_character(ra_document *doc, mp_doc *d, ra_error *err)
{
    mp_character *ch = &d->ch;
    if (doc->in_archive && doc->archive) return pak_character(doc, d, err);
    const char *want = ra_options_get(&doc->options, "character");
    if (want && *want) ra_scene_warn(&doc->scene, "character=%s applies to animations inside a pak; ignored", want);
    ra_status st = ch->has_cmdl ? RA_OK : loose_part(doc, ch, false, err);
    if (st == RA_OK && ch->has_cmdl) st = loose_part(doc, ch, true, err);
    if (st != RA_OK || !ch->has_cmdl) return st;
    mp_beside b = {ch->cmdl_path, ra_max_file_size(&doc->options)};
    return mp_character_textures(doc, ch, mp_textures_beside, &b, err);
}

static ra_status mp_read_anim(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    mp_doc *d = ra_arena_alloc(doc->arena, sizeof *d);
    if (!d) return ra_fail_nomem(err, FMT);
    mp_layout hint = 0;
    const char *lo = ra_options_get(&doc->options, "layout");
    if (lo && *lo && strcmp(lo, "auto") && !mp_layout_from_name(lo, &hint))
        return ra_fail(err, RA_ERR_USAGE, FMT, RA_NO_OFFSET, "layout",
                       "layout must be auto, v0-mp1, v0-mp2, v2-mp1, v2-mp2, v2-demo or v3-pc, not '%s'", lo);
    /* the bitstream in as many runs as the load's threads for a large file */
    ra_status st = mp_anim_read_run(data, size, hint, doc->arena, &d->anim, err, ra_document_read_runner, doc,
                                    ra_document_threads(doc, RA_PARALLEL_MIN_WORK));
    if (st != RA_OK) return st;
    d->has_anim = true;
    d->stem = ra_file_stem(doc->arena, doc->filename, "ANIM");
    if (!d->stem) return ra_fail_nomem(err, FMT);
    doc->model = d;

    /* the skeleton: option, sibling, the folder's only CINF */
    const char *opt = ra_options_get(&doc->options, "cinf");
    d->cinf_source = "none";
    if (opt && *opt && strcmp(opt, "none")) {
        ra_error e;
        ra_error_clear(&e);
        if (load_cinf(doc, d, opt, &e) != RA_OK) {
            return ra_fail_wrap(err, &e, FMT_CINF, e.offset, "cinf", "skeleton %s", opt);
        }
        d->cinf_source = "option";
    } else if (!opt && doc->in_archive) {
        /* the archive's skeleton (the ANCS character's CINF), or none */
        if (doc->companion) {
            ra_error e;
            ra_error_clear(&e);
            if (mp_cinf_read(doc->companion, doc->companion_size, 0, doc->arena, &d->cinf, &e) != RA_OK) {
                return ra_fail_wrap(err, &e, FMT_CINF, e.offset, "cinf", "skeleton %s", doc->companion_name);
            }
            d->has_cinf = true;
            d->cinf_path = doc->companion_name;
            d->cinf_source = "archive";
        }
    } else if (!opt && doc->filename) {
        char path[4096];
        bool sibling;
        if (mp_find_cinf(doc->filename, path, sizeof path, &sibling)) {
            ra_error e;
            ra_error_clear(&e);
            ra_status cs = load_cinf(doc, d, path, &e);
            if (cs == RA_OK) {
                d->cinf_source = sibling ? "sibling" : "folder";
            } else if (cs == RA_ERR_NO_MEMORY) {
                return ra_fail(err, cs, FMT, RA_NO_OFFSET, "cinf", "out of memory reading the skeleton %s", path);
            } else {
                char buf[400];
                ra_error_format(&e, buf, sizeof buf);
                ra_scene_warn(&doc->scene, "the skeleton %s could not be read (%s); loading without it", path, buf);
                d->cinf_source = "unreadable";
                d->has_cinf = false;
                memset(&d->cinf, 0, sizeof d->cinf);
            }
        }
    }
    return load_character(doc, d, err);
}

/* A model alone: its skin and skeleton from options or same-stem siblings
 * (static without them), its textures beside it. */
static ra_status mp_read_cmdl(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    mp_doc *d = ra_arena_alloc(doc->arena, sizeof *d);
    if (!d) return ra_fail_nomem(err, FMT_CMDL);
    ra_status st = mp_cmdl_read(data, size, doc->arena, &d->ch.cmdl, err);
    if (st != RA_OK) return st;
    d->ch.has_cmdl = true;
    d->ch.cmdl_path = doc->filename ? ra_arena_strndup(doc->arena, doc->filename, strlen(doc->filename)) : NULL;
    d->stem = ra_file_stem(doc->arena, doc->filename, "CMDL");
    if (!d->stem || (doc->filename && !d->ch.cmdl_path)) return ra_fail_nomem(err, FMT_CMDL);
    d->cinf_source = "none";
    doc->model = d;
    const char *opt = ra_options_get(&doc->options, "cinf");
    char path[4096];
    if (opt && *opt && strcmp(opt, "none")) {
        ra_error e;
        ra_error_clear(&e);
        if (load_cinf(doc, d, opt, &e) != RA_OK)
            return ra_fail_wrap(err, &e, FMT_CINF, e.offset, "cinf", "skeleton %s", opt);
        d->cinf_source = "option";
    } else if (!opt && mp_find_beside(doc->filename, "cinf", true, path, sizeof path)) {
        ra_error e;
        ra_error_clear(&e);
        ra_status cs = load_cinf(doc, d, path, &e);
        if (cs == RA_ERR_NO_MEMORY) return ra_fail(err, cs, FMT_CMDL, RA_NO_OFFSET, "cinf", "out of memory");
        if (cs == RA_OK) {
            d->cinf_source = "sibling";
        } else {
            char buf[400];
            ra_error_format(&e, buf, sizeof buf);
            ra_scene_warn(&doc->scene, "the skeleton %s could not be read (%s); loading without it", path, buf);
            d->cinf_source = "unreadable";
            d->has_cinf = false;
            memset(&d->cinf, 0, sizeof d->cinf);
        }
    }
    return load_character(doc, d, err);
}

static ra_status mp_read_cinf(ra_document *doc, const uint8_t *data, size_t size, ra_error *err)
{
    mp_doc *d = ra_arena_alloc(doc->arena, sizeof *d);
    if (!d) return ra_fail_nomem(err, FMT);
    double g = ra_options_get_double(&doc->options, "game", 0);
    if (g != 0 && g != 1 && g != 2)
        return ra_fail(err, RA_ERR_USAGE, FMT_CINF, RA_NO_OFFSET, "game", "game must be 1 or 2");
    ra_status st = mp_cinf_read(data, size, (int)g, doc->arena, &d->cinf, err);
    if (st != RA_OK) return st;
    d->has_cinf = true;
    d->cinf_source = "file";
    d->stem = ra_file_stem(doc->arena, doc->filename, "ANIM");
    doc->model = d;
    if (!d->stem) return ra_fail_nomem(err, FMT);
    /* the character beside its skeleton (same-stem .cmdl and .cskr): shown in its bind pose */
    return load_character(doc, d, err);
}

static ra_status mp_write_anim(const ra_document *doc, ra_writer *w, ra_error *err)
{
    const mp_doc *d = doc->model;
    return mp_anim_write(&d->anim, w, err);
}

static ra_status mp_write_cmdl(const ra_document *doc, ra_writer *w, ra_error *err)
{
    const mp_doc *d = doc->model;
    return ra_wr_bytes(w, d->ch.cmdl.bytes, d->ch.cmdl.size) ? RA_OK : ra_fail_nomem(err, FMT_CMDL);
}

static ra_status mp_write_cinf(const ra_document *doc, ra_writer *w, ra_error *err)
{
    const mp_doc *d = doc->model;
    return mp_cinf_write(&d->cinf, w, err);
}

static bool is_mp_doc(const ra_document *doc)
{
    return doc && doc->model &&
           (doc->format == &ra_format_metroid_anim || doc->format == &ra_format_metroid_cinf ||
            doc->format == &ra_format_metroid_cmdl);
}

const mp_anim *mp_document_anim(const ra_document *doc)
{
    const mp_doc *d = is_mp_doc(doc) ? doc->model : NULL;
    return d && d->has_anim ? &d->anim : NULL;
}

const mp_cinf *mp_document_cinf(const ra_document *doc)
{
    const mp_doc *d = is_mp_doc(doc) ? doc->model : NULL;
    return d && d->has_cinf ? &d->cinf : NULL;
}

/* ---- dump --source ------------------------------------------------------------------------------------ */
static void json_quant(ra_json *j, const char *key, const mp_quant *q)
{
    ra_json_key(j, key);
    ra_json_begin_array(j);
    for (int i = 0; i < 3; i++) {
        ra_json_begin_object(j);
        ra_json_key(j, "initial");
        ra_json_int(j, q[i].init);
        ra_json_key(j, "bits");
        ra_json_uint(j, q[i].bits);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
}

#define JU(k, v) (ra_json_key(j, k), ra_json_uint(j, v))
#define JN(k, v) (ra_json_key(j, k), ra_json_number(j, v))

static void dump_anim(ra_json *j, const mp_anim *a)
{
    ra_json_begin_object(j);
    ra_json_key(j, "layout");
    ra_json_string(j, mp_layout_name(a->layout));
    JU("version", a->version);
    JN("duration", a->duration);
    JN("interval", a->interval);
    JU("root_bone", a->root_bone);
    if (a->has_evnt) JU("evnt_id", a->evnt_id);
    if (a->version == 0) {
        JU("duration_state", a->duration_state);
        JU("interval_state", a->interval_state);
        JU("frame_count", a->key_count);
    } else {
        JU("scratch_size", a->scratch_size);
        if (a->layout == MP_V2_MP2) JU("mp2_tag", a->mp2_tag);
        else JU("unknown_1", a->unk_0c);
        JU("looping", a->looping);
        JU("rotation_divisor", a->rot_div);
        JN("translation_multiplier", a->trans_mult);
        if (a->layout == MP_V2_MP2) JN("scale_multiplier", a->scale_mult);
        JU("channel_count", a->header_channels);
        JU("unknown_2", a->unk_2c);
        JU("key_bitmap_bits", a->bitmap_bits);
        if (a->layout != MP_V2_MP2) JU("channel_count_2", a->channel_count_dup);
        JU("descriptor_count", a->desc_count);
        JU("bitstream_offset", a->bitstream_offset);
        JU("bitstream_size", a->bitstream_size);
    }
    ra_json_key(j, "key_frames");
    ra_json_begin_array(j);
    for (uint32_t k = 0; k < a->key_count; k++) ra_json_uint(j, a->key_frames[k]);
    ra_json_end_array(j);
    ra_json_key(j, "channels");
    ra_json_begin_array(j);
    for (size_t c = 0; c < a->channel_count; c++) {
        const mp_channel *ch = &a->channels[c];
        ra_json_begin_object(j);
        JU("bone_id", ch->bone_id);
        if (a->version != 0) {
            JU("rotation_key_count", ch->rot_count);
            if (ch->has_rot) json_quant(j, "rotation", ch->rq);
            JU("translation_key_count", ch->trans_count);
            if (ch->has_trans) json_quant(j, "translation", ch->tq);
            if (a->layout == MP_V2_MP2) {
                JU("scale_key_count", ch->scale_count);
                if (ch->has_scale) json_quant(j, "scale", ch->sq);
            }
        }
        if (ch->has_rot) {
            ra_json_key(j, "rotations_wxyz");
            ra_json_begin_array(j);
            for (uint32_t k = 0; k < a->key_count; k++) {
                ra_quat q = mp_key_rot(a, ch, k);
                ra_json_begin_array(j);
                ra_json_number(j, q.w);
                ra_json_number(j, q.x);
                ra_json_number(j, q.y);
                ra_json_number(j, q.z);
                ra_json_end_array(j);
            }
            ra_json_end_array(j);
        }
        if (ch->has_trans) {
            ra_json_key(j, "translations");
            ra_json_begin_array(j);
            for (uint32_t k = 0; k < a->key_count; k++) ra_json_vec3(j, mp_key_trans(a, ch, k));
            ra_json_end_array(j);
        }
        if (ch->has_scale) {
            ra_json_key(j, "scales");
            ra_json_begin_array(j);
            for (uint32_t k = 0; k < a->key_count; k++) ra_json_vec3(j, mp_key_scale(a, ch, k));
            ra_json_end_array(j);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    JU("trailing_bytes", a->trailing_size);
    ra_json_end_object(j);
}

static void dump_cinf(ra_json *j, const mp_cinf *k)
{
    ra_json_begin_object(j);
    JU("game", (unsigned)k->game);
    ra_json_key(j, "bones");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < k->bone_count; i++) {
        const mp_bone *b = &k->bones[i];
        ra_json_begin_object(j);
        JU("id", b->id);
        JU("parent", b->parent);
        ra_json_key(j, "position");
        ra_json_vec3(j, ra_v3(b->pos[0], b->pos[1], b->pos[2]));
        if (k->game == 2) {
            ra_json_key(j, "rotation_wxyz");
            ra_json_begin_array(j);
            for (int c = 0; c < 4; c++) ra_json_number(j, b->rot_model[c]);
            ra_json_end_array(j);
            ra_json_key(j, "local_rotation_wxyz");
            ra_json_begin_array(j);
            for (int c = 0; c < 4; c++) ra_json_number(j, b->rot_local[c]);
            ra_json_end_array(j);
        }
        ra_json_key(j, "links");
        ra_json_begin_array(j);
        for (uint32_t l = 0; l < b->link_count; l++) ra_json_uint(j, b->links[l]);
        ra_json_end_array(j);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "build_order");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < k->build_count; i++) ra_json_uint(j, k->build_order[i]);
    ra_json_end_array(j);
    ra_json_key(j, "names");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < k->name_count; i++) {
        ra_json_begin_object(j);
        ra_json_key(j, "name");
        ra_json_string(j, k->names[i]);
        JU("bone_id", k->name_ids[i]);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    JU("trailing_bytes", k->trailing_size);
    ra_json_end_object(j);
}

static void dump_cmdl(ra_json *j, const mp_character *ch)
{
    const mp_cmdl *m = &ch->cmdl;
    ra_json_begin_object(j);
    if (ch->name) {
        ra_json_key(j, "character");
        ra_json_string(j, ch->name);
    }
    JU("version", m->version);
    JU("flags", m->flags);
    JU("section_count", m->section_count);
    JU("material_sets", m->material_sets);
    JU("positions", m->pos_count);
    JU("normals", m->nrm_count);
    JU("colors", m->clr_count);
    JU("uvs", m->uv_count);
    JU("short_uvs", m->suv_count);
    ra_json_key(j, "textures");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < m->texture_count; i++) ra_json_uint(j, m->texture_ids[i]);
    ra_json_end_array(j);
    ra_json_key(j, "materials");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < m->material_count; i++) {
        const mp_material *mt = &m->materials[i];
        ra_json_begin_object(j);
        JU("flags", mt->flags);
        JU("vertex_attributes", mt->vtx_flags);
        JU("tev_stages", mt->tev_count);
        JU("blend_src", mt->blend_src);
        JU("blend_dst", mt->blend_dst);
        if (mt->has_texture) {
            JU("base_texture", mt->base_texture);
            JU("base_uv", mt->base_uv);
        }
        if (mt->has_konst_color) JU("konst_color", mt->konst_color);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "surfaces");
    ra_json_begin_array(j);
    for (uint32_t i = 0; i < m->surface_count; i++) {
        ra_json_begin_object(j);
        JU("material", m->surfaces[i].material);
        JU("triangles", m->surfaces[i].tri_count);
        JU("offset", m->surfaces[i].offset);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_key(j, "loaded_textures");
    ra_json_begin_array(j);
    for (size_t i = 0; i < ch->texture_count; i++) {
        const mp_txtr *t = &ch->textures[i];
        ra_json_begin_object(j);
        JU("id", ch->texture_ids[i]);
        ra_json_key(j, "found");
        ra_json_bool(j, t->rgba != NULL);
        if (t->rgba) {
            ra_json_key(j, "format");
            ra_json_string(j, mp_txtr_format_name(t->format));
            JU("width", t->width);
            JU("height", t->height);
            JU("mips", t->mips);
        }
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    ra_json_end_object(j);
}

static void dump_cskr(ra_json *j, const mp_cskr *k)
{
    ra_json_begin_object(j);
    ra_json_key(j, "rules");
    ra_json_begin_array(j);
    for (uint32_t r = 0; r < k->rule_count; r++) {
        const mp_skin_rule *rule = &k->rules[r];
        ra_json_begin_object(j);
        JU("weight_count", rule->weight_count);
        ra_json_key(j, "weights");
        ra_json_begin_array(j);
        for (uint32_t q = 0; q < rule->used; q++) {
            ra_json_begin_object(j);
            JU("bone_id", rule->bone[q]);
            JN("weight", rule->weight[q]);
            ra_json_end_object(j);
        }
        ra_json_end_array(j);
        JU("vertex_count", rule->vertex_count);
        ra_json_end_object(j);
    }
    ra_json_end_array(j);
    JU("footer_bytes", k->footer_size);
    ra_json_end_object(j);
}

static void mp_dump_source(const ra_document *doc, ra_json *j)
{
    const mp_doc *d = doc->model;
    ra_json_begin_object(j);
    ra_json_key(j, "format");
    ra_json_string(j, doc->format->id);
    if (d->has_anim) {
        ra_json_key(j, "anim");
        dump_anim(j, &d->anim);
    }
    ra_json_key(j, "skeleton_source");
    ra_json_string(j, d->cinf_source);
    if (d->cinf_path) {
        ra_json_key(j, "skeleton_path");
        ra_json_string(j, d->cinf_path);
    }
    if (d->has_cinf) {
        ra_json_key(j, "cinf");
        dump_cinf(j, &d->cinf);
    }
    if (d->ch.has_cmdl) {
        ra_json_key(j, "cmdl");
        dump_cmdl(j, &d->ch);
    }
    if (d->ch.has_cskr) {
        ra_json_key(j, "cskr");
        dump_cskr(j, &d->ch.cskr);
    }
    ra_json_end_object(j);
}

/* ---- detection (a prefix of the file; no magic exists) -------------------------------------------------- */
static bool plausible_times(const uint8_t *dur, const uint8_t *iv)
{
    float d = ra_load_f32be(dur), i = ra_load_f32be(iv);
    return isfinite(d) && d >= 0 && d < 1e6f && isfinite(i) && i > 0 && i <= 10.0f;
}

/* version 2/3 header from `o` (the duration): interval, root bone, looping flag, divisor */
static bool plausible_v2_tail(const uint8_t *d, size_t n, size_t o)
{
    if (n < o + 20) return false;
    return plausible_times(d + o, d + o + 4) && ra_load_u32be(d + o + 8) < 256 && ra_load_u32be(d + o + 12) <= 1 &&
           ra_load_u32be(d + o + 16) != 0;
}

static int mp_detect(const uint8_t *d, size_t n)
{
    if (n < 32) return 0;
    uint32_t v = ra_load_u32be(d);
    if (v == 0) {
        if (!plausible_times(d + 4, d + 12) || ra_load_u32be(d + 8) > 4 || ra_load_u32be(d + 16) > 4) return 0;
        return ra_load_u32be(d + 28) == MP_BONE_SLOTS ? 60 : 0;
    }
    if (v != 2 && v != 3) return 0;
    if (v == 2 && d[8] == 1 && d[9] == 1 && plausible_v2_tail(d, n, 10)) return 60;
    if (ra_load_u32be(d + 12) == 1 && plausible_v2_tail(d, n, 16)) return 60;
    if (v == 2 && ra_load_u32be(d + 8) == 1 && plausible_v2_tail(d, n, 12)) return 55;
    return 0;
}

/* CINF: bone count, then the first bone: id < 100, finite position, and a
 * link count (Prime 1) or a unit quaternion (Prime 2). */
static int mp_cinf_detect(const uint8_t *d, size_t n)
{
    if (n < 32) return 0;
    uint32_t count = ra_load_u32be(d);
    if (count == 0 || count > 200 || ra_load_u32be(d + 4) >= MP_BONE_SLOTS) return 0;
    for (int i = 0; i < 3; i++)
        if (!isfinite(ra_load_f32be(d + 12 + 4 * i)) || fabsf(ra_load_f32be(d + 12 + 4 * i)) > 1e5f) return 0;
    uint32_t links = ra_load_u32be(d + 24);
    if (links >= 1 && links <= 100) return 40;
    if (n >= 44) {
        double q = 0;
        for (int i = 0; i < 4; i++) q += (double)ra_load_f32be(d + 24 + 4 * i) * ra_load_f32be(d + 24 + 4 * i);
        if (fabs(q - 1) < 1e-3) return 40;
    }
    return 0;
}

static const ra_option_decl mp_anim_options[] = {
    {"cinf", RA_OPT_PATH, 0, 0, false, NULL, "searched", "the skeleton (CINF) for an ANIM, or none"},
    {"cmdl", RA_OPT_PATH, 0, 0, false, NULL, "searched", "the character's model (CMDL) for an ANIM, or none"},
    {"cskr", RA_OPT_PATH, 0, 0, false, NULL, "searched", "the model's skin (CSKR), or none"},
    {"character", RA_OPT_STRING, 0, 0, false, NULL, "the first",
     "inside a pak: the ANCS character (by name) whose model the animation plays on"},
    {"layout", RA_OPT_ENUM, 0, 0, false, "auto|v0-mp1|v0-mp2|v2-mp1|v2-mp2|v2-demo|v3-pc", "auto",
     "force the ANIM layout when detection guesses wrong"},
    {"root_motion", RA_OPT_ENUM, 0, 0, false, "keep|strip", "keep",
     "strip: the character root (bone 3; in Prime 2 layouts the header's root bone), whose motion the game "
     "applies to the actor, stays at rest"},
};

const ra_format ra_format_metroid_anim = {
    "metroid_anim",
    "Metroid Prime 1/2 animation (ANIM, versions 0, 2 and the PC version 3)",
    "anim",
    "u32 BE version 0/2/3; v0: plausible times and a 100-entry bone map; v2: 0x0101 at 0x08 (Prime 2), "
    "1 at 0x0C (Prime 1) or 1 at 0x08 (Echoes demo), plausible times",
    mp_detect,
    mp_read_anim,
    mp_to_scene,
    mp_pose,
    mp_dump_source,
    mp_write_anim,
    .options = mp_anim_options,
    .option_count = sizeof mp_anim_options / sizeof mp_anim_options[0],
};

static const ra_option_decl mp_cinf_options[] = {
    {"game", RA_OPT_ENUM, 0, 0, false, "1|2", "detected", "force the Prime 1 or Prime 2 bone record"},
};

const ra_format ra_format_metroid_cinf = {
    "metroid_cinf",
    "Metroid Prime 1/2 skeleton (CINF), alone",
    "cinf",
    "no magic: a bone count of 1..200 and a plausible first bone record (low confidence; the extension decides)",
    mp_cinf_detect,
    mp_read_cinf,
    mp_to_scene,
    mp_pose,
    mp_dump_source,
    mp_write_cinf,
    .options = mp_cinf_options,
    .option_count = sizeof mp_cinf_options / sizeof mp_cinf_options[0],
};

/* CMDL: 0xDEADBABE (also Prime 3's, refused by version) */
static int mp_cmdl_detect(const uint8_t *d, size_t n) { return n >= 8 && ra_load_u32be(d) == 0xDEADBABEu ? 90 : 0; }

static const ra_option_decl mp_cmdl_options[] = {
    {"cinf", RA_OPT_PATH, 0, 0, false, NULL, "searched", "the skeleton (CINF) for an ANIM, or none"},
    {"cskr", RA_OPT_PATH, 0, 0, false, NULL, "searched", "the model's skin (CSKR), or none"},
};

const ra_format ra_format_metroid_cmdl = {
    "metroid_cmdl",
    "Metroid Prime 1/2 character model (CMDL), with its skin, skeleton and textures when found",
    "cmdl",
    "u32 BE 0xDEADBABE at 0 (versions 2 and 4 are read)",
    mp_cmdl_detect,
    mp_read_cmdl,
    mp_to_scene,
    mp_pose,
    mp_dump_source,
    mp_write_cmdl,
    .options = mp_cmdl_options,
    .option_count = sizeof mp_cmdl_options / sizeof mp_cmdl_options[0],
};
