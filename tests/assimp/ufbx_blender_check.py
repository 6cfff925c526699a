#!/usr/bin/env python3
"""Blender cross-check of the ufbx corpus (label blender, issue 33 item 5).

For every binary FBX 7.x file of DATA/ufbx: rigel converts it to glb and to FBX; Blender
(blender_world.py) reads the source with Blender's own FBX importer and both outputs with its glTF
and FBX importers, and writes every bone's and object's world transform on every frame of the
first take (two Blender runs per half of the corpus: the sources, then the outputs). This script
compares them, independently of rigel's own numbers: the world position
of every joint rigel kept, on every frame, against Blender's reading of the source, relative to
the figure's size (the diagonal of the box around the compared points over the take).

    ufbx_blender_check.py RIGEL DATA WORKDIR [--report OUT.json] [--only NAME]

Expected outcomes come from tests/data/ufbx_expected.csv: for each file, `read` (every frame
agrees within 1e-4 of the size in both outputs), `refused` (rigel exits 1 with the message given),
`blender-cannot-read` (Blender's importer fails on the source), `blender-differs` (Blender's
reading of the source is known to differ, with the reason, listed in docs/formats.md; Blender's
readings of rigel's glb and FBX outputs must still agree with each other, or, where Blender
composes what both FBX files state its own way, its reading of rigel's FBX must agree with its
reading of the source) or `known-wrong` (an
open fault of rigel's: "max E: reason"; the test fails when the error grows past E, and when the
file comes to agree, so that the row is updated); a file in the folder without a row fails.
"""
import concurrent.futures
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BOUND = 1e-4


def run(cmd, timeout=600):
    # Blender's embedded Python finds its standard library through PATH: a Python other than
    # Debian's first on the PATH (pyenv) would hide Debian's numpy from Blender's glTF add-on.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if ".pyenv" not in d)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def positions(dump):
    """{name: [(x, y, z) per frame]}; a name that is both a bone and an object keeps the bone."""
    out = {}
    for i, name in enumerate(dump["names"]):
        if name in out:
            continue
        out[name] = [tuple(row[10 * i:10 * i + 3]) for row in dump["pose"]]
    return out


def scales(dump):
    out = {}
    for i, name in enumerate(dump["names"]):
        if name not in out:
            out[name] = [tuple(row[10 * i + 7:10 * i + 10]) for row in dump["pose"]]
    return out


def compare(source, output, joints):
    """Worst position error over joints and frames relative to the size, where, and what is
    missing. An output of one frame against a source whose take never moves is that one pose
    held (rigel reads a take without curves as the pose the file stores)."""
    src, out = positions(source), positions(output)
    names = [j for j in joints if j in src]
    missing = [j for j in joints if j not in src or j not in out]
    pts = [p for j in names for p in src[j]]
    if not pts:
        return None, missing, 0.0, None
    lo = [min(p[k] for p in pts) for k in range(3)]
    hi = [max(p[k] for p in pts) for k in range(3)]
    size = math.dist(lo, hi)
    if size < 1e-9:
        size = 1.0
    n_src, n_out = len(source["pose"]), len(output["pose"])
    held = False
    if n_out == 1 and n_src > 1:
        held = all(math.dist(src[j][f], src[j][0]) <= 1e-9 * size
                   for j in names for f in range(n_src))
    # Frame f of a reading is f / fps from its take's start. Where the file states no rate, Blender
    # and rigel each assume one (25 and 30): the frames compared are those at the same times.
    fps_src, fps_out = source.get("fps") or 1.0, output.get("fps") or 1.0
    if held:
        pairs = [(f, 0) for f in range(n_src)]
    elif abs(fps_src - fps_out) <= 1e-9 * fps_src:
        pairs = [(f, f) for f in range(min(n_src, n_out))]
        if n_src != n_out:
            missing.append(f"frames {n_src} vs {n_out}")
    else:
        pairs = [(f, round(f * fps_out / fps_src)) for f in range(n_src)]
        pairs = [(f, g) for f, g in pairs if abs(f / fps_src - g / fps_out) < 1e-6 and g < n_out]
        if abs((n_src - 1) / fps_src - (n_out - 1) / fps_out) > 1e-6 or len(pairs) < min(2, n_src):
            missing.append(f"frames {n_src} at {fps_src} fps vs {n_out} at {fps_out} fps")
    worst, where = 0.0, None
    for j in names:
        if j not in out:
            continue
        for f, g in pairs:
            e = math.dist(src[j][f], out[j][g]) / size
            if e > worst:
                worst, where = e, (j, f)
    return worst, missing, size, where


KEYED_COPY = None  # tests/assimp/fbx_keyed_copy, when given


