#!/usr/bin/env bash
# samples/embed built against the installed rigel (PREFIX, from install_tree.sh) in its own build
# folder, run on samples/cmu_walk/walk.bvh and checked with embed_check (reader + FK).
#   embed_test.sh CMAKE CXX SOURCE_DIR PREFIX WORK EMBED_CHECK
set -uo pipefail
cmake="$1" cxx="$2" src="$3" prefix="$4" work="$5" checker="$6"
rm -rf "$work" && mkdir -p "$work"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
"$cmake" -S "$src/samples/embed" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log" 2>&1 || {
  cat "$work/configure.log"
  exit 1
}
# The package found is the installed one.
grep -q "^rigel_DIR:PATH=$prefix/lib/cmake/rigel$" "$work/build/CMakeCache.txt" || {
  grep rigel_DIR "$work/build/CMakeCache.txt"
  echo "rigel was not found in $prefix"
  exit 1
}
"$cmake" --build "$work/build" >"$work/build.log" 2>&1 || {
  cat "$work/build.log"
  exit 1
}
"$work/build/embed" "$src/samples/cmu_walk/walk.bvh" "$work/walk_reach.bvh" || exit 1
"$checker" "$work/walk_reach.bvh" "$src/samples/cmu_walk/walk.bvh" RightHand RightArm 0 1.5 1
