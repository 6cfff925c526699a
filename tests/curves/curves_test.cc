// Filters (against scipy.signal), mirroring, trimming and loops (core/curves/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/curves/filter.h"
#include "core/curves/mirror.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"

namespace rigel {
namespace {

using C = ChannelType;

// The Python that has scipy: Debian's (python3-scipy), which a pyenv shim earlier in PATH hides.
std::string Python() {
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

bool HaveScipy() {
  return std::system((Python() + " -c 'import scipy.signal' > /dev/null 2>&1").c_str()) == 0;
}

// scipy.signal.sosfiltfilt(butter(order, cutoff, fs=rate, output='sos'), x), read back.
std::vector<double> ScipyFiltFilt(const std::vector<double>& x, int order, double cutoff,
                                  double rate) {
  const std::string dir = ::testing::TempDir();
  const std::string in = dir + "/filt_in.txt", out = dir + "/filt_out.txt";
  {
    std::ofstream f(in);
    f.precision(17);
    for (const double v : x) f << v << "\n";
  }
  std::ostringstream cmd;
  cmd.precision(17);
  cmd << Python() << " -c \"import numpy as np, scipy.signal as s; x = np.loadtxt('" << in
      << "'); sos = s.butter(" << order << ", " << cutoff << ", fs=" << rate
      << ", output='sos'); np.savetxt('" << out << "', s.sosfiltfilt(sos, x), fmt='%.17g')\"";
  EXPECT_EQ(std::system(cmd.str().c_str()), 0) << cmd.str();
  std::vector<double> y;
  std::ifstream f(out);
  for (double v; f >> v;) y.push_back(v);
  return y;
}

TEST(Butterworth, RefusesOrdersAndCutoffsOutOfRange) {
  EXPECT_THROW(ButterworthLowPass(0, 6, 120), std::invalid_argument);
  EXPECT_THROW(ButterworthLowPass(9, 6, 120), std::invalid_argument);
  EXPECT_THROW(ButterworthLowPass(2, 60, 120), std::invalid_argument);
  EXPECT_THROW(ButterworthLowPass(2, 0, 120), std::invalid_argument);
  EXPECT_THROW(ButterworthLowPass(2, 6, 0), std::invalid_argument);
}

// Unit gain at DC; the filtfilt of a constant is the constant.
TEST(Butterworth, PassesConstants) {
  for (int order = 1; order <= 6; ++order) {
    const std::vector<Biquad> sos = ButterworthLowPass(order, 6, 120);
    const std::vector<double> x(50, 3.25);
    for (const double y : FiltFilt(sos, x)) EXPECT_NEAR(y, 3.25, 1e-12) << order;
  }
}

// The response on noisy mocap-like data matches scipy.signal.sosfiltfilt for orders 1 to 6 and
// several cutoffs and rates.
TEST(Butterworth, MatchesScipy) {
  if (!HaveScipy()) GTEST_SKIP() << "python3 with scipy not found: scipy cross-check skipped";
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<double> x(500);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = static_cast<double>(i) / 120.0;
    x[i] = std::sin(2 * t) + 0.3 * std::sin(11 * t) + noise(rng) + 0.2 * t;
  }
  double worst = 0;
  for (const auto& [order, cutoff, rate] :
       std::vector<std::tuple<int, double, double>>{{2, 6, 120},
                                                    {4, 6, 120},
                                                    {1, 10, 120},
                                                    {3, 4, 30},
                                                    {5, 12, 100},
                                                    {6, 20, 60},
                                                    {2, 0.5, 24}}) {
    const std::vector<double> ours = FiltFilt(ButterworthLowPass(order, cutoff, rate), x);
    const std::vector<double> theirs = ScipyFiltFilt(x, order, cutoff, rate);
    ASSERT_EQ(theirs.size(), ours.size());
    for (std::size_t i = 0; i < ours.size(); ++i) {
      EXPECT_NEAR(ours[i], theirs[i], 1e-9) << order << " " << cutoff << " " << rate << " " << i;
      worst = std::max(worst, std::abs(ours[i] - theirs[i]));
    }
  }
  std::printf("largest difference from scipy.signal.sosfiltfilt: %.3g\n", worst);
}

// hips (position + ZXY) -> LeftUpLeg / RightUpLeg (ZXY) -> LeftLeg / RightLeg (X) -> feet (ZXY)
//   and a spine -> head (ZXY); the two sides' rest offsets are mirror images across x = 0, but
//   the left side has rest orientations and the right does not.
std::unique_ptr<Skeleton> Figure(bool asymmetric_rest = true) {
  RawSkeleton raw;
  RawSkeleton::Joint hips;
  hips.name = "Hips";
  hips.rest_translation = Eigen::Vector3d(0, 1, 0);
  hips.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  auto limb = [&](const std::string& side, double x) {
    RawSkeleton::Joint up, low, foot;
    up.name = side + "UpLeg";
    up.rest_translation = Eigen::Vector3d(x, -0.05, 0);
    up.channels = {C::kZrotation, C::kXrotation, C::kYrotation};
    low.name = side + "Leg";
    low.rest_translation = Eigen::Vector3d(0, -0.45, 0.01);
    low.channels = {C::kXrotation};
    foot.name = side + "Foot";
    foot.rest_translation = Eigen::Vector3d(0, -0.45, -0.01);
    foot.channels = {C::kZrotation, C::kXrotation, C::kYrotation};
    if (asymmetric_rest && side == "Left") {
      up.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()));
      foot.rest_orientation =
          Eigen::Quaterniond(Eigen::AngleAxisd(-0.7, Eigen::Vector3d(1, 2, 3).normalized()));
      // Positions stay mirror images: the offset below the turned joint is turned back, and the
      // knee's hinge is turned back to the world's X (a one-channel joint holds only rotations
      // about its own axis).
      low.rest_translation = up.rest_orientation.conjugate() * low.rest_translation;
      low.rest_orientation = up.rest_orientation.conjugate();
    }
    low.children.push_back(foot);
    up.children.push_back(low);
    return up;
  };
  hips.children.push_back(limb("Left", 0.1));
  hips.children.push_back(limb("Right", -0.1));
  RawSkeleton::Joint spine;
  spine.name = "Spine";
  spine.rest_translation = Eigen::Vector3d(0, 0.5, 0);
  spine.channels = {C::kZrotation, C::kXrotation, C::kYrotation};
  hips.children.push_back(spine);
  raw.roots.push_back(hips);
  std::string error;
  auto skeleton = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(skeleton) << error;
  return skeleton;
}

