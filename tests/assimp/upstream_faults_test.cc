// Where rigel's FBX import and Blender's differ (blender_takes_test.cc), the cause, checked on the
// real files without Blender (docs/formats.md, "Known upstream faults").
#include <assimp/config.h>
#include <assimp/scene.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <assimp/Importer.hpp>
#include <bit>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include "core/pose.h"
#include "fbx_stop_patch.h"
#include "importers/fbx_curves.h"
#include "importers/fbx_scan.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

using testing::kDegree;

double Angle(const Eigen::Matrix3d& r) {
  return std::acos(std::clamp((r.trace() - 1.0) / 2.0, -1.0, 1.0));
}

const Clip* FindClip(const Scene& scene, const std::string& name) {
  for (const Clip& c : scene.clips) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

Eigen::Quaterniond ToEigen(const aiQuaternion& q) {
  return Eigen::Quaterniond(q.w, q.x, q.y, q.z).normalized();
}

// ProAnimationBank's jog keys the right knee between frames: 4.9951 and 5.2463 around frame 5.
// Frame 5 is the curve's value between those keys, not the key 0.005 frame before it (rigel took
// the nearest key within 0.01 frame, and the toes were 7.6e-4 of the height off Blender's). The
// curves are cubic with automatic tangents (KeyAttrFlags 0x108): rigel evaluates them as keyed
// (importers/fbx_curves.h, checked against closed forms in fbx_curves_test.cc and on a whole file
// in CubicCurvesAreReadAsKeyed below), so frame 5 is near the linear blend of Assimp's two keys
// (a quarter frame apart on a smooth curve) without being it.
TEST(UpstreamFaults, KeysBetweenFramesAreInterpolated) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string path = testing::SharedData() + "/fbx/ozz_pab/locomotions.fbx";
  // The keys, as Assimp gives them to rigel.
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, true);
  const aiScene* ai = importer.ReadFile(path, 0);
  ASSERT_NE(ai, nullptr);
  const aiNodeAnim* knee = nullptr;
  double ticks_per_frame = 0;
  for (unsigned a = 0; a < ai->mNumAnimations; ++a) {
    const aiAnimation* anim = ai->mAnimations[a];
    if (std::string(anim->mName.C_Str()) != "jog") continue;
    ticks_per_frame = anim->mTicksPerSecond / 30.0;
    for (unsigned c = 0; c < anim->mNumChannels; ++c) {
      if (std::string(anim->mChannels[c]->mNodeName.C_Str()) == "RightLeg") {
        knee = anim->mChannels[c];
      }
    }
  }
  ASSERT_NE(knee, nullptr);
  ASSERT_GT(ticks_per_frame, 0);
  // The keys at frame 4 and around frame 5.
  int at4 = -1, before5 = -1;
  for (unsigned k = 0; k < knee->mNumRotationKeys; ++k) {
    const double frame = knee->mRotationKeys[k].mTime / ticks_per_frame;
    if (std::abs(frame - 4.0) < 1e-9) at4 = static_cast<int>(k);
    if (frame < 5.0) before5 = static_cast<int>(k);
  }
  ASSERT_GE(at4, 0);
  ASSERT_GE(before5, 0);
  ASSERT_LT(before5 + 1, static_cast<int>(knee->mNumRotationKeys));
  const aiQuatKey& lo = knee->mRotationKeys[before5];
  const aiQuatKey& hi = knee->mRotationKeys[before5 + 1];
  const double lo_frame = lo.mTime / ticks_per_frame, hi_frame = hi.mTime / ticks_per_frame;
  // The premise: a key just before frame 5, a fraction of a frame from the next one.
  EXPECT_GT(lo_frame, 4.99);
  EXPECT_LT(hi_frame, 5.5);
  const double blend = (5.0 - lo_frame) / (hi_frame - lo_frame);
  const Eigen::Quaterniond q4 = ToEigen(knee->mRotationKeys[at4].mValue);
  const Eigen::Quaterniond q5 = ToEigen(lo.mValue).slerp(blend, ToEigen(hi.mValue));
  const double expected = q4.angularDistance(q5);
  const double nearest_key = q4.angularDistance(ToEigen(lo.mValue));
  // The two readings differ enough to tell apart.
  ASSERT_GT(std::abs(expected - nearest_key), 1e-3);

  // rigel: the knee's local rotation turns by as much between frames 4 and 5 (its rest and helper
  // rotations on either side of the key's rotation do not change the angle).
  const Scene scene = LoadScene(path);
  const Clip* jog = FindClip(scene, "jog");
  ASSERT_NE(jog, nullptr);
  const Skeleton& skeleton = *scene.skeleton;
  const int j = skeleton.FindJoint("RightLeg");
  ASSERT_GE(j, 0);
  const Eigen::Matrix3d r4 = LocalTransform(skeleton, j, jog->frame(4)).rotation();
  const Eigen::Matrix3d r5 = LocalTransform(skeleton, j, jog->frame(5)).rotation();
  const double got = Angle(r4.transpose() * r5);
  EXPECT_GT(std::abs(got - nearest_key), 1e-3) << "frame 5 is the nearest key";
  EXPECT_NEAR(got, expected, 1e-2) << "nearest key would give " << nearest_key;
}

