// FBX curves as their authors keyed them (issue 33 item 3): the evaluator against closed forms,
// and the copy Assimp reads, keyed on every frame where Assimp's linear reading was wrong.
#include "importers/fbx_curves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <iterator>

#include "core/pose.h"
#include "importers/fbx_scan.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

using testing::SharedData;

constexpr std::int64_t kSecond = kFbxTicksPerSecond;

FbxCurveKeys TwoKeys(std::int32_t flags, float s0, float s1, float weights = 0) {
  FbxCurveKeys c;
  c.times = {0, kSecond};
  c.values = {0, 10};
  c.flags = {flags};
  c.data = {s0, s1, weights, 0};
  c.refcount = {2};
  return c;
}

// Maya's automatic tangents (KeyAttrFlags 0x6108: cubic, auto, time-independent, clamped
// progressively) are flat at a curve's first and last keys: two keys ease in and out, the Hermite
// 3u^2 - 2u^3.
TEST(FbxCurves, MayaAutoTangentsEaseBetweenTwoKeys) {
  const FbxCurveKeys c = TwoKeys(0x6108, 0, 0);
  for (const double u : {0.0, 0.1, 0.25, 0.5, 0.8, 1.0}) {
    const auto t = static_cast<std::int64_t>(std::llround(u * kSecond));
    EXPECT_NEAR(EvaluateFbxCurve(c, t), 10 * (3 * u * u - 2 * u * u * u), 1e-9) << u;
  }
}

// Automatic tangents at inner keys are the chord between the neighbours (time-independent) or
// its blend with the one-sided slopes, clamped so no handle passes a neighbour's value.
TEST(FbxCurves, AutoTangentsAtInnerKeys) {
  FbxCurveKeys c;
  c.times = {0, kSecond, 3 * kSecond};
  c.values = {0, 10, 30};  // 10 a second throughout: the curve is the line
  c.flags = {0x2108};      // cubic, auto, time-independent, no clamp
  c.data = {0, 0, 0, 0};
  c.refcount = {3};
  // Not clamped progressively: edge keys take the slope to their neighbour, the middle key the
  // chord (30 / 3 s); every key's slope is 10 a second and the curve is the straight line.
  for (const double s : {0.25, 0.5, 1.5, 2.0, 2.75}) {
    EXPECT_NEAR(EvaluateFbxCurve(c, std::llround(s * kSecond)), 10 * s, 1e-9) << s;
  }
  // A peak (0, 10, 0), clamped progressively: the middle tangent is flat, so the curve never
  // passes 10, and it is symmetric.
  c.values = {0, 10, 0};
  c.times = {0, kSecond, 2 * kSecond};
  c.flags = {0x6108};
  for (const double s : {0.3, 0.7, 0.95}) {
    const double v = EvaluateFbxCurve(c, std::llround(s * kSecond));
    EXPECT_LE(v, 10.0);
    EXPECT_NEAR(v, EvaluateFbxCurve(c, std::llround((2 - s) * kSecond)), 1e-9) << s;
  }
  EXPECT_NEAR(EvaluateFbxCurve(c, kSecond / 2), 5.0, 1e-9);  // flat at both ends of the rise
}

TEST(FbxCurves, SlopesAreValuePerSecond) {
  // Slopes equal to the chord (10 a second) make the cubic the straight line.
  const FbxCurveKeys c = TwoKeys(fbx_key::kCubic | 0x400, 10, 10);
  for (const double u : {0.1, 0.3, 0.7}) {
    EXPECT_NEAR(EvaluateFbxCurve(c, std::llround(u * kSecond)), 10 * u, 1e-9) << u;
  }
  // Over two seconds the same slope of 10 a second is the chord of a 20-unit rise.
  FbxCurveKeys two = c;
  two.times = {0, 2 * kSecond};
  two.values = {0, 20};
  EXPECT_NEAR(EvaluateFbxCurve(two, kSecond), 10, 1e-9);
}

TEST(FbxCurves, LinearConstantAndExtrapolation) {
  EXPECT_NEAR(EvaluateFbxCurve(TwoKeys(fbx_key::kLinear, 0, 0), kSecond / 4), 2.5, 1e-12);
  EXPECT_EQ(EvaluateFbxCurve(TwoKeys(fbx_key::kConstant, 0, 0), kSecond / 2), 0.0);
  EXPECT_EQ(
      EvaluateFbxCurve(TwoKeys(fbx_key::kConstant | fbx_key::kConstantNext, 0, 0), kSecond / 2),
      10.0);
  const FbxCurveKeys c = TwoKeys(fbx_key::kCubic, 0, 0);
  EXPECT_EQ(EvaluateFbxCurve(c, -kSecond), 0.0);
  EXPECT_EQ(EvaluateFbxCurve(c, 3 * kSecond), 10.0);
}

