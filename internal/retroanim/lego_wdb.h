/* LEGO Island WORLD.WDB: the directory, and the ROIs (models, parts,
 * characters) decoded into meshes ready for an ra_scene.
 * Spec: docs/formats/lego_island.md, "WORLD.WDB".  Little-endian.
 *
 * The file is tens of megabytes; a reader indexes the directory and the
 * texture and part lists (names and offsets only, skipping pixel and vertex
 * data), then decodes only the ROIs asked for.  Nothing points into the
 * file's bytes after a call returns: what is kept is in the caller's arena. */
#ifndef RETROANIM_LEGO_WDB_H
#define RETROANIM_LEGO_WDB_H

#include "lego_ani.h"
#include "ra_scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* strcmpi: ASCII letters compared without case. */
static inline int lego_stricmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z') x += 32;
        if (y >= 'A' && y <= 'Z') y += 32;
        if (x != y || !x) return x - y;
    }
}

#define LEGO_WDB_MODEL_VERSION 19
#define LEGO_LOD_SKIP 0x04  /* no body follows the flags */
#define LEGO_LOD_EXTRA 0x08 /* an extra, coarser first level */
/* ROIs a name search may visit per model or animation (real ones visit hundreds) */
#define LEGO_WDB_SEARCH_BUDGET 20000000u

/* A part or model entry of the directory. */
typedef struct lego_wdb_ref {
    const char *name;      /* lower-cased, trailing NULs removed */
    uint32_t size, offset; /* the blob (absolute offset) */
    const char *presenter; /* models only */
    float location[3], direction[3], up[3];
    uint8_t visible;
    uint64_t at; /* where the entry is in the file (errors) */
    uint32_t world;
    bool model;
} lego_wdb_ref;

typedef struct lego_wdb_world {
    const char *name;
    uint32_t first_part, part_count;   /* into lego_wdb.parts */
    uint32_t first_model, model_count; /* into lego_wdb.models */
} lego_wdb_world;

typedef struct lego_wdb_dir {
    uint32_t world_count;
    lego_wdb_world *worlds;
    lego_wdb_ref *parts, *models;
    size_t part_count, model_count;
    uint64_t textures_at, textures_size; /* the global textures block */
    uint64_t parts_at, parts_size;       /* the global parts block */
} lego_wdb_dir;

/* One decoded mesh of a LOD, in its ROI's local frame, as the file holds it
 * (native frame, triangles in stored order). */
typedef struct lego_wdb_mesh {
    uint32_t vertex_count, triangle_count;
    float *positions, *normals, *uvs; /* uvs NULL without texture coordinates */
    uint32_t *indices;
    float color[4];   /* the file's material (alias resolved); alpha as glTF opacity */
    int32_t texture;  /* index into lego_wdb_set.textures, -1 */
    bool inh;         /* takes its colour from the ROI (texture or material name starts "inh") */
    bool missing_tex; /* named a texture that is not in the file: magenta */
    uint8_t shading, shiny;
    const char *texture_name, *material_name;
} lego_wdb_mesh;

/* A ROI: its meshes (the chosen LOD) and children; transform = its static
 * world (column vectors, native frame). */
typedef struct lego_wdb_roi {
    const char *name;
    const char *material; /* the ROI's colourOrTexture ("" none) */
    lego_wdb_mesh *meshes;
    uint32_t mesh_count;
    uint32_t lod_count, lod_used; /* LODs stored, the one exported (0-based) */
    const char *lod_source;       /* the part a shared or character LOD list came from, or NULL */
    bool prefix_share; /* bike*, moto*, haus* with LODs of its own: the engine may share them (not modelled) */
    struct lego_wdb_roi *children;
    uint32_t child_count;
    ra_mat4 world; /* static pose */
    ra_mat4 local; /* relative to the parent ROI */
    size_t tag;    /* free for the caller (the binder's slot) */
} lego_wdb_roi;

typedef struct lego_wdb_texture {
    const char *name;
    uint32_t width, height;
    uint8_t *rgba;
} lego_wdb_texture;

/* The state of one use of a WDB: its directory, the texture and part
 * indexes, the textures decoded so far.  Everything in `arena`. */
typedef struct lego_wdb_set lego_wdb_set;

/* Opens a WDB held in data (borrowed until lego_wdb_close).  prefer_world:
 * a world name looked up first (NULL none).  Warnings go to warn (NULL: dropped). */
ra_status lego_wdb_open(const uint8_t *data, size_t size, ra_arena *arena, const char *prefer_world, ra_scene *warn,
                        lego_wdb_set **out, ra_error *err);
/* Makes world (an index) the preferred one; only before anything is looked up. */
void lego_wdb_prefer_world(lego_wdb_set *w, int64_t world);
/* For `list`: every texture name, every part name with its source ("global" or a world). */
ra_status lego_wdb_all_textures(lego_wdb_set *w, const char *const **names, size_t *count, ra_error *err);
ra_status lego_wdb_all_parts(lego_wdb_set *w, const char *const **names, const char *const **sources, size_t *count,
                             ra_error *err);
