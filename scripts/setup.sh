#!/usr/bin/env bash
# Installs what retroanim needs to build and test on Debian 12 (as root, or
# through sudo).  Does nothing when everything is already there.
#   setup.sh               what the build and the core tests need
#   setup.sh --downstream  also the consumers the downstream checks play exports in:
#                          Blender (+ python3-numpy), pyassimp, Node.js and the pinned npm
#                          packages of tests/downstream (gltf-validator, three,
#                          kaitai-struct-compiler, kaitai-struct, js-yaml)
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(cmake ninja-build gcc g++ clang clang-format make pkg-config python3 python3-pytest python3-venv python3-pip valgrind
      libassimp-dev assimp-utils libdraco-dev libminizip-dev zlib1g-dev liblzo2-dev)
DOWNSTREAM=0
[ "${1:-}" = "--downstream" ] && DOWNSTREAM=1
if [ $DOWNSTREAM = 1 ]; then
  PKGS+=(blender python3-numpy python3-pyassimp)
  command -v npm >/dev/null || PKGS+=(nodejs npm)   # any Node.js >= 18 will do
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
npm_ci() {
  [ $DOWNSTREAM = 1 ] || return 0
  local p
  for p in gltf-validator three kaitai-struct-compiler kaitai-struct js-yaml; do
    if [ ! -d "tests/downstream/node_modules/$p" ]; then
      echo "setup: npm ci in tests/downstream (versions pinned in package-lock.json)" >&2
      (cd tests/downstream && npm ci --no-audit --no-fund --loglevel=error)
      return 0
    fi
  done
}
if [ ${#missing[@]} -eq 0 ]; then npm_ci; exit 0; fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=(sudo)
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
npm_ci