TEST(FbxCurves, WeightedTangentsFollowTheirBezier) {
  // Weights 1/3 written out (3333 / 10000 each) give nearly the unweighted curve.
  const float third = std::bit_cast<float>(std::uint32_t{3333} | (std::uint32_t{3333} << 16));
  const std::int32_t weighted =
      fbx_key::kCubic | 0x400 | fbx_key::kWeightedRight | fbx_key::kWeightedNextLeft;
  const FbxCurveKeys w = TwoKeys(weighted, 0, 0, third);
  const FbxCurveKeys plain = TwoKeys(fbx_key::kCubic | 0x400, 0, 0);
  for (const double u : {0.2, 0.5, 0.9}) {
    const auto t = std::llround(u * kSecond);
    EXPECT_NEAR(EvaluateFbxCurve(w, t), EvaluateFbxCurve(plain, t), 2e-3) << u;
  }
  // Heavier weights (0.9 each) keep the value near its keys longer: an S steeper in the middle.
  const float heavy = std::bit_cast<float>(std::uint32_t{9000} | (std::uint32_t{9000} << 16));
  const FbxCurveKeys h = TwoKeys(weighted, 0, 0, heavy);
  EXPECT_LT(EvaluateFbxCurve(h, kSecond / 5), EvaluateFbxCurve(plain, kSecond / 5));
  EXPECT_NEAR(EvaluateFbxCurve(h, kSecond / 2), 5.0, 1e-9);  // symmetric
}

TEST(FbxCurves, SparseCubicKeysAreReadAsKeyed) {
  RIGEL_REQUIRE_SHARED_DATA();
  // ScalingOffset's Lcl Translation Z: cubic, flat tangents, 0 at frame 1 and 20 at frame 12
  // (24 fps); the node has no parent, so its Z is the curve.
  const std::string path = SharedData() + "/ufbx/maya_pivot_offset_7700_binary.fbx";
  const std::optional<FbxDensified> dense = DensifyFbxCurves(rigel::testing::FileBytes(path));
  ASSERT_TRUE(dense);
  EXPECT_GT(dense->densified, 0);
  EXPECT_GT(dense->keys_after, dense->keys_before);
  const std::optional<FbxScan> scan = ScanFbx(dense->bytes);
  ASSERT_TRUE(scan);
  EXPECT_EQ(scan->version, 7700);
}

// The copy is keyed on frames and linear: made again from itself it needs no copy. Binary and
// ASCII (the ASCII file's two-key Maya curves ease as MayaAutoTangentsEaseBetweenTwoKeys says).
TEST(FbxCurves, TheCopyIsLinearOnFrames) {
  RIGEL_REQUIRE_SHARED_DATA();
  for (const char* file :
       {"ufbx/maya_pivot_offset_7700_binary.fbx", "ufbx/maya_axes_anim_7700_ascii.fbx"}) {
    SCOPED_TRACE(file);
    const std::string original = rigel::testing::FileBytes(SharedData() + "/" + file);
    const std::optional<FbxDensified> dense = DensifyFbxCurves(original);
    ASSERT_TRUE(dense);
    EXPECT_GT(dense->densified, 0);
    EXPECT_LE(dense->densified, dense->curves);
    EXPECT_FALSE(DensifyFbxCurves(dense->bytes)) << "the copy still has curves to key";
    const std::optional<FbxScan> a = ScanFbx(original), b = ScanFbx(dense->bytes);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->version, b->version);
    EXPECT_EQ(a->models.size(), b->models.size());
    ASSERT_EQ(a->stacks.size(), b->stacks.size());
    EXPECT_EQ(a->stacks[0].start, b->stacks[0].start);
    EXPECT_EQ(a->stacks[0].stop, b->stacks[0].stop);
  }
}

