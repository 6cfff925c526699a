#!/usr/bin/env bash
# End-to-end checks of `rigel bake`: parallel output identical to serial, shards reproduce a
# single run, failures isolated and reported, kill -9 then --resume, timeouts and memory caps.
#   bake_cli_test.sh RIGEL SOURCE_DIR WORK_DIR
set -uo pipefail
rigel=$1; src=$2; work=$3
fix=$src/tests/bake/fixtures
rm -rf "$work"; mkdir -p "$work/lib/sub"
fail=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
# A small library: copies of the sample walk with different hip heights, one malformed file and
# one the rig refuses.
for i in 1 2 3 4 5 6 7; do
  awk -v k="$i" 'BEGIN{m=0} /^MOTION/{m=1} { if (m && $0 ~ /^[-0-9]/) { $2 = $2 + k/10 } print }' \
    "$src/samples/basics/walk.bvh" > "$work/lib/clip$i.bvh"
done
mv "$work/lib/clip7.bvh" "$work/lib/sub/clip7.bvh"
cp "$work/lib/clip1.bvh" "$work/lib/bad_script.bvh"
printf 'HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Zrotation\n}\nMOTION\nFrames: 1\nFrame Time: 0\n1\n' > "$work/lib/broken.bvh"

# 1. Serial and parallel runs: failures isolated, exit 1, identical outputs.
"$rigel" bake --rig "$fix/lift_rig.lua" --out "$work/j1" -j 1 --report "$work/j1.json" "$work/lib" 2> "$work/j1.err"
rc=$?
check "exit code 1 when a clip fails" test "$rc" = 1
check "broken file reported with its line" grep -q "broken.bvh:9: expected a frame time > 0" "$work/j1.err"
check "script error reported with script:line" grep -q "lift_rig.lua:6: this clip is refused on purpose" "$work/j1.err"
check "the other clips were baked" test -f "$work/j1/clip3.bvh" -a -f "$work/j1/sub/clip7.bvh"
check "nothing written for failed clips" test ! -e "$work/j1/broken.bvh" -a ! -e "$work/j1/bad_script.bvh"
check "report: 7 ok, 2 failed, solver stats" python3 -c "
import json,sys; r=json.load(open('$work/j1.json')); s=r['summary']
assert s['ok']==7 and s['failed']==2 and s['clips']==9, s
c=[c for c in r['clips'] if c['input'].endswith('clip1.bvh')][0]
assert c['frames']==48 and c['solver']['residual_max']==0.5 and c['solver']['frames_with_limit_hits']==1, c
"
"$rigel" bake --rig "$fix/lift_rig.lua" --out "$work/j2" -j 2 "$work/lib" 2> /dev/null
check "-j2 gives the same bytes as -j1" diff -r -x '.*' "$work/j1" "$work/j2"
check "baked values changed as the rig says" python3 -c "
a=open('$work/lib/clip1.bvh').read().split('MOTION')[1].split('\n')[3].split()
b=open('$work/j1/clip1.bvh').read().split('MOTION')[1].split('\n')[3].split()
assert abs(float(b[1])-float(a[1])-1)<1e-9, (a[1],b[1])
"
# 2. Shards run one after another produce exactly the files of a single run.
for k in 0 1 2; do
  "$rigel" bake --rig "$fix/lift_rig.lua" --out "$work/shards" -j 2 --shard $k/3 --report "$work/shard$k.json" "$work/lib" 2> /dev/null
