/* LEGO Island .ani reader and writer: bytes <-> lego_ani, nothing else. */
#include <string.h>

#include "retroanim/lego_ani.h"

#define FMT "lego_ani"
/* smallest encodings, used to bound counts before allocating */
#define NODE_MIN_BYTES 16u /* nameLen + 4 key counts + numChildren */
#define ACTOR_MIN_BYTES 4u

/* A key array whose bytes were taken and whose array was made, to be
 * filled once the whole tree has been read (lego_ani_read_run). */
typedef struct key_task {
    const uint8_t *src;
    void *dst;
    uint16_t n;
    bool rot;
    lego_node *node; /* whose notes (track) it sets; NULL: a camera track */
    int track;
} key_task;

typedef struct rd {
    ra_cursor c;
    ra_arena *arena;
    uint32_t max_depth;
    size_t node_count;
    uint64_t pending; /* nodes declared by numChildren and not read yet */
    bool defer;       /* keys filled by the tasks, not as they are met */
    key_task *tasks;
    size_t ntasks, tcap;
    double keys; /* in the tasks */
} rd;

static bool oom(rd *r, const char *field)
{
    return ra_cursor_fail(&r->c, RA_ERR_NO_MEMORY, r->c.pos, field, "out of memory (memory_limit)");
}

/* What a track's keys show as they pass (lego_node's notes): whether the
 * times never decrease, and the last (largest) time. */
typedef struct track_notes {
    uint32_t prev, last;
    bool in_order;
} track_notes;

static inline void note_time(track_notes *tn, uint32_t raw)
{
    uint32_t t = lego_key_time(raw);
    tn->in_order &= t >= tn->prev;
    tn->last = t > tn->last ? t : tn->last;
    tn->prev = t;
}

/* The n keys at p into k; with a node, its notes of the track (each task
 * writes only its own track's). */
static void fill_trans(lego_trans_key *k, const uint8_t *p, uint16_t n, lego_node *nd, int track)
{
    track_notes tn = {0, 0, true};
    for (uint16_t i = 0; i < n; i++, p += 16) {
        k[i] = (lego_trans_key){ra_load_u32le(p), ra_load_f32le(p + 4), ra_load_f32le(p + 8), ra_load_f32le(p + 12)};
        note_time(&tn, k[i].raw);
    }
    if (nd) nd->keys_in_order[track] = tn.in_order, nd->last_key_ms[track] = tn.last;
}

static void fill_rot(lego_rot_key *k, const uint8_t *p, uint16_t n, lego_node *nd)
{
    track_notes tn = {0, 0, true};
    bool zero = false;
    for (uint16_t i = 0; i < n; i++, p += 20) {
        k[i] = (lego_rot_key){ra_load_u32le(p), ra_load_f32le(p + 4), ra_load_f32le(p + 8), ra_load_f32le(p + 12),
                              ra_load_f32le(p + 16)};
        note_time(&tn, k[i].raw);
        zero |= k[i].w == 0 && k[i].x == 0 && k[i].y == 0 && k[i].z == 0;
    }
    if (nd) nd->keys_in_order[1] = tn.in_order, nd->last_key_ms[1] = tn.last, nd->rot_zero = zero;
}

static void fill_task(const key_task *t)
{
    if (t->rot) fill_rot(t->dst, t->src, t->n, t->node);
    else fill_trans(t->dst, t->src, t->n, t->node, t->track);
}

/* The n keys at p into k: now, or as a task (r->defer). */
static bool fill_keys(rd *r, void *k, const uint8_t *p, uint16_t n, bool rot, lego_node *nd, int track,
                      const char *field)
{
    const key_task task = {p, k, n, rot, nd, track};
    if (!r->defer) {
        fill_task(&task);
        return true;
    }
    if (!n) return true;
    if (r->ntasks == r->tcap) {
        size_t cap = r->tcap ? 2 * r->tcap : 64;
        key_task *t = ra_realloc(r->tasks, cap * sizeof *t);
        if (!t) return oom(r, field);
        r->tasks = t, r->tcap = cap;
    }
    r->tasks[r->ntasks++] = task;
    r->keys += n;
    return true;
}

/* The keys are read as one block: the count was checked against the bytes
 * left, so every key is there (no key can be cut off by the file's end). */
