/* Metroid Prime / Metroid Prime 2 ANIM and CINF: the format models, field for
 * field, with the bitstream decoder and encoder.
 * Spec: docs/formats/metroid_prime.md.  Big-endian throughout. */
#ifndef RETROANIM_METROID_ANIM_H
#define RETROANIM_METROID_ANIM_H

#include "ra_document.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layouts a file can have (docs/formats/metroid_prime.md §2, §3, §3.6). */
typedef enum mp_layout {
    MP_V0_MP1 = 1, /* version 0, Prime 1: rotation map, rotation->translation map, EVNT id */
    MP_V0_MP2,     /* version 0, Prime 2: rotation/translation/scale maps, S-R-T arrays, no EVNT */
    MP_V2_MP1,     /* version 2, Prime 1: EVNT id, unk 1, u32 bone ids, descriptor count twice */
    MP_V2_MP2,     /* version 2, Prime 2: u16 0x0101, scale multiplier, u8 ids, optional rotation */
    MP_V2_DEMO,    /* version 2, Echoes demo: the Prime 1 layout without the EVNT id */
    MP_V3_PC       /* version 3, metaforce PC: Prime 1 header, 32-bit descriptor fields, 24-bit values */
} mp_layout;

const char *mp_layout_name(mp_layout l); /* "v2-mp1", ... */
bool mp_layout_from_name(const char *name, mp_layout *out);

#define MP_BONE_SLOTS 100 /* version 0 bone map size; valid bone ids are < 100 */
#define MP_NO_PARENT 2    /* Prime 1 CINF parent id meaning "none" (mp_bone_parent) */
#define MP_ROOT_BONE 3    /* the character root (root motion) */
#define MP_MAX_BITS 32    /* widest quantized delta accepted */

/* One quantized component of a version 2/3 channel: initial value and delta width. */
typedef struct mp_quant {
    int32_t init; /* s16 (v2) or signed 24-bit (v3) */
    uint8_t bits; /* 0..32 */
} mp_quant;

/* A bone's animation.  Key j of every present track is at frame
 * key_frames[j] of the animation.  Version 0 stores the values (floats, held
 * here as doubles); version 2/3 keeps only the quantized values, decoded when
 * read (mp_key_rot, mp_key_trans, mp_key_scale: use those for every layout). */
typedef struct mp_channel {
    uint32_t bone_id;
    bool has_rot, has_trans, has_scale;
    ra_quat *rot;   /* version 0: key_count entries (w,x,y,z) when has_rot; else NULL */
    ra_vec3 *trans; /* version 0: absolute local offsets when has_trans; else NULL */
    ra_vec3 *scale; /* version 0: when has_scale (Prime 2); else NULL */
    /* version 2/3 descriptor, as stored */
    uint32_t rot_count, trans_count, scale_count;
    mp_quant rq[3], tq[3], sq[3];
    /* version 2/3 quantized accumulators per key (3 per key) and w sign bits,
     * kept so that the writer reproduces the bitstream exactly */
    int32_t *qrot, *qtrans, *qscale;
    uint8_t *wneg;
} mp_channel;

typedef struct mp_anim {
    mp_layout layout;
    uint32_t version; /* 0, 2 or 3 */

    /* version 0 */
    float duration;          /* seconds (also version 2/3) */
    uint32_t duration_state; /* CCharAnimTime state */
    float interval;          /* seconds per frame (also version 2/3) */
    uint32_t interval_state;
    uint32_t root_bone; /* (also version 2/3) */
    uint32_t map_count; /* always 100 */
    uint8_t *bone_map;  /* [map_count]: bone id -> channel, 0xFF = none */
    uint32_t rot_map_count, trans_map_count, scale_map_count;
    uint8_t *rot_map;   /* MP1: channel -> translation index (the "rotation map" is bone_map);
                                MP2: channel -> rotation index */
    uint8_t *trans_map; /* MP2 only: channel -> translation index */
    uint8_t *scale_map; /* MP2 only: channel -> scale index */
    uint32_t rot_array_count, trans_array_count, scale_array_count; /* elements as stored */
    float *rot_array;                                               /* 4 floats (w,x,y,z) per element, channel-major */
    float *trans_array;                                             /* 3 floats per element */
    float *scale_array;                                             /* 3 floats per element (MP2) */

    /* version 0 (MP1) and version 2/3 MP1-style */
    bool has_evnt;
    uint32_t evnt_id;

    /* version 2/3 header */
    uint32_t scratch_size;
    uint32_t unk_0c;  /* 1 (MP1, v3); absent in MP2 and demo */
    uint16_t mp2_tag; /* 0x0101 (MP2) */
    uint32_t looping;
    uint32_t rot_div;
    float trans_mult;
    float scale_mult;           /* MP2 */
    uint32_t header_channels;   /* channel count in the header */
    uint32_t unk_2c;            /* 1 */
    uint32_t bitmap_bits;       /* frames covered by the key bitmap */
    uint32_t *bitmap;           /* ceil(bitmap_bits/32) words, bit f = frame f keyed (LSB first) */
    uint32_t channel_count_dup; /* the first of the two counts before the descriptors (MP1, demo, v3) */
    uint32_t desc_count;        /* descriptors that follow */

    /* decoded, common to all layouts */
    uint32_t key_count;   /* keys per track (v0: frame count K; v2/3: popcount(bitmap)) */
    uint32_t *key_frames; /* [key_count] frame index of each key */
    size_t channel_count;
    mp_channel *channels;    /* v0: one per animated bone (bone map order); v2/3: descriptor order */
    size_t bitstream_offset; /* v2/3: byte offset of the bitstream in the file */
    double rot_step;         /* v2/3: radians per rotation quantum, pi / (2 rot_div) */
    const double *rot_sin;   /* v2/3 with many rotation keys: sin(q rot_step) for |q| <= MP_SIN_HALF; else NULL */
    size_t bitstream_size;

    size_t trailing_size; /* bytes after the data (0xFF padding), kept for byte-identical writes */
    uint8_t *trailing;
} mp_anim;

