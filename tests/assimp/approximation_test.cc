// What rigel's channels cannot hold of an FBX transform (a non-uniform scale under rotation,
// shear) is measured on every frame and stated with its figure, and what they can hold is kept:
// importers/assimp_reader.cc (NoteApproximation), assimp_sampling.cc (MeasureApproximation).
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/pose.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

using testing::kDegree;

std::vector<std::string> Matching(const Scene& scene, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& w : scene.warnings) {
    if (w.find(what) != std::string::npos) out.push_back(w);
  }
  return out;
}

// maya_dual_quaternion_scale binds its skin with joint2 unscaled, then scales joint2 by
// (1, 0.5, 2) in the pose the file stores (Lcl Scaling; no animation). rigel read the bind as the
// rest and sampled no scale, since no curve scales: the pose's scale was lost (measured: points
// joint2 carries lay 2 units, the figure's size, from the file's). The pose's scale is now scale
// channels: joint2's world linear part is the file's own, composed here from its properties:
// joint1 PreRotation Z 90; joint2 Lcl Rotation X 170, Lcl Scaling (1, 0.5, 2).
TEST(Approximation, AJointScaledAfterItsBindKeepsItsScale) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene scene =
      LoadScene(testing::SharedData() + "/ufbx/maya_dual_quaternion_scale_7500_ascii.fbx");
  ASSERT_TRUE(scene.skeleton);
  const Skeleton& skeleton = *scene.skeleton;
  EXPECT_TRUE(skeleton.has_scale());
  EXPECT_TRUE(Matching(scene, "approximated").empty());
  const int j = skeleton.FindJoint("joint2");
  ASSERT_GE(j, 0);
  ASSERT_FALSE(scene.clips.empty());
  std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
  std::vector<Eigen::Matrix3d> linear(skeleton.num_joints());
  ForwardKinematicsScaled(skeleton, scene.clips[0].frame(0), world, linear);
  const Eigen::Matrix3d file =
      Eigen::AngleAxisd(90 * kDegree, Eigen::Vector3d::UnitZ()).toRotationMatrix() *
      Eigen::AngleAxisd(170 * kDegree, Eigen::Vector3d::UnitX()).toRotationMatrix() *
      Eigen::Vector3d(1, 0.5, 2).asDiagonal();
  // Assimp keeps the file's bind matrices in single precision (cos 90 degrees reads -4.4e-8).
  EXPECT_LT((linear[j] - file).cwiseAbs().maxCoeff(), 1e-6) << linear[j];
  // joint3, the leaf (an end site), sits at (2, 0, 0) in joint2: unscaled along x, so (2 + 2, -1,
  // 0) in joint1, which is at (0, -2, 0) turned 90 degrees about z.
  int tip = -1;
  for (std::size_t e = 0; e < skeleton.end_sites().size(); ++e) {
    if (skeleton.end_sites()[e].name == "joint3") tip = static_cast<int>(e);
  }
  ASSERT_GE(tip, 0);
  const EndSite& site = skeleton.end_sites()[tip];
  const Eigen::Vector3d at = world[site.parent].translation() + linear[site.parent] * site.offset;
  EXPECT_LT((at - Eigen::Vector3d(1, 2, 0)).norm(), 1e-6) << at.transpose();
}

// Files whose non-uniform scale the channels hold say nothing; one they cannot hold states how far
// its joints and the points they carry are from the file, with the worst joint, take and frame.
TEST(Approximation, TheWarningStatesTheLargestErrorOrIsNotGiven) {
  RIGEL_REQUIRE_SHARED_DATA();
  // Held within 4e-15 of the size; the Rokoko character within 7e-7, its single-precision noise.
  for (const char* exact : {"ufbx/maya_pivot_offset_7700_binary.fbx",
                            "ufbx/maya_static_no_inherit_scale_7700_ascii.fbx",
                            "wild/Rokoko_rokoko-studio-live-unity/Rokoko_Newton.FBX"}) {
    const Scene scene = LoadScene(testing::SharedData() + "/" + exact);
    EXPECT_TRUE(Matching(scene, "approximated").empty()) << exact;
  }
  const Scene scene =
      LoadScene(testing::SharedData() + "/ufbx/maya_zero_scale_pivot_7700_binary.fbx");
  const std::vector<std::string> warned = Matching(scene, "motion is approximated");
  ASSERT_EQ(warned.size(), 1u);
  const std::string& w = warned[0];
  EXPECT_NE(w.find("joints lie within "), std::string::npos) << w;
  EXPECT_NE(w.find("% of the figure's size, 10.01; worst 'Parallel_Parent', take 'Take 001', "
                   "frame "),
            std::string::npos)
      << w;
}

// BVH states no axes: writing data that are not +Y up to it says so (the data are kept).
// InheritType RrSs (0: the parent's scale applied axis by axis after the child's rotation) is
// composed as the plain product, which is the same while the parent's world scale is uniform;
// where it is not, the reader says so with its figure. No file of the corpus has a RrSs joint
// under an uneven scale: this one is maya_mixed_inherit_mode with its "Left" joint (under "Mid",
// whose scale curves go uneven) restated as RrSs. The original says nothing.
TEST(Approximation, ComponentwiseScaleUnderAnUnevenParentIsSaid) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string original =
      testing::SharedData() + "/ufbx/maya_mixed_inherit_mode_7700_ascii.fbx";
  constexpr std::string_view kWhat = "axis by axis (FBX InheritType RrSs)";
  EXPECT_TRUE(Matching(LoadScene(original), std::string(kWhat)).empty());
  std::ifstream in(original, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t left = text.find("\"Model::Left\", \"LimbNode\"");
  ASSERT_NE(left, std::string::npos);
  const std::string rsrs = "P: \"InheritType\", \"enum\", \"\", \"\",1";
  const std::size_t at = text.find(rsrs, left);
  ASSERT_NE(at, std::string::npos);
  text[at + rsrs.size() - 1] = '0';
  const testing::TempDir dir;
  const std::string path = dir.file("rrss.fbx");
  std::ofstream(path, std::ios::binary) << text;
  const std::vector<std::string> said = Matching(LoadScene(path), std::string(kWhat));
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("1 joint(s)"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("worst 'Left'"), std::string::npos) << said[0];
}

TEST(AxesDroppedBy, BvhOfDataNotYUpIsSaid) {
  SceneAxes z_up;
  z_up.up.value = {2, 1};
  EXPECT_NE(AxesDroppedBy("out.bvh", z_up).find("BVH states no axes: the data stay +Z up"),
            std::string::npos);
  EXPECT_NE(AxesDroppedBy("out.bvh", z_up).find("--up +Z"), std::string::npos);
  EXPECT_EQ(AxesDroppedBy("out.glb", z_up), "");
  EXPECT_EQ(AxesDroppedBy("out.fbx", z_up), "");
  EXPECT_EQ(AxesDroppedBy("out.bvh", SceneAxes{}), "");  // +Y up
}

}  // namespace
}  // namespace rigel
