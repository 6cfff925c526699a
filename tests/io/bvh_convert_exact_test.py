#!/usr/bin/env python3
"""`rigel convert IN.bvh OUT.bvh` keeps every number of every corpus BVH bit for bit.

    bvh_convert_exact_test.py RIGEL DATA_DIR WORK_DIR

For each .bvh under DATA_DIR (every folder, wild/ included), converts it with the rigel command
and compares the files' numbers as doubles (Python's float() is correctly rounded): every OFFSET
(End Sites included) in order, the frame time and every MOTION value. Exit 1 on any difference.
"""
import os
import struct
import subprocess
import sys


def numbers(path):
    """The file's numbers; motion rows after the declared 'Frames:' count (which rigel ignores
    with a warning) are left out."""
    text = open(path, encoding="utf-8", errors="replace").read()
    head, _, motion = text.partition("MOTION")
    values = []
    channels = 0
    tokens = head.split()
    for i, token in enumerate(tokens):
        if token == "OFFSET":
            values += [float(v) for v in tokens[i + 1:i + 4]]
        elif token == "CHANNELS":
            channels += int(tokens[i + 1])
    frames = int(motion.split("Frames:", 1)[1].split()[0])
    rows = motion.split("Frame Time:", 1)[1].split()
    values += [float(v) for v in rows[:1 + frames * channels]]
    return values


def bits(v):
    return struct.pack("<d", v)


def main():
    rigel, data, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(data) for f in fs
                   if f.endswith(".bvh"))
    if not files:
        print("no BVH under", data)
        return 1
    failed = 0
    for i, path in enumerate(files):
        out = os.path.join(work, "converted_%d.bvh" % i)
        run = subprocess.run([rigel, "convert", path, out], capture_output=True, text=True)
        if run.returncode != 0:
            print("FAILED: rigel convert", path, run.stderr)
            failed += 1
            continue
        a, b = numbers(path), numbers(out)
        bad = sum(1 for x, y in zip(a, b) if bits(x) != bits(y)) + abs(len(a) - len(b))
        first = next((k for k, (x, y) in enumerate(zip(a, b)) if bits(x) != bits(y)), None)
        rel = os.path.relpath(path, data)
        if bad:
            print("%s: %d of %d numbers differ (first: #%s %r -> %r)"
                  % (rel, bad, len(a), first, a[first] if first is not None else None,
                     b[first] if first is not None else None))
            failed += 1
        else:
            print("%s: %d numbers, all bit for bit" % (rel, len(a)))
    print("%d of %d files bit for bit" % (len(files) - failed, len(files)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
