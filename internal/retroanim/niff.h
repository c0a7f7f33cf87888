/* NIFF, the Nintendo 64 SDK's "N64 Intermediate File Format" (1.0 and 2.0):
 * the format model, field for field, of the parts that place and animate
 * objects and cameras.  Format: docs/formats/niff.md.
 *
 * Big-endian throughout, every field 4 bytes.  A file is a header followed by
 * lists (SceneList, EnvList, CamList, ..., NameList, then the NIFF 2 lists),
 * each a generic list header, its items and two extension blocks.  The model
 * parses the SceneList, CamList, ObjList, AnimList and NameList; every other
 * list, and every extension block the model does not interpret, is kept as
 * bytes, so write(read(file)) reproduces a well-formed file byte for byte. */
#ifndef RETROANIM_NIFF_H
#define RETROANIM_NIFF_H

#include "ra_document.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIFF_NONE 0xFFFFFFFFu /* "no link" / "no name" */

enum {
    NIFF_TAG_HEADER = 0x00000000,
    NIFF_TAG_SCENE_LIST = 0x00010000,
    NIFF_TAG_OBJ_LIST = 0x00020000,
    NIFF_TAG_OBJ = 0x00020100,
    NIFF_TAG_ANIM_LIST = 0x000c0000,
    NIFF_TAG_ANIM_GROUP = 0x000c0100,
    NIFF_TAG_ANIM_STATIC = 0x000c0101,
    NIFF_TAG_ANIM_CONST = 0x000c0102,
    NIFF_TAG_ANIM_FULL = 0x000c0103,
    NIFF_TAG_ANIM_KEY = 0x000c0104,
    NIFF_TAG_ANIM_BILLBOARD = 0x000c0105,
    NIFF_TAG_CAM_LIST = 0x000e0000,
    NIFF_TAG_CAM = 0x000e0100,
    NIFF_TAG_NAME_LIST = 0x00110000,
    NIFF_TAG_NAME = 0x00110100
};

enum {
    NIFF_ANIM_STATIC = 0,
    NIFF_ANIM_FULL = 2,
    NIFF_ANIM_KEY = 3,
    NIFF_ANIM_BILLBOARD = 4
};
enum {
    NIFF_INTERP_STATIC = 0,
    NIFF_INTERP_LINEAR = 1,
    NIFF_INTERP_SLOWIN = 2,
    NIFF_INTERP_SLOWOUT = 4,
    NIFF_INTERP_SLOW = 6
};
enum {
    NIFF_OBJ_CLEAR = 0,
    NIFF_OBJ_ACTIVE = 1
};

/* The 19 NIFF 1 lists in the header's field order, then the 9 NIFF 2 lists
 * of the header's Nintendo extension. */
#define NIFF_HEADER_LISTS 19
#define NIFF2_HEADER_LISTS 9
extern const uint32_t niff_header_list_tags[NIFF_HEADER_LISTS + NIFF2_HEADER_LISTS];

typedef struct niff_blob {
    uint8_t *data;
    uint32_t size;
} niff_blob;

/* The two extension blocks that close an area (Nintendo first). */
typedef struct niff_ext {
    niff_blob nintendo, user;
} niff_ext;

typedef struct niff_links {
    uint32_t *v;
    uint32_t n;
} niff_links;

typedef struct niff_scene_list {
    uint32_t cfg, name_index;
    niff_links obj, env, cam, light;
    niff_blob head_extra; /* bytes between the 44-byte fixed part and scene_header_size */
    niff_ext ext;
} niff_scene_list;

typedef struct niff_obj {
    uint32_t name_index, state, type;
    uint32_t render[6]; /* obj_group, obj_pri, render cycle type, render pri, render type 0 and 1 */
    uint32_t have_link_billboard, parent_link, shape_link, mat_link, anim_link, coll_link;
    uint32_t lod_num;
    float *lod_dist;
    uint32_t *lod_link;
    niff_links child;
    niff_ext ext;
    uint64_t offset; /* of the item in the file (for messages); 0 when built */
} niff_obj;

typedef struct niff_cam {
    uint32_t name_index, type;
    float near_clip, far_clip, right, left, top, bottom, fovy, aspect, scale;
    uint32_t lookat_obj, eye_obj, up_obj;
    niff_ext ext;
    uint64_t offset;
} niff_cam;

/* One Anim area.  tag decides the layout: STATIC / CONST / FULL hold trs,
 * KEY adds key, next_key and interpolation, BILLBOARD holds the two links. */
