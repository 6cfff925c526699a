"""rigel.forward_kinematics against the test's own NumPy FK (conftest.numpy_fk)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigel
from conftest import TINY_BVH, numpy_fk, parse_bvh


def test_fk_matches_numpy(tiny_bvh):
    joints, _, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    pos, rot = rigel.forward_kinematics(scene.skeleton, scene.clip)
    want_pos, want_rot = numpy_fk(joints, values)
    assert pos.shape == (3, 3, 3) and rot.shape == (3, 3, 3, 3)
    np.testing.assert_allclose(pos, want_pos, atol=1e-12)
    np.testing.assert_allclose(rot, want_rot, atol=1e-12)


def test_fk_sees_writes_through_the_view(tiny_bvh):
    joints, _, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    scene.clip.values[2, 6] += np.radians(30)  # Spine Yrotation
    values[2, 6] += 30
    pos, _ = rigel.forward_kinematics(scene.skeleton, scene.clip.values)
    np.testing.assert_allclose(pos, numpy_fk(joints, values)[0], atol=1e-12)


def test_quaternions_are_the_matrices(tiny_bvh):
    scene = rigel.load(str(tiny_bvh))
    _, mats = rigel.forward_kinematics(scene.skeleton, scene.clip)
    pos, quats = rigel.forward_kinematics(scene.skeleton, scene.clip, rotations="quaternion")
    assert quats.shape == (3, 3, 4)
    from_quats = Rotation.from_quat(quats.reshape(-1, 4)).as_matrix().reshape(mats.shape)
    np.testing.assert_allclose(from_quats, mats, atol=1e-12)
    none_pos, none = rigel.forward_kinematics(scene.skeleton, scene.clip, rotations="none")
    assert none is None and np.array_equal(none_pos, pos)


def test_threads_give_identical_results(tiny_bvh):
    scene = rigel.load(str(tiny_bvh))
    values = np.tile(scene.clip.values, (50, 1))
    one = rigel.forward_kinematics(scene.skeleton, values, threads=1)
    two = rigel.forward_kinematics(scene.skeleton, values, threads=2)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])


def test_one_row_and_argument_errors(tiny_bvh):
    scene = rigel.load(str(tiny_bvh))
    p, r = rigel.forward_kinematics(scene.skeleton, scene.clip.values[1])
    all_p, all_r = rigel.forward_kinematics(scene.skeleton, scene.clip)
    assert p.shape == (3, 3) and np.array_equal(p, all_p[1]) and np.array_equal(r, all_r[1])
    with pytest.raises(ValueError, match="channels"):
        rigel.forward_kinematics(scene.skeleton, np.zeros((2, 10)))
    with pytest.raises(ValueError, match="rotations"):
        rigel.forward_kinematics(scene.skeleton, scene.clip, rotations="euler")
    # Non-contiguous or integer input is converted, not misread.
    strided = np.asfortranarray(scene.clip.values)
    assert np.array_equal(rigel.forward_kinematics(scene.skeleton, strided)[0], all_p)


def test_fk_on_a_corpus_clip(data_dir):
    path = data_dir / "cmu_cgspeed" / "01_01.bvh"
    joints, _, values = parse_bvh(path.read_text())
    scene = rigel.load(str(path), bvh_translation="add")
    pos, rot = rigel.forward_kinematics(scene.skeleton, scene.clip)
    want_pos, want_rot = numpy_fk(joints, values)
    assert pos.shape == (2752, 31, 3)
    np.testing.assert_allclose(pos, want_pos, atol=1e-9)
    np.testing.assert_allclose(rot, want_rot, atol=1e-12)


def test_fk_with_rest_orientations(data_dir):
    fbx = sorted((data_dir / "fbx").rglob("*.fbx"), key=lambda p: p.name != "walk.fbx")
    if not fbx:
        pytest.skip("no FBX in the corpus")
    scene = rigel.load(str(fbx[0]))
    s = scene.skeleton
    values = scene.clip.values[:5]
    pos, rot = rigel.forward_kinematics(s, values)
    # NumPy FK with the rest orientations (x y z w) between the offset and the channels.
    rest = Rotation.from_quat(s.rest_orientations).as_matrix()
    types, owners = s.channel_types, s.channel_joints
    for f in range(values.shape[0]):
        wp, wr = np.zeros((len(s), 3)), np.zeros((len(s), 3, 3))
        for j in range(len(s)):
            t, r, scale = s.offsets[j].copy(), rest[j].copy(), np.ones(3)
            for c in np.flatnonzero(owners == j):
                axis = "XYZ".index(types[c][0])
                if types[c].endswith("position"):
                    t[axis] += values[f, c]
                elif types[c].endswith("rotation"):
                    r = r @ Rotation.from_euler(types[c][0].lower(), values[f, c]).as_matrix()
            p = s.parents[j]
            wp[j] = t if p < 0 else wp[p] + wr[p] @ t
            wr[j] = r if p < 0 else wr[p] @ r
        if s.has_scale:
            pytest.skip("scaled skeleton: the plain rigid FK does not apply")
        np.testing.assert_allclose(pos[f], wp, atol=1e-8 * max(1, np.abs(wp).max()))
        np.testing.assert_allclose(rot[f], wr, atol=1e-9)