/* The source ("global" or a world name) of a part already looked up, or NULL. */
const char *lego_wdb_part_source(lego_wdb_set *w, const char *name);
const lego_wdb_dir *lego_wdb_directory(const lego_wdb_set *w);
/* Decoded textures, in the order they were first used. */
const lego_wdb_texture *lego_wdb_textures(const lego_wdb_set *w, size_t *count);
/* Forgets the file's bytes: the decoded ROIs and textures stay. */
void lego_wdb_close(lego_wdb_set *w);

/* A model in its static placement (ref: an index into the directory's
 * models).  max_depth bounds the ROI nesting. */
ra_status lego_wdb_model(lego_wdb_set *w, size_t model, uint32_t max_depth, lego_wdb_roi **out, ra_error *err);
/* A ROI of a part's LOD list (the part named name, lower-cased; the global
 * parts first, then the preferred world's, then the other worlds'), at
 * identity.  RA_ERR_NOT_FOUND-like: returns RA_OK with *out NULL
 * when no part has that name. */
ra_status lego_wdb_part(lego_wdb_set *w, const char *name, lego_wdb_roi **out, ra_error *err);
/* The model named name, case-insensitively: the preferred world's by
 * directory name, then by root ROI name, then the other worlds' the same
 * way; -1 if none, -2 out of memory. */
int64_t lego_wdb_find_model(lego_wdb_set *w, const char *name);
/* LegoROI::FindChildROI: r itself, then all its direct children, then each
 * child's subtree the same way; names compared case-insensitively (an empty
 * name matches nothing); *budget bounds the ROIs compared (NULL once spent). */
lego_wdb_roi *lego_wdb_find_roi(lego_wdb_roi *r, const char *name, uint32_t depth, uint64_t *budget);
/* A character of the game's tables (lego_characters.c), built as the engine
 * builds it: a root without geometry and ten parts at their rest
 * transforms, coloured from the tables.  *out NULL when name is not a
 * character. */
ra_status lego_wdb_character(lego_wdb_set *w, const char *name, lego_wdb_roi **out, ra_error *err);

/* The character tables (lego_characters.c). */
typedef struct lego_character {
    const char *name;
    const char *body_part, *chest; /* chest: a texture, or (for the plain body part) a colour alias */
    const char *hat_part, *hat_color;
    const char *infogron, *face;
    const char *arm[2], *claw[2], *leg[2]; /* left, right: colour aliases */
} lego_character;
typedef struct lego_actor_lod {
    const char *name, *part;
    float position[3], direction[3], up[3];
} lego_actor_lod;
extern const lego_character lego_characters[];
extern const size_t lego_character_count;
extern const lego_actor_lod lego_actor_lods[11];
/* The colour alias table: RGB of a `lego <colour>` name (case-insensitive); false if unknown. */
bool lego_alias_color(const char *name, uint8_t rgb[3]);

/* CalcLocalTransform(position, direction, up) as a column-vector matrix (native frame). */
ra_mat4 lego_local_transform(const float pos[3], const float dir[3], const float up[3]);
/* A node's local matrix at t ms by the engine's rules (lego_scene.c), native or converted frame. */
ra_mat4 lego_node_matrix(const lego_node *nd, double t_ms, bool native);

/* lego_ani_read (lego_read.c) that does not copy the bytes after the tree
 * when !keep_trailing (trailing_size is still set). */
ra_status lego_ani_read_ex(const uint8_t *data, size_t size, bool body_only, uint32_t max_depth, ra_arena *arena,
                           lego_ani *a, bool keep_trailing, ra_error *err);
/* The note and the single warning for ROIs whose LOD sharing is not modelled (prefix_share). */
#define LEGO_PREFIX_SHARE_NOTE                                                                                         \
    "the engine shares the LOD list of ROIs named bike*, moto* (and haus* at the default LOD cap) by their first "     \
    "four letters; each keeps its own LODs here"

/* Binding (lego_wdb_bind.c): attaches to the nodes of a .ani scene the
 * meshes of the ROIs they bind.  node_of[i]: the file node of scene node i
 * (NULL for RootNode and the camera).  Looks for the WDB as the option wdb
 * says (or beside the file); without one the scene is left as it is. */
ra_status lego_wdb_bind(ra_document *doc, const lego_ani *a, const lego_node *const *node_of, bool native,
                        ra_error *err);
/* Adds the ROI tree's meshes, materials and textures to the scene: roi's
 * meshes on node (static world `world` baked into the vertices when
 * bake_world, else in the node's frame). */
typedef struct lego_mesh_out lego_mesh_out;
lego_mesh_out *lego_mesh_out_new(ra_scene *s, lego_wdb_set *w, bool native);
ra_status lego_mesh_out_roi(lego_mesh_out *o, const lego_wdb_roi *roi, uint32_t node, const ra_mat4 *bake,
                            ra_error *err);
ra_status lego_mesh_out_finish(lego_mesh_out *o, ra_error *err);

/* `retroanim list`: the worlds, models, parts and textures as text lines
 * (ra_malloc'd, NUL-terminated; free with ra_free). */
ra_status lego_wdb_list(const uint8_t *data, size_t size, const ra_options *opt, char **text, ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
