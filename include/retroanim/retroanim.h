/* retroanim — animation formats of classic games, for C and for Assimp.
 *
 * The public C API (docs/api.md is its reference):
 *
 *   ra_options opt;                      // KEY=VALUE options (docs/options.md)
 *   ra_options_init(&opt);
 *   ra_options_add(&opt, "coords", "native");
 *   ra_document *doc;
 *   ra_error err;
 *   if (ra_document_load_file("walk.ani", &opt, &doc, &err) != RA_OK) {
 *       char msg[RA_ERROR_TEXT_MAX];
 *       ra_error_format(&err, msg, sizeof msg);  // "lego_ani: ... (field) (at byte N)"
 *   }
 *   const ra_scene *s = ra_document_scene(doc);  // nodes, animations, cameras, metadata
 *   ra_document_free(doc);
 *
 * A document owns everything one load produced (one free).  Writers (glTF,
 * FBX) are in ra_gltf.h and ra_fbx.h, archives (.SI, .pak) in ra_archive.h.
 * Times are seconds; matrices are row-major with column vectors (Assimp's
 * convention: translation in m[0][3], m[1][3], m[2][3]). */
#ifndef RETROANIM_RETROANIM_H
#define RETROANIM_RETROANIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of the shared library: only what this header and ra_gltf.h,
 * ra_fbx.h and ra_archive.h declare is exported. */
#if defined(__GNUC__) || defined(__clang__)
#define RA_API __attribute__((visibility("default")))
#else
#define RA_API
#endif

#define RETROANIM_VERSION_MAJOR 0
#define RETROANIM_VERSION_MINOR 3
#define RETROANIM_VERSION_PATCH 0
#define RETROANIM_VERSION (RETROANIM_VERSION_MAJOR * 1000000 + RETROANIM_VERSION_MINOR * 1000 + RETROANIM_VERSION_PATCH)
/* The library's version as RETROANIM_VERSION computes it, and as "0.3.0". */
RA_API uint32_t ra_version(void);
RA_API const char *ra_version_string(void);

/* ---- status and errors --------------------------------------------------------- */
typedef enum ra_status {
    RA_OK = 0,
    RA_ERR_TRUNCATED,   /* a field runs past the end of the data */
    RA_ERR_BAD_MAGIC,   /* signature / version not recognised */
    RA_ERR_BAD_VALUE,   /* a field holds a value the format forbids */
    RA_ERR_LIMIT,       /* a count, depth or size exceeds a load limit */
    RA_ERR_NO_MEMORY,   /* an allocation failed or the memory limit was reached */
    RA_ERR_UNSUPPORTED, /* valid data this build cannot handle */
    RA_ERR_IO,          /* the file could not be read or written */
    RA_ERR_USAGE,       /* the caller passed an invalid argument or option */
    RA_STATUS_COUNT
} ra_status;

/* "ok", "truncated", "bad_magic", ... */
RA_API const char *ra_status_name(ra_status s);

/* The first failure of an operation: what went wrong, in which format and
 * field, at which byte of the input (RA_NO_OFFSET when not tied to one). */
#define RA_NO_OFFSET UINT64_MAX
#define RA_ERROR_TEXT_MAX 640 /* room for ra_error_format's text */
typedef struct ra_error {
    ra_status code;
    const char *format; /* format id ("lego_ani", ...) or "retroanim"; static storage */
    uint64_t offset;
    char field[64];
    char msg[512];
} ra_error;

/* Every function that takes an ra_error clears it first; e may be NULL. */
RA_API void ra_error_clear(ra_error *e);
/* "FORMAT: what is wrong (field) (at byte N)"; returns the length it needed. */
RA_API size_t ra_error_format(const ra_error *e, char *buf, size_t size);

/* ---- math types ------------------------------------------------------------------ */
typedef struct ra_vec3 {
    double x, y, z;
} ra_vec3;
typedef struct ra_quat {
    double w, x, y, z;
} ra_quat;
typedef struct ra_mat4 {
    double m[4][4];
} ra_mat4;

/* ---- the scene: what Assimp consumers and the writers receive ------------------------
 * Read-only for users; everything lives in the document. */
typedef struct ra_arena ra_arena;

typedef enum ra_meta_type {
    RA_META_BOOL = 1,
    RA_META_INT, /* int64 */
    RA_META_DOUBLE,
    RA_META_STRING, /* lists and records are stored as JSON text */
    RA_META_VEC3
} ra_meta_type;

typedef struct ra_meta {
    const char *key;
    ra_meta_type type;
    union {
        bool b;
        int64_t i;
        double d;
        const char *s;
        ra_vec3 v;
    } u;
} ra_meta;

