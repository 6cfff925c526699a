// Meshes carried through rigel (issue 12 item 4), without Blender: the corpus's skinned and
// attached meshes are imported whole (counts checked against the FBX file's own records), written
// to glTF and FBX and read back with the same geometry, skin and deformation; BVH outputs name
// what they drop (DroppedBy).
#include <gtest/gtest.h>

#include "core/pose.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace mesh_io_test {
namespace {

using testing::TempDir;

const Mesh* FindMesh(const Scene& scene, const std::string& name) {
  for (const Mesh& m : scene.meshes) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

TEST(MeshIo, SkinnedFbxMeshIsImportedWhole) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene scene = LoadScene(testing::SharedData() + "/fbx/assimp/animation_with_skeleton.fbx");
  ASSERT_EQ(scene.meshes.size(), 1u);
  const Mesh& mesh = scene.meshes[0];
  EXPECT_EQ(mesh.name, "Cube.001");
  EXPECT_EQ(mesh.material, "Material");
  // MANIFEST.md: 14 skin clusters. 1056 quads fanned into 2112 triangles; the file's 1058
  // control points have normals by polygon corner (flat shaded): Assimp gives each of the 4224
  // corners its own vertex, and the 4220 that differ in normal, UV or skin are kept.
  EXPECT_EQ(mesh.skin_joints.size(), 14u);
  EXPECT_EQ(mesh.positions.size(), 4220u);
  std::vector<std::uint32_t> points;
  VertexClasses(mesh, false, &points);
  EXPECT_EQ(points.size(), 1058u) << "the file's control points, by position and skin";
  // Its quads: a fan of two triangles each.
  EXPECT_EQ(mesh.polygon_triangles, std::vector<std::uint32_t>(1056, 2));
  EXPECT_EQ(mesh.triangles.size(), 2112u * 3);
  EXPECT_EQ(mesh.normals.size(), mesh.positions.size());
  EXPECT_EQ(mesh.uvs.size(), mesh.positions.size());
  for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
    double total = 0;
    for (const float w : mesh.vertex_weights[v]) total += w;
    ASSERT_NEAR(total, 1.0, 1e-6) << "vertex " << v;
  }
  EXPECT_EQ(CheckMesh(*scene.skeleton, mesh), "");
}

