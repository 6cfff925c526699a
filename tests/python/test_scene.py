"""rigel.load, Scene, Skeleton, Clip: checked against the BVH parsed by the test's own reader."""
import gc

import numpy as np
import pytest

import rigel
from conftest import TINY_BVH, parse_bvh


def test_skeleton_matches_the_file(tiny_bvh):
    joints, frame_time, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    s = scene.skeleton
    assert s.names == [j["name"] for j in joints]
    assert s.parents.tolist() == [j["parent"] for j in joints]
    assert s.parents.dtype == np.int32
    np.testing.assert_array_equal(s.offsets, [j["offset"] for j in joints])
    assert s.channel_types == sum((j["channels"] for j in joints), [])
    assert s.channel_names[:2] == ["Hips.Zrotation", "Hips.Xrotation"]
    assert s.channel_joints.tolist() == [0] * 6 + [1] * 3 + [2] * 2
    assert [s.joint_channels(j) for j in range(3)] == [j["channels"] for j in joints]
    assert [s.channel_begin(j) for j in range(3)] == [0, 6, 9]
    assert s.rotation_orders == ["ZXY", "YXZ", None]
    assert s.translation_modes[0] == "add"
    np.testing.assert_array_equal(s.rest_orientations, np.tile([0, 0, 0, 1.0], (3, 1)))
    sites, offsets = s.end_sites
    assert sites.tolist() == [2] and offsets.tolist() == [[0, 3, 0]]
    assert s.find("Spine") == 1 and s.find("Nope") == -1
    assert len(s) == s.num_joints == 3 and s.num_channels == 11
    with pytest.raises(ValueError):
        s.offsets[0, 0] = 5  # the skeleton is immutable: a read-only view
    with pytest.raises(IndexError):
        s.joint_channels(3)


def test_clip_values_are_the_file_values(tiny_bvh):
    joints, frame_time, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    clip = scene.clip
    assert len(scene.clips) == 1 and clip.num_frames == 3 and clip.num_channels == 11
    assert clip.frame_time == frame_time and clip.duration == pytest.approx(0.08)
    expected = values.copy()
    rotations = [k for k, t in enumerate(scene.skeleton.channel_types) if "rotation" in t]
    expected[:, rotations] = np.radians(expected[:, rotations])
    np.testing.assert_allclose(clip.values, expected, rtol=1e-15, atol=1e-15)
    assert clip.values.dtype == np.float64 and clip.values.flags.c_contiguous


def test_replace_mode_stores_deltas(tiny_bvh):
    joints, _, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="replace")
    assert scene.skeleton.translation_modes[0] == "replace"
    # Xposition Yposition Zposition are columns 3..5; stored as value - OFFSET.
    np.testing.assert_allclose(scene.clip.values[:, 3:6], values[:, 3:6] - joints[0]["offset"])


def test_values_are_a_view_that_writes_through(tiny_bvh):
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    a = scene.clip.values
    b = scene.clips[0].values
    assert np.shares_memory(a, b)  # the same C++ storage, no copy
    a[1, 4] = 123.0
    assert scene.clip.values[1, 4] == 123.0
    assert not a.flags.owndata


def test_view_keeps_the_scene_alive(tiny_bvh):
    values = rigel.load(str(tiny_bvh), bvh_translation="add").clip.values
    gc.collect()
    before = values.copy()
    junk = [np.ones(1000) for _ in range(1000)]  # reuse freed memory if it were freed
    del junk
    np.testing.assert_array_equal(values, before)
    assert values[0, 3] == 0.5


def test_units_and_axes(tiny_bvh):
    cm = rigel.load(str(tiny_bvh), bvh_translation="add", unit_in="cm")
    m = rigel.load(str(tiny_bvh), bvh_translation="add", unit_in="cm", unit="m")
    assert cm.unit_metres == pytest.approx(0.01)
    assert m.unit_metres == pytest.approx(1.0)
    np.testing.assert_allclose(m.skeleton.offsets, cm.skeleton.offsets * 0.01)
    z = rigel.load(str(tiny_bvh), up="z")
    assert z.axes["up"]["axis"] == "+Z" and z.axes["up"]["source"] == "user"


def test_bad_options_are_value_errors(tiny_bvh):
    with pytest.raises(ValueError, match="unit"):
        rigel.load(str(tiny_bvh), unit="furlong")
    with pytest.raises(ValueError, match="bvh_translation"):
        rigel.load(str(tiny_bvh), bvh_translation="sometimes")
    with pytest.raises(ValueError, match="axis"):
        rigel.load(str(tiny_bvh), up="sideways")


def test_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text(TINY_BVH.replace("-45.5 0 12", "-45.5 oops 12"))
    with pytest.raises(rigel.Error, match=r"bad\.bvh:\d+:"):
        rigel.load(str(bad))
    with pytest.raises(rigel.Error, match="missing.bvh"):
        rigel.load(str(tmp_path / "missing.bvh"))
    assert issubclass(rigel.Error, RuntimeError)


def test_clip_from_array_and_scene_with(tiny_bvh, tmp_path):
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    values = np.zeros((5, 11))
    values[:, 1] = np.linspace(0, 1, 5)
    clip = rigel.Clip(values, 0.5, "zeros")
    values[0, 0] = 9  # the clip holds a copy
    assert clip.values[0, 0] == 0 and clip.num_frames == 5 and clip.name == "zeros"
    made = rigel.scene_with(scene, [clip])
    assert made.clip.values.shape == (5, 11) and made.skeleton.names == scene.skeleton.names
    with pytest.raises(ValueError):
        rigel.scene_with(scene, [rigel.Clip(np.zeros((2, 4)), 0.1)])
    with pytest.raises(ValueError):
        rigel.Clip(np.zeros(4), 0.1)


def test_corpus_file_matches_the_independent_reader(data_dir):
    path = data_dir / "cmu_cgspeed" / "01_01.bvh"
    joints, frame_time, values = parse_bvh(path.read_text())
    scene = rigel.load(str(path), bvh_translation="add")
    assert scene.skeleton.names == [j["name"] for j in joints]
    rot = [k for k, t in enumerate(scene.skeleton.channel_types) if "rotation" in t]
    values[:, rot] = np.radians(values[:, rot])
    np.testing.assert_allclose(scene.clip.values, values, rtol=1e-15, atol=1e-13)
    assert scene.clip.frame_time == frame_time