typedef struct ra_meta_list {
    ra_meta *items;
    size_t count, cap;
} ra_meta_list;

typedef struct ra_node {
    const char *name;  /* unique, non-empty */
    int32_t parent;    /* index into ra_scene.nodes, -1 for the root */
    ra_mat4 transform; /* local rest transform */
    ra_meta_list meta;
} ra_node;

typedef struct ra_vec_key {
    double t;
    ra_vec3 v;
} ra_vec_key;
typedef struct ra_quat_key {
    double t;
    ra_quat q;
} ra_quat_key;

typedef enum ra_behaviour {
    RA_BEHAVIOUR_DEFAULT = 0,
    RA_BEHAVIOUR_CONSTANT = 1,
    RA_BEHAVIOUR_LINEAR = 2,
    RA_BEHAVIOUR_REPEAT = 3
} ra_behaviour;

/* One node's keys: linear position and scale, shortest-arc slerp rotation,
 * the first and last key held outside the keyed range. */
typedef struct ra_channel {
    uint32_t node; /* index into ra_scene.nodes */
    ra_behaviour pre_state, post_state;
    ra_vec_key *position;
    size_t position_count;
    ra_quat_key *rotation;
    size_t rotation_count;
    ra_vec_key *scaling;
    size_t scaling_count;
} ra_channel;

/* Visibility steps: from each key's time on the node is shown or hidden (the
 * last key at or before t decides); before the first key it is shown. */
typedef struct ra_vis_key {
    double t;
    bool visible;
} ra_vis_key;
typedef struct ra_vis_track {
    uint32_t node;
    ra_vis_key *keys;
    size_t count;
} ra_vis_track;

typedef struct ra_animation {
    const char *name;
    double ticks_per_second; /* the format's native rate (key times * this = native ticks) */
    double duration;         /* seconds; >= every key time */
    ra_channel *channels;
    size_t channel_count;
    ra_vis_track *visibility; /* nodes shown and hidden (LEGO Island's morph keys) */
    size_t visibility_count;
} ra_animation;

typedef struct ra_camera {
    const char *name; /* equals the name of the node that places it */
    uint32_t node;
    double horizontal_fov; /* HALF angle in radians, as aiCamera::mHorizontalFOV */
    double aspect;
    double clip_near, clip_far;
    ra_vec3 position, look_at, up; /* in the camera node's local frame */
    bool orthographic;             /* an orthographic camera: half width and height of the view */
    double ortho_xmag, ortho_ymag;
} ra_camera;

/* A skeleton: the nodes that are its joints (a glTF skin, an armature in
 * Blender).  Inverse bind matrices are the inverses of the joints' rest world
 * transforms. */
typedef struct ra_skin {
    const char *name; /* may be NULL */
    int32_t skeleton; /* the common root joint, or -1 */
    uint32_t *joints; /* node indices */
    size_t joint_count;
} ra_skin;

/* ---- geometry ------------------------------------------------------------------------
 * Meshes are triangle lists with one material each (a model made of several
 * materials is several meshes on one node).  Every attribute is per vertex;
 * a mesh moves with its node: positions and normals are in that node's
 * space.  A skinned mesh (skin >= 0) hangs on nodes[0] and instead holds its
 * vertices at rest in the scene's world frame (the frame world matrices are
 * in, nodes[0]'s transform included); each vertex follows up to four of the
 * skin's joints by weight: world(t) = sum of weight * jointWorld(t) *
 * inverse(jointRestWorld) * position.  Colours are the file's values (no
 * colour-space conversion). */
typedef enum ra_wrap {
    RA_WRAP_REPEAT = 0,
    RA_WRAP_CLAMP = 1,
    RA_WRAP_MIRROR = 2
} ra_wrap;

typedef struct ra_texture {
    const char *name; /* unique, non-empty */
    uint32_t width, height;
    const uint8_t *rgba; /* width * height * 4 bytes, 8-bit RGBA, rows from the TOP */
    ra_wrap wrap_s, wrap_t;
    bool nearest;              /* point sampling (else linear) */
    const char *source_format; /* the game's pixel format ("RGBA16", "CI4", ...), or NULL */
} ra_texture;

typedef enum ra_alpha_mode {
    RA_ALPHA_OPAQUE = 0,
    RA_ALPHA_MASK = 1, /* alpha below alpha_cutoff is cut out, the rest is opaque */
    RA_ALPHA_BLEND = 2
} ra_alpha_mode;

