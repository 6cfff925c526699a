#!/usr/bin/env bash
# Every take (issue 12 item 3): `rigel bake`, `rigel retarget` and `rigel convert` process every
# take of a multi-take input. BVH outputs get a file per take (<input>.<take>.bvh, file-safe and
# distinct), glTF a file holding every take; the report has a row per take; --take picks one; a
# take that fails fails its input with nothing written; --resume checks every take's file.
# Outputs are read back by python3 (BVH text, the glTF JSON chunk), not by rigel.
#   takes_test.sh RIGEL SOURCE_DIR SHARED_DATA WORK
set -uo pipefail
rigel=$1 src=$2 data=$3 work=$4
rm -rf "$work" && mkdir -p "$work/in"
fail=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}

# A 3-take glTF made from the sample walk: frames 1-20, 21-32 and 33-40, named so that two
# file-safe forms collide ("walk fast!" and "walk_fast_").
cat >"$work/make.lua" <<LUA
local rigel = require("rigel")
local walk = rigel.load("$src/samples/cmu_walk/walk.bvh", { unit = "dm" }):clip()
local a, b, c = walk:slice(1, 20), walk:slice(21, 32), walk:slice(33, 40)
a:set_name("slow"); b:set_name("walk fast!"); c:set_name("walk_fast_")
rigel.save("$work/in/three.glb", { a, b, c })
LUA
"$rigel" run --allow-io "$work/make.lua" || { echo "FAILED: cannot make the 3-take input"; exit 1; }
printf 'return function(scene, clip, ctx) return clip end\n' >"$work/identity.lua"

# python3 helpers: frames of a BVH file; animations (name, keys) of a glb.
cat >"$work/read.py" <<'PY'
import json, struct, sys
def bvh_frames(path):
    for line in open(path):
        if line.startswith("Frames:"):
            return int(line.split()[1])
def glb_animations(path):
    data = open(path, "rb").read()
    length, = struct.unpack_from("<I", data, 12)
    doc = json.loads(data[20:20 + length])
    out = []
    for a in doc.get("animations", []):
        acc = doc["accessors"][a["samplers"][0]["input"]]
        out.append((a.get("name"), acc["count"]))
    return out
if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    print(bvh_frames(path) if kind == "bvh" else json.dumps(glb_animations(path)))
PY
frames() { python3 "$work/read.py" bvh "$1"; }
anims() { python3 "$work/read.py" glb "$1"; }

# 1. bake to BVH: a file per take, frames as sliced, a report row per take.
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/bvh" --report "$work/bvh.json" \
  "$work/in/three.glb" 2>"$work/bvh.err"
check "bake exits 0" test $? = 0
check "take 'slow' -> three.slow.bvh, 20 frames" test "$(frames "$work/bvh/three.slow.bvh")" = 20
check "take 'walk fast!' -> three.walk_fast_.bvh, 12 frames" \
  test "$(frames "$work/bvh/three.walk_fast_.bvh")" = 12
check "take 'walk_fast_' -> three.walk_fast__2.bvh (distinct), 8 frames" \
  test "$(frames "$work/bvh/three.walk_fast__2.bvh")" = 8
check "no file for the input as a whole" test ! -e "$work/bvh/three.bvh"
check "stderr says a file per take" grep -q "3 takes, BVH holds one: a file per take" "$work/bvh.err"
python3 - "$work/bvh.json" "$work/bvh" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
rows = [(c["take"], c["output"].split("/")[-1], c["frames"], c["status"]) for c in r["clips"]]
want = [("slow", "three.slow.bvh", 20, "ok"), ("walk fast!", "three.walk_fast_.bvh", 12, "ok"),
        ("walk_fast_", "three.walk_fast__2.bvh", 8, "ok")]
assert rows == want, rows
s = r["summary"]
assert (s["clips"], s["ok"], s["frames"]) == (3, 3, 40), s
print("ok: report rows", rows)
PY
# The values: take 2's first frame is the walk's frame 21, within glTF's float precision. The
# glb is in metres (glTF's unit; the walk was loaded in decimetres): the root's three position
# channels come out a tenth of the source's, the angles as they were.
python3 - "$src/samples/cmu_walk/walk.bvh" "$work/bvh/three.walk_fast_.bvh" <<'PY' || fail=1
import sys
def motion(path):
    lines = open(path).read().split("MOTION")[1].strip().splitlines()[2:]
    return [[float(v) for v in l.split()] for l in lines]
src, out = motion(sys.argv[1]), motion(sys.argv[2])
want = [v * 0.1 if i < 3 else v for i, v in enumerate(src[20])]
worst = max(abs(a - b) for a, b in zip(want, out[0]))
assert len(src[20]) == len(out[0]) and worst < 1e-3, worst
print("ok: take 2 starts at the source's frame 21 (worst difference %.2g)" % worst)
PY

