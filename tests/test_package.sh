#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and builds a consumer project
# with find_package(retroanim), then runs it on a fixture (C, which also
# writes it as FBX, and C++).
# usage: test_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
cmake -S "$SRC/tests/consumer" -B "$TMP/build" -G Ninja -DCMAKE_PREFIX_PATH="$TMP/prefix" >/dev/null
cmake --build "$TMP/build" >/dev/null
out_c=$("$TMP/build/use_c" "$SRC/test_models/lego_island/hierarchy.ani" "$TMP/walk.fbx")
out_cpp=$("$TMP/build/use_cpp" "$SRC/test_models/lego_island/hierarchy.ani")
pass=0 fail=0
[ "$out_c" = "lego_ani: 5 nodes, 1 animation(s)" ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL C consumer: $out_c"; }
[ "$(head -c 18 "$TMP/walk.fbx" 2>/dev/null)" = "Kaydara FBX Binary" ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL C consumer's FBX"; }
[ "$out_cpp" = "1 animation(s), 4 channel(s)" ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL C++ consumer: $out_cpp"; }
PKG_CONFIG_PATH="$TMP/prefix/lib/pkgconfig:$TMP/prefix/lib/x86_64-linux-gnu/pkgconfig" pkg-config --libs retroanim | grep -q -- "-lretroanim" \
  && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL pkg-config"; }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
