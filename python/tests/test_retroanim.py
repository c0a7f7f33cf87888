"""The Python package against the command line: every fixture loads and
equals `retroanim dump` and `retroanim pose`; options, archives, errors,
memory, writers, and an offline pip install.

Environment: RETROANIM_CLI (the retroanim binary), RETROANIM_FIXTURES
(test_models), RETROANIM_PYTHON_DIR (BUILD/python, for the pip test);
PYTHONPATH must reach the package."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

import retroanim

CLI = os.environ["RETROANIM_CLI"]
FIX = os.environ["RETROANIM_FIXTURES"]
PYDIR = os.environ.get("RETROANIM_PYTHON_DIR")
FORMAT_DIRS = ["lego_island", "metroid_prime", "world_of_goo", "niff", "homeworld", "archives"]


def fixture_files():
    out = []
    for d in FORMAT_DIRS:
        for name in sorted(os.listdir(os.path.join(FIX, d))):
            path = os.path.join(FIX, d, name)
            if os.path.isfile(path) and not name.endswith((".txt", ".md", ".py")):
                out.append(path)
    return out


def opts_for(path):
    return {"format": "lego_ani_body"} if path.endswith(".anb") else {}


def approx(a, b, tol=6e-8):
    """Equal, numbers within float32 rounding: the JSON of `retroanim dump`
    prints a value that is exact in float32 with 9 digits (exact as float32),
    the document holds the double itself."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(approx(a[k], b[k], tol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(approx(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= tol * max(1.0, abs(b))
    return a == b


def cli(*args, env=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env)


def cli_options(opts):
    return [a for k, v in opts.items() for a in ("--option", f"{k}={v}")]


FILES = fixture_files()


def test_found_the_fixtures():
    assert len(FILES) >= 80
    assert {f["id"] for f in retroanim.formats()} >= {"lego_ani", "metroid_anim", "wog_anim", "niff",
                                                     "homeworld_mad", "lego_si", "metroid_pak"}
    assert retroanim.__version__.count(".") == 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, FIX))
def test_fixture_equals_cli(path):
    opts = opts_for(path)
    r = cli("dump", path, *cli_options(opts))
    if r.returncode != 0:  # a broken fixture: the same refusal, as an Error
        with pytest.raises(retroanim.Error) as e:
            retroanim.load(path, **opts)
        line = r.stderr.strip().splitlines()[0]
        assert line == f"retroanim: {e.value}", (line, str(e.value))
        return
    want = json.loads(r.stdout)
    with retroanim.load(path, **opts) as doc:
        assert doc.dump() == want
        assert doc.format == want["format"]
        assert [(n.name, n.parent) for n in doc.nodes] == [(n["name"], n["parent"]) for n in want["nodes"]]
        assert approx([n.transform for n in doc.nodes], [n["transform"] for n in want["nodes"]])
        assert approx([n.metadata for n in doc.nodes],
                      [want.get("node_metadata", {}).get(n["name"], {}) for n in want["nodes"]])
        assert approx([(a.name, a.duration, a.ticks_per_second) for a in doc.animations],
                      [(a["name"], a["duration"], a["ticks_per_second"]) for a in want["animations"]])
        for a, w in zip(doc.animations, want["animations"]):
            assert approx([(c.node, c.pre_state, c.post_state, c.position, c.rotation, c.scaling) for c in a.channels],
                          [(c["node"], c["pre_state"], c["post_state"], c.get("position", []), c.get("rotation", []),
                            c.get("scaling", [])) for c in w["channels"]])
        assert approx([(c.name, c.horizontal_fov, c.aspect, c.near, c.far, c.position, c.look_at, c.up)
                       for c in doc.cameras],
                      [(c["name"], c["horizontal_fov"], c["aspect"], c["near"], c["far"], c["position"],
                        c["look_at"], c["up"]) for c in want["cameras"]])
        assert approx(doc.metadata, want["metadata"]) and doc.warnings == want.get("warnings", [])
        # the game's pose at a few times of every animation, as `retroanim pose` prints it
        for ai, a in enumerate(doc.animations or [None]):
            dur = a.duration if a else 0
            times = [0, dur / 3, dur / 2, dur, dur * 1.25 + 0.01]
            r = cli("pose", path, "--anim", str(ai), *[x for t in times for x in ("--time", repr(t))],
                    *cli_options(opts))
            assert r.returncode == 0, r.stderr
            for line, t in zip(r.stdout.splitlines(), times):
                got = doc.pose(t, ai)
                ref = json.loads(line)["nodes"]
                assert len(got) == len(ref)
                # the same evaluator; the JSON's float32-exact values within float32 rounding
                assert approx(got, [n["world"] for n in ref]), t


def test_bytes_and_filename():
    path = os.path.join(FIX, "lego_island", "hierarchy.ani")
    data = open(path, "rb").read()
    with retroanim.load(data, filename="walk.ani") as doc, retroanim.load(path) as ref:
        assert doc.dump() == ref.dump()
    # a Metroid ANIM from memory finds its skeleton through the file name
    anim = os.path.join(FIX, "metroid_prime", "upper.ANIM")
    with retroanim.load(open(anim, "rb").read(), filename=anim) as doc:
        assert doc.metadata["metroid.skeleton_found"] is True


