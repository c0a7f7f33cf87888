#!/usr/bin/env bash
# The CLI contract of docs/design.md: commands, JSON outputs, exit codes, the error
# line, convert to every exporter we rely on, batch with -j.
# usage: test_cli.sh RETROANIM_BINARY LEGO_FIXTURE_DIR METROID_FIXTURE_DIR WOG_FIXTURE_DIR NIFF_FIXTURE_DIR
#                    HOMEWORLD_FIXTURE_DIR
set -u
BIN=$1
FIX=$2
MP=$3
WOG=$4
NIFF=$5
HW=$6
. "$(dirname "$0")/cli_common.sh"
expect_rc() { # want_rc description command...
  local want=$1 what=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, wanted $want; stderr: $(head -c 300 "$TMP/err")"; fi
}
json_ok() { # file description
  if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; then ok; else bad "$2: not valid JSON"; fi
}

# A Metroid or World of Goo fixture: a broken one gives the one-line error at
# its expect-error-offset byte; a valid one works with info, dump, dump --source,
# pose and convert .glb.  usage: check_fixture FILE FORMAT_REGEX POSE_TIME
check_fixture() {
  local f=$1 fmt=$2 time=$3 name txt off out
  name=$(basename "$f")
  txt="${f%.*}.txt"
  if [ -f "$txt" ] && grep -q "^expect-error-offset" "$txt"; then
    off=$(awk '/^expect-error-offset/ {print $2}' "$txt")
    expect_rc 1 "$name info" "$BIN" info "$f"
    if grep -Eq "^retroanim: .*$name: $fmt: .+ \(at byte $off\)$" "$TMP/err"; then ok; else bad "$name error line: $(cat "$TMP/err")"; fi
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || bad "$name: one error line"
    expect_rc 1 "$name convert" "$BIN" convert "$f" "$TMP/x.glb"
    return
  fi
  expect_rc 0 "$name info" "$BIN" info "$f"
  expect_rc 0 "$name dump" "$BIN" dump "$f"
  json_ok "$TMP/out" "$name dump"
  expect_rc 0 "$name dump --source" "$BIN" dump --source "$f"
  json_ok "$TMP/out" "$name dump --source"
  expect_rc 0 "$name pose" "$BIN" pose "$f" --time "$time"
  json_ok "$TMP/out" "$name pose"
  out="$TMP/fixture_${name//./_}.glb"
  expect_rc 0 "$name convert .glb" "$BIN" convert "$f" "$out"
  [ -s "$out" ] && ok || bad "$name .glb written"
}

# A fixture whose description says expect-not-detected: `info` fails with the
# error text given.  usage: not_detected FILE ERROR_REGEX (status 1: an ordinary fixture)
not_detected() {
  local f=$1 name
  name=$(basename "$f")
  grep -q "^expect-not-detected" "${f%.*}.txt" || return 1
  expect_rc 1 "$name info" "$BIN" info "$f"
  grep -Eq "^retroanim: .*$name: $2" "$TMP/err" && ok || bad "$name: $(cat "$TMP/err")"
}

expect_rc 0 "formats" "$BIN" formats
grep -q "lego_ani" "$TMP/out" && ok || bad "formats lists lego_ani"
expect_rc 2 "no command" "$BIN"
expect_rc 2 "unknown command" "$BIN" frobnicate
expect_rc 2 "pose without --time" "$BIN" pose "$FIX/minimal.ani"
expect_rc 2 "bad --option" "$BIN" info "$FIX/minimal.ani" --option novalue

