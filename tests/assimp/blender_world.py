# Blender-side half of the ufbx cross-check (tests/assimp/ufbx_blender_check.py, issue 33): in one
# Blender run, imports each of several files in turn and writes the world position, rotation and
# scale of every pose bone and every object on every frame of the first take, as Blender poses them.
#
#   blender -b --factory-startup --python blender_world.py -- OUT.json SPEC...
#
# A SPEC is "fbx:PATH" (the take, its span and the frame rate are read from the file by the parser
# of Blender's FBX add-on: the first AnimationStack, frames start + f / fps) or "gltf:PATH:FPS:N"
# (N frames f / FPS from time 0: how rigel writes a take). FBX time t is Blender frame
# 1 + t * round(fps) (the FBX importer's default offset); glTF time t is frame t * round(fps).
# A file without an animation stack gives one frame: the pose Blender shows.
import json
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_common import FbxRecords, clear  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:]
out_path, specs = argv[0], argv[1:]
scene = bpy.context.scene


def fbx_take(path):
    """(start seconds, frame count, fps) of the file's first AnimationStack, read by Blender's FBX
    parser; (0, 1, fps) when it has none."""
    fbx = FbxRecords(path)
    for stack in fbx.objects(b"AnimationStack"):
        start, stop = fbx.span(stack)
        return start, int(round((stop - start) * fbx.fps)) + 1, fbx.fps
    return 0.0, 1, fbx.fps


def disconnect_bones():
    """Blender's FBX importer makes each bone as long as its children are far on average, along its
    own +Y, and connects a child whose head then lies on that tail; a connected bone ignores its
    location curve, so a child with animated translation that sits straight along its parent's +Y
    (maya_slime's Ctrl_master above grp_Ctrl) holds still in Blender. The importer read the curve
    (it is on the action): disconnecting keeps every rest position and lets Blender apply it.
    Returns the bones disconnected that have location curves (the readings they change)."""
    changed = []
    for obj in list(scene.objects):
        if obj.type != "ARMATURE":
            continue
        action = obj.animation_data.action if obj.animation_data else None
        moved = {fc.data_path.split('"')[1] for fc in (action.fcurves if action else [])
                 if fc.data_path.endswith(".location")
                 and len({round(k.co[1], 9) for k in fc.keyframe_points}) > 1}
        connected = [b.name for b in obj.data.bones if b.use_connect and b.name in moved]
        if not connected:
            continue
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="EDIT")
        for name in connected:
            obj.data.edit_bones[name].use_connect = False
        bpy.ops.object.mode_set(mode="OBJECT")
        changed += connected
    return changed


def dump(spec):
    kind, rest = spec.split(":", 1)
    clear(scene)
    if kind == "fbx":
        path = rest
        start, frames, fps = fbx_take(path)
        try:
            bpy.ops.import_scene.fbx(filepath=path, use_custom_props=False)
        except Exception as e:  # Blender's importer fails on some files: say so, do not stop
            return {"path": path, "error": str(e)[-300:]}
        offset = 1.0
        disconnected = disconnect_bones()
    else:
        path, fps, frames = rest.rsplit(":", 2)
        fps, frames, start = float(fps), int(frames), 0.0
        # The glTF importer turns key times into frames at the scene's rate: the same rate as the
        # sampling below (at the factory 24, a 30 fps take was sampled at the wrong times).
        scene.render.fps = int(round(fps))
        bpy.ops.import_scene.gltf(filepath=path)
        offset = 0.0
    bfps = scene.render.fps if kind == "fbx" else int(round(fps))
    entries = []
    for obj in scene.objects:
        if obj.type == "ARMATURE":
            entries += [(obj, pb) for pb in obj.pose.bones]
    entries += [(obj, None) for obj in scene.objects]
    result = {"path": path, "fps": fps, "start": start,
              "disconnected": disconnected if kind == "fbx" else [],
              "names": [pb.name if pb else obj.name for obj, pb in entries],
              "kinds": ["bone" if pb else obj.type.lower() for obj, pb in entries],
              "pose": []}
    for f in range(frames):
        at = offset + (start + f / fps) * bfps
        scene.frame_set(int(at // 1), subframe=at - at // 1)
        row = []
        for obj, pb in entries:
            m = obj.matrix_world @ pb.matrix if pb else obj.matrix_world
            loc, rot, scale = m.decompose()
            row += [float("%.9g" % v) for v in (loc.x, loc.y, loc.z, rot.w, rot.x, rot.y, rot.z,
                                                 scale.x, scale.y, scale.z)]
        result["pose"].append(row)
    return result


results = []
for spec in specs:
    try:
        results.append(dump(spec))
    except Exception as e:
        results.append({"path": spec, "error": repr(e)[-300:]})
with open(out_path, "w") as out:
    json.dump(results, out)
