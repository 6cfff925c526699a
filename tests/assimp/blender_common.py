# What the Blender-side scripts of the cross-checks share (blender_world.py,
# blender_scale_dump.py): imported from their own folder inside Blender.
import bpy


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
