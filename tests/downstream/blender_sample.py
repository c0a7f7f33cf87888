# Plays .glb files in Blender (its own glTF importer, headless) and prints the
# world matrix of every glTF node at the requested times, in glTF's frame.
#
#   blender -b --factory-startup --python blender_sample.py -- JOBS.json OUT.json
#   JOBS: [{"file": "a.glb", "anims": [{"index": 0, "times": [0, 0.5, ...]}]}]
#   OUT:  [{"file", "error"?, "anims": [{"index", "track", "samples":
#           [{"t", "nodes": {"glTF node name": [16 numbers, row-major]}}]}]}]
#
# Nodes are matched to Blender's objects and bones through the importer's
# own node table (Blender cuts names at 63 bytes, so names cannot be used).
# Blender is Z up: the importer maps glTF (x, y, z) to (x, -z, y); a bone's
# axes are the node's own (bone_heuristic BLENDER), an object's are converted.
import json
import math
import sys
import traceback

import bpy
import numpy
from mathutils import Matrix

# Debian's Blender 3.4 with numpy 1.24: the glTF importer still uses np.bool
# on meshes (DOWNSTREAM.md §1).
if "bool" not in numpy.__dict__:
    numpy.bool = bool

from io_scene_gltf2.blender.imp import gltf2_blender_gltf as _bg  # noqa: E402
from io_scene_gltf2.blender.imp.gltf2_blender_animation import BlenderAnimation  # noqa: E402
from io_scene_gltf2.blender.imp.gltf2_blender_vnode import VNode  # noqa: E402

_captured = {}
_create = _bg.BlenderGlTF.create


def _capture(gltf):
    _captured["gltf"] = gltf
    return _create(gltf)


_bg.BlenderGlTF.create = staticmethod(_capture)

FPS = 24
A = Matrix(((1, 0, 0, 0), (0, 0, -1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))  # glTF -> Blender
A_INV = A.inverted()


def load(path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = FPS
    bpy.context.scene.render.fps_base = 1.0
    _captured.clear()
    res = bpy.ops.import_scene.gltf(filepath=path, bone_heuristic="BLENDER", guess_original_bind_pose=False)
    if res != {"FINISHED"} or "gltf" not in _captured:
        raise RuntimeError("Blender's glTF import failed: %s" % (res,))
    gltf = _captured["gltf"]
    # every node's rest transform, as the importer sets it before it plays the first animation
    # (gltf2_blender_node.py): an object's basis is the node's TRS; a bone's pose basis is the
    # node's TRS relative to its edit bone (bones cannot hold a rest scale, the pose keeps it)
    rest = {}
    for vn in gltf.vnodes.values():
        t, r, s = vn.trs()
        if vn.type == VNode.Bone:
            arma = gltf.vnodes[vn.bone_arma].blender_object
            et, er = vn.editbone_trans, vn.editbone_rot
            rest[(arma.name, vn.blender_bone_name)] = Matrix.LocRotScale(er.conjugated() @ (t - et),
                                                                         er.conjugated() @ r, s)
        elif vn.blender_object is not None:
            rest[vn.blender_object.name] = Matrix.LocRotScale(t, r, s)
    return gltf, rest


def node_table(gltf):
    out = []
    for idx, node in enumerate(gltf.data.nodes or []):
        vn = gltf.vnodes.get(idx)
        if vn is None or node.name is None:
            continue
        if vn.type == VNode.Bone:
            arma = gltf.vnodes[vn.bone_arma].blender_object
            out.append((node.name, "bone", arma, vn.blender_bone_name))
        elif vn.blender_object is not None:
            out.append((node.name, "object", vn.blender_object, None))
    return out


def world(kind, obj, bone):
    if kind == "bone":
        m = A_INV @ obj.matrix_world @ obj.pose.bones[bone].matrix
    else:
        m = A_INV @ obj.matrix_world @ A
    return [m[r][c] for r in range(4) for c in range(4)]


def play(job):
    out = {"file": job["file"], "anims": []}
    for want in job["anims"]:
        gltf, rest = load(job["file"])
        for o in bpy.data.objects:  # no action (the importer activates the first), at rest
            if o.animation_data:
                o.animation_data.action = None
            if o.name in rest:
                o.matrix_basis = rest[o.name]
            if o.pose:
                for pb in o.pose.bones:
                    pb.matrix_basis = rest[(o.name, pb.name)]
        anims = gltf.data.animations or []
        track = None
        if want["index"] < len(anims):
            track = anims[want["index"]].track_name
            BlenderAnimation.restore_animation(gltf, track)
        table = node_table(gltf)
        samples = []
        for t in want["times"]:
            f = t * FPS
            bpy.context.scene.frame_set(int(math.floor(f)), subframe=f - math.floor(f))
            bpy.context.view_layer.update()
            samples.append({"t": t, "nodes": {name: world(kind, obj, bone) for name, kind, obj, bone in table}})
        out["anims"].append({"index": want["index"], "track": track, "samples": samples})
    return out


def main():
    argv = sys.argv[sys.argv.index("--") + 1:]
    jobs = json.load(open(argv[0]))
    results = []
    for job in jobs:
        try:
            results.append(play(job))
        except Exception:
            results.append({"file": job["file"], "error": traceback.format_exc(), "anims": []})
    with open(argv[1], "w") as f:
        json.dump(results, f)


main()
