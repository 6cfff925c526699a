#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora in BUILD/seeds/<harness>/ and their work folders in
BUILD/run/<harness>/corpus (kept between runs: the corpus grows).

usage: make_corpus.py BUILD SHARED_DATA SOURCE_DIR

bvh:          every BVH of SHARED_DATA, samples/ and tests/ cut to its hierarchy and first 2
              motion rows ("Frames: 2"), plus the first 3000 bytes of each (truncated heads).
bone_map:     every .xml under samples/ and SHARED_DATA.
report_merge: the committed seeds (tests/fuzz/seeds/report_merge).
lua_api:      the committed seeds and 16 fixed pseudo-random byte strings.
fbx_scan:     every .fbx under 200 KB of SHARED_DATA, samples/ and tests/, plus the first 4000
              bytes of each (truncated files).
The committed seeds of tests/fuzz/seeds/<harness>/ are always included.
"""
import os
import random
import shutil
import sys


def files(root, ext):
    out = []
    if not os.path.isdir(root):
        return out
    for d, _, names in os.walk(root):
        if os.sep + "build" in d or os.sep + "." in d:
            continue
        out += [os.path.join(d, n) for n in names if n.lower().endswith(ext)]
    return sorted(out)


def bvh_head(data, rows=2):
    """The hierarchy and the first `rows` motion rows, with Frames: adjusted."""
    text = data.decode("latin-1")
    at = text.find("MOTION")
    if at < 0:
        return None
    lines = text[at:].splitlines()
    if len(lines) < 3:
        return None
    motion = [l for l in lines[3:] if l.strip()][:rows]
    out = text[:at] + "MOTION\nFrames: %d\n%s\n%s\n" % (len(motion), lines[2], "\n".join(motion))
    return out.encode("latin-1")


def main():
    build, shared, source = sys.argv[1:4]
    seeds = os.path.join(build, "seeds")
    for harness in ("bvh", "bone_map", "report_merge", "lua_api", "fbx_scan"):
        d = os.path.join(seeds, harness)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        os.makedirs(os.path.join(build, "run", harness, "corpus"), exist_ok=True)
        committed = os.path.join(source, "tests", "fuzz", "seeds", harness)
        for f in files(committed, ""):
            shutil.copy(f, os.path.join(d, "committed_" + os.path.basename(f)))

    n = 0
    bvhs = files(shared, ".bvh") + files(os.path.join(source, "samples"), ".bvh") + \
        files(os.path.join(source, "tests"), ".bvh")
    for i, path in enumerate(bvhs):
        with open(path, "rb") as f:
            data = f.read()
        head = bvh_head(data)
        if head:
            with open(os.path.join(seeds, "bvh", "%02d_head.bvh" % i), "wb") as f:
                f.write(head)
            n += 1
        with open(os.path.join(seeds, "bvh", "%02d_cut.bvh" % i), "wb") as f:
            f.write(data[:3000])
        n += 1

    maps = files(os.path.join(source, "samples"), ".xml") + files(shared, ".xml")
    for i, path in enumerate(maps):
        shutil.copy(path, os.path.join(seeds, "bone_map", "%02d.xml" % i))
        n += 1

    fbxs = files(shared, ".fbx") + files(os.path.join(source, "samples"), ".fbx") + \
        files(os.path.join(source, "tests"), ".fbx")
    for i, path in enumerate(fbxs):
        if os.path.getsize(path) > 200 * 1024:
            continue
        with open(path, "rb") as f:
            data = f.read()
        with open(os.path.join(seeds, "fbx_scan", "%03d.fbx" % i), "wb") as f:
            f.write(data)
        with open(os.path.join(seeds, "fbx_scan", "%03d_cut.fbx" % i), "wb") as f:
            f.write(data[:4000])
        n += 2

    rng = random.Random(18)
    for i in range(16):
        with open(os.path.join(seeds, "lua_api", "random_%02d" % i), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(16, 400))))
        n += 1
    print("fuzz corpora: %d generated seed files in %s" % (n, seeds))


if __name__ == "__main__":
    main()
