// FBX to BVH, checked by the real client (issue 12 item 2, label "blender"): rigel converts each
// single-take FBX of ../shared/data with a skeleton to BVH (rest orientations folded into offsets
// and channels), Blender imports the BVH and the source FBX with its own importers, and the world
// position of every bone the two share must agree on every frame to 1e-4 of the height. The BVH
// is in the FBX's length unit; Blender's FBX importer converts to metres (UnitScaleFactor / 100),
// its BVH importer does not, so the BVH side is scaled by rigel's unit of the file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "blender_util.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"
#include "world_compare.h"

namespace rigel {
namespace blender_bvh_test {
namespace {

using testing::TempDir;

void ExpectBvhMatchesFbxInBlender(const std::string& rel) {
  TempDir dir;
  const std::string fbx = testing::SharedData() + "/" + rel;
  const Scene scene = LoadScene(fbx);
  ASSERT_EQ(scene.clips.size(), 1u);
  const std::string bvh = dir.file("out.bvh");
  SaveScene(scene, bvh);
  const Clip& clip = scene.clips.front();
  const double metres = MetresPerUnit(scene);
  ASSERT_GT(metres, 0);
  const nlohmann::json a = testing::BlenderBoneHeads(RIGEL_BLENDER_SCRIPT, fbx, clip.frame_rate(),
                                                     clip.num_frames(), dir, "fbx");
  const nlohmann::json b = testing::BlenderBoneHeads(RIGEL_BLENDER_SCRIPT, bvh, clip.frame_rate(),
                                                     clip.num_frames(), dir, "bvh");
  ASSERT_EQ(a["armatures"], 1);
  ASSERT_EQ(b["armatures"], 1);
  const double height = testing::Height(*scene.skeleton, clip) * metres;
  double worst = 0;
  std::string worst_at;
  std::size_t compared = 0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    const auto& fa = a["frames"][std::to_string(f)];
    const auto& fb = b["frames"][std::to_string(f)];
    for (auto it = fb.begin(); it != fb.end(); ++it) {
      if (!fa.contains(it.key())) continue;
      const auto pa = fa[it.key()].get<std::vector<double>>();
      const auto pb = it.value().get<std::vector<double>>();
      const double d =
          (Eigen::Vector3d(pa[0], pa[1], pa[2]) - metres * Eigen::Vector3d(pb[0], pb[1], pb[2]))
              .norm();
      if (d > worst) {
        worst = d;
        worst_at = fmt::format("'{}' frame {}", it.key(), f);
      }
      ++compared;
    }
  }
  // Every joint Blender made a bone of in both files is compared (Blender makes objects, not
  // bones, of a few nodes: walk.fbx's 'Hips' and 'Bip01 Footsteps').
  std::size_t shared = 0;
  for (int j = 0; j < scene.skeleton->num_joints(); ++j) {
    const std::string& name = scene.skeleton->name(j);
    shared += a["frames"]["0"].contains(name) && b["frames"]["0"].contains(name);
  }
  EXPECT_GE(shared + 3, static_cast<std::size_t>(scene.skeleton->num_joints()));
  EXPECT_EQ(compared, shared * static_cast<std::size_t>(clip.num_frames()));
  std::printf("%s: %zu bone positions on %d frames, worst %.3g of the height (%s)\n", rel.c_str(),
              compared, clip.num_frames(), worst / height, worst_at.c_str());
  ::testing::Test::RecordProperty("max_rel_diff", fmt::format("{:.3g}", worst / height));
  EXPECT_LE(worst, 1e-4 * height) << rel << ": worst at " << worst_at;
}

TEST(BlenderBvh, FbxToBvhMatchesTheFbxEveryFrame) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  for (const char* rel : {"fbx/assimp/animation_with_skeleton.fbx", "fbx/ozz_pab/walk.fbx",
                          "fbx/cmu_isaacgym/01_01_cmu.fbx"}) {
    SCOPED_TRACE(rel);
    ExpectBvhMatchesFbxInBlender(rel);
  }
}

}  // namespace
}  // namespace blender_bvh_test
}  // namespace rigel