for f in "$FIX"/*.ani "$FIX"/*.anb; do
  name=$(basename "$f")
  opt=()
  case "$name" in *.anb) opt=(--option format=lego_ani_body) ;; esac
  if grep -q "^expect-error-offset" "${f%.*}.txt"; then
    off=$(awk '/^expect-error-offset/ {print $2}' "${f%.*}.txt")
    expect_rc 1 "$name info" "$BIN" info "$f" "${opt[@]}"
    # the error line: retroanim: FILE: FORMAT: what is wrong (at byte N)
    if grep -Eq "^retroanim: .*$name: lego_ani: .+ \(at byte $off\)$" "$TMP/err"; then ok; else bad "$name error line: $(cat "$TMP/err")"; fi
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || bad "$name: one error line"
    expect_rc 1 "$name convert" "$BIN" convert "$f" "$TMP/x.glb" "${opt[@]}"
    continue
  fi
  expect_rc 0 "$name info" "$BIN" info "$f" "${opt[@]}"
  expect_rc 0 "$name dump" "$BIN" dump "$f" "${opt[@]}"
  json_ok "$TMP/out" "$name dump"
  python3 - "$TMP/out" <<'PY' && ok || bad "$name dump schema"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"].startswith("lego_ani")
names = [n["name"] for n in d["nodes"]]
assert names[0] == "RootNode" and d["nodes"][0]["parent"] == -1 and len(set(names)) == len(names)
for i, n in enumerate(d["nodes"][1:], 1):
    assert 0 <= n["parent"] < i and len(n["transform"]) == 16
for a in d["animations"]:
    assert a["duration"] >= 0 and a["ticks_per_second"] == 1000
    for c in a["channels"]:
        assert c["node"] in names
        for tr in ("position", "rotation", "scaling"):
            ts = [k[0] for k in c[tr]]
            assert ts == sorted(ts) and len(set(ts)) == len(ts) and all(0 <= t <= a["duration"] + 1e-9 for t in ts)
PY
  expect_rc 0 "$name dump --source" "$BIN" dump --source "$f" "${opt[@]}"
  json_ok "$TMP/out" "$name dump --source"
  expect_rc 0 "$name pose" "$BIN" pose "$f" --time 0.25 "${opt[@]}"
  json_ok "$TMP/out" "$name pose"
  for ext in glb gltf fbx assbin; do
    expect_rc 0 "$name convert .$ext" "$BIN" convert "$f" "$TMP/${name%.*}.$ext" "${opt[@]}"
    [ -s "$TMP/${name%.*}.$ext" ] && ok || bad "$name .$ext written"
  done
  expect_rc 0 "$name convert --format fbxa" "$BIN" convert "$f" "$TMP/${name%.*}_a.fbx" --format fbxa --quiet "${opt[@]}"
done

# native coordinates: the Z-mirror is undone
"$BIN" pose "$FIX/minimal.ani" --time 0 >"$TMP/c.json" && "$BIN" pose "$FIX/minimal.ani" --time 0 --option coords=native >"$TMP/n.json"
python3 - "$TMP/c.json" "$TMP/n.json" <<'PY' && ok || bad "coords=native mirrors z"
import json, sys
c = json.load(open(sys.argv[1]))["nodes"][1]["world"]; n = json.load(open(sys.argv[2]))["nodes"][1]["world"]
assert c[3] == n[3] and c[7] == n[7] and c[11] == -n[11] and n[11] != 0
PY
expect_rc 2 "pose --anim out of range" "$BIN" pose "$FIX/minimal.ani" --time 0 --anim 3
expect_rc 1 "missing file" "$BIN" info "$TMP/nope.ani"
expect_rc 1 "body-only needs its option" "$BIN" info "$FIX/body_only.anb"

# batch: every recognised file, -j 2, exit 1 because two fixtures are broken
mkdir -p "$TMP/in"
cp "$FIX"/*.ani "$TMP/in/"
cp "$FIX/make_fixtures.py" "$TMP/in/" # not an animation: skipped
expect_rc 1 "batch with broken files" "$BIN" batch "$TMP/in" "$TMP/outdir" --format glb2 -j 2
n_ok=$(ls "$TMP/outdir"/*.glb 2>/dev/null | wc -l)
n_in=$(ls "$TMP/in"/*.ani | wc -l)
[ "$n_ok" -eq $((n_in - 2)) ] && ok || bad "batch wrote $n_ok of $((n_in - 2)) files"
grep -q "failed" "$TMP/out" && ok || bad "batch summary"
rm "$TMP/in/bad_magic.ani" "$TMP/in/truncated.ani"
expect_rc 0 "batch all good" "$BIN" batch "$TMP/in" "$TMP/outdir2" --format gltf2 -j 2 --quiet
expect_rc 2 "batch without --format" "$BIN" batch "$TMP/in" "$TMP/outdir3"
# inputs that share a stem (an ANIM beside its CINF) keep their whole names
mkdir -p "$TMP/pair"
cp "$FIX/minimal.ani" "$TMP/pair/walk.ani"
cp "$FIX/hierarchy.ani" "$TMP/pair/walk.lego.ani"
cp "$FIX/camera.ani" "$TMP/pair/walk.ANI"
expect_rc 0 "batch with shared stems" "$BIN" batch "$TMP/pair" "$TMP/pairout" --format glb2 -j 2 --quiet
[ -s "$TMP/pairout/walk.ani.glb" ] && [ -s "$TMP/pairout/walk.ANI.glb" ] && [ -s "$TMP/pairout/walk.lego.glb" ] &&
  [ "$(ls "$TMP/pairout" | wc -l)" -eq 3 ] && ok || bad "batch names of inputs sharing a stem: $(ls "$TMP/pairout")"

# ---- Metroid Prime: every fixture, the ANIM+CINF pairs, the error line ----
grep -q "metroid_anim" <("$BIN" formats) && ok || bad "formats lists metroid_anim"
for f in "$MP"/*.anim "$MP"/*.ANIM "$MP"/*.cinf "$MP"/*.CINF; do
  check_fixture "$f" "metroid_(anim|cinf)" 0.05
done
# an ANIM with its sibling CINF: named bones, the skeleton recorded
"$BIN" dump "$MP/v2_mp1.anim" >"$TMP/pair.json"
python3 - "$TMP/pair.json" <<'PY' && ok || bad "ANIM+CINF pair: skeleton names and metadata"
import json, sys
d = json.load(open(sys.argv[1]))
names = [n["name"] for n in d["nodes"]]
meta = d["metadata"]
assert meta["metroid.skeleton_source"] == "sibling" and meta["metroid.skeleton_found"] is True, meta
assert not any(n.startswith("bone_") for n in names[1:] if n != "bone_50"), names
PY
# the skeleton from --option, and none
expect_rc 0 "cinf option" "$BIN" info "$MP/example_96.anim" --option cinf="$MP/v2_mp1.cinf"
expect_rc 0 "cinf=none" "$BIN" info "$MP/v2_mp1.anim" --option cinf=none
grep -q "no skeleton" "$TMP/out" && ok || bad "cinf=none reports the missing skeleton"
expect_rc 1 "cinf missing file" "$BIN" info "$MP/v2_mp1.anim" --option cinf="$TMP/none.cinf"
grep -q "metroid_cinf" "$TMP/err" && ok || bad "missing skeleton error names metroid_cinf"
expect_rc 2 "bad layout option" "$BIN" info "$MP/v2_mp1.anim" --option layout=v9

# ---- World of Goo: every fixture (animations and movies, all layouts), the error line ----
grep -q "wog_movie" <("$BIN" formats) && ok || bad "formats lists wog_movie"
for f in "$WOG"/*.bin*; do
  not_detected "$f" "not a file of any supported format" || check_fixture "$f" "wog_(anim|movie)" 0.3
done
# a movie: actors by depth with their properties and key lists as node metadata
"$BIN" dump "$WOG/scene.movie.binltl" >"$TMP/movie.json"
python3 - "$TMP/movie.json" <<'PY' && ok || bad "movie dump: actors, metadata, duration"
import json, sys
d = json.load(open(sys.argv[1]))
names = [n["name"] for n in d["nodes"]]
assert names == ["RootNode", "actor01_IMAGE_MOVIE_BG", "actor00_TEXT_CHAPTER1_TITLE"], names
nm = d["node_metadata"]
assert nm["actor00_TEXT_CHAPTER1_TITLE"]["wog.actorType"] == "text"
assert nm["actor00_TEXT_CHAPTER1_TITLE"]["wog.font"] == "FONT_TITLE"
assert json.loads(nm["actor01_IMAGE_MOVIE_BG"]["wog.sound"])
assert d["animations"][0]["duration"] == 4 and d["metadata"]["wog.layout"] == "binltl"
PY
expect_rc 2 "bad transform_order" "$BIN" info "$WOG/xform.anim.binltl" --option transform_order=backwards
expect_rc 2 "bad flip_y" "$BIN" info "$WOG/xform.anim.binltl" --option flip_y=maybe
expect_rc 2 "bad wog layout" "$BIN" info "$WOG/xform.anim.binltl" --option layout=binltl32
# flip_y mirrors y: the translation's y changes sign
"$BIN" pose "$WOG/xform.anim.binltl" --time 0.5 >"$TMP/a.json" && "$BIN" pose "$WOG/xform.anim.binltl" --time 0.5 --option flip_y=true >"$TMP/b.json"
python3 - "$TMP/a.json" "$TMP/b.json" <<'PY' && ok || bad "flip_y mirrors y"
import json, sys
a = json.load(open(sys.argv[1]))["nodes"][1]["world"]; b = json.load(open(sys.argv[2]))["nodes"][1]["world"]
assert a[3] == b[3] and a[7] == -b[7] and a[7] != 0 and a[1] == -b[1]
PY

# ---- NIFF: every fixture, the NetImmerse .nif refused by name, cameras in the dump ----
grep -q "niff" <("$BIN" formats) && ok || bad "formats lists niff"
for f in "$NIFF"/*.niff "$NIFF"/*.nif; do
  not_detected "$f" "niff: this is a NetImmerse/Gamebryo .nif model, not a Nintendo 64 NIFF file" ||
    check_fixture "$f" "niff" 0.25
done
"$BIN" dump "$NIFF/camera.niff" >"$TMP/cam.json"
python3 - "$TMP/cam.json" <<'PY' && ok || bad "NIFF camera dump: two cameras on their own nodes, animated"
import json, sys
d = json.load(open(sys.argv[1]))
names = [n["name"] for n in d["nodes"]]
cams = d["cameras"]
assert len(cams) == 2 and all(c["name"] in names for c in cams), cams
chans = [c["node"] for c in d["animations"][0]["channels"]]
assert cams[0]["name"] in [names[i] if isinstance(i, int) else i for i in chans], chans
PY
expect_rc 2 "bad fps" "$BIN" info "$NIFF/full3.niff" --option fps=0

# ---- Homeworld: every fixture, Homeworld 2's .mad refused by name, one glTF animation per record ----
grep -q "homeworld_mad" <("$BIN" formats) && ok || bad "formats lists homeworld_mad"
for f in "$HW"/*.mad; do
  not_detected "$f" "homeworld_mad: this is a Homeworld 2 .mad" || check_fixture "$f" "homeworld_mad" 0.1
done
for f in "$HW"/*.mad; do
  name=$(basename "$f")
  out="$TMP/fixture_${name//./_}.glb"
  [ -f "$out" ] || continue
  want=$(grep -c "^expect-anim " "${f%.*}.txt")
  python3 - "$out" "$want" "${f%.*}.txt" <<'PY' && ok || bad "$name: one glTF animation per record, named as in the file"
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", data, 12)[0]
gltf = json.loads(data[20:20 + n])
names = [l.split(" name=", 1)[1].rstrip("\n") for l in open(sys.argv[3]) if l.startswith("expect-anim ")]
anims = gltf.get("animations", [])
assert len(anims) == int(sys.argv[2]), (len(anims), sys.argv[2])
assert [a.get("name", "") for a in anims] == names, ([a.get("name") for a in anims], names)
PY
done
expect_rc 0 "pose --anim 2" "$BIN" pose "$HW/timeline.mad" --time 0.5 --anim 2
json_ok "$TMP/out" "pose --anim 2"
expect_rc 2 "pose --anim past the records" "$BIN" pose "$HW/timeline.mad" --time 0.5 --anim 3
expect_rc 2 "bad sample_rate" "$BIN" info "$HW/timeline.mad" --option sample_rate=0
expect_rc 2 "bad space" "$BIN" info "$HW/timeline.mad" --option space=maya
expect_rc 0 "space=lightwave" "$BIN" info "$HW/timeline.mad" --option space=lightwave
expect_rc 0 "sample_rate=30" "$BIN" info "$HW/timeline.mad" --option sample_rate=30

# ---- archives (.SI, .pak): list, extract, convert, batch -------------------------
AR=$(dirname "$FIX")/archives
expect_rc 0 "list several.si" "$BIN" list "$AR/several.si"
if grep -q "^0 .* walk .*LegoAnimPresenter" "$TMP/out" && grep -q "^2 .* camera " "$TMP/out" && ! grep -q " sound " "$TMP/out"
then ok; else bad "list several.si: $(cat "$TMP/out")"; fi
expect_rc 0 "list several.pak" "$BIN" list "$AR/several.pak"
if grep -Eq "^0 +0x00002001 +upper_walk +ANIM .* yes .* Samus" "$TMP/out"; then ok; else bad "list several.pak: $(cat "$TMP/out")"; fi
expect_rc 0 "extract several.pak" "$BIN" extract "$AR/several.pak" "$TMP/xp"
[ -s "$TMP/xp/upper_walk.ANIM" ] && [ -s "$TMP/xp/upper_walk.CINF" ] && [ -s "$TMP/xp/loose_v2.ANIM" ] && ok || bad "extract pak files"
expect_rc 0 "extract several.si" "$BIN" extract "$AR/several.si" "$TMP/xs"
cmp -s "$TMP/xs/hierarchy.ani" "$FIX/hierarchy.ani" && ok || bad "extracted hierarchy.ani differs from the loose file"
# the archive's animation and the extracted loose file give the same scene (but for the archive's metadata)
strip_meta='import json,sys; d=json.load(open(sys.argv[1])); d.pop("metadata"); [a.pop("name") for a in d["animations"]]; print(json.dumps(d))'
for pair in "several.pak upper_walk xp/upper_walk.ANIM" "several.si camera xs/camera.ani"; do
  read -r arc item loose <<<"$pair"
  "$BIN" dump "$AR/$arc" --option animation="$item" >"$TMP/a.json" && "$BIN" dump "$TMP/$loose" >"$TMP/l.json"
  if [ "$(python3 -c "$strip_meta" "$TMP/a.json")" = "$(python3 -c "$strip_meta" "$TMP/l.json")" ]; then ok
  else bad "$arc[$item] differs from the extracted $loose"; fi
done
expect_rc 0 "convert pak by id" "$BIN" convert "$AR/several.pak" "$TMP/p.glb" --option animation=0x2003
grep -q "1 animation" "$TMP/out" && ok || bad "convert pak: $(cat "$TMP/out")"
expect_rc 2 "convert unknown animation" "$BIN" convert "$AR/several.si" "$TMP/q.glb" --option animation=nope
grep -q "^retroanim: .*several.si: .*lego_si: no animation named or numbered 'nope'" "$TMP/err" && ok || bad "unknown animation line: $(cat "$TMP/err")"
# Homeworld .big: list, extract byte for byte, convert by name and by id
expect_rc 0 "list ships.big" "$BIN" list "$AR/ships.big"
grep -q "homeworld_big, 2 animation" "$TMP/out" && grep -q "R2/Defender" "$TMP/out" && ok || bad "list big: $(cat "$TMP/out")"
expect_rc 0 "extract ships.big" "$BIN" extract "$AR/ships.big" "$TMP/xbig"
cmp -s "$TMP/xbig/R1_Probe.mad" "${HW_DIR:-$AR/../homeworld}/spin.mad" && cmp -s "$TMP/xbig/R2_Defender.mad" \
  "${HW_DIR:-$AR/../homeworld}/timeline.mad" && ok || bad "extract big: $(ls "$TMP/xbig")"
expect_rc 0 "convert big by name" "$BIN" convert "$AR/ships.big" "$TMP/b.glb" --option animation=R2/Defender
expect_rc 0 "convert big by id" "$BIN" convert "$AR/ships.big" "$TMP/b1.glb" --option animation=1
expect_rc 1 "convert a Homeworld 2 .big" "$BIN" convert "$AR/big_hw2.big" "$TMP/b2.glb"
grep -qi "homeworld 2" "$TMP/err" && ok || bad "hw2 big line: $(cat "$TMP/err")"
# the ship's .geo inside the .big: extracted beside its .mad, the loose pair loads to the same scene with its meshes
expect_rc 0 "extract big_geo.big" "$BIN" extract "$AR/big_geo.big" "$TMP/xgeo"
cmp -s "$TMP/xgeo/R1_GeoShip.geo" "${HW_DIR:-$AR/../homeworld}/geo_ship.geo" && ok || bad "extract big geo: $(ls "$TMP/xgeo")"
strip_geo='import json,sys; d=json.load(open(sys.argv[1])); d.pop("metadata"); [a.pop("name") for a in d["animations"]]; print(len(d.get("meshes", [])), json.dumps(d))'
"$BIN" dump "$AR/big_geo.big" >"$TMP/a.json" && "$BIN" dump "$TMP/xgeo/R1_GeoShip.mad" >"$TMP/l.json"
a=$(python3 -c "$strip_geo" "$TMP/a.json"); l=$(python3 -c "$strip_geo" "$TMP/l.json")
[ "$a" = "$l" ] && [ "${a%% *}" -gt 0 ] && ok || bad "big_geo.big differs from its extracted pair (meshes ${a%% *} / ${l%% *})"
mkdir -p "$TMP/arcs" && cp "$AR"/*.si "$AR"/*.pak "$TMP/arcs/" && rm -f "$TMP/arcs/"*_bad_*
printf '\000\003\000\005\000\000\000\000' >"$TMP/arcs/header_only.pak" # the Echoes demo disc has one: empty
expect_rc 0 "list a header-only pak" "$BIN" list "$TMP/arcs/header_only.pak"
grep -q "metroid_pak, 0 animation(s)" "$TMP/out" && ok || bad "header-only pak list: $(cat "$TMP/out")"
expect_rc 0 "batch archives -j2" "$BIN" batch "$TMP/arcs" "$TMP/arcs_out" --format glb2 -j 2 --quiet
n=$(find "$TMP/arcs_out" -name '*.glb' | wc -l)
[ "$n" -eq 11 ] && ok || bad "batch archives: $n outputs, wanted 11 (3 + 1 + 3 + 1 + 3): $(find "$TMP/arcs_out")"
[ ! -e "$TMP/arcs_out/header_only" ] && ok || bad "batch made a folder for an archive with no animation"
head -c 300 "$AR/several.pak" >"$TMP/arcs/broken.pak"
expect_rc 1 "batch with a broken archive" "$BIN" batch "$TMP/arcs" "$TMP/arcs_out2" --format glb2 --quiet
grep -q "^retroanim: .*broken.pak: metroid_pak: .*past the end" "$TMP/err" && ok || bad "broken archive line: $(cat "$TMP/err")"
expect_rc 1 "list a truncated SI" "$BIN" list <(head -c 100 "$AR/several.si")
grep -q "lego_si: .*(at byte" "$TMP/err" && ok || bad "truncated SI line: $(cat "$TMP/err")"

# ---- outputs: whole or not at all, never over an input -----------------------------
cp "$FIX/hierarchy.ani" "$TMP/in.ani"
expect_rc 3 "convert X X" "$BIN" convert "$TMP/in.ani" "$TMP/in.ani" --format glb
cmp -s "$TMP/in.ani" "$FIX/hierarchy.ani" && ok || bad "convert X X changed its input"
grep -q "^retroanim: .*in.ani: .*is the input file" "$TMP/err" && ok || bad "convert X X line: $(cat "$TMP/err")"
ln -sf "$TMP/in.ani" "$TMP/link.glb"
expect_rc 3 "convert to a link to the input" "$BIN" convert "$TMP/in.ani" "$TMP/link.glb"
cmp -s "$TMP/in.ani" "$FIX/hierarchy.ani" && ok || bad "convert through a link changed its input"
expect_rc 3 "convert to /dev/full" "$BIN" convert "$FIX/hierarchy.ani" /dev/full --format glb
grep -q "^retroanim: /dev/full: .*No space left" "$TMP/err" && ok || bad "/dev/full line: $(cat "$TMP/err")"
expect_rc 1 "convert a refused input" "$BIN" convert "$FIX/truncated.ani" "$TMP/none.glb"
[ ! -e "$TMP/none.glb" ] && ok || bad "a refused input left an output"
ls -a "$TMP" | grep -q "retroanim-tmp" && bad "temporary files left: $(ls -a "$TMP")" || ok
expect_rc 0 "convert .gltf" "$BIN" convert "$FIX/camera.ani" "$TMP/cam era.gltf"
grep -q '"uri": "cam%20era.bin"' "$TMP/cam era.gltf" && [ -s "$TMP/cam era.bin" ] && ok || bad ".gltf names its .bin"
grep -q "^wrote .*cam era.gltf (glTF 2.0 + .bin, retroanim's writer): 4 nodes, 1 animation(s), 1 camera(s), [0-9]* keys" \
  "$TMP/out" && ok || bad "convert summary: $(cat "$TMP/out")"
# retroanim's FBX writer: the same guarantees; it seeks back into its file, so a pipe is refused
expect_rc 0 "convert .fbx" "$BIN" convert "$FIX/camera.ani" "$TMP/cam.fbx"
grep -q "^wrote .*cam.fbx (binary FBX 7.4, retroanim's writer): 5 nodes, 1 animation(s), 1 camera(s), [0-9]* keys, [0-9]* bytes" \
  "$TMP/out" && ok || bad "convert .fbx summary: $(cat "$TMP/out")"
[ "$(head -c 18 "$TMP/cam.fbx")" = "Kaydara FBX Binary" ] && ok || bad "cam.fbx is not binary FBX"
expect_rc 2 "--fbx-euler-tolerance 0" "$BIN" convert "$FIX/deep.ani" "$TMP/d.fbx" --fbx-euler-tolerance 0
grep -q "fbx-euler-tolerance wants degrees" "$TMP/err" && ok || bad "--fbx-euler-tolerance line: $(cat "$TMP/err")"
expect_rc 0 "convert deep.ani .fbx" "$BIN" convert "$FIX/deep.ani" "$TMP/d.fbx"
k0=$(sed -n 's/.* \([0-9]*\) keys.*/\1/p' "$TMP/out")
expect_rc 0 "convert deep.ani .fbx --fbx-euler-tolerance 1" "$BIN" convert "$FIX/deep.ani" "$TMP/d.fbx" --fbx-euler-tolerance 1
k1=$(sed -n 's/.* \([0-9]*\) keys.*/\1/p' "$TMP/out")
[ -n "$k0" ] && [ -n "$k1" ] && [ "$k1" -lt $((k0 / 4)) ] && ok || bad "--fbx-euler-tolerance 1: $k1 keys, default $k0"
expect_rc 3 "convert .fbx to /dev/full" "$BIN" convert "$FIX/hierarchy.ani" /dev/full --format fbx
grep -q "^retroanim: /dev/full: .*No space left" "$TMP/err" && ok || bad "fbx /dev/full line: $(cat "$TMP/err")"
"$BIN" convert "$FIX/hierarchy.ani" /dev/stdout --format fbx 2>"$TMP/err" | cat >"$TMP/piped.fbx"
[ "${PIPESTATUS[0]}" -eq 3 ] && ok || bad "convert .fbx to a pipe did not exit 3"
grep -q "^retroanim: /dev/stdout: fbx: the output cannot seek: FBX is written with seeks; write to a file" "$TMP/err" && ok ||
  bad "fbx pipe line: $(cat "$TMP/err")"
