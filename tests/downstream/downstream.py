#!/usr/bin/env python3
"""Downstream checks: retroanim's exports played in consumers retroanim does not control.

    downstream.py CHECK --cli build/retroanim --models test_models --work DIR
                  [--preload build/libretroanim_preload.so] [--mismatch-preload LIB] [--require]

CHECK is one of
  validator  every loadable fixture converted to .gltf and .glb; the Khronos glTF validator
             reports 0 errors and no warning outside ALLOWED_WARNINGS
  three      .glb, .gltf and .fbx (retroanim's writers; every 1/60 s) and Assimp's ASCII .fbx (at 7
             times per animation) played in three.js (GLTFLoader / FBXLoader + AnimationMixer);
             every node's world matrix agrees with `retroanim pose` (TOLERANCE); also trees at the
             limits (1,024 levels, 5,000 nodes).  Meshes (MESH_CHECKS): every scene mesh, by name,
             with its triangles and vertices, its first triangle's corners where `pose` puts them
             at every sample time, its texture's size and top-left texel as three.js decoded the
             PNG (through the Node image shim in three_sample.mjs); every PNG retroanim writes,
             decoded here, has the scene's size and the fixture's expect-texel values.  A skinned
             scene mesh is a SkinnedMesh, skinned on the CPU as three's shader does it, every
             triangle's corners where linear blend skinning of `pose`'s joints puts them
             (skinned_positions; at least one skinned comparison, at times the joints move)
  blender    .glb and .fbx imported by Blender's own glTF and FBX importers (default settings),
             sampled every 1/30 s; cameras with the game's field of view, clip planes and view;
             trees of 950 levels and 5,000 nodes; meshes as for three (polygons, vertices, every
             vertex's and the first polygon's world position at two sample times, of the evaluated
             mesh: a skinned mesh as its Armature modifier deforms it; images)
  assimp     the stock `assimp` command line with the preload module: `info` on every fixture
             (refused ones refused with retroanim's message) and `export` to .glb, whose JSON and
             animation data equal `retroanim convert --writer assimp`'s; without the module, `info`
             on every .fbx retroanim writes (nodes, animations, cameras); a module built for another
             libassimp version registers nothing and says so
  pyassimp   Debian's pyassimp library (system python) reads every animation back through its
             raw ctypes structures, through the preload module; names, counts, durations and
             every key equal `retroanim dump`
  convert    every loadable fixture converts to .gltf, .glb, .fbx, ASCII .fbx and .assbin
  kaitai     the LEGO Island Kaitai description (lego_animation.ksy), compiled to JavaScript by
             the official compiler, parses every LEGO fixture; every field equals
             `retroanim dump --source`, and both refuse the same files (the one documented
             difference: the .ksy does not check the magic, docs/formats/lego_island.md §2 item 1)

A check whose tool is not installed is skipped (exit 77, which ctest reports as skipped)
unless --require is given (CI gives it: scripts/setup.sh --downstream installs the tools).
Exit 0: passed; 1: failed.
"""
import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

EXTENSIONS = (".ani", ".anb", ".anim", ".cinf", ".cmdl", ".binltl", ".binbig", ".binltl64", ".binuni",
              ".niff", ".nif", ".mad", ".wdb")
# options a fixture needs (a LEGO animation body has no header to detect)
FIXTURE_OPTIONS = {".anb": ["format=lego_ani_body"]}

# Sample times, as fractions of each animation's duration: irregular, so that they fall
# between keys, plus both ends.
FRACTIONS = (0.0, 0.137, 0.291, 0.5, 0.713, 0.862, 1.0)

# World-matrix agreement with `retroanim pose`: |a - b| <= tol * max(1, |b|) per entry
# (absolute for entries up to 1, relative above: positions of hundreds of units are float32
# in every exported file).
TOLERANCE = {
    "glb": 1e-4,
    "gltf": 1e-4,
    "glb_vis": 1e-4,
    "blender_vis": 1e-4,
    # FBX holds rotations as Euler angles in degrees and every key value as float32;
    # FBXLoader converts them back to quaternions and slerps between the keys.  retroanim's
    # writer (.fbx) puts its Euler keys on the slerp path; Assimp 5.2.5's ASCII exporter (fbxa)
    # prints 6 significant digits, which lego_island/deep.ani's 128 levels add up to 6.2e-5.
    "fbx": 1e-4,
    "fbxa": 1e-4,
    "blender": 1e-4,
    # Blender's FBX importer bakes every key of a node into its own Euler (objects) or
    # quaternion (bones) keys and interpolates them per component: retroanim's writer makes
    # the Euler curves dense enough for that (ra_fbx.h), bones rely on the key density
    "blender_fbx": 1e-4,
}
# Blender interpolates quaternion channels per component (nlerp), not by slerp.  retroanim's
# default key density (README, "Key density") keeps that within TOLERANCE of slerp: the files
# Blender plays are converted with default options, like every other check's.

# The grids the glTF consumers are sampled on (seconds): three.js every 1/60 s, Blender every
# 1/30 s, from 0 to the duration (which is sampled too).  Assimp's FBX, a secondary check, at
# FRACTIONS of the duration.
GRID = {"glb": 1 / 60, "gltf": 1 / 60, "glb_vis": 1 / 60, "fbx": 1 / 60, "blender": 1 / 30, "blender_vis": 1 / 30,
        "blender_fbx": 1 / 30}

# Validator warnings that may appear, with why.  Errors are never allowed.
ALLOWED_WARNINGS = {
    # none: a warning fails the check (the skeleton mesh hangs on an unanimated identity root)
}
# Infos and hints are printed but never fail the check.

# What `retroanim convert` writes for each check: file suffix, exporter id (None: from the suffix)
OUTPUTS = {
    "gltf": (".gltf", None),
    "glb": (".glb", None),
    "fbx": (".fbx", None),
    "fbxa": (".ascii.fbx", "fbxa"),
    "assbin": (".assbin", None),
    "blender": (".glb", None),
    "assimp_glb": (".assimp-writer.glb", "glb"),
    # LEGO Island's visibility keys also as KHR_node_visibility (convert --gltf-visibility)
    "glb_vis": (".vis.glb", None),
    "blender_vis": (".vis.glb", None),
    "blender_fbx": (".fbx", None),
    "assimp_fbx": (".assimp-writer.fbx", "fbx"),
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg, flush=True)


def run(cmd, env=None, check=False, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, **kw)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")))
    return r



def txt_options(d, name):
    """The fixture's own load options: "expect-option KEY=VALUE" lines of its .txt (a LEGO
    animation bound to a WDB fixture: wdb=FILE, relative to the fixture's folder)."""
    txt = os.path.join(d, os.path.splitext(name)[0] + ".txt")
    out = []
    if os.path.exists(txt):
        for line in open(txt, encoding="utf-8", errors="replace"):
            if line.startswith("expect-option "):
                k, _, v = line[len("expect-option "):].strip().partition("=")
                out.append(k + "=" + (os.path.join(d, v) if k == "wdb" else v))
    return out

class Fixture:
    def __init__(self, path, rel, options):
        self.path, self.rel, self.options = path, rel, options
        self.dump = None      # `retroanim dump` JSON when the fixture loads
        self.error = None     # the CLI's error line when it is refused
        self.coarse = False   # sampled at FRACTIONS only (the big trees of limit_trees)


