#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) and runs them.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     default: 60 s each, every harness
# HARNESS: lego metroid wog niff homeworld archives assimp.  Each runs on one core, with
# its dictionary (fuzz/NAME.dict), seeded with the fixtures of its format (for
# assimp: every fixture, behind the byte that picks its file name extension);
# the corpus grows in build-fuzz/corpus/NAME.  Inputs slower than 5 s under
# the sanitizers and coverage (-timeout=5; the release build's limit, 1 s, is
# test_hostile's) or allocating more than 64 MB at once (-malloc_limit_mb=64)
# are findings, like crashes and sanitizer reports.  A finding is written to
# build-fuzz/findings/NAME/ and the script exits 1; copy it to
# test_models/<format>/regressions/ with a test.  One summary line per harness
# (executions, coverage, corpus size) is printed and appended to build-fuzz/fuzz.log.
# FUZZ_SEED=N makes a run repeatable (CI's smoke run uses 1; default random).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
ALL=(lego metroid wog niff homeworld archives assimp)
HARNESSES=("${@:-${ALL[@]}}")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=("${ALL[@]}")
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then   # FUZZ_NO_BUILD=1: parallel runs share one build
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRETROANIM_FUZZ=ON \
    -DRETROANIM_BUILD_TESTS=OFF -DRETROANIM_WERROR=ON >/dev/null
  cmake --build build-fuzz >/dev/null
fi

seed_dirs() {
  case "$1" in
    lego) echo test_models/lego_island ;;
    metroid) echo test_models/metroid_prime ;;
    wog) echo test_models/world_of_goo ;;
    niff) echo test_models/niff ;;
    homeworld) echo test_models/homeworld ;;
    archives) echo test_models/archives ;;
  esac
}

# the assimp harness's first byte: index into kHints of fuzz_assimp.cpp
assimp_seeds() {
  local out=$1 f ext i
  local hints=(ani anim cinf anim.binltl movie.binltl anim.binbig niff nif mad)
  for f in test_models/*/*.*; do
    case "$f" in *.txt|*.py|*.md) continue ;; esac
    ext=$(basename "$f" | tr 'A-Z' 'a-z')
    for i in "${!hints[@]}"; do
      if [[ "$ext" == *".${hints[$i]}" ]]; then
        { printf "\\x$(printf %02x "$i")"; cat "$f"; } >"$out/$(basename "$f")"
      fi
    done
  done
}

status=0
for h in "${HARNESSES[@]}"; do
  corpus=build-fuzz/corpus/$h
  findings=build-fuzz/findings/$h
  seeds=build-fuzz/seeds/$h
  mkdir -p "$corpus" "$findings" "$seeds"
  if [ "$h" = assimp ]; then
    assimp_seeds "$seeds"
  else
    for f in $(seed_dirs "$h")/*; do
      case "$f" in *.txt|*.py|*.md) ;; *) [ -f "$f" ] && cp "$f" "$seeds/" ;; esac
    done
    [ -d "$(seed_dirs "$h")/regressions" ] && cp "$(seed_dirs "$h")"/regressions/* "$seeds/" 2>/dev/null || true
  fi
  log=build-fuzz/fuzz_$h.log
  set +e
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    build-fuzz/fuzz/fuzz_$h "$corpus" "$seeds" -dict=fuzz/$h.dict -max_total_time="$SECONDS_EACH" \
    -seed="${FUZZ_SEED:-0}" -timeout=5 -malloc_limit_mb=64 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$" || echo "?")
  cov=$(grep -E "^#[0-9]+" "$log" | tail -1 | grep -o "cov: [0-9]*" || echo "cov: ?")
  ft=$(grep -E "^#[0-9]+" "$log" | tail -1 | grep -o "ft: [0-9]*" || echo "ft: ?")
  ncorp=$(ls "$corpus" | wc -l)
  line="$(date -u +%FT%TZ) fuzz $h: ${SECONDS_EACH} s, $execs executions, $cov, $ft, corpus $ncorp files, exit $rc"
  if [ $rc -ne 0 ]; then
    line="$line: FINDING in $findings ($(ls "$findings" | head -3 | tr '\n' ' ')); see $log"
    status=1
  fi
  echo "$line" | tee -a build-fuzz/fuzz.log
done
exit $status
