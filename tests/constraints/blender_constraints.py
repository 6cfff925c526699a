# Blender-side half of the constraint cross-check (blender_constraints_test.cc): builds the rig
# rigel describes, animates it, and evaluates every case's Blender constraints on every frame, all
# in one Blender run.
#
#   blender -b --factory-startup --python blender_constraints.py -- RIG.json OUT.json
#
# RIG.json (written by the test):
#   bones:  [{name, parent ("" for none), head (rest world position), length}]. Every bone points
#           along +Y with roll 0, so its rest matrix has no rotation and a pose bone's frame is
#           rigel's joint frame (rigel's test skeleton has no rest orientations).
#   frames: per frame, per bone, [x, y, z, w, qx, qy, qz]: the pose bone's basis (its location
#           and rotation relative to the rest pose and its parent), keyed on Blender frame f + 1.
#   cases:  [{name, constraints: [{bone, type, name, props: {...}, influence_keys: [[frame, w]],
#           inverse: {...}}]}]. `props` are set on the constraint as they are named in Blender's
#           Python API (target and pole_target are the armature itself). `influence_keys` are
#           keyframes of the influence (constant interpolation, frames 0-based). `inverse`, for a
#           Child Of: {"frame": f} sets the inverse matrix to the target's world matrix on frame f
#           inverted (what Set Inverse does there); {"frame": f, "from": i} makes the switch
#           continuous at frame f from the case's constraint i (also a Child Of):
#           inverse = target(f)^-1 @ target_i(f) @ inverse_i. `bone_props` are set on the pose
#           bone for the case (IK locks) and restored after it.
#
# OUT.json: {rest: {bone: 16 numbers (matrix_local, row-major)}, cases: {name: [frame][bone] 16
# numbers]}}: the world matrix (armature object @ pose bone) of every bone, row-major, per frame.
import json
import sys

import bpy
from mathutils import Matrix, Quaternion, Vector

argv = sys.argv[sys.argv.index("--") + 1:]
rig_path, out_path = argv[0], argv[1]
with open(rig_path) as f:
    rig = json.load(f)

for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
scene = bpy.context.scene

arm_data = bpy.data.armatures.new("Rig")
arm = bpy.data.objects.new("Rig", arm_data)
scene.collection.objects.link(arm)
bpy.context.view_layer.objects.active = arm
bpy.ops.object.mode_set(mode="EDIT")
for b in rig["bones"]:
    eb = arm_data.edit_bones.new(b["name"])
    eb.head = Vector(b["head"])
    eb.tail = Vector(b["head"]) + Vector((0.0, b["length"], 0.0))
    eb.roll = 0.0
for b in rig["bones"]:
    if b["parent"]:
        arm_data.edit_bones[b["name"]].parent = arm_data.edit_bones[b["parent"]]
bpy.ops.object.mode_set(mode="OBJECT")

names = [b["name"] for b in rig["bones"]]
frames = rig["frames"]
action = bpy.data.actions.new("Rig")
arm.animation_data_create()
arm.animation_data.action = action
for i, name in enumerate(names):
    pb = arm.pose.bones[name]
    pb.rotation_mode = "QUATERNION"
    for path, count, first in (("location", 3, 0), ("rotation_quaternion", 4, 3)):
        for k in range(count):
            fc = action.fcurves.new('pose.bones["%s"].%s' % (name, path), index=k, action_group=name)
            fc.keyframe_points.add(len(frames))
            co = []
            for f, row in enumerate(frames):
                co += [f + 1.0, row[i][first + k]]
            fc.keyframe_points.foreach_set("co", co)
            for kp in fc.keyframe_points:
                kp.interpolation = "LINEAR"
            fc.update()


def world(name):
    return arm.matrix_world @ arm.pose.bones[name].matrix


def flat(m):
    return [float("%.9g" % m[r][c]) for r in range(4) for c in range(4)]


def go(frame):
    scene.frame_set(frame + 1)


result = {"rest": {n: flat(arm_data.bones[n].matrix_local) for n in names}, "cases": {}}

for case in rig["cases"]:
    made = []
    for spec in case["constraints"]:
        pb = arm.pose.bones[spec["bone"]]
        con = pb.constraints.new(spec["type"])
        con.name = spec["name"]
        if hasattr(con, "target"):
            con.target = arm
        if spec["type"] == "CHILD_OF":
            # A new Child Of sets its inverse on its first evaluation (Blender 2.90+): off, so that
            # without an `inverse` the inverse is the identity (no offset).
            con.set_inverse_pending = False
            con.inverse_matrix = Matrix.Identity(4)
        if "pole_subtarget" in spec.get("props", {}):
            con.pole_target = arm
        for key, value in spec.get("props", {}).items():
            setattr(con, key, value)
        saved = {}
        for key, value in spec.get("bone_props", {}).items():
            saved[key] = getattr(pb, key)
            setattr(pb, key, value)
        spec["saved"] = saved
        for f, w in spec.get("influence_keys", []):
            con.influence = w
            con.keyframe_insert("influence", frame=f + 1)
        made.append((pb, con, spec))
    for fc in action.fcurves:
        if "constraints" in fc.data_path:
            for kp in fc.keyframe_points:
                kp.interpolation = "CONSTANT"
    # Child Of inverses, in declaration order (a switch refers to an earlier constraint). The
    # targets carry no constraint, so their world matrices do not depend on the inverses.
    for pb, con, spec in made:
        inv = spec.get("inverse")
        if inv is None:
            continue
        go(inv["frame"])
        target = world(con.subtarget)
        if "from" in inv:
            prev = made[inv["from"]][1]
            con.inverse_matrix = target.inverted() @ world(prev.subtarget) @ prev.inverse_matrix
        else:
            con.inverse_matrix = target.inverted()
    rows = []
    for f in range(len(frames)):
        go(f)
        rows.append([flat(world(n)) for n in names])
    result["cases"][case["name"]] = rows
    for pb, con, spec in made:
        pb.constraints.remove(con)
        for key, value in spec["saved"].items():
            setattr(pb, key, value)
    for fc in [fc for fc in action.fcurves if "constraints" in fc.data_path]:
        action.fcurves.remove(fc)

with open(out_path, "w") as out:
    json.dump(result, out)
