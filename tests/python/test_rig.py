"""rigel.Rig: a rig built in Python, baked with per-frame targets as arrays; results checked with
the test's own NumPy FK of the baked values."""
import numpy as np
import pytest

import rigel
from conftest import SOURCE, numpy_fk, parse_bvh

WALK = SOURCE / "samples" / "cmu_walk" / "walk.bvh"


def _degrees(scene, values):
    out = values.copy()
    rot = [k for k, t in enumerate(scene.skeleton.channel_types) if "rotation" in t]
    out[:, rot] = np.degrees(out[:, rot])
    return out


def test_hand_follows_array_targets_within_limits():
    joints, _, _ = parse_bvh(WALK.read_text())
    scene = rigel.load(WALK, bvh_translation="add")
    s, clip = scene.skeleton, scene.clip
    rig = rigel.Rig(s)
    hand = rig.effector("RightHand")
    elbow = s.channel_begin(s.find("RightForeArm"))
    rig.limit("RightForeArm", s.channel_types[elbow], -2.0, 2.0)
    rig.lock("RightArm", "Xrotation")
    pos, _ = rigel.forward_kinematics(s, clip)
    targets = pos[:, [s.find("RightHand")]] + np.array([0.0, 2.0, 0.0])  # F x 1 x 3
    baked, summary = rig.bake(clip, positions=targets)
    assert baked.values.shape == clip.values.shape
    assert summary["frames"] == clip.num_frames and summary["residual_max"] < 1e-3
    # The test's own FK of the baked values puts the hand on its targets.
    got, _ = numpy_fk(joints, _degrees(scene, baked.values))
    np.testing.assert_allclose(got[:, s.find("RightHand")], targets[:, 0], atol=1e-3)
    assert np.all(np.abs(baked.values[:, elbow]) <= 2.0 + 1e-9)
    x = s.channel_begin(s.find("RightArm")) + s.joint_channels(s.find("RightArm")).index(
        "Xrotation")
    assert np.array_equal(baked.values[:, x], clip.values[:, x])  # locked: as animated
    # Joints outside the arm are untouched.
    left = s.channel_begin(s.find("LeftForeArm"))
    assert np.array_equal(baked.values[:, left], clip.values[:, left])


def test_orientation_targets():
    scene = rigel.load(WALK)
    s, clip = scene.skeleton, scene.clip
    rig = rigel.Rig(s)
    rig.effector("LeftHand", "both")
    pos, quat = rigel.forward_kinematics(s, clip, rotations="quaternion")
    j = s.find("LeftHand")
    # Each frame's target: the hand's pose of frame 0 (a hand held still).
    positions = np.repeat(pos[:1, [j]], clip.num_frames, axis=0)
    orientations = np.repeat(quat[:1, [j]], clip.num_frames, axis=0)
    baked, summary = rig.bake(clip, positions=positions, orientations=orientations)
    out_pos, out_rot = rigel.forward_kinematics(s, baked)
    _, rot0 = rigel.forward_kinematics(s, clip.values[0])
    np.testing.assert_allclose(out_pos[:, j], positions[:, 0], atol=1e-3)
    np.testing.assert_allclose(out_rot[:, j], np.repeat(rot0[None, j], clip.num_frames, 0),
                               atol=1e-3)


def test_rig_argument_errors():
    scene = rigel.load(WALK)
    rig = rigel.Rig(scene.skeleton)
    with pytest.raises(ValueError, match="not found"):
        rig.effector("Tail")
    with pytest.raises(ValueError, match="type"):
        rig.effector("Head", "sideways")
    with pytest.raises(ValueError, match="no channel"):
        rig.limit("Head", "Xposition", 0, 1)
    with pytest.raises(ValueError, match="method"):
        rig.stage("magic", [0])
    rig.effector("Head", "both")
    with pytest.raises(ValueError, match="orientations"):
        rig.bake(scene.clip, positions=np.zeros((scene.clip.num_frames, 1, 3)))
    with pytest.raises(ValueError, match="positions"):
        rig.bake(scene.clip, positions=np.zeros((3, 1, 3)),
                 orientations=np.zeros((scene.clip.num_frames, 1, 4)))


