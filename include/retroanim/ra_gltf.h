/* retroanim — glTF 2.0 written straight from an ra_scene (no Assimp).
 *
 * What the file holds: every node (name, hierarchy, rest transform as TRS),
 * one animation per scene animation (LINEAR samplers; every animation's last
 * input is the scene animation's duration, so looping players loop with the
 * game's period), cameras (perspective, or orthographic where the source is)
 * on nodes whose -Z is the view direction and +Y the up, metadata and
 * warnings in `extras` (scene, nodes, animations), and skeletons as skins
 * (inverse bind matrices from the rest pose).  No placeholder mesh.
 *
 * Time and memory are linear in the keys: the JSON is laid out from the key
 * counts, then the binary data is streamed.  The output is written whole or
 * not at all (ra_output.h). */
#ifndef RETROANIM_RA_GLTF_H
#define RETROANIM_RA_GLTF_H

#include "retroanim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ra_gltf_options {
    int binary;            /* 1: .glb; 0: .gltf with a .bin beside it; -1: from the path's extension */
    const char *generator; /* asset.generator; NULL: "retroanim VERSION" */
    /* Visibility steps (LEGO Island) also as KHR_node_visibility animated through
     * KHR_animation_pointer (used, not required; STEP samplers of unsigned bytes
     * 0/1).  Off by default: Assimp 5.2.5's glTF importer reads such a channel
     * as a translation track.  The steps are in the nodes' extras either way. */
    bool khr_visibility;
} ra_gltf_options;

/* What a writer put into its file, for summaries. */
typedef struct ra_write_stats {
    size_t nodes, animations, cameras, skins, channels;
    uint64_t keys;  /* keys written (inputs of every sampler) */
    uint64_t bytes; /* bytes of every file written */
} ra_write_stats;

RA_API void ra_gltf_options_default(ra_gltf_options *o);
/* Writes the scene to path (and, for .gltf, PATH_STEM.bin beside it).  opt and
 * stats may be NULL. */
RA_API ra_status ra_gltf_write(const ra_scene *s, const char *path, const ra_gltf_options *opt, ra_write_stats *stats,
                               ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
