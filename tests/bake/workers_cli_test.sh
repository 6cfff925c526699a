#!/usr/bin/env bash
# `rigel bake` worker processes (docs/bake.md, "Workers"): a long C call stopped by --timeout, a
# C++-heap memory bomb stopped by --memory-mb, a worker killed by a signal: each fails only its
# clip with its reason, the others are baked byte-identical to an in-process run (--workers 0),
# and the report is written.
#   workers_cli_test.sh RIGEL SOURCE_DIR WORK_DIR
set -uo pipefail
rigel=$1; src=$2; work=$3
rig=$src/tests/bake/fixtures/hostile_rig.lua
rm -rf "$work"; mkdir -p "$work/lib" "$work/good"
fail=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
for i in 1 2 3 4; do
  awk -v k="$i" 'BEGIN{m=0} /^MOTION/{m=1} { if (m && $0 ~ /^[-0-9]/) { $2 = $2 + k/10 } print }' \
    "$src/samples/basics/walk.bvh" > "$work/lib/clip$i.bvh"
  cp "$work/lib/clip$i.bvh" "$work/good/clip$i.bvh"
done
for bad in regex bomb crash; do cp "$src/samples/basics/walk.bvh" "$work/lib/$bad.bvh"; done

# 1. The long C call: --timeout 3 kills the worker, the other clips are baked.
start=$(date +%s.%N)
"$rigel" bake --no-progress --rig "$rig" --out "$work/t" -j 2 --timeout 3 --report "$work/t.json" \
  "$work/lib/clip1.bvh" "$work/lib/regex.bvh" "$work/lib/clip2.bvh" 2> "$work/t.err"
rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
check "regex in C: exit 1" test "$rc" = 1
check "regex in C: stopped in under 6 s (took $took s)" test "$(echo "$took < 6" | bc)" = 1
check "regex in C: reason on stderr" grep -q "regex.bvh: clip timed out after 3 s (--timeout)" "$work/t.err"
check "regex in C: the other clips were baked" test -f "$work/t/clip1.bvh" -a -f "$work/t/clip2.bvh"
check "regex in C: no output, no temporary" test -z "$(ls -A "$work/t" | grep regex)"
check "regex in C: report" python3 -c "
import json; r=json.load(open('$work/t.json')); s=r['summary']
assert s['ok']==2 and s['failed']==1, s
c={c['input'].split('/')[-1]: c for c in r['clips']}
assert c['regex.bvh']['status']=='failed' and c['regex.bvh']['reason']=='clip timed out after 3 s (--timeout)', c
assert c['clip1.bvh']['status']=='ok' and c['clip1.bvh']['frames']==48, c"

# 2. The memory bomb: --memory-mb 256 fails its clip only.
"$rigel" bake --no-progress --rig "$rig" --out "$work/m" -j 1 --memory-mb 256 --report "$work/m.json" \
  "$work/lib/bomb.bvh" "$work/lib/clip3.bvh" 2> "$work/m.err"
check "memory bomb: exit 1" test $? = 1
check "memory bomb: reason names --memory-mb" grep -q "bomb.bvh: out of memory (--memory-mb 256)" "$work/m.err"
check "memory bomb: the next clip baked in a fresh worker" test -f "$work/m/clip3.bvh"
check "memory bomb: report" python3 -c "
import json; r=json.load(open('$work/m.json')); s=r['summary']
assert s['ok']==1 and s['failed']==1, s
c={c['input'].split('/')[-1]: c for c in r['clips']}
assert c['bomb.bvh']['reason'].startswith('out of memory (--memory-mb 256)'), c"

# 3. A worker killed by a signal (os.execute needs --allow-io).
"$rigel" bake --no-progress --rig "$rig" --allow-io --out "$work/c" -j 1 --report "$work/c.json" \
  "$work/lib/crash.bvh" "$work/lib/clip4.bvh" 2> "$work/c.err"
