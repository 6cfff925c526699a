# Blender-side half of the bone-scale cross-check: imports a .glb/.gltf/.fbx and writes, on the
# requested clip frames, every mesh's rest (undeformed, world) and evaluated (deformed) world
# vertex positions, and every pose bone's world head position and world scale relative to its
# rest (the cube root of the ratio of the determinants of its world matrix and its rest world
# matrix: the same whatever the bone's axes and the file's unit), as JSON:
# {"meshes": {name: {"rest": [[x, y, z], ...], frame: [[x, y, z], ...]}},
#  "bones": {name: {frame: [x, y, z, scale]}}, "leaves": {bone without children: true}}.
# Usage: blender -b --factory-startup --python blender_scale_dump.py -- IN OUT.json TAKE FPS F0 ...
#        [++ IN2 OUT2.json TAKE FPS F0 ...]...
# TAKE: the action whose name holds it goes on the armatures ("-": the one Blender assigned).
import json
import sys

import os

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_common import clear, go_to, import_file  # noqa: E402

scene = bpy.context.scene


def dump(path, out_path, take, fps, frames):
    clear(scene)
    scene.render.fps = int(round(fps))
    frame_scale = scene.render.fps / fps
    import_file(path)

    armatures = [o for o in scene.objects if o.type == "ARMATURE"]
    if take != "-":
        chosen = [a for a in bpy.data.actions if take in a.name]
        for arm in armatures:
            if chosen and arm.animation_data:
                arm.animation_data.action = chosen[0]
    # Clip frame 0: an FBX take's first frame (Blender puts it at the action's start); glTF's
    # time 0 (Blender's frame 0), which rigel samples even when the first key comes later.
    start = scene.frame_start
    if path.lower().endswith((".glb", ".gltf")):
        start = 0
    elif armatures and armatures[0].animation_data and armatures[0].animation_data.action:
        start = armatures[0].animation_data.action.frame_range[0]
    result = {"meshes": {}, "bones": {}, "leaves": {}}
    for obj in scene.objects:
        if obj.type == "MESH":
            result["meshes"][obj.name] = {
                "rest": [list(obj.matrix_world @ v.co) for v in obj.data.vertices]}
    for f in frames:
        go_to(scene, start + f * frame_scale)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for obj in scene.objects:
            if obj.type == "MESH":
                evaluated = obj.evaluated_get(depsgraph)
                mesh = evaluated.to_mesh()
                world = evaluated.matrix_world
                result["meshes"][obj.name][str(f)] = [list(world @ v.co) for v in mesh.vertices]
                evaluated.to_mesh_clear()
            elif obj.type == "ARMATURE":
                for bone in obj.pose.bones:
                    m = obj.matrix_world @ bone.matrix
                    rest = obj.matrix_world @ bone.bone.matrix_local
                    det = m.to_3x3().determinant() / rest.to_3x3().determinant()
                    scale = abs(det) ** (1.0 / 3.0)
                    if not bone.children:
                        result["leaves"][bone.name] = True
                    head = m.translation
                    result["bones"].setdefault(bone.name, {})[str(f)] = [
                        head.x, head.y, head.z, scale]
    with open(out_path, "w") as out:
        json.dump(result, out)


# Jobs separated by "++", each IN OUT.json TAKE FPS F0 F1 ...: one Blender run reads them all,
# each from the factory scene.
argv = sys.argv[sys.argv.index("--") + 1:]
jobs = [[]]
for arg in argv:
    if arg == "++":
        jobs.append([])
    else:
        jobs[-1].append(arg)
for job in jobs:
    if job:
        dump(job[0], job[1], job[2], float(job[3]), [int(f) for f in job[4:]])