[ ! -s "$TMP/piped.fbx" ] && ok || bad "convert .fbx to a pipe wrote bytes"
# Collada is refused: Assimp's exporter writes animated scenes nothing loads back
for w in retroanim assimp; do
  expect_rc 2 "convert .dae ($w)" "$BIN" convert "$FIX/camera.ani" "$TMP/cam.dae" --writer $w
  grep -q "Collada (.dae) is not written.*write .glb or .gltf.*or .fbx" "$TMP/err" && ok || bad ".dae line: $(cat "$TMP/err")"
  [ ! -e "$TMP/cam.dae" ] && ok || bad "a refused .dae was written"
done
expect_rc 2 "batch --format collada" "$BIN" batch "$FIX" "$TMP/dae_out" --format collada
# a full disk: a small tmpfs (root only; skipped elsewhere) holding an older file
if [ "$(id -u)" -eq 0 ] && mkdir -p "$TMP/full" && mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2>/dev/null; then
  echo "old" >"$TMP/full/deep.glb" && echo "old" >"$TMP/full/deep.fbx"
  head -c 60000 /dev/zero >"$TMP/full/filler" 2>/dev/null
  for ext in glb fbx; do
    expect_rc 3 "convert .$ext on a full disk" "$BIN" convert "$FIX/deep.ani" "$TMP/full/deep.$ext"
    [ "$(cat "$TMP/full/deep.$ext")" = "old" ] && ok || bad "a full disk destroyed the old .$ext"
    grep -q "^retroanim: .*full/deep.$ext: .*No space left" "$TMP/err" && ok || bad "full disk line: $(cat "$TMP/err")"
    ls -a "$TMP/full" | grep -q "retroanim-tmp" && bad "full disk left a temporary file" || ok
  done
  umount "$TMP/full"
