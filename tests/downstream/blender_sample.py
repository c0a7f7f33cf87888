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
    # the importer's own starting values: bones cannot hold a rest scale, so
    # it keeps one in the pose bone's basis
    rest = {o.name: o.matrix_basis.copy() for o in bpy.data.objects}
    for o in bpy.data.objects:
        if o.pose:
            for pb in o.pose.bones:
                rest[(o.name, pb.name)] = pb.matrix_basis.copy()
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
        for o in bpy.data.objects:  # start from the rest pose
            o.matrix_basis = rest[o.name]
            if o.pose:
                for pb in o.pose.bones:
                    pb.matrix_basis = rest[(o.name, pb.name)]
        anims = gltf.data.animations or []
        track = None
        if want["index"] < len(anims):
            track = anims[want["index"]].track_name
            BlenderAnimation.restore_animation(gltf, track)
        else:
            for o in bpy.data.objects:
                if o.animation_data:
                    o.animation_data.action = None
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
