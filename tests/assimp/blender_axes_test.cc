// Issue 26 (label "blender"): files whose data are Z up stand upright in Blender once rigel has
// written them. A Z-up FBX written by Blender itself (GlobalSettings UpAxis Z) converts to a glb
// whose figure stands along Blender's +Z (glTF is always +Y up: rigel turns the figure); a Z-up
// BVH (MakeHuman, up inferred from the body) written as FBX states UpAxis Z and stands too. The
// check is Blender's: its world positions of the head and feet bones, nothing of rigel's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "blender_util.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace blender_axes_test {
namespace {

using testing::TempDir;

void RunBlender(const std::string& mode, const std::string& src, const std::string& dst,
                const TempDir& dir) {
  const std::string cmd =
      fmt::format("blender -b --factory-startup --python '{}' -- {} '{}' '{}' > '{}' 2>&1",
                  RIGEL_BLENDER_AXES_SCRIPT, mode, src, dst, dir.file(mode + ".log"));
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << " (see " << dir.file(mode + ".log") << ")";
}

// Blender imports `file`: in every sampled frame the head is above every foot along Blender's +Z
// (world up), and the mean feet-to-head direction is within 30 degrees of +Z.
void ExpectStandsInBlender(const std::string& file, const TempDir& dir) {
  const std::string json_path = dir.file("stand.json");
  RunBlender("stand", file, json_path, dir);
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << "Blender wrote no result for " << file;
  const nlohmann::json r = nlohmann::json::parse(in);
  Eigen::Vector3d mean = Eigen::Vector3d::Zero();
  double lowest = INFINITY;
  for (const auto& f : r["frames"]) {
    lowest = std::min(lowest, f["over_highest_foot"].get<double>());
    const auto d = f["direction"].get<std::vector<double>>();
    mean += Eigen::Vector3d(d[0], d[1], d[2]);
  }
  mean.normalize();
  EXPECT_GT(lowest, 0.0) << file << ": head '" << r["head"] << "' below a foot in Blender";
  EXPECT_GT(mean.z(), std::cos(30.0 * M_PI / 180.0))
      << file << ": mean feet-to-head direction in Blender " << mean.transpose();
}

TEST(BlenderAxes, ZUpFbxFromBlenderConvertsToAnUprightGlb) {
  REQUIRE_BLENDER();
  RIGEL_REQUIRE_SHARED_DATA();
  TempDir dir;
  const std::string fbx = dir.file("zup.fbx");
  RunBlender("make", testing::SharedData() + "/assimp_misc/Boxing_Toes.bvh", fbx, dir);
  const Scene scene = LoadScene(fbx);
  EXPECT_EQ(SignedAxisName(scene.axes.up.value), "+Z") << DescribeAxes(scene.axes);
  EXPECT_EQ(scene.axes.up.source, FactSource::kStated);
  const std::string glb = dir.file("zup.glb");
  SaveScene(scene, glb);
  ExpectStandsInBlender(glb, dir);
  // Written back as FBX, the Z-up data keep their GlobalSettings: it stands too.
  const std::string again = dir.file("zup_again.fbx");
  SaveScene(scene, again);
  ExpectStandsInBlender(again, dir);
}

TEST(BlenderAxes, ZUpBvhStandsAsGlbAndFbx) {
  REQUIRE_BLENDER();
  RIGEL_REQUIRE_SHARED_DATA();
  TempDir dir;
  const Scene scene = LoadScene(testing::SharedData() + "/makehuman/walk1.bvh");
  ASSERT_EQ(SignedAxisName(scene.axes.up.value), "+Z") << DescribeAxes(scene.axes);
  EXPECT_EQ(scene.axes.up.source, FactSource::kInferred);
  for (const char* ext : {".glb", ".fbx"}) {
    SCOPED_TRACE(ext);
    const std::string out = dir.file(std::string("walk1") + ext);
    SaveScene(scene, out);
    ExpectStandsInBlender(out, dir);
  }
}

}  // namespace
}  // namespace blender_axes_test
}  // namespace rigel