else
  echo "test_cli: the full-disk case is skipped (needs root to mount a tmpfs)"
fi

# ---- input size: refused before it is read (max_file_size) --------------------------
t0=$(date +%s%N)
expect_rc 1 "info /dev/zero" "$BIN" info /dev/zero
grep -q "^retroanim: /dev/zero: .*more than max_file_size (268435456).*(max_file_size)$" "$TMP/err" && ok || bad "/dev/zero line: $(cat "$TMP/err")"
truncate -s 3G "$TMP/sparse.ani"
expect_rc 1 "info on a 3 GB sparse file" "$BIN" info "$TMP/sparse.ani"
grep -q "the file has 3221225472 bytes, more than max_file_size" "$TMP/err" && ok || bad "sparse file line: $(cat "$TMP/err")"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 5000 ] && ok || bad "/dev/zero and the sparse file took $ms ms"
rm -f "$TMP/sparse.ani"
expect_rc 1 "max_file_size=100" "$BIN" info "$FIX/hierarchy.ani" --option max_file_size=100
grep -q "max_file_size (100)" "$TMP/err" && ok || bad "max_file_size=100 line: $(cat "$TMP/err")"
expect_rc 1 "convert over max_file_size" "$BIN" convert "$FIX/hierarchy.ani" "$TMP/big.fbx" --option max_file_size=100
[ ! -e "$TMP/big.fbx" ] && ok || bad "a refused input left an .fbx"
expect_rc 1 "info on a folder" "$BIN" info "$TMP"
grep -q "is a directory" "$TMP/err" && ok || bad "folder line: $(cat "$TMP/err")"

