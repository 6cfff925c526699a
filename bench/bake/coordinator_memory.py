#!/usr/bin/env python3
"""Peak memory of the `rigel bake` coordinator over a long batch of tiny clips.

Writes N copies of a 2-joint, 2-frame BVH into a temporary folder (copies, not hard links:
`rigel bake` takes hard links to one file as one input), bakes them with a rig script that returns
the clip unchanged, at -j2 with worker processes, and reports for each N:
  - the coordinator's own peak resident memory, two ways: VmHWM of its /proc/PID/status, polled
    every 50 ms until it exits (the last sample is taken a few ms before the exit): the figure to
    read; and the report's summary.peak_rss_mb.coordinator (getrusage(RUSAGE_SELF) when the
    report is written), which also counts the peak of the process that started rigel (Linux
    keeps ru_maxrss across vfork + exec), so it is never below this script's own memory. Neither
    counts the worker processes (wait4's ru_maxrss, as /usr/bin/time -v reports it, would: it
    includes the reaped descendants);
  - the wall time.
Flat coordinator memory: the figures at 10,000 and 100,000 clips differ by under 5 MB.

  bench/bake/coordinator_memory.py --rigel build/cli/rigel [--clips 10000 100000] [--jobs 2]
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

BVH = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Knee
\t{
\t\tOFFSET 0 -40 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 -40 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 90 0 0 0 0 0 0 0
0 90 0 0 10 0 5 0 0
"""

RIG = "return function(scene, clip, ctx) return clip end\n"


def make_library(root, clips):
    lib = os.path.join(root, "lib%d" % clips)
    if os.path.isfile(os.path.join(lib, "done")):
        return lib
    shutil.rmtree(lib, ignore_errors=True)
    os.makedirs(lib)
    for k in range(clips):
        with open(os.path.join(lib, "c%06d.bvh" % k), "w") as f:
            f.write(BVH)
    open(os.path.join(lib, "done"), "w").close()
    return lib


def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def bake(rigel, root, lib, jobs, clips):
    out = os.path.join(root, "out%d" % clips)
    report = os.path.join(root, "report%d.json" % clips)
    shutil.rmtree(out, ignore_errors=True)
    rig = os.path.join(root, "rig.lua")
    with open(rig, "w") as f:
        f.write(RIG)
    start = time.monotonic()
    err_file = open(os.path.join(root, "stderr%d.txt" % clips), "w+")  # not a pipe: it fills
    proc = subprocess.Popen([rigel, "bake", "--no-progress", "--rig", rig, "-j", str(jobs),
                             "--out", out, "--report", report, lib],
                            stderr=err_file, text=True)
    hwm = 0
    while proc.poll() is None:
        kb = vm_hwm_kb(proc.pid)
        if kb is not None:
            hwm = max(hwm, kb)
        time.sleep(0.05)
    seconds = time.monotonic() - start
    err_file.seek(max(0, os.path.getsize(err_file.name) - 2000))  # a warning per clip: the tail
    err = err_file.read()
    err_file.close()
    if proc.returncode != 0:
        raise SystemExit("rigel bake failed (%d): %s" % (proc.returncode, err))
    # The summary ends the report: read its tail only (loading a 100,000-row report would grow
    # this process, whose peak the next rigel inherits through vfork + exec in ru_maxrss).
    with open(report, "rb") as f:
        f.seek(max(0, os.path.getsize(report) - 4096))
        tail = f.read().decode("utf-8", "replace")
    summary = json.loads("{" + tail[tail.rindex('"summary"'):])["summary"]
    shutil.rmtree(out, ignore_errors=True)
    return {"clips": clips, "ok": summary["ok"], "seconds": round(seconds, 1),
            "coordinator_vmhwm_mb": round(hwm / 1024.0, 2),
            "coordinator_report_mb": round(summary["peak_rss_mb"]["coordinator"], 2),
            "workers_mb": round(summary["peak_rss_mb"]["workers"], 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rigel", required=True)
    parser.add_argument("--clips", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(),
                                                      "rigel_coordinator_memory"))
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    for clips in args.clips:
        lib = make_library(args.dir, clips)
        print(json.dumps(bake(os.path.abspath(args.rigel), args.dir, lib, args.jobs, clips)),
              flush=True)
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
