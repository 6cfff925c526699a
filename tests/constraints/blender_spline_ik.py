# Blender-side half of the Spline IK cross-check (tests/constraints/spline_ik_blender_test.cc):
#
#   blender -b --factory-startup --python blender_spline_ik.py -- IN.json OUT.json
#
# IN holds cases, each a bone chain (its world points before the constraint: the root's head,
# then each bone's tail), a piecewise cubic Bezier (3k + 1 world points: point, right handle, left
# handle, point, ...), Blender's Y scale mode ("NONE" or "FIT_CURVE") and an influence. Per case
# this builds an armature whose rest pose is that chain (connected bones, roll 0) and a Bezier
# curve object with those points and FREE handles, adds Blender's own Spline IK constraint to the
# last bone (chain count = every bone, no chain offset, no even divisions, no curve radius, XZ
# scale none), evaluates the scene and writes, per case, every bone's world head and tail and its
# world rotation (3x3, rows) and the rest one (rows), as Blender computes them.
import json
import sys

import bpy
from mathutils import Vector

argv = sys.argv[sys.argv.index("--") + 1:]
in_path, out_path = argv[0], argv[1]
with open(in_path) as f:
    cases = json.load(f)["cases"]

for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj, do_unlink=True)
scene = bpy.context.scene
RESOLUTION = int(cases[0].get("resolution", 1024)) if cases else 1024

built = []
for k, case in enumerate(cases):
    # The curve.
    data = bpy.data.curves.new("curve%d" % k, type="CURVE")
    data.dimensions = "3D"
    data.resolution_u = RESOLUTION
    data.use_path = True
    p = [Vector(x) for x in case["bezier"]]
    spline = data.splines.new("BEZIER")
    anchors = (len(p) - 1) // 3 + 1
    spline.bezier_points.add(anchors - 1)
    for i, bp in enumerate(spline.bezier_points):
        bp.handle_left_type = "FREE"
        bp.handle_right_type = "FREE"
        co = p[3 * i]
        bp.co = co
        bp.handle_right = p[3 * i + 1] if i + 1 < anchors else 2 * co - p[3 * i - 1]
        bp.handle_left = p[3 * i - 1] if i > 0 else 2 * co - p[1]
        bp.radius = 1.0
        bp.tilt = 0.0
    curve = bpy.data.objects.new("curve%d" % k, data)
    scene.collection.objects.link(curve)

    # The armature, its rest pose the chain as it was.
    arm_data = bpy.data.armatures.new("arm%d" % k)
    arm = bpy.data.objects.new("arm%d" % k, arm_data)
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    chain = case["chain"]
    previous = None
    names = []
    for i in range(len(chain) - 1):
        eb = arm_data.edit_bones.new("b%d" % i)
        eb.head = Vector(chain[i])
        eb.tail = Vector(chain[i + 1])
        eb.roll = 0.0
        if previous is not None:
            eb.parent = previous
            eb.use_connect = True
        previous = eb
        names.append(eb.name)
    bpy.ops.object.mode_set(mode="OBJECT")

    con = arm.pose.bones[names[-1]].constraints.new("SPLINE_IK")
    con.target = curve
    con.chain_count = len(names)
    con.use_chain_offset = False
    con.use_even_divisions = False
    con.use_curve_radius = False
    con.y_scale_mode = case["y_scale"]
    con.xz_scale_mode = "NONE"
    con.influence = case["influence"]
    built.append((case["name"], arm, names))

bpy.context.view_layer.update()

out = {"version": bpy.app.version_string, "resolution": RESOLUTION, "cases": {}}
for name, arm, names in built:
    heads, tails, rotations, rest = [], [], [], []
    for n in names:
        pb = arm.pose.bones[n]
        m = arm.matrix_world @ pb.matrix
        heads.append(list(m.translation))
        tails.append(list(arm.matrix_world @ pb.tail))
        r = m.to_3x3().normalized()
        rotations.append([list(row) for row in r])
        rest.append([list(row) for row in pb.bone.matrix_local.to_3x3().normalized()])
    out["cases"][name] = {"heads": heads, "tails": tails, "rotations": rotations, "rest": rest}

with open(out_path, "w") as f:
    json.dump(out, f)