Clip Walk(const Skeleton& skeleton, int frames = 120) {
  Clip clip(frames, skeleton.num_channels(), 1.0 / 60);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> phase(0, 6.28);
  std::vector<double> phases(skeleton.num_channels());
  for (double& p : phases) p = phase(rng);
  for (int f = 0; f < frames; ++f) {
    const double t = f / 60.0;
    for (int c = 0; c < skeleton.num_channels(); ++c) {
      clip.at(f, c) = 0.4 * std::sin(3 * t + phases[c]) + (c == 2 ? 0.8 * t : 0.0);
    }
  }
  return clip;
}

// Over frames [margin, frames - margin).
double MaxWorldDifference(const Skeleton& skeleton, const Clip& a, const Clip& b, int margin = 0) {
  std::vector<Eigen::Isometry3d> wa(skeleton.num_joints()), wb(skeleton.num_joints());
  double worst = 0;
  for (int f = margin; f < a.num_frames() - margin; ++f) {
    ForwardKinematics(skeleton, a.frame(f), wa);
    ForwardKinematics(skeleton, b.frame(f), wb);
    for (int j = 0; j < skeleton.num_joints(); ++j) {
      worst = std::max(worst, (wa[j].matrix() - wb[j].matrix()).cwiseAbs().maxCoeff());
    }
  }
  return worst;
}

TEST(Mirror, FindsCounterpartsByTheirSides) {
  const auto skeleton = Figure();
  const std::vector<int> mates = MirrorCounterparts(*skeleton);
  const int lu = skeleton->FindJoint("LeftUpLeg"), ru = skeleton->FindJoint("RightUpLeg");
  EXPECT_EQ(mates[lu], ru);
  EXPECT_EQ(mates[ru], lu);
  EXPECT_EQ(mates[skeleton->FindJoint("Spine")], skeleton->FindJoint("Spine"));
  EXPECT_EQ(mates[skeleton->FindJoint("LeftFoot")], skeleton->FindJoint("RightFoot"));
  const MirrorPlane plane = CharacterPlane(*skeleton, mates);
  EXPECT_NEAR(std::abs(plane.normal.x()), 1.0, 1e-12);
  EXPECT_NEAR(plane.point.x(), 0.0, 1e-12);
  EXPECT_THROW(MirrorCounterparts(*skeleton, {{"LeftUpLeg", "Nope"}}), std::invalid_argument);
}