// maya_pivot_offset's ScalingOffset node: Lcl Translation Z keyed 0 -> 20 and Lcl Rotation Y 0 ->
// 90 degrees at frames 1 and 12 (24 fps), cubic with Maya's automatic tangents (0x6108: flat at a
// curve's ends), and a ScalingOffset of (20, 0, 0) with no scaling pivot. Its origin is therefore
// T + R * (20, 0, 0) = (20 cos a, 0, z - 20 sin a) with a = 90 e(u) degrees and z = 20 e(u), e
// the ease 3u^2 - 2u^3 of u = (frame - 1) / 11. Assimp alone interpolated linearly (e(u) = u):
// 0.46 cm off at frame 2 and 2.4 cm at frame 4.
TEST(UpstreamFaults, CubicCurvesAreReadAsKeyed) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene scene = LoadScene(testing::SharedData() + "/ufbx/maya_pivot_offset_7700_binary.fbx");
  ASSERT_FALSE(scene.clips.empty());
  const Clip& clip = scene.clips[0];
  const Skeleton& skeleton = *scene.skeleton;
  const int j = skeleton.FindJoint("ScalingOffset");
  ASSERT_GE(j, 0);
  ASSERT_EQ(skeleton.parent(j), Skeleton::kNoParent);
  ASSERT_GE(clip.num_frames(), 12);
  Pose pose(skeleton);
  double worst = 0, worst_linear = 0;
  for (int f = 0; f < 12; ++f) {
    pose.SetFromRow(skeleton, clip.frame(f));
    const double u = f / 11.0;
    auto at = [](double e) {
      const double a = 0.5 * kPi * e;
      return Eigen::Vector3d(20 * std::cos(a), 0, 20 * e - 20 * std::sin(a));
    };
    const Eigen::Vector3d p = pose.world[j].translation();
    worst = std::max(worst, (p - at(3 * u * u - 2 * u * u * u)).norm());
    worst_linear = std::max(worst_linear, (p - at(u)).norm());
  }
  EXPECT_LT(worst, 1e-4);        // centimetres
  EXPECT_GT(worst_linear, 1.0);  // the linear reading is far off: the test tells them apart
}

