#!/usr/bin/env bash
# Every glTF rigel writes passes the Khronos glTF validator (npm gltf-validator) with no error and
# no warning (issue 12 item 4): convert (.glb and .gltf) of the samples and of every FBX in
# ../shared/data (meshes, skins, takes), of the blend-shape files, a multi-take bake and a
# retarget.
#   validator_test.sh RIGEL SOURCE_DIR SHARED_DATA WORK
set -uo pipefail
rigel=$1 src=$2 data=$3 work=$4
modules="$src/cli/preview/node_modules"
if [ ! -f "$modules/gltf-validator/package.json" ] || ! command -v node >/dev/null; then
  echo "skipped: no node or no $modules/gltf-validator (npm ci in cli/preview)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/in"
fail=0
n=0
# The blend-shape files (issue 28): morph targets, sparse accessors, weights animation.
for f in "$src/samples/cmu_walk/walk.bvh" "$src/samples/basics/walk.bvh" "$data"/fbx/*/*.fbx \
  "$src/samples/elbow_corrective/arm.gltf" "$data/wild/bevyengine_bevy/MorphStressTest.gltf" \
  "$data"/wild/Sensor-Guided-Living_vr/{Horse,RobotExpressive}.glb \
  "$data/ufbx/maya_blend_inbetween_7500_binary.fbx"; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  for ext in glb gltf; do
    "$rigel" convert "$f" "$work/$n.$(basename "${f%.*}").$ext" 2>/dev/null ||
      { echo "FAILED: convert $f to .$ext"; fail=1; }
  done
done
printf 'return function(scene, clip, ctx) return clip end\n' >"$work/identity.lua"
cat >"$work/make.lua" <<LUA
local rigel = require("rigel")
local walk = rigel.load("$src/samples/cmu_walk/walk.bvh"):clip()
rigel.save("$work/in/takes.glb", { walk:slice(1, 20), walk:slice(21, 40) })
LUA
"$rigel" run --allow-io "$work/make.lua" && cp "$src/samples/cmu_walk/walk.bvh" "$work/in/" ||
  { echo "FAILED: inputs"; fail=1; }
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/bake" --format glb "$work/in" \
  2>/dev/null || { echo "FAILED: bake"; fail=1; }
"$rigel" retarget --no-progress --target "$src/samples/cmu_walk/walk.bvh" --out "$work/rt" \
  --format gltf --pin-feet "$src/samples/basics/walk.bvh" 2>/dev/null ||
  { echo "FAILED: retarget"; fail=1; }
files=$(find "$work" -name '*.glb' -o -name '*.gltf' | grep -v "/in/" | sort)
echo "validating $(echo "$files" | wc -l) files"
# shellcheck disable=SC2086
node "$src/tests/gltf/validate.cjs" "$modules" $files || fail=1
exit $fail
