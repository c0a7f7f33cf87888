/* Homeworld (1999) .mad mesh animations ("Mellonn" 0.91): the format model,
 * field for field.  Spec: docs/formats/homeworld.md §1.
 *
 * A file holds one shared timeline per mesh object: each object has its own
 * keys (times, tension/continuity/bias, and six channels x, y, z, h, p, b),
 * including the two phantom keys the exporter adds; an animation is a time
 * window [start, end] on that timeline, played by the objects whose
 * animationBits have its bit set.  All offsets are bytes from the file's
 * start, names are offsets into the string block. */
#ifndef RETROANIM_HOMEWORLD_H
#define RETROANIM_HOMEWORLD_H

#include "ra_document.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HW_MAD_IDENT "Mellonn"   /* followed by a NUL: 8 bytes */
#define HW_MAD_VERSION 0.91f     /* bytes C3 F5 68 3F */
#define HW_MAD_MAX_ANIMATIONS 32 /* animationBits is 32 bits wide */
#define HW_MAD_HEADER_SIZE 40u
#define HW_MAD_ANIM_SIZE 16u
#define HW_MAD_OBJECT_SIZE 48u
#define HW_MAD_FLAG_LOOP 0x1u
/* Names longer than this are cut in the scene and in dumps (Assimp keeps
 * 1023 bytes; names in several records may share one long string). */
#define HW_MAD_MAX_NAME RA_NAME_MAX
/* All objects' key arrays together may need at most this many times the
 * file's size (arrays shared by many objects multiply what is read). */
#define HW_MAD_MAX_SHARING 8u

enum {
    HW_X,
    HW_Y,
    HW_Z,
    HW_H,
    HW_P,
    HW_B,
    HW_CHANNELS
};

typedef struct hw_tcb {
    float tension, continuity, bias;
} hw_tcb;

typedef struct hw_animation {
    uint32_t name_offset; /* into the string block */
    const char *name;     /* decoded (points into the model's string block) */
    uint32_t name_length; /* strlen(name) */
    float start, end;     /* seconds on the shared timeline */
    uint32_t flags;       /* bit 0: loop */
} hw_animation;

typedef struct hw_object {
    uint32_t name_offset;
    const char *name;
    uint32_t name_length;
    uint16_t name_crc; /* the exporter writes 0; the game recomputes it */
    uint8_t pad[2];
    uint32_t animation_bits;
    int32_t key_count; /* phantom keys included */
    /* stored offsets of the arrays (kept for dump --source and messages) */
    uint32_t times_offset, tcb_offset, path_offset[HW_CHANNELS];
    float *times;             /* key_count, seconds */
    hw_tcb *tcb;              /* key_count */
    float *path[HW_CHANNELS]; /* key_count each: x, y, z (LightWave units), h, p, b (radians) */
} hw_object;

typedef struct hw_mad {
    float version;
    int32_t string_block_length;
    uint32_t string_block_offset;
    float length; /* informational: sum of the windows' lengths */
    float fps;
    int32_t object_count;
    uint32_t objects_offset;
    int32_t animation_count;
    hw_animation *animations;
    hw_object *objects;
    uint8_t *strings;       /* the string block as stored (string_block_length bytes) */
    bool strings_from_tail; /* stringBlock lies outside the file: its last bytes read (the 32-bit game's) */
    bool canonical;         /* laid out exactly as the exporter writes (the writer reproduces it) */
} hw_mad;

/* The exporter's (LWExport) contiguous layout: header, animation records,
 * object records, each object's arrays, the string block last. */
ra_status hw_mad_read(const uint8_t *data, size_t size, ra_arena *arena, hw_mad *out, ra_error *err);
/* hw_mad_read with the objects' keys read as jobs (ra_read_runner; run
 * NULL: in order on this thread). */
ra_status hw_mad_read_run(const uint8_t *data, size_t size, ra_arena *arena, hw_mad *out, ra_error *err,
                          ra_read_runner run, void *run_ctx);
/* Writes that layout; the model's string block and name offsets are kept. */
ra_status hw_mad_write(const hw_mad *m, ra_writer *w, ra_error *err);
/* Builds a string block from the animation and object `name`s (animation
 * names first, then object names, as the exporter does) and sets every
 * name_offset; for writers that make a model from scratch. */
