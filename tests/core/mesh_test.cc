// core/mesh.h: linear-blend skinning, rigid attachment and static meshes, computed here by hand
// from the joints' motion; CheckMesh's faults; ScaleMesh; WeldVertices.
#include "core/mesh.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "core/pose.h"
#include "root_and_child.h"

namespace rigel {
namespace {

using Eigen::Vector3d;

// A root at the origin and a child 2 units up the Y axis that bends about Z.
std::unique_ptr<Skeleton> Arm() {
  return RootAndChild("shoulder", "elbow", Vector3d(0, 2, 0), ChannelType::kZrotation);
}

// Two vertices on the forearm's axis and one between the joints, weighted to both.
Mesh ArmSkin(const Skeleton& skeleton) {
  Mesh mesh;
  mesh.name = "sleeve";
  mesh.positions = {Vector3d(0, 3, 0), Vector3d(0, 4, 0), Vector3d(0.5, 2, 0)};
  mesh.triangles = {0, 1, 2};
  const Pose rest(skeleton);
  mesh.skin_joints = {0, 1};
  mesh.bind_world = {rest.world[0], rest.world[1]};
  mesh.vertex_joints.assign(3, {});
  mesh.vertex_weights.assign(3, {});
  mesh.vertex_joints[0][0] = 1;  // forearm
  mesh.vertex_weights[0][0] = 1;
  mesh.vertex_joints[1][0] = 1;
  mesh.vertex_weights[1][0] = 1;
  mesh.vertex_joints[2] = {0, 1};  // half and half
  mesh.vertex_weights[2] = {0.5f, 0.5f};
  return mesh;
}

TEST(Mesh, LinearBlendSkinningFollowsTheJoints) {
  const auto skeleton = Arm();
  const Mesh mesh = ArmSkin(*skeleton);
  ASSERT_EQ(CheckMesh(*skeleton, mesh), "");
  Pose pose(*skeleton);
  std::vector<Vector3d> out;
  DeformMesh(mesh, pose.world, &out);  // at bind: unchanged
  for (std::size_t v = 0; v < 3; ++v) EXPECT_TRUE(out[v].isApprox(mesh.positions[v], 1e-15));
  // Elbow bent 90 degrees about Z: the forearm's +Y turns to -X, about the elbow at (0, 2, 0).
  pose.channels[6] = M_PI / 2;
  pose.UpdateWorld(*skeleton);
  DeformMesh(mesh, pose.world, &out);
  EXPECT_NEAR((out[0] - Vector3d(-1, 2, 0)).norm(), 0, 1e-12);
  EXPECT_NEAR((out[1] - Vector3d(-2, 2, 0)).norm(), 0, 1e-12);
  // (0.5, 2, 0) is 0.5 along +X from the elbow: the forearm takes it to (0, 2.5, 0); the
  // shoulder leaves it; the blend is the midpoint.
  EXPECT_NEAR((out[2] - Vector3d(0.25, 2.25, 0)).norm(), 0, 1e-12);
  // The whole arm moved by the root: every vertex moves with it.
  pose.channels[0] = 10;
  pose.UpdateWorld(*skeleton);
  DeformMesh(mesh, pose.world, &out);
  EXPECT_NEAR((out[0] - Vector3d(9, 2, 0)).norm(), 0, 1e-12);
}

TEST(Mesh, BindPoseOtherThanTheRestIsExact) {
  // The mesh was bound with the elbow bent 90 degrees; at that pose it is where it was modelled,
  // and straightening the elbow unbends it.
  const auto skeleton = Arm();
  Mesh mesh = ArmSkin(*skeleton);
  Pose bent(*skeleton);
  bent.channels[6] = M_PI / 2;
  bent.UpdateWorld(*skeleton);
  mesh.bind_world = {bent.world[0], bent.world[1]};
  mesh.positions = {Vector3d(-1, 2, 0), Vector3d(-2, 2, 0), Vector3d(0, 2.5, 0)};
  mesh.vertex_weights[2] = {0.0f, 1.0f};  // all forearm
  std::vector<Vector3d> out;
  DeformMesh(mesh, bent.world, &out);
  for (std::size_t v = 0; v < 3; ++v) EXPECT_NEAR((out[v] - mesh.positions[v]).norm(), 0, 1e-12);
  const Pose rest(*skeleton);
  DeformMesh(mesh, rest.world, &out);
  EXPECT_NEAR((out[0] - Vector3d(0, 3, 0)).norm(), 0, 1e-12);
  EXPECT_NEAR((out[2] - Vector3d(0.5, 2, 0)).norm(), 0, 1e-12);
}

TEST(Mesh, AttachedMovesRigidlyAndStaticStays) {
  const auto skeleton = Arm();
  Mesh prop;
  prop.name = "cup";
  prop.positions = {Vector3d(0, 3, 1)};
  prop.attach_joint = 1;
  prop.attach_bind = Pose(*skeleton).world[1];
  Mesh ground = prop;
  ground.attach_joint = -1;
  Pose pose(*skeleton);
  pose.channels[6] = M_PI / 2;
  pose.UpdateWorld(*skeleton);
  std::vector<Vector3d> out;
  DeformMesh(prop, pose.world, &out);
  EXPECT_NEAR((out[0] - Vector3d(-1, 2, 1)).norm(), 0, 1e-12);
  DeformMesh(ground, pose.world, &out);
  EXPECT_EQ(out[0], Vector3d(0, 3, 1));
}

TEST(Mesh, CheckNamesWhatIsWrong) {
  const auto skeleton = Arm();
  Mesh mesh = ArmSkin(*skeleton);
  mesh.triangles = {0, 1, 7};
  EXPECT_EQ(CheckMesh(*skeleton, mesh), "mesh 'sleeve': triangle 0 refers to vertex 7 of 3");
  mesh = ArmSkin(*skeleton);
  mesh.skin_joints[1] = 5;
  EXPECT_EQ(CheckMesh(*skeleton, mesh),
            "mesh 'sleeve': skin joint 5 is not a joint of the skeleton");
  mesh = ArmSkin(*skeleton);
  mesh.positions[1].x() = NAN;
  EXPECT_EQ(CheckMesh(*skeleton, mesh), "mesh 'sleeve': vertex 1 is not finite");
  mesh = ArmSkin(*skeleton);
  mesh.vertex_joints[2][1] = 2;  // only two skin joints
  EXPECT_EQ(CheckMesh(*skeleton, mesh), "mesh 'sleeve': vertex 2 has an invalid skin influence");
  mesh = ArmSkin(*skeleton);
  mesh.normals.resize(2);
  EXPECT_EQ(CheckMesh(*skeleton, mesh), "mesh 'sleeve': 2 normals for 3 vertices");
}

TEST(Mesh, ScaleKeepsTheDeformationInTheNewUnit) {
  const auto skeleton = Arm();
  Mesh mesh = ArmSkin(*skeleton);
  ScaleMesh(mesh, 100);
  EXPECT_EQ(mesh.positions[1], Vector3d(0, 400, 0));
  EXPECT_EQ(mesh.bind_world[1].translation(), Vector3d(0, 200, 0));
}

// A quad given as two triangles with each corner its own vertex (as Assimp reads an FBX mesh):
// corners that agree in everything merge, a UV seam, a weight or a morph offset keeps them apart,
// and every triangle corner keeps its attributes and its deformation.
TEST(Mesh, WeldMergesOnlyIdenticalVertices) {
  const auto skeleton = Arm();
  const Mesh skin = ArmSkin(*skeleton);
  Mesh mesh;
  mesh.name = "quad";
  mesh.skin_joints = skin.skin_joints;
  mesh.bind_world = skin.bind_world;
  // Corners a b c, a c d: a and c repeat; the second c has another UV (a seam); the second a
  // is weighted otherwise in one variant below.
  const std::vector<Vector3d> corner{Vector3d(0, 3, 0), Vector3d(0, 4, 0), Vector3d(1, 4, 0),
                                     Vector3d(0, 3, 0), Vector3d(1, 4, 0), Vector3d(1, 3, 0)};
  const std::vector<Eigen::Vector2d> uv{{0, 0}, {0, 1}, {1, 1}, {0, 0}, {1, 0.5}, {1, 0}};
  for (std::size_t v = 0; v < corner.size(); ++v) {
    mesh.positions.push_back(corner[v]);
    mesh.normals.push_back(Vector3d(0, 0, 1));
    mesh.uvs.push_back(uv[v]);
    mesh.vertex_joints.push_back({1, 0});
    mesh.vertex_weights.push_back({1.0f, 0.0f});
    mesh.triangles.push_back(static_cast<std::uint32_t>(v));
  }
  MorphTarget bulge;
  bulge.name = "bulge";
  bulge.vertices = {0, 3, 5};
  bulge.position_deltas = {Vector3d(0, 0, 1), Vector3d(0, 0, 1), Vector3d(0, 0, 2)};
  mesh.morph_targets.push_back(bulge);
  const Mesh before = mesh;
  const auto corners = [](const Mesh& m) {  // each triangle corner's attributes, in order
    std::vector<std::tuple<Vector3d, Eigen::Vector2d, float>> out;
    for (const std::uint32_t v : m.triangles) {
      out.emplace_back(m.positions[v], m.uvs[v], m.vertex_weights[v][0]);
    }
    return out;
  };
  // a (0 and 3) merge; c (2 and 4) differ in UV; the morph moves a by the same offset.
  EXPECT_EQ(WeldVertices(mesh), 1u);
  ASSERT_EQ(mesh.positions.size(), 5u);
  EXPECT_EQ(mesh.triangles, (std::vector<std::uint32_t>{0, 1, 2, 0, 3, 4}));
  EXPECT_EQ(corners(mesh), corners(before));
  ASSERT_EQ(mesh.morph_targets[0].vertices, (std::vector<std::uint32_t>{0, 4}));
  EXPECT_EQ(mesh.morph_targets[0].position_deltas,
            (std::vector<Vector3d>{Vector3d(0, 0, 1), Vector3d(0, 0, 2)}));
  EXPECT_EQ(CheckMesh(*skeleton, mesh), "");
  // The same deformation at every corner, the morph at full weight, the elbow bent.
  Pose pose(*skeleton);
  std::vector<double> row(skeleton->num_channels(), 0.0);
  row.back() = 0.7;
  pose.SetFromRow(*skeleton, row);
  std::vector<Vector3d> got, want;
  DeformMesh(mesh, pose.world, &got, std::vector<double>{1.0});
  DeformMesh(before, pose.world, &want, std::vector<double>{1.0});
  for (std::size_t c = 0; c < mesh.triangles.size(); ++c) {
    EXPECT_EQ(got[mesh.triangles[c]], want[before.triangles[c]]) << "corner " << c;
  }
  // Apart by their weights, or by a morph offset, two corners stay two; FBX control points
  // (position, skin, morphs) ignore the UV seam.
  Mesh weighted = before;
  weighted.vertex_weights[3] = {0.5f, 0.5f};
  EXPECT_EQ(WeldVertices(weighted), 0u);
  Mesh morphed = before;
  morphed.morph_targets[0].position_deltas[1] = Vector3d(0, 0, 3);
  EXPECT_EQ(WeldVertices(morphed), 0u);
  std::vector<std::uint32_t> first;
  EXPECT_EQ(VertexClasses(before, false, &first), (std::vector<std::uint32_t>{0, 1, 2, 0, 2, 3}));
  EXPECT_EQ(first, (std::vector<std::uint32_t>{0, 1, 2, 5}));
  // Polygons that do not add up to the triangles are named.
  Mesh fans = before;
  fans.polygon_triangles = {2, 2};
  EXPECT_EQ(CheckMesh(*skeleton, fans),
            "mesh 'quad': its 2 polygons make 4 triangles, not its 2 (or one makes none)");
  fans.polygon_triangles = {2};
  EXPECT_EQ(CheckMesh(*skeleton, fans), "");
  // A mesh whose indexes are out of range is left alone (CheckMesh names it).
  Mesh broken = before;
  broken.triangles.back() = 99;
  EXPECT_EQ(WeldVertices(broken), 0u);
}

}  // namespace
}  // namespace rigel