typedef struct ra_material {
    const char *name;     /* unique, non-empty */
    double base_color[4]; /* RGBA factor (multiplies texture and vertex colours) */
    int32_t texture;      /* index into ra_scene.textures (base colour), or -1 */
    ra_alpha_mode alpha_mode;
    double alpha_cutoff; /* RA_ALPHA_MASK */
    bool double_sided;
    bool unlit; /* shown without lighting */
    ra_meta_list meta;
} ra_material;

typedef struct ra_mesh {
    const char *name; /* unique, non-empty */
    uint32_t node;    /* the node it moves with (skinned: the node it hangs on) */
    int32_t material; /* index into ra_scene.materials, or -1 */
    uint32_t vertex_count;
    const float *positions;  /* 3 per vertex */
    const float *normals;    /* 3 per vertex (unit), or NULL */
    const float *colors;     /* 4 per vertex, RGBA in [0, 1], or NULL */
    const float *uvs;        /* 2 per vertex, or NULL: u right, v DOWN from the image's top (glTF's convention) */
    const uint32_t *indices; /* 3 per triangle; counter-clockwise seen from the front */
    size_t triangle_count;
    int32_t skin;           /* index into ra_scene.skins, or -1 */
    const uint16_t *joints; /* skinned: 4 per vertex, positions in the skin's joints[] */
    const float *weights;   /* skinned: 4 per vertex, summing to 1 */
    ra_meta_list meta;
} ra_mesh;

typedef struct ra_warning {
    const char *msg;
    uint32_t count; /* repeats of the same message */
} ra_warning;

typedef struct ra_scene {
    const char *format;
    ra_arena *arena;
    ra_node *nodes; /* pre-order; nodes[0] is the unanimated root */
    size_t node_count, node_cap;
    ra_animation *animations;
    size_t animation_count;
    ra_camera *cameras;
    size_t camera_count;
    ra_skin *skins;
    size_t skin_count;
    ra_meta_list meta;
    ra_warning *warnings;
    size_t warning_count, warning_cap;
    /* indices of nodes that the skeleton mesh must leave out (cameras) */
    uint32_t *non_skeleton;
    size_t non_skeleton_count;
    ra_mesh *meshes;
    size_t mesh_count;
    ra_material *materials;
    size_t material_count;
    ra_texture *textures;
    size_t texture_count;
} ra_scene;

/* The entry of m with this key, or NULL. */
RA_API const ra_meta *ra_meta_get(const ra_meta_list *m, const char *key);
/* World transforms of every node at t seconds of animation anim, played as
 * Assimp consumers play the keys, into out[node_count]. */
RA_API void ra_scene_sample_world(const ra_scene *s, size_t anim, double t, ra_mat4 *out);
/* Invariants every scene holds (unique non-empty names, parents before
 * children, finite values, increasing key times within the duration, unit
 * quaternions, channels on existing nodes); the writers check them too. */
RA_API ra_status ra_scene_check(const ra_scene *s, ra_error *err);

/* ---- options: KEY=VALUE pairs ------------------------------------------------------
 * The keys and values are borrowed: they must outlive the load.  Every key is
 * declared (common keys, and each format's own; docs/options.md): a load
 * refuses an unknown key, an unparsable or out-of-range value, NaN or
 * infinity with RA_ERR_USAGE naming the key. */
#define RA_MAX_OPTIONS 32
typedef struct ra_options {
    const char *keys[RA_MAX_OPTIONS];
    const char *values[RA_MAX_OPTIONS];
    size_t count;
} ra_options;

RA_API void ra_options_init(ra_options *o);
/* Sets key to value (replacing an earlier value).  false if the key is empty
 * or the options are full. */
RA_API bool ra_options_add(ra_options *o, const char *key, const char *value);
/* Splits "k=v;k=v" (or ','-separated; a backslash makes the next character
 * literal, so "cinf=a\;b.cinf" keeps its ';') into o, copying into store
 * (at least strlen(list) + 1 bytes).  false if malformed or full. */
RA_API bool ra_options_parse_list(ra_options *o, const char *list, char *store, size_t store_size);
/* s with ';', ',' and '\' escaped for ra_options_parse_list, into out (size
 * bytes, NUL-terminated); returns the length it needed. */
RA_API size_t ra_options_escape(const char *s, char *out, size_t size);
RA_API const char *ra_options_get(const ra_options *o, const char *key);

