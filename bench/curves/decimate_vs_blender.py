#!/usr/bin/env python3
"""Key reduction against Blender's Decimate at the same world-space error (issue 29).

For each clip: rigel writes it dense (`rigel convert IN dense.fbx`) and reduced at its default
bound (`--reduce-keys`: 0.1 mm at every joint and at a point 2 cm from it); Blender 3.4 reads both
and measures the reduced file's world-space error against the dense one (bone heads and tails,
every frame: Blender's numbers, not rigel's); then it decimates the dense action with its own
Decimate (Error Margin mode), bisecting the margin until its error is at most rigel's, and counts
the keys left. Prints a JSON line a clip and the totals; the figure to read is rigel's keys (in its
file, counted by Blender's FBX parser) over Blender's Decimate's (in its action) at equal error
(under 1: rigel keeps fewer). Also printed: the keys Blender makes of rigel's file on import (its
importer keys every channel of a bone at the union of the bone's key times, and adds curves for
channels rigel leaves at rest), and the dense counts. Blender's keys are Bezier keys (with
handles), rigel's linear.

  bench/curves/decimate_vs_blender.py --rigel build/cli/rigel CLIP.bvh ...
"""
import argparse
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rigel", required=True)
    parser.add_argument("clips", nargs="+")
    args = parser.parse_args()
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    totals = {"rigel": 0, "blender": 0, "dense": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for clip in args.clips:
            stem = os.path.splitext(os.path.basename(clip))[0]
            dense, reduced = (os.path.join(tmp, stem + s) for s in (".dense.fbx", ".reduced.fbx"))
            out = os.path.join(tmp, stem + ".json")
            for path, extra in ((dense, []), (reduced, ["--reduce-keys"])):
                subprocess.run([args.rigel, "convert", clip, path] + extra, check=True,
                               stderr=subprocess.DEVNULL)
            env = dict(os.environ)
            env["PATH"] = ":".join(p for p in env["PATH"].split(":") if "pyenv" not in p)
            subprocess.run(["blender", "-b", "--factory-startup", "--python",
                            os.path.join(HERE, "blender_decimate.py"), "--", dense, reduced, out],
                           check=True, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            with open(out) as f:
                r = json.load(f)
            b = r["blender_decimate"]
            row = {
                "clip": clip, "frames": r["frames"], "bones": r["bones"],
                "dense_keys": r["dense_keys"],
                "rigel_keys": r["rigel"]["keys_in_file"],
                "rigel_keys_as_blender_imports_them": r["rigel"]["keys_in_blender"],
                "rigel_error_mm": 1e3 * r["rigel"]["error_m"],
                "rigel_bytes": os.path.getsize(reduced), "dense_bytes": os.path.getsize(dense),
                "blender_keys": b["keys"] if b else None,
                "blender_error_mm": 1e3 * b["error_m"] if b else None,
                "ratio_rigel_over_blender": r["rigel"]["keys_in_file"] / b["keys"] if b else None,
            }
            print(json.dumps(row), flush=True)
            totals["rigel"] += row["rigel_keys"]
            totals["dense"] += row["dense_keys"]
            totals["blender"] += row["blender_keys"] or 0
    print(json.dumps({"totals": totals,
                      "ratio_rigel_over_blender": totals["rigel"] / max(1, totals["blender"])}))
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
