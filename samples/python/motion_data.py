#!/usr/bin/env python3
"""rigel from Python, end to end: load a mocap clip as NumPy arrays, compute foot heights and
ground contacts with rigel's forward kinematics, plot them with matplotlib to a PNG, bake the
clip through a Lua rig (samples/cmu_walk/bake_rig.lua) and retarget it onto another character.

    PYTHONPATH=build/python /usr/bin/python3 samples/python/motion_data.py --out out/python

The clip is ../shared/data/cmu_cgspeed/01_01.bvh when the corpus is there, else the bundled
samples/cmu_walk/walk.bvh (same CMU skeleton); the retarget target is the corpus's Motion
Analysis skeleton (Boxing_Toes.bvh, with samples/retarget's bone map), else the bundled
samples/basics/walk.bvh (automatic map).
"""
import argparse
import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import rigel  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parents[1]
DATA = pathlib.Path(os.environ.get("RIGEL_SHARED_DATA", SOURCE.parent / "shared" / "data"))


def foot_heights_and_contacts(scene, feet, height_m=0.06, speed_m_s=0.4):
    """Height above the ground of each foot joint per frame (metres), and contacts: a foot is
    planted when it is within `height_m` of the ground and slower than `speed_m_s`."""
    skeleton, clip = scene.skeleton, scene.clip
    metres = scene.unit_metres_or_estimate or 1.0
    up = scene.axes["up"]["axis"]  # "+Y", "-Z", ...
    axis, sign = "XYZ".index(up[1]), (1.0 if up[0] == "+" else -1.0)
    positions, _ = rigel.forward_kinematics(skeleton, clip, rotations="none")
    joints = [skeleton.find(name) for name in feet]
    feet_pos = positions[:, joints] * metres  # F x feet x 3, metres
    heights = sign * feet_pos[..., axis]
    heights -= np.percentile(heights, 2)  # the ground: where the feet are lowest
    velocity = np.gradient(feet_pos, clip.frame_time, axis=0)
    velocity[..., axis] = 0.0
    speed = np.linalg.norm(velocity, axis=-1)
    contacts = (heights < height_m) & (speed < speed_m_s)
    return heights, contacts


def plot(heights, contacts, feet, frame_time, path):
    t = np.arange(heights.shape[0]) * frame_time
    fig, axes = plt.subplots(len(feet), 1, sharex=True, figsize=(9, 2.2 * len(feet)))
    for k, (ax, name) in enumerate(zip(np.atleast_1d(axes), feet)):
        ax.plot(t, heights[:, k] * 100, lw=1, label="height")
        ax.fill_between(t, 0, heights[:, k].max() * 100, where=contacts[:, k], alpha=0.25,
                        color="tab:green", label="contact")
        ax.set_ylabel(name + " (cm)")
        ax.legend(loc="upper right")
    np.atleast_1d(axes)[-1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="out/python", help="output folder")
    parser.add_argument("--clip", help="a clip on the CMU skeleton (default: see above)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_clip = DATA / "cmu_cgspeed" / "01_01.bvh"
    clip_path = pathlib.Path(args.clip) if args.clip else (
        corpus_clip if corpus_clip.exists() else SOURCE / "samples" / "cmu_walk" / "walk.bvh")

    # 1. Load: the clip's values are a frames x channels NumPy view into rigel's clip.
    scene = rigel.load(str(clip_path))
    clip = scene.clip
    print("motion_data: %s: %d joints, %d frames x %d channels at %.0f fps, up %s" % (
        clip_path.name, scene.skeleton.num_joints, clip.num_frames, clip.num_channels,
        clip.frame_rate, scene.axes["up"]["axis"]))

    # 2. Foot heights and contacts from rigel's FK of every frame, 3. plotted.
    feet = ["LeftToeBase", "RightToeBase"]
    heights, contacts = foot_heights_and_contacts(scene, feet)
    for k, name in enumerate(feet):
        starts = np.count_nonzero(np.diff(contacts[:, k].astype(int)) == 1)
        print("motion_data: %s: %.0f %% of frames in contact, %d contacts, height %.1f..%.1f cm"
              % (name, 100 * contacts[:, k].mean(), starts, heights[:, k].min() * 100,
                 heights[:, k].max() * 100))
    png = out / "foot_contacts.png"
    plot(heights, contacts, feet, clip.frame_time, png)
    print("motion_data: wrote %s" % png)

    # 4. Bake through the Lua rig (sandboxed, in a worker process, as `rigel bake` runs it).
    report = rigel.bake([clip_path], rig=SOURCE / "samples" / "cmu_walk" / "bake_rig.lua",
                        out=out / "baked", jobs=1, quiet=True)
    row = report["clips"][0]
    print("motion_data: baked %s: %s, %s frames" % (row["output"], row["status"],
                                                     row.get("frames")))

    # 5. Retarget onto another character.
    target = DATA / "assimp_misc" / "Boxing_Toes.bvh"
    options = {"map": SOURCE / "samples" / "retarget" / "cmu_to_motion_analysis.xml"}
    if not target.exists():
        target, options = SOURCE / "samples" / "basics" / "walk.bvh", {}
    report = rigel.retarget([clip_path], target, out=out / "retargeted", pin_feet=True, jobs=1,
                            quiet=True, **options)
    row = report["clips"][0]
    result = rigel.load(row["output"])
    print("motion_data: retargeted onto %s: %s, %d frames on %d joints" % (
        target.name, row["status"], result.clip.num_frames, result.skeleton.num_joints))
    print("motion_data: every step done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
