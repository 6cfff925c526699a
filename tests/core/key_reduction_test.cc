#include "core/curves/key_reduction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/pose.h"
#include "root_and_child.h"

namespace rigel {
namespace {

using C = ChannelType;

// root (X/Y/Z position, Z/X/Y rotation) -- 1 m --> elbow (Y rotation)
std::unique_ptr<Skeleton> TwoJoints() {
  return RootAndChild("root", "elbow", Eigen::Vector3d(1, 0, 0), C::kYrotation);
}

// The clip the keys describe under linear interpolation of each channel (the Euler reading).
Clip Reconstruct(const Skeleton& skeleton, const Clip& clip, const ClipKeys& keys) {
  Clip out = clip;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    auto fill = [&](const std::vector<int>& k, bool rotation) {
      std::vector<int> channels;
      if (rotation) {
        for (const int c : skeleton.rotation_channels(j)) channels.push_back(c);
      } else {
        for (int a = 0; a < 3; ++a) {
          if (skeleton.translation_channel(j, a) >= 0) {
            channels.push_back(skeleton.translation_channel(j, a));
          }
        }
      }
      for (int f = 0; f < clip.num_frames(); ++f) {
        std::size_t i = 0;
        while (i + 1 < k.size() && k[i + 1] <= f) ++i;
        const int a = k[i], b = i + 1 < k.size() ? k[i + 1] : a;
        const double s = b == a ? 0.0 : static_cast<double>(f - a) / (b - a);
        for (const int c : channels) out.at(f, c) = (1 - s) * clip.at(a, c) + s * clip.at(b, c);
      }
    };
    if (!keys.joints[j].rotation.empty()) fill(keys.joints[j].rotation, true);
    if (!keys.joints[j].translation.empty()) fill(keys.joints[j].translation, false);
  }
  return out;
}

TEST(KeyReduction, RefusesOptionsOutOfRange) {
  const auto skeleton = TwoJoints();
  Clip clip(3, skeleton->num_channels(), 1.0 / 30);
  KeyReductionOptions options;
  options.max_error = 0;
  EXPECT_THROW(ReduceKeys(*skeleton, clip, options), std::invalid_argument);
  options = {};
  options.virtual_vertex = -1;
  EXPECT_THROW(ReduceKeys(*skeleton, clip, options), std::invalid_argument);
  options = {};
  options.metres_per_unit = NAN;
  EXPECT_THROW(ReduceKeys(*skeleton, clip, options), std::invalid_argument);
  options = {};
  options.euler_curves.resize(5);
  EXPECT_THROW(ReduceKeys(*skeleton, clip, options), std::invalid_argument);
  Clip wrong(3, 2, 1.0 / 30);
  EXPECT_THROW(ReduceKeys(*skeleton, wrong, KeyReductionOptions{}), std::invalid_argument);
}

// A still clip: one key per track. A linear ramp of each channel: two keys.
TEST(KeyReduction, StillTracksGetOneKeyAndRampsTwo) {
  const auto skeleton = TwoJoints();
  Clip still(100, skeleton->num_channels(), 1.0 / 30);
  for (int f = 0; f < 100; ++f) still.at(f, 0) = 0.5;
  ClipKeys keys = ReduceKeys(*skeleton, still, KeyReductionOptions{});
  EXPECT_EQ(keys.dense_keys, 300);  // root rotation, root translation, elbow rotation
  EXPECT_EQ(keys.keys, 3);
  EXPECT_EQ(keys.joints[0].translation, std::vector<int>{0});

  Clip ramp(100, skeleton->num_channels(), 1.0 / 30);
  for (int f = 0; f < 100; ++f) {
    ramp.at(f, 0) = 0.01 * f;
    ramp.at(f, 6) = 0.004 * f;  // the elbow's Y rotation
  }
  keys = ReduceKeys(*skeleton, ramp, KeyReductionOptions{});
  EXPECT_EQ(keys.joints[0].translation, (std::vector<int>{0, 99}));
  EXPECT_EQ(keys.joints[1].rotation, (std::vector<int>{0, 99}));
  EXPECT_EQ(keys.joints[0].rotation, std::vector<int>{0});
  // Exact for slerp and the Euler reading; the normalised lerp (Blender's glTF reading) leaves
  // the middle frames a little behind, within the bound.
  EXPECT_GT(keys.max_error, 0.0);
  EXPECT_LE(keys.max_error, 1e-4);
}

// A moving clip: fewer keys than frames, and the world error measured by FK on the clip the keys
// describe (every joint, its virtual vertices, every frame) within the bound.
TEST(KeyReduction, MovingClipStaysWithinTheBound) {
  const auto skeleton = TwoJoints();
  const int frames = 240;
  Clip clip(frames, skeleton->num_channels(), 1.0 / 120);
  for (int f = 0; f < frames; ++f) {
    const double t = f / 120.0;
    clip.at(f, 0) = 0.3 * t;
    clip.at(f, 1) = 0.05 * std::sin(6 * t);
    clip.at(f, 3) = 0.8 * std::sin(2 * t);
    clip.at(f, 4) = 0.3 * std::cos(3 * t);
    clip.at(f, 5) = 0.2 * t;
    clip.at(f, 6) = 1.2 * std::sin(4 * t);
  }
  for (const double bound : {1e-4, 1e-3}) {
    KeyReductionOptions options;
    options.max_error = bound;
    options.euler_curves = {{EulerOrder::kZXY, true}, {EulerOrder::kZYX, false}};
    const ClipKeys keys = ReduceKeys(*skeleton, clip, options);
    EXPECT_LT(keys.keys, keys.dense_keys) << bound;
    EXPECT_LE(keys.max_error, bound) << bound;
    const Clip reduced = Reconstruct(*skeleton, clip, keys);
    EXPECT_LE(WorldError(*skeleton, clip, reduced, 1.0, options.virtual_vertex), bound) << bound;
  }
  // A looser bound keeps fewer keys.
  KeyReductionOptions tight, loose;
  loose.max_error = 1e-2;
  EXPECT_LT(ReduceKeys(*skeleton, clip, loose).keys, ReduceKeys(*skeleton, clip, tight).keys);
}

TEST(KeyReduction, EulerCurveIsContinuous) {
  const auto skeleton = TwoJoints();
  Clip clip(3, skeleton->num_channels(), 1.0 / 30);
  clip.at(0, 3) = 3.1;  // Z rotation crossing 180 degrees by the file's wrap
  clip.at(1, 3) = -3.1;
  clip.at(2, 3) = -3.0;
  const std::vector<Eigen::Vector3d> e =
      EulerCurve(*skeleton, clip, 0, EulerCurveSpec{EulerOrder::kZXY, true});
  EXPECT_NEAR(e[1].z(), 2 * kPi - 3.1, 1e-12);
  EXPECT_NEAR(e[2].z(), 2 * kPi - 3.0, 1e-12);
}

}  // namespace
}  // namespace rigel
