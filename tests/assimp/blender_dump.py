# Blender-side half of the cross-check: imports a .glb/.gltf/.fbx and writes the world head
# position of every bone, on the requested clip frames, as JSON.
# Usage: blender -b --factory-startup --python blender_dump.py -- IN OUT.json FPS F0 F1 ...
import json
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
path, out_path, fps = argv[0], argv[1], float(argv[2])
frames = [int(f) for f in argv[3:]]

# Debian's Blender 3.4.1 ships a glTF add-on that uses numpy.bool, removed in NumPy 1.24.
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool

for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
scene = bpy.context.scene
# Blender's frame rate is a whole number; both importers place a key at time t on frame
# t * round(fps), so clip frame f sits at f * round(fps) / fps (not a whole frame when fps is
# 120.0048, from BVH's "Frame Time: .0083333").
scene.render.fps = int(round(fps))
frame_scale = scene.render.fps / fps

if path.lower().endswith((".glb", ".gltf")):
    bpy.ops.import_scene.gltf(filepath=path)
else:
    bpy.ops.import_scene.fbx(filepath=path)

armatures = [o for o in scene.objects if o.type == "ARMATURE"]
result = {"armatures": len(armatures), "bones": 0, "frames": {}}
if armatures:
    arm = armatures[0]
    result["bones"] = len(arm.data.bones)
    action = arm.animation_data.action if arm.animation_data else None
    start = action.frame_range[0] if action else scene.frame_start
    result["first_frame"] = start
    for f in frames:
        at = start + f * frame_scale
        scene.frame_set(int(at), subframe=at - int(at))
        bpy.context.view_layer.update()
        result["frames"][str(f)] = {
            pb.name: list(arm.matrix_world @ pb.head) for pb in arm.pose.bones
        }
with open(out_path, "w") as out:
    json.dump(result, out)
