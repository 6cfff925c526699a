#!/usr/bin/env bash
# Inputs are never written: `rigel bake`, `rigel retarget` and `rigel convert` refuse, before
# writing anything, an output folder that is or contains an input's folder (also through a
# symlink), and an output path that is an input, a hard link to one or a symlink to one. Each
# refusal: exit 2, one stderr line naming both paths, no file created, the inputs byte-identical.
#   inputs_untouched_test.sh RIGEL SOURCE_DIR WORK_DIR
set -uo pipefail
rigel=$1; src=$2; work=$3
rig=$src/tests/bake/fixtures/lift_rig.lua
walk=$src/samples/basics/walk.bvh
fail=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
# A fresh library per case: lib/a.bvh, lib/b.bvh, lib/sub/c.bvh; then the case's own set-up, if
# any (fresh ln -s ...: the links it needs); then the files there are and the inputs' checksums.
fresh() {
  rm -rf "$work"; mkdir -p "$work/lib/sub" "$work/other"
  cp "$walk" "$work/lib/a.bvh"; cp "$walk" "$work/lib/b.bvh"; cp "$walk" "$work/lib/sub/c.bvh"
  "$@"
  (cd "$work" && find . -type f -o -type l | sort > "$work/../files.before"
   find lib -type f -exec sha256sum {} + | sort > "$work/../sums.before")
}
# expect_refused "case" "regex naming both paths" command...
expect_refused() {
  local what=$1 regex=$2; shift 2
  "$@" > "$work/../out.txt" 2> "$work/../err.txt"
  local rc=$?
  check "$what: exit 2" test "$rc" = 2
  check "$what: one stderr line" test "$(wc -l < "$work/../err.txt")" = 1
  check "$what: message names both paths" grep -Eq "$regex" "$work/../err.txt"
  check "$what: no file created" bash -c "cd '$work' && find . -type f -o -type l | sort | diff -q - '$work/../files.before' > /dev/null"
  check "$what: inputs byte-identical" bash -c "cd '$work' && find lib -type f -exec sha256sum {} + | sort | diff -q - '$work/../sums.before' > /dev/null"
  [ "$rc" = 2 ] || cat "$work/../err.txt"
}

# bake
fresh
expect_refused "bake --out = the input folder" \
  "the output folder '$work/lib' contains the input '$work/lib/a.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/lib" "$work/lib"
fresh
expect_refused "bake --out = the folder of one input file" \
  "the output folder '$work/lib/sub' contains the input '$work/lib/sub/c.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/lib/sub" "$work/lib/sub/c.bvh"
fresh
expect_refused "bake --out = a parent of the input folder" \
  "the output folder '$work' contains the input '$work/lib/sub/c.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work" "$work/lib/sub/c.bvh"
fresh ln -s lib "$work/lib_link"
expect_refused "bake --out = a symlink to the input folder" \
  "the output folder '$work/lib_link' contains the input '$work/lib/a.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/lib_link" "$work/lib/a.bvh"
fresh ln "$work/lib/a.bvh" "$work/other/a.bvh"
expect_refused "bake: an output is a hard link to an input" \
  "the output '$work/other/a.bvh' is a hard link to the input '$work/lib/a.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/other" "$work/lib/a.bvh"
fresh ln -s ../lib/b.bvh "$work/other/b.bvh"
expect_refused "bake: an output is a symlink to an input" \
  "the output '$work/other/b.bvh' is a symlink to the input '$work/lib/b.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/other" "$work/lib/b.bvh"
# --report, --frames-report, --preview and the rig script go through the same check (issue 25:
# the report replaced the input or the rig script, exit 0).
fresh
expect_refused "bake --report = an input" \
  "the output '$work/lib/a.bvh' is the same file as the input '$work/lib/a.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/other" --report "$work/lib/a.bvh" "$work/lib"
