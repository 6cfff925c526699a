"""Shared fixtures of the Python tests (ctest label `python`): a tiny BVH with mixed channel
layouts, an independent BVH parser and an independent NumPy forward kinematics, written here
from the BVH definition and sharing nothing with rigel's C++."""
import os
import pathlib
import re

import numpy as np
import pytest

rigel = pytest.importorskip("rigel", reason="the rigel Python module was not built")

SOURCE = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("RIGEL_SHARED_DATA", SOURCE.parent / "shared" / "data"))

# Three joints and an End Site: a root with position channels last (ZXY rotations first), a joint
# with YXZ, one with two rotation channels only (XZ), values beyond 180 degrees.
TINY_BVH = """HIERARCHY
ROOT Hips
{
\tOFFSET 1 2 3
\tCHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0.5
\t\tCHANNELS 3 Yrotation Xrotation Zrotation
\t\tJOINT Head
\t\t{
\t\t\tOFFSET 0.25 8 -1
\t\t\tCHANNELS 2 Xrotation Zrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0 3 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames: 3
Frame Time: 0.04
10 20 30 0.5 91 -2 5 -6 7 1e-1 270
-45.5 0 12 1 90 -1.25 0 0 0 -30 30
181 -190 33.3 -0.75 89.5 0 15 25 -35 45 -55
"""


def parse_bvh(text):
    """An independent BVH reader: joints (name, parent, offset, channels) and the motion rows."""
    tokens = re.findall(r"[^\s{}]+|[{}]", text)
    joints, stack, i, pending = [], [], 0, None
    while tokens[i] != "MOTION":
        t = tokens[i]
        if t in ("ROOT", "JOINT"):
            pending = {"name": tokens[i + 1], "parent": stack[-1] if stack else -1}
            i += 2
        elif t == "End":
            pending = {"end": True}
            i += 2
        elif t == "{":
            if pending.get("end"):
                stack.append(None)
            else:
                joints.append(pending)
                stack.append(len(joints) - 1)
            i += 1
        elif t == "}":
            stack.pop()
            i += 1
        elif t == "OFFSET":
            pending["offset"] = [float(v) for v in tokens[i + 1:i + 4]]
            i += 4
        elif t == "CHANNELS":
            n = int(tokens[i + 1])
            pending["channels"] = tokens[i + 2:i + 2 + n]
            i += 2 + n
        else:
            i += 1
    frames = int(tokens[i + 2])
    frame_time = float(tokens[i + 5])
    values = np.array([float(v) for v in tokens[i + 6:]]).reshape(frames, -1)
    return joints, frame_time, values


def _axis_rotation(axis, radians):
    c, s = np.cos(radians), np.sin(radians)
    m = np.zeros(radians.shape + (3, 3))
    a, b = {"X": (1, 2), "Y": (2, 0), "Z": (0, 1)}[axis]
    k = 3 - a - b
    m[..., k, k] = 1
    m[..., a, a] = c
    m[..., b, b] = c
    m[..., a, b] = -s
    m[..., b, a] = s
    return m


def numpy_fk(joints, values_degrees):
    """World positions (F x J x 3) and rotations (F x J x 3 x 3) from BVH semantics: a joint's
    local transform is T(OFFSET + position channels) * R(rotation channels in listed order)."""
    frames = values_degrees.shape[0]
    pos = np.zeros((frames, len(joints), 3))
    rot = np.zeros((frames, len(joints), 3, 3))
    column = 0
    for j, joint in enumerate(joints):
        t = np.tile(np.array(joint["offset"]), (frames, 1))
        r = np.tile(np.eye(3), (frames, 1, 1))
        for name in joint["channels"]:
            v = values_degrees[:, column]
            column += 1
            if name.endswith("position"):
                t[:, "XYZ".index(name[0])] += v
            else:
                r = r @ _axis_rotation(name[0], np.radians(v))
        p = joint["parent"]
        if p < 0:
            pos[:, j], rot[:, j] = t, r
        else:
            pos[:, j] = pos[:, p] + np.einsum("fij,fj->fi", rot[:, p], t)
            rot[:, j] = rot[:, p] @ r
    return pos, rot


@pytest.fixture
def tiny_bvh(tmp_path):
    path = tmp_path / "tiny.bvh"
    path.write_text(TINY_BVH)
    return path


@pytest.fixture
def data_dir():
    if not DATA.is_dir():
        pytest.skip("corpus %s absent" % DATA)
    return DATA
