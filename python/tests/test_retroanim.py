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
FIX = os.path.abspath(os.environ["RETROANIM_FIXTURES"])  # the pip test runs elsewhere
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
    opts = {"format": "lego_ani_body"} if path.endswith(".anb") else {}
    # the fixture's own load options (a LEGO animation wearing a WDB fixture: wdb=FILE beside it)
    txt = os.path.splitext(path)[0] + ".txt"
    if os.path.exists(txt):
        for line in open(txt, encoding="utf-8", errors="replace"):
            if line.startswith("expect-option "):
                k, _, v = line[len("expect-option "):].strip().partition("=")
                opts[k] = os.path.join(os.path.dirname(path), v) if k == "wdb" else v
    return opts


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
        # geometry (the dump has it only when there is some; it leaves the pixels out)
        lists = lambda rows: None if rows is None else [list(r) for r in rows]  # noqa: E731
        assert [(m.name, m.node, m.material, m.vertex_count, m.triangle_count, lists(m.indices), m.skin,
                 lists(m.joints)) for m in doc.meshes] == \
            [(m["name"], m["node"], m["material"], m["vertex_count"], m["triangle_count"], m["triangles"],
              m.get("skin", -1), None if "joints" not in m else [m["joints"][k:k + 4]
                                                                 for k in range(0, len(m["joints"]), 4)])
             for m in want.get("meshes", [])]
        for m, w in zip(doc.meshes, want.get("meshes", [])):
            for key in ("positions", "normals", "colors", "uvs", "weights"):
                assert approx(lists(getattr(m, key)), w.get(key)), (m.name, key)
            assert approx(m.metadata, w["metadata"])
        assert approx([(m.name, list(m.base_color), m.texture, m.alpha_mode.lower(), m.alpha_cutoff, m.double_sided,
                        m.unlit, m.metadata) for m in doc.materials],
                      [(m["name"], m["base_color"], m["texture"], m["alpha_mode"], m["alpha_cutoff"],
                        m["double_sided"], m["unlit"], m["metadata"]) for m in want.get("materials", [])])
        assert [(t.name, t.width, t.height, t.wrap_s.lower(), t.wrap_t.lower(), t.nearest, t.source_format)
                for t in doc.textures] == \
            [(t["name"], t["width"], t["height"], t["wrap_s"], t["wrap_t"], t["nearest"], t["source_format"])
             for t in want.get("textures", [])]
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


# ---- geometry: meshes, materials and textures against the fixtures' expect lines ----

def expect_lines(txt, kind):
    """The `expect-KIND k=v k=v ...` lines of a fixture's .txt, as dicts (a
    bare value, as in `expect-meshes 10`, under the key "")."""
    out = []
    with open(txt) as f:
        for line in f:
            words = line.split()
            if not words or words[0] != "expect-" + kind:
                continue
            out.append(dict(w.split("=", 1) if "=" in w else ("", w) for w in words[1:]))
    return out


def numbers(text, width):
    """"1,0,0;0,1,0" -> [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]"""
    out = [tuple(float(x) for x in corner.split(",")) for corner in text.split(";")]
    assert all(len(c) == width for c in out), text
    return out


def flag(text):
    return {"0": False, "1": True}[text]


def geometry_fixtures():
    out = []
    for name in sorted(os.listdir(os.path.join(FIX, "niff"))):
        txt = os.path.join(FIX, "niff", name)
        if name.endswith(".txt") and expect_lines(txt, "mesh"):
            stem = os.path.join(FIX, "niff", name[:-4])
            out.append(next(stem + ext for ext in (".niff", ".nif") if os.path.exists(stem + ext)))
    return out


GEOMETRY = geometry_fixtures()


def test_found_the_geometry_fixtures():
    assert {os.path.basename(p) for p in GEOMETRY} >= {"geometry.niff", "textures.niff", "ci_palette.niff"}