# ---- Assimp's exporters: written whole or not at all too ----------------------------
for fmt in fbx fbxa assbin; do
  expect_rc 3 "convert --format $fmt to /dev/full" "$BIN" convert "$FIX/hierarchy.ani" /dev/full --format "$fmt" --writer assimp
done
expect_rc 0 "convert --writer assimp .gltf" "$BIN" convert "$FIX/camera.ani" "$TMP/as.gltf" --writer assimp --quiet
grep -q '"uri": "as.bin"' "$TMP/as.gltf" && [ -s "$TMP/as.bin" ] && ok || bad "Assimp's .gltf names its .bin: $(grep uri "$TMP/as.gltf")"

# ---- batch and extract never write over their inputs -------------------------------
mkdir -p "$TMP/self" && cp "$FIX/hierarchy.ani" "$TMP/self/walk.glb" && cp "$FIX/camera.ani" "$TMP/self/cam.ani"
expect_rc 1 "batch over its own folder" "$BIN" batch "$TMP/self" "$TMP/self" --format glb --quiet
cmp -s "$TMP/self/walk.glb" "$FIX/hierarchy.ani" && ok || bad "batch DIR DIR overwrote its input walk.glb"
grep -q "^retroanim: .*self/walk.glb: is one of the inputs; not written" "$TMP/err" && ok || bad "batch self line: $(cat "$TMP/err")"
[ -s "$TMP/self/cam.glb" ] && ok || bad "batch DIR DIR did not write cam.glb"
mkdir -p "$TMP/xx"
expect_rc 0 "extract" "$BIN" extract "$AR/several.si" "$TMP/xx" --quiet
cp "$TMP/xx/hierarchy.ani" "$TMP/xx_before"
echo changed >"$TMP/xx/hierarchy.ani"
expect_rc 3 "extract over existing files" "$BIN" extract "$AR/several.si" "$TMP/xx"
[ "$(cat "$TMP/xx/hierarchy.ani")" = "changed" ] && ok || bad "extract replaced an existing file without --force"
grep -q "hierarchy.ani exists; not replaced (--force replaces it)" "$TMP/err" && ok || bad "extract exists line: $(cat "$TMP/err")"
expect_rc 0 "extract --force" "$BIN" extract "$AR/several.si" "$TMP/xx" --force --quiet
cmp -s "$TMP/xx/hierarchy.ani" "$TMP/xx_before" && ok || bad "extract --force did not replace the file"
cp "$AR/several.si" "$TMP/xx/hierarchy.ani"
expect_rc 3 "extract over the archive itself" "$BIN" extract "$TMP/xx/hierarchy.ani" "$TMP/xx" --force
cmp -s "$TMP/xx/hierarchy.ani" "$AR/several.si" && ok || bad "extract wrote over its archive"
grep -q "hierarchy.ani is the archive itself; not written" "$TMP/err" && ok || bad "extract archive line: $(cat "$TMP/err")"