class Ctx:
    def __init__(self, args):
        self.args = args
        self.cli = os.path.abspath(args.cli)
        self.work = os.path.abspath(args.work)
        os.makedirs(self.work, exist_ok=True)

    def opt_args(self, options):
        out = []
        for o in options:
            out += ["--option", o]
        return out

    def fixtures(self):
        out = []
        models = os.path.abspath(self.args.models)
        for fmt in sorted(os.listdir(models)):
            d = os.path.join(models, fmt)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                low = name.lower()
                ext = next((e for e in EXTENSIONS if low.endswith(e)), None)
                if not ext:
                    continue
                out.append(self.load(Fixture(os.path.join(d, name), fmt + "/" + name,
                                             FIXTURE_OPTIONS.get(ext, []) + txt_options(d, name))))
        return out

    def load(self, fx):
        r = run([self.cli, "dump", fx.path] + self.opt_args(fx.options))
        if r.returncode == 0:
            fx.dump = json.loads(r.stdout)
        else:
            fx.error = r.stderr.decode(errors="replace").strip()
        return fx

    def limit_trees(self, depth):
        """LEGO Island scenes at the limits: a chain `depth` nodes deep and one node holding 4,998
        animated children (5,000 nodes with the root, the most Assimp's exporters take), made
        with the LEGO fixtures' own generator; every node moves."""
        sys.path.insert(0, os.path.join(os.path.abspath(self.args.models), "lego_island"))
        import make_fixtures as m

        def keys(x, y, turn):  # moved along x, animated in y, turned about y (the flat tree)
            rot = m.u16(1) + m.rot_y(0, 0, 30) if turn else m.u16(0)
            return m.u16(2) + m.trans_key(0, 0, x, 0, 0) + m.trans_key(1000, 0, x, y, 0) + rot + m.u16(0) * 2

        # (the chain does not turn: float32 players, Blender among them, cannot chain 950 turns
        # within 1e-4; the chain is about depth, the fixtures are about rotations)
        def chain(n):
            return b"".join(m.u32(len(b"N%d" % i)) + b"N%d" % i + keys(1, 0.5, False) +
                            m.u32(1 if i + 1 < n else 0) for i in range(n))

        def flat(n):
            kids = b"".join(m.u32(len(b"C%d" % i)) + b"C%d" % i + keys(i % 50, 1, True) + m.u32(0)
                            for i in range(n))
            return m.u32(4) + b"ROOT" + m.u16(0) * 4 + m.u32(n) + kids
        out = []
        d = os.path.join(self.work, "limits")
        os.makedirs(d, exist_ok=True)
        for name, body in (("deep%d" % depth, chain(depth)), ("wide4998", flat(4998))):
            path = os.path.join(d, name + ".ani")
            with open(path, "wb") as f:
                f.write(m.header(10, 0, 0, 0, 0) + m.actor_list([]) + m.duration(1000) + body)
            fx = self.load(Fixture(path, "limits/" + name + ".ani", ["max_depth=1024"]))
            fx.coarse = True
            if fx.dump is None:
                fail("limit tree %s refused: %s" % (name, fx.error))
            out.append(fx)
        return out

    def out_path(self, fx, suffix):
        return os.path.join(self.work, fx.rel.replace("/", "__") + suffix)

    def convert(self, fx, kind, extra=()):
        """Converts to one of OUTPUTS; returns the written file's path."""
        suffix, fmt = OUTPUTS[kind]
        out = self.out_path(fx, suffix)
        cmd = [self.cli, "convert", fx.path, out, "--quiet"] + self.opt_args(list(fx.options) + list(extra))
        if fmt:
            cmd += ["--format", fmt]
        if kind in ("assimp_glb", "assimp_fbx"):
            cmd += ["--writer", "assimp"]
        if kind.endswith("_vis"):
            cmd += ["--gltf-visibility"]
        r = run(cmd)
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError("convert %s -> %s failed: %s" % (fx.rel, kind, r.stderr.decode(errors="replace").strip()))
        return out

    def poses(self, fx, anim, times):
        """`retroanim pose` at every time (one run, one line of JSON per time)."""
        cmd = [self.cli, "pose", fx.path, "--anim", str(anim)] + self.opt_args(fx.options)
        for t in times:
            cmd += ["--time", repr(t)]
        r = run(cmd, check=True)
        lines = [json.loads(line) for line in r.stdout.decode().splitlines() if line.strip()]
        if len(lines) != len(times):
            raise RuntimeError("pose %s: %d results for %d times" % (fx.rel, len(lines), len(times)))
        return [[(n["name"], n["world"]) for n in p["nodes"]] for p in lines]


def sample_times(fx, anim, kind=None):
    d = float(fx.dump["animations"][anim]["duration"]) if fx.dump["animations"] else 0.0
    if kind in GRID and not fx.coarse:
        step = GRID[kind]
        ts = [i * step for i in range(int(d / step + 1e-9) + 1)]
        if d - ts[-1] > 1e-9:
            ts.append(d)
        return ts
    ts = [f * d for f in FRACTIONS]
    if fx.dump["format"] == "homeworld_mad":
        # Homeworld's splines are sampled every 1/60 s from the window's start; on that grid
        # the exported keys are the curve itself (between them test_homeworld's bound holds)
        ts = [min(d, round(t * 60) / 60) for t in ts]
    return ts


def compare_worlds(ref, got, tol):
    """ref: [(name, 16 numbers)]; got: {name: 16 numbers}. Returns (worst, missing, where)."""
    worst, where, missing = 0.0, None, []
    for name, m in ref:
        g = got.get(name)
        if g is None:
            missing.append(name)
            continue
        for k in range(16):
            # a consumer's NaN arrives as null (JSON has no NaN)
            d = abs(m[k] - g[k]) / max(1.0, abs(m[k])) if g[k] is not None else float("inf")
            if not d <= worst:  # also catches NaN
                worst, where = (d if d == d else float("inf")), (name, k, m[k], g[k])
    return worst, missing, where


# ------------------------------------------------------------------------------------------
def need_node(ctx, packages):
    node = shutil.which("node")
    missing = [p for p in packages if not os.path.isdir(os.path.join(HERE, "node_modules", p))]
    if not node or missing:
        return "node and the npm packages %s (scripts/setup.sh --downstream)" % ", ".join(missing or packages)
    return None


def check_convert(ctx, fixtures):
    n = 0
    for fx in fixtures:
        if fx.dump is None:
            continue
        try:
            for kind in ("gltf", "glb", "fbx", "fbxa", "assbin"):
                out = ctx.convert(fx, kind)
                if os.path.getsize(out) == 0:
                    fail("%s: %s is empty" % (fx.rel, kind))
                n += 1
        except RuntimeError as e:
            fail(str(e))
    print("convert: %d files written from %d fixtures" % (n, sum(1 for f in fixtures if f.dump)))


def check_validator(ctx, fixtures):
    files = []
    for fx in fixtures:
        if fx.dump is None:
            continue
        for kind in ("gltf", "glb", "glb_vis"):
            try:
                files.append((fx, ctx.convert(fx, kind)))
            except RuntimeError as e:
                fail(str(e))
                continue
            if kind == "glb_vis":
                check_visibility(fx, files[-1][1])
    r = run(["node", os.path.join(HERE, "validate.mjs")] + [f for _, f in files], check=True)
    reports = [json.loads(line) for line in r.stdout.decode().splitlines() if line.strip()]
    if len(reports) != len(files):
        fail("validator: %d reports for %d files" % (len(reports), len(files)))
    infos = {}
    version = reports[0]["validator"] if reports else "?"
    for (fx, path), rep in zip(files, reports):
        want = len(fx.dump["animations"])
        bad = [i for i in rep["issues"] if i["severity"] == "error" or
               (i["severity"] == "warning" and i["code"] not in ALLOWED_WARNINGS)]
        for i in rep["issues"]:
            if i["severity"] in ("info", "hint"):
                infos[i["code"]] = infos.get(i["code"], 0) + 1
        status = "ok"
        if bad:
            status = "FAIL"
            for i in bad[:10]:
                fail("validator %s: %s %s %s: %s" % (os.path.basename(path), i["severity"], i["code"], i["pointer"],
                                                      i["message"]))
        if rep["animations"] != want:
            status = "FAIL"
            fail("validator %s: %d animations in the file, %d in the scene" % (os.path.basename(path),
                                                                              rep["animations"], want))
        print("validator %-48s errors %d warnings %d infos %d hints %d animations %d %s" % (
            fx.rel + path[path.rfind("."):], rep["errors"], rep["warnings"], rep["infos"], rep["hints"],
            rep["animations"], status))
    print("validator: glTF validator %s, %d files; infos/hints seen (allowed): %s" % (
        version, len(reports), ", ".join("%s×%d" % kv for kv in sorted(infos.items())) or "none"))


def pose_jobs(ctx, fixtures, kinds, options=()):
    """Converts and builds the sampling jobs: [(fx, kind, path, [(anim, times)])]."""
    jobs = []
    for fx in fixtures:
        if fx.dump is None:
            continue
        for kind in kinds:
            anims = [(a, sample_times(fx, a, kind)) for a in range(len(fx.dump["animations"]))] or [(0, [0.0])]
            try:
                jobs.append((fx, kind, ctx.convert(fx, kind, options), anims))
            except RuntimeError as e:
                fail(str(e))
    return jobs


