"""The FBX transform model, checked from the file itself (issue 33 item 1): every joint rigel reads
from an FBX file is placed, on every frame where the file keys it, where the FBX SDK's definition
puts it, composed here from the file's own records (fbx_records.py: Blender's parser for binary
files, a tokenizer for ASCII; no Assimp, nothing of rigel's reader) and compared with rigel's
forward kinematics. It covers the ASCII files, which Blender 3.4 cannot open, and the binary ones.

The FBX SDK's node transform (FbxNode, "Computing transformation matrix"):
  L = T * Roff * Rp * Rpre * R * Rpost^-1 * Rp^-1 * Soff * Sp * S * Sp^-1
(R in the node's RotationOrder, Rpre and Rpost in XYZ), and its InheritType:
  0 eInheritRrSs  world rotation = parent's world rotation * local; world scale = parent's world
                  scale times the local one, axis by axis (no shear);
  1 eInheritRSrs  the plain matrix product parent * local (Maya's transforms);
  2 eInheritRrs   the parent's scale is left out of the child's rotation and scale (Maya's
                  segment scale compensation).
The child's translation and pivots are carried by the parent's whole world matrix in every mode.

Curves are evaluated at their keys only (where every curve of a joint's chain has a key), so the
check needs no curve evaluator. rigel's positions may be turned to +Y up: the comparison first
fits the one rotation about the origin that best maps the file's points onto rigel's (the axis
conversion), then measures every joint on every compared frame against it.

Blender 3.4's importer ignores InheritType (every node composed as 1): on maya_slime, whose scale
is animated above Rrs joints, its reading differs from the SDK's (tests/data/ufbx_expected.csv
lists it as Blender's difference); this test is what says rigel's reading is the SDK's.
"""
import math

import numpy as np
import pytest

import fbx_records
from conftest import DATA, rigel

KTIME = 46186158000  # FBX time units per second
# FBX RotationOrder 0-5, first applied first; 6, eSphericXYZ (MotionBuilder), as XYZ, as the FBX
# importers of Blender and ufbx take it (wild/orangeduck_100style-retarget's 21 joints state it).
ORDERS = ["xyz", "xzy", "yzx", "yxz", "zxy", "zyx", "xyz"]


def euler(degrees, order="xyz"):
    m = np.eye(3)
    for axis in order:
        a = math.radians(degrees["xyz".index(axis)])
        c, s = math.cos(a), math.sin(a)
        r = {"x": [[1, 0, 0], [0, c, -s], [0, s, c]],
             "y": [[c, 0, s], [0, 1, 0], [-s, 0, c]],
             "z": [[c, -s, 0], [s, c, 0], [0, 0, 1]]}[axis]
        m = np.array(r) @ m
    return m


def affine(linear=None, translation=None):
    m = np.eye(4)
    if linear is not None:
        m[:3, :3] = linear
    if translation is not None:
        m[:3, 3] = translation
    return m


def child(node, name):
    return next((e for e in node.elems if e.id == name), None)


