"""rigel from Python: animation files as NumPy arrays, forward kinematics in bulk, and the rigel
command line's convert, bake (Lua rig scripts) and retarget.

    import rigel
    scene = rigel.load("walk.bvh")               # rigel.Error names file and line on bad input
    clip = scene.clip                            # the first take
    clip.values                                  # frames x channels float64 view (radians)
    pos, rot = rigel.forward_kinematics(scene.skeleton, clip)   # F x J x 3, F x J x 3 x 3
    rigel.save(scene, "walk.glb")
    report = rigel.bake(["walk.bvh"], rig="bake_rig.lua", out="baked")

Lengths are in the scene's unit (scene.unit_metres, or rigel.load(..., unit="m")); angles are
radians inside rigel (BVH files hold degrees).
"""
import json as _json
import os as _os
import sys as _sys
import tempfile as _tempfile

from ._rigel import (CheckReport, Clip, Error, Finding, Mesh, MorphTarget, Rig, Scene, Skeleton,
                     __version__, check, forward_kinematics, load, run_command, save, scene_with)

__all__ = [
    "CheckReport", "Finding", "check", "Clip", "Error", "Rig", "Mesh", "MorphTarget", "Scene", "Skeleton", "__version__", "bake",
    "convert", "forward_kinematics", "info", "load", "retarget", "run", "run_command", "save",
    "scene_with", "suggest_map", "command_args",
]


def info(path, *, unit="file", bvh_translation="auto", unit_in="", up="", forward=""):
    """What `rigel info --json PATH` prints, as a dict: joints, channels, takes, axes with their
    provenance, the body's height, unit, translation conventions, meshes, warnings."""
    from ._rigel import info_json
    return _json.loads(info_json(path, unit=unit, bvh_translation=bvh_translation,
                                 unit_in=unit_in, up=up, forward=forward))


# Keyword arguments whose CLI option is not --<name with dashes>.
_SPELLING = {"jobs": "--jobs", "reduce_keys": "--reduce-keys"}


def command_args(options):
    """CLI options from keyword arguments: name=value -> --name value (underscores become
    dashes), True -> --name, False/None -> nothing, a list -> the option repeated."""
    args = []
    for name, value in options.items():
        flag = _SPELLING.get(name, "--" + name.replace("_", "-"))
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, _os.fspath(v) if isinstance(v, _os.PathLike) else str(v)]
        else:
            args += [flag, _os.fspath(value) if isinstance(value, _os.PathLike) else str(value)]
    return args


def _run(args, quiet):
    code, out, err = run_command([str(a) for a in args])
    if err and not quiet:
        _sys.stderr.write(err)
    if code != 0:
        lines = [l for l in err.splitlines() if "error" in l] or err.splitlines()[-3:]
        raise Error("rigel %s failed (exit %d): %s" % (args[0], code, "\n".join(lines)))
    return out, err


def _paths(paths):
    if isinstance(paths, (str, _os.PathLike)):
        paths = [paths]
    return [_os.fspath(p) for p in paths]


def convert(input, output, *, quiet=False, **options):
    """`rigel convert INPUT OUTPUT` with the CLI's options as keywords (unit="m", take="Walk",
    strict=True, reduce_keys=True, error_mm=0.5, up="z", bvh_translation="add", ...).
    Returns the messages it printed (warnings, suspect outputs) as a list of lines; raises
    rigel.Error when it fails."""
    _, err = _run(["convert", _os.fspath(input), _os.fspath(output)] + command_args(options),
                  quiet)
    return err.splitlines()


def _with_report(command, positional, options, quiet):
    report = options.pop("report", None)
    temporary = None
    if report is None:
        fd, temporary = _tempfile.mkstemp(suffix=".json", prefix="rigel-report-")
        _os.close(fd)
        report = temporary
    options["report"] = report
    options.setdefault("no_progress", True)
    try:
        try:
            _run([command] + command_args(options) + positional, quiet)
        except Error as e:
            data = _read_report(report)
            if data is not None:
                e.report = data
            raise
        return _with_records(_read_report(report))
    finally:
        if temporary is not None:
            _os.unlink(temporary)


def _with_records(report):
    """Each row written with frames_report=DIR gets its per-frame records: row["records"] is the
    list of that JSON-lines file's frame objects (its header is row["records_header"])."""
    for row in (report or {}).get("clips", []):
        path = row.get("frames_report")
        if not path:
            continue
        with open(path, encoding="utf-8") as f:
            lines = [_json.loads(line) for line in f if line.strip()]
        if lines:
            row["records_header"], row["records"] = lines[0], lines[1:]
    return report


def _read_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            return _json.load(f)
    except (OSError, ValueError):
        return None


def bake(clips, rig, *, out=None, quiet=False, **options):
    """`rigel bake --rig RIG CLIPS...`: bakes every clip (files, folders, @list.txt) through a Lua
    rig script, sandboxed as the CLI runs it, in worker processes. Keywords are the CLI's options
    (out, format="glb", jobs=2, take=..., frames_report=DIR, strict=True, reduce_keys=True, ...).
    Returns the JSON report as a dict (one row per clip with its solve statistics and the
    plausibility checks of the output; with frames_report=DIR each row's "records" holds the
    per-frame solve records: effectors' targets and errors, iterations, limit hits); raises
    rigel.Error when a clip fails (its .report has the report)."""
    if out is not None:
        options["out"] = out
    options["rig"] = rig
    return _with_report("bake", _paths(clips), options, quiet)


def retarget(clips, target, *, out=None, quiet=False, **options):
    """`rigel retarget --target TARGET CLIPS...` with the CLI's options as keywords (map=...,
    pin_feet=True, root_motion="extract", out=..., format=..., jobs=...). Returns the JSON quality
    report as a dict; raises rigel.Error when a clip fails."""
    if out is not None:
        options["out"] = out
    options["target"] = target
    return _with_report("retarget", _paths(clips), options, quiet)


def suggest_map(source, target):
    """The bone map `rigel retarget --suggest-map SOURCE TARGET` prints (XML text)."""
    out, _ = _run(["retarget", "--suggest-map", _os.fspath(source), _os.fspath(target)], True)
    return out


def run(script, args=(), *, quiet=False, **options):
    """`rigel run SCRIPT ARGS...` (out=DIR, allow_io=True, ...): runs a Lua script in a confined
    child process; returns what it printed on stdout."""
    out, _ = _run(["run"] + command_args(options) + [_os.fspath(script)] +
                  [str(a) for a in args], quiet)
    return out