def compare_jobs(ctx, jobs, results, consumer):
    poses = {}
    worst_by_kind = {}
    for (fx, kind, path, anims), res in zip(jobs, results):
        if res.get("error"):
            fail("%s %s (%s): %s" % (consumer, fx.rel, kind, res["error"].strip().splitlines()[0][:300]))
            continue
        tol = TOLERANCE[kind]
        worst, where_all = 0.0, None
        mesh_lines = []
        n_anims = len(fx.dump["animations"])
        for (anim, times), got in zip(anims, res["anims"]):
            if n_anims and got.get("clip", "") is None and (kind != "blender_fbx" or
                                                            fx.dump["animations"][anim]["channels"]):
                fail("%s %s (%s): no animation %d in the consumer" % (consumer, fx.rel, kind, anim))
                continue
            if n_anims and "clips" in got and got["clips"] != n_anims:
                fail("%s %s (%s): %d animations in the consumer, %d in the scene" % (
                    consumer, fx.rel, kind, got["clips"], n_anims))
            missing_t = [t for t in times if (fx.rel, anim, t) not in poses]
            if missing_t:
                for t, p in zip(missing_t, ctx.poses(fx, anim, missing_t)):
                    poses[(fx.rel, anim, t)] = p
            check_cameras(fx, kind, got, consumer)
            if n_anims and kind in GRID and got.get("duration") is not None and got.get("clip") is not None and \
                    abs(got["duration"] - fx.dump["animations"][anim]["duration"]) > 1e-6:
                fail("%s %s (%s): animation %d lasts %r s in the consumer, %r s in the game" % (
                    consumer, fx.rel, kind, anim, got["duration"], fx.dump["animations"][anim]["duration"]))
            summary, m_ok = compare_meshes(ctx, fx, kind, consumer, got, times, poses, anim, tol)
            if summary is not None:
                mesh_lines.append("%s %-6s %-44s %s %s" % (consumer, kind, fx.rel, summary, "ok" if m_ok else "FAIL"))
            for t, sample in zip(times, got["samples"]):
                ref = poses[(fx.rel, anim, t)]
                if "views" in sample:
                    check_views(fx, kind, consumer, t, ref, sample["views"])
                w, missing, where = compare_worlds(ref, sample["nodes"], tol)
                # FBX has no node for Assimp's scene root (the FBX scene root stands for it);
                # retroanim's root is always unanimated
                if kind in ("fbx", "fbxa") and missing and missing[0] == ref[0][0]:
                    if compare_worlds([ref[0]], {ref[0][0]: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]},
                                      tol)[0] > tol:
                        fail("%s %s (%s): the scene root is not identity and FBX drops it" % (consumer, fx.rel, kind))
                    missing = missing[1:]
                if missing:
                    fail("%s %s (%s): nodes missing in the consumer: %s" % (consumer, fx.rel, kind,
                                                                            ", ".join(missing[:8])))
                if w > worst:
                    worst, where_all = w, (anim, t) + (where or ())
        status = "ok" if worst <= tol else "FAIL"
        if worst > tol:
            fail("%s %s (%s): world matrices differ from pose by %.3g > %g (animation %s, t=%s, node %s entry %s: "
                 "pose %s, consumer %s)" % ((consumer, fx.rel, kind, worst, tol) + tuple(where_all)))
        wk = worst_by_kind.setdefault(kind, [0.0, 0, 0])
        wk[0] = max(wk[0], worst)
        wk[1] += 1
        wk[2] += sum(len(t) for _, t in anims)
        print("%s %-6s %-44s animations %d, %d times, worst %.2e (tolerance %g) %s" % (
            consumer, kind, fx.rel, len(fx.dump["animations"]), sum(len(t) for _, t in anims), worst, tol, status))
        for line in mesh_lines:
            print(line)
    for kind, (w, files, times) in sorted(worst_by_kind.items()):
        print("%s %s: %d files, %d sample times, worst difference %.3g (tolerance %g)" % (
            consumer, kind, files, times, w, TOLERANCE[kind]))


def check_visibility(fx, path):
    """The KHR_node_visibility steps of a --gltf-visibility .glb, decoded from its bytes, equal
    the LEGO visibility keys `dump` gives as node metadata (shown before the first key, each key's
    value from its float32 time on, the last one held to the duration)."""
    js, binary = glb_parts(path)
    want = {name: json.loads(m["lego.visibility"]) for name, m in fx.dump["node_metadata"].items()
            if "lego.visibility" in m}
    if not want:
        # (other extensions, KHR_materials_unlit among them, may be used)
        vis_ext = {"KHR_node_visibility", "KHR_animation_pointer"} & set(js.get("extensionsUsed", []))
        if vis_ext:
            fail("visibility %s: %s used without visibility keys" % (fx.rel, ", ".join(sorted(vis_ext))))
        return
    got = {}
    views = js.get("bufferViews", [])

    def acc(i, fmt, size):
        a = js["accessors"][i]
        start = views[a["bufferView"]].get("byteOffset", 0) + a.get("byteOffset", 0)
        return list(struct.unpack_from("<%d%s" % (a["count"], fmt), binary, start))
    for an in js.get("animations", []):
        for ch in an["channels"]:
            t = ch["target"]
            if t.get("path") != "pointer":
                continue
            ptr = t["extensions"]["KHR_animation_pointer"]["pointer"]
            node = js["nodes"][int(ptr.split("/")[2])]
            smp = an["samplers"][ch["sampler"]]
            if smp.get("interpolation") != "STEP" or "KHR_node_visibility" not in node.get("extensions", {}):
                fail("visibility %s: %s is not a STEP sampler on a KHR_node_visibility node" % (fx.rel, ptr))
            got[node["name"]] = list(zip(acc(smp["input"], "f", 4), acc(smp["output"], "B", 1)))
    if set(got) != set(want):
        fail("visibility %s: steps on %s, the file has keys on %s" % (fx.rel, sorted(got), sorted(want)))
        return
    dur = f32_floor(fx.dump["animations"][0]["duration"])
    for name, keys in want.items():
        exp = ([(0.0, 1)] if keys[0][0] > 0 else []) + [(f32_floor(t), v) for t, v in keys]
        if exp[-1][0] < dur:
            exp.append((dur, exp[-1][1]))
        g = got[name]
        if len(g) != len(exp) or any(gv != ev or abs(gt - et) > 1e-6 for (gt, gv), (et, ev) in zip(g, exp)):
            fail("visibility %s: %s steps %s, want %s" % (fx.rel, name, g, exp))
    print("visibility %-40s %d node(s): KHR_node_visibility steps equal the file's keys" % (fx.rel, len(want)))


def check_cameras(fx, kind, got, consumer):
    """The consumer's cameras: one per scene camera, by name, with the game's clip planes and
    field of view: vertical (from the horizontal one and the aspect) in glTF, horizontal in
    Blender's FBX import (its lens on its sensor width)."""
    if kind not in GRID or "cameras" not in got:
        return
    have = {c["name"]: c for c in got["cameras"]}
    for cam in fx.dump["cameras"]:
        c = have.get(cam["name"])
        if c is None:
            fail("%s %s (%s): camera %r missing (the consumer has %s)" % (consumer, fx.rel, kind, cam["name"],
                                                                      sorted(have)))
            continue
        want = {"near": cam["near"], "far": cam["far"]}
        if kind == "blender_fbx":
            if c.get("type") == "PERSP":
                want["xfov"] = 2 * cam["horizontal_fov"]
        else:
            want["yfov"] = 2 * math.atan(math.tan(cam["horizontal_fov"]) / cam["aspect"])
        for k, v in want.items():
            if c.get(k) is None or abs(c[k] - v) > 1e-5 * max(1.0, abs(v)):
                fail("%s %s (%s): camera %r %s is %r, the game's %r" % (consumer, fx.rel, kind, cam["name"], k,
                                                                      c.get(k), v))


def check_views(fx, kind, consumer, t, ref, views):
    """Each camera looks where the game's does: its view direction and up in the consumer's
    world equal the camera node's world matrix (`pose`) applied to the camera's look-at
    direction and up (the up made perpendicular to the view), within 1e-4."""
    worlds = dict(ref)
    for cam in fx.dump["cameras"]:
        v = views.get(cam["name"])
        m = worlds.get(cam["name"])
        if v is None or m is None:
            fail("%s %s (%s): no view of camera %r at t=%r" % (consumer, fx.rel, kind, cam["name"], t))
            continue

        def apply(vec):
            return [sum(m[r * 4 + c] * vec[c] for c in range(3)) for r in range(3)]

        def unit(vec):
            n = math.sqrt(sum(x * x for x in vec))
            return [x / n for x in vec]
        d = unit(apply([a - b for a, b in zip(cam["look_at"], cam["position"])]))
        u = apply(cam["up"])
        dot = sum(a * b for a, b in zip(u, d))
        u = unit([a - dot * b for a, b in zip(u, d)])
        for what, want, got in (("direction", d, v["dir"]), ("up", u, v["up"])):
            if max(abs(a - b) for a, b in zip(want, got)) > 1e-4:
                fail("%s %s (%s): camera %r %s at t=%r is %s, the game's %s" % (
                    consumer, fx.rel, kind, cam["name"], what, t, [round(x, 6) for x in got],
                    [round(x, 6) for x in want]))