typedef struct niff_anim {
    uint32_t tag;
    uint32_t key, next_key, interp; /* KEY */
    float t[3], r[3], s[3];         /* translate, rotate (Euler, radians), scale */
    uint32_t expand_flag;           /* rotate_expand_flag, kept as stored */
    uint32_t lookat_obj, upper_obj; /* BILLBOARD */
    niff_blob extra;                /* bytes past the known layout (all of them for unknown tags) */
    uint64_t offset;
} niff_anim;

/* NIFF 2 animation channels (the AnimGroup's Nintendo extension). */
enum {
    NIFF_CH_ROTATE_AXIS,
    NIFF_CH_ROTATE_X,
    NIFF_CH_ROTATE_Y,
    NIFF_CH_ROTATE_Z,
    NIFF_CH_ORIENTATION_XY,
    NIFF_CH_TRANSLATION,
    NIFF_CH_UNIQUE_SCALE,
    NIFF_CH_CLASSICAL_SCALE,
    NIFF_CH_COUNT
};
enum {
    NIFF2_INTERP_CONST = 0,
    NIFF2_INTERP_FULL = 1,
    NIFF2_INTERP_LINEAR = 2,
    NIFF2_INTERP_HERMITE = 3
};
#define NIFF_CH_HEAD_BYTES 148 /* use mask, 8 counts, 28 constraint words */
/* values per key of each channel (each key also holds as many differentials) */
extern const uint8_t niff_channel_values[NIFF_CH_COUNT];

typedef struct niff_chkey {
    uint32_t interp, key;
    float v[6], d[6];
} niff_chkey;

typedef struct niff_channels {
    uint32_t use;            /* use_animation_channel bits (1 << NIFF_CH_*, constraints above) */
    uint32_t constraint[28]; /* constraint node kinds/indices and external names, as stored */
    niff_chkey *keys[NIFF_CH_COUNT];
    uint32_t count[NIFF_CH_COUNT];
    niff_blob tail;  /* bytes of the block after the key arrays */
    uint64_t offset; /* of the block */
} niff_channels;

typedef struct niff_group {
    uint32_t header_size; /* as stored: 48, or 48 + the ext size (blend2niff) */
    uint32_t name_index, type, frame_rate, loop, rot_order;
    niff_anim *anims;
    uint32_t anim_num;
    bool has_channels; /* the Nintendo extension was read as channels */
    niff_channels ch;
    niff_ext ext; /* ext.nintendo is empty when has_channels */
    uint64_t offset;
} niff_group;

typedef struct niff_name {
    uint32_t header_size; /* name_header_size (16) */
    niff_blob bytes;      /* everything from byte 16 to name_size */
    const char *text;     /* the name: bytes from header_size up to the first NUL */
} niff_name;

/* A list in physical order: the parsed ones are rebuilt from the model when
 * written, the others are copied. */
typedef struct niff_list {
    uint32_t tag;
    bool parsed;
    niff_blob raw; /* !parsed: the whole list */
    niff_ext ext;  /* parsed: the list's own extension blocks */
    uint64_t offset;
} niff_list;

typedef struct niff_file {
    uint32_t version;
    niff_ext header_ext; /* NIFF 2: nintendo holds the 9 list sizes (rewritten) and any bytes after them */
    niff_list *lists;
    uint32_t list_count;
    niff_scene_list scene;
    niff_obj *objs;
    uint32_t obj_count;
    niff_cam *cams;
    uint32_t cam_count;
    niff_group *groups;
    uint32_t group_count;
    niff_name *names;
    uint32_t name_count;
} niff_file;

static inline bool niff_is_v2(uint32_t version) { return ((version >> 8) & 0xFF) == 2; }

/* Content test of docs/formats/niff.md §1: 0 = not NIFF, else a confidence. */
int niff_detect(const uint8_t *data, size_t size);
ra_status niff_read(const uint8_t *data, size_t size, ra_arena *arena, niff_file *out, ra_error *err);
/* Writes the lists in the model's order; every size field (header list
 * sizes, list sizes, item sizes, group and object sizes) is computed. */
ra_status niff_write(const niff_file *f, ra_writer *w, ra_error *err);

/* For callers holding a document of format niff (NULL otherwise). */
const niff_file *niff_document_file(const ra_document *doc);

#ifdef __cplusplus
}
#endif
#endif
