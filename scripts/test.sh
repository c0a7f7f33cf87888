#!/usr/bin/env bash
# README command 2 (and CI): set up, then build and run the whole test suite
# twice — gcc with -Werror at -O3 (the Release flags the demo uses, where gcc
# warns most), and clang with -Werror under AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --downstream
jobs=$(nproc 2>/dev/null || echo 2)

echo "== gcc, -Werror, Release"
CC=gcc CXX=g++ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRETROANIM_WERROR=ON \
  -DRETROANIM_DOWNSTREAM_REQUIRED=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
echo "== downstream checks: what ran (full lines in build/Testing/Temporary/LastTest.log)"
grep -h -E "^downstream [a-z]+: (SKIPPED|PASSED|FAILED)|^(convert|validator|pyassimp|assimp|kaitai): |^(three|blender) [a-z]+: [0-9]+ files" \
  build/Testing/Temporary/LastTest.log || true

echo "== clang, -Werror, ASan + UBSan"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRETROANIM_WERROR=ON \
  -DRETROANIM_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
