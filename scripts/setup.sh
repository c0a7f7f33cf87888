#!/usr/bin/env bash
# Installs what retroanim needs to build and test on Debian 12 (as root, or
# through sudo).  Does nothing when everything is already there.
set -euo pipefail
PKGS=(cmake ninja-build gcc g++ clang make pkg-config python3
      libassimp-dev assimp-utils libdraco-dev libminizip-dev zlib1g-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=(sudo)
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
