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
    NIFF_TAG_NAME = 0x00110100,
    /* geometry (docs/formats/niff.md §9) */
    NIFF_TAG_SHAPE_LIST = 0x00030000,
    NIFF_TAG_SHAPE = 0x00030100,
    NIFF_TAG_VTX_LIST = 0x00040000,
    NIFF_TAG_VTX_GROUP = 0x00040100,
    NIFF_TAG_COLOR_LIST = 0x00050000,
    NIFF_TAG_TRI_COLOR_GROUP = 0x00050100,
    NIFF_TAG_VTX_COLOR_GROUP = 0x00050200,
    NIFF_TAG_VECTOR_LIST = 0x00060000,
    NIFF_TAG_TRI_NV_GROUP = 0x00060100,
    NIFF_TAG_VTX_NV_GROUP = 0x00060200,
    NIFF_TAG_ST_LIST = 0x00070000,
    NIFF_TAG_ST_GROUP = 0x00070100,
    NIFF_TAG_TRI_LIST = 0x00080000,
    NIFF_TAG_TRI_GROUP = 0x00080100,
    NIFF_TAG_TRI = 0x00080101,
    NIFF_TAG_PART_LIST = 0x00090000,
    NIFF_TAG_PART = 0x00090100,
    NIFF_TAG_MAT_LIST = 0x000a0000,
    NIFF_TAG_MAT = 0x000a0100,
    NIFF_TAG_TEX_LIST = 0x000b0000,
    NIFF_TAG_TEX = 0x000b0100,
    NIFF_TAG_TEX_IMG_LIST = 0x00120000,
    NIFF_TAG_TEX_IMG = 0x00120100,
    NIFF_TAG_CI_IMG_LIST = 0x00200000,
    NIFF_TAG_CI_IMG = 0x00200100,
    NIFF_TAG_PALETTE_LIST = 0x00210000,
    NIFF_TAG_PALETTE = 0x00210100,
    NIFF_TAG_ENVELOPE_LIST = 0x00220000,
    NIFF_TAG_ENVELOPE = 0x00220100,
    NIFF_TAG_FULL_WEIGHTED_PART = 0x00220110,
    NIFF_TAG_WEIGHTED_PART = 0x00220120,
    NIFF_TAG_MORPH_PART = 0x00220130,
    NIFF_TAG_ENVELOPE_TRI = 0x00220180,
    NIFF_TAG_WEIGHT_LIST = 0x00230000,
    NIFF_TAG_WEIGHT_GROUP = 0x00230100,
    NIFF_TAG_CLUSTER_LIST = 0x00280000,
    NIFF_TAG_CLUSTER_SHAPE = 0x00280100,
    NIFF_TAG_CLUSTER = 0x00280110,
    NIFF_TAG_CLUSTER_TRI = 0x00280180,
    /* IK chains (§3) */
    NIFF_TAG_CHAIN_ROOT_LIST = 0x00240000,
    NIFF_TAG_CHAIN_ROOT = 0x00240100,
    NIFF_TAG_JOINT_LIST = 0x00250000,
    NIFF_TAG_JOINT = 0x00250100,
    NIFF_TAG_EFFECTOR_LIST = 0x00260000,
    NIFF_TAG_EFFECTOR = 0x00260100
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
    /* NIFF 2: obj_chain_root_link[] from the Nintendo extension (read only:
     * the extension is written back as stored), and the file offset of its
     * first entry */
    niff_links chain_root;
    uint64_t chain_root_offset;
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

/* niff_group.anim_tags: which kinds of Anim the group holds, so that the
 * scene need not read every Anim again to check them against the group's
 * type.  READ marks a summary the reader made. */
enum {
    NIFF_ANIM_TAGS_READ = 0x01,
    NIFF_ANIM_TAGS_TRS = 0x02,       /* STATIC, CONST or FULL */
    NIFF_ANIM_TAGS_KEY = 0x04,       /* KEY with a known interpolation type */
    NIFF_ANIM_TAGS_KEY_OTHER = 0x08, /* KEY with another interpolation type */
    NIFF_ANIM_TAGS_BILLBOARD = 0x10,
    NIFF_ANIM_TAGS_OTHER = 0x20
};

