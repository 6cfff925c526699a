#!/usr/bin/env python3
"""Loading a large BVH to NumPy arrays and forward kinematics of all its frames: rigel's Python
module against a plain NumPy reader written the way pure-Python readers (PyMO, bvhio,
fairmotion) are written, and against Blender's BVH import (bpy.ops.import_anim.bvh), in the same
run. Not a test: speed figures come from bench programs (run by hand, figures in the issue's
closing note).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_load_bench.py [--no-blender]

The file is bench/io/bvh_bench.cc's: 60 joints (a 6-channel root, 59 joints with 3 rotation
channels in mixed orders), 20,000 frames, about 29 MB, generated the same way into the same
temporary path (so both benches read one file).
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import rigel

PATH = os.path.join(tempfile.gettempdir(), "rigel_bench_60j_20000f_v2.bvh")
FRAMES = 20000


def generate_bvh():
    """bench/io/bvh_bench.cc GenerateBvh(), line for line."""
    orders = ["Zrotation Xrotation Yrotation", "Zrotation Yrotation Xrotation",
              "Xrotation Yrotation Zrotation"]
    s = ["HIERARCHY\nROOT j0\n{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition Zposition "
         "Zrotation Xrotation Yrotation\n"]
    made, depth = 1, 0
    for chain in range(5):
        for k in range(11 if chain == 0 else 12):
            s.append("\t" * (depth + 1) + "JOINT j%d\n" % made + "\t" * (depth + 1) + "{\n" +
                     "\t" * (depth + 2) + "OFFSET %d.5 %d.25 0.125\n" % (chain - 2, 4 + k % 3) +
                     "\t" * (depth + 2) + "CHANNELS 3 " + orders[made % 3] + "\n")
            made += 1
            depth += 1
        s.append("\t" * (depth + 1) + "End Site\n" + "\t" * (depth + 1) + "{\n" +
                 "\t" * (depth + 2) + "OFFSET 0 2 0\n" + "\t" * (depth + 1) + "}\n")
        while depth > 0:
            s.append("\t" * depth + "}\n")
            depth -= 1
    s.append("}\nMOTION\nFrames: %d\nFrame Time: 0.0083333\n" % FRAMES)
    channels = 6 + 3 * (made - 1)
    for f in range(FRAMES):
        s.append(" ".join("%.4f" % ((10.0 if c < 3 else 90.0) * math.sin(0.001 * f * (c + 1) + c))
                          for c in range(channels)) + "\n")
    with open(PATH, "w") as out:
        out.write("".join(s))


# ---- The yardstick: a BVH reader and FK as pure-Python/NumPy libraries write them ----------

def numpy_read_bvh(path):
    """PyMO/bvhio style: tokenise the hierarchy with a regular expression, keep joints in dicts,
    then split every motion line and convert its fields with float() into a list of rows, and
    turn that into a NumPy array."""
    with open(path) as f:
        text = f.read()
    head, motion = text.split("MOTION", 1)
    joints, stack, pending = [], [], None
    tokens = re.findall(r"[^\s{}]+|[{}]", head)
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("ROOT", "JOINT"):
            pending = {"name": tokens[i + 1], "parent": stack[-1] if stack else -1,
                       "channels": []}
            i += 2
        elif t == "End":
            pending = None
            i += 2
        elif t == "{":
            if pending is None:
                stack.append(None)
            else:
                joints.append(pending)
                stack.append(len(joints) - 1)
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            if pending is not None:
                pending["offset"] = np.array([float(v) for v in tokens[i + 1:i + 4]])
            i += 4
        elif t == "CHANNELS":
            n = int(tokens[i + 1])
            pending["channels"] = tokens[i + 2:i + 2 + n]
            i += 2 + n
        else:
            i += 1
    lines = motion.strip().split("\n")
    frame_time = float(lines[1].split(":")[1])
    rows = [[float(v) for v in line.split()] for line in lines[2:]]
    return joints, frame_time, np.array(rows)


def _rotations(axis, radians):
    c, s = np.cos(radians), np.sin(radians)
    m = np.zeros(radians.shape + (3, 3))
    a, b = {"X": (1, 2), "Y": (2, 0), "Z": (0, 1)}[axis]
    m[..., 3 - a - b, 3 - a - b] = 1
    m[..., a, a] = c
    m[..., b, b] = c
    m[..., a, b] = -s
    m[..., b, a] = s
    return m


def numpy_fk(joints, values):
    """Vectorised over frames, joint after joint (the fastest way such libraries do it)."""
    frames = values.shape[0]
    pos = np.zeros((frames, len(joints), 3))
    rot = np.zeros((frames, len(joints), 3, 3))
    column = 0
    for j, joint in enumerate(joints):
        t = np.tile(joint["offset"], (frames, 1))
        r = np.tile(np.eye(3), (frames, 1, 1))
        for name in joint["channels"]:
            if name.endswith("position"):
                t[:, "XYZ".index(name[0])] += values[:, column]
            else:
                r = r @ _rotations(name[0], np.radians(values[:, column]))
            column += 1
        p = joint["parent"]
        if p < 0:
            pos[:, j], rot[:, j] = t, r
        else:
            pos[:, j] = pos[:, p] + np.einsum("fij,fj->fi", rot[:, p], t)
            rot[:, j] = rot[:, p] @ r
    return pos, rot


# ---- Blender ---------------------------------------------------------------------------------

BLENDER_SCRIPT = r"""
import sys, time, bpy
path = sys.argv[sys.argv.index("--") + 1]
# Debian's Blender 3.4 BVH importer opens the file with mode 'rU', which Python 3.11 refuses
# (as tests/assimp/blender_dump.py): the mode is read without the 'U' during the import.
import builtins
plain_open = builtins.open
builtins.open = lambda f, mode="r", *a, **k: plain_open(f, mode.replace("U", ""), *a, **k)
t0 = time.perf_counter()
try:
    bpy.ops.import_anim.bvh(filepath=path, update_scene_fps=True, update_scene_duration=True)