@pytest.mark.parametrize("path", GEOMETRY, ids=os.path.basename)
def test_geometry_equals_expectations(path):
    txt = os.path.splitext(path)[0] + ".txt"
    with retroanim.load(path) as doc:
        for kind, got in (("meshes", doc.meshes), ("materials", doc.materials), ("textures", doc.textures)):
            assert [len(got)] == [int(e[""]) for e in expect_lines(txt, kind)], kind
        meshes = {m.name: m for m in doc.meshes}
        materials = {m.name: m for m in doc.materials}
        textures = {t.name: t for t in doc.textures}
        assert len(meshes) == len(doc.meshes) and len(materials) == len(doc.materials)
        assert len(textures) == len(doc.textures)
        for e in expect_lines(txt, "mesh"):
            m = meshes[e["name"]]
            assert (m.node, m.vertex_count, m.triangle_count) == (e["node"], int(e["vertices"]), int(e["triangles"]))
            assert m.material == (None if e["material"] == "-" else e["material"])
            assert (m.uvs is not None, m.normals is not None, m.colors is not None) == \
                (flag(e["uv"]), flag(e["normals"]), flag(e["colors"])), m.name
            assert len(m.positions) == m.vertex_count and len(m.indices) == m.triangle_count
            if m.skin == -1:  # rigid: no joints; skinned (NIFF 2 envelopes, clusters): 4 joints, weights summing to 1
                assert m.joints is None and m.weights is None
            else:
                assert 0 <= m.skin < len(doc.skins) and m.node == doc.nodes[0].name
                assert len(m.joints) == len(m.weights) == m.vertex_count
                assert all(abs(sum(w) - 1) < 1e-5 and min(w) >= 0 for w in m.weights), m.name
                assert all(0 <= j < len(doc.skins[m.skin].joints) for js in m.joints for j in js), m.name
        triangles = expect_lines(txt, "triangle")
        assert triangles
        for e in triangles:
            m = meshes[e["mesh"]]
            tri = m.indices[int(e["index"])]
            for key, attr, width in (("p", m.positions, 3), ("n", m.normals, 3), ("c", m.colors, 4),
                                     ("uv", m.uvs, 2)):
                if key in e:
                    assert approx([attr[v] for v in tri], numbers(e[key], width), 1e-6), (m.name, key)
        for e in expect_lines(txt, "material"):
            m = materials[e["name"]]
            assert approx(m.base_color, numbers(e["color"], 4)[0], 1e-6)
            assert isinstance(m.base_color, tuple) and len(m.base_color) == 4
            assert m.texture == (None if e["texture"] == "-" else e["texture"])
            assert (m.alpha_mode, m.double_sided, m.unlit) == (e["alpha"], flag(e["double_sided"]), flag(e["unlit"]))
            assert 0 <= m.alpha_cutoff <= 1
        for e in expect_lines(txt, "texture"):
            t = textures[e["name"]]
            assert "%dx%d" % (t.width, t.height) == e["size"] and len(t.rgba) == 4 * t.width * t.height
            assert (t.source_format, "%s,%s" % (t.wrap_s, t.wrap_t), t.nearest) == \
                (e["format"], e["wrap"], flag(e["nearest"]))
            assert isinstance(t.rgba, bytes)
        texels = expect_lines(txt, "texel")
        assert len(texels) >= len(doc.textures)
        for e in texels:
            t = textures[e["texture"]]
            x, y = int(e["x"]), int(e["y"])
            want = tuple(int(v) for v in e["rgba"].split(","))
            assert t.texel(x, y) == want, (t.name, x, y)
            k = 4 * (y * t.width + x)  # rows from the top
            assert tuple(t.rgba[k:k + 4]) == want


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, FIX))
def test_geometry_is_consistent(path):
    """Every fixture: meshes, materials and textures that hold together, and
    the mesh count the .txt states."""
    try:
        doc = retroanim.load(path, **opts_for(path))
    except retroanim.Error:
        return  # a broken fixture (test_fixture_equals_cli)
    with doc:
        nodes = {n.name for n in doc.nodes}
        textures = {t.name for t in doc.textures}
        materials = {m.name for m in doc.materials}
        txt = os.path.splitext(path)[0] + ".txt"
        stated = expect_lines(txt, "meshes") if os.path.exists(txt) else []
        if stated:
            assert len(doc.meshes) == int(stated[0][""])
        for t in doc.textures:
            assert t.name and t.width > 0 and t.height > 0 and len(t.rgba) == 4 * t.width * t.height
            assert t.wrap_s in ("REPEAT", "CLAMP", "MIRROR") and t.wrap_t in ("REPEAT", "CLAMP", "MIRROR")
        for m in doc.materials:
            assert m.name and m.texture in textures | {None} and m.alpha_mode in ("OPAQUE", "MASK", "BLEND")
        for m in doc.meshes:
            assert m.node in nodes and m.material in materials | {None}
            assert len(m.positions) == m.vertex_count and len(m.indices) == m.triangle_count
            for attr in (m.normals, m.colors, m.uvs):
                assert attr is None or len(attr) == m.vertex_count
            assert all(0 <= v < m.vertex_count for tri in m.indices for v in tri)
            if m.skin >= 0:
                sk = doc.skins[m.skin]
                assert len(m.joints) == len(m.weights) == m.vertex_count
                assert all(j < len(sk.joints) for js in m.joints for j in js)
        for sk in doc.skins:
            assert all(j in nodes for j in sk.joints) and sk.skeleton in nodes | {None}


def test_geometry_outlives_close():
    doc = retroanim.load(os.path.join(FIX, "niff", "ci_palette.niff"))
    doc.close()
    assert doc.meshes[0].positions and doc.textures[0].texel(0, 0) and doc.materials[0].texture
    assert "5 mesh(es)" in repr(doc)
    with pytest.raises(IndexError):
        doc.textures[0].texel(doc.textures[0].width, 0)
