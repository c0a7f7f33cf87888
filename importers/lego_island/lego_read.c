/* LEGO Island .ani reader and writer: bytes <-> lego_ani, nothing else. */
#include <string.h>

#include "retroanim/lego_ani.h"

#define FMT "lego_ani"
/* smallest encodings, used to bound counts before allocating */
#define NODE_MIN_BYTES 16u /* nameLen + 4 key counts + numChildren */
#define ACTOR_MIN_BYTES 4u

typedef struct rd {
    ra_cursor c;
    ra_arena *arena;
    uint32_t max_depth;
    size_t node_count;
    uint64_t pending; /* nodes declared by numChildren and not read yet */
} rd;

static bool oom(rd *r, const char *field)
{
    return ra_cursor_fail(&r->c, RA_ERR_NO_MEMORY, r->c.pos, field, "out of memory (memory_limit)");
}

/* The keys are read as one block: the count was checked against the bytes
 * left, so every key is there (no key can be cut off by the file's end). */
static bool read_trans_keys(rd *r, uint16_t n, lego_trans_key **out, const char *field)
{
    if (!ra_cursor_check_count(&r->c, n, 16, field)) return false;
    lego_trans_key *k = ra_arena_bulk_memdup(r->arena, NULL, n, sizeof *k); /* filled below */
    if (!k) return oom(r, field);
    const uint8_t *p = ra_cursor_take(&r->c, (size_t)n * 16, field);
    for (uint16_t i = 0; p && i < n; i++, p += 16)
        k[i] = (lego_trans_key){ra_load_u32le(p), ra_load_f32le(p + 4), ra_load_f32le(p + 8), ra_load_f32le(p + 12)};
    *out = k;
    return ra_cursor_ok(&r->c);
}

static bool read_rot_keys(rd *r, uint16_t n, lego_rot_key **out, const char *field)
{
    if (!ra_cursor_check_count(&r->c, n, 20, field)) return false;
    lego_rot_key *k = ra_arena_bulk_memdup(r->arena, NULL, n, sizeof *k); /* filled below */
    if (!k) return oom(r, field);
    const uint8_t *p = ra_cursor_take(&r->c, (size_t)n * 20, field);
    for (uint16_t i = 0; p && i < n; i++, p += 20)
        k[i] = (lego_rot_key){ra_load_u32le(p), ra_load_f32le(p + 4), ra_load_f32le(p + 8), ra_load_f32le(p + 12),
                              ra_load_f32le(p + 16)};
    *out = k;
    return ra_cursor_ok(&r->c);
}

static bool read_node(rd *r, lego_node *n, uint32_t depth)
{
    if (depth > r->max_depth)
        return ra_cursor_fail(&r->c, RA_ERR_LIMIT, r->c.pos, "node", "tree nested deeper than max_depth");
    if (r->pending) r->pending--; /* this node was declared by its parent */
    if (!ra_rd_u32le(&r->c, &n->name_len, "node.name_length")) return false;
    if (!ra_rd_str(&r->c, r->arena, n->name_len, &n->name, "node.name")) return false;
    r->node_count++;
    if (!ra_rd_u16le(&r->c, &n->num_trans, "node.num_translation_keys")) return false;
    if (!read_trans_keys(r, n->num_trans, &n->trans, "node.translation_key")) return false;
    if (!ra_rd_u16le(&r->c, &n->num_rot, "node.num_rotation_keys")) return false;
    if (!read_rot_keys(r, n->num_rot, &n->rot, "node.rotation_key")) return false;
    if (!ra_rd_u16le(&r->c, &n->num_scale, "node.num_scale_keys")) return false;
    if (!read_trans_keys(r, n->num_scale, &n->scale, "node.scale_key")) return false;
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
    if (!read_trans_keys(r, cam->num_pos, &cam->pos, "camera.position_key")) return false;
    if (!ra_rd_u16le(&r->c, &cam->num_target, "camera.num_target_keys")) return false;
    if (!read_trans_keys(r, cam->num_target, &cam->target, "camera.target_key")) return false;
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

ra_status lego_ani_read_ex(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                           lego_ani *a, bool keep_trailing, ra_error *err)
{
    memset(a, 0, sizeof *a);
    rd r;
    ra_cursor_init(&r.c, data, size, body_only ? "lego_ani_body" : FMT, err);
    r.arena = arena;
    r.max_depth = max_depth ? max_depth : LEGO_DEFAULT_MAX_DEPTH;
    r.node_count = 0;
    r.pending = 0;
    if (r.max_depth > LEGO_MAX_DEPTH_LIMIT) r.max_depth = LEGO_MAX_DEPTH_LIMIT;
    a->has_header = !body_only;
    if (!body_only) {
        if (!ra_rd_s32le(&r.c, &a->magic, "magic")) return err->code;
        if (a->magic != LEGO_ANI_MAGIC) {
            ra_fail(err, RA_ERR_BAD_MAGIC, FMT, 0, "magic", "magic is 0x%x, expected 0x11", (unsigned)a->magic);
            return err->code;
        }
        ra_rd_f32le(&r.c, &a->bounding_radius, "bounding_radius");
        for (int i = 0; i < 3; i++) ra_rd_f32le(&r.c, &a->center[i], "center");
        ra_rd_s32le(&r.c, &a->parse_scene, "has_camera_anim");
        ra_rd_s32le(&r.c, &a->val3, "unused");
    }
    if (!ra_rd_u32le(&r.c, &a->num_actors, "num_actors")) return err->code;
    if (!ra_cursor_check_count(&r.c, a->num_actors, ACTOR_MIN_BYTES, "num_actors")) return err->code;
    a->actors = ra_arena_array(arena, a->num_actors, sizeof *a->actors);
    if (!a->actors) {
        oom(&r, "actors");
        return err->code;
    }
    for (uint32_t i = 0; i < a->num_actors; i++) {
        lego_actor *ac = &a->actors[i];
        if (!ra_rd_u32le(&r.c, &ac->name_len, "actor.name_length")) return err->code;
        if (!ra_rd_str(&r.c, arena, ac->name_len, &ac->name, "actor.name")) return err->code;
        if (ac->name_len && !ra_rd_u32le(&r.c, &ac->type, "actor.type")) return err->code;
    }
    if (!ra_rd_s32le(&r.c, &a->duration, "duration")) return err->code;
    if (a->parse_scene) {
        a->camera = ra_arena_alloc(arena, sizeof *a->camera);
        if (!a->camera) {
            oom(&r, "camera");
            return err->code;
        }
        if (!read_camera(&r, a->camera)) return err->code;
    }
    if (!read_node(&r, &a->root, 0)) return err->code;
    a->node_count = r.node_count;
    a->trailing_size = size - r.c.pos;
    if (a->trailing_size && keep_trailing) {
        a->trailing = ra_arena_alloc(arena, a->trailing_size);
        if (!a->trailing) {
            oom(&r, "trailing");
            return err->code;
        }
        ra_rd_bytes(&r.c, a->trailing, a->trailing_size, "trailing");
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
