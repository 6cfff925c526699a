"""Meshes, skins and blend shapes as arrays, checked against the glTF file read by the test's own
accessor reader (samples/elbow_corrective/arm.gltf: a skinned arm with one morph target)."""
import base64
import json

import numpy as np
import pytest

import rigel
from conftest import SOURCE

ARM = SOURCE / "samples" / "elbow_corrective" / "arm.gltf"
COMPONENTS = {5126: np.float32, 5125: np.uint32, 5123: np.uint16, 5121: np.uint8}
WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def read_gltf(path):
    gltf = json.loads(path.read_text())
    uri = gltf["buffers"][0]["uri"]
    data = base64.b64decode(uri.split(",", 1)[1])

    def accessor(i):
        a = gltf["accessors"][i]
        view = gltf["bufferViews"][a["bufferView"]]
        start = view.get("byteOffset", 0) + a.get("byteOffset", 0)
        width = WIDTH[a["type"]]
        out = np.frombuffer(data, COMPONENTS[a["componentType"]], a["count"] * width, start)
        return out.reshape(a["count"], width) if width > 1 else out
    return gltf, accessor


def test_mesh_arrays_are_the_file():
    gltf, accessor = read_gltf(ARM)
    primitive = gltf["meshes"][0]["primitives"][0]
    scene = rigel.load(ARM)
    (mesh,) = scene.meshes
    assert mesh.name == "Arm" and mesh.skinned
    np.testing.assert_allclose(mesh.positions, accessor(primitive["attributes"]["POSITION"]),
                               atol=1e-6)
    np.testing.assert_allclose(mesh.normals, accessor(primitive["attributes"]["NORMAL"]),
                               atol=1e-6)
    assert np.array_equal(mesh.triangles.ravel(), accessor(primitive["indices"]))
    joints = accessor(primitive["attributes"]["JOINTS_0"])
    weights = accessor(primitive["attributes"]["WEIGHTS_0"])
    names = [gltf["nodes"][j]["name"] for j in gltf["skins"][0]["joints"]]
    skin = [scene.skeleton.names[j] for j in mesh.skin_joints]
    # Per vertex: the same weight on the same joint (rigel's slots may be ordered differently).
    for v in range(len(mesh.positions)):
        want = {names[j]: w for j, w in zip(joints[v], weights[v]) if w > 0}
        got = {skin[j]: w for j, w in zip(mesh.vertex_joints[v], mesh.vertex_weights[v]) if w > 0}
        assert want.keys() == got.keys(), v
        np.testing.assert_allclose([got[k] for k in want], list(want.values()), atol=1e-6)
    # Bind transforms are the inverse of the inverse bind matrices (column-major in glTF).
    inverse_bind = accessor(gltf["skins"][0]["inverseBindMatrices"]).reshape(-1, 4, 4)
    inverse_bind = np.transpose(inverse_bind, (0, 2, 1))
    np.testing.assert_allclose(mesh.bind_world @ inverse_bind, np.tile(np.eye(4), (3, 1, 1)),
                               atol=1e-6)


def test_morph_target_and_weights():
    gltf, accessor = read_gltf(ARM)
    primitive = gltf["meshes"][0]["primitives"][0]
    scene = rigel.load(ARM)
    (target,) = scene.meshes[0].morph_targets
    dense = accessor(primitive["targets"][0]["POSITION"])
    # Sparse: the vertices it moves (the file's 1e-18 float noise on vertices 32..39 moves none).
    moved = np.flatnonzero(np.abs(dense).max(axis=1) > 1e-9)
    assert np.array_equal(target.vertices, moved)
    np.testing.assert_allclose(target.position_deltas, dense[moved], atol=1e-6)
    assert scene.clip.weight_channels == [("Arm", "ElbowCorrective")]
    assert scene.clip.weights.shape == (scene.clip.num_frames, 1)
    # A view: writes go into the clip.
    scene.clip.weights[3, 0] = 0.75
    assert scene.clip.weights[3, 0] == 0.75


def test_views_keep_the_scene_alive():
    positions = rigel.load(ARM).meshes[0].positions
    import gc
    gc.collect()
    _, accessor = read_gltf(ARM)
    np.testing.assert_allclose(positions, accessor(0), atol=1e-6)


def test_polygons_are_the_files(data_dir):
    """The corpus's quad mesh: 1056 quads, each a fan of two triangles; a triangle file has none."""
    (mesh,) = rigel.load(data_dir / "fbx" / "assimp" / "animation_with_skeleton.fbx").meshes
    assert mesh.polygon_triangles.tolist() == [2] * 1056
    assert len(mesh.triangles) == 2112
    (arm,) = rigel.load(ARM).meshes
    assert len(arm.polygon_triangles) == 0


def test_save_says_what_the_format_drops(tmp_path):
    scene = rigel.load(ARM)
    assert rigel.save(scene, tmp_path / "arm.glb") == []
    with pytest.warns(UserWarning, match="BVH holds no mesh"):
        dropped = rigel.save(scene, tmp_path / "arm.bvh")
    assert any("BVH holds no mesh: 1 mesh not written" in line for line in dropped), dropped
    assert any("BVH holds no blend shape" in line for line in dropped), dropped
