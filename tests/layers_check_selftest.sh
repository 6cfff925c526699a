#!/usr/bin/env bash
# layers_check.sh must fail on each kind of include against the layering (so the layers.includes
# test can fail): a tree with one bad include per rule, outside git.
#   layers_check_selftest.sh SOURCE_DIR WORK_DIR
set -uo pipefail
check="$(cd "$1" && pwd)/tests/layers_check.sh"
work="$2"
rm -rf "$work" && mkdir -p "$work"/{core,io,importers,exporters,bindings/lua,bindings/python,cli,tests/ik}
cd "$work" || exit 1
work=$(pwd -P)
printf '#include "core/clip.h"\n#include "importers/load_scene.h"\n' >core/a.cc
printf '#include <exporters/save_scene.h>\n' >io/b.h
printf '#include "exporters/gltf_writer.h"\n' >importers/c.cc
printf '  #  include "importers/load_scene.h"\n' >exporters/d.cc
printf '#include "cli/command.h"\n#include "core/pose.h"\n' >bindings/lua/e.cc
printf '#include "bindings/lua/rigel_module.h"\n#include "importers/load_scene.h"\n' >cli/f.cc
printf '#include "bindings/lua/sandbox.h"\n' >cli/g.cc
printf '#include "bench/ik/x.h"\n' >core/h.cc
printf '#include "bench/ik/bench_skeletons.h"\n' >tests/ik/i.cc
printf '#include "cli/command_line.h"\n#include "tests/test_util.h"\n' >bindings/python/j.cc
out=$(bash "$check" "$work")
rc=$?
echo "$out"
fail=0
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then
    echo "MISSING: $1"
    fail=1
  fi
}
expect 'core/a.cc:2: #include "importers/load_scene.h" (core/ may not include importers/)'
expect 'io/b.h:1: #include "exporters/save_scene.h" (io/ may not include exporters/)'
expect 'importers/c.cc:1: #include "exporters/gltf_writer.h" (importers/ may not include exporters/)'
expect 'exporters/d.cc:1: #include "importers/load_scene.h" (exporters/ may not include importers/)'
expect 'bindings/lua/e.cc:1: #include "cli/command.h" (bindings/ may not include cli/)'
expect 'cli/g.cc:1: #include "bindings/lua/sandbox.h" (cli/ may include only bindings/lua/rigel_module.h)'
expect 'core/h.cc:1: #include "bench/ik/x.h" (core/ may not include bench/)'
expect 'tests/ik/i.cc:1: #include "bench/ik/bench_skeletons.h" (tests/ may not include bench/)'
expect 'bindings/python/j.cc:2: #include "tests/test_util.h" (bindings/python/ may not include tests/)'
expect '9 include(s) against the layering'
[ "$rc" -ne 0 ] || { echo "layers_check.sh exited 0 on a bad tree"; fail=1; }
rm -rf "$work"
exit $fail
