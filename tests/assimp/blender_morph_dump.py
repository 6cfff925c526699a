# Blender-side half of the blend-shape cross-check: imports a .glb/.gltf/.fbx and writes, for
# every mesh object with shape keys, each key's evaluated value at the requested times (seconds),
# as JSON: {"objects": {object: {key: [value, ...]}}, "fps": FPS}. Times are taken from the start
# of the shape keys' action (its first key is time 0), at the scene rate the file gives.
# Usage: blender -b --factory-startup --python blender_morph_dump.py -- IN OUT.json FPS T0 T1 ...
import json
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_common import clear, import_file  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:]
path, out_path, fps = argv[0], argv[1], float(argv[2])
times = [float(t) for t in argv[3:]]

scene = bpy.context.scene
clear(scene)  # the factory cube, camera and light
scene.render.fps = int(round(fps))
scene.render.fps_base = scene.render.fps / fps
import_file(path)
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