static bool read_trans_keys(rd *r, uint16_t n, lego_trans_key **out, lego_node *nd, int track, const char *field)
{
    if (!ra_cursor_check_count(&r->c, n, 16, field)) return false;
    lego_trans_key *k = ra_arena_bulk_memdup(r->arena, NULL, n, sizeof *k); /* filled below */
    if (!k) return oom(r, field);
    const uint8_t *p = ra_cursor_take(&r->c, (size_t)n * 16, field);
    if (!p || !fill_keys(r, k, p, n, false, nd, track, field)) return false;
    *out = k;
    return ra_cursor_ok(&r->c);
}

static bool read_rot_keys(rd *r, uint16_t n, lego_rot_key **out, lego_node *nd, const char *field)
{
    if (!ra_cursor_check_count(&r->c, n, 20, field)) return false;
    lego_rot_key *k = ra_arena_bulk_memdup(r->arena, NULL, n, sizeof *k); /* filled below */
    if (!k) return oom(r, field);
    const uint8_t *p = ra_cursor_take(&r->c, (size_t)n * 20, field);
    if (!p || !fill_keys(r, k, p, n, true, nd, 1, field)) return false;
    *out = k;
    return ra_cursor_ok(&r->c);
}

/* The key arrays of a tree read with r->defer, as jobs. */
static ra_status task_job(void *ctx, size_t i, ra_arena *arena, ra_error *err)
{
    (void)arena;
    (void)err;
    fill_task(&((const key_task *)ctx)[i]);
    return RA_OK;
}

static bool read_node(rd *r, lego_node *n, uint32_t depth)
{
    if (depth > r->max_depth)
        return ra_cursor_fail(&r->c, RA_ERR_LIMIT, r->c.pos, "node", "tree nested deeper than max_depth");
    if (r->pending) r->pending--; /* this node was declared by its parent */
    if (!ra_rd_u32le(&r->c, &n->name_len, "node.name_length")) return false;
    if (!ra_rd_str(&r->c, r->arena, n->name_len, &n->name, "node.name")) return false;
    r->node_count++;
    for (int t = 0; t < 3; t++) n->keys_in_order[t] = true, n->last_key_ms[t] = 0; /* tracks without keys */
    n->rot_zero = false;
    n->keys_noted = true;
    if (!ra_rd_u16le(&r->c, &n->num_trans, "node.num_translation_keys")) return false;
    if (!read_trans_keys(r, n->num_trans, &n->trans, n, 0, "node.translation_key")) return false;
    if (!ra_rd_u16le(&r->c, &n->num_rot, "node.num_rotation_keys")) return false;
    if (!read_rot_keys(r, n->num_rot, &n->rot, n, "node.rotation_key")) return false;
    if (!ra_rd_u16le(&r->c, &n->num_scale, "node.num_scale_keys")) return false;
    if (!read_trans_keys(r, n->num_scale, &n->scale, n, 2, "node.scale_key")) return false;
    if (!ra_rd_u16le(&r->c, &n->num_morph, "node.num_morph_keys")) return false;
    if (!ra_cursor_check_count(&r->c, n->num_morph, 5, "node.morph_key")) return false;
    n->morph = ra_arena_array(r->arena, n->num_morph, sizeof *n->morph);
    if (!n->morph) return oom(r, "node.morph_key");
    for (uint16_t i = 0; i < n->num_morph; i++) {
        ra_rd_u32le(&r->c, &n->morph[i].raw, "node.morph_key");
        ra_rd_u8(&r->c, &n->morph[i].visible, "node.morph_key");
    }
    if (!ra_rd_u32le(&r->c, &n->num_children, "node.num_children")) return false;
    /* every declared node still to come needs NODE_MIN_BYTES: checking the
     * running total (not each count alone) bounds all node allocations by
     * the file size */
    r->pending += n->num_children;
    if (!ra_cursor_check_count(&r->c, r->pending, NODE_MIN_BYTES, "node.num_children")) return false;
    n->children = ra_arena_array(r->arena, n->num_children, sizeof *n->children);
    if (!n->children) return oom(r, "node.children");
    for (uint32_t i = 0; i < n->num_children; i++)
        if (!read_node(r, &n->children[i], depth + 1)) return false;
    return true;
}

