#!/usr/bin/env bash
# README command 1: set up, build, and convert a bundled LEGO Island sample to
# glTF and FBX, printing its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target retroanim_cli >/dev/null
mkdir -p out
./build/retroanim info test_models/lego_island/hierarchy.ani
./build/retroanim convert test_models/lego_island/hierarchy.ani out/hierarchy.glb
./build/retroanim convert test_models/lego_island/hierarchy.ani out/hierarchy.fbx
