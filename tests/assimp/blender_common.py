# What the Blender-side scripts of the cross-checks share (blender_dump.py, blender_world.py,
# blender_mesh_dump.py, blender_morph_dump.py, blender_scale_dump.py): imported from their own
# folder inside Blender.
import bpy

# Debian's Blender 3.4.1 ships a glTF add-on that uses numpy.bool, removed in NumPy 1.24.
import numpy
if not hasattr(numpy, "bool"):
    numpy.bool = bool


def import_file(path, **fbx_options):
    """Imports a .glb/.gltf (Blender's glTF importer) or anything else (its FBX importer, with
    `fbx_options`)."""
    if path.lower().endswith((".glb", ".gltf")):
        bpy.ops.import_scene.gltf(filepath=path)
    else:
        bpy.ops.import_scene.fbx(filepath=path, **fbx_options)


def go_to(scene, at):
    """Poses `scene` at Blender frame `at` (a fraction is a subframe) and updates the view layer."""
    scene.frame_set(int(at), subframe=at - int(at))
    bpy.context.view_layer.update()


class FbxRecords:
    """An FBX file's records as Blender's FBX add-on parses them (its importer's own parser), with
    the frame rate its GlobalSettings state (25 when none, as the importer assumes)."""

    def __init__(self, path):
        from io_scene_fbx import parse_fbx
        from io_scene_fbx.fbx_utils import FBX_FRAMERATES, FBX_KTIME
        self.ktime = FBX_KTIME
        self.root, _ = parse_fbx.parse(path)
        settings = self.props(self.child(self.root, b"GlobalSettings"))
        custom = settings.get(b"CustomFrameRate", [0] * 5)[4]
        time_mode = settings.get(b"TimeMode", [0] * 5)[4]
        fps = {eid: val for val, eid in FBX_FRAMERATES[1:]}.get(time_mode, custom or 25.0)
        self.fps = fps if fps > 0 else 25.0

    @staticmethod
    def child(elem, name):
        return next((e for e in elem.elems if e.id == name), None)

    def props(self, elem):
        p70 = self.child(elem, b"Properties70")
        return {} if p70 is None else {p.props[0]: p.props for p in p70.elems}

    def objects(self, kind):
        """The Objects records of type `kind` (b"AnimationStack", b"Model", ...)."""
        return [e for e in self.child(self.root, b"Objects").elems if e.id == kind]

    def span(self, stack):
        """(LocalStart, LocalStop) of an AnimationStack record, in seconds."""
        p = self.props(stack)
        return (p.get(b"LocalStart", [0] * 5)[4] / self.ktime,
                p.get(b"LocalStop", [0] * 5)[4] / self.ktime)


def clear(scene):
    """The factory scene again before the next file: no object, action, armature, mesh, shape key,
    material, camera or light of a file read before, and the factory frame rate (the FBX importer
    sets the scene's rate from its file; the glTF importer keys at the scene's rate)."""
    scene.render.fps, scene.render.fps_base = 24, 1.0
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    for coll in (bpy.data.actions, bpy.data.armatures, bpy.data.meshes, bpy.data.shape_keys,
                 bpy.data.materials, bpy.data.cameras, bpy.data.lights):
        for item in list(coll):
            try:
                coll.remove(item)
            except (TypeError, RuntimeError):
                pass