def test_options():
    path = os.path.join(FIX, "lego_island", "hierarchy.ani")
    with retroanim.load(path, coords="native") as doc:
        assert doc.metadata["coords"].startswith("native")
    with pytest.raises(retroanim.Error) as e:
        retroanim.load(path, max_key_angel=2)
    assert e.value.field == "max_key_angel" and e.value.code == "usage" and "max_key_angle" in str(e.value)
    for bad in ({"max_key_angle": 180}, {"coords": "sideways"}, {"max_keys": float("nan")}, {"memory_limit": "64Q"},
                {"sample_rate": 30}):
        with pytest.raises(retroanim.Error) as e:
            retroanim.load(path, **bad)
        assert e.value.field == next(iter(bad)) and e.value.code == "usage"
    wog = os.path.join(FIX, "world_of_goo", "rot_1rps.anim.binltl")
    with retroanim.load(wog, flip_y=True) as doc:
        assert doc.metadata["wog.flip_y"] is True
    anim = os.path.join(FIX, "metroid_prime", "upper.ANIM")
    with retroanim.load(anim, cinf="none") as doc:
        assert doc.metadata["metroid.skeleton_found"] is False


def test_archives():
    si = os.path.join(FIX, "archives", "several.si")
    items = retroanim.list_archive(si)
    listed = cli("list", si)
    assert listed.returncode == 0
    for it in items:
        assert it["name"] in listed.stdout
        assert it["format"] == "lego_ani" and it["extension"] == "ani"
    last = items[-1]
    for key in (last["name"], last["id"], str(last["id"]), hex(last["id"])):
        with retroanim.load(si, animation=key) as doc:
            assert doc.metadata["archive.item_id"] == last["id"]
            want = json.loads(cli("dump", si, "--option", f"animation={last['id']}").stdout)
            assert doc.dump() == want
    with pytest.raises(retroanim.Error) as e:
        retroanim.load(si, animation="nope")
    assert e.value.field == "animation"
    pak = os.path.join(FIX, "archives", "several.pak")
    assert any(it["has_skeleton"] for it in retroanim.list_archive(pak))
    with pytest.raises(retroanim.Error):
        retroanim.list_archive(os.path.join(FIX, "lego_island", "hierarchy.ani"))


def test_errors():
    path = os.path.join(FIX, "lego_island", "hierarchy.ani")
    data = open(path, "rb").read()
    with pytest.raises(retroanim.Error) as e:
        retroanim.load(data[:30], filename="cut.ani")
    assert e.value.format == "lego_ani" and e.value.offset is not None and e.value.code == "truncated"
    assert str(e.value).startswith("cut.ani: lego_ani: ")
    with pytest.raises(retroanim.Error) as e:
        retroanim.load("/nonexistent/walk.ani")
    assert e.value.code == "io" and "cannot open" in str(e.value)
    with pytest.raises(retroanim.Error) as e:
        retroanim.load(b"")
    assert e.value.code == "bad_magic"


def test_writers_and_lifetime(tmp_path):
    path = os.path.join(FIX, "lego_island", "camera.ani")
    doc = retroanim.load(path)
    doc.save_gltf(tmp_path / "c.glb")
    doc.save_fbx(tmp_path / "c.fbx")
    assert (tmp_path / "c.glb").read_bytes()[:4] == b"glTF"
    assert (tmp_path / "c.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"
    with pytest.raises(retroanim.Error):
        doc.save_gltf(tmp_path / "missing" / "c.glb")
    with pytest.raises(retroanim.Error):
        doc.pose(0, anim=5)
    doc.close()
    doc.close()
    with pytest.raises(retroanim.Error):
        doc.pose(0)
    assert doc.nodes  # what was read stays readable


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_memory_does_not_grow():
    path = os.path.join(FIX, "niff", "camera.niff")
    data = open(path, "rb").read()
    for _ in range(100):
        retroanim.load(data, filename="camera.niff").pose(0.5)
    before = rss_kib()
    for i in range(1000):
        doc = retroanim.load(data, filename="camera.niff")
        doc.pose(0.5)
        if i % 2:
            doc.close()
        del doc
    grown = rss_kib() - before
    assert grown < 4096, f"resident memory grew by {grown} KiB over 1,000 loads"


@pytest.mark.skipif(not PYDIR, reason="RETROANIM_PYTHON_DIR not set")
def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation",
                          "--quiet", PYDIR], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    code = ("import retroanim, sys; d = retroanim.load(sys.argv[1]); "
            "print(retroanim.__file__, d.format, len(d.nodes))")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code, os.path.join(FIX, "lego_island", "hierarchy.ani")],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    where, fmt, nodes = r.stdout.split()
    assert where.startswith(str(venv)) and fmt == "lego_ani" and nodes == "5"


def test_visibility_steps():
    # lego_island/hierarchy.txt: SUB's morph keys, hidden at 1000 ms, shown again at 1500 ms
    with retroanim.load(os.path.join(FIX, "lego_island", "hierarchy.ani")) as doc:
        assert doc.animations[0].visibility == {"SUB": [[1.0, False], [1.5, True]]}
    with retroanim.load(os.path.join(FIX, "lego_island", "camera.ani")) as doc:
        assert doc.animations[0].visibility == {}