# 2. bake to glb: one file holding every take, by name, with their frame counts.
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/glb" --format glb \
  --report "$work/glb.json" "$work/in/three.glb" 2>/dev/null
check "glb bake exits 0" test $? = 0
check "the glb holds the 3 takes" \
  test "$(anims "$work/glb/three.glb")" = '[["slow", 20], ["walk fast!", 12], ["walk_fast_", 8]]'
check "3 report rows on one file" \
  test "$(python3 -c "import json,sys; print(len({c['output'] for c in json.load(open(sys.argv[1]))['clips']}), len(json.load(open(sys.argv[1]))['clips']))" "$work/glb.json")" = "1 3"

# 3. --take picks one (by name); an unknown take fails naming the takes, nothing written.
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/one" --take "walk fast!" \
  "$work/in/three.glb" 2>/dev/null
check "--take: one file, the input's name" test "$(ls "$work/one")" = three.bvh
check "--take: the take's 12 frames" test "$(frames "$work/one/three.bvh")" = 12
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/none" --take nope \
  "$work/in/three.glb" 2>"$work/none.err"
check "--take nope: exit 1" test $? = 1
check "--take nope: the takes are listed" grep -q "no take 'nope' (takes: 'slow', 'walk fast!', 'walk_fast_')" "$work/none.err"
check "--take nope: nothing written" test -z "$(ls "$work/none")"

# 4. A take that fails fails its input, and none of its takes is written.
printf 'return function(scene, clip, ctx)\n  if ctx.take_index == 2 then error("take two refused") end\n  return clip\nend\n' >"$work/second_fails.lua"
"$rigel" bake --no-progress --rig "$work/second_fails.lua" --out "$work/half" "$work/in/three.glb" \
  2>"$work/half.err"
check "a failed take: exit 1" test $? = 1
check "a failed take: named in the reason" grep -q "take 'walk fast!': .*take two refused" "$work/half.err"
check "a failed take: no take written" test -z "$(ls "$work/half")"

# 5. --resume: skipped while every take's file is intact; a deleted take file bakes again.
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/bvh" --resume \
  --report "$work/resume.json" "$work/in/three.glb" 2>/dev/null
check "--resume: skipped" grep -q '"skipped": 1' "$work/resume.json"
rm "$work/bvh/three.slow.bvh"
"$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/bvh" --resume \
  --report "$work/resume.json" "$work/in/three.glb" 2>/dev/null
check "--resume: a missing take file is baked again" test -f "$work/bvh/three.slow.bvh"
check "--resume: 3 ok rows" grep -q '"ok": 3' "$work/resume.json"

# 6. retarget: every take, onto the sample walk's own skeleton.
"$rigel" retarget --no-progress --target "$src/samples/cmu_walk/walk.bvh" --out "$work/rt" \
  --report "$work/rt.json" "$work/in/three.glb" 2>/dev/null
check "retarget exits 0" test $? = 0
check "retarget: a BVH per take" test "$(frames "$work/rt/three.slow.bvh") $(frames "$work/rt/three.walk_fast_.bvh") $(frames "$work/rt/three.walk_fast__2.bvh")" = "20 12 8"
check "retarget: 3 report rows with metrics" \
  test "$(python3 -c "import json,sys; print(sum('metrics' in c and bool(c.get('take')) for c in json.load(open(sys.argv[1]))['clips']))" "$work/rt.json")" = 3
"$rigel" retarget --no-progress --target "$src/samples/cmu_walk/walk.bvh" --out "$work/rtg" \
  --format glb "$work/in/three.glb" 2>/dev/null
check "retarget to glb: one file, 3 takes" \
  test "$(anims "$work/rtg/three.glb")" = '[["slow", 20], ["walk fast!", 12], ["walk_fast_", 8]]'

# 7. convert: a BVH per take, with the same distinct names.
"$rigel" convert "$work/in/three.glb" "$work/conv.bvh" 2>/dev/null
check "convert: a BVH per take" test "$(frames "$work/conv.slow.bvh") $(frames "$work/conv.walk_fast_.bvh") $(frames "$work/conv.walk_fast__2.bvh")" = "20 12 8"

# 8. The real multi-take FBX (jog, run, walk), when ../shared/data is here.
fbx="$data/fbx/ozz_pab/locomotions.fbx"
if [ -f "$fbx" ]; then
  mkdir -p "$work/real" && cp "$fbx" "$work/real/"
  "$rigel" bake --no-progress --rig "$work/identity.lua" --out "$work/real_out" \
    --report "$work/real.json" "$work/real/locomotions.fbx" 2>/dev/null
  check "locomotions.fbx: exit 0" test $? = 0
  check "locomotions.fbx: jog, run and walk written" \
    test "$(frames "$work/real_out/locomotions.jog.bvh") $(frames "$work/real_out/locomotions.run.bvh") $(frames "$work/real_out/locomotions.walk.bvh")" = "25 21 41"
else
  echo "skipped part 8: $fbx not found (../shared/data absent)"
fi
exit $fail
