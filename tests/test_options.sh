#!/usr/bin/env bash
# Options and command-line conventions: every misuse of an option is refused
# with exit 2 and one line naming the key, in every command, through
# --option, --option=, the environment variable RETROANIM_OPTIONS and (for
# convert through Assimp) the importer property; valid options are accepted
# everywhere; a path holding ';' and ',' reaches the importer intact; help,
# --version, --, - and -o behave as README says.
# usage: test_options.sh RETROANIM_BINARY FIXTURES_DIR OPTIONS_MD (docs/options.md)
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FIX=$2
README=$3
. "$(dirname "$0")/cli_common.sh"
run() { "$@" >"$TMP/out" 2>"$TMP/err"; echo $? >"$TMP/rc"; }
# want_rc key description command...: exit code, and (for 2) one stderr line naming the key
expect() {
  local want=$1 key=$2 what=$3
  shift 3
  run "$@"
  local rc
  rc=$(cat "$TMP/rc")
  [ "$rc" -eq "$want" ] && ok || bad "$what: exit $rc, wanted $want; stderr: $(head -c 300 "$TMP/err")"
  if [ "$want" -eq 2 ] && [ -n "$key" ]; then
    grep -q "^retroanim: .*$key" "$TMP/err" && ok || bad "$what: no line naming $key: $(head -c 300 "$TMP/err")"
    [ "$(grep -c '^retroanim: ' "$TMP/err")" -eq 1 ] && ok || bad "$what: more than one error line: $(cat "$TMP/err")"
  fi
}

LEGO=$FIX/lego_island/hierarchy.ani
HW=$FIX/homeworld/spin.mad
WOG=$FIX/world_of_goo/rot_1rps.anim.binltl
NIFF=$FIX/niff/keys.niff
MPA=$FIX/metroid_prime/upper.ANIM
SI=$FIX/archives/several.si
PAK=$FIX/archives/several.pak

