# Blender 3.4: import each file and report where the figure stands in Blender's world (Z up): the
# probe behind tests/data/ground_truth.csv (tests/data/README.md).
#   blender -b --factory-startup --python blender_probe.py -- OUT.jsonl FILE...
import bpy, sys, json, re, math
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool
args = sys.argv[sys.argv.index('--') + 1:]
out = open(args[0], 'w')
def imp(path):
    l = path.lower()
    if l.endswith('.bvh'):
        import builtins
        plain_open = builtins.open
        builtins.open = lambda f, mode="r", *a, **k: plain_open(f, mode.replace("U", ""), *a, **k)
        try:
            bpy.ops.import_anim.bvh(filepath=path, update_scene_fps=True, update_scene_duration=True)
        finally:
            builtins.open = plain_open
    elif l.endswith('.fbx'):
        bpy.ops.import_scene.fbx(filepath=path, use_custom_props=False)
    elif l.endswith('.glb') or l.endswith('.gltf'):
        bpy.ops.import_scene.gltf(filepath=path)
    elif l.endswith('.dae'):
        bpy.ops.wm.collada_import(filepath=path)
def tokens(name):
    name = re.sub(r'([a-z])([A-Z])', r'\1 \2', name.split(':')[-1])
    return [t for t in re.split(r'[^A-Za-z]+', name.lower()) if t]
for path in args[1:]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    rec = {'file': path}
    try:
        imp(path)
    except Exception as e:
        rec['error'] = str(e).splitlines()[-1][:200] if str(e) else type(e).__name__
        out.write(json.dumps(rec) + '\n'); out.flush(); continue
    arms = [o for o in bpy.data.objects if o.type == 'ARMATURE']
    rec['armatures'] = len(arms)
    # Points: pose bones of the largest armature, plus every empty (FBX Null nodes).
    items = []
    if arms:
        arm = max(arms, key=lambda o: len(o.pose.bones))
        items += [('bone', arm, b) for b in arm.pose.bones]
    items += [('obj', o, None) for o in bpy.data.objects if o.type == 'EMPTY']
    def name(it): return it[2].name if it[0] == 'bone' else it[1].name
    def pos(it):
        return (it[1].matrix_world @ it[2].head) if it[0] == 'bone' else it[1].matrix_world.translation
    rec['points'] = len(items)
    if not items:
        out.write(json.dumps(rec) + '\n'); out.flush(); continue
    head = [it for it in items if 'head' in tokens(name(it)) and not set(tokens(name(it))) & {'end', 'top', 'nub', 'site', 'marker'}]
    feet = [it for it in items if set(tokens(name(it))) & {'foot', 'ankle', 'toe', 'toes', 'toebase'} and not set(tokens(name(it))) & {'ik', 'marker'}]
    sc = bpy.context.scene
    fs, fe = sc.frame_start, sc.frame_end
    acts = [a for a in bpy.data.actions]
    if acts:
        fs = int(min(a.frame_range[0] for a in acts)); fe = int(max(a.frame_range[1] for a in acts))
    n = min(16, fe - fs + 1)
    frames = sorted(set(int(round(fs + i * (fe - fs) / max(1, n - 1))) for i in range(n)))
    dirs, hs, ext = [], [[] for _ in range(6)], []
    for f in frames:
        sc.frame_set(f)
        pts = [pos(it) for it in items]
        lo = [min(p[i] for p in pts) for i in range(3)]; hi = [max(p[i] for p in pts) for i in range(3)]
        ext.append([hi[i] - lo[i] for i in range(3)])
        if head and feet:
            h = pos(head[0])
            fp = [pos(it) for it in feet]
            mid = sum(fp, start=h * 0) / len(fp)
            v = h - mid
            if v.length > 0: dirs.append(list(v.normalized()))
            for a in range(3):
                hs[a].append(h[a] - min(p[a] for p in fp))
                hs[a + 3].append(max(p[a] for p in fp) - h[a])
    rec['head'] = name(head[0]) if head else None
    rec['feet'] = [name(it) for it in feet][:4]
    rec['frames'] = len(frames)
    if dirs:
        m = [sum(d[i] for d in dirs) / len(dirs) for i in range(3)]
        rec['dir'] = [round(x, 3) for x in m]
        a = max(range(3), key=lambda i: abs(m[i]))
        k = a if m[a] > 0 else a + 3
        v = sorted(hs[k]); rec['height'] = round(v[int(round(0.95 * (len(v) - 1)))], 4)
        rec['blender_up'] = ('+' if m[a] > 0 else '-') + 'XYZ'[a]
    rec['extent'] = [round(sorted(e[i] for e in ext)[len(ext) // 2], 4) for i in range(3)]
    out.write(json.dumps(rec) + '\n'); out.flush()