/* Key j of a channel's tracks as the game decodes them: version 0's stored
 * values, or version 2/3's quantized ones (x, y, z = sin(q rot_step), w from
 * the unit norm with the stored sign; translation and scale q * mult). */
#define MP_SIN_HALF 32768
static inline double mp_rot_sin(const mp_anim *a, int32_t q)
{
    if (a->rot_sin && q >= -MP_SIN_HALF && q <= MP_SIN_HALF) return a->rot_sin[q + MP_SIN_HALF];
    return sin(q * a->rot_step);
}
static inline ra_quat mp_key_rot(const mp_anim *a, const mp_channel *ch, uint32_t j)
{
    if (ch->rot) return ch->rot[j];
    const int32_t *q = &ch->qrot[3 * (size_t)j];
    double x = mp_rot_sin(a, q[0]), y = mp_rot_sin(a, q[1]), z = mp_rot_sin(a, q[2]);
    double w2 = 1.0 - x * x - y * y - z * z;
    double w = sqrt(w2 > 0 ? w2 : 0);
    return ra_q(ch->wneg[j] ? -w : w, x, y, z);
}
static inline ra_vec3 mp_dequant_vec(const int32_t *q, float mult)
{
    return ra_v3((double)q[0] * mult, (double)q[1] * mult, (double)q[2] * mult);
}
static inline ra_vec3 mp_key_trans(const mp_anim *a, const mp_channel *ch, uint32_t j)
{
    return ch->trans ? ch->trans[j] : mp_dequant_vec(&ch->qtrans[3 * (size_t)j], a->trans_mult);
}
static inline ra_vec3 mp_key_scale(const mp_anim *a, const mp_channel *ch, uint32_t j)
{
    return ch->scale ? ch->scale[j] : mp_dequant_vec(&ch->qscale[3 * (size_t)j], a->scale_mult);
}

/* Reads and decodes an ANIM.  layout_hint 0 = detect (docs/formats/metroid_prime.md §2, §3.6). */
ra_status mp_anim_read(const uint8_t *data, size_t size, mp_layout layout_hint, ra_arena *arena, mp_anim *out,
                       ra_error *err);
/* The same with the compressed bitstream's channels decoded as jobs, in
 * `parts` runs of channels (the threads run will use; run NULL: on this
 * thread, as one).  The model is the same. */
ra_status mp_anim_read_run(const uint8_t *data, size_t size, mp_layout layout_hint, ra_arena *arena, mp_anim *out,
                           ra_error *err, ra_read_runner run, void *run_ctx, unsigned parts);
/* Writes the model exactly (v2/3 from the quantized values, v0 from the arrays). */
ra_status mp_anim_write(const mp_anim *a, ra_writer *w, ra_error *err);

/* ---- encoder (docs/formats/metroid_prime.md §3.3): float keys -> a model the writer turns into bytes ---- */
typedef struct mp_encode_track {
    uint32_t bone_id;
    const ra_quat *rot;   /* key_count keys, or NULL (only Prime 2 layouts allow no rotation) */
    const ra_vec3 *trans; /* NULL = no translation */
    const ra_vec3 *scale; /* NULL = no scale (Prime 2 layouts only) */
} mp_encode_track;