class FbxFile:
    def __init__(self, path, take=None):
        doc = fbx_records.read(path)
        if doc is None:
            pytest.skip("Blender's FBX add-on (its parse_fbx.py) is not installed")
        self.objects = {o.props[0]: o for o in child(doc, "Objects").elems if o.props}
        self.templates = {}
        definitions = child(doc, "Definitions")
        for t in definitions.elems if definitions else []:
            template = child(t, "PropertyTemplate")
            if t.id == "ObjectType" and t.props and t.props[0] == "Model" and template:
                self.templates = self._props(template)
        links = [c.props for c in child(doc, "Connections").elems if c.id in ("C", "Connect")]
        by_kind = lambda kind: [l for l in links if l[0] == kind]  # noqa: E731
        self.parent = {}
        for _, src, dst, *_ in by_kind("OO"):
            a, b = self.objects.get(src), self.objects.get(dst)
            if a is not None and b is not None and a.id == "Model" and b.id == "Model":
                self.parent[src] = dst  # not a bone's link to its skin cluster
        # The take: its stack, the layers under it, their curve nodes.
        stacks = [o for o in self.objects.values() if o.id == "AnimationStack"]
        stack = next((s for s in stacks if s.props[1] == take), stacks[0] if stacks else None)
        self.start = 0.0
        layers = set()
        if stack is not None:
            self.start = self._props(stack).get("LocalStart", [0])[0] / KTIME
            layers = {src for _, src, dst, *_ in by_kind("OO") if dst == stack.props[0]}
        nodes = {src for _, src, dst, *_ in by_kind("OO") if dst in layers}
        curves = {}
        for _, src, dst, *rest in by_kind("OP"):
            obj = self.objects.get(src)
            if obj is not None and obj.id == "AnimationCurve" and rest:
                keys = (child(obj, "KeyTime").props[0], child(obj, "KeyValueFloat").props[0])
                curves.setdefault(dst, {})[rest[0]] = keys
        self.curves = {}  # (model, property) -> {axis: (ticks, values)}
        for _, src, dst, *rest in by_kind("OP"):
            if src in nodes and rest and str(rest[0]).startswith("Lcl "):
                for channel, keys in curves.get(src, {}).items():
                    if str(channel)[-1] in "XYZ":
                        self.curves.setdefault((dst, rest[0]), {})["XYZ".index(channel[-1])] = keys
        self.models = {o.props[1]: i for i, o in self.objects.items() if o.id == "Model"}

    @staticmethod
    def _props(obj):
        p70 = child(obj, "Properties70")
        return {} if p70 is None else {p.props[0]: list(p.props[4:]) for p in p70.elems}

    def props(self, model):
        return {**self.templates, **self._props(self.objects[model])}

    def chain(self, model):
        out = []
        while model in self.objects:
            out.append(model)
            model = self.parent.get(model)
        return out[::-1]

    def key_times(self, model):
        """Ticks at which every curve of the model's chain has a key (None: nothing animated)."""
        common = None
        for m in self.chain(model):
            for (owner, _), axes in self.curves.items():
                if owner == m:
                    for ticks, _ in axes.values():
                        common = set(ticks) if common is None else common & set(ticks)
        return None if common is None else sorted(common)

    def vec(self, model, prop, tick, default):
        p = self.props(model).get(prop, default)
        out = [float(p[a]) if len(p) > a else default[a] for a in range(3)]
        for axis, (ticks, values) in self.curves.get((model, prop), {}).items():
            if tick is not None:
                out[axis] = float(values[list(ticks).index(tick)])
        return np.array(out)

    def local(self, model, tick):
        """The SDK's local matrix parts: (translation, rotation, scale, pivots matrix parts)."""
        p = self.props(model)
        zero, one = [0, 0, 0], [1, 1, 1]
        v = lambda name: np.array([float(x) for x in (p.get(name) or zero)][:3])  # noqa: E731
        t = self.vec(model, "Lcl Translation", tick, zero)
        r = self.vec(model, "Lcl Rotation", tick, zero)
        s = self.vec(model, "Lcl Scaling", tick, one)
        first = lambda name, default: (p.get(name) or [default])[0]  # noqa: E731
        order = ORDERS[int(first("RotationOrder", 0))]
        rotation = euler(v("PreRotation")) @ euler(r, order) @ euler(v("PostRotation")).T
        return t, rotation, s, v("RotationOffset"), v("RotationPivot"), v("ScalingOffset"), \
            v("ScalingPivot"), int(first("InheritType", 0))

    def world_position(self, model, tick):
        """The node's world origin at `tick` (None: the rest, the stored values)."""
        world = np.eye(4)
        rot, scale = np.eye(3), np.ones(3)  # world rotation and scale, for modes 0 and 2
        exact_trs = True  # whether `world` is rot * diag(scale) (no shear)
        for m in self.chain(model):
            t, r, s, roff, rp, soff, sp, inherit = self.local(m, tick)
            # L = T Roff Rp [R] Rp^-1 Soff Sp [S] Sp^-1: the translation part, and R, S.
            lead = affine(None, t + roff + rp) @ affine(r) @ affine(None, -rp + soff + sp) @ \
                affine(np.diag(s)) @ affine(None, -sp)
            origin = world @ lead @ np.array([0, 0, 0, 1.0])
            if inherit == 1:
                world = world @ lead
                exact_trs = False
            else:
                if not exact_trs:  # the parent's rotation and scale, by polar decomposition
                    u, _, vt = np.linalg.svd(world[:3, :3])
                    rot = u @ vt
                    scale = np.linalg.norm(world[:3, :3], axis=0)
                rot = rot @ r
                scale = s if inherit == 2 else scale * s
                world = affine(rot @ np.diag(scale), origin[:3])
                exact_trs = True
            world[:3, 3] = origin[:3]
        return world[:3, 3]


def best_rotation(a, b):
    """The rotation R minimising |R a - b| (Kabsch), a and b (n, 3)."""
    u, _, vt = np.linalg.svd(a.T @ b)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    return vt.T @ np.diag([1, 1, d]) @ u.T


