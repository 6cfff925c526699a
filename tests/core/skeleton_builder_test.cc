#include "core/skeleton_builder.h"

#include <gtest/gtest.h>

namespace rigel {
namespace {

using J = RawSkeleton::Joint;

J Make(std::string name, std::vector<ChannelType> channels = {}, std::vector<J> children = {}) {
  J j;
  j.name = std::move(name);
  j.channels = std::move(channels);
  j.children = std::move(children);
  return j;
}

// Builds and expects failure with a message containing `needle`.
void ExpectInvalid(const RawSkeleton& raw, const std::string& needle) {
  std::string error;
  EXPECT_EQ(SkeletonBuilder().Build(raw, &error), nullptr);
  EXPECT_NE(error.find(needle), std::string::npos) << "message: " << error;
}

// Validity matrix: one block per broken field.
TEST(SkeletonBuilder, ValidityMatrix) {
  using C = ChannelType;
  {  // No joint.
    RawSkeleton raw;
    ExpectInvalid(raw, "no joint");
  }
  {  // Empty name, names the parent.
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips", {}, {Make("")}));
    ExpectInvalid(raw, "child of Hips): empty name");
  }
  {  // Duplicate name.
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips", {}, {Make("Spine"), Make("Spine")}));
    ExpectInvalid(raw, "joint 'Spine': name used twice");
  }
  {  // Duplicate channel.
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips", {C::kXrotation, C::kYrotation, C::kXrotation}));
    ExpectInvalid(raw, "joint 'Hips': channel Xrotation listed twice");
  }
  {  // More than 9 channels (six BVH ones and three scale channels).
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips", std::vector<C>(10, C::kXrotation)));
    ExpectInvalid(raw, "10 channels, at most 9");
  }
  {  // Non-finite offset.
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips"));
    raw.roots[0].rest_translation.x() = NAN;
    ExpectInvalid(raw, "joint 'Hips': rest translation is not finite");
  }
  {  // Non-unit rest orientation.
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips"));
    raw.roots[0].rest_orientation = Eigen::Quaterniond(2, 0, 0, 0);
    ExpectInvalid(raw, "not a unit quaternion");
  }
  {  // Non-finite End Site.
    RawSkeleton raw;
    raw.roots.push_back(Make("Hips"));
    raw.roots[0].end_sites.push_back(Eigen::Vector3d(0, INFINITY, 0));
    ExpectInvalid(raw, "End Site offset is not finite");
  }
  {  // Too deep.
    RawSkeleton raw;
    J chain = Make("j" + std::to_string(Skeleton::kMaxDepth));
    for (int d = Skeleton::kMaxDepth - 1; d >= 0; --d)
      chain = Make("j" + std::to_string(d), {}, {chain});
    raw.roots.push_back(chain);
    ExpectInvalid(raw, "nested deeper than");
  }
  {  // Too many joints.
    RawSkeleton raw;
    J root = Make("root");
    for (int i = 0; i < Skeleton::kMaxJoints; ++i)
      root.children.push_back(Make("c" + std::to_string(i)));
    raw.roots.push_back(root);
    ExpectInvalid(raw, "too many joints");
  }
  {  // Minimal valid skeleton: one joint, no channel.
    RawSkeleton raw;
    raw.roots.push_back(Make("only"));
    auto s = SkeletonBuilder().Build(raw);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->num_joints(), 1);
    EXPECT_EQ(s->num_channels(), 0);
  }
}

//   Hips (6: Xpos Ypos Zpos Zrot Xrot Yrot)
//   ├── LeftLeg (3: Zrot Yrot Xrot)  ── End Site
//   └── Spine (2: Xrot Zpos)
//        └── Head (0)
TEST(SkeletonBuilder, FlattensDepthFirstWithLayout) {
  using C = ChannelType;
  RawSkeleton raw;
  J leg = Make("LeftLeg", {C::kZrotation, C::kYrotation, C::kXrotation});
  leg.end_sites.push_back(Eigen::Vector3d(0, -4, 0));
  J spine = Make("Spine", {C::kXrotation, C::kZposition}, {Make("Head")});
  raw.roots.push_back(Make(
      "Hips",
      {C::kXposition, C::kYposition, C::kZposition, C::kZrotation, C::kXrotation, C::kYrotation},
      {leg, spine}));
  EXPECT_EQ(raw.num_joints(), 4);
  auto s = SkeletonBuilder().Build(raw);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->num_joints(), 4);
  EXPECT_EQ(s->name(0), "Hips");
  EXPECT_EQ(s->name(1), "LeftLeg");
  EXPECT_EQ(s->name(2), "Spine");
  EXPECT_EQ(s->name(3), "Head");
  EXPECT_EQ(std::vector<int>(s->parents().begin(), s->parents().end()),
            (std::vector<int>{-1, 0, 0, 2}));
  EXPECT_EQ(s->num_channels(), 11);
  EXPECT_EQ(s->channel_begin(1), 6);
  EXPECT_EQ(s->channel_count(2), 2);
  EXPECT_EQ(s->channel_count(3), 0);
  EXPECT_EQ(s->rotation_order(0), EulerOrder::kZXY);
  EXPECT_EQ(s->rotation_order(1), EulerOrder::kZYX);
  EXPECT_FALSE(s->rotation_order(2).has_value());
  EXPECT_EQ(s->translation_channel(0, 1), 1);
  EXPECT_EQ(s->translation_channel(2, 2), 10);
  EXPECT_EQ(s->translation_channel(2, 0), -1);
  ASSERT_EQ(s->rotation_channels(2).size(), 1u);
  EXPECT_EQ(s->rotation_channels(2)[0], 9);
  EXPECT_EQ(s->channel_joint(9), 2);
  EXPECT_EQ(s->FindJoint("Spine"), 2);
  EXPECT_EQ(s->FindJoint("Nope"), -1);
  ASSERT_EQ(s->end_sites().size(), 1u);
  EXPECT_EQ(s->end_sites()[0].parent, 1);
  EXPECT_EQ(s->children(0).size(), 2u);
  EXPECT_EQ(s->children(2)[0], 3);
}

}  // namespace
}  // namespace rigel
