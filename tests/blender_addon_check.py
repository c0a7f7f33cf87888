# Runs inside Blender (headless): installs the add-on from its zip as a user
# would (Preferences > Add-ons > Install, then enable), imports every fixture
# through File > Import's operator and checks the result against the game's
# pose from the bundled retroanim package (what `retroanim pose` prints):
#
#   blender -b --factory-startup --python blender_addon_check.py -- ADDON.zip JOBS.json OUT.json
#   JOBS: [{"file": PATH, "options": {operator properties}}]
#   OUT:  {"blender": version, "results": [{"file", "error"?, "checks", "failures": [...]}]}
#
# Per file: the import succeeds exactly when the library loads the file (a
# refused file is an operator error report carrying the library's message);
# every node's world transform matches the pose within 1e-4 (relative to the
# value's size) at 0, 1/3, 1/2 and the end of every animation; cameras are
# CAMERA objects with the game's field of view and clip planes (orthographic
# ones ORTHO); visibility steps hide and show their objects at the right
# times; every
# animation has one action on each object it moves, in an NLA track named after
# it; the scene's frame range covers the longest animation.
#
# Geometry (files with meshes; ground truth: the library's `dump` JSON — what
# `retroanim dump` prints — and the fixture's .txt expect-mesh,
# expect-material, expect-texture and expect-texel lines; the pixels, which
# the dump leaves out, from the bundled package's textures): every
# mesh is one MESH object with its vertex and triangle counts, triangles,
# UVs (v flipped), colours and custom normals, parented to its node's object
# (or bone) with an identity parent inverse; every vertex's world position
# equals the node's world matrix of the pose applied to the mesh's position
# at the times the nodes are compared; every material has the blend mode of
# its alpha mode (CLIP with the cutoff for MASK), backface culling unless
# double-sided, an Emission shader when unlit, a colour attribute node when
# the mesh has colours and its texture's image; every texture is one packed
# image of the right size, sampling and pixels (Blender's rows from the
# bottom), and the expect-texel lines hold.  A file without meshes makes no
# MESH object.
#
# Skinned meshes (skin >= 0: vertices at rest in the scene's world frame):
# the mesh object sits under the root at the scene's world frame, with an
# Armature modifier on an armature and one vertex group per bone whose pose
# bone names its joint (retroanim_joint), holding the dump's weights; at every
# time the nodes are compared, the evaluated (modifiers applied) world
# position of every vertex equals sum w * jointWorld(t) * inverse(jointRestWorld)
# * p, from the dump's positions, joints, weights and node transforms (rest
# worlds), the skin's joint names (the package's skins: the dump has none)
# and the pose, within 1e-4; the armature's bones carry the skin's joints;
# the joints the .txt's expect-skin lines name have bones and are the only
# ones weighted; its expect-skinned lines (world position of a triangle
# corner at a time, animation 0) hold for the evaluated mesh within 1e-4.
import json
import math
import os
import sys

import bpy
from mathutils import Matrix, Vector