typedef struct niff_group {
    uint32_t header_size; /* as stored: 48, or 48 + the ext size (blend2niff) */
    uint32_t name_index, type, frame_rate, loop, rot_order;
    niff_anim *anims;
    uint32_t anim_num;
    uint8_t anim_tags; /* the reader's summary of the Anims' tags (NIFF_ANIM_TAGS_*); 0: none made */
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

/* ---- read-only views of lists kept as bytes ---------------------------------
 * The geometry and IK lists are written back exactly as read (niff_list.raw);
 * the reader also decodes them into the views below, every index checked
 * against the list it names.  Offsets are file offsets (for messages). */

/* ChainRoot, Joint or Effector (docs/formats/niff.md §3 "IK chains"). */
enum {
    NIFF_CHAIN_ROOT,
    NIFF_CHAIN_JOINT,
    NIFF_CHAIN_EFFECTOR
};
typedef struct niff_chain {
    uint32_t kind, name_index, type;
    uint32_t anim_index;                  /* AnimGroup or NIFF_NONE */
    uint32_t joint_index, effector_index; /* the next Joint / the Effector, or NIFF_NONE */
    float length, resplane[3];            /* Joint */
    niff_links obj;                       /* obj_index[] */
    uint64_t offset;
} niff_chain;

/* A group of records: VtxGroup (xyz), StGroup (st), Tri/VtxColorGroup
 * (rgba), Tri/VtxNvGroup (xyz). */
typedef struct niff_vgroup {
    uint32_t count, comps;
    float *v; /* count * comps */
    uint64_t offset;
} niff_vgroup;

/* The TriGroup's six Reference areas, in stored order. */
enum {
    NIFF_REF_VTX,
    NIFF_REF_TRI_COLOR,
    NIFF_REF_VTX_COLOR,
    NIFF_REF_TRI_NV,
    NIFF_REF_VTX_NV,
    NIFF_REF_ST,
    NIFF_REF_COUNT
};
typedef struct niff_tri {
    uint32_t tri_nv, tri_color;
    uint32_t vtx[3], st[3], vtx_nv[3], vtx_color[3];
    uint64_t offset;
} niff_tri;
typedef struct niff_trigroup {
    uint32_t name_index, anim_type, frame_num;
    uint32_t ref[NIFF_REF_COUNT];        /* the rest group of each area (frame 0 / first key) */
    uint64_t ref_offset[NIFF_REF_COUNT]; /* where each of those indices is stored */
    bool animated;                       /* some area changes group over time */
    niff_tri *tris;
    uint32_t tri_num;
    uint64_t offset;
} niff_trigroup;

typedef struct niff_shape {
    uint32_t name_index, type, tri_link, mat_link;
    uint32_t geometry_kind; /* NIFF_TAG_TRI_GROUP, NIFF_TAG_ENVELOPE or NIFF_TAG_CLUSTER_SHAPE */
    uint64_t kind_offset;   /* of kind_of_node_for_geometry (the Shape's offset without one) */
    niff_links part;
    uint64_t offset;
} niff_shape;

typedef struct niff_part {
    uint32_t name_index, mat_index, tri_group_index;
    niff_links tri;
    uint64_t offset;
} niff_part;
#define NIFF_USE_SHAPE_MAT 0x80000000u

typedef struct niff_mat {
    uint32_t name_index, type, shade, color_type[2], alpha_type[2];
    float prim[4];
    niff_links tex;   /* tex_index[tex_num] */
    bool has_diffuse; /* NIFF 2 extension: ambient, emission, diffuse */
    float diffuse[4];
    uint64_t offset;
} niff_mat;

typedef struct niff_tex {
    uint32_t name_index, type, wrap_s, wrap_t, anim;
    uint32_t img_w, img_h, img_index; /* the still image (animated: the first) */
    bool external;    /* img_index NIFF_NONE (an animated Tex: no image): the image is in another file */
    bool use_palette; /* NIFF 2: img_index names a CiImg */
    uint32_t palette_index, tlut_bank;
    bool has_filter;
    uint32_t filter;
    uint64_t offset, area; /* of the Tex and of its TexDataArea */
} niff_tex;

typedef struct niff_teximg {
    const uint8_t *pixels; /* RGBA8, rows from the bottom-left (a copy in the arena) */
    uint32_t size;
    uint64_t offset;
} niff_teximg;

typedef struct niff_ciimg {
    uint32_t width, height, depth;
    uint32_t *words; /* packed indices */
    uint32_t word_count;
    uint64_t offset;
} niff_ciimg;

typedef struct niff_palette {
    uint32_t count, color_type; /* RGBA16 0, IA16 1 */
    uint16_t *colors;
    uint64_t offset;
} niff_palette;

/* NIFF 2 deformable geometry (docs/formats/niff.md §9): an Envelope's
 * FullWeightedPart, WeightedPart and MorphPart, or a ClusterShape's Cluster
 * (read as a FullWeightedPart of an Obj).  Per influencing node: its kind
 * (a list tag: Obj, ChainRoot, Joint, Effector) and index, and the groups
 * holding its vertices (in that node's space) and their attributes. */
enum {
    NIFF_PART_FULL,
    NIFF_PART_WEIGHTED,
    NIFF_PART_MORPH,
    NIFF_PART_KINDS
};
typedef struct niff_envpart {
    uint32_t kind;       /* NIFF_PART_* */
    uint32_t node_count; /* influencing nodes in the file (WeightedPart: a; MorphPart: 2; else 1) */
    uint32_t *node_kind, *node_index;
    /* per node (MorphPart: per table, for node 0) */
    uint32_t *vtx, *vtx_nv, *tri_nv, *vtx_color, *tri_color, *weight;
    uint32_t group_count; /* entries of those arrays */
    uint32_t st;
    uint32_t external; /* nodes named in other files (not followed) */
    uint64_t offset;
    /* file offsets for messages: node q's kind and index at kind_off/index_off + node_stride * q; group array k
     * (weight, vtx, vtx_nv, tri_nv, vtx_color, tri_color) entry q at group_off[k] + 4 * q; the st group index */
    uint64_t kind_off, index_off, node_stride, group_off[6], st_off;
} niff_envpart;
typedef struct niff_envvtx {
    uint32_t part_kind, part, vtx, st, vtx_nv, vtx_color, weight;
} niff_envvtx;
typedef struct niff_envtri {
    uint32_t part_kind, part, tri_nv, tri_color;
    niff_envvtx c[3];
    uint64_t offset;
} niff_envtri;
typedef struct niff_deform {
    uint32_t name_index;
    niff_envpart *parts[NIFF_PART_KINDS];
    uint32_t part_count[NIFF_PART_KINDS];
    niff_envtri *tris;
    uint32_t tri_count;
    bool cluster; /* a ClusterShape */
    uint64_t offset;
} niff_deform;

typedef struct niff_geometry {
    niff_shape *shapes;
    uint32_t shape_count;
    niff_vgroup *vtx, *st, *tri_color, *vtx_color, *tri_nv, *vtx_nv;
    uint32_t vtx_count, st_count, tri_color_count, vtx_color_count, tri_nv_count, vtx_nv_count;
    niff_trigroup *trigroups;
    uint32_t trigroup_count;
    niff_part *parts;
    uint32_t part_count;
    niff_mat *mats;
    uint32_t mat_count;
    niff_tex *texs;
    uint32_t tex_count;
    niff_teximg *teximgs;
    uint32_t teximg_count;
    niff_ciimg *ciimgs;
    uint32_t ciimg_count;
    niff_palette *palettes;
    uint32_t palette_count;
    niff_deform *envelopes, *clusters;
    uint32_t envelope_count, cluster_count;
    niff_vgroup *weights; /* WeightGroups: one weight (percent) per vertex of a part */
    uint32_t weight_count;
} niff_geometry;

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
    /* views (see above) */
    niff_chain *chains[3]; /* chain roots, joints, effectors */
    uint32_t chain_count[3];
    niff_geometry geo;
} niff_file;