# ---- a killed batch leaves no incomplete file under a final name ---------------------
mkdir -p "$TMP/many"
for i in $(seq 1 120); do cp "$FIX/deep.ani" "$TMP/many/d$i.ani"; done
glb_whole() { # every .glb in $1 is complete: its header's length is its size
  python3 - "$1" <<'PY'
import os, struct, sys
bad = []
for n in os.listdir(sys.argv[1]):
    p = os.path.join(sys.argv[1], n)
    if n.endswith(".glb"):
        d = open(p, "rb").read()
        if len(d) < 12 or d[:4] != b"glTF" or struct.unpack_from("<I", d, 8)[0] != len(d):
            bad.append(n)
sys.exit(1 if bad else 0)
PY
}
for sig in INT KILL; do
  rm -rf "$TMP/many_out"
  "$BIN" batch "$TMP/many" "$TMP/many_out" --format glb -j 2 --quiet >/dev/null 2>&1 &
  pid=$!
  sleep 0.4
  kill -$sig $pid 2>/dev/null
  wait $pid 2>/dev/null
  n=$(ls "$TMP/many_out" 2>/dev/null | grep -c '\.glb$')
  glb_whole "$TMP/many_out" && ok || bad "batch killed by SIG$sig left an incomplete .glb"
  [ "$n" -lt 120 ] && ok || echo "test_cli: batch finished before SIG$sig ($n files); the kill case is not exercised"
  if [ $sig = INT ]; then
    ls -a "$TMP/many_out" | grep -q "retroanim-tmp" && bad "SIGINT left temporary files" || ok
  fi