args = sys.argv[sys.argv.index("--") + 1:]
ZIP, JOBS, OUT = args[0], args[1], args[2]
Y_UP_TO_Z_UP = Matrix(((1, 0, 0, 0), (0, 0, -1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))


def enable():
    bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
    bpy.ops.preferences.addon_enable(module="io_import_retroanim")


def m16(m):
    return [m[r][c] for r in range(4) for c in range(4)]


def check_file(job):
    res = {"file": job["file"], "checks": 0, "failures": []}
    fail = res["failures"].append
    bpy.ops.wm.read_factory_settings(use_empty=True)
    enable()
    import io_import_retroanim.retroanim as ra  # the package the add-on carries
    opts = job.get("options", {})
    lib_opts = {k: v for k, v in opts.items() if k in ("coords", "cinf", "animation") and v}
    from io_import_retroanim import parse_options
    lib_opts.update(parse_options(opts.get("extra_options", "")))
    try:
        doc = ra.load(job["file"], **lib_opts)
    except ra.Error as e:
        doc, lib_error = None, str(e)
    try:
        r = bpy.ops.import_scene.retroanim(filepath=job["file"], **opts)
        op_error = None if r == {"FINISHED"} else "operator returned %s" % (r,)
    except RuntimeError as e:  # an ERROR report, as Blender raises it to a script
        op_error = str(e)
    if doc is None:
        res["error"] = op_error
        res["checks"] += 1
        if op_error is None or lib_error not in op_error:
            fail("the library refuses the file (%s) but the import said %r" % (lib_error, op_error))
        return res
    if op_error:
        fail("import failed: " + op_error)
        return res
    with doc:
        geo = doc.dump()  # `retroanim dump`: its meshes, materials and textures
        check_scene(doc, geo, res, fail)
        check_geometry(doc, geo, job["file"], res, fail)
        check_skinned_expect(doc, geo, job["file"], res, fail)
    return res


def expect_lines(path, kind):
    """`expect-KIND k=v ...` lines of the fixture's .txt as dicts (a bare value under "")."""
    txt = os.path.splitext(path)[0] + ".txt"
    if not os.path.exists(txt):
        return []
    out = []
    for line in open(txt):
        w = line.split()
        if w and w[0] == "expect-" + kind:
            out.append(dict(x.split("=", 1) if "=" in x else ("", x) for x in w[1:]))
    return out


def mesh_objects(name):
    return [o for o in bpy.data.objects if o.get("retroanim_mesh") == name]


def node_object(doc, i):
    """(object, bone name or None) that carries node i"""
    name = doc.nodes[i].name
    for obj in bpy.data.objects:
        if obj.get("retroanim_node") == name:
            return obj, None
        if obj.type == "ARMATURE":
            for pb in obj.pose.bones:
                if pb.get("retroanim_node") == name:
                    return obj, pb.name
    return None, None


BLEND = {"OPAQUE": "OPAQUE", "MASK": "CLIP", "BLEND": "BLEND"}


def close(a, b, tol=1e-5):
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b))


