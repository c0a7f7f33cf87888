#!/usr/bin/env python3
"""The Blender add-on, headless, as a user installs it: every fixture of
every format and archive imports through File > Import (broken ones are
refused with the library's message), and matches the game's pose; the
NIFF fixtures with geometry become meshes, materials and images that match
their .txt, and skinned meshes deform as the library's skinning says
(tests/blender_addon_check.py says what is checked).

usage: test_blender_addon.py ADDON_ZIP FIXTURES_DIR [--require]
Exit 77 (skipped) without blender, unless --require."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
zip_path, fixtures = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
require = "--require" in sys.argv
if not shutil.which("blender"):
    print("blender not found (apt: blender)")
    sys.exit(1 if require else 77)

jobs = []
for d in ("lego_island", "metroid_prime", "world_of_goo", "niff", "homeworld", "archives"):
    for name in sorted(os.listdir(os.path.join(fixtures, d))):
        path = os.path.join(fixtures, d, name)
        if not os.path.isfile(path) or name.endswith((".txt", ".md", ".py")) or name.endswith(".anb"):
            continue
        # Homeworld's splines sampled at 240 Hz: its keys then follow the game within 1e-4
        # (at the default 60 Hz within the bound README states)
        jobs.append({"file": path, "options": {"extra_options": "sample_rate=240"} if d == "homeworld" else {}})
# an archive: a chosen animation, and all of them; a Metroid ANIM with its skeleton named; the native frame
si = os.path.join(fixtures, "archives", "several.si")
jobs += [{"file": si, "options": {"animation": "13"}}, {"file": si, "options": {"all_animations": True}},
         {"file": os.path.join(fixtures, "metroid_prime", "v0_mp1.anim"),
          "options": {"cinf": os.path.join(fixtures, "metroid_prime", "v0_mp1.cinf")}},
         {"file": os.path.join(fixtures, "lego_island", "camera.ani"), "options": {"coords": "native"}},
         {"file": os.path.join(fixtures, "lego_island", "camera.ani"), "options": {"extra_options": "max_key_angel=2"}}]
# LEGO Island animations wearing the WORLD.WDB fixtures' models (a prop with its parts, a character)
for ani, wdb in (("car_drive.ani", "car.wdb"), ("pepper_wave.ani", "minifig.wdb")):
    jobs.append({"file": os.path.join(fixtures, "lego_island", ani),
                 "options": {"extra_options": "wdb=" + os.path.join(fixtures, "lego_island", wdb)}})

with tempfile.TemporaryDirectory() as tmp:
    # an orthographic camera: niff/camera.niff with Cam 1's type (u32 BE at byte 320, camera.txt) set to ORTHO
    data = bytearray(open(os.path.join(fixtures, "niff", "camera.niff"), "rb").read())
    assert data[320:324] == b"\0\0\0\0", "camera.niff: Cam 1's type moved"
    data[323] = 1
    ortho_file = os.path.join(tmp, "camera_ortho.niff")
    open(ortho_file, "wb").write(data)
    jobs.append({"file": ortho_file, "options": {}})
    job_file, out_file = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "out.json")
    json.dump(jobs, open(job_file, "w"))
    # Blender's user folders in the scratch folder: installing the add-on leaves no trace in $HOME
    env = dict(os.environ, BLENDER_USER_CONFIG=os.path.join(tmp, "config"),
               BLENDER_USER_SCRIPTS=os.path.join(tmp, "scripts"))
    env.pop("PYTHONPATH", None)
    r = subprocess.run(["blender", "-b", "--factory-startup", "--python", os.path.join(HERE, "blender_addon_check.py"),
                        "--", zip_path, job_file, out_file], capture_output=True, text=True, env=env)
    if r.returncode != 0 or not os.path.exists(out_file):
        print("blender exited %d:\n%s\n%s" % (r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
        sys.exit(1)
    out = json.load(open(out_file))
    if "Traceback" in r.stdout + r.stderr:
        print("a Python traceback reached Blender's output:\n" + (r.stdout + r.stderr)[-3000:])
        sys.exit(1)

checks = failed = 0
worst = 0.0
refused = ortho = vis = meshes = materials = texels = mesh_poses = skinned_poses = skinned_expect = 0
for res in out["results"]:
    ortho += res.get("orthographic", 0)
    vis += res.get("visibility", 0)
    meshes += res.get("meshes", 0)
    materials += res.get("materials", 0)
    texels += res.get("texels", 0)
    mesh_poses += res.get("mesh_poses", 0)
    skinned_poses += res.get("skinned_poses", 0)
    skinned_expect += res.get("skinned_expect", 0)
    checks += res["checks"]
    worst = max(worst, res.get("worst", 0.0))
    refused += "error" in res
    for f in res["failures"]:
        failed += 1
        print("FAIL %s: %s" % (os.path.relpath(res["file"], fixtures), f))
# fixtures whose .txt states skinned positions: they must have been compared
stated_skinned = sum(1 for j in jobs if os.path.exists(os.path.splitext(j["file"])[0] + ".txt") and
                     any(line.startswith("expect-skinned ") for line in open(os.path.splitext(j["file"])[0] + ".txt")))
checks += bool(stated_skinned)
if stated_skinned and not (skinned_expect and skinned_poses):
    print("FAIL: %d fixture(s) state skinned positions, but %d were compared (%d skinned poses)" %
          (stated_skinned, skinned_expect, skinned_poses))
    failed += 1
print("Blender %s: %d imports (%d refused as the library refuses them), %d checks, worst pose difference %.3g, "
      "%d orthographic camera(s), %d visibility checks" % (out["blender"], len(out["results"]), refused, checks, worst,
                                                          ortho, vis))
print("geometry: %d meshes, %d mesh materials, %d texels, %d posed mesh comparisons, %d skinned pose comparisons, "
      "%d expect-skinned positions" % (meshes, materials, texels, mesh_poses, skinned_poses, skinned_expect))
print("%d passed, %d failed" % (checks - failed, failed))
sys.exit(1 if failed or len(out["results"]) < 60 or not ortho or not vis or not meshes or not texels or not mesh_poses
         else 0)