static bool read_camera(rd *r, lego_camera *cam)
{
    if (!ra_rd_u16le(&r->c, &cam->num_pos, "camera.num_position_keys")) return false;
    if (!read_trans_keys(r, cam->num_pos, &cam->pos, NULL, 0, "camera.position_key")) return false;
    if (!ra_rd_u16le(&r->c, &cam->num_target, "camera.num_target_keys")) return false;
    if (!read_trans_keys(r, cam->num_target, &cam->target, NULL, 0, "camera.target_key")) return false;
    if (!ra_rd_u16le(&r->c, &cam->num_roll, "camera.num_roll_keys")) return false;
    if (!ra_cursor_check_count(&r->c, cam->num_roll, 8, "camera.roll_key")) return false;
    cam->roll = ra_arena_array(r->arena, cam->num_roll, sizeof *cam->roll);
    if (!cam->roll) return oom(r, "camera.roll_key");
    for (uint16_t i = 0; i < cam->num_roll; i++) {
        ra_rd_u32le(&r->c, &cam->roll[i].raw, "camera.roll_key");
        ra_rd_f32le(&r->c, &cam->roll[i].z, "camera.roll_key");
    }
    return ra_cursor_ok(&r->c);
}

/* lego_ani_read without the copy of the trailing bytes when !keep_trailing
 * (trailing_size is still set; trailing stays NULL): WORLD.WDB's models
 * read their embedded animation this way (declared in lego_wdb.h). */
ra_status lego_ani_read_ex(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                           lego_ani *a, bool keep_trailing, ra_error *err);

ra_status lego_ani_read(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                        lego_ani *a, ra_error *err)
{
    return lego_ani_read_ex(data, size, body_only, max_depth, arena, a, true, err);
}

static ra_status read_tree(rd *r, size_t size, bool body_only, lego_ani *a, bool keep_trailing, ra_error *err);

ra_status lego_ani_read_ex(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                           lego_ani *a, bool keep_trailing, ra_error *err)
{
    return lego_ani_read_run(data, size, body_only, max_depth, arena, a, keep_trailing, err, NULL, NULL);
}

ra_status lego_ani_read_run(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                            lego_ani *a, bool keep_trailing, ra_error *err, ra_read_runner run, void *run_ctx)
{
    memset(a, 0, sizeof *a);
    rd r = {0};
    ra_cursor_init(&r.c, data, size, body_only ? "lego_ani_body" : FMT, err);
    r.arena = arena;
    r.max_depth = max_depth ? max_depth : LEGO_DEFAULT_MAX_DEPTH;
    r.defer = run != NULL;
    ra_status st = read_tree(&r, size, body_only, a, keep_trailing, err);
    /* the keys, once the tree has been read whole (filling them cannot fail) */
    if (st == RA_OK && r.ntasks) st = run(run_ctx, r.ntasks, r.keys, task_job, r.tasks, RA_OK, NULL, err);
    ra_free(r.tasks);
    return st;
}

static ra_status read_tree(rd *r, size_t size, bool body_only, lego_ani *a, bool keep_trailing, ra_error *err)
{
    if (r->max_depth > LEGO_MAX_DEPTH_LIMIT) r->max_depth = LEGO_MAX_DEPTH_LIMIT;
    a->has_header = !body_only;
    if (!body_only) {
        if (!ra_rd_s32le(&r->c, &a->magic, "magic")) return err->code;
        if (a->magic != LEGO_ANI_MAGIC) {
            ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "magic", "magic is 0x%x, expected 0x11", (unsigned)a->magic);
            return err->code;
        }
        ra_rd_f32le(&r->c, &a->bounding_radius, "bounding_radius");
        for (int i = 0; i < 3; i++) ra_rd_f32le(&r->c, &a->center[i], "center");
        ra_rd_s32le(&r->c, &a->parse_scene, "has_camera_anim");
        ra_rd_s32le(&r->c, &a->val3, "unused");
    }
    if (!ra_rd_u32le(&r->c, &a->num_actors, "num_actors")) return err->code;
    if (!ra_cursor_check_count(&r->c, a->num_actors, ACTOR_MIN_BYTES, "num_actors")) return err->code;
    a->actors = ra_arena_array(r->arena, a->num_actors, sizeof *a->actors);
    if (!a->actors) {
        oom(r, "actors");
        return err->code;
    }
    for (uint32_t i = 0; i < a->num_actors; i++) {
        lego_actor *ac = &a->actors[i];
        if (!ra_rd_u32le(&r->c, &ac->name_len, "actor.name_length")) return err->code;
        if (!ra_rd_str(&r->c, r->arena, ac->name_len, &ac->name, "actor.name")) return err->code;
        if (ac->name_len && !ra_rd_u32le(&r->c, &ac->type, "actor.type")) return err->code;
    }
    if (!ra_rd_s32le(&r->c, &a->duration, "duration")) return err->code;
    if (a->parse_scene) {
        a->camera = ra_arena_alloc(r->arena, sizeof *a->camera);
        if (!a->camera) {
            oom(r, "camera");
            return err->code;
        }
        if (!read_camera(r, a->camera)) return err->code;
    }
    if (!read_node(r, &a->root, 0)) return err->code;
    a->node_count = r->node_count;
    a->trailing_size = size - r->c.pos;
    if (a->trailing_size && keep_trailing) {
        a->trailing = ra_arena_alloc(r->arena, a->trailing_size);
        if (!a->trailing) {
            oom(r, "trailing");
            return err->code;
        }
        ra_rd_bytes(&r->c, a->trailing, a->trailing_size, "trailing");
    }
    return err->code;
}