typedef struct mp_encode_params {
    mp_layout layout;
    float interval;     /* seconds per frame */
    float duration;     /* 0 = automatic: (last frame) * interval (v2/3), K * interval (v0) */
    uint32_t root_bone; /* the character root: 3 in Prime 1 (Prime 2 renumbers bones) */
    bool looping;
    uint32_t evnt_id;
    uint32_t rot_div;       /* 0 = 0x7FFF (v2) / 0x7FFFFF (v3) */
    float trans_mult;       /* 0 = chosen from the data */
    float scale_mult;       /* 0 = chosen from the data */
    bool keep_signs;        /* keep quaternion signs as given (re-encoding decoded keys); else
                                key 0 gets w >= 0 and each key the hemisphere of the previous */
    const uint32_t *frames; /* key_count frame numbers, increasing, frames[0] == 0 (v0: 0..K-1) */
    uint32_t key_count;
    uint32_t pad_to; /* pad the file with 0xFF to a multiple of this (0 = none) */
} mp_encode_params;

ra_status mp_anim_encode(const mp_encode_params *p, const mp_encode_track *tracks, size_t track_count, ra_arena *arena,
                         mp_anim *out, ra_error *err);

/* Largest decoding error of the encoder for one rotation component (radians of
 * the asin angle) and for a translation/scale component (units). */
double mp_rotation_quantum(uint32_t rot_div);

/* ---- CINF (docs/formats/metroid_prime.md §5) ------------------------------------ */
typedef struct mp_bone {
    uint32_t id;
    uint32_t parent;
    float pos[3];       /* absolute model-space bind position */
    float rot_model[4]; /* MP2 only (w,x,y,z) */
    float rot_local[4]; /* MP2 only */
    uint32_t link_count;
    uint32_t *links; /* parent + children ids as stored */
    size_t offset;   /* byte offset of the bone record */
} mp_bone;

typedef struct mp_cinf {
    int game; /* 1 or 2 */
    uint32_t bone_count;
    mp_bone *bones;
    uint32_t build_count;
    uint32_t *build_order;
    uint32_t name_count;
    char **names;
    uint32_t *name_ids;
    size_t trailing_size;
    uint8_t *trailing;
} mp_cinf;

/* The record index of bone i's parent (ids: the skeleton's ids sorted by
 * ra_sorted_ids), -1 for a root.  Prime 1 writes MP_NO_PARENT for a root, an
 * id no bone has; Prime 2 numbers its bones from 0, so there 2 is bone 2's
 * id like any other (PrimeWorldEditor looks every parent id up).  Either
 * way an id no bone has, or the bone's own, makes a root; a duplicated id
 * names its first record. */
static inline int64_t mp_bone_parent(const mp_cinf *k, const ra_id_slot *ids, size_t i)
{
    uint32_t p = k->bones[i].parent;
    if (k->game != 2 && p == MP_NO_PARENT) return -1;
    int64_t j = ra_find_id(ids, k->bone_count, p);
    return j == (int64_t)i ? -1 : j;
}

/* game_hint 0 = detect (docs/formats/metroid_prime.md §5: the u32 after the first position is 0 or > 100
 * in Prime 2). */
ra_status mp_cinf_read(const uint8_t *data, size_t size, int game_hint, ra_arena *arena, mp_cinf *out, ra_error *err);
ra_status mp_cinf_write(const mp_cinf *c, ra_writer *w, ra_error *err);
/* Name of a bone id from the name table, NULL when it has none. */
const char *mp_cinf_bone_name(const mp_cinf *c, uint32_t id);

/* Finds the skeleton for an ANIM file: a sibling with the same stem and a
 * .cinf extension in any case, else the only .cinf in the folder.  Writes the
 * path into out and whether it is the same-stem sibling into *sibling; false
 * when none (or several) exist. */
bool mp_find_cinf(const char *anim_path, char *out, size_t out_size, bool *sibling);

/* ---- characters: TXTR, CSKR, CMDL (docs/formats/metroid_prime.md §13) ---------- */
/* A texture's level 0 decoded to RGBA8, rows in stored order (GX t = 0 is the first row). */
typedef struct mp_txtr {
    uint32_t format; /* GX id 0..10 */
    uint32_t width, height, mips;
    bool has_palette;
    uint32_t palette_format; /* 0 IA8, 1 RGB565, 2 RGB5A3 */
    uint8_t *rgba;           /* width * height * 4 */
} mp_txtr;

/* "I4", "I8", ... "CMPR"; "?" outside 0..10. */
const char *mp_txtr_format_name(uint32_t format);
ra_status mp_txtr_read(const uint8_t *data, size_t size, ra_arena *arena, mp_txtr *out, ra_error *err);

