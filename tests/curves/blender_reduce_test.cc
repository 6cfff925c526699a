// Blender cross-check of key reduction (label "blender"): Blender imports rigel's reduced .fbx and
// .glb (sparse keys) and, on every frame, every bone head it evaluates is within the bound
// (0.1 mm) of where it puts the same bone of the dense file, and the distance to rigel's FK of
// the dense source is printed.
//
// Axes and scale as tests/assimp/blender_test.cc: Blender turns rigel's Y-up (x, y, z) into
// (x, -z, y); files are written in metres.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../assimp/blender_util.h"
#include "../assimp/world_compare.h"
#include "core/curves/key_reduction.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

using testing::TempDir;

void ExpectReducedWithinBound(const std::string& rel, const char* ext) {
  TempDir dir;
  Scene scene = LoadScene(testing::SharedData() + "/" + rel);
  ASSERT_FALSE(scene.clips.empty());
  scene.clips.resize(1);
  Clip& clip = scene.clips[0];
  constexpr int kFrames = 480;  // Blender evaluates every frame: the first 4 s at 120 frames/s
  if (clip.num_frames() > kFrames) {
    Clip head(kFrames, clip.num_channels(), clip.frame_time());
    for (int f = 0; f < kFrames; ++f) {
      std::copy(clip.frame(f).begin(), clip.frame(f).end(), head.frame(f).begin());
    }
    head.set_name(clip.name());
    clip = head;
  }
  const double mpu = MetresPerUnitOrEstimate(scene);
  const std::string dense = dir.file(std::string("dense.") + ext);
  const std::string reduced = dir.file(std::string("reduced.") + ext);
  SaveOptions save;
  save.metres_per_unit = mpu;
  save.axes = scene.axes;
  SaveClips(*scene.skeleton, scene.clips, dense, save);
  KeyReductionOptions reduce;
  reduce.metres_per_unit = mpu;
  std::vector<ClipKeys> keys;
  save.reduce = &reduce;
  save.reduced = &keys;
  SaveClips(*scene.skeleton, scene.clips, reduced, save);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_LT(keys[0].keys, keys[0].dense_keys);
  const nlohmann::json a = testing::BlenderBoneHeads(RIGEL_BLENDER_SCRIPT, dense, clip.frame_rate(),
                                                     clip.num_frames(), dir);
  const nlohmann::json b = testing::BlenderBoneHeads(RIGEL_BLENDER_SCRIPT, reduced,
                                                     clip.frame_rate(), clip.num_frames(), dir);
  ASSERT_EQ(a.value("armatures", 0), 1);
  ASSERT_EQ(b.value("armatures", 0), 1);
  const Skeleton& skeleton = *scene.skeleton;
  double worst = 0, worst_source = 0, dense_source = 0;
  std::string worst_at;
  int compared = 0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    const auto world = testing::WorldPositions(skeleton, clip, f);
    const auto& da = a["frames"][std::to_string(f)];
    const auto& db = b["frames"][std::to_string(f)];
    for (int j = 0; j < skeleton.num_joints(); ++j) {
      const std::string& name = skeleton.name(j);
      if (!da.contains(name) || !db.contains(name)) continue;
      const auto pa = da[name].get<std::vector<double>>();
      const auto pb = db[name].get<std::vector<double>>();
      const Eigen::Vector3d va(pa[0], pa[1], pa[2]), vb(pb[0], pb[1], pb[2]);
      const Eigen::Vector3d p = world[j] * mpu;
      const Eigen::Vector3d source(p.x(), -p.z(), p.y());
      const double d = (va - vb).norm();
      if (d > worst) {
        worst = d;
        worst_at = fmt::format("joint '{}' frame {}", name, f);
      }
      worst_source = std::max(worst_source, (vb - source).norm());
      dense_source = std::max(dense_source, (va - source).norm());
      ++compared;
    }
  }
  EXPECT_GE(compared, clip.num_frames() * (skeleton.num_joints() - 1));
  std::printf(
      "[blender] %s %s: keys %lld -> %lld; Blender reduced vs dense %.4f mm (%s); "
      "reduced vs source %.4f mm, dense vs source %.4f mm\n",
      rel.c_str(), ext, keys[0].dense_keys, keys[0].keys, worst * 1e3, worst_at.c_str(),
      worst_source * 1e3, dense_source * 1e3);
  EXPECT_LE(worst, reduce.max_error) << rel << " " << ext << ": worst at " << worst_at;
  EXPECT_LE(worst_source, reduce.max_error + dense_source) << rel << " " << ext;
}

class BlenderReduce : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(BlenderReduce, ReadsReducedKeysWithinTheBound) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  ExpectReducedWithinBound(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Corpus, BlenderReduce,
                         ::testing::Combine(::testing::Values("cmu_cgspeed/01_01.bvh",
                                                              "pybvh/bvh_test1.bvh",
                                                              "fbx/cmu_isaacgym/01_01_cmu.fbx"),
                                            ::testing::Values("fbx", "glb")));

}  // namespace
}  // namespace rigel
