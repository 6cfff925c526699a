# Makes the bone-scale fixtures of assimp_blender_scale_test with Blender (3.4): a three-bone
# chain (Root -> Mid -> Tip) skinning a subdivided column, 25 frames at 24 fps, written as FBX and
# glb. "uniform": Mid's uniform scale goes 1 -> 1.5 -> 0.8 while Root and Tip turn; "nonuniform":
# the same, and Tip (a leaf) scales 1 -> (1, 2, 0.5) -> (1.5, 0.7, 1): per-axis scale with no
# shear below it.
# Usage: blender -b --factory-startup --python blender_scale_make.py -- OUT_DIR
import math
import os
import sys

import bpy

out_dir = sys.argv[sys.argv.index("--") + 1]

# Debian's Blender 3.4.1 ships a glTF add-on that uses numpy.bool, removed in NumPy 1.24.
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool


def clear():
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    for action in list(bpy.data.actions):
        bpy.data.actions.remove(action)


def make(kind):
    clear()
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.frame_start = 1
    scene.frame_end = 25
    arm_data = bpy.data.armatures.new("Rig")
    rig = bpy.data.objects.new("Rig", arm_data)
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for i, name in enumerate(["Root", "Mid", "Tip"]):
        bone = arm_data.edit_bones.new(name)
        bone.head = (0, 0, i)
        bone.tail = (0, 0, i + 1)
        if parent is not None:
            bone.parent = parent
            bone.use_connect = True
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    # A column 0.4 wide, 3 high, 12 rings, skinned by height (smooth blends at the joints).
    verts, faces = [], []
    rings = 13
    for r in range(rings):
        z = 3.0 * r / (rings - 1)
        for x, y in ((-0.2, -0.2), (0.2, -0.2), (0.2, 0.2), (-0.2, 0.2)):
            verts.append((x, y, z))
    for r in range(rings - 1):
        for k in range(4):
            a, b = r * 4 + k, r * 4 + (k + 1) % 4
            faces.append((a, b, b + 4, a + 4))
    faces.append((3, 2, 1, 0))
    top = (rings - 1) * 4
    faces.append((top, top + 1, top + 2, top + 3))
    mesh = bpy.data.meshes.new("Column")
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    body = bpy.data.objects.new("Column", mesh)
    scene.collection.objects.link(body)
    body.parent = rig
    groups = {n: body.vertex_groups.new(name=n) for n in ("Root", "Mid", "Tip")}
    for i, v in enumerate(verts):
        z = v[2]
        for n, centre in (("Root", 0.5), ("Mid", 1.5), ("Tip", 2.5)):
            w = max(0.0, 1.0 - abs(z - centre) / 1.0)
            if w > 0:
                groups[n].add([i], w, "REPLACE")
    modifier = body.modifiers.new("Armature", "ARMATURE")
    modifier.object = rig
    # Animation.
    rig.animation_data_create()
    rig.animation_data.action = bpy.data.actions.new("Scale_" + kind)
    pose = rig.pose.bones
    for p in pose:
        p.rotation_mode = "XYZ"
    keys = {
        1: dict(root=(0, 0, 0), mid_s=1.0, tip_r=(0, 0, 0), tip_s=(1, 1, 1)),
        13: dict(root=(0.3, 0, 0.2), mid_s=1.5, tip_r=(0, 0.5, 0), tip_s=(1, 2, 0.5)),
        25: dict(root=(-0.2, 0.1, 0), mid_s=0.8, tip_r=(0.4, 0, 0.3), tip_s=(1.5, 0.7, 1)),
    }
    for frame, k in keys.items():
        pose["Root"].rotation_euler = k["root"]
        pose["Root"].keyframe_insert("rotation_euler", frame=frame)
        pose["Mid"].scale = (k["mid_s"],) * 3
        pose["Mid"].keyframe_insert("scale", frame=frame)
        pose["Tip"].rotation_euler = k["tip_r"]
        pose["Tip"].keyframe_insert("rotation_euler", frame=frame)
        pose["Tip"].scale = k["tip_s"] if kind == "nonuniform" else (1, 1, 1)
        pose["Tip"].keyframe_insert("scale", frame=frame)
    for curve in rig.animation_data.action.fcurves:
        for point in curve.keyframe_points:
            point.interpolation = "LINEAR"
    scene.frame_set(1)
    base = os.path.join(out_dir, "scale_" + kind)
    bpy.ops.object.select_all(action="SELECT")
    bpy.ops.export_scene.fbx(filepath=base + ".fbx", add_leaf_bones=False, bake_anim=True,
                             bake_anim_use_all_actions=False, bake_anim_use_nla_strips=False,
                             bake_anim_simplify_factor=0.0)
    bpy.ops.export_scene.gltf(filepath=base + ".glb", export_format="GLB",
                              export_animations=True)


for kind in ("uniform", "nonuniform"):
    make(kind)
