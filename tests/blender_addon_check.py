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
import json
import math
import sys

import bpy
from mathutils import Matrix

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
        check_scene(doc, res, fail)
    return res


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


def check_scene(doc, res, fail):
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