bool hw_mad_set_strings(hw_mad *m, ra_arena *arena);

/* The exporter's phantom keys (docs/formats/homeworld.md §1): fills o's
 * arrays (in the arena) with n_real + 2 keys [k0', k0 .. k(n-1), k(n-1)'],
 * the first a copy of k0 at -1 s, the last a copy of k(n-1) at `phantom_end`
 * (LWExport: the end of the last animation in file order + 1 s,
 * hw_mad_phantom_end).  values[c] holds channel c's n_real values.  false
 * when out of memory or n_real < 1. */
bool hw_object_set_keys(hw_object *o, ra_arena *arena, size_t n_real, const float *times, const hw_tcb *tcb,
                        const float *const values[HW_CHANNELS], float phantom_end);
float hw_mad_phantom_end(const hw_mad *m);

/* hw_spline flags */
#define HW_SPLINE_RATIO_FALLBACK 1u /* a tangent ratio's denominator was <= 0: 0.5 was used */
#define HW_SPLINE_NOT_FINITE 2u     /* the value overflowed: 0 was used (as the 64-bit port does) */

/* The game's TCB spline (docs/formats/homeworld.md §2) of channel c of
 * object o at absolute time tau (test_models/homeworld/RULES.md).  `left`
 * takes the value just before tau where two real keys share a time.  d1/d2
 * (may be NULL) receive the first and second derivatives in time; *flags
 * (may be NULL) gets the HW_SPLINE_* bits of what happened ORed in. */
double hw_spline(const hw_object *o, int c, double tau, bool left, double *d1, double *d2, unsigned *flags);

/* ---- ship geometry: .geo / .peo ("RMF97ba" / "RMF99ba"), docs/formats/homeworld.md §5 ---- */
#define HW_GEO_HEADER_SIZE 68u
#define HW_GEO_OBJECT_SIZE 112u
#define HW_GEO_MATERIAL_SIZE 32u
#define HW_GEO_MAX_COUNT 65536u /* objects, materials */
#define HW_GEO_MAX_DEPTH 256u
#define HW_GEO_MDF_SMOOTHING 2u
#define HW_GEO_MDF_2SIDED 8u

typedef struct hw_geo_material {
    const char *name, *texture;          /* NULL when absent; texture: a .lif name, not read */
    uint32_t ambient, diffuse, specular; /* 0x00BBGGRR */
    uint16_t flags;                      /* MDF_* */
} hw_geo_material;

typedef struct hw_geo_vertex {
    float p[3];
    int32_t normal; /* into the object's whole normal list, -1: none */
} hw_geo_vertex;

typedef struct hw_geo_normal {
    float n[3];
} hw_geo_normal;

typedef struct hw_geo_polygon {
    uint16_t v[3];
    uint16_t material;   /* into hw_geo.materials */
    int32_t face_normal; /* into the object's normal list */
    float st[3][2];      /* per corner, as stored */
} hw_geo_polygon;

typedef struct hw_geo_object {
    uint32_t offset;  /* of the record */
    const char *name; /* NULL when absent; the key .mad paths bind to */
    uint8_t flags;
    int32_t mother, daughter, sister; /* object indices, -1: none */
    ra_mat4 local;                    /* localMatrix (row-major here; column-major on disk) */
    int32_t vertex_count, normal_count, polygon_count;
    hw_geo_vertex *vertices;
    hw_geo_normal *normals; /* face normals then vertex normals */
    hw_geo_polygon *polygons;
} hw_geo_object;

typedef struct hw_geo {
    uint32_t version;
    uint32_t object_count, material_count;
    hw_geo_object *objects;
    hw_geo_material *materials;
} hw_geo;

/* Reads a whole .geo/.peo; every count, offset, link and index is checked
 * (errors name "homeworld_geo", the field and its offset). */
ra_status hw_geo_read(const uint8_t *data, size_t size, ra_arena *arena, hw_geo *out, ra_error *err);

/* For callers holding a document of format homeworld_mad (NULL otherwise). */
const hw_mad *hw_document_mad(const ra_document *doc);

#ifdef __cplusplus
}
#endif
#endif