static inline bool niff_is_v2(uint32_t version) { return ((version >> 8) & 0xFF) == 2; }

/* Content test of docs/formats/niff.md §1: 0 = not NIFF, else a confidence. */
int niff_detect(const uint8_t *data, size_t size);
ra_status niff_read(const uint8_t *data, size_t size, ra_arena *arena, niff_file *out, ra_error *err);
/* niff_read with the AnimList's groups read as jobs (ra_read_runner;
 * run NULL: in order on this thread). */
ra_status niff_read_run(const uint8_t *data, size_t size, ra_arena *arena, niff_file *out, ra_error *err,
                        ra_read_runner run, void *run_ctx);
/* Writes the lists in the model's order; every size field (header list
 * sizes, list sizes, item sizes, group and object sizes) is computed. */
ra_status niff_write(const niff_file *f, ra_writer *w, ra_error *err);

/* Meshes, materials and textures of the placed objects (niff_geom.c):
 * obj_node[i] is object i's scene node (-1: not placed). */
ra_status niff_build_geometry(ra_document *doc, const niff_file *f, const int32_t *obj_node, ra_error *err);

/* For callers holding a document of format niff (NULL otherwise). */
const niff_file *niff_document_file(const ra_document *doc);

#ifdef __cplusplus
}
#endif
#endif
