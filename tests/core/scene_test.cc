// Scene units (core/scene.h): MetresPerUnit and ScaleSceneLengths, moved to core from the
// importers (LoadScene's unit conversion and every writer use them).
//
//   root (Xposition Yposition Zposition Yrotation), end site (0, 0, 3)
//    |
//   arm at (1, 2, 0) (Zrotation)
#include "core/scene.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/skeleton_builder.h"

namespace rigel {
namespace {

Scene MakeScene() {
  RawSkeleton raw;
  RawSkeleton::Joint root;
  root.name = "root";
  root.channels = {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition,
                   ChannelType::kYrotation};
  root.end_sites.push_back(Eigen::Vector3d(0, 0, 3));
  RawSkeleton::Joint arm;
  arm.name = "arm";
  arm.rest_translation = Eigen::Vector3d(1, 2, 0);
  arm.channels = {ChannelType::kZrotation};
  root.children.push_back(arm);
  raw.roots.push_back(root);
  Scene scene;
  scene.skeleton = SkeletonBuilder().Build(raw);
  Clip clip(2, 5, 0.1);
  for (int c = 0; c < 5; ++c) {
    clip.at(0, c) = c + 1.0;
    clip.at(1, c) = -(c + 1.0);
  }
  scene.clips.push_back(clip);
  scene.source = "unit.fbx";
  return scene;
}

TEST(MetresPerUnit, FileUnitOverLengthScale) {
  Scene scene;
  EXPECT_EQ(MetresPerUnit(scene), 0.0) << "unknown unit (BVH)";
  scene.file_unit_metres = 0.01;  // centimetres
  EXPECT_DOUBLE_EQ(MetresPerUnit(scene), 0.01);
  scene.length_scale = 0.01;  // converted to metres
  EXPECT_DOUBLE_EQ(MetresPerUnit(scene), 1.0);
  scene.length_scale = 0;  // corrupt
  EXPECT_EQ(MetresPerUnit(scene), 0.0);
}

TEST(ScaleSceneLengths, ScalesLengthsOnly) {
  Scene scene = MakeScene();
  scene.file_unit_metres = 0.01;
  std::string error;
  ASSERT_TRUE(ScaleSceneLengths(scene, 0.01, &error)) << error;
  const Skeleton& s = *scene.skeleton;
  EXPECT_TRUE(s.rest_translation(s.FindJoint("arm")).isApprox(Eigen::Vector3d(0.01, 0.02, 0)));
  ASSERT_EQ(s.end_sites().size(), 1u);
  EXPECT_TRUE(s.end_sites()[0].offset.isApprox(Eigen::Vector3d(0, 0, 0.03)));
  const Clip& clip = scene.clips[0];
  for (int c = 0; c < 3; ++c) {  // positions scale
    EXPECT_DOUBLE_EQ(clip.at(0, c), (c + 1.0) * 0.01);
    EXPECT_DOUBLE_EQ(clip.at(1, c), -(c + 1.0) * 0.01);
  }
  for (int c = 3; c < 5; ++c) {  // rotations do not
    EXPECT_EQ(clip.at(0, c), c + 1.0);
    EXPECT_EQ(clip.at(1, c), -(c + 1.0));
  }
  EXPECT_DOUBLE_EQ(scene.length_scale, 0.01);
  EXPECT_DOUBLE_EQ(MetresPerUnit(scene), 1.0);
}

TEST(ScaleSceneLengths, RefusesBadFactorsAndLeavesTheSceneAlone) {
  for (const double bad : {0.0, -2.0, double(NAN), double(INFINITY), 1e308}) {
    Scene scene = MakeScene();
    const Skeleton* before = scene.skeleton.get();
    std::string error;
    EXPECT_FALSE(ScaleSceneLengths(scene, bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
    EXPECT_EQ(scene.skeleton.get(), before) << bad;
    EXPECT_EQ(scene.clips[0].at(0, 0), 1.0) << bad;
    EXPECT_EQ(scene.length_scale, 1.0) << bad;
  }
  Scene scene = MakeScene();
  std::string error;
  EXPECT_FALSE(ScaleSceneLengths(scene, 0.0, &error));
  EXPECT_EQ(error, "invalid length scale 0");
}

}  // namespace
}  // namespace rigel