/* ---- writer ---------------------------------------------------------------------------------- */
static void write_trans(ra_writer *w, const lego_trans_key *k, uint16_t n)
{
    ra_wr_u16le(w, n);
    for (uint16_t i = 0; i < n; i++) {
        ra_wr_u32le(w, k[i].raw);
        ra_wr_f32le(w, k[i].x);
        ra_wr_f32le(w, k[i].y);
        ra_wr_f32le(w, k[i].z);
    }
}

static bool write_node(ra_writer *w, const lego_node *n, uint32_t depth)
{
    if (depth > LEGO_MAX_DEPTH_LIMIT) return false;
    ra_wr_u32le(w, n->name_len);
    ra_wr_bytes(w, n->name, n->name_len);
    write_trans(w, n->trans, n->num_trans);
    ra_wr_u16le(w, n->num_rot);
    for (uint16_t i = 0; i < n->num_rot; i++) {
        ra_wr_u32le(w, n->rot[i].raw);
        ra_wr_f32le(w, n->rot[i].w);
        ra_wr_f32le(w, n->rot[i].x);
        ra_wr_f32le(w, n->rot[i].y);
        ra_wr_f32le(w, n->rot[i].z);
    }
    write_trans(w, n->scale, n->num_scale);
    ra_wr_u16le(w, n->num_morph);
    for (uint16_t i = 0; i < n->num_morph; i++) {
        ra_wr_u32le(w, n->morph[i].raw);
        ra_wr_u8(w, n->morph[i].visible);
    }
    ra_wr_u32le(w, n->num_children);
    for (uint32_t i = 0; i < n->num_children; i++)
        if (!write_node(w, &n->children[i], depth + 1)) return false;
    return !w->failed;
}

ra_status lego_ani_write(const lego_ani *a, ra_writer *w, ra_error *err)
{
    if (a->has_header) {
        ra_wr_u32le(w, (uint32_t)a->magic);
        ra_wr_f32le(w, a->bounding_radius);
        for (int i = 0; i < 3; i++) ra_wr_f32le(w, a->center[i]);
        ra_wr_u32le(w, (uint32_t)a->parse_scene);
        ra_wr_u32le(w, (uint32_t)a->val3);
    }
    if (!a->has_header && a->parse_scene)
        return ra_fail(err, RA_ERR_BAD_VALUE, "lego_ani_body", RA_NO_OFFSET, "camera",
                       "a body-only animation cannot carry a camera");
    if ((a->parse_scene != 0) != (a->camera != NULL))
        return ra_fail(err, RA_ERR_BAD_VALUE, FMT, RA_NO_OFFSET, "has_camera_anim",
                       "camera flag and camera block disagree");
    ra_wr_u32le(w, a->num_actors);
    for (uint32_t i = 0; i < a->num_actors; i++) {
        ra_wr_u32le(w, a->actors[i].name_len);
        ra_wr_bytes(w, a->actors[i].name, a->actors[i].name_len);
        if (a->actors[i].name_len) ra_wr_u32le(w, a->actors[i].type);
    }
    ra_wr_u32le(w, (uint32_t)a->duration);
    if (a->camera) {
        write_trans(w, a->camera->pos, a->camera->num_pos);
        write_trans(w, a->camera->target, a->camera->num_target);
        ra_wr_u16le(w, a->camera->num_roll);
        for (uint16_t i = 0; i < a->camera->num_roll; i++) {
            ra_wr_u32le(w, a->camera->roll[i].raw);
            ra_wr_f32le(w, a->camera->roll[i].z);
        }
    }
    if (!write_node(w, &a->root, 0))
        return ra_fail(err, w->failed ? RA_ERR_NO_MEMORY : RA_ERR_LIMIT, FMT, RA_NO_OFFSET, "node",
                       "could not write the node tree");
    ra_wr_bytes(w, a->trailing, a->trailing_size);
    if (w->failed) return ra_fail(err, RA_ERR_NO_MEMORY, FMT, RA_NO_OFFSET, "", "out of memory writing");
    return RA_OK;
}
