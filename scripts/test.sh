#!/usr/bin/env bash
# README command 2 (and CI): set up, then build and run the whole test suite
# twice — gcc with -Werror at -O3 (the Release flags the demo uses, where gcc
# warns most; with valgrind on the CLI), and clang with -Werror under
# AddressSanitizer and UndefinedBehaviorSanitizer — then the concurrency tests
# under ThreadSanitizer, and every libFuzzer harness for a short smoke run
# (scripts/fuzz.sh runs them as long as you like).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --downstream
jobs=$(nproc 2>/dev/null || echo 2)

echo "== gcc, -Werror, Release"
CC=gcc CXX=g++ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRETROANIM_WERROR=ON \
  -DRETROANIM_DOWNSTREAM_REQUIRED=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
echo "== hostile input, allocation failure, valgrind: what ran"
grep -h -E "^(hostile|slowest|largest heap peak|fixtures: [0-9]+ loaded;|valgrind|[0-9]+ threads x)" \
  build/Testing/Temporary/LastTest.log || true
echo "== downstream checks: what ran (full lines in build/Testing/Temporary/LastTest.log)"
grep -h -E "^downstream [a-z]+: (SKIPPED|PASSED|FAILED)|^(convert|validator|pyassimp|assimp|kaitai): |^(three|blender) [a-z]+: [0-9]+ files" \
  build/Testing/Temporary/LastTest.log || true

echo "== clang, -Werror, ASan + UBSan"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRETROANIM_WERROR=ON \
  -DRETROANIM_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

echo "== clang, ThreadSanitizer: concurrent imports, batch -j, baking on several threads"
CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRETROANIM_WERROR=ON \
  -DRETROANIM_TSAN=ON >/dev/null
cmake --build build-tsan -j "$jobs" --target test_threads retroanim_cli test_parallel bench_gen
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan --output-on-failure -R "concurrent_imports|batch_parallel|parallel_bake"

echo "== libFuzzer smoke run (15 s per harness; scripts/fuzz.sh SECONDS for longer)"
FUZZ_SEED=1 bash scripts/fuzz.sh 15