class DumpedMesh:
    """A mesh of the dump (absent attributes None)."""

    def __init__(self, d):
        self.name, self.node, self.material = d["name"], d["node"], d["material"]
        self.vertex_count, self.triangle_count = d["vertex_count"], d["triangle_count"]
        self.positions, self.indices = d["positions"], d["triangles"]
        self.normals, self.colors, self.uvs = d.get("normals"), d.get("colors"), d.get("uvs")
        self.skin = d.get("skin", -1)
        flat = d.get("joints") or []
        self.joints = [flat[4 * v:4 * v + 4] for v in range(len(flat) // 4)] if self.skin >= 0 else None
        self.weights = d.get("weights") if self.skin >= 0 else None


class DumpedMaterial:
    def __init__(self, d):
        self.name, self.texture, self.alpha_cutoff = d["name"], d["texture"], d["alpha_cutoff"]
        self.alpha_mode, self.double_sided, self.unlit = d["alpha_mode"].upper(), d["double_sided"], d["unlit"]


def check_geometry(doc, geo, path, res, fail):
    """Meshes, materials and images against the dump, the package's pixels and the .txt."""
    check = lambda ok, msg: (res.__setitem__("checks", res["checks"] + 1), ok or fail(msg))  # noqa: E731
    all_meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    meshes = [DumpedMesh(d) for d in geo.get("meshes", [])]
    check([m.name for m in meshes] == [m.name for m in doc.meshes], "the package's meshes are not the dump's")
    if not meshes:
        check(not all_meshes, "no meshes in the file, but %d MESH object(s)" % len(all_meshes))
        return
    index = {n.name: k for k, n in enumerate(doc.nodes)}
    stated = expect_lines(path, "meshes")
    if stated:
        check(len(meshes) == int(stated[0][""]) == len(all_meshes),
              "%s meshes stated, %d in the dump, %d MESH objects" % (stated[0][""], len(meshes), len(all_meshes)))
    expected = {e["name"]: e for e in expect_lines(path, "mesh")}
    materials = {d["name"]: DumpedMaterial(d) for d in geo.get("materials", [])}
    for m in meshes:
        res["meshes"] = res.get("meshes", 0) + 1
        objs = mesh_objects(m.name)
        if len(objs) != 1 or objs[0].type != "MESH":
            check(False, "mesh %r: %d MESH object(s)" % (m.name, len(objs)))
            continue
        obj, me = objs[0], objs[0].data
        e = expected.get(m.name)
        if e is not None:
            check((len(me.vertices), len(me.polygons), m.node) == (int(e["vertices"]), int(e["triangles"]), e["node"]),
                  "mesh %r: %d vertices, %d faces on %r (the .txt: %s, %s on %s)" %
                  (m.name, len(me.vertices), len(me.polygons), m.node, e["vertices"], e["triangles"], e["node"]))
        check(len(me.vertices) == m.vertex_count and len(me.polygons) == m.triangle_count and
              all(p.loop_total == 3 for p in me.polygons),
              "mesh %r: %d vertices, %d faces (want %d, %d triangles)" %
              (m.name, len(me.vertices), len(me.polygons), m.vertex_count, m.triangle_count))
        check(all(close(v.co, p) for v, p in zip(me.vertices, m.positions)), "mesh %r: vertex positions" % m.name)
        corners = [v for t in m.indices for v in t]
        check([lp.vertex_index for lp in me.loops] == corners, "mesh %r: triangles differ" % m.name)
        # UVs (v flipped to Blender's bottom-left origin), colours, custom normals
        uv = me.uv_layers.get("UVMap")
        if m.uvs is None:
            check(uv is None, "mesh %r: a UV layer without UVs" % m.name)
        else:
            check(uv is not None and all(close(d.uv, (m.uvs[v][0], 1 - m.uvs[v][1]))
                                         for d, v in zip(uv.data, corners)), "mesh %r: UVs differ" % m.name)
        ca = me.color_attributes.get("Color")
        if m.colors is None:
            check(ca is None, "mesh %r: a colour attribute without colours" % m.name)
        else:
            check(ca is not None and ca.domain == "POINT" and ca.data_type == "FLOAT_COLOR" and
                  all(close(d.color, c) for d, c in zip(ca.data, m.colors)), "mesh %r: colours differ" % m.name)
        if m.normals is None:
            check(not me.has_custom_normals, "mesh %r: custom normals without normals" % m.name)
        else:
            me.calc_normals_split()
            check(me.has_custom_normals and all(close(lp.normal, m.normals[lp.vertex_index], 1e-3)
                                                for lp in me.loops), "mesh %r: normals differ" % m.name)
        # on its node, in its space
        node, bone = node_object(doc, index[m.node])
        if m.skin >= 0:  # under the root at the scene's world frame, deformed by an armature
            check_skinned_mesh(doc, m, obj, path, check)
        elif bone is None:
            check(obj.parent == node and obj.parent_type == "OBJECT" and
                  close([x for r in obj.matrix_parent_inverse for x in r], m16(Matrix.Identity(4)), 1e-9),
                  "mesh %r: parent %r (want %r with an identity parent inverse)" %
                  (m.name, obj.parent and obj.parent.name, node and node.name))
        else:
            check(obj.parent == node and obj.parent_type == "BONE" and obj.parent_bone == bone,
                  "mesh %r: not on bone %r" % (m.name, bone))
        # its material
        mat = me.materials[0] if len(me.materials) else None
        if m.material is None:
            check(mat is None or mat.get("retroanim_material") == "", "mesh %r: a material of its own" % m.name)
            continue
        ram = materials[m.material]
        if mat is None or mat.get("retroanim_material") != m.material:
            check(False, "mesh %r: material %r (want %r)" % (m.name, mat and mat.name, m.material))
            continue
        res["materials"] = res.get("materials", 0) + 1
        kinds = {n.bl_idname for n in mat.node_tree.nodes}
        check(mat.blend_method == BLEND[ram.alpha_mode] and
              (ram.alpha_mode != "MASK" or abs(mat.alpha_threshold - ram.alpha_cutoff) < 1e-6),
              "material %r: blend %s, threshold %g (alpha %s, cutoff %g)" %
              (mat.name, mat.blend_method, mat.alpha_threshold, ram.alpha_mode, ram.alpha_cutoff))
        check(mat.use_backface_culling == (not ram.double_sided), "material %r: backface culling" % mat.name)
        check(("ShaderNodeEmission" in kinds) == ram.unlit and ("ShaderNodeBsdfPrincipled" in kinds) != ram.unlit,
              "material %r: unlit %s, nodes %s" % (mat.name, ram.unlit, sorted(kinds)))
        check(("ShaderNodeVertexColor" in kinds) == (m.colors is not None),
              "material %r: a colour attribute node exactly when the mesh has colours" % mat.name)
        images = [n.image for n in mat.node_tree.nodes if n.bl_idname == "ShaderNodeTexImage"]
        check([i.get("retroanim_texture") for i in images] == ([ram.texture] if ram.texture else []),
              "material %r: images %s (texture %r)" % (mat.name, [i.name for i in images], ram.texture))
    for e in expect_lines(path, "material"):
        mats = [x for x in bpy.data.materials if x.get("retroanim_material") == e["name"]]
        check(mats and all(x.blend_method == BLEND[e["alpha"]] and x.use_backface_culling != (e["double_sided"] == "1")
                           for x in mats), "material %r: %s (the .txt: alpha %s double_sided %s)" %
              (e["name"], [(x.blend_method, x.use_backface_culling) for x in mats], e["alpha"], e["double_sided"]))
    # textures: one packed image each, its size, sampling and pixels (Blender's rows from the bottom)
    check([(t.name, t.width, t.height, t.nearest) for t in doc.textures] ==
          [(d["name"], d["width"], d["height"], d["nearest"]) for d in geo.get("textures", [])],
          "the package's textures are not the dump's")
    imgs = {}
    for t in doc.textures:
        found = [i for i in bpy.data.images if i.get("retroanim_texture") == t.name]
        if len(found) != 1:
            check(False, "texture %r: %d images" % (t.name, len(found)))
            continue
        img = imgs[t.name] = found[0]
        px = [round(x * 255) for x in img.pixels[:]]
        row = 4 * t.width
        want = [b for r in range(t.height) for b in t.rgba[(t.height - 1 - r) * row:(t.height - r) * row]]
        check(tuple(img.size) == (t.width, t.height) and img.packed_file is not None and px == want,
              "texture %r: image %dx%d packed %s, pixels %s" % (t.name, img.size[0], img.size[1],
                                                                img.packed_file is not None, px == want))
        nodes = [n for m in bpy.data.materials if m.node_tree for n in m.node_tree.nodes
                 if n.bl_idname == "ShaderNodeTexImage" and n.image == img]
        check(nodes and all(n.interpolation == ("Closest" if t.nearest else "Linear") for n in nodes),
              "texture %r: interpolation %s (nearest %s)" % (t.name, [n.interpolation for n in nodes], t.nearest))
    for e in expect_lines(path, "texture"):
        img = imgs.get(e["name"])
        check(img is not None and "%dx%d" % tuple(img.size) == e["size"],
              "texture %r: %s (the .txt: %s)" % (e["name"], img and tuple(img.size), e["size"]))
    for e in expect_lines(path, "texel"):
        img = imgs.get(e["texture"])
        if img is None:
            check(False, "texel of %r: no image" % e["texture"])
            continue
        w, h = img.size
        x, y = int(e["x"]), int(e["y"])
        k = 4 * ((h - 1 - y) * w + x)
        got = [round(v * 255) for v in img.pixels[k:k + 4]]
        res["texels"] = res.get("texels", 0) + 1
        check(got == [int(v) for v in e["rgba"].split(",")],
              "texel (%d, %d) of %r: %s (the .txt: %s)" % (x, y, e["texture"], got, e["rgba"]))


def rest_worlds(geo):
    """Every node's rest world matrix (scene frame) from the dump's transforms."""
    out = []
    for n in geo["nodes"]:
        t = n["transform"]
        local = Matrix((t[0:4], t[4:8], t[8:12], t[12:16]))
        out.append(out[n["parent"]] @ local if n["parent"] >= 0 else local)
    return out


def check_skinned_mesh(doc, m, obj, path, check):
    """A skinned mesh's object: under the root at the scene's world frame, an
    Armature modifier, vertex groups holding the dump's weights by joint."""
    root = node_object(doc, 0)[0]
    check(obj.parent == root and obj.parent_type == "OBJECT" and close(m16(obj.matrix_world), m16(Y_UP_TO_Z_UP), 1e-5),
          "skinned mesh %r: not under the root at the scene's world frame" % m.name)
    mods = [md for md in obj.modifiers if md.type == "ARMATURE"]
    arm = mods[0].object if len(mods) == 1 else None
    check(arm is not None and arm.type == "ARMATURE" and mods[0].use_vertex_groups,
          "skinned mesh %r: no Armature modifier on an armature" % m.name)
    if arm is None:
        return
    joints = doc.skins[m.skin].joints
    group_joint = {}  # vertex group index -> joint node name
    for g in obj.vertex_groups:
        pb = arm.pose.bones.get(g.name)
        group_joint[g.index] = pb.get("retroanim_joint") if pb is not None else None
    check(set(group_joint.values()) <= set(joints) and len(set(group_joint.values())) == len(group_joint),
          "skinned mesh %r: vertex groups %s are not the skin's bones (joints %s)" %
          (m.name, [g.name for g in obj.vertex_groups], joints))
    bad = 0
    for v, js, ws in zip(obj.data.vertices, m.joints, m.weights):
        want = {}
        for j, w in zip(js, ws):
            if w > 0:
                want[joints[j]] = want.get(joints[j], 0.0) + w
        got = {group_joint.get(g.group): g.weight for g in v.groups if g.weight > 0}
        if set(got) != set(want) or any(abs(got[k] - want[k]) > 1e-6 for k in want):
            bad += 1
    check(not bad, "skinned mesh %r: %d vertices' group weights are not the dump's" % (m.name, bad))
    bones = [pb.get("retroanim_joint") for pb in arm.pose.bones]
    check(sorted(bones) == sorted(joints), "skinned mesh %r: the armature's bones carry %s, the skin's joints are %s" %
          (m.name, bones, joints))
    # the .txt's joints (the library's own test compares the skin's list with them exactly): each has a
    # bone, and every joint a vertex is weighted by is one of them
    weighted = {joints[j] for js, ws in zip(m.joints, m.weights) for j, w in zip(js, ws) if w > 0}
    for e in expect_lines(path, "skin"):
        if e["mesh"] == m.name:
            stated = e["joints"].split(",")
            check(set(stated) <= set(bones) and weighted <= set(stated),
                  "skinned mesh %r: bones %s, weighted joints %s (the .txt's skin %s: %s)" %
                  (m.name, bones, sorted(weighted), e["skin"], e["joints"]))


def evaluated_world_positions(obj):
    """The world position of every vertex of obj with its modifiers applied (what the viewport draws)."""
    dg = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    me = ev.to_mesh()
    try:
        return [ev.matrix_world @ v.co for v in me.vertices]
    finally:
        ev.to_mesh_clear()


def skinned_want(doc, m, pose, rest):
    """sum w * jointWorld(t) * inverse(jointRestWorld) * p per vertex, in Blender's frame"""
    index = {n.name: k for k, n in enumerate(doc.nodes)}
    joints = [index[j] for j in doc.skins[m.skin].joints]
    mats = []
    for i in joints:
        p = pose[i]
        mats.append(Matrix((p[0:4], p[4:8], p[8:12], p[12:16])) @ rest[i].inverted_safe())
    out = []
    for pos, js, ws in zip(m.positions, m.joints, m.weights):
        acc = Vector((0, 0, 0))
        for j, w in zip(js, ws):
            if w:
                acc += w * (mats[j] @ Vector(pos))
        out.append(Y_UP_TO_Z_UP @ acc)
    return out


def skinned_world_difference(doc, geo, pose):
    """The worst difference between a skinned mesh vertex's evaluated world
    position in Blender and the skinning formula over the pose."""
    worst, where = 0.0, ""
    rest = rest_worlds(geo)
    for m in (DumpedMesh(d) for d in geo.get("meshes", [])):
        objs = mesh_objects(m.name)
        if len(objs) != 1 or objs[0].hide_viewport or m.skin < 0:
            continue
        got = evaluated_world_positions(objs[0])
        want = skinned_want(doc, m, pose, rest)
        if len(got) != len(want):
            return float("inf"), m.name + " (vertex count)"
        for g, x in zip(got, want):
            d = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(g, x))
            if d > worst:
                worst, where = d, m.name
    return worst, where


def check_skinned_expect(doc, geo, path, res, fail):
    """The .txt's expect-skinned lines: a triangle corner's world position at a time (animation 0)."""
    lines = expect_lines(path, "skinned")
    if not doc.animations:  # a model alone (its .txt shared with its animation): the bind pose, t = 0
        lines = [e for e in lines if float(e["t"]) == 0]
    if not lines:
        return
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    meshes = {d["name"]: DumpedMesh(d) for d in geo.get("meshes", [])}
    if doc.animations:
        set_animation(doc.animations[int(lines[0].get("anim", 0))].name)
    for e in lines:
        res["checks"] += 1
        res["skinned_expect"] = res.get("skinned_expect", 0) + 1
        m, objs = meshes.get(e["mesh"]), mesh_objects(e["mesh"])
        if m is None or len(objs) != 1:
            fail("expect-skinned: no mesh %r" % e["mesh"])
            continue
        if "anim" in e and doc.animations:
            set_animation(doc.animations[int(e["anim"])].name)
        t = float(e["t"])
        f = t * fps
        scene.frame_set(int(math.floor(f)), subframe=f - math.floor(f))
        v = m.indices[int(e["tri"])][int(e["corner"])]
        got = evaluated_world_positions(objs[0])[v]
        want = Y_UP_TO_Z_UP @ Vector([float(x) for x in e["p"].split(",")])
        d = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(got, want))
        res["worst"] = max(res.get("worst", 0.0), d)
        if not d <= 1e-4:
            fail("expect-skinned mesh %r tri %s corner %s at %s s: %s (Y up; the .txt: %s), differs by %.3g" %
                 (e["mesh"], e["tri"], e["corner"], e["t"],
                  tuple(round(x, 6) for x in Y_UP_TO_Z_UP.inverted() @ got), e["p"], d))


