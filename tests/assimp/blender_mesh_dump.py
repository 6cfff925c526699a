# Blender-side half of the mesh cross-check: imports a .glb/.gltf/.fbx and writes, for every mesh
# object, its evaluated (deformed by its armature) world vertex positions on the requested clip
# frames, as JSON: {"meshes": {name: {frame: [[x, y, z], ...]}}, "armatures": N}.
# Usage: blender -b --factory-startup --python blender_mesh_dump.py -- IN OUT.json FPS F0 F1 ...
import json
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_common import clear, go_to, import_file  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:]
path, out_path, fps = argv[0], argv[1], float(argv[2])
frames = [int(f) for f in argv[3:]]

scene = bpy.context.scene
clear(scene)  # the factory cube, camera and light
scene.render.fps = int(round(fps))
frame_scale = scene.render.fps / fps
import_file(path)

armatures = [o for o in scene.objects if o.type == "ARMATURE"]
start = scene.frame_start
if armatures and armatures[0].animation_data and armatures[0].animation_data.action:
    start = armatures[0].animation_data.action.frame_range[0]
result = {"armatures": len(armatures), "meshes": {}, "polygons": {}}
for obj in scene.objects:
    if obj.type == "MESH":
        result["meshes"][obj.name] = {}
        result["polygons"][obj.name] = len(obj.data.polygons)
for f in frames:
    go_to(scene, start + f * frame_scale)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for obj in scene.objects:
        if obj.type != "MESH":
            continue
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        world = evaluated.matrix_world
        result["meshes"][obj.name][str(f)] = [list(world @ v.co) for v in mesh.vertices]
        evaluated.to_mesh_clear()
with open(out_path, "w") as out:
    json.dump(result, out)