@pytest.mark.parametrize("method", ["dls", "ccd", "fabrik"])
def test_stages_choose_the_solver(method):
    scene = rigel.load(WALK)
    s, clip = scene.skeleton, scene.clip
    rig = rigel.Rig(s)
    hand = rig.effector("LeftHand")
    rig.stage(method, [hand])
    pos, _ = rigel.forward_kinematics(s, clip)
    targets = pos[:, [s.find("LeftHand")]] + np.array([0.0, 1.0, 1.0])
    baked, summary = rig.bake(clip, positions=targets)
    got, _ = rigel.forward_kinematics(s, baked)
    assert np.median(np.linalg.norm(got[:, s.find("LeftHand")] - targets[:, 0], axis=1)) < 0.01


def test_orient_constraint_turns_the_head_as_the_hand():
    """A constraint only (no effector): every frame is constrained; the test's own FK of the baked
    values gives the head the right hand's world rotation (orient, no offset)."""
    joints, _, _ = parse_bvh(WALK.read_text())
    scene = rigel.load(WALK)
    s, clip = scene.skeleton, scene.clip
    rig = rigel.Rig(s)
    handle = rig.constraint("orient", joint="Head", target="RightHand")
    assert handle == 0
    assert rig.constraints() == [{"kind": "orient", "joint": "Head", "after_stage": -1}]
    baked, _ = rig.bake(clip)
    _, rot = numpy_fk(joints, _degrees(scene, baked.values))
    _, before = numpy_fk(joints, _degrees(scene, clip.values))
    head, hand = s.find("Head"), s.find("RightHand")
    np.testing.assert_allclose(rot[:, head], rot[:, hand], atol=1e-9)
    assert np.abs(before[:, head] - before[:, hand]).max() > 0.5  # it did turn the head
    # Half the influence: half way (the head's rotation differs from both).
    rig.set_influence(handle, 0.5)
    half, _ = rig.bake(clip)
    _, rot_half = numpy_fk(joints, _degrees(scene, half.values))
    assert np.abs(rot_half[:, head] - rot[:, hand]).max() > 1e-3


def test_constraint_and_foot_roll_errors_name_the_option():
    scene = rigel.load(WALK)
    rig = rigel.Rig(scene.skeleton)
    with pytest.raises(ValueError, match="unknown option 'tagret'"):
        rig.constraint("orient", joint="Head", tagret="RightHand")
    with pytest.raises(ValueError, match="no joint 'Tail'"):
        rig.constraint("orient", joint="Head", target="Tail")
    with pytest.raises(ValueError, match="kind"):
        rig.constraint("glue", joint="Head", target="RightHand")
    rig.effector("LeftFoot")
    with pytest.raises(ValueError, match="pose effector"):
        rig.foot_roll("LeftFoot", ball=[0, -2, 4])
    with pytest.raises(ValueError, match="already exists"):
        rig.effector("LeftFoot")


def test_pole_effector_keeps_the_elbow_plane_through_the_pole():
    """A hand target with a pole one priority below: the pole point lies in the plane of shoulder,
    elbow and hand on every frame (the test's own FK), where the animation put it elsewhere."""
    joints, _, _ = parse_bvh(WALK.read_text())
    scene = rigel.load(WALK)
    s, clip = scene.skeleton, scene.clip
    rig = rigel.Rig(s)
    rig.effector("RightHand")
    pole = rig.effector("RightHand", "pole", priority=1)
    assert rig.effectors == ["RightHand", "RightHand.pole"]
    pos, _ = rigel.forward_kinematics(s, clip)
    arm, fore, hand = s.find("RightArm"), s.find("RightForeArm"), s.find("RightHand")
    frames = clip.num_frames
    targets = np.zeros((frames, 2, 3))
    targets[:, 0] = pos[:, hand] + np.array([0.0, 1.0, 2.0])
    targets[:, pole] = pos[:, arm] + np.array([0.0, -10.0, -20.0])  # behind and below
    baked, summary, records = rig.bake(clip, positions=targets, records=True)
    got, _ = numpy_fk(joints, _degrees(scene, baked.values))

    def plane_distance(p):
        n = np.cross(p[:, fore] - p[:, arm], p[:, hand] - p[:, arm])
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        return np.abs(np.einsum("fi,fi->f", targets[:, pole] - p[:, arm], n))

    np.testing.assert_allclose(got[:, hand], targets[:, 0], atol=1e-3)
    assert plane_distance(got).max() < 0.05
    assert plane_distance(pos).max() > 1.0
    assert records["effectors"] == ["RightHand", "RightHand.pole"]
    assert records["position_error"].shape == (len(records["frame"]), 2)
    assert list(records["frame"]) == list(range(frames))
    assert set(records["status"]) <= {"converged", "not_converged", "unreachable"}
    assert records["position_error"][:, 0].max() == pytest.approx(summary["residual_max"])


