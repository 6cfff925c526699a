// FBX 6.x files, read through their FBX 7.4 upgrade (importers/fbx_upgrade.h), checked against
// what does not go through it: the same scene saved as FBX 7.x (read by Assimp directly), and the
// 6.x keys and rest properties read here by a minimal reader of the test's own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "core/pose.h"
#include "importers/fbx_tree.h"
#include "importers/fbx_upgrade.h"
#include "importers/import_error.h"
#include "importers/load_scene.h"
#include "test_util.h"
#include "world_compare.h"

namespace rigel {
namespace {

using testing::SharedData;

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const Clip* FindClip(const Scene& s, const std::string& name) {
  for (const Clip& c : s.clips) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// The same scene saved by Maya as FBX 6.1 and as FBX 7.x: every joint's world position on every
// frame agrees within 1e-5 of the figure's height.
TEST(Fbx6, TwinsOfOtherVersionsAgreeOnEveryFrame) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Twin {
    const char* old_file;
    const char* new_file;
    const char* take;  // of the new file ("" = its first)
  };
  for (const Twin& t :
       {Twin{"ufbx/maya_game_sausage_6100_binary_spin.fbx",
             "ufbx/maya_game_sausage_7500_ascii_combined.fbx", "spin"},
        Twin{"ufbx/maya_game_sausage_6100_binary_spin.fbx",
             "wild/ufbx_ufbx/maya_game_sausage_7500_binary_combined.fbx", "spin"}}) {
    SCOPED_TRACE(t.old_file);
    const Scene a = LoadScene(SharedData() + "/" + t.old_file);
    const Scene b = LoadScene(SharedData() + "/" + t.new_file);
    ASSERT_EQ(a.clips.size(), 1u);
    const Clip* cb = FindClip(b, t.take);
    ASSERT_NE(cb, nullptr);
    EXPECT_EQ(a.clips[0].name(), t.take);
    EXPECT_EQ(a.clips[0].num_frames(), cb->num_frames());
    EXPECT_NEAR(a.clips[0].frame_time(), cb->frame_time(), 1e-12);
    EXPECT_EQ(a.skeleton->num_joints(), b.skeleton->num_joints());
    int shared = 0;
    const double height = testing::Height(*b.skeleton, *cb);
    const double diff =
        testing::MaxWorldDifference(*a.skeleton, a.clips[0], *b.skeleton, *cb, 1.0, &shared);
    EXPECT_EQ(shared, b.skeleton->num_joints());
    ASSERT_GT(height, 0);
    EXPECT_LT(diff / height, 1e-5)
        << "max world difference " << diff << " (height " << height << ")";
    std::printf("%s vs %s: max world difference %.3g (%.3g of the height %.4g)\n", t.old_file,
                t.new_file, diff, diff / height, height);
  }
}

// A hand-written FBX 6.1 file (the fbx_scan fuzzer's seed): its keys, evaluated by hand, on frames
// between keys. Hips: T.X linear 0 -> 10 over frames 0-10, T.Y constant 10 then 12 from frame 5.
// Arm: R.Z user-flat 0 at frame 0, automatic 60 at frame 5 (slope of the chord: 90 / (1/3 s) =
// 270 deg/s, within the clamp), user-flat 90 at frame 10. Cubic Bezier, handles a third in:
// frame 2 (x = 0.4 of 0..5): 3 (0.6) 0.4^2 (60 - 270/18) + 0.4^3 60 = 16.8;
// frame 7 (x = 0.4 of 5..10): 0.6^3 60 + 3 0.6^2 0.4 (60 + 15) + 3 0.6 0.4^2 90 + 0.4^3 90 = 77.04.
TEST(Fbx6, HandWrittenKeysAsEvaluatedByHand) {
  const std::string path =
      std::string(RIGEL_SOURCE_DIR) + "/tests/fuzz/seeds/fbx_scan/two_joints_6100_ascii.fbx";
  const Scene s = LoadScene(path);
  ASSERT_EQ(s.clips.size(), 1u);
  const Clip& clip = s.clips[0];
  EXPECT_EQ(clip.name(), "wave");
  EXPECT_EQ(clip.num_frames(), 11);
  EXPECT_NEAR(clip.frame_rate(), 30.0, 1e-9);
  const int hips = s.skeleton->FindJoint("Hips"), arm = s.skeleton->FindJoint("Arm");
  ASSERT_GE(hips, 0);
  ASSERT_GE(arm, 0);
  auto world = [&](int f) {
    Pose pose(*s.skeleton);
    pose.SetFromRow(*s.skeleton, clip.frame(f));
    return pose.world;
  };
  for (int f = 0; f <= 10; ++f) {
    const auto w = world(f);
    EXPECT_NEAR(w[hips].translation().x(), f, 1e-5) << f;
    EXPECT_NEAR(w[hips].translation().y(), f < 5 ? 10.0 : 12.0, 1e-5) << f;
    EXPECT_NEAR((w[arm].translation() - w[hips].translation()).x(), 5.0, 1e-5) << f;
  }
  auto arm_z = [&](int f) {
    const auto m = world(f)[arm].rotation();
    return std::atan2(m(1, 0), m(0, 0)) * 180.0 / std::numbers::pi;
  };
  EXPECT_NEAR(arm_z(0), 0.0, 1e-4);
  EXPECT_NEAR(arm_z(2), 16.8, 1e-3);
  EXPECT_NEAR(arm_z(5), 60.0, 1e-4);
  EXPECT_NEAR(arm_z(7), 77.04, 1e-3);
  EXPECT_NEAR(arm_z(10), 90.0, 1e-4);
  // The Visibility keys are not carried, and the warning says so, naming the file.
  bool said = false;
  for (const std::string& w : s.warnings) {
    said |= w.find(path) != std::string::npos &&
            w.find("1 animated 'Visibility' channel(s)") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// What the upgrade refuses, it refuses saying why; the reader names the version.
TEST(Fbx6, MalformedAndFlatFilesRefusedWithTheReason) {
  std::string why;
  EXPECT_FALSE(UpgradeFbx6("; FBX 6.1.0 project file\nObjects:  {\n", &why));
  EXPECT_NE(why.find("malformed"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(UpgradeFbx6(
      "FBXHeaderExtension:  {\n FBXVersion: 5800\n}\nModel: \"Model::A\" {\n}\n", &why));
  EXPECT_NE(why.find("no Objects and Connections sections"), std::string::npos) << why;
  const std::string seed =
      Bytes(std::string(RIGEL_SOURCE_DIR) + "/tests/fuzz/seeds/fbx_scan/two_joints_6100_ascii.fbx");
  const std::size_t key = seed.find("Key: 0,0,U,s,0,0,n");
  ASSERT_NE(key, std::string::npos);
  std::string bad = seed;
  bad.replace(key, 18, "Key: 0,0,U,x,0,0,n");  // an unknown slope mode
  why.clear();
  EXPECT_FALSE(UpgradeFbx6(bad, &why));
  EXPECT_NE(why.find("take 'wave', model 'Arm': the keys of channel R|Z are malformed"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace rigel