# ---- misuses: key=value pairs every command must refuse ---------------------------------
MISUSE=(
  "max_key_angel=2|max_key_angel"       # a misspelt key
  "memory_limit=64Q|memory_limit"       # not a size
  "max_depth=5 |max_depth"              # trailing blank
  "max_keys=nan|max_keys"
  "max_keys=inf|max_keys"
  "max_keys=1.5|max_keys"               # not whole
  "max_nodes=-3|max_nodes"
  "coords=garbage|coords"
  "max_key_angle=0|max_key_angle"
  "max_key_angle=180|max_key_angle"
  "max_samples=abc|max_samples"
  "ticks=hours|ticks"
  "format=nope|format"
  "max_file_size=|max_file_size"
)
for file in "$LEGO" "$HW" "$WOG" "$NIFF" "$MPA"; do
  name=$(basename "$file")
  for m in "${MISUSE[@]}"; do
    kv=${m%|*} key=${m##*|}
    expect 2 "$key" "$name info $kv" "$BIN" info "$file" --option "$kv"
    expect 2 "$key" "$name dump $kv" "$BIN" dump "$file" --option="$kv"
    expect 2 "$key" "$name pose $kv" "$BIN" pose "$file" --time 0 --option "$kv"
    expect 2 "$key" "$name convert glb $kv" "$BIN" convert "$file" "$TMP/o.glb" --option "$kv"
    expect 2 "$key" "$name convert assbin $kv" "$BIN" convert "$file" "$TMP/o.assbin" --option "$kv"
    RETROANIM_OPTIONS="$kv" expect 2 "$key" "$name info (env) $kv" "$BIN" info "$file"
    RETROANIM_OPTIONS="$kv" expect 2 "$key" "$name dump (env) $kv" "$BIN" dump "$file"
    RETROANIM_OPTIONS="$kv" expect 2 "$key" "$name convert assbin (env) $kv" "$BIN" convert "$file" "$TMP/o.assbin"
  done
  [ -e "$TMP/o.glb" ] || [ -e "$TMP/o.assbin" ] && bad "$name: a refused option left an output" || ok
done
# a key of another format is unknown here, and the line lists what this format accepts
expect 2 sample_rate "lego sample_rate" "$BIN" info "$LEGO" --option sample_rate=30
grep -q "lego_ani accepts .*camera_tolerance" "$TMP/err" && ok || bad "unknown key line lists the keys: $(cat "$TMP/err")"
expect 2 max_key_angle "did you mean" "$BIN" info "$LEGO" --option max_key_angel=2
grep -q "did you mean max_key_angle" "$TMP/err" && ok || bad "no suggestion: $(cat "$TMP/err")"
# format keys: bad values
expect 2 sample_rate "homeworld sample_rate=abc" "$BIN" info "$HW" --option sample_rate=abc
expect 2 space "homeworld space" "$BIN" info "$HW" --option space=world
expect 2 flip_y "wog flip_y" "$BIN" info "$WOG" --option flip_y=maybe
expect 2 layout "wog layout" "$BIN" info "$WOG" --option layout=v2-mp1
expect 2 fps "niff fps" "$BIN" info "$NIFF" --option fps=0
expect 2 key_tolerance "niff key_tolerance" "$BIN" info "$NIFF" --option key_tolerance=1
expect 2 root_motion "metroid root_motion" "$BIN" info "$MPA" --option root_motion=drop
expect 2 camera_tolerance "lego camera_tolerance" "$BIN" info "$LEGO" --option camera_tolerance=-1
# archives: list, extract and a convert of an item take the archive's and its items' keys
expect 2 max_key_angel "list misspelt" "$BIN" list "$SI" --option max_key_angel=2
expect 2 coords "extract bad coords" "$BIN" extract "$PAK" "$TMP/x" --option coords=up
[ -e "$TMP/x" ] && bad "extract with a refused option made its folder" || ok
expect 2 animation "convert unknown animation" "$BIN" convert "$SI" "$TMP/o.assbin" --option animation=nope
expect 0 "" "si_all in an SI" "$BIN" info "$SI" --option si_all=1
expect 0 "" "root_motion in a pak" "$BIN" info "$PAK" --option root_motion=strip
expect 2 si_all "si_all in a pak" "$BIN" info "$PAK" --option si_all=1
# batch: a key no format declares, or a value no format accepts
mkdir -p "$TMP/in" && cp "$LEGO" "$HW" "$TMP/in/"
expect 2 max_key_angel "batch misspelt" "$BIN" batch "$TMP/in" "$TMP/bo" --format glb --option max_key_angel=2
expect 2 sample_rate "batch bad value" "$BIN" batch "$TMP/in" "$TMP/bo" --format glb --option sample_rate=0
# ... and a key of one format applies to that format's files only
expect 0 "" "batch sample_rate" "$BIN" batch "$TMP/in" "$TMP/bo" --format glb --option sample_rate=30 --quiet
[ "$(ls "$TMP/bo" | wc -l)" -eq 2 ] && ok || bad "batch with a Homeworld key: $(ls "$TMP/bo")"

# ---- valid options accepted everywhere ---------------------------------------------------
VALID=(coords=native max_key_angle=90 max_depth=64 memory_limit=512M max_file_size=1G max_keys=1000000
       max_nodes=100 max_samples=1e6)
for kv in "${VALID[@]}"; do
  for file in "$LEGO" "$HW" "$WOG" "$NIFF" "$MPA"; do
    expect 0 "" "$(basename "$file") info $kv" "$BIN" info "$file" --option "$kv"
  done
  expect 0 "" "convert assbin $kv" "$BIN" convert "$LEGO" "$TMP/v.assbin" --option "$kv" --quiet
  RETROANIM_OPTIONS="$kv" expect 0 "" "pose (env) $kv" "$BIN" pose "$LEGO" --time 0.5
done
expect 0 "" "flip_y=true" "$BIN" info "$WOG" --option flip_y=true
expect 0 "" "space=lightwave" "$BIN" info "$HW" --option space=lightwave
expect 0 "" "fps=24" "$BIN" dump "$NIFF" --option fps=24
# --option beats the environment
RETROANIM_OPTIONS="coords=garbage" expect 0 "" "--option overrides the environment" "$BIN" info "$LEGO" --option coords=native

# ---- a path with ';' and ',' reaches the importer --------------------------------------
D="$TMP/odd;dir,x=1"
mkdir -p "$D" && cp "$MPA" "$D/walk.ANIM" && cp "${MPA%.ANIM}.CINF" "$D/walk.CINF" && cp "${MPA%.ANIM}.CINF" "$D/sk;el,1.CINF"
bones() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$1"; }
"$BIN" dump "$MPA" >"$TMP/ref.json" 2>/dev/null
want=$(bones "$TMP/ref.json")
for w in "" "--writer assimp"; do
  expect 0 "" "convert from a folder named odd;dir,x=1 $w" "$BIN" convert "$D/walk.ANIM" "$TMP/odd.glb" $w --quiet
  "$BIN" dump "$TMP/odd.glb" >/dev/null 2>&1 # not ours: only that it converted
  expect 0 "" "convert assbin from odd;dir" "$BIN" convert "$D/walk.ANIM" "$TMP/odd.assbin" --quiet
done
expect 0 "" "dump from odd;dir" "$BIN" dump "$D/walk.ANIM" -o "$TMP/odd.json"
[ "$(bones "$TMP/odd.json")" = "$want" ] && ok || bad "the skeleton beside walk.ANIM in odd;dir was not found"
grep -q '"metroid.skeleton_source": "sibling"' "$TMP/odd.json" && ok || bad "skeleton_source is not sibling: $(grep skeleton_source "$TMP/odd.json")"
expect 0 "" "cinf=PATH with ; and ," "$BIN" dump "$MPA" --option "cinf=$D/sk;el,1.CINF" -o "$TMP/odd2.json"
[ "$(bones "$TMP/odd2.json")" = "$want" ] && ok || bad "cinf=PATH with ; lost the skeleton"
# through Assimp's importer (convert to assbin, the option in the property)
"$BIN" convert "$MPA" "$TMP/ref.assbin" >"$TMP/ref.txt" 2>&1
refnodes=$(grep -o "[0-9]* nodes" "$TMP/ref.txt")
expect 0 "" "cinf=PATH with ; through Assimp" "$BIN" convert "$MPA" "$TMP/odd3.assbin" --option "cinf=$D/sk;el,1.CINF"
grep -q "$refnodes" "$TMP/out" && ok || bad "cinf with ; through Assimp: $(cat "$TMP/out"), want $refnodes"
# and through the environment, escaped
esc=$(printf '%s' "$D/sk;el,1.CINF" | sed 's/[;,\\]/\\&/g')
RETROANIM_OPTIONS="cinf=$esc" expect 0 "" "cinf escaped in RETROANIM_OPTIONS" "$BIN" convert "$MPA" "$TMP/odd4.assbin"
grep -q "$refnodes" "$TMP/out" && ok || bad "escaped cinf in the environment: $(cat "$TMP/out"), want $refnodes"
RETROANIM_OPTIONS='cinf=a\' expect 2 "RETROANIM_OPTIONS" "a trailing backslash" "$BIN" info "$MPA"

# ---- conventions -----------------------------------------------------------------------
expect 0 "" "--version" "$BIN" --version
grep -Eq "^retroanim [0-9]+\.[0-9]+\.[0-9]+ " "$TMP/out" && ok || bad "--version: $(cat "$TMP/out")"
expect 0 "" "help" "$BIN" help
for c in formats info dump pose convert batch list extract help; do
  grep -q "^  $c " "$TMP/out" || bad "help lacks $c"
done
for c in formats info dump pose convert batch list extract; do
  expect 0 "" "help $c" "$BIN" help "$c"
  grep -q "^usage: retroanim $c" "$TMP/out" && ok || bad "help $c: $(head -1 "$TMP/out")"
  expect 0 "" "$c --help" "$BIN" "$c" --help
  grep -q "^usage: retroanim $c" "$TMP/out" && ok || bad "$c --help: $(head -1 "$TMP/out")"
done
expect 2 "" "help of no command" "$BIN" help frobnicate
expect 2 "--writer" "a flag of another command" "$BIN" info "$LEGO" --writer assimp
expect 0 "" "--option=K=V" "$BIN" info "$LEGO" --option=coords=native
expect 0 "" "--time=T" "$BIN" pose "$LEGO" --time=0.25
cp "$LEGO" "$TMP/-dash.ani"
(cd "$TMP" && expect 0 "" "-- before a file that starts with -" "$BIN" info -- -dash.ani)
expect 0 "" "dump -o -" "$BIN" dump "$LEGO" -o -
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" && ok || bad "dump -o - is not JSON on stdout"
expect 0 "" "dump -o FILE" "$BIN" dump "$LEGO" -o "$TMP/d.json"
cmp -s "$TMP/d.json" <("$BIN" dump "$LEGO") && ok || bad "dump -o FILE differs from stdout"
expect 0 "" "pose -o FILE" "$BIN" pose "$LEGO" --time 0 --time 1 -o "$TMP/p.json"
[ "$(wc -l <"$TMP/p.json")" -eq 2 ] && ok || bad "pose -o FILE: $(wc -l <"$TMP/p.json") lines"
expect 3 "" "dump -o over its input" "$BIN" dump "$TMP/-dash.ani" -o "$TMP/-dash.ani"
cmp -s "$TMP/-dash.ani" "$LEGO" && ok || bad "dump -o over the input changed it"
expect 3 "" "dump -o into a missing folder" "$BIN" dump "$LEGO" -o "$TMP/nope/d.json"
expect 0 "" "info - (standard input)" sh -c "\"$BIN\" info - <\"$LEGO\""
grep -q "lego_ani" "$TMP/out" && ok || bad "info - : $(cat "$TMP/out")"
expect 0 "" "convert - OUT" sh -c "\"$BIN\" convert - \"$TMP/stdin.glb\" --quiet <\"$LEGO\""
"$BIN" dump - <"$LEGO" >"$TMP/stdin.json" && cmp -s "$TMP/stdin.json" <("$BIN" dump "$LEGO") && ok ||
  bad "dump - differs from dump FILE"
expect 1 "" "standard input over max_file_size" sh -c "\"$BIN\" info - --option max_file_size=100 <\"$LEGO\""
grep -q "^retroanim: -: the input has more than max_file_size (100) bytes" "$TMP/err" && ok ||
  bad "standard input over max_file_size: $(cat "$TMP/err")"
# error lines: one shape, the format's message for empty files and directories
: >"$TMP/empty.ani"
for c in "info" "dump" "convert:$TMP/e.glb" "convert:$TMP/e.assbin"; do
  cmd=${c%%:*} out=${c#*:}
  [ "$out" = "$c" ] && out=""
  expect 1 "" "$cmd empty file" "$BIN" $cmd "$TMP/empty.ani" $out
  grep -q "^retroanim: .*empty.ani: lego_ani: .*(at byte 0)$" "$TMP/err" && ok || bad "$cmd empty: $(cat "$TMP/err")"
done
expect 1 "" "info a directory" "$BIN" info "$TMP"
grep -q "^retroanim: $TMP: is a directory$" "$TMP/err" && ok || bad "directory line: $(cat "$TMP/err")"
expect 1 "" "info a missing file" "$BIN" info "$TMP/missing.ani"
grep -q "^retroanim: $TMP/missing.ani: cannot open: No such file or directory$" "$TMP/err" && ok || bad "missing line: $(cat "$TMP/err")"

# ---- docs/options.md's table is the declared options ---------------------------------
"$BIN" help options >"$TMP/help_options.txt"
python3 - "$README" "$TMP/help_options.txt" <<'PY' && ok || bad "docs/options.md's table differs from retroanim help options"
import re, sys
readme = open(sys.argv[1]).read()
table = readme[readme.index("| key |"):].split("\n\n", 1)[0]
rows = {}
for line in table.splitlines():
    m = re.match(r"\| `([a-z_]+)` \| ([^|]*) \|", line)
    if m:
        rows.setdefault(m.group(1), []).append(m.group(2))
declared = {}
for line in open(sys.argv[2]):
    m = re.match(r"  ([a-z_]+)=(\S+)", line)
    if m:
        declared.setdefault(m.group(1), set()).add(m.group(2))
bad = False
for k in sorted(set(rows) ^ set(declared)):
    print("only in", "README" if k in rows else "help options", ":", k); bad = True
for k, specs in declared.items():
    for spec in specs:
        if "|" in spec:  # an enum: every value in README's values column
            for v in spec.split("|"):
                if not any("`%s`" % v in r for r in rows.get(k, [])):
                    print("README lacks value", v, "of", k); bad = True
sys.exit(1 if bad else 0)
PY

echo "test_options: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
