# Blender-side half of the blend-shape cross-check: imports a .glb/.gltf/.fbx and writes, for
# every mesh object with shape keys, each key's evaluated value at the requested times (seconds),
# as JSON: {"objects": {object: {key: [value, ...]}}, "fps": FPS}. Times are taken from the start
# of the shape keys' action (its first key is time 0), at the scene rate the file gives.
# Usage: blender -b --factory-startup --python blender_morph_dump.py -- IN OUT.json FPS T0 T1 ...
import json
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
path, out_path, fps = argv[0], argv[1], float(argv[2])
times = [float(t) for t in argv[3:]]

# Debian's Blender 3.4.1 ships a glTF add-on that uses numpy.bool, removed in NumPy 1.24.
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool

for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
scene = bpy.context.scene
scene.render.fps = int(round(fps))
scene.render.fps_base = scene.render.fps / fps
if path.lower().endswith((".glb", ".gltf")):
    bpy.ops.import_scene.gltf(filepath=path)
else:
    bpy.ops.import_scene.fbx(filepath=path)
rate = scene.render.fps / scene.render.fps_base

keyed = [o for o in scene.objects if o.type == "MESH" and o.data.shape_keys]
start = None
for obj in keyed:
    anim = obj.data.shape_keys.animation_data
    if anim and anim.action:
        first = anim.action.frame_range[0]
        start = first if start is None else min(start, first)
if start is None:
    start = scene.frame_start
result = {"objects": {}, "fps": rate, "start": start}
for obj in keyed:
    result["objects"][obj.name] = {k.name: [] for k in obj.data.shape_keys.key_blocks[1:]}
for t in times:
    at = start + t * rate
    scene.frame_set(int(at), subframe=at - int(at))
    for obj in keyed:
        for k in obj.data.shape_keys.key_blocks[1:]:
            result["objects"][obj.name][k.name].append(k.value)
with open(out_path, "w") as out:
    json.dump(result, out)