# ------------------------------------------------------------------------------------------
# Meshes and textures.
#
# What the consumers must hold, per scene mesh (`retroanim dump`): a mesh of that name (three.js:
# the glTF primitive's extras.name, the FBX Mesh model's name; Blender: the glTF primitive by its
# extras.name, the FBX mesh object by name) with the scene's triangle count; its first triangle's
# corners at `pose`'s world matrix of the mesh's node times the scene positions; its material's
# texture with the scene's size and the top-left texel of the PNG retroanim wrote (decoded here).
# Vertex counts (MESH_VERTICES): a glTF primitive keeps the scene's vertices (three.js the
# accessor, Blender the distinct indices a primitive uses); FBXLoader un-indexes every FBX mesh
# (3 vertices a triangle); Blender's FBX importer keeps the control points (the scene's vertices).
# Assimp's ASCII FBX exporter (fbxa) puts a node's only mesh on the node's own model, named after
# the node (MESH_BY_NODE); a scene without meshes goes through Assimp with its placeholder
# skeleton mesh (README, "How the scene is built"), one unnamed mesh (SKELETON_MESH).
MESH_VERTICES = {"glb": "exact", "gltf": "exact", "glb_vis": "exact", "fbx": "3 per triangle",
                 "fbxa": "3 per triangle", "blender": "exact", "blender_vis": "exact", "blender_fbx": "exact"}
MESH_BY_NODE = {"fbxa"}
SKELETON_MESH = {"fbxa"}


def png_decode(data, what):
    """(width, height, rows of RGBA bytes from the top) of an 8-bit RGBA, non-interlaced PNG (what
    retroanim writes), checking every chunk's CRC; anything else raises."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise RuntimeError("%s: not a PNG" % what)
    off, ihdr, idat, ended = 8, None, [], False
    while off + 12 <= len(data):
        n, kind = struct.unpack_from(">I4s", data, off)
        body = data[off + 8: off + 8 + n]
        if len(body) != n or off + 12 + n > len(data):
            raise RuntimeError("%s: chunk %r runs past the end" % (what, kind))
        if zlib.crc32(kind + body) != struct.unpack_from(">I", data, off + 8 + n)[0]:
            raise RuntimeError("%s: bad CRC in chunk %r" % (what, kind))
        if ihdr is None and kind != b"IHDR":
            raise RuntimeError("%s: the first chunk is %r, not IHDR" % (what, kind))
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
            if ihdr[2:] != (8, 6, 0, 0, 0) or not ihdr[0] or not ihdr[1]:
                raise RuntimeError("%s: %dx%d, bit depth %d, colour type %d, compression %d, filter %d, interlace "
                                   "%d: not the 8-bit RGBA non-interlaced PNG expected" % ((what,) + ihdr))
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            ended = True
            break
        elif not kind[0] & 0x20:
            raise RuntimeError("%s: unexpected critical chunk %r" % (what, kind))
        off += 12 + n
    if not ended or not idat:
        raise RuntimeError("%s: no IEND or no IDAT" % what)
    w, h = ihdr[0], ihdr[1]
    stride = 4 * w
    raw = zlib.decompress(b"".join(idat))
    if len(raw) != h * (stride + 1):
        raise RuntimeError("%s: %d bytes of pixel data, %d expected" % (what, len(raw), h * (stride + 1)))
    rows, prev = [], bytes(stride)
    filters = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1: (y + 1) * (stride + 1)]
        out = bytearray(stride)
        for i in range(stride):
            a = out[i - 4] if i >= 4 else 0
            b = prev[i]
            c = prev[i - 4] if i >= 4 else 0
            if f == 0:
                pr = 0
            elif f == 1:
                pr = a
            elif f == 2:
                pr = b
            elif f == 3:
                pr = (a + b) >> 1
            elif f == 4:
                q = a + b - c
                pa, pb, pc = abs(q - a), abs(q - b), abs(q - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            else:
                raise RuntimeError("%s: row %d has filter type %d (0-4 exist)" % (what, y, f))
            out[i] = (line[i] + pr) & 255
        rows.append(bytes(out))
        filters.append(f)
        prev = out
    return w, h, rows, filters


def glb_textures(path):
    """{glTF texture name: (width, height, rows, filters)} of every texture in a .glb."""
    js, binary = glb_parts(path)
    out = {}
    for i, tex in enumerate(js.get("textures", [])):
        img = js["images"][tex["source"]]
        v = js["bufferViews"][img["bufferView"]]
        start = v.get("byteOffset", 0)
        out[tex.get("name", "texture %d" % i)] = png_decode(binary[start:start + v["byteLength"]],
                                                           "%s image %r" % (os.path.basename(path), img.get("name")))
    return out


def fixture_texels(fx):
    """{(texture, x, y): (r, g, b, a)} from the fixture's expect-texel lines (x from the left, y
    from the top)."""
    out = {}
    txt = os.path.splitext(fx.path)[0] + ".txt"
    if os.path.exists(txt):
        for line in open(txt, encoding="utf-8", errors="replace"):
            if line.startswith("expect-texel "):
                f = dict(kv.split("=", 1) for kv in line.split()[1:])
                out[(f["texture"], int(f["x"]), int(f["y"]))] = tuple(int(v) for v in f["rgba"].split(","))
    return out


_mesh_truth = {}


def mesh_truth(ctx, fx):
    """The scene's meshes as the consumers must show them: [{name, node, vertices, triangles,
    local (the first triangle's corners), positions (every vertex), texture: None or {name, width,
    height, texel}}].  The first call for a fixture with textures also checks every PNG of its
    .glb (decoded by png_decode) against the scene's size and the fixture's expect-texel lines."""
    if fx.rel in _mesh_truth:
        return _mesh_truth[fx.rel]
    meshes = fx.dump.get("meshes") or []
    textures = {t["name"]: t for t in fx.dump.get("textures") or []}
    materials = {m["name"]: m for m in fx.dump.get("materials") or []}
    pngs = {}
    if textures:
        path = ctx.convert(fx, "glb")
        pngs = glb_textures(path)
        want_texels = fixture_texels(fx)
        checked, bad = 0, []
        for name, t in textures.items():
            if name not in pngs:
                fail("png %s: texture %r is not in the .glb" % (fx.rel, name))
                continue
            w, h, rows, filters = pngs[name]
            if (w, h) != (t["width"], t["height"]):
                fail("png %s: texture %r is %dx%d in the .glb, %dx%d in the scene" % (fx.rel, name, w, h, t["width"],
                                                                                   t["height"]))
            for (tn, x, y), rgba in sorted(want_texels.items()):
                if tn != name or x >= w or y >= h:
                    continue
                checked += 1
                got = tuple(rows[y][4 * x: 4 * x + 4])
                if got != rgba:
                    bad.append("%s (%d,%d) is %s, the fixture says %s (row %d filter type %d)" % (
                        name, x, y, got, rgba, y, filters[y]))
        for b in bad[:8]:
            fail("png %s: %s" % (fx.rel, b))
        print("png %-44s %d textures decoded from the .glb (filter types %s), %d expect-texel values, %d differ %s" % (
            fx.rel, len(pngs), ",".join(str(f) for f in sorted({f for p in pngs.values() for f in p[3]})), checked,
            len(bad), "FAIL" if bad else "ok"))
    out = []
    for m in meshes:
        tris = m.get("triangles") or []
        pos = m.get("positions") or []
        tex = None
        mat = materials.get(m.get("material"))
        tname = mat.get("texture") if mat else None
        if tname is not None:
            t = textures[tname]
            texel, texels = None, None
            if tname in pngs:
                rows = pngs[tname][2]
                texel = list(rows[0][0:4])
                texels = [[list(r[4 * x: 4 * x + 4]) for x in range(len(r) // 4)] for r in rows]
            tex = {"name": tname, "width": t["width"], "height": t["height"], "texel": texel, "texels": texels}
        out.append({"name": m["name"], "node": m.get("node"), "vertices": m["vertex_count"],
                    "triangles": m["triangle_count"], "local": [pos[i] for i in tris[0]] if tris else [],
                    "positions": pos, "tris": tris, "texture": tex, "skin": skin_influences(fx, m)})
    _mesh_truth[fx.rel] = out
    if any(w["skin"] is not None for w in out):
        check_expect_skinned(ctx, fx, out)
    return out


# ------------------------------------------------------------------------------------------
# Skinned meshes.  A scene mesh with a skin (`dump`: "skin", the index of one of "skins", whose
# "joints" name the joint nodes; "joints", 4 joint indices per vertex, flat; "weights", 4 per
# vertex) holds its positions in the scene's world frame at rest (it hangs on an unanimated
# root).  At time t its vertex v is at
#     sum_i w_i * World_{j_i}(t) * inverse(RestWorld_{j_i}) * p_v
# (linear blend skinning, as glTF defines it): World from `pose` at t, RestWorld the joint's
# rest world, the dump's rest `transform`s chained through `parent`.  The consumers skin on
# their own: three.js on the GPU (three_sample.mjs does the same on the CPU, as three's
# SkinnedMesh.applyBoneTransform), Blender through the importer's Armature modifier (the
# evaluated mesh).  A fixture's expect-skinned lines (world positions worked out when the
# fixture was made) check this expectation itself.

def skin_influences(fx, m):
    """[[(joint name, weight)] per vertex] of a skinned scene mesh, None for a rigid one."""
    if m.get("skin") is None:
        return None
    skins = fx.dump.get("skins") or []
    n = m["vertex_count"]
    joints, weights = m.get("joints") or [], m.get("weights") or []
    if not 0 <= m["skin"] < len(skins) or len(joints) != 4 * n or len(weights) != n:
        fail("%s: mesh %r: skin %r of %d, %d joint indices and %d weights for %d vertices" % (
            fx.rel, m["name"], m["skin"], len(skins), len(joints), len(weights), n))
        return [[] for _ in range(n)]
    names = skins[m["skin"]]["joints"]
    out = []
    for v in range(n):
        infl = []
        for k in range(4):
            j, w = joints[4 * v + k], weights[v][k]
            if w != 0:
                if not 0 <= j < len(names):
                    fail("%s: mesh %r vertex %d: joint %d of %d" % (fx.rel, m["name"], v, j, len(names)))
                    continue
                infl.append((names[j], w))
        out.append(infl)
    return out


def mat_mul(a, b):
    return [sum(a[r * 4 + k] * b[k * 4 + c] for k in range(4)) for r in range(4) for c in range(4)]


def mat_inverse(m):
    """The inverse of a 4x4 row-major matrix (Gauss-Jordan with partial pivoting)."""
    a = [list(m[r * 4:r * 4 + 4]) + [1.0 if c == r else 0.0 for c in range(4)] for r in range(4)]
    for c in range(4):
        p = max(range(c, 4), key=lambda r: abs(a[r][c]))
        if a[p][c] == 0:
            raise RuntimeError("singular rest matrix")
        a[c], a[p] = a[p], a[c]
        f = a[c][c]
        a[c] = [x / f for x in a[c]]
        for r in range(4):
            if r != c and a[r][c] != 0:
                g = a[r][c]
                a[r] = [x - g * y for x, y in zip(a[r], a[c])]
    return [a[r][4 + c] for r in range(4) for c in range(4)]


_rest_inverse = {}


def rest_inverses(fx):
    """{node name: inverse(rest world)} of a fixture (the first node of a name, as `pose` lists)."""
    if fx.rel not in _rest_inverse:
        nodes = fx.dump["nodes"]
        world = {}
        for i in range(len(nodes)):  # iterative: trees go deep
            chain = []
            j = i
            while j not in world and j >= 0:
                chain.append(j)
                j = nodes[j]["parent"]
            for j in reversed(chain):
                p = nodes[j]["parent"]
                world[j] = mat_mul(world[p], nodes[j]["transform"]) if p >= 0 else list(nodes[j]["transform"])
        out = {}
        for i, n in enumerate(nodes):
            if n["name"] not in out:
                out[n["name"]] = mat_inverse(world[i])
        _rest_inverse[fx.rel] = out
    return _rest_inverse[fx.rel]


def skinned_positions(fx, w, worlds):
    """The world positions of every vertex of skinned scene mesh w at the pose `worlds` ({node
    name: world}); raises KeyError naming a joint the pose lacks."""
    inv = rest_inverses(fx)
    skin_m = {}
    out = []
    for p, infl in zip(w["positions"], w["skin"]):
        q = [0.0, 0.0, 0.0]
        for name, weight in infl:
            if name not in skin_m:
                skin_m[name] = mat_mul(worlds[name], inv[name])
            r = apply_world(skin_m[name], p)
            q = [a + weight * b for a, b in zip(q, r)]
        out.append(q)
    return out


def check_expect_skinned(ctx, fx, meshes):
    """The expectation above against the fixture's expect-skinned lines (mesh, triangle, corner,
    time, world position; the fixture's first animation)."""
    txt = os.path.splitext(fx.path)[0] + ".txt"
    lines = []
    if os.path.exists(txt):
        for line in open(txt, encoding="utf-8", errors="replace"):
            if line.startswith("expect-skinned "):
                f = dict(kv.split("=", 1) for kv in line.split()[1:])
                lines.append((f["mesh"], int(f["tri"]), int(f["corner"]), float(f["t"]),
                              [float(x) for x in f["p"].split(",")]))
    if not (fx.dump or {}).get("animations"):  # a model alone (its description shared with its
        lines = [ln for ln in lines if ln[3] == 0]  # animation): its bind pose, the t = 0 lines
    if not lines:
        return
    by_name = {w["name"]: w for w in meshes}
    times = sorted({t for _, _, _, t, _ in lines})
    poses = dict(zip(times, ctx.poses(fx, 0, times)))
    worst = 0.0
    for mesh, tri, corner, t, p in lines:
        w = by_name.get(mesh)
        if w is None or w["skin"] is None or tri >= len(w["tris"]):
            fail("%s: expect-skinned names %s triangle %d, not a skinned mesh triangle of the scene" % (
                fx.rel, mesh, tri))
            continue
        worlds = {}
        for name, m in poses[t]:
            worlds.setdefault(name, m)
        got = skinned_positions(fx, w, worlds)[w["tris"][tri][corner]]
        worst = max(worst, point_diff([p], [got]))
    # (the fixture prints 9 significant digits; the dump's positions and keys are float32)
    if worst > 1e-5:
        fail("%s: the skinning expectation differs from the fixture's expect-skinned lines by %.3g" % (fx.rel,
                                                                                                       worst))
    print("skin %-44s the expectation equals %d expect-skinned positions within %.2e %s" % (
        fx.rel, len(lines), worst, "FAIL" if worst > 1e-5 else "ok"))


