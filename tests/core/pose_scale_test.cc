// Forward kinematics with scale channels (core/pose.h): T * R * S per joint, children placed in
// their parent's scaled space, kCompensate (FBX Rrs) leaving the parent's scale out of the child's
// axes, the single-joint update equal to the whole FK, skinning that grows with the bone, and
// skeletons without scale unchanged.
#include <gtest/gtest.h>

#include <cmath>

#include "core/mesh.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"
#include "test_util.h"

namespace rigel {
namespace {

using C = ChannelType;

// root (Zrot, scale) -> mid at (0, 1, 0) (Zrot, scale) -> tip at (0, 1, 0) (Zrot).
std::unique_ptr<Skeleton> Chain(ScaleInheritance tip_mode) {
  RawSkeleton raw;
  RawSkeleton::Joint root, mid, tip;
  root.name = "root";
  root.channels = {C::kZrotation, C::kXscale, C::kYscale, C::kZscale};
  mid.name = "mid";
  mid.rest_translation = {0, 1, 0};
  mid.channels = {C::kZrotation, C::kXscale, C::kYscale, C::kZscale};
  tip.name = "tip";
  tip.rest_translation = {0, 1, 0};
  tip.channels = {C::kZrotation};
  tip.scale_inheritance = tip_mode;
  tip.end_sites = {{0, 1, 0}};
  mid.children.push_back(tip);
  root.children.push_back(mid);
  raw.roots.push_back(root);
  std::string error;
  auto s = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(s) << error;
  return s;
}

TEST(PoseScale, LayoutAndRest) {
  const auto s = Chain(ScaleInheritance::kInherit);
  EXPECT_TRUE(s->has_scale());
  EXPECT_TRUE(s->has_scale(0));
  EXPECT_FALSE(s->has_scale(2));
  EXPECT_EQ(s->scale_channel(0, 0), 1);
  EXPECT_EQ(s->scale_channel(1, 2), 7);
  EXPECT_EQ(s->num_channels(), 9);
  EXPECT_EQ(ChannelName(C::kYscale), "Yscale");
  EXPECT_FALSE(ParseChannelName("Xscale"));  // not a BVH channel
  EXPECT_EQ(ParseAnyChannelName("zscale"), C::kZscale);
  EXPECT_TRUE(IsScale(C::kXscale));
  EXPECT_FALSE(IsRotation(C::kXscale));
  EXPECT_FALSE(IsTranslation(C::kZscale));
  const Pose rest(*s);
  ASSERT_EQ(rest.linear.size(), 3u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_TRUE(rest.linear[j].isApprox(rest.world[j].linear(), 1e-15));
  }
  EXPECT_VEC3_NEAR(rest.world[2].translation(), Eigen::Vector3d(0, 2, 0), 1e-15);
}

TEST(PoseScale, ChildrenInTheScaledSpaceOfTheirParent) {
  const auto s = Chain(ScaleInheritance::kInherit);
  Pose pose(*s);
  pose.channels[1] = pose.channels[2] = pose.channels[3] = 1.0;  // root scale 2
  pose.channels[6] = 0.5;                                        // mid scale 1.5 on Y
  pose.channels[4] = M_PI / 2;                                   // mid turns 90 about Z
  pose.UpdateWorld(*s);
  // mid at root + 2 * (0, 1, 0); tip at mid + root_linear * mid_rot * S_mid * (0, 1, 0).
  EXPECT_VEC3_NEAR(pose.world[1].translation(), Eigen::Vector3d(0, 2, 0), 1e-12);
  EXPECT_VEC3_NEAR(pose.world[2].translation(), Eigen::Vector3d(-3, 2, 0), 1e-12);
  // World scale: root 2; mid 2 * (1, 1.5, 1) on its own axes; tip inherits mid's.
  EXPECT_NEAR(pose.linear[1].col(1).norm(), 3, 1e-12);
  EXPECT_NEAR(pose.linear[2].col(1).norm(), 3, 1e-12);
  EXPECT_NEAR(pose.linear[2].col(0).norm(), 2, 1e-12);
  // Rotation frames stay orthonormal.
  EXPECT_TRUE((pose.world[2].linear().transpose() * pose.world[2].linear())
                  .isApprox(Eigen::Matrix3d::Identity(), 1e-12));
  // UpdateJointWorld of one joint equals the whole FK, bit for bit.
  std::vector<Eigen::Isometry3d> world = pose.world;
  world[2] = Eigen::Isometry3d::Identity();
  UpdateJointWorld(*s, pose.channels, world, 2);
  EXPECT_EQ(world[2].matrix(), pose.world[2].matrix());
  // ForwardKinematics (no linear out) gives the same world.
  std::vector<Eigen::Isometry3d> fk(3);
  ForwardKinematics(*s, pose.channels, fk);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(fk[j].matrix(), pose.world[j].matrix());
}

TEST(PoseScale, CompensateLeavesTheParentScaleOutOfTheChildAxes) {
  const auto s = Chain(ScaleInheritance::kCompensate);
  Pose pose(*s);
  pose.channels[5] = pose.channels[6] = pose.channels[7] = 1.0;  // mid scale 2
  pose.UpdateWorld(*s);
  // The tip's position still follows mid's scale, its axes do not.
  EXPECT_VEC3_NEAR(pose.world[2].translation(), Eigen::Vector3d(0, 3, 0), 1e-12);
  EXPECT_NEAR(pose.linear[2].col(1).norm(), 1, 1e-12);
}

TEST(PoseScale, SkinGrowsWithItsBone) {
  const auto s = Chain(ScaleInheritance::kInherit);
  Mesh mesh;
  mesh.name = "m";
  mesh.positions = {{0, 1.5, 0}, {0.1, 1.0, 0}};
  mesh.skin_joints = {1};
  const Pose rest(*s);
  mesh.bind_world = {rest.world[1]};
  mesh.vertex_joints.assign(2, {0, 0, 0, 0});
  mesh.vertex_weights.assign(2, {1, 0, 0, 0});
  Pose pose(*s);
  pose.channels[5] = pose.channels[6] = pose.channels[7] = 1.0;  // mid scale 2
  pose.UpdateWorld(*s);
  std::vector<Eigen::Vector3d> out;
  DeformMesh(mesh, pose.world, &out, {}, pose.linear);
  EXPECT_VEC3_NEAR(out[0], Eigen::Vector3d(0, 2, 0), 1e-12);
  EXPECT_VEC3_NEAR(out[1], Eigen::Vector3d(0.2, 1, 0), 1e-12);
  DeformMesh(mesh, pose.world, &out);  // rigid (no linear): the old skinning
  EXPECT_VEC3_NEAR(out[0], Eigen::Vector3d(0, 1.5, 0), 1e-12);
}

TEST(PoseScale, NoScaleNoLinear) {
  RawSkeleton raw;
  RawSkeleton::Joint root;
  root.name = "root";
  root.channels = {C::kXrotation};
  raw.roots.push_back(root);
  std::string error;
  const auto s = SkeletonBuilder().Build(raw, &error);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->has_scale());
  const Pose pose(*s);
  EXPECT_TRUE(pose.linear.empty());
}

}  // namespace
}  // namespace rigel