def mesh_world_difference(doc, geo, pose):
    """The worst difference between a mesh vertex's world position in Blender
    and the pose's node world matrix applied to the dumped mesh's position."""
    worst, where = 0.0, ""
    index = {n.name: k for k, n in enumerate(doc.nodes)}
    for m in (DumpedMesh(d) for d in geo.get("meshes", [])):
        objs = mesh_objects(m.name)
        if len(objs) != 1 or objs[0].hide_viewport or m.skin >= 0:
            continue
        obj = objs[0]
        p = pose[index[m.node]]
        node_world = Y_UP_TO_Z_UP @ Matrix((p[0:4], p[4:8], p[8:12], p[12:16]))
        for v, pos in zip(obj.data.vertices, m.positions):
            got = obj.matrix_world @ v.co
            want = node_world @ Vector(pos)
            d = max(abs(g - x) / max(1.0, abs(x)) for g, x in zip(got, want))
            if d > worst:
                worst, where = d, m.name
    return worst, where


def node_worlds(doc):
    """node index -> a function giving its Blender world matrix"""
    by_name = {}
    for obj in bpy.data.objects:
        if "retroanim_node" in obj:
            by_name[obj["retroanim_node"]] = ("obj", obj)
        if obj.type == "ARMATURE":
            for pb in obj.pose.bones:
                if "retroanim_node" in pb:
                    by_name[pb["retroanim_node"]] = ("bone", obj, pb)
    out = []
    for n in doc.nodes:
        e = by_name.get(n.name)
        if e is None:
            out.append(None)
        elif e[0] == "obj":
            out.append(lambda o=e[1]: o.matrix_world)
        else:
            out.append(lambda a=e[1], b=e[2]: a.matrix_world @ b.matrix)
    return out