/* A skin rule: at most 3 weights (the game ignores the rest), duplicated ids summed. */
#define MP_RULE_WEIGHTS 3
typedef struct mp_skin_rule {
    uint32_t weight_count; /* as stored */
    uint32_t used;         /* weights kept (<= 3, duplicates merged) */
    uint32_t bone[MP_RULE_WEIGHTS];
    float weight[MP_RULE_WEIGHTS];
    uint64_t bone_offset[MP_RULE_WEIGHTS]; /* byte offset of each kept id */
    uint32_t vertex_count;
    size_t offset;
} mp_skin_rule;

typedef struct mp_cskr {
    uint32_t rule_count;
    mp_skin_rule *rules;
    uint64_t vertices;  /* sum of the rules' vertex counts */
    uint32_t dropped;   /* weights past the third, ignored */
    size_t footer_size; /* bytes after the rules (footer, padding), not interpreted */
} mp_cskr;

ra_status mp_cskr_read(const uint8_t *data, size_t size, ra_arena *arena, mp_cskr *out, ra_error *err);

#define MP_NO_INDEX UINT32_MAX
/* A material of set 0, reduced to what the glTF approximation needs. */
typedef struct mp_material {
    uint32_t flags;
    uint32_t vtx_flags;
    uint32_t texture_count;
    uint32_t *textures;   /* indices into the set's texture table */
    uint32_t konst_count; /* at most 4 kept (the file may list more) */
    uint32_t konst[4];    /* RGBA8 */
    uint16_t blend_dst, blend_src;
    uint32_t tev_count;
    uint32_t base_texture; /* TXTR id of the base colour texture, when has_texture */
    bool has_texture;
    uint32_t base_uv; /* TEXn whose coordinates the base texture uses */
    bool has_konst_color;
    uint32_t konst_color; /* RGBA8 base colour from a KONST stage */
    size_t offset;
    size_t vat_offset; /* of vtx_flags */
} mp_material;

/* A triangle corner: indices into the CMDL arrays, MP_NO_INDEX when absent. */
typedef struct mp_corner {
    uint32_t pos, nrm, clr, uv;
} mp_corner;

typedef struct mp_surface {
    uint32_t material;
    uint32_t tri_count;
    mp_corner *corners; /* 3 per triangle, counter-clockwise */
    bool short_uv;      /* uv indexes the short-UV array */
    size_t offset;
} mp_surface;

typedef struct mp_cmdl {
    uint32_t version; /* 2 Prime 1, 4 Prime 2 */
    uint32_t flags;
    float aabb[6];
    uint32_t section_count, material_sets;
    uint32_t pos_count, nrm_count, clr_count, uv_count, suv_count;
    float *pos, *nrm, *uv, *suv; /* 3, 3 (unit), 2, 2 per element */
    uint32_t *clr;               /* RGBA8 */
    uint32_t texture_count;      /* set 0's texture table */
    uint32_t *texture_ids;
    uint32_t material_count;
    mp_material *materials;
    uint32_t surface_count;
    mp_surface *surfaces;
    uint32_t skipped_primitives; /* lines and points */
    uint32_t dropped_triangles;  /* degenerate (a repeated position) */
    /* what the reader tolerated, as the public loaders do (warnings) */
    uint32_t extra_konst;        /* materials listing more than 4 konst colours (the rest skipped) */
    uint32_t no_position_unused; /* materials without positions that no surface uses */
    uint32_t float_uv_fallback;  /* used materials with flag 0x2000 in a model without short UVs */
    uint32_t dl_over_size;       /* surfaces whose display list runs past its size field */
    uint32_t vat_mismatch;       /* primitives whose vertex format is > 2 or disagrees with the normals */
    uint32_t nonfinite_unused;   /* non-finite array values no triangle uses */
    const uint8_t *bytes;        /* the file, copied (the writer gives it back) */
    size_t size;
} mp_cmdl;

ra_status mp_cmdl_read(const uint8_t *data, size_t size, ra_arena *arena, mp_cmdl *out, ra_error *err);

/* A sibling of path with the same stem and extension ext in any case
 * (name "cmdl"), or the file called `name` in any case when same_stem is false. */
bool mp_find_beside(const char *path, const char *name, bool same_stem, char *out, size_t out_size);

/* The models of a document loaded as metroid_anim or metroid_cinf (NULL when
 * the document is of another format or has no such part). */
const mp_anim *mp_document_anim(const ra_document *doc);
const mp_cinf *mp_document_cinf(const ra_document *doc);

#ifdef __cplusplus
}
#endif
#endif
