# Plays .fbx files in Blender (its own FBX importer, headless, default
# settings) and prints the world matrix of every FBX model at the requested
# times, in the file's frame, plus the cameras as Blender holds them.
#
#   blender -b --factory-startup --python blender_fbx_sample.py -- JOBS.json OUT.json
#   JOBS: [{"file": "a.fbx", "anims": [{"index": 0, "name": "Animation", "times": [0, 0.5, ...]}]}]
#   OUT:  [{"file", "error"?, "anims": [{"index", "clip", "duration", "cameras", "meshes",
#           "samples": [{"t", "nodes": {"model name": [16 numbers, row-major]},
#                        "views": {"camera name": {"dir": [3], "up": [3]}},
#                        "meshes"?: {"mesh name": {"corners", "vertices"}}}]}]}]
#
# The files are imported as a user would: File > Import > FBX with Blender's
# default settings, which read the file's axes (Y up: the importer maps (x, y,
# z) to (x, -z, y) on the root objects), its unit (1 m: scale 1), its frame
# rate (scene.render.fps) and put the first key at frame 1 (Animation Offset).
# Blender makes one action per object (armature) and animation stack, named
# "OBJECT|STACK", and assigns the first stack's; another stack is played by
# assigning its actions.  Objects and bones are found by name (Blender cuts
# names at 63 bytes; longer or repeated names are reported as missing).  A
# bone's pose matrix is in its armature's space, and the bone's axes are its
# model's (Blender's default primary axis Y, secondary X: no correction).  A
# camera object looks down its -Z with +Y up; the importer turns it from the
# FBX camera frame (+X view).  Every mesh object is reported by its name (an
# FBX Mesh model: one scene mesh, named after it), all its polygons
# (blender_jobs.mesh_info).
import math
import os
import sys

import bpy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_jobs import mesh_info, mesh_positions, mesh_times, public, run_jobs  # noqa: E402
from mathutils import Matrix, Vector

A = Matrix(((1, 0, 0, 0), (0, 0, -1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))  # file (Y up) -> Blender
A_INV = A.inverted()


def load(path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    res = bpy.ops.import_scene.fbx(filepath=path)
    if res != {"FINISHED"}:
        raise RuntimeError("Blender's FBX import failed: %s" % (res,))
    # the rest pose as imported, before any frame is evaluated
    rest = {o.name: o.matrix_basis.copy() for o in bpy.data.objects}
    return rest


def node_table():
    """{model name: (kind, object, bone name)} for every object and bone."""
    out = {}
    for o in bpy.data.objects:
        if o.type == "ARMATURE":
            for b in o.data.bones:
                out[b.name] = ("bone", o, b.name)
        if o.type != "CAMERA":  # a camera is the FBX "NAME.view" model, not a scene node
            out.setdefault(o.name, ("object", o, None))
    return out


def world(kind, obj, bone):
    m = A_INV @ obj.matrix_world
    if kind == "bone":
        m = m @ obj.pose.bones[bone].matrix
    return [m[r][c] for r in range(4) for c in range(4)]


def cameras():
    out = []
    for o in bpy.data.objects:
        if o.type != "CAMERA":
            continue
        c = o.data
        name = o.name[:-5] if o.name.endswith(".view") else o.name
        cam = {"name": name, "type": c.type, "near": c.clip_start, "far": c.clip_end}
        if c.type == "PERSP":
            cam["xfov"] = 2 * math.atan(c.sensor_width / (2 * c.lens))
        else:
            cam["ortho_scale"] = c.ortho_scale
        out.append(cam)
    return out


def views():
    out = {}
    for o in bpy.data.objects:
        if o.type != "CAMERA":
            continue
        m = A_INV @ o.matrix_world
        d = (m.to_3x3() @ Vector((0, 0, -1))).normalized()
        u = (m.to_3x3() @ Vector((0, 1, 0))).normalized()
        name = o.name[:-5] if o.name.endswith(".view") else o.name
        out[name] = {"dir": list(d), "up": list(u)}
    return out


def play(job):
    out = {"file": job["file"], "anims": []}
    for want in job["anims"]:
        rest = load(job["file"])
        scene = bpy.context.scene
        fps = scene.render.fps / scene.render.fps_base
        stack = want.get("name")
        track = None
        ends = []
        for o in bpy.data.objects:
            ad = o.animation_data
            if ad is None:
                continue
            action = None
            if stack is not None:
                key = ("%s|%s" % (o.name, stack))[:63]
                action = bpy.data.actions.get(key)
            ad.action = action
            if action is None:
                o.matrix_basis = rest[o.name]
                if o.pose:
                    for pb in o.pose.bones:
                        pb.matrix_basis = Matrix.Identity(4)
            else:
                track = stack
                ends.append(action.frame_range[1])
        table = node_table()
        meshes = [(o.name, o, mesh_info(o.name, o, 0, len(o.data.polygons)))
                  for o in bpy.data.objects if o.type == "MESH"]
        at = mesh_times(want["times"])
        samples = []
        for i, t in enumerate(want["times"]):
            f = 1 + t * fps  # the importer's Animation Offset: the file's time 0 is frame 1
            scene.frame_set(int(math.floor(f)), subframe=f - math.floor(f))
            bpy.context.view_layer.update()
            samples.append({"t": t, "nodes": {name: world(*v) for name, v in table.items()}, "views": views()})
            if i in at and meshes:
                samples[-1]["meshes"] = {name: mesh_positions(o, info) for name, o, info in meshes}
        out["anims"].append({"index": want["index"], "clip": track, "samples": samples, "cameras": cameras(),
                             "meshes": [public(info) for _, _, info in meshes],
                             "duration": (max(ends) - 1) / fps if ends else None})
    return out


run_jobs(play)