def apply_world(m, p):
    return [sum(m[r * 4 + c] * p[c] for c in range(3)) + m[r * 4 + 3] for r in range(3)]


def point_diff(want, got):
    """The largest |a - b| / max(1, |b|) over two lists of points (inf when they do not pair up)."""
    if got is None or len(want) != len(got):
        return float("inf")
    worst = 0.0
    for p, q in zip(want, got):
        if q is None or len(q) != 3:
            return float("inf")
        for a, b in zip(p, q):
            d = abs(a - b) / max(1.0, abs(a)) if b is not None else float("inf")
            if not d <= worst:
                worst = d if d == d else float("inf")
    return worst


def compare_meshes(ctx, fx, kind, consumer, got, times, poses, anim, tol):
    """The consumer's meshes of one animation against the scene's; returns (summary, ok)."""
    want = mesh_truth(ctx, fx)
    have_list = got.get("meshes") or []
    where = "%s %s (%s)" % (consumer, fx.rel, kind)
    if not want and (not have_list or (kind in SKELETON_MESH and len(have_list) == 1 and
                                       not have_list[0]["name"])):
        return None, True
    ok = True

    def bad(msg):
        nonlocal ok
        ok = False
        fail("%s: %s" % (where, msg))
    for e in got.get("image_errors") or []:
        bad("image not decoded: %s" % e)
    have = {}
    for m in have_list:
        if m.get("error"):
            bad("mesh %r: %s" % (m["name"], m["error"]))
        if m["name"] in have:
            bad("two meshes named %r" % m["name"])
        have[m["name"]] = m
    per_node = {}
    for w in want:
        per_node.setdefault(w["node"], []).append(w)
    names = {}
    for w in want:
        name = w["name"]
        if name not in have and kind in MESH_BY_NODE and len(per_node[w["node"]]) == 1:
            name = w["node"]
        names[w["name"]] = name
    extra = sorted(set(have) - set(names.values()), key=str)
    if extra:
        bad("meshes the scene does not have: %s" % ", ".join(map(str, extra[:8])))
    rule = MESH_VERTICES[kind]
    n_tex = n_texels = 0
    for w in want:
        g = have.get(names[w["name"]])
        if g is None:
            bad("mesh %r missing (the consumer has %s)" % (w["name"], sorted(have, key=str)[:12]))
            continue
        if g["triangles"] != w["triangles"]:
            bad("mesh %r has %r triangles, the scene %d" % (w["name"], g["triangles"], w["triangles"]))
        if "skinned" in g and g["skinned"] != (w["skin"] is not None):
            bad("mesh %r is %sskinned in the consumer, %sin the scene" % (
                w["name"], "" if g["skinned"] else "not ", "not " if w["skin"] is None else ""))
        want_v = w["vertices"] if rule == "exact" else 3 * w["triangles"]
        if g["vertices"] != want_v:
            bad("mesh %r has %r vertices, %d expected (%s; the scene has %d)" % (
                w["name"], g["vertices"], want_v, rule, w["vertices"]))
        wt, gt = w["texture"], g.get("texture")
        if wt is None:
            if gt is not None:
                bad("mesh %r has a texture (%r), the scene's material has none" % (w["name"], gt))
            continue
        n_tex += 1
        if gt is None:
            bad("mesh %r has no texture, the scene's has %r" % (w["name"], wt["name"]))
            continue
        if (gt.get("width"), gt.get("height")) != (wt["width"], wt["height"]):
            bad("mesh %r texture %r is %sx%s, the scene's %dx%d" % (w["name"], wt["name"], gt.get("width"),
                                                                   gt.get("height"), wt["width"], wt["height"]))
        if gt.get("texel") != wt["texel"]:
            bad("mesh %r texture %r texel (0,0) is %r, the PNG retroanim wrote has %r" % (
                w["name"], wt["name"], gt.get("texel"), wt["texel"]))
        if gt.get("texels") is not None:  # Blender (libpng): every texel, against png_decode's
            n_texels += sum(len(r) for r in gt["texels"])
            diff = [(x, y, c, wt["texels"][y][x]) for y, r in enumerate(gt["texels"]) for x, c in enumerate(r)
                    if wt["texels"] is None or y >= len(wt["texels"]) or x >= len(wt["texels"][y]) or
                    c != wt["texels"][y][x]]
            if diff:
                bad("mesh %r texture %r: %d texels differ from the PNG decoded here, first (%d,%d) %r here %r" % (
                    (w["name"], wt["name"], len(diff)) + diff[0]))
    worst, n_times, n_vert = 0.0, 0, 0
    where_worst = None
    skinned = [w for w in want if w["skin"] is not None and names[w["name"]] in have]
    # skinned meshes: samples compared (every vertex or every triangle corner), vertices
    # compared, the farthest a vertex is from its rest position at the times compared
    n_skin, n_skin_vert, moved = 0, 0, 0.0
    for t, sample in zip(times, got["samples"]):
        sm = sample.get("meshes")
        if sm is None:
            continue
        n_times += 1
        worlds = {}
        for name, m in poses[(fx.rel, anim, t)]:
            worlds.setdefault(name, m)
        for w in want:
            g = sm.get(names[w["name"]])
            if g is None:
                continue
            if w["skin"] is not None:
                try:
                    exp = skinned_positions(fx, w, worlds)
                except KeyError as e:
                    bad("mesh %r: joint %s has no pose" % (w["name"], e))
                    continue
                moved = max(moved, point_diff(w["positions"], exp))
                full = None
                if isinstance(g, dict) and "vertices" in g:  # Blender: every vertex
                    full = ("vertices", exp, g["vertices"])
                elif isinstance(g, dict) and "triangles" in g:  # three.js: every triangle's corners
                    full = ("every triangle", [exp[i] for tri in w["tris"] for i in tri], g["triangles"])
                if full is None:
                    bad("mesh %r is skinned in the scene; the consumer reports only its first triangle" % w["name"])
                else:
                    d = point_diff(full[1], full[2])
                    n_skin += 1
                    n_skin_vert += len(full[1])
                    if d > worst:
                        worst, where_worst = d, (t, w["name"], "skinned " + full[0])
            elif w["node"] not in worlds:
                continue
            else:
                m = worlds[w["node"]]
                exp = [apply_world(m, p) for p in w["positions"]]
                if isinstance(g, dict) and len(g.get("vertices") or []) == len(w["positions"]):
                    d = point_diff(exp, g["vertices"])  # Blender: every vertex
                    n_vert += len(w["positions"])
                    if d > worst:
                        worst, where_worst = d, (t, w["name"], "vertices")
            corners = g.get("corners") if isinstance(g, dict) else g
            want_c = [exp[i] for i in w["tris"][0]] if w["tris"] else []
            d = point_diff(want_c, corners)
            if d > worst:
                worst, where_worst = d, (t, w["name"], "first triangle", want_c, corners)
    if worst > tol:
        bad("mesh positions differ from pose x the scene's by %.3g > %g (t=%r, mesh %r, %s)" % (
            (worst, tol) + tuple(where_worst[:3])) + ("" if len(where_worst) < 5 else ": want %s, got %s" % (
                where_worst[3], where_worst[4])))
    skin_note = ""
    if skinned:
        # a skinned comparison happened, at a time when the joints had moved the vertices
        # (else the check would pass on rest positions; a model alone has only its bind pose)
        if n_skin == 0:
            bad("%d skinned meshes, none compared" % len(skinned))
        elif moved <= 100 * tol and (fx.dump or {}).get("animations"):
            bad("skinned meshes compared only where the joints leave them within %.3g of rest" % moved)
        skin_note = ", skinned: %d of %d meshes, %d mesh samples, %d points, moved up to %.3g from rest" % (
            len(skinned), sum(1 for w in want if w["skin"] is not None), n_skin, n_skin_vert, moved)
    summary = "meshes %d of %d (vertices %s, %d triangles), %d textures (size, texel (0,0)%s), positions at " \
              "%d times%s%s worst %.2e" % (sum(1 for w in want if names[w["name"]] in have), len(want), rule,
                                           sum(w["triangles"] for w in want), n_tex,
                                           ", all %d texels" % n_texels if n_texels else "", n_times,
                                           " (%d vertices)" % n_vert if n_vert else "", skin_note, worst)
    return summary, ok


