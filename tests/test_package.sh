#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and builds consumers of it:
# with find_package(retroanim) (static C, shared C, C++ over the Assimp shim)
# and with pkg-config (shared, and --static), after moving the prefix (the
# .pc file is relocatable).  Checks that the shared library has its SONAME and
# exports only the public API (ra_ symbols, at most 80), and that no internal
# header is installed.
# usage: test_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
# has PATTERN COMMAND...: COMMAND's output matches (no pipe into grep -q: with
# pipefail, grep quitting early can fail the writer with SIGPIPE)
has() { local pat=$1; shift; "$@" >"$TMP/cmd.out" 2>&1; grep -q -- "$pat" "$TMP/cmd.out"; }
ANI="$SRC/test_models/lego_island/hierarchy.ani"
WANT="lego_ani: 5 nodes, 1 animation(s)"

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
cmake -S "$SRC/tests/consumer" -B "$TMP/build" -G Ninja -DCMAKE_PREFIX_PATH="$TMP/prefix" >/dev/null
cmake --build "$TMP/build" >/dev/null
out_c=$("$TMP/build/use_c" "$ANI" "$TMP/walk.fbx")
out_cs=$("$TMP/build/use_c_shared" "$ANI")
out_cpp=$("$TMP/build/use_cpp" "$ANI")
[ "$out_c" = "$WANT" ] && ok || bad "find_package C consumer (static): $out_c"
[ "$(head -c 18 "$TMP/walk.fbx" 2>/dev/null)" = "Kaydara FBX Binary" ] && ok || bad "C consumer's FBX"
[ "$out_cs" = "$WANT" ] && ok || bad "find_package C consumer (shared): $out_cs"
has "libretroanim.so.0 => $TMP/prefix" ldd "$TMP/build/use_c_shared" && ok || bad "use_c_shared does not use the installed libretroanim.so.0"
[ "$out_cpp" = "1 animation(s), 4 channel(s)" ] && ok || bad "C++ consumer: $out_cpp"

# the shared library: SONAME and exports
LIB=$(find "$TMP/prefix" -name 'libretroanim.so.0.*' | head -n 1)
[ -n "$LIB" ] && ok || bad "libretroanim.so.0.* not installed"
has 'SONAME.*\[libretroanim.so.0\]' readelf -d "$LIB" && ok || bad "SONAME is not libretroanim.so.0"
exports=$(nm -D --defined-only "$LIB" | awk '{print $3}')
n=$(echo "$exports" | wc -l)
others=$(echo "$exports" | grep -v '^ra_' || true)
[ -z "$others" ] && ok || bad "exports that are not ra_: $others"
[ "$n" -le 80 ] && ok || bad "$n exported symbols (at most 80)"
echo "shared library: $n exported symbols"
undocumented=$(for f in $exports; do grep -q "\b$f(" "$SRC/docs/api.md" || echo "$f"; done)
[ -z "$undocumented" ] && ok || bad "exported but not in docs/api.md: $undocumented"
# only public headers are installed
hdrs=$(cd "$TMP/prefix/include/retroanim" && ls | sort | tr '\n' ' ')
[ "$hdrs" = "assimp.hpp ra_archive.h ra_fbx.h ra_gltf.h retroanim.h " ] && ok || bad "installed headers: $hdrs"

# the man page and the bash completion
MAN="$TMP/prefix/share/man/man1/retroanim.1"
[ -f "$MAN" ] && has '^\.TH RETROANIM 1' head -1 "$MAN" && ok || bad "man page missing or not troff"
for c in formats info dump pose convert batch list extract help; do
  grep -q "^\.SS $c" "$MAN" || bad "man page lacks $c"
done
grep -q '^\.B max_key_angle=' "$MAN" && ok || bad "man page lacks the options"
COMP="$TMP/prefix/share/bash-completion/completions/retroanim"
bash -c "source '$COMP' && complete -p retroanim" >/dev/null 2>&1 && ok || bad "bash completion does not load"
words=$(bash -c "source '$COMP'; COMP_WORDS=(retroanim co); COMP_CWORD=1; _retroanim; echo \${COMPREPLY[*]}")
[ "$words" = "convert" ] && ok || bad "completion of 'co': $words"
words=$(bash -c "source '$COMP'; COMP_WORDS=(retroanim info x --option max_key); COMP_CWORD=4; _retroanim; echo \${COMPREPLY[*]}")
[ "$words" = "max_key_angle= max_keys=" ] && ok || bad "completion of --option max_key: $words"

# pkg-config, after moving the prefix elsewhere
mv "$TMP/prefix" "$TMP/moved"
PC=$(dirname "$(find "$TMP/moved" -name retroanim.pc | head -n 1)")
export PKG_CONFIG_PATH="$PC"
cc -std=c11 -o "$TMP/pc_shared" "$SRC/tests/consumer/use_c.c" $(pkg-config --cflags --libs retroanim) \
  -Wl,-rpath,"$(pkg-config --variable=libdir retroanim)" && ok || bad "pkg-config shared build"
out=$("$TMP/pc_shared" "$ANI" || true)
[ "$out" = "$WANT" ] && ok || bad "pkg-config shared consumer: $out"
has "libretroanim.so.0 => $TMP/moved" ldd "$TMP/pc_shared" && ok || bad "pkg-config consumer does not use the moved libretroanim.so.0"
cc -std=c11 -static -o "$TMP/pc_static" "$SRC/tests/consumer/use_c.c" $(pkg-config --static --cflags --libs retroanim) \
  && ok || bad "pkg-config --static build"
out=$("$TMP/pc_static" "$ANI" || true)
[ "$out" = "$WANT" ] && ok || bad "pkg-config --static consumer: $out"
! has "program interpreter" readelf -l "$TMP/pc_static" && ok || bad "the --static consumer is dynamic"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
