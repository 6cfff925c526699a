"""rigel.info, convert, bake, retarget, suggest_map: the CLI's code run in process, results
checked with the test's own FK and readers."""
import numpy as np
import pytest

import rigel
from conftest import SOURCE, TINY_BVH, numpy_fk, parse_bvh

WALK = SOURCE / "samples" / "cmu_walk" / "walk.bvh"
BAKE_RIG = SOURCE / "samples" / "cmu_walk" / "bake_rig.lua"


def test_info_describes_the_file(tiny_bvh):
    joints, frame_time, values = parse_bvh(TINY_BVH)
    info = rigel.info(tiny_bvh, unit_in="cm")
    assert info["joints"] == len(joints) and info["channels"] == values.shape[1]
    assert info["joint_names"] == [j["name"] for j in joints]
    assert info["frames"] == values.shape[0] and info["frame_time"] == frame_time
    assert info["end_sites"] == 1 and info["unit_metres"] == pytest.approx(0.01)
    assert sorted(info["rotation_orders"]) == ["XZ", "YXZ", "ZXY"]  # as listed per joint
    with pytest.raises(rigel.Error, match="nothing.bvh"):
        rigel.info("nothing.bvh")


def test_command_args():
    assert rigel.command_args({"pin_feet": True, "strict": False, "root_motion": "extract",
                               "jobs": 2, "take": None, "map": ["a", "b"]}) == [
        "--pin-feet", "--root-motion", "extract", "--jobs", "2", "--map", "a", "--map", "b"]


def test_convert_with_options(tiny_bvh, tmp_path):
    joints, _, values = parse_bvh(TINY_BVH)
    out = tmp_path / "tiny.glb"
    messages = rigel.convert(tiny_bvh, out, unit_in="cm", bvh_translation="add", quiet=True)
    assert isinstance(messages, list)
    back = rigel.load(str(out), unit="cm")
    pos, _ = rigel.forward_kinematics(back.skeleton, back.clip)
    np.testing.assert_allclose(pos[:, :3], numpy_fk(joints, values)[0], atol=1e-4)
    # A value the CLI refuses is a usage error (exit 2) naming the option.
    with pytest.raises(rigel.Error, match="(?s)exit 2.*unit"):
        rigel.convert(tiny_bvh, tmp_path / "m.bvh", unit="furlong", quiet=True)
    with pytest.raises(rigel.Error, match="missing.bvh"):
        rigel.convert(tmp_path / "missing.bvh", tmp_path / "x.bvh", quiet=True)
    with pytest.raises(rigel.Error, match="exit 2"):  # a usage error: unknown option
        rigel.convert(tiny_bvh, tmp_path / "y.bvh", no_such_option=True, quiet=True)


def _knee_angles(scene, hip, knee, ankle):
    s = scene.skeleton
    pos, _ = rigel.forward_kinematics(s, scene.clip)
    a, b, c = (pos[:, s.find(n)] for n in (hip, knee, ankle))
    u, v = b - a, c - b
    cos = np.sum(u * v, axis=1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)
    return np.degrees(np.arccos(np.clip(cos, -1, 1)))


def test_bake_follows_the_rig(tmp_path):
    report = rigel.bake([WALK], rig=BAKE_RIG, out=tmp_path, jobs=1, quiet=True)
    assert report is not None and len(report["clips"]) == 1
    row = report["clips"][0]
    assert row["status"] in ("ok", "suspect"), row
    baked = rigel.load(str(tmp_path / "walk.bvh"))
    source = rigel.load(str(WALK))
    assert baked.clip.num_frames == source.clip.num_frames
    # The rig's hand target, recomputed here from the baked pose's chest (the arm chain does not
    # move the chest): the baked right hand sits on it.
    s = baked.skeleton
    pos, _ = rigel.forward_kinematics(s, baked.clip)
    t = np.arange(baked.clip.num_frames) * baked.clip.frame_time
    chest = s.find("Spine1")  # scripts/names.lua: the CMU skeleton's spine2 is "Spine1"
    assert chest >= 0
    target = pos[:, chest] + np.stack(
        [-3 + 1.5 * np.cos(2 * np.pi * t), 1.5 * np.sin(2 * np.pi * t), np.full_like(t, 6)], 1)
    error = np.linalg.norm(pos[:, s.find("RightHand")] - target, axis=1)
    assert np.median(error) < 0.05, np.median(error)
    src_pos, _ = rigel.forward_kinematics(source.skeleton, source.clip)
    assert np.median(np.linalg.norm(src_pos[:, s.find("RightHand")] - target, axis=1)) > 1


def test_bake_per_frame_records(tmp_path):
    report = rigel.bake(WALK, rig=BAKE_RIG, out=tmp_path, frames_report=tmp_path / "frames",
                        jobs=1, quiet=True)
    row = report["clips"][0]
    records = row["records"]
    assert len(records) == rigel.load(WALK).clip.num_frames == row["frames"]
    names = [e["name"] for e in row["records_header"]["effectors"]]
    assert "RightHand" in names
    # The records' hand targets are the rig's: the test recomputes them from the baked chest.
    baked = rigel.load(tmp_path / "walk.bvh")
    s = baked.skeleton
    pos, _ = rigel.forward_kinematics(s, baked.clip)
    t = np.arange(len(records)) * baked.clip.frame_time
    want = pos[:, s.find("Spine1")] + np.stack(
        [-3 + 1.5 * np.cos(2 * np.pi * t), 1.5 * np.sin(2 * np.pi * t), np.full_like(t, 6)], 1)
    got = np.array([next(e["target"] for e in r["effectors"] if e["name"] == "RightHand")
                    for r in records])
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_bake_failure_is_an_error_with_the_report(tmp_path):
    rig = tmp_path / "broken.lua"
    rig.write_text("return function(scene, clip, ctx)\n  error('no rig here')\nend\n")
    with pytest.raises(rigel.Error) as caught:
        rigel.bake([WALK], rig=rig, out=tmp_path / "out", jobs=1, quiet=True)
    assert "no rig here" in str(caught.value.report)
    assert "broken.lua:2" in str(caught.value.report)


def test_retarget_keeps_the_knee_bend(data_dir, tmp_path):
    target = data_dir / "assimp_misc" / "Boxing_Toes.bvh"
    mapping = SOURCE / "samples" / "retarget" / "cmu_to_motion_analysis.xml"
    report = rigel.retarget([WALK], target, map=mapping, pin_feet=True, out=tmp_path, jobs=1,
                            quiet=True)
    assert report["clips"][0]["status"] in ("ok", "suspect")
    result = rigel.load(str(tmp_path / "walk.bvh"))
    assert result.skeleton.names == rigel.load(str(target)).skeleton.names
    source = rigel.load(str(WALK))
    src = _knee_angles(source, "LeftUpLeg", "LeftLeg", "LeftFoot")
    out = _knee_angles(result, "LeftHip", "LeftKnee", "LeftAnkle")
    assert np.mean(np.abs(src - out)) < 10, np.mean(np.abs(src - out))
    xml = rigel.suggest_map(WALK, target)
    assert "<bone" in xml and 'source="Hips"' in xml
