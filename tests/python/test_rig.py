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
