/* retroanim — binary FBX written straight from an ra_scene (no Assimp).
 *
 * What the file holds (FBX 7.4, or 7.5 with 64-bit offsets when a file would
 * pass 4 GiB):
 * - GlobalSettings: Y up, Z front, X right (right-handed, as glTF), a unit
 *   of 1 metre (UnitScaleFactor 100: FBX counts in centimetres), and the
 *   frame rate of the first animation when it is a whole number of frames per
 *   second from 10 to 240 (else 30).  Times are KTime (46,186,158,000 a second), so
 *   keys keep their exact times whatever the frame rate.
 * - every node as a Model (Null; LimbNode for the joints of a skin), with its
 *   rest transform as Lcl Translation / Rotation (Euler XYZ, degrees) /
 *   Scaling, InheritType RSrs (parent world times local, as the scene plays);
 * - cameras: an extra Model "NAME.view" below the camera's node, turned so
 *   that its +X is the view direction and +Y the up (the FBX camera frame),
 *   holding a Camera attribute with the game's field of view (as FocalLength
 *   on a 35 mm film gate and as FieldOfView), aspect and clip planes;
 * - one AnimationStack (with one AnimationLayer) per animation, LocalStop at
 *   the animation's duration; a curve node per animated T/R/S with three
 *   linear AnimationCurves.  Rotations become Euler curves that are continuous
 *   and dense enough that players interpolating the three angles linearly
 *   (Blender) stay within the scene's key-density tolerance of slerp; players
 *   that slerp between keys (Assimp, three.js) play the keys exactly.  A curve
 *   that ends before the animation gets a hold key at its duration;
 * - metadata as user properties (Properties70 flag "U") of each node's Model,
 *   the scene's and its warnings on the root node's.
 *
 * The nodes are written flat (the hierarchy is in Connections), so any depth
 * is fine.  Memory is one rotation track's Euler keys; the output is written
 * whole or not at all (ra_output.h); it must be seekable (a file or a device
 * such as /dev/null, not a pipe). */
#ifndef RETROANIM_RA_FBX_H
#define RETROANIM_RA_FBX_H

#include "retroanim.h"
#include "ra_gltf.h" /* ra_write_stats */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ra_fbx_options {
    const char *creator; /* Creator; NULL: "retroanim VERSION" */
    int version;         /* 7400 or 7500; 0: 7400 unless the file passes 4 GiB */
    /* largest rotation error (radians) of linear Euler playback between keys;
     * <= 0: RA_DENSITY_TOL / the scene's lever sum (ra_scene_lever_sum), at
     * least 1e-7 and at most 1e-3 */
    double euler_tolerance;
} ra_fbx_options;

RA_API void ra_fbx_options_default(ra_fbx_options *o);
/* Writes the scene to path as binary FBX.  opt and stats may be NULL. */
RA_API ra_status ra_fbx_write(const ra_scene *s, const char *path, const ra_fbx_options *opt, ra_write_stats *stats,
                              ra_error *err);

#ifdef __cplusplus
}
#endif
#endif
