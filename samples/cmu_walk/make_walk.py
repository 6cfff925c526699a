#!/usr/bin/env python3
"""Writes walk.bvh: a synthetic 40-frame walk (30 fps) on the CMU cgspeed skeleton of
../shared/data/cmu_cgspeed/01_01.bvh (hierarchy copied, motion generated here).

The hips advance about 15 % slower than the stance foot sweeps back, so the planted feet slide
back and forth a little (~0.3 units): the foot-pinning rig in rig.lua is there to remove exactly that.
Usage: python3 make_walk.py HIERARCHY.txt > walk.bvh   (HIERARCHY.txt = the file's part up to
MOTION)."""
import math
import re
import sys

FPS = 30
FRAMES = 40
CYCLE = 32           # frames per gait cycle
STANCE = 0.6         # fraction of the cycle a foot is planted
AMPLITUDE = 20.0     # hip swing, degrees each way
THIGH, SHIN = 7.16, 7.49   # CMU bone lengths (units)
HIP_DROP = 1.79      # hips to hip joint, vertical
ANKLE_HEIGHT = 0.6   # planted ankle height
STANCE_KNEE = 25.0   # knee bend while planted, degrees: leaves the IK some reach
SPEED = 15.0         # hips forward speed, units per second (no-slide would be ~15.6)


def hip_angle(phase):
    """Hip flexion in degrees, + = leg forward."""
    if phase < STANCE:
        return AMPLITUDE * (1 - 2 * phase / STANCE)
    s = (phase - STANCE) / (1 - STANCE)
    return -AMPLITUDE + 2 * AMPLITUDE * (1 - math.cos(math.pi * s)) / 2


def knee_angle(phase):
    if phase < STANCE:
        return STANCE_KNEE
    s = (phase - STANCE) / (1 - STANCE)
    return STANCE_KNEE + 45.0 * math.sin(math.pi * s)


def main():
    hierarchy = open(sys.argv[1]).read()
    joints = re.findall(r"(?:ROOT|JOINT)\s+(\S+)", hierarchy)
    out = [hierarchy.rstrip("\n"), "MOTION", f"Frames: {FRAMES}", f"Frame Time: {1 / FPS:.7f}"]
    for f in range(FRAMES):
        t = f / FPS
        phase_l = (f / CYCLE) % 1.0
        phase_r = (phase_l + 0.5) % 1.0
        # Hips height that puts the planted ankle(s) at ANKLE_HEIGHT (the lower of two).
        heights = []
        for p in (phase_l, phase_r):
            if p < STANCE:
                h, k = math.radians(hip_angle(p)), math.radians(knee_angle(p))
                heights.append(ANKLE_HEIGHT + HIP_DROP + THIGH * math.cos(h) + SHIN * math.cos(h - k))
        hips_y = min(heights) if heights else 16.5
        # Per joint (Z, Y, X) in degrees; CMU channels are Zrotation Yrotation Xrotation.
        rot = {j: [0.0, 0.0, 0.0] for j in joints}
        swing = math.sin(2 * math.pi * phase_l)
        for side, phase, sign in (("Left", phase_l, -1), ("Right", phase_r, 1)):
            hip, knee = hip_angle(phase), knee_angle(phase)
            rot[side + "UpLeg"] = [sign * 20.0, 0.0, -hip]      # Z straightens the CMU leg
            rot[side + "Leg"] = [0.0, 0.0, knee]
            rot[side + "Foot"] = [0.0, 0.0, hip - knee]       # keeps the foot level
            rot[side + "Arm"] = [sign * 75.0, 0.0, sign * 15.0 * swing]
            rot[side + "ForeArm"] = [0.0, sign * -20.0, 0.0]
        rot["Spine"] = [0.0, 5.0 * swing, 0.0]
        values = [0.0, hips_y, -17.0 + SPEED * t] + rot["Hips"]
        for j in joints[1:]:
            values += rot[j]
        out.append(" ".join(f"{v:.4f}" for v in values))
    print("\n".join(out))


if __name__ == "__main__":
    main()
