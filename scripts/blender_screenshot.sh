#!/usr/bin/env bash
# Regenerates docs/blender_import.png, README's screenshot of the Blender
# add-on's import dialog, with Blender under Xvfb (apt: blender xvfb).
# usage: scripts/blender_screenshot.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/samples"
cp test_models/archives/several.si test_models/lego_island/camera.ani test_models/metroid_prime/upper.ANIM \
   test_models/metroid_prime/upper.CINF test_models/niff/camera.niff test_models/homeworld/spin.mad \
   test_models/world_of_goo/rot_1rps.anim.binltl "$TMP/samples/"
BLENDER_USER_CONFIG="$TMP/config" BLENDER_USER_SCRIPTS="$TMP/scripts" \
  xvfb-run -a -s "-screen 0 1280x800x24" blender --factory-startup --window-geometry 0 0 1280 800 \
  --python scripts/blender_screenshot.py -- "$BUILD/retroanim_blender.zip" "$TMP/samples" "$TMP/import.png" >/dev/null
cp "$TMP/import.png" docs/blender_import.png
echo "wrote docs/blender_import.png"