// multiple_animations_test.fbx, take 'spin': Box001's Lcl Rotation Z curve goes from 0 (1.5 s) to
// +180 degrees (2.0 s), cubic with automatic tangents clamped progressively and weighted 0.3332
// (KeyAttrFlags 0x3006108; the key at 1.5 s equals the one before it): flat at both keys, the
// turn eases in and out. rigel turns it that way about one axis; Blender's importer keys -180 and
// turns it the other way, and like Assimp alone it interpolates linearly, 12 degrees a frame
// (blender_takes_test.cc).
TEST(UpstreamFaults, SpinTurnsTheWayTheCurveSays) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene scene = LoadScene(testing::SharedData() + "/fbx/assimp/multiple_animations_test.fbx");
  const Clip* spin = FindClip(scene, "spin");
  ASSERT_NE(spin, nullptr);
  ASSERT_EQ(spin->num_frames(), 16);
  const Skeleton& skeleton = *scene.skeleton;
  ASSERT_EQ(skeleton.num_joints(), 1);
  Pose pose(skeleton);
  pose.SetFromRow(skeleton, spin->frame(0));
  const Eigen::Matrix3d first = pose.world[0].rotation();
  Eigen::Vector3d axis = Eigen::Vector3d::Zero();
  for (int f = 1; f < spin->num_frames(); ++f) {
    pose.SetFromRow(skeleton, spin->frame(f));
    const Eigen::AngleAxisd turn(Eigen::Matrix3d(pose.world[0].rotation() * first.transpose()));
    // The ease of weighted flat tangents, evaluated as a Bezier by the curve evaluator (checked
    // against closed forms in fbx_curves_test.cc).
    FbxCurveKeys curve;
    curve.times = {0, kFbxTicksPerSecond / 2};
    curve.values = {0, 180};
    const float weights = std::bit_cast<float>(std::uint32_t{0x0d040d04});
    curve.flags = {0x3006108, 0x1006108};
    curve.data = {0, 0, weights, 0, 0, 0, weights, 0};
    curve.refcount = {1, 1};
    const double expected = EvaluateFbxCurve(curve, kFbxTicksPerSecond * f / 30) * kDegree;
    EXPECT_NEAR(turn.angle(), expected, 1e-5) << "frame " << f;
    if (f == 1) axis = turn.axis();
    // Always about the same axis, the same way (at 180 degrees the axis' sign is arbitrary).
    if (f < 15) {
      EXPECT_GT(turn.axis().dot(axis), 1.0 - 1e-9) << "frame " << f;
    }
  }
}

// Assimp 5.2 drops every key that lies past an animation stack's LocalStop (by more than 10000
// ticks, 2e-7 s), and the take still ends at the stop rounded to a frame: when a stack stops a
// fraction of a frame before its last key (Mixamo), the take's last frame repeated the one before
// it (2.5e-3 of the height off on a 506-frame Mixamo clip). rigel reads a copy of the file whose
// stacks end later (WidenFbxStacks) and keeps the take's stated length: the last frame is the
// last key. Checked on the CMU FBX with its stack moved a quarter frame earlier.
TEST(UpstreamFaults, KeysPastTheStacksStopAreRead) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string path = testing::SharedData() + "/fbx/cmu_isaacgym/01_01_cmu.fbx";
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Scene whole = LoadScene(path);
  ASSERT_EQ(whole.clips.size(), 1u);
  const Clip& want = whole.clips[0];
  ASSERT_EQ(testing::MoveFbxStopsEarlier(&bytes, 0.25, want.frame_rate()), 1);
  testing::TempDir dir;
  const std::string early = dir.file("early_stop.fbx");
  std::ofstream(early, std::ios::binary) << bytes;

  // The premise: Assimp alone loses the last key of every curve.
  Assimp::Importer importer;
  const aiScene* ai = importer.ReadFile(early, 0);
  ASSERT_NE(ai, nullptr);
  ASSERT_EQ(ai->mNumAnimations, 1u);
  const aiAnimation& anim = *ai->mAnimations[0];
  double last_key = 0;
  for (unsigned c = 0; c < anim.mNumChannels; ++c) {
    const aiNodeAnim& ch = *anim.mChannels[c];
    if (ch.mNumRotationKeys)
      last_key = std::max(last_key, ch.mRotationKeys[ch.mNumRotationKeys - 1].mTime);
  }
  const double ticks_per_frame = anim.mTicksPerSecond / want.frame_rate();
  EXPECT_NEAR(last_key / ticks_per_frame, want.num_frames() - 2, 1e-6);

  // rigel: the same frames, the last one included, value for value.
  const Scene read = LoadScene(early);
  ASSERT_EQ(read.clips.size(), 1u);
  const Clip& got = read.clips[0];
  ASSERT_EQ(got.num_frames(), want.num_frames());
  ASSERT_EQ(got.num_channels(), want.num_channels());
  for (const int f : {0, want.num_frames() / 2, want.num_frames() - 2, want.num_frames() - 1}) {
    for (int c = 0; c < want.num_channels(); ++c) {
      ASSERT_EQ(got.frame(f)[c], want.frame(f)[c]) << "frame " << f << " channel " << c;
    }
  }
}

}  // namespace
}  // namespace rigel