done

# ---- trees at the limits through every exporter ----------------------------------
# a chain max_depth deep (1024, the largest max_depth) and a flat scene of 5,000 nodes (the most
# Assimp's exporters take): every writer finishes within 30 s; one level or node more is refused
python3 - "$FIX" "$TMP" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import make_fixtures as m
def key(x, y): return m.trans_key(0, 0, x, 0, 0) + m.trans_key(1000, 0, x, y, 0)
def chain(n):  # n nested nodes, each moved along x and animated in y
    return b"".join(m.u32(len(b"N%d" % i)) + b"N%d" % i + m.u16(2) + key(1, 0.5) + m.u16(0) * 3 +
                    m.u32(1 if i + 1 < n else 0) for i in range(n))
def flat(n):  # one node holding n animated children
    kids = b"".join(m.u32(len(b"C%d" % i)) + b"C%d" % i + m.u16(2) + key(i, 1) + m.u16(0) * 3 + m.u32(0)
                    for i in range(n))
    return m.u32(4) + b"ROOT" + m.u16(0) * 4 + m.u32(n) + kids
for name, body in (("deep1025", chain(1025)), ("deep1026", chain(1026)), ("wide4998", flat(4998)),
                   ("wide4999", flat(4999))):
    open("%s/%s.ani" % (sys.argv[2], name), "wb").write(m.header(10, 0, 0, 0, 0) + m.actor_list([]) +
                                                        m.duration(1000) + body)
