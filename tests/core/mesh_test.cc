// core/mesh.h: linear-blend skinning, rigid attachment and static meshes, computed here by hand
// from the joints' motion; CheckMesh's faults; ScaleMesh.
#include "core/mesh.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rigel