def convert(rigel, path, work, expected):
    """rigel's half for one file: its glb and FBX outputs, its joints, and the source Blender reads
    (the keyed copy where the file's curves need it). Returns the result so far, with the final
    outcome when rigel refused or failed."""
    name = os.path.basename(path)
    stem = os.path.splitext(name)[0]
    glb = os.path.join(work, stem + ".glb")
    fbx = os.path.join(work, stem + ".out.fbx")
    res = {"file": name, "expected": expected[0] if expected else None}
    r = run([rigel, "convert", path, glb])
    if r.returncode != 0:
        res["outcome"] = "refused"
        res["message"] = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        return res
    r2 = run([rigel, "convert", path, fbx])
    r3 = run([rigel, "info", "--json", path])
    if r2.returncode != 0 or r3.returncode != 0:
        res["outcome"] = "error"
        res["message"] = (r2.stderr + r3.stderr).strip()[-400:]
        return res
    res["warnings"] = [l for l in r.stderr.splitlines() if "warning" in l]
    res["joint_names"] = json.loads(r3.stdout)["joint_names"]
    res["glb"], res["fbx"] = glb, fbx
    # Blender 3.4 interpolates FBX curves linearly; rigel evaluates them as keyed. Where the file's
    # curves differ between keys, Blender reads rigel's copy keyed on every frame
    # (fbx_keyed_copy), so that the comparison checks the rest: transforms, axes, units, takes.
    res["source"] = path
    if KEYED_COPY:
        keyed = os.path.join(work, stem + ".keyed.fbx")
        k = run([KEYED_COPY, path, keyed])
        if k.returncode == 0:
            res["source"] = keyed
            res["keyed"] = k.stdout.strip()
    return res


def blender(jobs, work, tag):
    """Runs blender_world.py over jobs (lists of specs, one list per file), a Blender process per
    half of the list (Blender's start-up, about 3 s, was most of a file's time when each file had
    its own two runs). Returns, per job, the list of readings, or a string saying how Blender
    failed; a failed batch is run again one job at a time, so one file's crash is its own."""
    script = os.path.join(HERE, "blender_world.py")

    def once(batch, name):
        dump = os.path.join(work, name + ".json")
        if os.path.exists(dump):
            os.remove(dump)
        specs = [s for job in batch for s in job]
        r = run(["blender", "-b", "--factory-startup", "--python-exit-code", "1", "--python",
                 script, "--", dump] + specs, timeout=900)
        if r.returncode != 0 or not os.path.exists(dump):
            return None, r.stderr[-400:]
        readings = json.load(open(dump))
        out, at = [], 0
        for job in batch:
            out.append(readings[at:at + len(job)])
            at += len(job)
        return out, None

    def half(args):
        batch, name = args
        out, error = once(batch, name)
        if out is not None:
            return out
        if len(batch) == 1:
            return [error]
        return [x for i, job in enumerate(batch) for x in half(([job], f"{name}.{i}"))]

    mid = (len(jobs) + 1) // 2
    halves = [(jobs[:mid], tag + ".a"), (jobs[mid:], tag + ".b")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        parts = list(pool.map(half, [h for h in halves if h[0]]))
    return [x for part in parts for x in part]


def check_files(rigel, paths, work, expected):
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(
            lambda p: convert(rigel, p, work, expected.get(os.path.basename(p))), paths))
    todo = [res for res in results if "outcome" not in res]
    # Blender: the sources' takes first (their fps and frame counts decide the glbs' sampling).
    for res, reading in zip(todo, blender([["fbx:" + res["source"]] for res in todo], work,
                                           "sources")):
        if isinstance(reading, str):
            res["outcome"] = "blender-failed"
            res["message"] = reading
        elif "error" in reading[0]:
            res["outcome"] = "blender-cannot-read"
            res["message"] = reading[0]["error"]
        else:
            res["source_reading"] = reading[0]
    todo = [res for res in todo if "outcome" not in res]
    jobs = [[f"gltf:{res['glb']}:{res['source_reading']['fps']}:{len(res['source_reading']['pose'])}",
             "fbx:" + res["fbx"]] for res in todo]
    for res, outs in zip(todo, blender(jobs, work, "outputs")):
        if isinstance(outs, str):
            res["outcome"] = "blender-failed"
            res["message"] = outs
            continue
        source, joints = res.pop("source_reading"), res["joint_names"]
        # Bones Blender's FBX importer connected although their location is animated (see
        # blender_world.disconnect_bones): disconnected before the reading, named in the line.
        freed = sorted(set(source.get("disconnected", [])) | set(outs[1].get("disconnected", []))
                       if not isinstance(outs[1], str) else source.get("disconnected", []))
        if freed:
            res["disconnected"] = freed
        res["outcome"] = "read"
        res["frames"] = len(source["pose"])
        res["joints"] = len(joints)
        for label, out in zip(("glb", "fbx"), outs):
            if "error" in out:
                res[label] = {"error": out["error"]}
                continue
            worst, missing, size, where = compare(source, out, joints)
            res[label] = {"worst": worst, "missing": missing, "size": size, "where": where}
        if all("error" not in o for o in outs):
            # Blender's readings of rigel's two outputs against each other: where Blender's reading
            # of the source is known to differ, the outputs must still say the same.
            worst, missing, size, where = compare(outs[0], outs[1], joints)
            res["glb_vs_fbx"] = {"worst": worst, "missing": missing, "size": size, "where": where}
    for res in results:
        for key in ("joint_names", "source", "source_reading"):
            res.pop(key, None)
        for key in ("glb", "fbx"):
            if isinstance(res.get(key), str):
                del res[key]
    return results


