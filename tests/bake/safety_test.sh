#!/usr/bin/env bash
# `rigel bake` against hostile scripts and paths (issue 25): each case failed at the head before
# it (a hang, a crash, an input overwritten, a file outside --out written, a 100 MB supervisor).
# Every run is under `timeout 60`, so a hang fails its check (exit 124) instead of the test.
#   safety_test.sh RIGEL SOURCE_DIR WORK_DIR SHARED_DATA
set -uo pipefail
rigel=$1; src=$2; work=$3; data=${4:-/nonexistent}
fx=$src/tests/bake/fixtures
rig=$fx/safety_rig.lua
walk=$src/samples/basics/walk.bvh
rm -rf "$work"; mkdir -p "$work/in"
fail=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
bake() { timeout -k 5 60 "$rigel" bake --no-progress "$@"; }
for name in clip byte bigerror link stage; do cp "$walk" "$work/in/$name.bvh"; done
cp "$walk" "$work/in/"$'bad\xffname.bvh'

# 1. No hang: error("\255") and an input named with a non-UTF-8 byte, in workers and in-process.
for mode in "-j 1" "--workers 0"; do
  tag=${mode// /}
  bake --rig "$rig" --out "$work/u$tag" $mode --timeout 20 --report "$work/u$tag.json" \
    "$work/in/byte.bvh" "$work/in/"$'bad\xffname.bvh' "$work/in/clip.bvh" 2> "$work/u$tag.err"
  rc=$?
  check "non-UTF-8 ($mode): finishes with exit 1, not a hang (rc $rc)" test "$rc" = 1
  check "non-UTF-8 ($mode): report" python3 -c "
import json; r=json.load(open('$work/u$tag.json', encoding='utf-8', errors='strict'))
c={c['input'].split('/')[-1]: c for c in r['clips']}
b=c['byte.bvh']; assert b['status']=='failed' and 'safety_rig.lua:13: \ufffd' in b['reason'], b
n=[v for k, v in c.items() if k.startswith('bad')][0]; assert n['status']=='ok', n
assert c['clip.bvh']['status']=='ok', c"
  check "non-UTF-8 ($mode): the odd name's output written" test -f "$work/u$tag/"$'bad\xffname.bvh'
done

# 2. A rig returning a table whose __index raises: the clip's error, not an abort (also in-process).
for mode in "-j 1" "--workers 0"; do
  tag=${mode// /}
  bake --rig "$fx/raising_index_rig.lua" --out "$work/i$tag" $mode --report "$work/i$tag.json" \
    "$work/in/clip.bvh" 2> "$work/i$tag.err"
  rc=$?
  check "raising __index ($mode): exit 1 (rc $rc)" test "$rc" = 1
  check "raising __index ($mode): the script's error is the reason" \
    grep -q "clip.bvh: .*raising_index_rig.lua:3: the rig's __index raised" "$work/i$tag.err"
  check "raising __index ($mode): no PANIC" bash -c "! grep -q PANIC '$work/i$tag.err'"
  check "raising __index ($mode): report written" test -f "$work/i$tag.json"
done

# 3. A stage of 1,000 effector entries bakes (it wrote past the Lua stack: SIGSEGV).
for mode in "-j 1" "--workers 0"; do
  tag=${mode// /}
  bake --rig "$rig" --out "$work/s$tag" $mode "$work/in/stage.bvh" 2> "$work/s$tag.err"
  check "1,000 effectors ($mode): baked" test $? = 0 -a -f "$work/s$tag/stage.bvh"
done

# 4. A hard link in --out to a file outside it: the script may not write through it.
mkdir -p "$work/l"
echo "outside" > "$work/outside.txt"
ln "$work/outside.txt" "$work/l/link.txt"
bake --rig "$rig" --out "$work/l" -j 1 "$work/in/link.bvh" 2> "$work/l.err"
check "hard link: the clip fails" test $? = 1
check "hard link: refused with a reason" grep -q "link.txt: the file has more than one link" "$work/l.err"
check "hard link: the outside file is untouched" test "$(cat "$work/outside.txt")" = outside

# 5. Reasons are cut to a few KB; the supervisor stays small (20 MB error message).
bake --rig "$rig" --out "$work/b" -j 1 --report "$work/b.json" "$work/in/bigerror.bvh" \
  2> "$work/b.err"
check "20 MB error: exit 1" test $? = 1
check "20 MB error: reason cut with a note, stderr small" python3 -c "
import json, os; r=json.load(open('$work/b.json')); c=r['clips'][0]
assert len(c['reason']) < 5000 and 'more bytes cut' in c['reason'], len(c['reason'])
assert os.path.getsize('$work/b.err') < 10000, os.path.getsize('$work/b.err')
assert r['summary']['peak_rss_mb']['coordinator'] < 60, r['summary']['peak_rss_mb']"

# 6. A 64 MB manifest-like file in --out is not read by --resume.
bake --rig "$rig" --out "$work/m" -j 1 "$work/in/clip.bvh" 2> /dev/null
python3 -c "
open('$work/m/.clip.bvh.rigel-manifest', 'w').write('{\"input_hash\": \"' + 'a' * (64 << 20) + '\"}')"
bake --rig "$rig" --out "$work/m" -j 1 --resume --report "$work/m.json" "$work/in/clip.bvh" \
  2> "$work/m.err"
check "64 MB manifest: the clip is baked again" test $? = 0
check "64 MB manifest: not read (coordinator stays small)" python3 -c "
import json; r=json.load(open('$work/m.json')); s=r['summary']
assert s['ok']==1, s
assert s['peak_rss_mb']['coordinator'] < 60, s['peak_rss_mb']"

# 7. An input replaced (a new inode) while the batch runs: read as its new content, or failed with
# a message that it changed (it failed "Permission denied": the worker's Landlock rule holds the
# old inode).
mkdir -p "$work/r"
cp "$walk" "$work/r/wait.bvh"; cp "$walk" "$work/r/zreplaced.bvh"
bake --rig "$rig" --out "$work/ro" -j 1 --report "$work/r.json" "$work/r/wait.bvh" \
  "$work/r/zreplaced.bvh" 2> "$work/r.err" &
baking=$!
sleep 1.5
cp "$walk" "$work/r/new.tmp" && mv "$work/r/new.tmp" "$work/r/zreplaced.bvh"
wait $baking
check "replaced input: the new content, or a failure that says it changed" python3 -c "
import json; r=json.load(open('$work/r.json'))
c={c['input'].split('/')[-1]: c for c in r['clips']}
z=c['zreplaced.bvh']
assert z['status']=='ok' or 'was replaced during the batch' in z['reason'], z"

# 7. Two bakes on one --out: a run that fails leaves the manifests of the outputs it did not write
# (it removed the manifest of every clip it started, so the first run's --resume baked them all
# again; its temporaries are covered by Batch.LeavesTemporariesOfALiveWriter).
bake --rig "$rig" --out "$work/k" -j 1 "$work/in/clip.bvh" "$work/in/stage.bvh" 2> /dev/null
check "two bakes, one --out: the first bakes (exit 0)" test $? = 0
bake --rig "$fx/raising_index_rig.lua" --out "$work/k" -j 1 "$work/in/clip.bvh" \
  "$work/in/stage.bvh" 2> /dev/null
check "two bakes, one --out: the second fails (exit 1)" test $? = 1
check "two bakes, one --out: the first one's manifests are still there" \
  test -f "$work/k/.clip.bvh.rigel-manifest" -a -f "$work/k/.stage.bvh.rigel-manifest"
bake --rig "$rig" --out "$work/k" -j 1 --resume --report "$work/k.json" "$work/in/clip.bvh" \
  "$work/in/stage.bvh" 2> /dev/null
check "two bakes, one --out: the first run's --resume skips both clips" python3 -c "
import json; r=json.load(open('$work/k.json'))
assert [c['status'] for c in r['clips']]==['skipped','skipped'], r['clips']"

# 8. An import child out of memory names its own limit (it was reported "out of memory
# (--memory-mb 4096)", the worker's limit, or with nothing named at all). Needs the shared data.
fbx=$data/fbx/cmu_isaacgym/01_01_cmu.fbx
if [ -f "$fbx" ]; then
  bake --rig "$rig" --out "$work/g" -j 1 --import-memory-mb 1 --report "$work/g.json" "$fbx" \
    2> "$work/g.err"
  check "import child out of memory: exit 1" test $? = 1
  check "import child out of memory: its own limit named, not --memory-mb" python3 -c "
import json; c=json.load(open('$work/g.json'))['clips'][0]
assert 'ran out of memory (limit 1 MiB)' in c['reason'] and '--memory-mb' not in c['reason'], c"
else
  echo "skipped: import child out of memory ($fbx absent)"
fi

# 5. No orphans: whatever kills a parent with SIGKILL, its children die with it (PDEATHSIG):
# the bake and retarget supervisors' workers, a worker's own children, `rigel run`'s script
# process. Children are read from /proc before the kill; each must be gone within 5 s after.
children() { cat /proc/$1/task/*/children 2>/dev/null; }
all_gone() {  # all_gone PID...
  for _ in $(seq 1 100); do
    local alive=0
    for p in "$@"; do
      if [ -e /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null; then alive=1; fi
    done
    [ $alive = 0 ] && return 0
    sleep 0.05
  done
  echo "still alive: $*" >&2; return 1
}
wait_children() {  # wait_children PID: prints its children once it has some (up to 10 s)
  for _ in $(seq 1 200); do
    local c; c=$(children "$1"); [ -n "$c" ] && { echo $c; return 0; }; sleep 0.05
  done
  return 1
}
mkdir -p "$work/orphans"
for i in 1 2 3 4; do cp "$src/samples/cmu_walk/walk.bvh" "$work/orphans/w$i.bvh"; done
"$rigel" bake --no-progress --rig "$src/tests/bake/fixtures/hang_first_rig.lua" --out "$work/o1" \
  -j 2 "$work/orphans" 2> /dev/null &
sup=$!
kids=$(wait_children $sup)
grand=""; for k in $kids; do grand="$grand $(children $k)"; done
check "bake supervisor: workers running before the kill ($kids)" test -n "$kids"
kill -9 $sup; wait $sup 2> /dev/null
check "bake supervisor killed: its workers and theirs die with it" all_gone $kids $grand

# The worker's clip never ends (hang_first_rig.lua), so the worker is there to be killed however
# fast the machine is (slow_rig's clips could all finish before the first look).
"$rigel" bake --no-progress --rig "$src/tests/bake/fixtures/hang_first_rig.lua" --out "$work/o2" \
  -j 1 --report "$work/o2.json" "$work/orphans/w1.bvh" "$work/orphans/w2.bvh" 2> /dev/null &
sup=$!
kids=$(wait_children $sup)
check "bake worker: running before the kill ($kids)" test -n "$kids"
kill -9 $kids; wait $sup; rc=$?
check "bake worker killed: its clip fails, the batch goes on (exit 1)" test "$rc" = 1
check "bake worker killed: the report names the signal, the other clip is baked" python3 -c "
import json; r=json.load(open('$work/o2.json')); c=[x['status'] for x in r['clips']]
assert sorted(c)==['failed','ok'], r['clips']
assert any('signal 9' in x.get('reason','') or 'KILL' in x.get('reason','') for x in r['clips']), r['clips']"

printf 'local x = 0\nwhile true do x = x + 1 end\n' > "$work/spin.lua"
"$rigel" run "$work/spin.lua" 2> /dev/null &
sup=$!
kids=$(wait_children $sup)
check "rigel run: the script process running before the kill ($kids)" test -n "$kids"
kill -9 $sup; wait $sup 2> /dev/null
check "rigel run killed: its script process dies with it" all_gone $kids

exit $fail
