"""rigel.check: the plausibility checks as Python objects, against edits whose effect the test
knows, and against what `rigel bake` reported on the same output."""
import re

import numpy as np
import pytest

import rigel
from conftest import SOURCE

WALK = SOURCE / "samples" / "cmu_walk" / "walk.bvh"


def _copy(scene, values):
    return rigel.scene_with(scene, [rigel.Clip(values, scene.clip.frame_time)])


def test_an_unchanged_clip_is_plausible():
    walk = rigel.load(WALK)
    report = rigel.check(walk, _copy(walk, walk.clip.values))
    assert not report.suspect and report.findings == []
    assert {"height", "hips_height", "foot_slide", "pops"} <= set(report.ran)
    assert report.humanoid and report.frames == walk.clip.num_frames


def test_lifted_hips_are_found():
    walk = rigel.load(WALK)
    values = walk.clip.values.copy()
    up = "XYZ".index(walk.axes["up"]["axis"][1])
    values[:, walk.skeleton.channel_types.index("XYZ"[up] + "position")] += 20  # scene units
    report = rigel.check(walk, _copy(walk, values))
    assert report.suspect
    finding = next(f for f in report.findings if f.check == "hips_height")
    # The reason's figures: the output's hips 20 units (in metres) above the source's.
    metres = [float(x) for x in re.findall(r"([0-9.]+) m\b", finding.reason)[:2]]
    assert metres[0] - metres[1] == pytest.approx(20 * walk.unit_metres_or_estimate, rel=0.05)
    assert finding.value > finding.limit and "hips_height" in repr(report)


def test_a_pop_is_found_at_its_frame():
    walk = rigel.load(WALK)
    values = walk.clip.values.copy()
    knee = walk.skeleton.channel_begin(walk.skeleton.find("LeftLeg"))
    values[17, knee:knee + 3] += np.radians(60)  # one frame jumps
    report = rigel.check(walk, _copy(walk, values), kind="bake")
    pops = [f for f in report.findings if f.check == "pops"]
    assert pops and pops[0].frame in (16, 17, 18), report


def test_bad_arguments():
    walk = rigel.load(WALK)
    with pytest.raises(ValueError, match="kind"):
        rigel.check(walk, walk, kind="magic")
    with pytest.raises(IndexError):
        rigel.check(walk, walk, output_take=1)
    with pytest.raises(ValueError, match="scale"):
        rigel.check(walk, walk, scale=-1)


def test_the_same_checks_as_the_bake_report(tmp_path):
    report = rigel.bake([WALK], rig=SOURCE / "samples" / "cmu_walk" / "bake_rig.lua",
                        out=tmp_path, jobs=1, quiet=True)
    row = report["clips"][0]
    mine = rigel.check(rigel.load(WALK), rigel.load(tmp_path / "walk.bvh"), kind="bake")
    assert mine.ran == row["checks"]["ran"]
    assert [f.check for f in mine.findings] == [f["check"] for f in row["checks"]["findings"]]
