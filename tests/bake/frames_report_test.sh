#!/usr/bin/env bash
# rigel bake --frames-report: the per-frame report of a bake points at the pop planted on frame 11
# (0-based 10) of fixtures/pop_rig.lua. Independently of rigel's numbers, the output BVH is read
# back here: the planar chain's tip is computed by FK (checked against each record's target and
# residual) and the largest second difference of its angles must fall on that frame. Then
# `rigel retarget --pin-feet --frames-report` on the CMU walk sample: one line per frame, the feet's
# records, and the batch report's counts equal to those recounted from the lines.
#   frames_report_test.sh RIGEL SOURCE_DIR WORK
set -uo pipefail
rigel=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$rigel" bake --rig "$src/tests/bake/fixtures/pop_rig.lua" --out "$work/out" \
  --frames-report "$work/frames" --report "$work/report.json" \
  "$src/tests/lua/fixtures/planar.bvh" 2>"$work/stderr"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAILED: exit $rc"; cat "$work/stderr"; exit 1; }
python3 - "$work" <<'PY' || exit 1
import json, math, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(f"{work}/frames/planar.frames.jsonl") if l.strip()]
header, records = lines[0], lines[1:]
assert header["rigel_frames_report"] == 1 and header["frames"] == 21, header
assert header["effectors"] == [{"name": "Outer", "joint": "Outer"}], header["effectors"]
assert [r["frame"] for r in records] == list(range(21)), "one line per frame"
# The output, read back: 21 rows of three Z rotations (degrees).
text = open(f"{work}/out/planar.bvh").read().split("MOTION")[1].split("\n")
rows = [list(map(float, l.split())) for l in text[3:] if l.strip()]
assert len(rows) == 21, len(rows)
def tip(q):
    a = 0.0; x = y = 0.0
    for angle, length in zip(q, (15, 10, 5)):
        a += math.radians(angle); x += length * math.cos(a); y += length * math.sin(a)
    return x, y
for f, (r, q) in enumerate(zip(records, rows)):
    e = r["effectors"][0]
    tx, ty, _ = e["target"]
    x, y = tip(q)
    # The target that pop_rig.lua set, and the residual, measured here.
    s = f / 20
    ex, ey = 20 + (15 - 20) * s, 10 + (18 - 10) * s
    if f == 10: ex = -ex
    assert abs(tx - ex) < 1e-9 and abs(ty - ey) < 1e-9, (f, e["target"], ex, ey)
    assert abs(math.hypot(x - tx, y - ty) - e["position_error"]) < 1e-6, (f, e, x, y)
    assert r["status"] == "converged", r
# Where the motion snaps, measured here: the largest second difference of any angle.
second = [max(abs(rows[f + 1][k] - 2 * rows[f][k] + rows[f - 1][k]) for k in range(3))
          for f in range(1, 20)]
measured = 1 + max(range(19), key=lambda i: second[i])
assert measured == 10, measured
pops = [r["frame"] for r in records if r["pop"] >= 1]
assert 10 in pops, pops
best = max(records, key=lambda r: r["pop"])
assert best["frame"] == 10, best
report = json.load(open(f"{work}/report.json"))
ev = report["clips"][0]["frames_evidence"]
assert ev["worst_frames"][0] == 10 and ev["pops"] >= 1 and ev["unreachable"] == 0, ev
assert report["clips"][0]["frames_report"].endswith("planar.frames.jsonl"), report["clips"][0]
print(f"pop planted on frame 10: largest second difference {second[9]:.1f} deg there; "
      f"pop score {best['pop']:.2f}; worst frames {ev['worst_frames']}")
PY
"$rigel" retarget --target "$src/samples/cmu_walk/walk.bvh" --pin-feet --out "$work/rt" \
  --frames-report "$work/rt_frames" --report "$work/rt.json" "$src/samples/cmu_walk/walk.bvh" \
  2>"$work/rt_stderr" || { echo "FAILED: retarget"; cat "$work/rt_stderr"; exit 1; }
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
lines = [json.loads(l) for l in open(f"{work}/rt_frames/walk.frames.jsonl") if l.strip()]
header, records = lines[0], lines[1:]
names = [e["name"] for e in header["effectors"]]
assert names == ["LeftFoot", "LeftFoot.pole", "RightFoot", "RightFoot.pole"], names
assert len(records) == header["frames"] == 40, (len(records), header["frames"])
solved = [r for r in records if "status" in r]
assert solved, "the pinned frames have records"
ev = json.load(open(f"{work}/rt.json"))["clips"][0]["frames_evidence"]
assert ev["unreachable"] == sum(r["status"] == "unreachable" for r in solved), ev
assert ev["pops"] == sum(r.get("pop", 0) >= 1 for r in records), ev
assert ev["flips"] == sum(r.get("swivel_jump", 0) >= 90 for r in records), ev
assert ev["foot_slide_max"] == max([r["foot_slide"] for r in records if "foot_slide" in r] + [0]), ev
print(f"retarget: {len(solved)} of 40 frames with records; evidence {ev}")
PY
# The BVH reading options reach the bake: with --unit-in cm the unit is stated (no estimate
# warning) and the frames report's header says cm.
"$rigel" bake --rig "$src/tests/bake/fixtures/pop_rig.lua" --out "$work/out_cm" --unit-in cm \
  --frames-report "$work/frames_cm" "$src/tests/lua/fixtures/planar.bvh" 2>"$work/stderr_cm" ||
  { echo "FAILED: bake --unit-in cm"; cat "$work/stderr_cm"; exit 1; }
if grep -q "does not state its length unit" "$work/stderr_cm"; then
  echo "FAILED: --unit-in cm still estimated the unit"; cat "$work/stderr_cm"; exit 1
fi
head -1 "$work/frames_cm/planar.frames.jsonl" | grep -q '"unit":"cm"' ||
  { echo "FAILED: header unit"; head -1 "$work/frames_cm/planar.frames.jsonl"; exit 1; }
echo "bake --unit-in cm: unit stated, header says cm"
