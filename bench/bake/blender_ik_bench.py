# Yardstick for bench/bake: how fast headless Blender evaluates the same IK setup rigel bakes.
# A 60-bone humanoid armature, 4 six-D IK constraints (hands and feet: position and rotation)
# following animated target empties; we time scene.frame_set() over N frames (the depsgraph
# evaluates the constraints each frame), and optionally the Bake Action operator.
#   blender -b --factory-startup --python blender_ik_bench.py -- [--frames N] [--chains body|limb]
#                                                                [--bake]
# Prints one JSON line: {"frames": N, "seconds": s, "frames_per_second": f, ...}.
import json
import math
import sys
import time

import bpy

argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
frames = 240
do_bake = "--bake" in argv
chains = argv[argv.index("--chains") + 1] if "--chains" in argv else "body"
if "--frames" in argv:
    frames = int(argv[argv.index("--frames") + 1])

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, frames

arm_data = bpy.data.armatures.new("Rig")
rig = bpy.data.objects.new("Rig", arm_data)
scene.collection.objects.link(rig)
bpy.context.view_layer.objects.active = rig
bpy.ops.object.mode_set(mode="EDIT")
eb = arm_data.edit_bones


def bone(name, head, tail, parent=None):
    b = eb.new(name)
    b.head, b.tail = head, tail
    if parent:
        b.parent = eb[parent]
        b.use_connect = False
    return name


bone("hips", (0, 0, 1.0), (0, 0, 1.1))
prev = "hips"
for i in range(4):
    prev = bone(f"spine{i}", (0, 0, 1.1 + 0.1 * i), (0, 0, 1.2 + 0.1 * i), prev)
bone("neck", (0, 0, 1.5), (0, 0, 1.6), prev)
bone("head", (0, 0, 1.6), (0, 0, 1.8), "neck")
bone("jaw", (0, 0.05, 1.65), (0, 0.1, 1.62), "head")
bone("chest_breath", (0, 0.05, 1.35), (0, 0.1, 1.35), "spine2")
bone("pelvis_twist", (0, 0.0, 0.95), (0, 0.05, 0.95), "hips")
bone("eye.L", (0.03, 0.08, 1.7), (0.03, 0.1, 1.7), "head")
bone("eye.R", (-0.03, 0.08, 1.7), (-0.03, 0.1, 1.7), "head")
for s, x in (("L", 1), ("R", -1)):
    bone(f"clavicle.{s}", (x * 0.05, 0, 1.45), (x * 0.18, 0, 1.45), prev)
    bone(f"upperarm.{s}", (x * 0.18, 0, 1.45), (x * 0.45, 0, 1.45), f"clavicle.{s}")
    bone(f"forearm.{s}", (x * 0.45, 0, 1.45), (x * 0.7, 0.02, 1.45), f"upperarm.{s}")
    bone(f"hand.{s}", (x * 0.7, 0.02, 1.45), (x * 0.78, 0.02, 1.45), f"forearm.{s}")
    for f in range(5):
        p = f"hand.{s}"
        for k in range(3):
            x0 = x * (0.78 + 0.03 * k)
            p = bone(f"finger{f}_{k}.{s}", (x0, 0.02 * f - 0.04, 1.45), (x0 + x * 0.03, 0.02 * f - 0.04, 1.45), p)
    bone(f"thigh.{s}", (x * 0.1, 0, 1.0), (x * 0.1, 0.01, 0.55), "hips")
    bone(f"shin.{s}", (x * 0.1, 0.01, 0.55), (x * 0.1, 0, 0.1), f"thigh.{s}")
    bone(f"foot.{s}", (x * 0.1, 0, 0.1), (x * 0.1, 0.12, 0.02), f"shin.{s}")
    bone(f"toe.{s}", (x * 0.1, 0.12, 0.02), (x * 0.1, 0.18, 0.02), f"foot.{s}")
    bone(f"twist.{s}", (x * 0.3, 0, 1.45), (x * 0.35, 0, 1.45), f"upperarm.{s}")
nbones = len(eb)
bpy.ops.object.mode_set(mode="POSE")

targets = []
# --chains body (default): each constraint reaches up to the root (chain_count 0), as in rigel's
# full-body rig, so the four effectors share the spine and hips and are solved together.
# --chains limb: arms from the clavicle (3 bones), legs from the thigh (2 bones).
limb = chains == "limb"
for name, chain, phase in (("hand.L", 3 if limb else 0, 0.0), ("hand.R", 3 if limb else 0, 1.0),
                           ("foot.L", 2 if limb else 0, 2.0), ("foot.R", 2 if limb else 0, 3.0)):
    empty = bpy.data.objects.new("target_" + name, None)
    scene.collection.objects.link(empty)
    head = rig.pose.bones[name].head
    for f in range(1, frames + 1):
        t = f / 30.0
        empty.location = (head[0] + 0.05 * math.sin(2 * t + phase), head[1] + 0.05 * math.cos(3 * t + phase),
                          head[2] + 0.04 * math.sin(t + phase))
        empty.rotation_euler = (0.3 * math.sin(t + phase), 0.2 * math.cos(t), 0.1 * math.sin(2 * t))
        empty.keyframe_insert("location", frame=f)
        empty.keyframe_insert("rotation_euler", frame=f)
    c = rig.pose.bones[name].constraints.new("IK")
    c.target = empty
    c.chain_count = chain
    c.use_rotation = True  # six-D: position and orientation
    targets.append(empty)

for f in range(1, 6):  # warm up
    scene.frame_set(f)
start = time.perf_counter()
for f in range(1, frames + 1):
    scene.frame_set(f)
seconds = time.perf_counter() - start
result = {"chains": chains, "bones": nbones, "ik_constraints": 4, "frames": frames, "seconds": seconds,
          "frames_per_second": frames / seconds, "blender": bpy.app.version_string}
if do_bake:
    bpy.ops.object.mode_set(mode="POSE")
    bpy.ops.pose.select_all(action="SELECT")
    start = time.perf_counter()
    bpy.ops.nla.bake(frame_start=1, frame_end=frames, only_selected=True, visual_keying=True,
                     clear_constraints=False, bake_types={"POSE"})
    result["bake_seconds"] = time.perf_counter() - start
    result["bake_frames_per_second"] = frames / result["bake_seconds"]
print("RIGEL_BLENDER_BENCH " + json.dumps(result))
sys.stdout.flush()