fresh cp "$rig" "$work/lib/rig.lua"
expect_refused "bake --report = the rig script" \
  "the output '$work/lib/rig.lua' is the same file as the input '$work/lib/rig.lua'" \
  "$rigel" bake --no-progress --rig "$work/lib/rig.lua" --out "$work/other" \
  --report "$work/lib/rig.lua" "$work/lib/a.bvh"
fresh ln "$work/lib/b.bvh" "$work/other/report.json"
expect_refused "bake --report = a hard link to an input" \
  "the output '$work/other/report.json' is a hard link to the input '$work/lib/b.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/other" --report "$work/other/report.json" \
  "$work/lib/b.bvh"
fresh
expect_refused "bake --frames-report = the input folder" \
  "the --frames-report folder '$work/lib' contains the input '$work/lib/a.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/other" --frames-report "$work/lib" "$work/lib/a.bvh"
fresh
expect_refused "bake --preview = the input folder" \
  "the --preview folder '$work/lib' contains the input '$work/lib/a.bvh'" \
  "$rigel" bake --no-progress --rig "$rig" --out "$work/other" --preview "$work/lib" "$work/lib/a.bvh"
fresh
expect_refused "retarget --report = the target" \
  "the output '$work/lib/sub/c.bvh' is the same file as the input '$work/lib/sub/c.bvh'" \
  "$rigel" retarget --no-progress --target "$work/lib/sub/c.bvh" --out "$work/other" \
  --report "$work/lib/sub/c.bvh" "$walk"
fresh
expect_refused "preview --out = an input" \
  "the output '$work/lib/a.bvh' is the same file as the input '$work/lib/a.bvh'" \
  "$rigel" preview "$work/lib/a.bvh" --out "$work/lib/a.bvh"
fresh
"$rigel" bake --no-progress --rig "$rig" --out "$work/other" "$work/lib" 2> /dev/null
check "control: bake into a separate folder works" test -f "$work/other/sub/c.bvh"

# retarget (the target skeleton is an input too)
fresh
expect_refused "retarget --out = the clips' folder" \
  "the output folder '$work/lib' contains the input '$work/lib/" \
  "$rigel" retarget --no-progress --target "$walk" --out "$work/lib" "$work/lib/a.bvh"
fresh
expect_refused "retarget --out = the target's folder" \
  "the output folder '$work/lib/sub' contains the input '$work/lib/sub/c.bvh'" \
  "$rigel" retarget --no-progress --target "$work/lib/sub/c.bvh" --out "$work/lib/sub" "$walk"
fresh ln "$work/lib/a.bvh" "$work/other/a.bvh"
expect_refused "retarget: an output is a hard link to an input" \
  "the output '$work/other/a.bvh' is a hard link to the input '$work/lib/a.bvh'" \
  "$rigel" retarget --no-progress --target "$walk" --out "$work/other" "$work/lib/a.bvh"

# convert
fresh
expect_refused "convert IN IN" "the output '$work/lib/a.bvh' is the same file as the input '$work/lib/a.bvh'" \
  "$rigel" convert "$work/lib/a.bvh" "$work/lib/a.bvh"
fresh ln "$work/lib/a.bvh" "$work/other/hard.bvh"
expect_refused "convert to a hard link of the input" \
  "the output '$work/other/hard.bvh' is a hard link to the input '$work/lib/a.bvh'" \
  "$rigel" convert "$work/lib/a.bvh" "$work/other/hard.bvh"
fresh ln -s ../lib/a.bvh "$work/other/soft.bvh"
expect_refused "convert to a symlink to the input" \
  "the output '$work/other/soft.bvh' is a symlink to the input '$work/lib/a.bvh'" \
  "$rigel" convert "$work/lib/a.bvh" "$work/other/soft.bvh"
fresh
"$rigel" convert "$work/lib/a.bvh" "$work/lib/a_copy.bvh"
check "control: convert next to the input works" test -f "$work/lib/a_copy.bvh"

exit $fail