def test_foot_roll_pivots_about_the_ball():
    """The left foot planted where the animation puts it on each frame, rolled 20 degrees: under
    the break angle the foot turns about the ball pivot, so the toe joint placed at the ball stays
    where the planted foot puts the ball, and the ankle rises off its planted place (the test's
    own FK)."""
    joints, _, _ = parse_bvh(WALK.read_text())
    scene = rigel.load(WALK)
    s, clip = scene.skeleton, scene.clip
    foot, toe = s.find("LeftFoot"), s.find("LeftToeBase")
    ball = s.offsets[toe]  # the toe joint's place in the ankle's frame
    rig = rigel.Rig(s)
    e = rig.effector("LeftFoot", "both")
    rig.stage("two_bone", [e])
    handle = rig.foot_roll(e, ball=list(ball), heel=[0.0, -1.5, -1.0],
                           toe=list(1.6 * ball), toe_joint="LeftToeBase")
    assert handle == 0 and rig.num_foot_rolls == 1
    pos, quat = rigel.forward_kinematics(s, clip, rotations="quaternion")
    _, rot = rigel.forward_kinematics(s, clip)
    frames = clip.num_frames
    positions, orientations = pos[:, [foot]], quat[:, [foot]]
    rolls = np.zeros((frames, 1, 4))
    rolls[:, 0, 1] = 30.0  # the break angle
    flat, _ = rig.bake(clip, positions=positions, orientations=orientations, foot_rolls=rolls)
    rolls[:, 0, 0] = 20.0
    rolled, _ = rig.bake(clip, positions=positions, orientations=orientations, foot_rolls=rolls)
    got_flat, _ = numpy_fk(joints, _degrees(scene, flat.values))
    got, _ = numpy_fk(joints, _degrees(scene, rolled.values))
    planted_ball = pos[:, foot] + np.einsum("fij,j->fi", rot[:, foot], ball)
    np.testing.assert_allclose(got_flat[:, foot], positions[:, 0], atol=1e-3)
    np.testing.assert_allclose(got[:, toe], planted_ball, atol=1e-3)
    rise = np.linalg.norm(got[:, foot] - positions[:, 0], axis=1)
    assert rise.min() > 0.1 * np.linalg.norm(ball)


def test_bad_values_are_errors_naming_what_is_wrong():
    """Non-finite targets, foot-roll values and options, and option values Lua cannot hold, are
    errors naming the frame or the option; nothing is baked."""
    scene = rigel.load(WALK)
    s, clip = scene.skeleton, scene.clip
    rig = rigel.Rig(s)
    e = rig.effector("LeftFoot", "both")
    rig.foot_roll(e, ball=[0.0, -1.0, 3.0])
    pos, quat = rigel.forward_kinematics(s, clip, rotations="quaternion")
    f = s.find("LeftFoot")
    positions, orientations = pos[:, [f]].copy(), quat[:, [f]].copy()
    rolls = np.zeros((clip.num_frames, 1, 4))
    rolls[5, 0, 0] = np.nan
    with pytest.raises(rigel.Error, match="frame 6: foot roll 0"):
        rig.bake(clip, positions=positions, orientations=orientations, foot_rolls=rolls)
    positions[3, 0, 1] = np.inf
    with pytest.raises(rigel.Error, match="frame 4: invalid rig: target 0: not finite"):
        rig.bake(clip, positions=positions, orientations=orientations)
    with pytest.raises(ValueError, match=r"rig.constraint: field 'influence': finite number"):
        rig.constraint("orient", joint="Head", target="RightHand", influence=float("nan"))
    deep = {"a": 1}
    for _ in range(10):
        deep = {"a": deep}
    with pytest.raises(ValueError, match="nested too deep"):
        rig.constraint("orient", joint="Head", target="RightHand", axes=deep)
    with pytest.raises(ValueError, match="expected a number, bool, string, list or dict"):
        rig.constraint("orient", joint="Head", target="RightHand", axes=object())
    assert rig.constraints() == []
