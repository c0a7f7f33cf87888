#!/usr/bin/env bash
# Valgrind memcheck of the CLI over every fixture: `retroanim convert` to .glb
# and .fbx (the importer and retroanim's writers) and `retroanim pose`, under
# memcheck with full leak checking.  Refused fixtures must be refused (exit 1)
# just as cleanly.  Any memcheck error (exit 99) fails.  valgrind.supp holds
# the one suppression: padding that Assimp 5.2.5's glTF exporter never initialises.
#   valgrind_cli.sh RETROANIM FIXTURE_ROOT WORK_DIR
set -u
BIN=$1 ROOT=$2 WORK=$3
command -v valgrind >/dev/null || { echo "valgrind_cli: SKIPPED: valgrind is not installed"; exit 77; }
mkdir -p "$WORK"
VG=(valgrind --quiet --error-exitcode=99 --suppressions="$(dirname "$0")/valgrind.supp" --leak-check=full
    --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect)
runs=0 errors=0
for f in "$ROOT"/*/*.*; do
  case "$f" in *.txt|*.py|*.md) continue ;; esac
  opts=()
  case "$f" in *.anb) opts=(--option format=lego_ani_body) ;; esac
  out="$WORK/$(basename "$f")"
  for cmd in "convert $f $out.glb --quiet" "convert $f $out.fbx --quiet" "pose $f --time 0.5"; do
    # shellcheck disable=SC2086
    "${VG[@]}" --log-file="$WORK/vg.log" "$BIN" $cmd "${opts[@]}" >/dev/null 2>&1
    rc=$?
    runs=$((runs + 1))
    if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then
      errors=$((errors + 1))
      echo "FAIL memcheck: retroanim $cmd (exit $rc)"
      cat "$WORK/vg.log"
    fi
  done
done
echo "valgrind: $runs CLI runs (convert to .glb and .fbx, and pose, on every fixture), $errors with memcheck errors"
[ $errors -eq 0 ]