check "crash: exit 1" test $? = 1
check "crash: the signal is named" grep -q "crash.bvh: worker killed by signal 11 (SEGV)" "$work/c.err"
check "crash: the next clip baked" test -f "$work/c/clip4.bvh"

# 4. All of it in one batch; the good clips equal an in-process run byte for byte. The timeout is
# longer here than in 1: the bomb must reach --memory-mb before --timeout, and on a loaded machine
# (load 6 on 2 cores) filling 256 MB took over 3 s, so the bomb was reported as timed out.
"$rigel" bake --no-progress --rig "$rig" --allow-io --out "$work/all" -j 2 --timeout 10 --memory-mb 256 \
  --report "$work/all.json" "$work/lib" 2> "$work/all.err"
check "mixed batch: exit 1" test $? = 1
check "mixed batch: report 4 ok, 3 failed with their reasons" python3 -c "
import json; r=json.load(open('$work/all.json')); s=r['summary']
assert s['ok']==4 and s['failed']==3 and s['clips']==7, s
c={c['input'].split('/')[-1]: c['reason'] for c in r['clips']}
assert c['regex.bvh']=='clip timed out after 10 s (--timeout)', c
assert c['bomb.bvh'].startswith('out of memory (--memory-mb 256)'), c
assert c['crash.bvh']=='worker killed by signal 11 (SEGV)', c"
"$rigel" bake --no-progress --rig "$rig" --workers 0 --out "$work/inproc" -j 2 "$work/good" 2> /dev/null
check "in-process run of the good clips: exit 0" test $? = 0
check "mixed batch: good clips byte-identical to in-process" diff -r -x '.*' "$work/inproc" "$work/all"
check "mixed batch: no temporaries left" test -z "$(find "$work/all" -name '*.tmp.*')"
# 5. The import child's limits are settable per file (--import-memory-mb, --import-timeout).
"$rigel" convert "$src/samples/basics/walk.bvh" "$work/walk.glb" 2> /dev/null
# A deadline already passed when the import child starts: deterministic.
"$rigel" bake --no-progress --rig "$rig" --out "$work/imp" --import-timeout 0.000001 "$work/walk.glb" \
  2> "$work/imp.err"
check "--import-timeout: exit 1" test $? = 1
check "--import-timeout: the import child's limit is named" \
  grep -q "walk.glb: the importer did not finish within 1e-06 s and was stopped" "$work/imp.err"
"$rigel" bake --no-progress --rig "$rig" --out "$work/imp2" --import-memory-mb 64 --import-timeout 60 \
  "$work/walk.glb" 2> "$work/imp2.err"
check "--import-memory-mb 64 --import-timeout 60: the glb bakes" test $? = 0 -a -f "$work/imp2/walk.bvh"

# 6. rigel run: the same long C call under --timeout 2, a C++-heap bomb under --memory-mb 256.
printf 'return ("a"):rep(20000):find(".-.-.-.-b")\n' > "$work/regex_run.lua"
start=$(date +%s.%N)
"$rigel" run --timeout 2 "$work/regex_run.lua" 2> "$work/run_t.err"
rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
check "run: regex in C: exit 1" test "$rc" = 1
check "run: regex in C: stopped in under 5 s (took $took s)" test "$(echo "$took < 5" | bc)" = 1
check "run: regex in C: reason" grep -q "regex_run.lua: timed out after 2 s (--timeout)" "$work/run_t.err"
cat > "$work/bomb_run.lua" <<'LUA'
local rigel = require("rigel")
local clip = rigel.load(arg[1]):clip()
local keep = {}
for i = 1, 100000 do keep[i] = clip:copy():resize(100000) end
print("never")
LUA
"$rigel" run --memory-mb 256 "$work/bomb_run.lua" "$src/samples/basics/walk.bvh" > "$work/run_m.out" 2> "$work/run_m.err"
check "run: memory bomb: exit 1" test $? = 1
check "run: memory bomb: stopped before the end" test ! -s "$work/run_m.out"
check "run: memory bomb: out of memory named" grep -q "out of memory" "$work/run_m.err"
exit $fail