def check_three(ctx, fixtures):
    jobs = pose_jobs(ctx, fixtures, ("glb", "gltf", "glb_vis", "fbx", "fbxa"))
    # trees at the limits: 1,024 levels (the largest max_depth) and 5,000 nodes
    jobs += pose_jobs(ctx, ctx.limit_trees(1025), ("glb", "fbx"))
    job_file = os.path.join(ctx.work, "three_jobs.json")
    with open(job_file, "w") as f:
        json.dump([{"file": p, "anims": [{"index": a, "times": t} for a, t in anims]} for _, _, p, anims in jobs], f)
    r = run(["node", os.path.join(HERE, "three_sample.mjs"), job_file], check=True)
    results = json.loads(r.stdout)
    compare_jobs(ctx, jobs, results, "three")


def check_blender(ctx, fixtures):
    print("blender: %s" % run(["blender", "--version"]).stdout.decode().splitlines()[0])
    # Blender's importers recurse once per level and stop at Python's recursion limit (1,000,
    # minus the frames of whoever calls them): its deep tree is 950 levels (README, known limits)
    limits = ctx.limit_trees(950)
    for kinds, script in ((("blender", "blender_vis"), "blender_sample.py"), (("blender_fbx",), "blender_fbx_sample.py")):
        jobs = pose_jobs(ctx, fixtures, kinds) + pose_jobs(ctx, limits, (kinds[0],))
        job_file = os.path.join(ctx.work, "blender_jobs.json")
        out_file = os.path.join(ctx.work, "blender_out.json")
        if os.path.exists(out_file):
            os.unlink(out_file)
        with open(job_file, "w") as f:
            json.dump([{"file": p, "anims": [{"index": a, "times": t, "name": anim_name(fx, a)} for a, t in anims]}
                       for fx, _, p, anims in jobs], f)
        # Blender runs Debian's python3 with python3-numpy; a parent Python of another
        # installation (pyenv) must not lend it its search path, so Debian's is given
        env = dict(os.environ, PYTHONPATH="/usr/lib/python3/dist-packages")
        r = run(["blender", "-b", "--factory-startup", "--python-use-system-env", "--python",
                 os.path.join(HERE, script), "--", job_file, out_file], env=env)
        if r.returncode != 0 or not os.path.exists(out_file):
            fail("blender (%s) exited %d: %s" % (script, r.returncode, r.stderr.decode(errors="replace")[-2000:]))
            continue
        compare_jobs(ctx, jobs, json.load(open(out_file)), "blender")


def anim_name(fx, a):
    anims = fx.dump["animations"]
    return anims[a]["name"] if a < len(anims) else None