def corpus():
    """Every FBX 7.x file of the data set (the 6.x ones are read through rigel's own upgrade, whose
    records this parser does not read the same way)."""
    if not DATA.is_dir():
        return []
    out = []
    for p in sorted(DATA.rglob("*")):
        if p.suffix.lower() != ".fbx":
            continue
        with open(p, "rb") as f:
            head = f.read(4096)
        binary = head.startswith(b"Kaydara FBX Binary")
        version = int.from_bytes(head[23:27], "little") if binary else \
            next((int(line.split(b":")[1]) for line in head.splitlines()
                  if line.strip().startswith(b"FBXVersion:")), 0)
        if version >= 7000:
            out.append(str(p.relative_to(DATA)))
    return out


MAX_TICKS = 24  # keyed times compared per joint, spread over the take (enough for every pattern)


def readable(path):
    try:
        return rigel.load(str(path))
    except rigel.Error:
        return None  # refused: its expected outcome is tests/data/ufbx_expected.csv's


# Files rigel reads otherwise than the SDK's composition, with what was measured. A strict xfail:
# the test fails when such a file comes to agree, so that the entry is removed. (Empty: the last,
# wild/orangeduck_100style-retarget's character, whose 21 RotationOrder 6 joints Assimp composed
# otherwise, toes 3.9 % of the height off, now agrees to 3e-8: rigel reads eSphericXYZ as XYZ.)
KNOWN = {}


def corpus_params():
    return [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN[n], strict=True))
            if n in KNOWN else n for n in corpus()]


@pytest.mark.parametrize("name", corpus_params())
def test_joints_are_where_the_sdk_puts_them(name):
    path = DATA / name
    scene = readable(path)
    if scene is None:
        pytest.skip("rigel refuses the file (ufbx_expected.csv holds the reason)")
    fbx = FbxFile(str(path), scene.clip.name)
    positions, _ = rigel.forward_kinematics(scene.skeleton, scene.clip)
    positions = np.asarray(positions)
    rate = 1.0 / scene.clip.frame_time
    pairs = []  # (file point, rigel point, joint, frame)
    for j, joint in enumerate(scene.skeleton.names):
        model = fbx.models.get(joint)
        if model is None:
            continue
        ticks = fbx.key_times(model)
        if ticks and len(ticks) > MAX_TICKS:
            ticks = [ticks[round(i * (len(ticks) - 1) / (MAX_TICKS - 1))] for i in range(MAX_TICKS)]
        for tick in ticks if ticks else [None]:
            f = 0 if tick is None else round((tick / KTIME - fbx.start) * rate)
            if 0 <= f < positions.shape[0] and (tick is None or
                                                abs(f / rate + fbx.start - tick / KTIME) < 1e-6):
                if tick is None and positions.shape[0] > 1 and \
                        np.ptp(positions[:, j], axis=0).max() > 0:
                    continue  # animated by rigel (a helper's curves): no rest to compare
                pairs.append((fbx.world_position(model, tick), positions[f, j], joint, f))
    if not pairs:
        pytest.skip("no joint of rigel's is a model of the file")
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    size = max(np.ptp(b, axis=0).max(), 1e-9)
    rotation = best_rotation(a, b) if len(pairs) > 2 else np.eye(3)
    errors = np.linalg.norm(a @ rotation.T - b, axis=1) / size
    k = int(np.argmax(errors))
    print(f"{name}: {len(pairs)} joint-frames, worst {errors[k]:.2e} of the size "
          f"({pairs[k][2]}, frame {pairs[k][3]})")
    assert errors[k] <= 1e-5, (name, errors[k], pairs[k][2], pairs[k][3])


def test_the_slime_is_where_the_sdk_and_plain_matrices_part():
    """maya_slime's top joint is where the modes matter: composed as plain matrices (Blender's
    reading) it lies over 20 cm (a fifth of the figure) away on some keyed frame, so the test
    above fails if rigel ignores InheritType."""
    path = DATA / "ufbx/maya_slime_7500_binary.fbx"
    if not path.exists():
        pytest.skip(f"{path} not found")
    fbx = FbxFile(str(path))
    model = fbx.models["Slime_002:bnd_top"]
    sdk = {tick: fbx.world_position(model, tick) for tick in fbx.key_times(model)}
    for m in fbx.chain(model):  # every node composed as InheritType 1
        p70 = child(fbx.objects[m], "Properties70")
        for p in p70.elems if p70 else []:
            if p.props[0] == "InheritType":
                p.props[4] = 1
    parts = max(np.linalg.norm(sdk[t] - fbx.world_position(model, t)) for t in sdk)
    assert parts > 20.0, parts
