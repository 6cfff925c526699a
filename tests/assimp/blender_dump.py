# Blender-side half of the cross-checks: imports a .glb/.gltf/.fbx in Blender and writes world
# transforms as JSON. Two modes:
#
#   blender -b --factory-startup --python blender_dump.py -- IN OUT.json FPS F0 F1 ...
#     The world head position of every bone of the first armature on clip frames F0, F1, ... of
#     the action Blender assigned (clip frame f at FPS sits at start + f * round(FPS) / FPS).
#
#   blender -b --factory-startup --python blender_dump.py -- IN.fbx OUT.json takes
#     Every frame of every take (FBX AnimationStack) of IN.fbx, in one Blender run: per take, the
#     world position and rotation of every pose bone and every object. The takes, their time
#     spans (LocalStart / LocalStop) and the frame rate are read from the file with Blender's own
#     FBX parser, independently of rigel. Per frame, a row of 10 numbers per bone or object: world
#     position (x, y, z), rotation (w, x, y, z) and scale (x, y, z) as Matrix.decompose() gives
#     them (a mirroring world matrix has a negative scale).
import json
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_common import FbxRecords, go_to, import_file as import_any  # noqa: E402

argv = sys.argv[sys.argv.index("--") + 1:]
path, out_path = argv[0], argv[1]

for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
for act in list(bpy.data.actions):
    bpy.data.actions.remove(act)
scene = bpy.context.scene


def import_file(fps=None):
    if fps is not None:
        # Blender's frame rate is a whole number; both importers place a key at time t on frame
        # t * round(fps), so clip frame f sits at f * round(fps) / fps (not a whole frame when fps
        # is 120.0048, from BVH's "Frame Time: .0083333").
        scene.render.fps = int(round(fps))
    if path.lower().endswith(".bvh"):
        # One key per BVH frame from frame 1, lengths as in the file (global_scale 1). Debian's
        # Blender 3.4 BVH importer opens the file with mode 'rU', which Python 3.11 refuses: the
        # mode is read without the 'U' for the length of the import.
        import builtins
        plain_open = builtins.open
        builtins.open = lambda f, mode="r", *a, **k: plain_open(f, mode.replace("U", ""), *a, **k)
        try:
            bpy.ops.import_anim.bvh(filepath=path)
        finally:
            builtins.open = plain_open
    else:
        # Custom properties off: Blender 3.4's importer asserts on the non-string enum properties
        # of the ProAnimationBank files (ozz_pab/*.fbx); they carry no transform.
        import_any(path, use_custom_props=False)


def dump_frames():
    fps = float(argv[2])
    frames = [int(f) for f in argv[3:]]
    import_file(fps)
    frame_scale = scene.render.fps / fps
    armatures = [o for o in scene.objects if o.type == "ARMATURE"]
    result = {"armatures": len(armatures), "bones": 0, "frames": {}}
    if armatures:
        arm = armatures[0]
        result["bones"] = len(arm.data.bones)
        action = arm.animation_data.action if arm.animation_data else None
        start = action.frame_range[0] if action else scene.frame_start
        result["first_frame"] = start
        for f in frames:
            go_to(scene, start + f * frame_scale)
            result["frames"][str(f)] = {
                pb.name: list(arm.matrix_world @ pb.head) for pb in arm.pose.bones
            }
    with open(out_path, "w") as out:
        json.dump(result, out)


