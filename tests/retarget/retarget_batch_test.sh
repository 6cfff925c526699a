#!/usr/bin/env bash
# `rigel retarget` batches like `rigel bake`: folders, -j, shards, --resume, failures isolated.
#   retarget_batch_test.sh RIGEL SOURCE_DIR WORK_DIR
set -uo pipefail
rigel=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work/clips"
fail=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi; }
for i in 1 2 3 4 5; do
  awk -v k="$i" 'BEGIN{m=0} /^MOTION/{m=1} { if (m && $0 ~ /^[-0-9]/) { $5 = $5 + 3*k } print }' \
    "$src/samples/basics/walk.bvh" > "$work/clips/walk$i.bvh"
done
printf 'HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n' > "$work/clips/cut.bvh"
target="$src/samples/basics/walk.bvh"
"$rigel" retarget --target "$target" --pin-feet -j 1 --out "$work/j1" --report "$work/j1.json" "$work/clips" 2> "$work/j1.err"
check "one bad clip: exit 1" test $? = 1
check "its reason is reported" grep -q "cut.bvh:4: expected" "$work/j1.err"
check "the good clips are written" test -f "$work/j1/walk5.bvh"
check "report has per-clip metrics" python3 -c "
import json; r=json.load(open('$work/j1.json')); s=r['summary']
assert s['ok']==5 and s['failed']==1, s
c=[c for c in r['clips'] if c['status']=='ok'][0]
assert c['metrics']['bone_direction_deg']['mean'] < 2 and r['target'].endswith('walk.bvh'), c"
"$rigel" retarget --target "$target" --pin-feet -j 2 --out "$work/j2" "$work/clips" 2> /dev/null
check "-j2 gives the same bytes as -j1" diff -r -x '.*' "$work/j1" "$work/j2"
for k in 0 1; do
  "$rigel" retarget --target "$target" --pin-feet --shard $k/2 --out "$work/shards" "$work/clips" 2> /dev/null
done
check "2 shards = one run" diff -r -x '.*' "$work/j1" "$work/shards"
"$rigel" retarget --target "$target" --pin-feet --resume --out "$work/j1" --report "$work/resume.json" "$work/clips" 2> /dev/null
check "--resume skips what is up to date" python3 -c "
import json; s=json.load(open('$work/resume.json'))['summary']; assert s['skipped']==5 and s['failed']==1, s"
"$rigel" retarget --target "$target" --resume --out "$work/j1" --report "$work/resume2.json" "$work/clips" 2> /dev/null
check "changed options redo every clip" python3 -c "
import json; s=json.load(open('$work/resume2.json'))['summary']; assert s['skipped']==0 and s['ok']==5, s"
exit $fail