// A file that states no frame rate and keys sparsely (MotionBuilder, TimeMode "default", cubic
// keys 0.25 s apart, weighted, with velocities): rigel assumes 30 fps (and says so); its curves are
// now evaluated on that grid. Assimp alone joined the keys with straight lines: frame 52 (1.733 s,
// between -10 at 1.5 s and 10 at 1.75 s) read 8.667, the line, where the curve overshoots.
TEST(FbxCurves, SparseKeysWithoutARateAreEvaluatedOnTheAssumedGrid) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string path =
      SharedData() + "/ufbx/motionbuilder_tangent_velocity_split_7700_binary.fbx";
  const std::optional<FbxDensified> dense = DensifyFbxCurves(rigel::testing::FileBytes(path));
  ASSERT_TRUE(dense);
  EXPECT_EQ(dense->assumed_fps, 30);
  EXPECT_DOUBLE_EQ(dense->key_spacing, 0.25);
  EXPECT_EQ(dense->densified, 1);
  EXPECT_EQ(dense->velocity_curves, 1);
  const Scene scene = LoadScene(path);
  const Clip& clip = scene.clips.front();
  EXPECT_EQ(clip.num_frames(), 151);
  EXPECT_DOUBLE_EQ(clip.frame_time(), 1.0 / 30);
  const int x = scene.skeleton->translation_channel(scene.skeleton->FindJoint("pCube1"), 0);
  ASSERT_GE(x, 0);
  EXPECT_NEAR(clip.frame(45)[x], -10.0, 1e-5) << "a key";
  const double line = -10.0 + 20.0 * (52.0 / 30 - 1.5) / 0.25;
  EXPECT_GT(clip.frame(52)[x] - line, 0.5) << "the straight line between the keys";
  auto said = [&](std::string_view what) {
    return std::ranges::any_of(
        scene.warnings, [&](const std::string& w) { return w.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(said("too sparse to be frames: 30 fps assumed"));
  EXPECT_TRUE(said("1 curve(s) with key velocities"));
}

// An axis without a curve on a node whose other axes are keyed keeps the value its curve node
// states (ufbx/maya_keyframe_offset: Lcl Translation (0, 2, 3), only Z keyed, 0 -> 1 -> 3; Lcl
// Rotation Z keyed 0 -> -90; rotation and scaling pivots (0, -2, 0)). Assimp read the unkeyed Y as
// 0 where the pivots split the node: the cube lay 2 units low on every frame. By the FBX SDK's
// transform, the node's origin is T + Rp - R Rp: (0, 2, 0) at frame 0 (R = I) and (2, 0, 3) at
// frame 8 (R = Rz(-90), T = (0, 2, 3)).
TEST(FbxCurves, AnAxisWithoutACurveKeepsItsStatedValue) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string path = SharedData() + "/ufbx/maya_keyframe_offset_7700_ascii.fbx";
  const std::optional<FbxDensified> copy = DensifyFbxCurves(rigel::testing::FileBytes(path));
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->axes_completed, 1);
  const Scene scene = LoadScene(path);
  const int cube = scene.skeleton->FindJoint("pCube1");
  ASSERT_GE(cube, 0);
  ASSERT_GT(scene.clips.front().num_frames(), 8);
  Pose pose(*scene.skeleton);
  pose.SetFromRow(*scene.skeleton, scene.clips.front().frame(0));
  EXPECT_LE((pose.world[cube].translation() - Eigen::Vector3d(0, 2, 0)).norm(), 1e-6)
      << pose.world[cube].translation().transpose();
  pose.SetFromRow(*scene.skeleton, scene.clips.front().frame(8));
  EXPECT_LE((pose.world[cube].translation() - Eigen::Vector3d(2, 0, 3)).norm(), 1e-5)
      << pose.world[cube].translation().transpose();
}

// RotationOrder 6 (eSphericXYZ, MotionBuilder) is stated XYZ in the copy, as Blender's and ufbx's
// importers read it, and said. Assimp 5.2 composed such joints' pre-rotation, rotation and
// post-rotation otherwise: the 100STYLE character's ankles turned about their parent's X, its toes
// 3.9 % of its height from the FBX SDK's composition (python.test_fbx_transform measures the
// positions from the file's records; here, that the copy is made and the reader says so).
TEST(FbxCurves, SphericRotationOrderIsReadAsXyz) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string path =
      SharedData() + "/wild/orangeduck_100style-retarget/100style_character.fbx";
  const std::optional<FbxDensified> copy = DensifyFbxCurves(rigel::testing::FileBytes(path));
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->spheric_orders, 21);
  EXPECT_EQ(copy->densified, 0);
  const std::optional<FbxDensified> again = DensifyFbxCurves(copy->bytes);
  EXPECT_FALSE(again) << "the copy states no spheric order any more";
  const Scene scene = LoadScene(path);
  EXPECT_TRUE(std::ranges::any_of(scene.warnings, [](const std::string& w) {
    return w.find("21 node(s) state the spheric rotation order") != std::string::npos;
  }));
}

TEST(FbxCurves, KeysOnEveryFrameNeedNoCopy) {
  RIGEL_REQUIRE_SHARED_DATA();
  // Mocap keyed on every frame (cubic or not): Assimp's reading is exact on frames.
  EXPECT_FALSE(DensifyFbxCurves(
      rigel::testing::FileBytes(SharedData() + "/fbx/cmu_isaacgym/01_01_cmu.fbx")));
}

}  // namespace
}  // namespace rigel