def set_animation(name):
    for obj in bpy.data.objects:
        ad = obj.animation_data
        if not ad:
            continue
        ad.action = None
        for tr in ad.nla_tracks:
            if tr.name == name and tr.strips:
                ad.action = tr.strips[0].action


def check_scene(doc, geo, res, fail):
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    worlds = node_worlds(doc)
    for i, w in enumerate(worlds):
        res["checks"] += 1
        if w is None:
            fail("node %r has no object or bone" % doc.nodes[i].name)
    if any(w is None for w in worlds):
        return
    # cameras
    for cam in doc.cameras:
        res["checks"] += 1
        objs = [o for o in bpy.data.objects if o.type == "CAMERA" and
                (o.get("retroanim_node") == cam.name or (o.parent and o.parent.get("retroanim_node") == cam.name))]
        if len(objs) != 1:
            fail("camera %r: %d CAMERA objects" % (cam.name, len(objs)))
            continue
        d = objs[0].data
        want = min(max(2 * cam.horizontal_fov, 1e-4), math.pi - 1e-4)
        if abs(d.angle_x - want) > 1e-5 or abs(d.clip_start - cam.near) > 1e-6 * max(1, cam.near) or \
                abs(d.clip_end - cam.far) > 1e-6 * max(1, cam.far):
            fail("camera %r: angle_x %g (want %g), clip %g..%g (want %g..%g)" %
                 (cam.name, d.angle_x, want, d.clip_start, d.clip_end, cam.near, cam.far))
        if (d.type == "ORTHO") != cam.orthographic or \
                (cam.orthographic and abs(d.ortho_scale - 2 * cam.ortho_xmag) > 1e-5 * max(1, cam.ortho_xmag)):
            fail("camera %r: type %s, ortho_scale %g (orthographic %s, half width %g)" %
                 (cam.name, d.type, d.ortho_scale, cam.orthographic, cam.ortho_xmag))
    res["orthographic"] = res.get("orthographic", 0) + sum(c.orthographic for c in doc.cameras)
    # actions and the frame range
    longest = max([a.duration for a in doc.animations] or [0])
    res["checks"] += 1
    if scene.frame_end / fps < longest - 1.0 / fps or scene.frame_start != 0:
        fail("frame range %d..%d at %g fps does not cover %g s" % (scene.frame_start, scene.frame_end, fps, longest))
    for a in doc.animations:
        res["checks"] += 1
        acts = [x for x in bpy.data.actions if x.get("retroanim_animation") == a.name]
        moved = {c.node for c in a.channels}
        owners = [o for o in bpy.data.objects if o.animation_data and
                  any(t.name == a.name for t in o.animation_data.nla_tracks)]
        if not acts or len(acts) != len(owners):
            fail("animation %r: %d action(s) for %d object(s) with its track" % (a.name, len(acts), len(owners)))
        if moved and not owners:
            fail("animation %r moves %d node(s) but no object has its track" % (a.name, len(moved)))
    # the pose, animation by animation
    tol = 1e-4
    for ai, a in enumerate(doc.animations or [None]):
        if a is not None:
            set_animation(a.name)
        dur = a.duration if a else 0
        for t in (0.0, dur / 3, dur / 2, dur):
            f = t * fps
            scene.frame_set(int(math.floor(f)), subframe=f - math.floor(f))
            pose = doc.pose(t, ai)
            for name, keys in (a.visibility.items() if a else ()):
                want_visible = True
                for kt, kv in keys:
                    if kt <= t + 1e-9:
                        want_visible = kv
                obj = next((o for o in bpy.data.objects if o.get("retroanim_node") == name), None)
                res["checks"] += 1
                res["visibility"] = res.get("visibility", 0) + 1
                if obj is None or obj.hide_viewport != (not want_visible) or obj.hide_render != (not want_visible):
                    fail("animation %d at %g s: %r should be %s" % (ai, t, name, "shown" if want_visible else "hidden"))
            worst, where = 0.0, ""
            hidden = set()  # a node hidden at t is out of Blender's evaluation: no pose to compare
            for i, n in enumerate(doc.nodes):
                o = next((x for x in bpy.data.objects if x.get("retroanim_node") == n.name), None)
                if o is not None and o.hide_viewport:
                    hidden.add(i)
            for i, w in enumerate(worlds):
                if i in hidden:
                    continue
                want = m16(Y_UP_TO_Z_UP @ Matrix((pose[i][0:4], pose[i][4:8], pose[i][8:12], pose[i][12:16])))
                got = m16(w())
                for g, x in zip(got, want):
                    d = abs(g - x) / max(1.0, abs(x))
                    if d > worst:
                        worst, where = d, doc.nodes[i].name
            res["checks"] += 1
            res.setdefault("worst", 0.0)
            res["worst"] = max(res["worst"], worst)
            if not worst <= tol:
                fail("animation %d at %g s: node %r differs by %.3g (tolerance %g)" % (ai, t, where, worst, tol))
            if geo.get("meshes"):  # every mesh vertex: its node's world matrix applied to the mesh's position
                worst, where = mesh_world_difference(doc, geo, pose)
                res["checks"] += 1
                res["mesh_poses"] = res.get("mesh_poses", 0) + 1
                res["worst"] = max(res["worst"], worst)
                if not worst <= tol:
                    fail("animation %d at %g s: a vertex of mesh %r differs by %.3g (tolerance %g)" %
                         (ai, t, where, worst, tol))
            if any(d.get("skin", -1) >= 0 for d in geo.get("meshes", [])):  # skinned: evaluated, deformed
                worst, where = skinned_world_difference(doc, geo, pose)
                res["checks"] += 1
                res["skinned_poses"] = res.get("skinned_poses", 0) + 1
                res["worst"] = max(res["worst"], worst)
                if not worst <= tol:
                    fail("animation %d at %g s: a vertex of skinned mesh %r differs by %.3g (tolerance %g)" %
                         (ai, t, where, worst, tol))


def main():
    jobs = json.load(open(JOBS))
    out = {"blender": bpy.app.version_string, "results": []}
    for job in jobs:
        try:
            out["results"].append(check_file(job))
        except Exception as e:  # a crash of the check itself is a failure too
            import traceback
            out["results"].append({"file": job["file"], "checks": 1,
                                   "failures": ["check crashed: %s\n%s" % (e, traceback.format_exc())]})
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)


main()