// Out as `ext` and back through Assimp: the same deformation on every frame.
void ExpectRoundTripKeepsDeformation(const char* ext) {
  TempDir dir;
  for (const char* rel :
       {"fbx/assimp/animation_with_skeleton.fbx", "fbx/assimp/multiple_animations_test.fbx",
        "wild/Sensor-Guided-Living_vr/RobotExpressive.glb"}) {
    SCOPED_TRACE(std::string(rel) + " as " + ext);
    const Scene scene = LoadScene(testing::SharedData() + "/" + rel);
    ASSERT_FALSE(scene.meshes.empty());
    const std::string out = dir.file(std::string("out.") + ext);
    SaveScene(scene, out);
    const Scene back = LoadScene(out);
    ASSERT_EQ(back.meshes.size(), scene.meshes.size());
    const double metres = MetresPerUnit(scene);
    ASSERT_GT(metres, 0);
    const Clip& clip = scene.clips.front();
    const Clip& clip_back = back.clips.front();
    ASSERT_EQ(clip_back.num_frames(), clip.num_frames());
    Pose pose(*scene.skeleton), pose_back(*back.skeleton);
    std::vector<Eigen::Vector3d> a, b;
    for (const Mesh& mesh : scene.meshes) {
      const Mesh* m = FindMesh(back, mesh.name);
      ASSERT_NE(m, nullptr) << mesh.name;
      EXPECT_EQ(m->triangles.size(), mesh.triangles.size());
      // FBX keeps the polygons (the source's quads come back as quads), glTF has triangles.
      if (std::string(ext) == "fbx") {
        EXPECT_EQ(m->polygon_triangles, mesh.polygon_triangles) << mesh.name;
        // Control points, by position and skin (morph normal offsets come back per corner with
        // float rounding: Assimp adds a point's offset to each corner's own normal).
        Mesh shape = mesh, shape_back = *m;
        shape.morph_targets.clear();
        shape_back.morph_targets.clear();
        std::vector<std::uint32_t> points, points_back;
        VertexClasses(shape, false, &points);
        VertexClasses(shape_back, false, &points_back);
        EXPECT_EQ(points_back.size(), points.size()) << mesh.name << ": control points";
      } else {
        EXPECT_TRUE(m->polygon_triangles.empty()) << mesh.name;
      }
      EXPECT_EQ(m->material, mesh.material);
      EXPECT_EQ(m->skin_joints.size(), mesh.skin_joints.size());
      // Every triangle corner keeps its normal (float32 in both files), whether the FBX writes
      // it by control point, by corner, or through an index: compared in the world of the first
      // frame (an attached mesh's bind may be another pose than the source's; it turns with its
      // joint).
      ASSERT_EQ(m->normals.size(), m->positions.size());
      pose.SetFromRow(*scene.skeleton, clip.frame(0));
      pose_back.SetFromRow(*back.skeleton, clip_back.frame(0));
      const auto turn = [](const Mesh& x, const Pose& p) -> Eigen::Matrix3d {
        if (x.skinned() || x.attach_joint < 0) return Eigen::Matrix3d::Identity();
        return p.world[x.attach_joint].linear() * x.attach_bind.linear().transpose();
      };
      const Eigen::Matrix3d r = turn(mesh, pose), r_back = turn(*m, pose_back);
      double worst_normal = 0;
      for (std::size_t i = 0; i < mesh.triangles.size(); ++i) {
        worst_normal = std::max(
            worst_normal,
            (r * mesh.normals[mesh.triangles[i]] - r_back * m->normals[m->triangles[i]]).norm());
      }
      EXPECT_LE(worst_normal, 1e-6) << mesh.name << ": normals";
      // The same deformation on every frame (glTF is float32: within 1e-6 of the size).
      double worst = 0, size = 0;
      for (const Eigen::Vector3d& p : mesh.positions) size = std::max(size, metres * p.norm());
      for (int f = 0; f < clip.num_frames(); ++f) {
        pose.SetFromRow(*scene.skeleton, clip.frame(f));
        pose_back.SetFromRow(*back.skeleton, clip_back.frame(f));
        DeformMesh(mesh, pose.world, &a);
        DeformMesh(*m, pose_back.world, &b);
        for (std::size_t i = 0; i < mesh.triangles.size(); ++i) {  // corner by corner
          worst = std::max(worst, (metres * a[mesh.triangles[i]] - b[m->triangles[i]]).norm());
        }
      }
      EXPECT_LE(worst, 1e-6 * size) << mesh.name;
    }
  }
}

TEST(MeshIo, GlbKeepsGeometrySkinAndDeformation) {
  RIGEL_REQUIRE_SHARED_DATA();
  ExpectRoundTripKeepsDeformation("glb");
}

TEST(MeshIo, FbxKeepsGeometrySkinAndDeformation) {
  RIGEL_REQUIRE_SHARED_DATA();
  ExpectRoundTripKeepsDeformation("fbx");
}

TEST(MeshIo, FormatsWithoutMeshesSaySo) {
  EXPECT_EQ(
      DroppedBy("a.bvh", 2, 1),
      std::vector<std::string>{
          "a.bvh: BVH holds no mesh: 2 meshes not written (write .glb or .fbx to keep them)"});
  EXPECT_TRUE(DroppedBy("a.fbx", 1, 1).empty());
  EXPECT_TRUE(DroppedBy("a.glb", 3, 5).empty());
  EXPECT_EQ(DroppedBy("a.bvh", 0, 3),
            std::vector<std::string>{"a.bvh: BVH holds one take: 3 takes need a file each"});
}

}  // namespace
}  // namespace mesh_io_test
}  // namespace rigel

namespace rigel {
namespace mesh_io_test {
namespace {

// Nothing silent: node properties rigel does not carry are named (ProAnimationBank's MotionBuilder
// properties); a file with only the ones rigel reads says nothing.
TEST(MeshIo, UncarriedNodePropertiesAreNamed) {
  RIGEL_REQUIRE_SHARED_DATA();
  auto warned = [](const Scene& scene) {
    for (const std::string& w : scene.warnings) {
      if (w.find("node properties not carried") != std::string::npos) return w;
    }
    return std::string();
  };
  const std::string pab = warned(LoadScene(testing::SharedData() + "/fbx/ozz_pab/walk.fbx"));
  EXPECT_NE(pab.find("on 68 joints: Casts Shadows, CullingMode"), std::string::npos) << pab;
  EXPECT_EQ(warned(LoadScene(testing::SharedData() + "/fbx/cmu_isaacgym/01_01_cmu.fbx")), "");
}

}  // namespace
}  // namespace mesh_io_test
}  // namespace rigel