PY
# a quadratic exporter takes minutes here; a linear one about a second (a Debug build under
# ASan/UBSan, as scripts/test.sh runs it with ASAN_OPTIONS set, is ten to twenty times slower)
limit_ms=30000
[ -n "${ASAN_OPTIONS:-}" ] && limit_ms=180000
for f in glb gltf fbx fbx/assimp fbxa assbin; do
  w=retroanim
  case $f in */assimp) w=assimp ;; esac
  for tree in deep1025 wide4998; do
    t0=$(date +%s%N)
    expect_rc 0 "$tree through $f" timeout $((limit_ms / 500)) "$BIN" convert "$TMP/$tree.ani" "$TMP/$tree.${f%/*}" \
      --format "${f%/*}" --writer $w --option max_depth=1024 --quiet
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$ms" -lt "$limit_ms" ] && ok || bad "$tree through $f took $ms ms"
  done
done
expect_rc 0 "dump --source of a 1,025-level chain" "$BIN" dump --source "$TMP/deep1025.ani" --option max_depth=1024
python3 -c 'import json, sys; sys.setrecursionlimit(20000); json.load(open(sys.argv[1]))' "$TMP/out" 2>/dev/null && ok ||
  bad "dump --source deep1025: not valid JSON (2,050 levels deep: Python needs a higher recursion limit)"
grep -q "deeper levels omitted" "$TMP/out" && bad "dump --source cut the 1,025-level chain" || ok
grep -q '"N1024"' "$TMP/out" && ok || bad "dump --source deep1025 lacks the deepest node"
expect_rc 1 "a chain deeper than max_depth=1024" "$BIN" info "$TMP/deep1026.ani" --option max_depth=1024
grep -q "deeper than max_depth" "$TMP/err" && ok || bad "deep1026 line: $(cat "$TMP/err")"
expect_rc 2 "max_depth above 1024" "$BIN" info "$TMP/deep1025.ani" --option max_depth=1025
expect_rc 1 "5,001 nodes through Assimp's FBX exporter" "$BIN" convert "$TMP/wide4999.ani" "$TMP/w.fbx" --writer assimp
grep -q "more than max_nodes (5000).*write .glb, .gltf or .fbx" "$TMP/err" && ok || bad "wide4999 line: $(cat "$TMP/err")"
expect_rc 0 "5,001 nodes through retroanim's glTF writer" "$BIN" convert "$TMP/wide4999.ani" "$TMP/w.glb" --quiet
expect_rc 0 "5,001 nodes through retroanim's FBX writer" "$BIN" convert "$TMP/wide4999.ani" "$TMP/w.fbx" --quiet

# ---- max_keys stops the bake once the kept keys pass it ------------------------------
for f in "$NIFF/keys.niff" "$HW/timeline.mad" "$FIX/deep.ani" "$WOG/rot_1rps.anim.binltl"; do
  expect_rc 1 "$(basename "$f") over max_keys=20" "$BIN" info "$f" --option max_keys=20
  grep -q "more than max_keys (20)" "$TMP/err" && ok || bad "$(basename "$f") max_keys line: $(cat "$TMP/err")"
done

echo "test_cli: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
