"""rigel.save: round trips through every writable format, edits made through the views kept."""
import numpy as np
import pytest

import rigel
from conftest import TINY_BVH, numpy_fk, parse_bvh


def test_bvh_round_trip_is_exact(tiny_bvh, tmp_path):
    scene = rigel.load(str(tiny_bvh))
    out = tmp_path / "out.bvh"
    rigel.save(scene, str(out))
    back = rigel.load(str(out))
    assert back.skeleton.names == scene.skeleton.names
    assert back.skeleton.channel_types == scene.skeleton.channel_types
    assert np.array_equal(back.skeleton.offsets, scene.skeleton.offsets)
    assert np.array_equal(back.clip.values, scene.clip.values)  # bit for bit
    # ... and the file's own numbers, read by the test's parser, are the input's.
    assert np.array_equal(parse_bvh(out.read_text())[2], parse_bvh(TINY_BVH)[2])


def test_edits_through_the_view_are_saved(tiny_bvh, tmp_path):
    joints, _, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="add")
    scene.clip.values[:, 9] = np.radians(12.5)  # Head Xrotation on every frame
    out = tmp_path / "edited.bvh"
    rigel.save(scene, str(out))
    _, _, written = parse_bvh(out.read_text())
    values[:, 9] = 12.5
    np.testing.assert_allclose(written, values, rtol=1e-15, atol=1e-12)


@pytest.mark.parametrize("ext", ["glb", "gltf", "fbx"])
def test_round_trip_through_other_formats_keeps_world_positions(tiny_bvh, tmp_path, ext):
    joints, _, values = parse_bvh(TINY_BVH)
    scene = rigel.load(str(tiny_bvh), bvh_translation="add", unit_in="cm")
    out = tmp_path / ("out." + ext)
    rigel.save(scene, str(out))
    back = rigel.load(str(out), unit="cm", up="y", forward="z")
    assert back.skeleton.names[:3] == scene.skeleton.names
    pos, _ = rigel.forward_kinematics(back.skeleton, back.clip)
    want, _ = numpy_fk(joints, values)
    np.testing.assert_allclose(pos[:, :3], want, atol=1e-4)


def test_takes_and_errors(tiny_bvh, tmp_path):
    scene = rigel.load(str(tiny_bvh))
    two = rigel.scene_with(scene, [scene.clip, rigel.Clip(scene.clip.values * 0.5, 0.04, "half")])
    with pytest.raises(rigel.Error, match="holds one clip"):
        rigel.save(two, str(tmp_path / "two.bvh"))
    rigel.save(two, str(tmp_path / "half.bvh"), takes=[1])
    np.testing.assert_allclose(rigel.load(str(tmp_path / "half.bvh")).clip.values,
                               scene.clip.values * 0.5, rtol=1e-15, atol=1e-15)
    rigel.save(two, str(tmp_path / "two.glb"))
    assert [c.name for c in rigel.load(str(tmp_path / "two.glb")).clips][1] == "half"
    with pytest.raises(IndexError):
        rigel.save(two, str(tmp_path / "x.bvh"), takes=[2])
    with pytest.raises(rigel.Error, match="unsupported output format"):
        rigel.save(scene, str(tmp_path / "out.xyz"))
    nan = rigel.scene_with(scene, [rigel.Clip(np.full((2, 11), np.nan), 0.1)])
    with pytest.raises(rigel.Error):
        rigel.save(nan, str(tmp_path / "nan.bvh"))
    assert not (tmp_path / "nan.bvh").exists()