def main():
    global KEYED_COPY
    rigel, data, work = sys.argv[1:4]
    report = None
    only = None
    args = sys.argv[4:]
    while args:
        if args[0] == "--report":
            report, args = args[1], args[2:]
        elif args[0] == "--only":
            only, args = args[1], args[2:]
        elif args[0] == "--keyed-copy":
            KEYED_COPY, args = args[1], args[2:]
        else:
            sys.exit(f"unknown argument {args[0]}")
    folder = os.path.join(data, "ufbx")
    if not os.path.isdir(folder):
        print(f"SKIP: {folder} not found")
        return 77
    if shutil.which("blender") is None:
        print("SKIP: blender is not installed (.ci/install-deps installs it)")
        return 77
    expected = {}
    with open(os.path.join(HERE, "..", "data", "ufbx_expected.csv")) as f:
        for row in csv.DictReader(r for r in f if not r.startswith("#")):
            expected[row["file"]] = (row["outcome"], row["detail"])
    files = sorted(n for n in os.listdir(folder) if re.search(r"_7\d00_binary", n))
    if only:
        files = [n for n in files if only in n]
    os.makedirs(work, exist_ok=True)
    results = check_files(rigel, [os.path.join(folder, n) for n in files], work, expected)
    failures = []
    counts = {}
    for res in results:
        exp = expected.get(res["file"])
        got = res["outcome"]
        line = f"{res['file']}: {got}"
        ok = True
        if got == "read":
            parts = []
            for label in ("glb", "fbx"):
                c = res[label]
                if "error" in c:
                    parts.append(f"{label} Blender error")
                    ok = False
                    continue
                parts.append(f"{label} worst {c['worst']:.2e} of size {c['size']:.4g}"
                             + (f" at {c['where'][0]} frame {c['where'][1]}" if c["where"] else "")
                             + (f" missing {c['missing']}" if c["missing"] else ""))
                if c["worst"] is None or c["worst"] > BOUND or c["missing"]:
                    ok = False
            c = res.get("glb_vs_fbx")
            # Where Blender composes what a file states its own way (InheritType, which it ignores),
            # its reading of rigel's FBX, which states the same, must still match the source's.
            f = res["fbx"]
            fbx_like_source = "error" not in f and f["worst"] is not None and \
                f["worst"] <= BOUND and not f["missing"]
            outputs_agree = c is not None and c["worst"] is not None and c["worst"] <= BOUND \
                and not c["missing"]
            if c is not None and c["worst"] is not None:
                parts.append(f"glb vs fbx {c['worst']:.2e}")
            line += f" ({res['frames']} frames, {res['joints']} joints): " + "; ".join(parts)
            if "disconnected" in res:
                line += f" [bones Blender connected, disconnected: {', '.join(res['disconnected'])}]"
            if "keyed" in res:
                line += f" [Blender read the keyed copy: {res['keyed']}]"
            if ok:
                got = "read"
            elif exp and exp[0] == "blender-differs" and (outputs_agree or fbx_like_source):
                got = "blender-differs"
            elif exp and exp[0] == "known-wrong":
                # An open fault of rigel's, with the worst error it had when it was listed: worse
                # fails (a regression), and so does agreeing (the row must then say "read").
                ceiling = float(exp[1].split()[1].rstrip(":"))
                worst = max((res[k]["worst"] or 0.0) for k in ("glb", "fbx") if "error" not in res[k])
                got = "known-wrong" if worst <= ceiling else f"worse than the listed {ceiling}"
            else:
                got = "disagrees"
        elif "message" in res:
            line += ": " + res["message"].replace("\n", " ")[-300:]
        counts[got] = counts.get(got, 0) + 1
        if exp is None:
            failures.append(line + "  [no expected outcome in tests/data/ufbx_expected.csv]")
        elif got != exp[0]:
            failures.append(line + f"  [expected {exp[0]}: {exp[1]}]")
        elif got == "refused" and exp[1] and exp[1] not in res.get("message", ""):
            failures.append(line + f"  [expected the message to say '{exp[1]}']")
        print(("ok   " if line not in failures and not any(line in x for x in failures)
               else "FAIL ") + line)
    print("counts:", json.dumps(counts, sort_keys=True))
    if report:
        with open(report, "w") as f:
            json.dump(results, f, indent=1)
    if failures:
        print(f"\n{len(failures)} of {len(results)} files not as expected:")
        for x in failures:
            print("  " + x)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