done
check "3 shards = one run" diff -r -x '.*' "$work/j1" "$work/shards"
"$rigel" bake --merge-reports "$work/shard0.json" "$work/shard1.json" "$work/shard2.json" --report "$work/merged.json"
check "merged shard reports cover every clip once" python3 -c "
import json; r=json.load(open('$work/merged.json')); s=r['summary']
assert s['clips']==9 and s['ok']==7 and s['failed']==2, s
assert len(set(c['input'] for c in r['clips']))==9
"
# 3. kill -9 mid-batch, then --resume: finishes the rest, no partial file, same bytes.
mkdir -p "$work/big"
for i in $(seq 1 12); do cp "$work/lib/clip$(( (i % 6) + 1 )).bvh" "$work/big/c$i.bvh"; done
"$rigel" bake --rig "$fix/slow_rig.lua" --out "$work/ref" -j 2 "$work/big" 2> /dev/null
"$rigel" bake --rig "$fix/slow_rig.lua" --out "$work/killed" -j 2 "$work/big" 2> /dev/null &
pid=$!
for _ in $(seq 1 200); do
  n=$(ls "$work/killed" 2>/dev/null | grep -c '\.bvh$' || true)
  [ "$n" -ge 3 ] && break
  sleep 0.05
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
done_before=$(ls "$work/killed" | grep -c '\.bvh$')
check "killed run left some outputs ($done_before) but not all" test "$done_before" -ge 1 -a "$done_before" -lt 12
# Leave a partial temporary file as a kill during a write would.
echo "partial" > "$work/killed/.c9.bvh.tmp.AbCdEf"
"$rigel" bake --rig "$fix/slow_rig.lua" --out "$work/killed" -j 2 --resume --report "$work/resume.json" "$work/big" 2> "$work/resume.err"
check "resume exits 0" test $? = 0
check "resume removed the partial file" test ! -e "$work/killed/.c9.bvh.tmp.AbCdEf"
check "resume skipped finished outputs" python3 -c "
import json; s=json.load(open('$work/resume.json'))['summary']; assert s['skipped']>=1 and s['ok']+s['skipped']==12, s"
check "resumed outputs equal an uninterrupted run" diff -r -x '.*' "$work/ref" "$work/killed"
# A changed rig script invalidates the manifests.
cp "$fix/slow_rig.lua" "$work/slow_rig_v2.lua"; echo "-- v2" >> "$work/slow_rig_v2.lua"
"$rigel" bake --rig "$work/slow_rig_v2.lua" --out "$work/killed" -j 2 --resume --report "$work/resume2.json" "$work/big" 2> /dev/null
check "a changed rig redoes every clip" python3 -c "
import json; s=json.load(open('$work/resume2.json'))['summary']; assert s['skipped']==0 and s['ok']==12, s"
# 4. Runaway scripts fail their clip, not the batch.
"$rigel" bake --rig "$fix/loop_rig.lua" --out "$work/loop" --timeout 0.5 "$work/lib/clip1.bvh" 2> "$work/loop.err"
check "endless loop stopped by --timeout (exit 1)" test $? = 1
check "timeout reason" grep -q "clip timed out" "$work/loop.err"
"$rigel" bake --rig "$fix/hog_rig.lua" --out "$work/hog" --lua-memory-mb 64 "$work/lib/clip1.bvh" 2> "$work/hog.err"
check "memory hog stopped by the Lua heap cap (exit 1)" test $? = 1
check "memory reason" grep -q "not enough memory" "$work/hog.err"
"$rigel" bake --rig "$fix/no_function_rig.lua" --out "$work/nofn" "$work/lib/clip1.bvh" 2> "$work/nofn.err"
check "a rig that returns no function is explained" grep -q "must return a function(scene, clip, ctx)" "$work/nofn.err"
# 5. Usage errors exit 2.
"$rigel" bake --out "$work/x" "$work/lib" 2> "$work/usage.err"; rc=$?
check "missing --rig is a usage error" test "$rc" = 2
"$rigel" bake --rig "$fix/lift_rig.lua" --shard 3/3 "$work/lib" 2> /dev/null; rc=$?
check "bad --shard is a usage error" test "$rc" = 2
"$rigel" bake --rig "$fix/lift_rig.lua" --out "$work/missing" "$work/nothing_here.bvh" "$work/lib/clip2.bvh" 2> "$work/missing.err"; rc=$?
check "a missing input fails as a clip (exit 1), the others are baked" test "$rc" = 1 -a -f "$work/missing/clip2.bvh"
check "its reason names it" grep -q "nothing_here.bvh: cannot open: No such file or directory" "$work/missing.err"
"$rigel" bake --rig "$fix/lift_rig.lua" "@$work/no_list.txt" 2> "$work/usage2.err"; rc=$?
check "an unreadable input list is a usage error naming it" test "$rc" = 2
grep -q "no_list.txt: cannot read the input list" "$work/usage2.err" || { echo "FAILED: message"; fail=1; }
exit $fail
