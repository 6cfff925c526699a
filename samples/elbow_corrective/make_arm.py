#!/usr/bin/env python3
"""Writes arm.gltf: a three-joint arm (Shoulder, Elbow, Wrist) with a skinned tube and one blend
shape, "ElbowCorrective", that thickens the elbow; the clip "bend" turns the elbow from 0 to 120
degrees about Z over 31 frames (30 fps) and leaves the shape's weight at 0. The rig script drives
the weight from the elbow's bend.

usage: python3 make_arm.py > arm.gltf
"""
import base64
import json
import math
import struct
import sys

RINGS = [i * 0.05 for i in range(13)]  # x of each ring: 0 .. 0.6 m
SIDES = 8
RADIUS = 0.05
FRAMES = 31


def ring_vertex(x, k, radius):
    a = 2 * math.pi * k / SIDES
    return (x, radius * math.cos(a), radius * math.sin(a)), (0.0, math.cos(a), math.sin(a))


def main():
    positions, normals, joints, weights, bulge = [], [], [], [], []
    for x in RINGS:
        for k in range(SIDES):
            p, n = ring_vertex(x, k, RADIUS)
            positions += p
            normals += n
            # Upper arm below 0.25, forearm above 0.35, a linear blend between.
            w_elbow = min(max((x - 0.25) / 0.1, 0.0), 1.0)
            joints += [0, 1 if w_elbow > 0 else 0, 0, 0]
            weights += [1.0 - w_elbow, w_elbow, 0.0, 0.0]
            # The corrective: rings near the elbow pushed out, most at the elbow itself.
            push = 0.02 * max(0.0, 1.0 - abs(x - 0.3) / 0.1)
            bulge += [0.0, push * n[1], push * n[2]]
    indices = []
    for r in range(len(RINGS) - 1):
        for k in range(SIDES):
            a, b = r * SIDES + k, r * SIDES + (k + 1) % SIDES
            c, d = a + SIDES, b + SIDES
            indices += [a, b, d, a, d, c]
    ibm = []
    for x in (0.0, 0.3, 0.6):  # inverse bind: translate by -x
        ibm += [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -x, 0, 0, 1]
    times = [f / 30.0 for f in range(FRAMES)]
    rotations = []
    for f in range(FRAMES):
        half = math.radians(120.0 * f / (FRAMES - 1)) / 2
        rotations += [0.0, 0.0, math.sin(half), math.cos(half)]

    blob = bytearray()
    views, accessors = [], []

    def add(values, fmt, component, kind, count, target=None, bounds=None):
        while len(blob) % 4:
            blob.append(0)
        data = struct.pack("<%d%s" % (len(values), fmt), *values)
        view = {"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)}
        if target:
            view["target"] = target
        blob.extend(data)
        views.append(view)
        accessor = {"bufferView": len(views) - 1, "componentType": component, "count": count,
                    "type": kind}
        if bounds:
            accessor["min"], accessor["max"] = bounds
        accessors.append(accessor)
        return len(accessors) - 1

    def bounds3(v):
        return ([min(v[i::3]) for i in range(3)], [max(v[i::3]) for i in range(3)])

    n = len(positions) // 3
    pos = add(positions, "f", 5126, "VEC3", n, 34962, bounds3(positions))
    nrm = add(normals, "f", 5126, "VEC3", n, 34962)
    jnt = add(joints, "H", 5123, "VEC4", n, 34962)
    wgt = add(weights, "f", 5126, "VEC4", n, 34962)
    idx = add(indices, "I", 5125, "SCALAR", len(indices), 34963)
    tgt = add(bulge, "f", 5126, "VEC3", n, 34962, bounds3(bulge))
    inv = add(ibm, "f", 5126, "MAT4", 3)
    tin = add(times, "f", 5126, "SCALAR", FRAMES, None, ([0.0], [times[-1]]))
    rot = add(rotations, "f", 5126, "VEC4", FRAMES)
    gltf = {
        "asset": {"version": "2.0", "generator": "rigel samples/elbow_corrective/make_arm.py"},
        "scene": 0,
        "scenes": [{"nodes": [0, 3]}],
        "nodes": [
            {"name": "Shoulder", "children": [1]},
            {"name": "Elbow", "translation": [0.3, 0, 0], "children": [2]},
            {"name": "Wrist", "translation": [0.3, 0, 0]},
            {"name": "Arm", "mesh": 0, "skin": 0},
        ],
        "skins": [{"joints": [0, 1, 2], "inverseBindMatrices": inv, "skeleton": 0}],
        "meshes": [{
            "name": "Arm",
            "primitives": [{
                "attributes": {"POSITION": pos, "NORMAL": nrm, "JOINTS_0": jnt, "WEIGHTS_0": wgt},
                "indices": idx,
                "targets": [{"POSITION": tgt}],
            }],
            "weights": [0.0],
            "extras": {"targetNames": ["ElbowCorrective"]},
        }],
        "animations": [{
            "name": "bend",
            "samplers": [{"input": tin, "output": rot, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}],
        }],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{
            "byteLength": len(blob),
            "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
        }],
    }
    json.dump(gltf, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
