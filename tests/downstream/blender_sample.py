# Plays .glb files in Blender (its own glTF importer, headless) and prints the
# world matrix of every glTF node at the requested times, in glTF's frame.
#
#   blender -b --factory-startup --python blender_sample.py -- JOBS.json OUT.json
#   JOBS: [{"file": "a.glb", "anims": [{"index": 0, "times": [0, 0.5, ...]}]}]
#   OUT:  [{"file", "error"?, "anims": [{"index", "track", "meshes": [...], "samples":
#           [{"t", "nodes": {"glTF node name": [16 numbers, row-major]},
#             "meshes"?: {"scene mesh name": {"corners", "vertices"}}}]}]}]
#
# The files are imported as a user would: File > Import > glTF with Blender's
# default settings.  The importer's own node table is read (not changed) to
# match glTF nodes to Blender's objects and bones (Blender cuts names at 63
# bytes, so names cannot be used).  Blender is Z up: the importer maps glTF
# (x, y, z) to (x, -z, y).  A bone's axes are turned from its node's by the
# importer's bone heuristic; that turn is fixed per bone, so it is measured at
# the rest pose and taken off.  A camera object looks down its -Z with +Y up,
# as a glTF camera node does.
#
# Meshes: the importer makes one Blender mesh per glTF mesh, its primitives'
# triangles one after the other (prim.num_faces each, its own vertices: the
# distinct indices it uses); a primitive is the scene mesh its extras.name
# names.  See blender_jobs.mesh_info for what is reported.
import math
import os
import sys

import bpy
import numpy

# Blender 3.4's glTF importer shades the polygons of a mesh with normals using
# numpy's np.bool (gltf2_blender_mesh.set_poly_smoothing), an alias numpy 1.24
# removed; Blender's own builds bundle numpy 1.23, Debian's blender runs the
# system numpy (1.24 in bookworm), where every glTF mesh with normals fails to
# import.  The alias is put back (the same type; fixed in later importers).
if "bool" not in vars(numpy):
    numpy.bool = bool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_jobs import mesh_info, mesh_positions, mesh_times, public, run_jobs  # noqa: E402
from mathutils import Matrix, Quaternion, Vector

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
    res = bpy.ops.import_scene.gltf(filepath=path)
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


def gltf_rest_worlds(gltf):
    """Every glTF node's rest world matrix, from the file's own TRS."""
    nodes = gltf.data.nodes or []
    local = []
    for n in nodes:
        if n.matrix:
            local.append(Matrix([n.matrix[c::4] for c in range(4)]))
            continue
        t = Vector(n.translation or (0, 0, 0))
        r = n.rotation or (0, 0, 0, 1)
        sc = Vector(n.scale or (1, 1, 1))
        local.append(Matrix.LocRotScale(t, Quaternion((r[3], r[0], r[1], r[2])), sc))
    parent = {}
    for i, n in enumerate(nodes):
        for c in n.children or []:
            parent[c] = i
    out = {}
    for i in range(len(nodes)):  # iterative: the trees go 950 levels deep
        chain = []
        j = i
        while j not in out:
            chain.append(j)
            if j not in parent:
                break
            j = parent[j]
        for j in reversed(chain):
            out[j] = (out[parent[j]] @ local[j]) if j in parent else local[j]
    return out


def world_raw(kind, obj, bone):
    if kind == "bone":
        return A_INV @ obj.matrix_world @ obj.pose.bones[bone].matrix
    if obj.type == "CAMERA":
        return A_INV @ obj.matrix_world
    return A_INV @ obj.matrix_world @ A


def world(kind, obj, bone, fix):
    m = world_raw(kind, obj, bone)
    if fix is not None:
        m = m @ fix
    return [m[r][c] for r in range(4) for c in range(4)]


def cameras():
    out = []
    for o in bpy.data.objects:
        if o.type != "CAMERA":
            continue
        c = o.data
        yfov = c.angle_y if c.sensor_fit == "VERTICAL" else None
        out.append({"name": c.name, "type": c.type, "yfov": yfov, "near": c.clip_start, "far": c.clip_end})
    return out


def scene_meshes(gltf):
    """[(scene mesh name, object, report)] for every primitive of every mesh object."""
    out = []
    for vn in gltf.vnodes.values():
        idx = getattr(vn, "mesh_node_idx", None)
        obj = getattr(vn, "blender_object", None)  # (a bone's vnode has none)
        if idx is None or obj is None or obj.type != "MESH":
            continue
        pymesh = gltf.data.meshes[gltf.data.nodes[idx].mesh]
        f = 0
        for k, prim in enumerate(pymesh.primitives):
            n = getattr(prim, "num_faces", 0)
            name = (prim.extras or {}).get("name") if isinstance(prim.extras, dict) else None
            info = mesh_info(name if name is not None else "%s/%d" % (pymesh.name, k), obj, f, n)
            if f + n > len(obj.data.polygons):
                info["error"] = "%d polygons in the mesh, the primitives have %d+" % (len(obj.data.polygons), f + n)
            out.append((info["name"], obj, info))
            f += n
    return out


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
        bpy.context.view_layer.update()
        table = node_table(gltf)
        # bones: the turn from each node's axes to its bone's, at the rest pose
        rest_world = gltf_rest_worlds(gltf)
        index = {n.name: i for i, n in enumerate(gltf.data.nodes or []) if n.name is not None}
        fixes = {}
        for name, kind, obj, bone in table:
            if kind == "bone":
                fixes[name] = world_raw(kind, obj, bone).inverted() @ rest_world[index[name]]
        if track is not None:
            BlenderAnimation.restore_animation(gltf, track)
        meshes = scene_meshes(gltf)
        at = mesh_times(want["times"])
        samples = []
        for i, t in enumerate(want["times"]):
            f = t * FPS
            bpy.context.scene.frame_set(int(math.floor(f)), subframe=f - math.floor(f))
            bpy.context.view_layer.update()
            samples.append({"t": t, "nodes": {name: world(kind, obj, bone, fixes.get(name))
                                              for name, kind, obj, bone in table}})
            if i in at and meshes:
                samples[-1]["meshes"] = {name: mesh_positions(obj, info) for name, obj, info in meshes}
        # the animation's length as Blender holds it: the last key of its actions, in seconds
        ends = [a.frame_range[1] for a in bpy.data.actions if track is not None and
                any(t.name == track for o in bpy.data.objects if o.animation_data
                    for t in o.animation_data.nla_tracks for st in t.strips if st.action == a)]
        out["anims"].append({"index": want["index"], "track": track, "samples": samples, "cameras": cameras(),
                             "meshes": [public(info) for _, _, info in meshes],
                             "duration": max(ends) / FPS if ends else None})
    return out


run_jobs(play)
