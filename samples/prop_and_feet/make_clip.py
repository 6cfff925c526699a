#!/usr/bin/env python3
"""Writes walk_prop.bvh: samples/cmu_walk/walk.bvh (a 40-frame walk on the CMU cgspeed skeleton)
with the joints a production rig adds to a mocap skeleton:

- RightForeArmTwist1, RightForeArmTwist2: roll bones under RightForeArm at 1/3 and 2/3 of the
  way to the hand (three rotation channels, no animation of their own: rig.lua drives them);
- Prop: a six-channel prop joint under Hips (rig.lua parents it to a hand);
- LookAt: a three-channel target under Hips that circles in front of the face (the head aims at
  it).

Usage: python3 make_clip.py ../cmu_walk/walk.bvh > walk_prop.bvh
"""
import math
import sys


def parse(lines):
    """The hierarchy as nested dicts, and the lines of MOTION onward."""
    root = None
    stack = []
    i = 0
    while i < len(lines):
        words = lines[i].split()
        i += 1
        if not words:
            continue
        if words[0] in ("ROOT", "JOINT"):
            joint = {"name": words[1], "offset": None, "channels": [], "children": [],
                     "end": None}
            if stack:
                stack[-1]["children"].append(joint)
            else:
                root = joint
            stack.append(joint)
        elif words[0] == "End":
            stack.append({"end_site": True})
        elif words[0] == "OFFSET":
            if "end_site" in stack[-1]:
                stack[-2]["end"] = words[1:4]
            else:
                stack[-1]["offset"] = words[1:4]
        elif words[0] == "CHANNELS":
            stack[-1]["channels"] = words[2:]
        elif words[0] == "}":
            stack.pop()
        elif words[0] == "MOTION":
            return root, lines[i - 1:]
    raise SystemExit("no MOTION section")


def walk(joint):
    yield joint
    for child in joint["children"]:
        yield from walk(child)


def write(joint, depth, out):
    tab = "\t" * depth
    out.append(f"{tab}{'ROOT' if depth == 0 else 'JOINT'} {joint['name']}")
    out.append(f"{tab}{{")
    out.append(f"{tab}\tOFFSET {' '.join(joint['offset'])}")
    out.append(f"{tab}\tCHANNELS {len(joint['channels'])} {' '.join(joint['channels'])}")
    for child in joint["children"]:
        write(child, depth + 1, out)
    if joint["end"] is not None:
        out.append(f"{tab}\tEnd Site")
        out.append(f"{tab}\t{{")
        out.append(f"{tab}\t\tOFFSET {' '.join(joint['end'])}")
        out.append(f"{tab}\t}}")
    out.append(f"{tab}}}")


def main():
    lines = open(sys.argv[1]).read().splitlines()
    root, motion = parse(lines)
    old = [(j["name"], c) for j in walk(root) for c in j["channels"]]
    joints = {j["name"]: j for j in walk(root)}
    forearm = joints["RightForeArm"]
    hand = joints["RightHand"]
    rot = ["Zrotation", "Yrotation", "Xrotation"]
    for k in (1, 2):
        off = [f"{float(v) * k / 3:.5f}" for v in hand["offset"]]
        forearm["children"].append({"name": f"RightForeArmTwist{k}", "offset": off,
                                    "channels": list(rot), "children": [],
                                    "end": [f"{float(v) / 3:.5f}" for v in hand["offset"]]})
    root["children"].append({"name": "Prop", "offset": ["0", "0", "0"],
                             "channels": ["Xposition", "Yposition", "Zposition"] + rot,
                             "children": [], "end": ["0", "0", "4"]})
    root["children"].append({"name": "LookAt", "offset": ["0", "0", "0"],
                             "channels": ["Xposition", "Yposition", "Zposition"], "children": [],
                             "end": None})
    new = [(j["name"], c) for j in walk(root) for c in j["channels"]]
    index = {key: i for i, key in enumerate(old)}
    out = ["HIERARCHY"]
    write(root, 0, out)
    out += motion[:3]
    for f, row in enumerate(motion[3:]):
        values = row.split()
        t = f / 30.0
        extra = {
            # The prop starts in front of the right hip; the parent constraint carries it.
            ("Prop", "Xposition"): -6.0, ("Prop", "Yposition"): -2.0, ("Prop", "Zposition"): 2.0,
            # The look-at point circles 12 units ahead of the hips, near head height.
            ("LookAt", "Xposition"): 8.0 * math.cos(2 * math.pi * t),
            ("LookAt", "Yposition"): 7.0 + 2.0 * math.sin(2 * math.pi * t),
            ("LookAt", "Zposition"): 12.0,
        }
        row_out = []
        for key in new:
            if key in index:
                row_out.append(values[index[key]])
            else:
                row_out.append(f"{extra.get(key, 0.0):.4f}")
        out.append(" ".join(row_out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