// Mirroring twice gives the clip back; a mirrored left foot's world path is the reflection of the
// right foot's (rest orientations differ between the sides).
TEST(Mirror, TwiceIsIdentityAndFeetPathsReflect) {
  const auto skeleton = Figure();
  const Clip clip = Walk(*skeleton);
  const std::vector<int> mates = MirrorCounterparts(*skeleton);
  const MirrorPlane plane = CharacterPlane(*skeleton, mates);
  const Clip once = MirrorClip(*skeleton, clip, mates, plane);
  const Clip twice = MirrorClip(*skeleton, once, mates, plane);
  EXPECT_LT(MaxWorldDifference(*skeleton, clip, twice), 1e-9);
  for (int f = 0; f < clip.num_frames(); ++f) {
    for (int c = 0; c < clip.num_channels(); ++c) {
      EXPECT_NEAR(std::remainder(twice.at(f, c) - clip.at(f, c), 2 * kPi), 0.0, 1e-9) << f << c;
    }
  }
  const int left = skeleton->FindJoint("LeftFoot"), right = skeleton->FindJoint("RightFoot");
  std::vector<Eigen::Isometry3d> w(skeleton->num_joints()), m(skeleton->num_joints());
  const Eigen::Matrix3d reflect =
      Eigen::Matrix3d::Identity() - 2 * plane.normal * plane.normal.transpose();
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematics(*skeleton, clip.frame(f), w);
    ForwardKinematics(*skeleton, once.frame(f), m);
    const Eigen::Vector3d expected = plane.point + reflect * (w[right].translation() - plane.point);
    EXPECT_LT((m[left].translation() - expected).norm(), 1e-9) << f;
    const Eigen::Vector3d expected_right =
        plane.point + reflect * (w[left].translation() - plane.point);
    EXPECT_LT((m[right].translation() - expected_right).norm(), 1e-9) << f;
  }
}

TEST(Trim, BySecondsKeepsTheNearestFrames) {
  Clip clip(100, 2, 0.01);
  for (int f = 0; f < 100; ++f) clip.at(f, 0) = f;
  const Clip t = TrimClipSeconds(clip, 0.204, 0.5);
  ASSERT_EQ(t.num_frames(), 31);
  EXPECT_EQ(t.at(0, 0), 20);
  EXPECT_EQ(t.at(30, 0), 50);
  EXPECT_THROW(TrimClipSeconds(clip, 0.5, 0.2), std::invalid_argument);
  EXPECT_THROW(TrimClipSeconds(clip, 5, 6), std::invalid_argument);
}

// The last frame meets the first (plus the root's horizontal travel), frames before the blend
// are untouched, and the root's height returns.
TEST(Loop, EndMeetsStartWithTheTravelKept) {
  const auto skeleton = Figure();
  const Clip clip = Walk(*skeleton, 100);
  LoopOptions options;
  options.blend_frames = 20;
  const Clip loop = LoopClip(*skeleton, clip, options);
  for (int f = 0; f < 80; ++f) {
    for (int c = 0; c < clip.num_channels(); ++c) EXPECT_EQ(loop.at(f, c), clip.at(f, c));
  }
  std::vector<Eigen::Isometry3d> a(skeleton->num_joints()), b(skeleton->num_joints());
  ForwardKinematics(*skeleton, loop.frame(0), a);
  ForwardKinematics(*skeleton, loop.frame(99), b);
  const Eigen::Vector3d travel =
      Eigen::Vector3d(clip.at(99, 0) - clip.at(0, 0), 0, clip.at(99, 2) - clip.at(0, 2));
  for (int j = 0; j < skeleton->num_joints(); ++j) {
    EXPECT_LT((b[j].translation() - a[j].translation() - travel).norm(), 1e-9) << j;
    EXPECT_LT((b[j].linear() - a[j].linear()).cwiseAbs().maxCoeff(), 1e-9) << j;
  }
  EXPECT_THROW(LoopClip(*skeleton, clip, {0, 1}), std::invalid_argument);
  EXPECT_THROW(LoopClip(*skeleton, clip, {100, 1}), std::invalid_argument);
}

// Filtering removes jitter, keeps a planted foot where it was, and leaves unchosen joints alone.
TEST(Filter, SmoothsRotationsAndKeepsChosenJointsOnly) {
  const auto skeleton = Figure(false);
  Clip clip = Walk(*skeleton, 240);
  std::mt19937 rng(11);
  std::normal_distribution<double> jitter(0.0, 0.02);
  Clip noisy = clip;
  for (double& v : noisy.values()) v += jitter(rng);
  FilterOptions options;
  options.cutoff_hz = 4;
  options.keep_contacts = false;
  const Clip filtered = FilterClip(*skeleton, noisy, options);
  // Closer to the clean clip than the noisy one, in world space, away from the ends (a zero-phase
  // filter's ends follow the data's first and last values, noise included, as scipy's do).
  EXPECT_LT(MaxWorldDifference(*skeleton, clip, filtered, 10),
            0.5 * MaxWorldDifference(*skeleton, clip, noisy, 10));
  options.joints = {skeleton->FindJoint("Spine")};
  const Clip spine_only = FilterClip(*skeleton, noisy, options);
  const int spine = skeleton->FindJoint("Spine");
  for (int c = 0; c < noisy.num_channels(); ++c) {
    if (skeleton->channel_joint(c) == spine) continue;
    for (int f = 0; f < noisy.num_frames(); ++f) EXPECT_EQ(spine_only.at(f, c), noisy.at(f, c));
  }
  options.cutoff_hz = 40;
  EXPECT_THROW(FilterClip(*skeleton, noisy, options), std::invalid_argument);
}

}  // namespace
}  // namespace rigel