typedef enum ra_option_type {
    RA_OPT_BOOL,   /* true/false, 1/0, yes/no, on/off */
    RA_OPT_INT,    /* a whole number in [min, max] */
    RA_OPT_SIZE,   /* bytes in [min, max]; K, M, G, T suffixes (powers of 1024) */
    RA_OPT_DOUBLE, /* a finite number in [min, max] ((min, max] when min_exclusive) */
    RA_OPT_ENUM,   /* one of values ("a|b|c") */
    RA_OPT_PATH,   /* a file path */
    RA_OPT_STRING  /* any non-empty text */
} ra_option_type;

typedef struct ra_option_decl {
    const char *key;
    ra_option_type type;
    double min, max;
    bool min_exclusive;
    const char *values; /* RA_OPT_ENUM: the allowed values, '|'-separated */
    const char *def;    /* the default, as text ("converted", "256", "detected") */
    const char *help;   /* one line */
} ra_option_decl;

typedef struct ra_format ra_format;
/* The keys every format accepts. */
RA_API const ra_option_decl *ra_common_options(size_t *count);
/* A format's own keys (an archive's include its items' keys). */
RA_API const ra_option_decl *ra_format_options(const ra_format *f, size_t *count);
/* The declaration of key for format f (NULL: common keys only), or NULL. */
RA_API const ra_option_decl *ra_option_find(const ra_format *f, const char *key);
/* Checks every option against f's declarations (f NULL: common keys only). */
RA_API ra_status ra_options_validate(const ra_options *o, const ra_format *f, ra_error *err);

/* ---- formats ------------------------------------------------------------------------ */
RA_API size_t ra_format_count(void);
RA_API const ra_format *ra_format_at(size_t i);
RA_API const ra_format *ra_format_find(const char *id);
/* Best format for the bytes (by signature); with no signature match, or only
 * a low-confidence one (a Metroid CINF, which has no magic), the format the
 * file name's extension names decides when it names one.  NULL if none. */
RA_API const ra_format *ra_format_detect(const uint8_t *data, size_t size, const char *filename);
/* The format that claims this file name's extension, or NULL. */
RA_API const ra_format *ra_format_by_extension(const char *filename);
RA_API const char *ra_format_id(const ra_format *f);         /* "lego_ani" */
RA_API const char *ra_format_name(const ra_format *f);       /* "LEGO Island animation (.ani)" */
RA_API const char *ra_format_extensions(const ra_format *f); /* "ani": space-separated, lowercase, no dots */
RA_API const char *ra_format_detection(const ra_format *f);  /* how the format is recognised */
RA_API bool ra_format_is_archive(const ra_format *f);        /* .SI, .pak: see ra_archive.h */

/* ---- documents ---------------------------------------------------------------------- */
typedef struct ra_document ra_document;

/* Reads the bytes (the document keeps no pointer into them) and builds the
 * scene.  filename (may be NULL) names the file for companion files (a
 * Metroid Prime CINF beside its ANIM) and detection by extension.  On
 * failure *out is NULL and err says why. */
RA_API ra_status ra_document_load(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                                  ra_document **out, ra_error *err);
/* The same from a file (refused before it is read when larger than the
 * option max_file_size). */
RA_API ra_status ra_document_load_file(const char *path, const ra_options *opt, ra_document **out, ra_error *err);
RA_API void ra_document_free(ra_document *doc);
RA_API const ra_format *ra_document_format(const ra_document *doc);
RA_API const ra_scene *ra_document_scene(const ra_document *doc);
/* World transforms (the scene's frame) of every scene node at t seconds of
 * animation anim, by the game's own rules, into world[node_count]. */
RA_API ra_status ra_document_pose(const ra_document *doc, size_t anim, double t, ra_mat4 *world, ra_error *err);

/* JSON of the document: RA_DUMP_SCENE the scene as Assimp consumers receive
 * it (the `dump` schema of docs/design.md), RA_DUMP_SOURCE the file's own
 * fields as stored; RA_DUMP_COMPACT on one line.  *out is NUL-terminated,
 * freed with ra_string_free. */
enum {
    RA_DUMP_SCENE = 0,
    RA_DUMP_SOURCE = 1,
    RA_DUMP_COMPACT = 2
};
RA_API ra_status ra_document_dump(const ra_document *doc, int flags, char **out, size_t *size, ra_error *err);
RA_API void ra_string_free(char *s);

/* Only the model, without a scene (for RA_DUMP_SOURCE of files whose scene
 * would not build), and the scene's half for such a document. */
RA_API ra_status ra_document_read(const uint8_t *data, size_t size, const char *filename, const ra_options *opt,
                                  ra_document **out, ra_error *err);
RA_API ra_status ra_document_build_scene(ra_document *doc, ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