def f32_floor(x):
    """The largest float32 not above x (how retroanim writes times)."""
    f = float32(x)
    if f > x:
        bits = struct.unpack("<I", struct.pack("<f", f))[0]
        f = struct.unpack("<f", struct.pack("<I", bits - 1 if f > 0 else bits + 1))[0]
    return f


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def same_tree(ours, theirs, where, out):
    """Appends to `out` every difference between `dump --source` and the Kaitai parse; returns
    the number of values compared.  Our floats are printed with 9 significant digits, which
    round-trip float32 exactly, so they are compared exactly after rounding to float32."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if set(ours) != set(theirs):
            out.append("%s: fields %s here, %s in Kaitai" % (where, sorted(set(ours) - set(theirs)),
                                                             sorted(set(theirs) - set(ours))))
        return sum(same_tree(ours[k], theirs[k], where + "." + k, out) for k in sorted(set(ours) & set(theirs)))
    elif isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            out.append("%s: %d entries here, %d in Kaitai" % (where, len(ours), len(theirs)))
        return sum(same_tree(a, b, "%s[%d]" % (where, i), out) for i, (a, b) in enumerate(zip(ours, theirs)))
    elif isinstance(ours, float) or isinstance(theirs, float):
        if not (isinstance(theirs, (int, float)) and isinstance(ours, (int, float)) and
                float32(ours) == theirs):
            out.append("%s: %r here, %r in Kaitai" % (where, ours, theirs))
    elif ours != theirs or type(ours) != type(theirs):
        out.append("%s: %r here, %r in Kaitai" % (where, ours, theirs))
    return 1


def check_kaitai(ctx, fixtures):
    lego = [fx for fx in fixtures if fx.rel.startswith("lego_island/") and not fx.rel.endswith(".wdb")]
    args = [fx.path + (":body" if "format=lego_ani_body" in fx.options else "") for fx in lego]
    r = run(["node", os.path.join(HERE, "kaitai_lego.mjs"), os.path.join(ctx.work, "kaitai")] + args, check=True)
    theirs = {item["file"]: item for item in map(json.loads, r.stdout.decode().splitlines())}
    fields_total = 0
    for fx in lego:
        k = theirs.get(fx.path)
        if k is None:
            fail("kaitai %s: no result" % fx.rel)
            continue
        r = run([ctx.cli, "dump", "--source", fx.path] + ctx.opt_args(fx.options))
        if r.returncode != 0:
            # refused by retroanim: Kaitai must refuse too, except for the magic it does not check
            if "error" in k:
                print("kaitai %-36s refused by both: Kaitai '%s'" % (fx.rel, k["error"]))
            elif k["parsed"].get("magic", 0x11) != 0x11 and "magic" in fx.error:
                print("kaitai %-36s Kaitai accepts magic %d (no valid: in the .ksy), retroanim refuses: %s" % (
                    fx.rel, k["parsed"]["magic"], fx.error.split(": ", 2)[-1]))
            else:
                fail("kaitai %s: Kaitai parses the file, retroanim refuses it: %s" % (fx.rel, fx.error))
            continue
        if "error" in k:
            fail("kaitai %s: retroanim loads the file, Kaitai refuses it: %s" % (fx.rel, k["error"]))
            continue
        ours = json.loads(r.stdout)
        ours.pop("format")
        diffs = []
        n = same_tree(ours, k["parsed"], "", diffs)
        fields_total += n
        for d in diffs[:8]:
            fail("kaitai %s: %s" % (fx.rel, d))
        print("kaitai %-36s %d values equal %s" % (fx.rel, n, "FAIL" if diffs else "ok"))
    print("kaitai: kaitai-struct-compiler %s, %d LEGO fixtures, %d values compared" % (
        json.load(open(os.path.join(HERE, "node_modules", "kaitai-struct-compiler", "package.json")))["version"],
        len(lego), fields_total))


# ------------------------------------------------------------------------------------------
def glb_parts(path):
    data = open(path, "rb").read()
    if data[:4] != b"glTF":
        raise RuntimeError("%s is not a .glb" % path)
    jlen = struct.unpack_from("<I", data, 12)[0]
    js = json.loads(data[20:20 + jlen])
    bin_chunk = b""
    off = 20 + jlen
    if off + 8 <= len(data):
        blen = struct.unpack_from("<I", data, off)[0]
        bin_chunk = data[off + 8: off + 8 + blen]
    return js, bin_chunk


def animation_bytes(js, binary):
    """The bytes of every accessor an animation sampler reads, in order."""
    out = []
    views = js.get("bufferViews", [])
    for an in js.get("animations", []):
        for s in an["samplers"]:
            for acc_index in (s["input"], s["output"]):
                acc = js["accessors"][acc_index]
                v = views[acc["bufferView"]]
                start = v.get("byteOffset", 0) + acc.get("byteOffset", 0)
                out.append(binary[start: start + v["byteLength"]])
    return out


def check_assimp(ctx, fixtures):
    preload = os.path.abspath(ctx.args.preload)
    base_env = dict(os.environ)
    base_env.pop("RETROANIM_OPTIONS", None)
    ok = 0
    for fx in fixtures:
        env = dict(base_env, LD_PRELOAD=preload)
        if fx.options:
            env["RETROANIM_OPTIONS"] = ";".join(fx.options)
        r = run(["assimp", "info", fx.path], env=env)
        out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
        if fx.dump is None:
            # refused by the stock tool too, with retroanim's message (the part after "FILE: ")
            msg = fx.error.split(": ", 2)[-1] if fx.error else ""
            if "not a file of any supported format" in msg:
                msg = "No suitable reader found"  # Assimp's words when no importer claims the file
            if r.returncode == 0 or msg not in out:
                fail("assimp info %s: expected the refusal '%s', got exit %d:\n%s" % (fx.rel, msg, r.returncode,
                                                                                       out[-500:]))
            else:
                ok += 1
                print("assimp info   %-44s refused: %s" % (fx.rel, msg))
            continue
        fields = {}
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
        want_anims = len(fx.dump["animations"])
        want_cams = len(fx.dump["cameras"])
        if r.returncode != 0:
            fail("assimp info %s: exit %d:\n%s" % (fx.rel, r.returncode, out[-800:]))
            continue
        if fields.get("Animations") != str(want_anims) or fields.get("Cameras") != str(want_cams):
            fail("assimp info %s: Animations %s Cameras %s, the scene has %d and %d" % (
                fx.rel, fields.get("Animations"), fields.get("Cameras"), want_anims, want_cams))
            continue
        out_glb = ctx.out_path(fx, ".assimp.glb")
        if os.path.exists(out_glb):
            os.remove(out_glb)
        r = run(["assimp", "export", fx.path, out_glb, "-fglb2"], env=env)
        if r.returncode != 0 or not os.path.exists(out_glb):
            fail("assimp export %s: exit %d: %s" % (fx.rel, r.returncode, r.stderr.decode(errors="replace")[-500:]))
            continue
        ours = ctx.convert(fx, "assimp_glb")
        js_a, bin_a = glb_parts(out_glb)
        js_b, bin_b = glb_parts(ours)
        if js_a != js_b or animation_bytes(js_a, bin_a) != animation_bytes(js_b, bin_b):
            fail("assimp export %s: the .glb differs from retroanim convert's (JSON or animation data)" % fx.rel)
            continue
        ok += 1
        print("assimp export %-44s Nodes %s Animations %s Channels %s: .glb equals retroanim convert's" % (
            fx.rel, fields.get("Nodes"), fields.get("Animations"), fields.get("Animation Channels")))
    # retroanim's .fbx in the stock tool, without the module: Assimp's own FBX importer reads every
    # node (plus its own root), camera and animation
    fbx_ok = 0
    for fx in fixtures:
        if fx.dump is None:
            continue
        path = ctx.convert(fx, "fbx")
        r = run(["assimp", "info", path], env=base_env)
        out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
        fields = dict((k.strip(), v.strip()) for k, v in (l.split(":", 1) for l in out.splitlines() if ":" in l))
        # every node and camera view is a model; so is every mesh (a Mesh model under its node's model)
        want = {"Nodes": len(fx.dump["nodes"]) + len(fx.dump["cameras"]) + len(fx.dump.get("meshes", [])) + 1,
                "Animations": len(fx.dump["animations"]), "Cameras": len(fx.dump["cameras"])}
        got = {k: fields.get(k) for k in want}
        if r.returncode != 0 or any(got[k] != str(v) for k, v in want.items()):
            fail("assimp info %s (.fbx): exit %d, %s, want %s:\n%s" % (fx.rel, r.returncode, got, want, out[-500:]))
        else:
            fbx_ok += 1
    print("assimp: the stock tool reads %d of %d retroanim .fbx files (nodes, animations, cameras)" % (
        fbx_ok, sum(1 for fx in fixtures if fx.dump is not None)))
    # without the module the stock tool does not know the formats; with a module built for
    # another libassimp version it says so once and registers nothing
    sample = next(fx for fx in fixtures if fx.dump is not None)
    r = run(["assimp", "info", sample.path], env=base_env)
    if r.returncode == 0:
        fail("assimp info %s succeeded without the preload module" % sample.rel)
    # max_file_size holds in the stock tool too: refused before the file is read
    r = run(["assimp", "info", sample.path], env=dict(base_env, LD_PRELOAD=preload,
                                                      RETROANIM_OPTIONS="max_file_size=10"))
    out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    if r.returncode == 0 or "more than max_file_size (10)" not in out:
        fail("assimp info with max_file_size=10: exit %d, no refusal naming the limit:\n%s" % (r.returncode, out[-500:]))
    else:
        print("assimp: max_file_size=10 refuses %s before reading it" % sample.rel)
    if ctx.args.mismatch_preload:
        env = dict(base_env, LD_PRELOAD=os.path.abspath(ctx.args.mismatch_preload))
        r = run(["assimp", "info", sample.path], env=env)
        err = r.stderr.decode(errors="replace")
        lines = [l for l in err.splitlines() if l.startswith("retroanim preload:")]
        if r.returncode == 0 or len(lines) != 1 or "not registered" not in lines[0]:
            fail("version mismatch: expected one 'retroanim preload: ... not registered' line and a refusal, "
                 "got exit %d, stderr:\n%s" % (r.returncode, err[-800:]))
        else:
            print("assimp: a module built for another version: %s" % lines[0])
    print("assimp: %s; %d of %d fixtures as expected" % (
        next((l.strip() for l in run(["assimp", "version"]).stdout.decode(errors="replace").splitlines()
              if "ersion" in l), "assimp"), ok, len(fixtures)))


PYASSIMP_READER = r'''
import ctypes, json, sys
import pyassimp.core as core
core._assimp_lib.dll.aiGetErrorString.restype = ctypes.c_char_p
out = []
for path in sys.argv[1:]:
    sp = core._assimp_lib.load(path.encode(), 0)
    if not sp:
        out.append({"file": path, "error": core._assimp_lib.dll.aiGetErrorString().decode(errors="replace")})
        continue
    s = sp.contents
    anims = []
    for i in range(s.mNumAnimations):
        a = s.mAnimations[i].contents
        chans = []
        for j in range(a.mNumChannels):
            c = a.mChannels[j].contents
            pos = [[c.mPositionKeys[k].mTime, c.mPositionKeys[k].mValue.x, c.mPositionKeys[k].mValue.y,
                    c.mPositionKeys[k].mValue.z] for k in range(c.mNumPositionKeys)]
            rot = [[c.mRotationKeys[k].mTime, c.mRotationKeys[k].mValue.w, c.mRotationKeys[k].mValue.x,
                    c.mRotationKeys[k].mValue.y, c.mRotationKeys[k].mValue.z] for k in range(c.mNumRotationKeys)]
            scl = [[c.mScalingKeys[k].mTime, c.mScalingKeys[k].mValue.x, c.mScalingKeys[k].mValue.y,
                    c.mScalingKeys[k].mValue.z] for k in range(c.mNumScalingKeys)]
            chans.append({"node": c.mNodeName.data.decode("utf-8", "replace"), "position": pos, "rotation": rot,
                          "scaling": scl, "pre": c.mPreState, "post": c.mPostState})
        anims.append({"name": a.mName.data.decode("utf-8", "replace"), "duration": a.mDuration,
                      "tps": a.mTicksPerSecond, "channels": chans})
    out.append({"file": path, "animations": anims, "cameras": s.mNumCameras, "flags": s.mFlags})
    core._assimp_lib.release(sp)
print(json.dumps(out))
'''

BEHAVIOUR = {"default": 0, "constant": 1, "linear": 2, "repeat": 3}


def check_pyassimp(ctx, fixtures):
    preload = os.path.abspath(ctx.args.preload)
    loadable = [fx for fx in fixtures if fx.dump is not None]
    env = dict(os.environ, LD_PRELOAD=preload)
    env.pop("RETROANIM_OPTIONS", None)
    results = []
    # one run per option set (the options travel in the environment)
    groups = {}
    for fx in loadable:
        groups.setdefault(tuple(fx.options), []).append(fx)
    by_path = {}
    for opts, fxs in groups.items():
        e = dict(env)
        if opts:
            e["RETROANIM_OPTIONS"] = ";".join(opts)
        r = run(["/usr/bin/python3", "-c", PYASSIMP_READER] + [fx.path for fx in fxs], env=e)
        if r.returncode != 0:
            fail("pyassimp reader exited %d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-1500:]))
            return
        for item in json.loads(r.stdout):
            by_path[item["file"]] = item
    keys_total = 0
    for fx in loadable:
        got = by_path.get(fx.path)
        if got is None or got.get("error"):
            fail("pyassimp %s: not loaded: %s" % (fx.rel, got and got.get("error")))
            continue
        want = fx.dump["animations"]
        worst, nkeys = 0.0, 0
        problems = []
        if len(got["animations"]) != len(want) or got["cameras"] != len(fx.dump["cameras"]):
            problems.append("%d animations / %d cameras, the scene has %d / %d" % (
                len(got["animations"]), got["cameras"], len(want), len(fx.dump["cameras"])))
        for ga, wa in zip(got["animations"], want):
            if ga["name"] != wa["name"] or ga["tps"] != 1.0 or abs(ga["duration"] - wa["duration"]) > 1e-9:
                problems.append("animation %r: name/tps/duration %r %r %r, want %r 1 %r" % (
                    wa["name"], ga["name"], ga["tps"], ga["duration"], wa["name"], wa["duration"]))
            if len(ga["channels"]) != len(wa["channels"]):
                problems.append("animation %r: %d channels, want %d" % (wa["name"], len(ga["channels"]),
                                                                       len(wa["channels"])))
                continue
            for gc, wc in zip(ga["channels"], wa["channels"]):
                if gc["node"] != wc["node"] or gc["pre"] != BEHAVIOUR[wc["pre_state"]] or \
                        gc["post"] != BEHAVIOUR[wc["post_state"]]:
                    problems.append("channel %r: node/pre/post %r %r %r" % (wc["node"], gc["node"], gc["pre"],
                                                                             gc["post"]))
                for track in ("position", "rotation", "scaling"):
                    g, w = gc[track], wc[track]
                    if len(w) == 0 and len(g) == 1:
                        continue  # Assimp's ScenePreprocessor fills a missing track with the rest value
                    if len(g) != len(w):
                        problems.append("channel %r %s: %d keys, want %d" % (wc["node"], track, len(g), len(w)))
                        continue
                    for gk, wk in zip(g, w):
                        nkeys += 1
                        for a, b in zip(gk, wk):
                            # ai_real is float: 1e-6 relative, times and values alike
                            d = abs(a - b) / max(1.0, abs(b))
                            worst = max(worst, d if d == d else float("inf"))
        keys_total += nkeys
        if worst > 1e-6:
            problems.append("a key differs by %.3g (> 1e-6, float32)" % worst)
        for p in problems[:5]:
            fail("pyassimp %s: %s" % (fx.rel, p))
        print("pyassimp %-44s animations %d, %d keys read back, worst %.2e %s" % (
            fx.rel, len(want), nkeys, worst, "FAIL" if problems else "ok"))
    print("pyassimp: %d fixtures, %d keys read back through libassimp's raw structures" % (len(loadable),
                                                                                         keys_total))


def need_pyassimp(ctx):
    if not ctx.args.preload:
        return "--preload"
    if not os.path.exists("/usr/bin/python3") or run(["/usr/bin/python3", "-c", "import pyassimp"]).returncode:
        return "Debian's python3-pyassimp (for /usr/bin/python3)"
    return None


CHECKS = {
    "convert": (check_convert, lambda ctx: None),
    "validator": (check_validator, lambda ctx: need_node(ctx, ["gltf-validator"])),
    "three": (check_three, lambda ctx: need_node(ctx, ["three"])),
    "blender": (check_blender, lambda ctx: None if shutil.which("blender") else "blender (apt: blender python3-numpy)"),
    "assimp": (check_assimp, lambda ctx: None if shutil.which("assimp") and ctx.args.preload
               else "the assimp command line (apt: assimp-utils) and --preload"),
    "pyassimp": (check_pyassimp, lambda ctx: need_pyassimp(ctx)),
    "kaitai": (check_kaitai, lambda ctx: need_node(ctx, ["kaitai-struct-compiler", "kaitai-struct", "js-yaml"])),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("check", choices=sorted(CHECKS))
    ap.add_argument("--cli", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--preload")
    ap.add_argument("--mismatch-preload")
    ap.add_argument("--require", action="store_true", help="a missing tool is a failure, not a skip")
    args = ap.parse_args()
    ctx = Ctx(args)
    fn, missing = CHECKS[args.check]
    why = missing(ctx)
    if why:
        print("downstream %s: SKIPPED: needs %s" % (args.check, why))
        return 1 if args.require else SKIP
    fixtures = ctx.fixtures()
    print("downstream %s: %d fixtures (%d load, %d refused)" % (
        args.check, len(fixtures), sum(1 for f in fixtures if f.dump), sum(1 for f in fixtures if not f.dump)))
    try:
        fn(ctx, fixtures)
    except Exception as e:  # a tool that broke is a failure, with its message
        fail("%s: %s" % (args.check, e))
    if failures:
        print("downstream %s: FAILED (%d problems)" % (args.check, len(failures)))
        return 1
    print("downstream %s: PASSED" % args.check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
