#!/usr/bin/env bash
# Runs every benchmark and writes bench/RESULTS.md (not part of the test
# suite; see bench/README.md).
#
#   bash bench/run.sh [--quick]
#
# Builds Release in build-bench/, writes the inputs with bench_gen (our own
# writers) into build-bench/data/, converts each to .glb with
# `retroanim convert`, then measures with bench_run (medians of RUNS runs,
# default 5) and times `retroanim batch -j1` against `-j2`.  --quick uses
# the 1x sizes only and 2 runs (a smoke run; its RESULTS.md says so).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build-bench
D=$B/data
RUNS=${RUNS:-5}
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1 && RUNS=2

cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" --target retroanim_cli bench_gen bench_run retroanim_preload >/dev/null
mkdir -p "$D"
OUT=$B/results.txt
: >"$OUT"
log() { echo "$*" | tee -a "$OUT"; }

# format, extension, nodes and keys at 16x (the issue's sizes)
FORMATS=(
  "lego ani 500 2000"
  "metroid anim 100 20000"
  "wog movie.binltl 200 1000"
  "niff niff 200 2000"
  "homeworld mad 500 2000"
)
# 1x = nodes/4 x keys/4, 4x = nodes/2 x keys/2, 16x = the full size
SCALES=(1 4 16)
[ $QUICK = 1 ] && SCALES=(1)

for spec in "${FORMATS[@]}"; do
  read -r fmt ext nodes keys <<<"$spec"
  for sc in "${SCALES[@]}"; do
    div=$((sc == 1 ? 4 : sc == 4 ? 2 : 1))
    n=$((nodes / div)) k=$((keys / div))
    f=$D/${fmt}_x$sc.$ext
    [ -s "$f" ] || "$B/bench_gen" "$fmt" "$n" "$k" "$f"
    # Assimp's glTF 2 exporter is quadratic in the output's size (14 minutes
    # for the Homeworld 16x .glb): past GLB_TIMEOUT seconds the file is
    # measured without the comparison
    [ -s "$f.glb" ] || timeout "${GLB_TIMEOUT:-1800}" "$B/retroanim" convert "$f" "$f.glb" --quiet || rm -f "$f.glb"
    g=$f.glb && [ -s "$g" ] || g=-
    echo "measuring $fmt x$sc ($n x $k) ..." >&2
    log "format=$fmt scale=$sc nodes=$n keys_per_track=$k $("$B/bench_run" --runs "$RUNS" "$f" "$g")"
  done
done

# the stock `assimp` tool (Debian's assimp-utils) on the largest file of each
# format through the preload module, against the same tool on its .glb
if command -v assimp >/dev/null && [ -f "$B/libretroanim_preload.so" ]; then
  for spec in "${FORMATS[@]}"; do
    read -r fmt ext _ _ <<<"$spec"
    sc=${SCALES[-1]}
    f=$D/${fmt}_x$sc.$ext
    [ -s "$f.glb" ] || continue
    echo "measuring the stock assimp tool on $fmt x$sc ..." >&2
    log "stock format=$fmt scale=$sc $(python3 bench/stock.py "$(command -v assimp)" "$B/libretroanim_preload.so" "$f" "$f.glb" "$RUNS")"
  done
else
  echo "no assimp tool (apt-get install assimp-utils) or preload module: the stock tool is not measured" >&2
fi

# the writers: `convert` to .glb (retroanim's glTF writer) against `convert`
# to .assbin (Assimp's binary dump, the cheapest exporter) on the largest
# file of each format; the median of 3 runs of each, alternating; and one
# `convert` to .fbx (retroanim's FBX writer)
wsec() { local t0 t1; t0=$(date +%s.%N); "$B/retroanim" convert "$1" "$2" --quiet >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
for spec in "${FORMATS[@]}"; do
  read -r fmt ext _ _ <<<"$spec"
  sc=${SCALES[-1]}
  f=$D/${fmt}_x$sc.$ext
  g=() a=()
  for r in 1 2 3; do
    g+=("$(wsec "$f" "$B/writer_out.glb")")
    a+=("$(wsec "$f" "$B/writer_out.assbin")")
  done
  gs=$(printf '%s\n' "${g[@]}" | sort -n | sed -n 2p)
  as=$(printf '%s\n' "${a[@]}" | sort -n | sed -n 2p)
  # retroanim's FBX writer, once (its Euler keys make the largest files take minutes)
  fs=$(wsec "$f" "$B/writer_out.fbx")
  log "writer format=$fmt scale=$sc glb_bytes=$(stat -c %s "$B/writer_out.glb") glb_s=$gs assbin_s=$as" \
    "fbx_bytes=$(stat -c %s "$B/writer_out.fbx") fbx_s=$fs"
done
rm -f "$B/writer_out.glb" "$B/writer_out.assbin" "$B/writer_out.fbx"

# batch: 1000 small files (200 of each format), -j1 against -j2
S=$D/small
if [ ! -d "$S" ] || [ "$(ls "$S" | wc -l)" -lt 1100 ]; then
  rm -rf "$S" && mkdir -p "$S"
  for spec in "${FORMATS[@]}"; do
    read -r fmt ext _ _ <<<"$spec"
    for i in $(seq 1 200); do
      "$B/bench_gen" "$fmt" $((5 + i % 7)) $((20 + i % 30)) "$S/${fmt}_$i.$ext"
    done
  done
fi
one() { # "wall cores" of one run of: batch -j N; cores = (user + sys) / wall,
  # the CPU the run kept busy (the host's noise moves the wall time; this
  # shows what the program itself parallelises)
  rm -rf "$B/batch_out"
  local line
  line=$( { TIMEFORMAT='%R %U %S'; time "$B/retroanim" batch "$S" "$B/batch_out" --format glb2 -j "$1" --quiet >/dev/null 2>&1; } 2>&1 )
  echo "$line" | awk '{printf "%.3f %.2f\n", $1, ($2 + $3) / $1}'
}
# 5 rounds of -j1 then -j2, alternating so that both see the same host
# state; the median (by wall seconds) of each
r1=() r2=()
for r in 1 2 3 4 5; do
  r1+=("$(one 1)")
  r2+=("$(one 2)")
done
read -r j1 c1 <<<"$(printf '%s\n' "${r1[@]}" | sort -n | sed -n 3p)"
read -r j2 c2 <<<"$(printf '%s\n' "${r2[@]}" | sort -n | sed -n 3p)"
files=$(ls "$B/batch_out" | wc -l)
log "batch files=$files j1_s=$j1 j2_s=$j2 speedup=$(echo "$j1 / $j2" | bc -l | cut -c1-5) j1_cores=$c1 j2_cores=$c2"

python3 bench/report.py "$OUT" "$RUNS" "$QUICK" >bench/RESULTS.md
echo "wrote bench/RESULTS.md" >&2
