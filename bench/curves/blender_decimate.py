# Blender side of bench/curves/decimate_vs_blender.py: measures, in Blender 3.4, the world-space
# error of rigel's reduced FBX against the dense FBX of the same clip, then runs Blender's own
# Decimate (Graph Editor, "Error Margin" mode) on the dense action at margins found by bisection
# until its world-space error matches rigel's, and writes the key counts of each as JSON.
# Error: the largest distance, over every frame and bone, between a bone's head (and its tail: a
# point a bone's length from the joint) in the reduced or decimated action and in the dense one.
# Usage: blender -b --factory-startup --python blender_decimate.py -- DENSE.fbx REDUCED.fbx OUT.json
import json
import math
import os
import sys

import bpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "assimp"))
from blender_common import FbxRecords, import_file  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:]
dense_path, reduced_path, out_path = argv[0], argv[1], argv[2]
scene = bpy.context.scene
for obj in list(scene.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
fps = FbxRecords(dense_path).fps
scene.render.fps = int(round(fps))
scene.render.fps_base = scene.render.fps / fps


def imported_armature(path):
    before = set(scene.objects)
    import_file(path)
    return next(o for o in scene.objects if o not in before and o.type == "ARMATURE")


def keys(action):
    return sum(len(fc.keyframe_points) for fc in action.fcurves)


def points(arm):
    """Every bone's head and tail in world space, metres."""
    out = []
    for pb in arm.pose.bones:
        out.append(arm.matrix_world @ pb.head)
        out.append(arm.matrix_world @ pb.tail)
    return out


dense = imported_armature(dense_path)
dense_action = dense.animation_data.action
start, end = (int(round(x)) for x in dense_action.frame_range)
frames = list(range(start, end + 1))
reference = []
for f in frames:
    scene.frame_set(f)
    reference.append([p.copy() for p in points(dense)])
dense.hide_set(True)


def error_of(arm):
    worst = 0.0
    for i, f in enumerate(frames):
        scene.frame_set(f)
        for a, b in zip(points(arm), reference[i]):
            worst = max(worst, (a - b).length)
    return worst


# The keys rigel's file holds, counted by Blender's FBX parser (its AnimationCurve KeyTime arrays).
records = FbxRecords(reduced_path)
rigel_file_keys = sum(len(FbxRecords.child(curve, b"KeyTime").props[0])
                      for curve in records.objects(b"AnimationCurve"))
reduced = imported_armature(reduced_path)
rigel_error = error_of(reduced)
rigel_keys = keys(reduced.animation_data.action)
bpy.data.objects.remove(reduced, do_unlink=True)
dense.hide_set(False)

# Blender's Decimate needs a Graph Editor: the background window's first area becomes one.
window = bpy.context.window_manager.windows[0]
area = window.screen.areas[0]
area.type = "GRAPH_EDITOR"
region = next(r for r in area.regions if r.type == "WINDOW")
bpy.context.view_layer.objects.active = dense
dense.select_set(True)


def decimated(margin):
    action = dense_action.copy()
    dense.animation_data.action = action
    for fc in action.fcurves:
        fc.select = True
        fc.hide = False
        for k in fc.keyframe_points:
            k.select_control_point = True
    with bpy.context.temp_override(window=window, area=area, region=region):
        bpy.ops.graph.decimate(mode="ERROR", remove_error_margin=margin)
    result = (error_of(dense), keys(action))
    dense.animation_data.action = dense_action
    bpy.data.actions.remove(action)
    return result


# Bisection on the margin (log scale) for Blender's error to meet rigel's from below.
low, high = 1e-9, 10.0
best = None
tries = []
for _ in range(18):
    mid = math.sqrt(low * high)
    err, count = decimated(mid)
    tries.append({"margin": mid, "error_m": err, "keys": count})
    if err <= rigel_error:
        best = {"margin": mid, "error_m": err, "keys": count}
        low = mid
    else:
        high = mid
    if best is not None and high / low < 1.15:
        break
result = {
    "frames": len(frames), "bones": len(dense.pose.bones), "dense_keys": keys(dense_action),
    "rigel": {"error_m": rigel_error, "keys_in_blender": rigel_keys, "keys_in_file": rigel_file_keys},
    "blender_decimate": best, "tries": tries,
}
with open(out_path, "w") as out:
    json.dump(result, out)
