// Blender cross-check of skeleton editing (label "blender"): a prop joint added to the sample
// walk under the right hand (core/skeleton_edit.h), with motion keyed on its own channels, and a
// locator added under the hips, written to .glb and .fbx by rigel's writers and read back by
// Blender 3.4: on every frame the bone heads Blender evaluates for the added joints (and for the
// hand they hang from) are where rigel's FK puts them, within 0.1 mm.
//
// Axes and scale as tests/assimp/blender_test.cc: Blender turns rigel's Y-up (x, y, z) into
// (x, -z, y); files are written in metres.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../assimp/blender_util.h"
#include "../assimp/world_compare.h"
#include "core/skeleton_edit.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace edit_blender_test {
namespace {

using testing::TempDir;

class BlenderEdit : public ::testing::TestWithParam<const char*> {};

TEST_P(BlenderEdit, AddedJointsReadBackWithTheirMotion) {
  REQUIRE_BLENDER();
  const std::string ext = GetParam();
  TempDir dir;
  Scene scene = LoadScene(std::string(RIGEL_SOURCE_DIR) + "/samples/cmu_walk/walk.bvh");
  ASSERT_FALSE(scene.clips.empty());
  NewJoint prop;
  prop.name = "Prop";
  prop.parent = "RightHand";
  prop.offset = {-2.0, 0.5, 1.0};
  prop.channels = {ChannelType::kZrotation, ChannelType::kXrotation, ChannelType::kYrotation};
  prop.end_sites.push_back({-3.0, 0, 0});
  EditedClip with_prop;
  std::string error;
  ASSERT_TRUE(AddJoint(scene.skeleton, scene.clips[0], prop, &with_prop, &error)) << error;
  NewJoint locator;
  locator.name = "LookAt";
  locator.parent = "Hips";
  locator.offset = {0, 5, 12};
  locator.channels = {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition};
  EditedClip edited;
  ASSERT_TRUE(AddJoint(with_prop.skeleton, with_prop.clip, locator, &edited, &error)) << error;
  // Keys on the added joints' own channels: the prop swings, the locator circles.
  const Skeleton& s = *edited.skeleton;
  Clip& clip = edited.clip;
  const int p = s.FindJoint("Prop"), l = s.FindJoint("LookAt");
  for (int f = 0; f < clip.num_frames(); ++f) {
    clip.at(f, s.channel_begin(p)) = 0.8 * std::sin(0.2 * f);
    clip.at(f, s.channel_begin(p) + 1) = 0.5 * std::cos(0.3 * f);
    clip.at(f, s.channel_begin(l)) = 8 * std::cos(0.15 * f);
    clip.at(f, s.channel_begin(l) + 1) = 2 * std::sin(0.15 * f);
  }
  const double mpu = MetresPerUnitOrEstimate(scene);
  const std::string path = dir.file("edited." + ext);
  SaveOptions save;
  save.metres_per_unit = mpu;
  save.axes = scene.axes;
  SaveClips(s, std::span<const Clip>(&clip, 1), path, save);
  const nlohmann::json b = testing::BlenderBoneHeads(RIGEL_BLENDER_SCRIPT, path, clip.frame_rate(),
                                                     clip.num_frames(), dir);
  ASSERT_EQ(b.value("armatures", 0), 1);
  double worst = 0, motion = 0;
  int compared = 0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    const auto world = testing::WorldPositions(s, clip, f);
    const auto& frame = b["frames"][std::to_string(f)];
    for (const char* name : {"Prop", "LookAt", "RightHand"}) {
      ASSERT_TRUE(frame.contains(name)) << ext << ": Blender has no bone " << name;
      const auto v = frame[name].get<std::vector<double>>();
      const Eigen::Vector3d got(v[0], v[1], v[2]);
      const Eigen::Vector3d m = world[s.FindJoint(name)] * mpu;
      worst = std::max(worst, (got - Eigen::Vector3d(m.x(), -m.z(), m.y())).norm());
      ++compared;
    }
    const auto first = testing::WorldPositions(s, clip, 0);
    motion = std::max(
        motion,
        (world[l] - world[s.FindJoint("Hips")] - (first[l] - first[s.FindJoint("Hips")])).norm());
  }
  std::printf("[blender] %s: added Prop and LookAt, %d bone heads, worst %.4f mm\n", ext.c_str(),
              compared, worst * 1e3);
  EXPECT_EQ(compared, 3 * clip.num_frames());
  EXPECT_GT(motion, 1.0) << "the locator's keys move it";
  EXPECT_LE(worst, 1e-4) << ext;
}

INSTANTIATE_TEST_SUITE_P(Formats, BlenderEdit, ::testing::Values("glb", "fbx"));

}  // namespace
}  // namespace edit_blender_test
}  // namespace rigel