finally:
    builtins.open = plain_open
t1 = time.perf_counter()
obj = bpy.context.active_object
scene = bpy.context.scene
frames = range(scene.frame_start, min(scene.frame_end, scene.frame_start + 1999) + 1)
for f in frames:   # world positions of every bone on every frame: Blender's FK
    scene.frame_set(f)
    heads = [obj.matrix_world @ b.head for b in obj.pose.bones]
t2 = time.perf_counter()
print("BLENDER_IMPORT %.6f" % (t1 - t0))
print("BLENDER_FK %.6f %d" % (t2 - t1, len(frames)))
"""


def blender_times(path):
    blender = shutil.which("blender")
    if blender is None:
        return None
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if ".pyenv" not in p)
    env.pop("PYTHONPATH", None)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(BLENDER_SCRIPT)
    try:
        run = subprocess.run([blender, "-b", "--factory-startup", "--python", f.name, "--", path],
                             env=env, capture_output=True, text=True, timeout=3600)
    finally:
        os.unlink(f.name)
    found = dict(re.findall(r"^(BLENDER_\w+) (.*)$", run.stdout, re.M))
    if "BLENDER_IMPORT" not in found:
        print("blender failed:", run.stdout[-500:], run.stderr[-500:])
        return None
    fk_seconds, fk_frames = found["BLENDER_FK"].split()
    return float(found["BLENDER_IMPORT"]), float(fk_seconds) / int(fk_frames)


def best(fn, repeat):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-blender", action="store_true")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if not os.path.exists(PATH):
        generate_bvh()
    size = os.path.getsize(PATH) / 2**20
    print("file: %s (%.1f MiB)" % (PATH, size))

    def rigel_load(**options):
        scene = rigel.load(PATH, bvh_translation="add", **options)
        return scene, scene.clip.values
    # Defaults: the unit estimated and the axes inferred from the body (both with a warning);
    # with unit_in (the yardstick reads no unit at all) only the axes are inferred.
    t_default, _ = best(rigel_load, args.repeat)
    t_load, (scene, values) = best(lambda: rigel_load(unit_in="cm"), args.repeat)
    t_fk, (pos, rot) = best(lambda: rigel.forward_kinematics(scene.skeleton, values), args.repeat)
    t_fk2, _ = best(lambda: rigel.forward_kinematics(scene.skeleton, values, threads=2),
                    args.repeat)
    t_np_load, (joints, _, np_values) = best(lambda: numpy_read_bvh(PATH), 2)
    t_np_fk, (np_pos, _) = best(lambda: numpy_fk(joints, np_values), 2)
    # The same numbers: rigel's FK against the yardstick's.
    err = np.abs(pos - np_pos).max()
    print("rigel.load to arrays:         %8.1f ms (%.0f MiB/s), unit_in='cm'" %
          (t_load * 1e3, size / t_load))
    print("rigel.load, unit estimated:   %8.1f ms" % (t_default * 1e3))
    print("numpy reader:                 %8.1f ms  -> rigel %.1fx faster (%.1fx with the unit "
          "estimate)" % (t_np_load * 1e3, t_np_load / t_load, t_np_load / t_default))
    print("rigel FK, %d frames x %d joints: %8.1f ms (%.2f M joint-frames/s); 2 threads %.1f ms" %
          (values.shape[0], pos.shape[1], t_fk * 1e3, pos.shape[0] * pos.shape[1] / t_fk / 1e6,
           t_fk2 * 1e3))
    print("numpy FK (vectorised):        %8.1f ms  -> rigel %.1fx faster (max |diff| %.2g)" %
          (t_np_fk * 1e3, t_np_fk / t_fk, err))
    print("load + FK:                    rigel %.1f ms, numpy %.1f ms -> %.1fx" %
          ((t_load + t_fk) * 1e3, (t_np_load + t_np_fk) * 1e3,
           (t_np_load + t_np_fk) / (t_load + t_fk)))
    if not args.no_blender:
        b = blender_times(PATH)
        if b is not None:
            print("blender import_anim.bvh:      %8.1f ms  -> rigel load %.0fx faster" %
                  (b[0] * 1e3, b[0] / t_load))
            per_frame = t_fk / values.shape[0]
            print("blender frame_set + heads:    %8.1f us/frame (first 2000 frames) -> rigel FK "
                  "%.1f us/frame, %.0fx faster" % (b[1] * 1e6, per_frame * 1e6, b[1] / per_frame))
    return 0


if __name__ == "__main__":
    sys.exit(main())
