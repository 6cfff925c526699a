#!/usr/bin/env bash
# `cmake --install` of the current build into PREFIX (emptied first), then the pieces that must
# be there: CLI, libraries, headers (public ones only), CMake package, Lua C module, scripts/,
# docs/lua/.
#   install_tree.sh CMAKE BUILD_DIR PREFIX
set -uo pipefail
cmake="$1" build="$2" prefix="$3"
rm -rf "$prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || {
  cat "$prefix.log"
  exit 1
}
fail=0
for f in bin/rigel lib/librigel_core.a lib/librigel_io.a lib/librigel_lua.a lib/lua/5.4/rigel.so \
  lib/cmake/rigel/rigelConfig.cmake lib/cmake/rigel/rigelConfigVersion.cmake \
  lib/cmake/rigel/rigelTargets.cmake include/rigel/core/clip.h include/rigel/core/clip_check.h \
  include/rigel/core/ik/solve.h include/rigel/core/retarget/retarget.h \
  include/rigel/io/file_format.h include/rigel/importers/load_scene.h \
  include/rigel/exporters/save_scene.h include/rigel/bindings/lua/lua_module.h \
  include/rigel/bindings/lua/rigel_module.h share/rigel/scripts/limbs.lua \
  share/doc/rigel/lua/rigel.lua; do
  [ -f "$prefix/$f" ] || { echo "missing: $f"; fail=1; }
done
# Private headers stay in the source tree.
for f in include/rigel/importers/scene_codec.h include/rigel/importers/assimp_reader.h \
  include/rigel/exporters/export_check.h include/rigel/bindings/lua/runtime.h; do
  [ -e "$prefix/$f" ] && { echo "private header installed: $f"; fail=1; }
done
# The installed headers compile together against the installed tree alone (no source path).
tu="$prefix.headers.cc"
(cd "$prefix/include/rigel" && find . -name '*.h' | sort | sed -E 's|^\./(.*)$|#include "\1"|') >"$tu"
c++ -std=c++20 -fsyntax-only "$tu" -I"$prefix/include/rigel" -I/usr/include/eigen3 \
  -I/usr/include/lua5.4 || { echo "installed headers do not compile"; fail=1; }
# The module carries no Lua VM of its own: the Lua API is left to the host (undefined here).
# (nm's list is read whole first: with pipefail, grep -q ending the pipe early made nm die of
# SIGPIPE and the check fail whenever the symbol came before the end of a long list.)
undefined=$(nm -D --undefined-only "$prefix/lib/lua/5.4/rigel.so")
if ! grep -q ' lua_pushnumber$' <<<"$undefined"; then
  echo "rigel.so does not import the Lua API"
  fail=1
fi
defined=$(nm -D --defined-only "$prefix/lib/lua/5.4/rigel.so")
if grep -q ' T lua_newstate$' <<<"$defined"; then
  echo "rigel.so contains a Lua VM"
  fail=1
fi
echo "installed $(find "$prefix" -type f | wc -l) files into $prefix"
exit $fail