def read_stacks():
    """The file's AnimationStacks as (name, LocalStart s, LocalStop s), its frame rate, and the
    names of the models whose rest world matrix mirrors (an odd number of negative Lcl Scaling
    components down the chain: 3ds Max "Nub" bones), read with the parser of Blender's FBX add-on
    (as its importer does)."""
    fbx = FbxRecords(path)
    root, child, props, fps = fbx.root, fbx.child, fbx.props, fbx.fps
    stacks = []
    for elem in fbx.objects(b"AnimationStack"):
        name = elem.props[1].split(b"\x00\x01")[0].decode("utf-8", "replace")
        stacks.append((name, *fbx.span(elem)))
    # Mirroring: the parity of negative scale components of every model and its ancestors.
    models = {}
    for elem in fbx.objects(b"Model"):
        scale = props(elem).get(b"Lcl Scaling")
        flips = sum(v < 0 for v in scale[4:7]) if scale else 0
        models[elem.props[0]] = (elem.props[1].split(b"\x00\x01")[0].decode(), flips % 2)
    parent = {}
    for c in child(root, b"Connections").elems:
        if c.props[0] == b"OO" and c.props[1] in models and c.props[2] in models:
            parent[c.props[1]] = c.props[2]
    mirrored = []
    for uid, (name, _) in models.items():
        odd, at = 0, uid
        while at is not None:
            odd ^= models[at][1]
            at = parent.get(at)
        if odd:
            mirrored.append(name)
    return stacks, fps, sorted(mirrored)


def fmt(values):
    return [float("%.8g" % v) for v in values]


def dump_takes():
    stacks, fps, mirrored = read_stacks()
    import_file()
    blender_fps = scene.render.fps  # round(fps): the rate the importer placed keys at
    anim_offset = 1.0  # the importer's default: FBX time 0 is Blender frame 1
    # Every pose bone and every object, bones first; a name that is both keeps the bone.
    entries = []
    for obj in scene.objects:
        if obj.type == "ARMATURE":
            entries += [("bone", obj, pb) for pb in obj.pose.bones]
    entries += [("object", obj, None) for obj in scene.objects]
    names = [pb.name if pb else obj.name for _, obj, pb in entries]
    animated = [o for o in scene.objects if o.animation_data]
    # What the importer set before any frame is evaluated; restored before each take, so that
    # whatever a take does not animate is at rest rather than where the previous take left it.
    rest = [(obj, pb, (pb or obj).matrix_basis.copy()) for _, obj, pb in entries]
    result = {
        "fps": fps,
        "blender_fps": blender_fps,
        "armatures": sum(o.type == "ARMATURE" for o in scene.objects),
        "names": names,
        "kinds": [kind for kind, _, _ in entries],
        "parents": [(pb.parent.name if pb.parent else obj.name) if pb else
                    (obj.parent.name if obj.parent else "") for _, obj, pb in entries],
        "mirrored": mirrored,
        "takes": [],
    }
    for name, start, stop in stacks:
        # The importer names a take's action "<object>|<stack>" or "<object>|<stack>|<layer>".
        assigned = {}
        for obj in animated:
            prefix = obj.name + "|" + name
            match = [a for a in bpy.data.actions if a.name == prefix or
                     a.name.startswith(prefix + "|")]
            obj.animation_data.action = match[0] if match else None
            if match:
                assigned[obj.name] = match[0].name
        for _, obj, pb, basis in ((None,) + r for r in rest):
            (pb or obj).matrix_basis = basis
        frames = int(round((stop - start) * fps)) + 1
        first = anim_offset + start * blender_fps
        take = {"name": name, "start": start, "stop": stop, "frames": frames,
                "first_frame": first, "actions": assigned, "pose": []}
        for f in range(frames):
            at = first + f * blender_fps / fps
            scene.frame_set(int(at), subframe=at - int(at))
            row = []
            for _, obj, pb in entries:
                m = obj.matrix_world @ pb.matrix if pb else obj.matrix_world
                loc, rot, scale = m.decompose()
                row += fmt((loc.x, loc.y, loc.z, rot.w, rot.x, rot.y, rot.z,
                            scale.x, scale.y, scale.z))
            take["pose"].append(row)
        result["takes"].append(take)
    with open(out_path, "w") as out:
        json.dump(result, out)


if len(argv) > 2 and argv[2] == "takes":
    dump_takes()
else:
    dump_frames()
