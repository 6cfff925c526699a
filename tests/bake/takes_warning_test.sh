#!/usr/bin/env bash
# Nothing silent: a multi-take input baked by `rigel bake` (which bakes one take per input) says
# which takes it left out, on stderr and in the report's clip row.
#   takes_warning_test.sh RIGEL SHARED_DATA WORK
set -uo pipefail
rigel=$1 data=$2 work=$3
fbx="$data/fbx/ozz_pab/locomotions.fbx"
if [ ! -f "$fbx" ]; then
  echo "skipped: $fbx not found (../shared/data absent)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/in" "$work/out"
cp "$fbx" "$work/in/"
printf 'return function(scene, clip, ctx) return clip end\n' >"$work/identity.lua"
"$rigel" bake --rig "$work/identity.lua" --out "$work/out" --report "$work/report.json" \
  "$work/in/locomotions.fbx" 2>"$work/stderr"
rc=$?
fail=0
[ "$rc" -eq 0 ] || { echo "FAILED: exit $rc"; cat "$work/stderr"; fail=1; }
grep -q "3 takes; only the first" "$work/stderr" || { echo "FAILED: no take warning on stderr"; cat "$work/stderr"; fail=1; }
python3 - "$work/report.json" <<'PY' || fail=1
import json, sys
report = json.load(open(sys.argv[1]))
clips = report["clips"]
assert len(clips) == 1, clips
w = clips[0].get("warnings", [])
assert any("3 takes; only the first" in x for x in w), w
print("report row warns:", w[0])
PY
exit $fail
