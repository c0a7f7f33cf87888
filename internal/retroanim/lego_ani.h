/* LEGO Island .ani (LegoAnim): the format model, field for field.
 * Spec: docs/formats/lego_island.md.  Little-endian. */
#ifndef RETROANIM_LEGO_ANI_H
#define RETROANIM_LEGO_ANI_H

#include "ra_document.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LEGO_ANI_MAGIC 0x11
#define LEGO_FLAG_ACTIVE 0x01
#define LEGO_FLAG_NEGATE 0x02
#define LEGO_FLAG_SKIP 0x04

/* Every key starts with one s32: time in ms in the low 24 bits, flags in the
 * high 8.  `raw` keeps it exactly as stored. */
static inline uint32_t lego_key_time(uint32_t raw) { return raw & 0xFFFFFFu; }
static inline uint32_t lego_key_flags(uint32_t raw) { return raw >> 24; }

typedef struct lego_trans_key {
    uint32_t raw;
    float x, y, z;
} lego_trans_key; /* also scale, camera pos/target */
typedef struct lego_rot_key {
    uint32_t raw;
    float w, x, y, z;
} lego_rot_key; /* w first on disk */
typedef struct lego_morph_key {
    uint32_t raw;
    uint8_t visible;
} lego_morph_key;
typedef struct lego_rotz_key {
    uint32_t raw;
    float z;
} lego_rotz_key; /* camera roll, radians */

typedef struct lego_node {
    char *name; /* NUL appended; name_len bytes as stored */
    uint32_t name_len;
    uint16_t num_trans, num_rot, num_scale, num_morph;
    lego_trans_key *trans;
    lego_rot_key *rot;
    lego_trans_key *scale;
    lego_morph_key *morph;
    uint32_t num_children;
    struct lego_node *children;
    /* Noted by the reader as it fills the key arrays (keys_noted), so that
     * the scene need not read every key again: per track (translation,
     * rotation, scale) whether the key times never decrease and the largest
     * key time (ms), and whether a rotation key is all zero. */
    bool keys_noted;
    bool keys_in_order[3];
    bool rot_zero;
    uint32_t last_key_ms[3];
} lego_node;

typedef struct lego_actor {
    uint32_t name_len;
    char *name;
    uint32_t type; /* present in the file only when name_len > 0 */
} lego_actor;

typedef struct lego_camera {
    uint16_t num_pos, num_target, num_roll;
    lego_trans_key *pos;
    lego_trans_key *target;
    lego_rotz_key *roll;
} lego_camera;

typedef struct lego_ani {
    bool has_header; /* false: body-only (WDB-embedded) animation */
    int32_t magic;
    float bounding_radius;
    float center[3];
    int32_t parse_scene; /* camera flag: != 0 means a camera block follows the duration */
    int32_t val3;        /* read and discarded by the engine */
    uint32_t num_actors;
    lego_actor *actors;
    int32_t duration;    /* ms */
    lego_camera *camera; /* NULL when parse_scene == 0 */
    lego_node root;
    size_t node_count;    /* nodes in the tree */
    size_t trailing_size; /* bytes after the tree (kept for byte-identical writes) */
    uint8_t *trailing;
} lego_ani;

#define LEGO_DEFAULT_MAX_DEPTH 256
/* the largest max_depth accepted (RA_MAX_DEPTH_LIMIT) */
#define LEGO_MAX_DEPTH_LIMIT RA_MAX_DEPTH_LIMIT

/* Reads a full .ani (body_only = false) or a body-only animation.  Everything
 * is allocated in `arena`. max_depth bounds the tree's nesting. */
ra_status lego_ani_read(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                        lego_ani *out, ra_error *err);
/* lego_ani_read with the key arrays filled as jobs once the tree has been
 * read (ra_read_runner; run NULL: as they are met, on this thread); the
 * bytes after the tree kept when keep_trailing. */
ra_status lego_ani_read_run(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                            lego_ani *a, bool keep_trailing, ra_error *err, ra_read_runner run, void *run_ctx);
ra_status lego_ani_write(const lego_ani *a, ra_writer *w, ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
