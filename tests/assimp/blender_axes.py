# Blender side of assimp_blender_axes_test (issue 26: a Z-up file stands upright).
#   blender -b --factory-startup --python blender_axes.py -- make SRC.bvh OUT.fbx
#       imports a BVH (Y up) and exports it as a Z-up FBX (GlobalSettings UpAxis Z, front -Y),
#       as Blender and 3ds Max users write them.
#   blender -b --factory-startup --python blender_axes.py -- stand FILE OUT.json
#       imports FILE (.glb, .fbx) and writes, over 16 frames, the head joint's height above the
#       highest and the lowest foot joint along Blender's +Z (world), and the mean feet-to-head
#       direction.
import builtins
import json
import re
import sys

import bpy
import numpy

# Debian's Blender 3.4.1 ships a glTF add-on that uses numpy.bool, removed in NumPy 1.24.
if not hasattr(numpy, "bool"):
    numpy.bool = bool

args = sys.argv[sys.argv.index("--") + 1:]
mode, src, dst = args[0], args[1], args[2]
bpy.ops.wm.read_factory_settings(use_empty=True)


def words(name):
    name = re.sub(r"([a-z])([A-Z])", r"\1 \2", name.split(":")[-1])
    return set(t for t in re.split(r"[^A-Za-z]+", name.lower()) if t)


if mode == "make":
    # Blender 3.4's BVH importer opens with mode 'rU', which Python 3.11 refuses.
    plain_open = builtins.open
    builtins.open = lambda f, m="r", *a, **k: plain_open(f, m.replace("U", ""), *a, **k)
    try:
        bpy.ops.import_anim.bvh(filepath=src, global_scale=0.01)
    finally:
        builtins.open = plain_open
    bpy.ops.export_scene.fbx(filepath=dst, axis_up="Z", axis_forward="-Y",
                             object_types={"ARMATURE"}, add_leaf_bones=False, bake_anim=True)
    sys.exit(0)

if dst and src.lower().endswith((".glb", ".gltf")):
    bpy.ops.import_scene.gltf(filepath=src)
else:
    bpy.ops.import_scene.fbx(filepath=src, use_custom_props=False)
arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
arm = max(arms, key=lambda o: len(o.pose.bones))
head = [b for b in arm.pose.bones if "head" in words(b.name) and not words(b.name) & {"end", "top"}]
feet = [b for b in arm.pose.bones if words(b.name) & {"foot", "ankle", "toe", "toes"}
        and not words(b.name) & {"end"}]
scene = bpy.context.scene
start, end = scene.frame_start, scene.frame_end
if bpy.data.actions:
    start = int(min(a.frame_range[0] for a in bpy.data.actions))
    end = int(max(a.frame_range[1] for a in bpy.data.actions))
rows = []
for i in range(16):
    scene.frame_set(int(round(start + i * (end - start) / 15)))
    h = arm.matrix_world @ head[0].head
    fz = [(arm.matrix_world @ b.head).z for b in feet]
    mid = sum((arm.matrix_world @ b.head for b in feet), h * 0) / len(feet)
    d = (h - mid).normalized()
    rows.append({"over_highest_foot": h.z - max(fz), "over_lowest_foot": h.z - min(fz),
                 "direction": [d.x, d.y, d.z]})
json.dump({"head": head[0].name, "feet": [b.name for b in feet], "frames": rows},
          open(dst, "w"))
