// ik::BakeJob: the validity matrix, then golden behaviour on a small arm. Every count of the
// summary is checked independently by re-running FK on the baked clip.
//
//   root (Xposition Yposition Zposition, locked) --0.3-- elbow (Yrotation, limit [0.7, 2.6] rad)
//   shoulder = root's ZXY rotation                          --0.25-- wrist (ZXY) --0.08-- tip
#include "core/ik/bake.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "support/test_skeletons.h"

namespace rigel {
namespace bake_test {
namespace {

using C = ChannelType;
constexpr double kDeg = 3.14159265358979323846 / 180;

// The arm of the file comment (joints j0 = root, j1 = elbow, j2 = wrist).
std::shared_ptr<const Skeleton> Arm() {
  return testing::Chain(
      {{C::kXposition, C::kYposition, C::kZposition, C::kZrotation, C::kXrotation, C::kYrotation},
       {C::kYrotation},
       testing::kZXY},
      {Eigen::Vector3d::Zero(), Eigen::Vector3d(0.3, 0, 0), Eigen::Vector3d(0.25, 0, 0)});
}

const Eigen::Vector3d kTip(0.08, 0, 0);
constexpr int kFrames = 30;
constexpr int kSkippedFrame = 7;            // the callback skips it
constexpr int kFarFrames[] = {12, 13, 20};  // targets 5 m away: out of reach
constexpr int kElbowChannel = 6;            // channels: root 0-5, elbow 6, wrist 7-9
// Reachable targets need an elbow of at least 0.9 rad; out of reach the arm stretches (0 rad)
// and stops on this limit.
constexpr double kElbowMin = 0.7;

bool IsFar(int f) {
  for (int far : kFarFrames) {
    if (f == far) return true;
  }
  return false;
}

// A clip whose root moves and whose arm channels vary a little.
Clip SourceClip(const Skeleton& s) {
  Clip clip(kFrames, s.num_channels(), 1.0 / 30);
  for (int f = 0; f < kFrames; ++f) {
    clip.at(f, 0) = 0.01 * f;  // root X
    clip.at(f, 3) = 0.1 * std::sin(0.2 * f);
    clip.at(f, 4) = 0.05 * f / kFrames;
    clip.at(f, 6) = 0.6 + 0.1 * std::cos(0.3 * f);
    clip.at(f, 8) = -0.2;
  }
  return clip;
}

// The target of frame f: the tip of another arm pose (reachable), or 5 m away.
Eigen::Vector3d TargetOf(const Skeleton& s, int f) {
  Pose goal(s);
  goal.channels[0] = 0.01 * f;
  goal.channels[3] = 0.4 + 0.02 * f;
  goal.channels[5] = -0.3;
  goal.channels[6] = 0.9 + 0.01 * f;
  goal.channels[7] = 0.2;
  goal.UpdateWorld(s);
  const Eigen::Vector3d reachable = goal.world[2] * kTip;
  return IsFar(f) ? reachable + Eigen::Vector3d(5, 0, 0) : reachable;
}

struct Fixture {
  std::shared_ptr<const Skeleton> skeleton = Arm();
  ik::Rig rig{skeleton};
  std::vector<ik::Target> targets;
  Clip clip = SourceClip(*skeleton);
  Clip output;
  ik::Workspace workspace;
  ik::BakeSummary summary;

  Fixture() {
    ik::Task task;
    task.joint = 2;
    task.offset = kTip;
    rig.AddTask(task);
    for (int c = 0; c < 3; ++c) rig.Lock(c);  // the root's translation follows the clip
    rig.SetLimits(kElbowChannel, kElbowMin, 150 * kDeg);
    targets.resize(1);
  }

  ik::BakeJob Job() {
    ik::BakeJob job;
    job.rig = &rig;
    job.targets = &targets;
    job.clip = &clip;
    job.output = &output;
    job.workspace = &workspace;
    job.summary = &summary;
    job.on_frame = [this](int f, Pose& pose, std::string*) {
      EXPECT_EQ(pose.channels[0], clip.at(f, 0)) << "the pose holds the clip's row";
      targets[0].position = TargetOf(*skeleton, f);
      return f == kSkippedFrame ? ik::FrameAction::kSkip : ik::FrameAction::kSolve;
    };
    return job;
  }
};

TEST(BakeJob, Validity) {
  {  // Default job.
    ik::BakeJob job;
    EXPECT_FALSE(job.Validate());
    EXPECT_FALSE(job.Run());
    EXPECT_FALSE(job.error.empty());
  }
  {  // Each required input missing.
    for (int missing = 0; missing < 5; ++missing) {
      Fixture fx;
      ik::BakeJob job = fx.Job();
      if (missing == 0) job.rig = nullptr;
      if (missing == 1) job.targets = nullptr;
      if (missing == 2) job.clip = nullptr;
      if (missing == 3) job.output = nullptr;
      if (missing == 4) job.workspace = nullptr;
      EXPECT_FALSE(job.Validate()) << missing;
      EXPECT_FALSE(job.Run()) << missing;
    }
  }
  {  // Rig without a skeleton.
    Fixture fx;
    ik::Rig empty;
    ik::BakeJob job = fx.Job();
    job.rig = &empty;
    EXPECT_FALSE(job.Validate());
  }
  {  // Clip of another layout.
    Fixture fx;
    Clip other(kFrames, fx.skeleton->num_channels() - 1, 1.0 / 30);
    ik::BakeJob job = fx.Job();
    job.clip = &other;
    EXPECT_FALSE(job.Validate());
    EXPECT_NE(job.error.find("channels"), std::string::npos) << job.error;
  }
  {  // Fewer targets than tasks.
    Fixture fx;
    fx.targets.clear();
    EXPECT_FALSE(fx.Job().Validate());
  }
  {  // A pose of another size.
    Fixture fx;
    Pose wrong;
    ik::BakeJob job = fx.Job();
    job.pose = &wrong;
    EXPECT_FALSE(job.Validate());
  }
  {  // Output is the source.
    Fixture fx;
    ik::BakeJob job = fx.Job();
    job.output = &fx.clip;
    EXPECT_FALSE(job.Validate());
  }
  {  // Minimal valid job: no callback, no summary, no pose.
    Fixture fx;
    ik::BakeJob job;
    job.rig = &fx.rig;
    job.targets = &fx.targets;
    job.clip = &fx.clip;
    job.output = &fx.output;
    job.workspace = &fx.workspace;
    EXPECT_TRUE(job.Validate()) << job.error;
    EXPECT_TRUE(job.Run()) << job.error;
    EXPECT_EQ(fx.output.num_frames(), kFrames);
  }
}

// Golden: re-run FK on every baked frame and recount everything the summary says.
TEST(BakeJob, SummaryMatchesForwardKinematics) {
  Fixture fx;
  ASSERT_TRUE(fx.Job().Run()) << fx.Job().error;
  const Skeleton& s = *fx.skeleton;
  ASSERT_EQ(fx.output.num_frames(), kFrames);
  ASSERT_EQ(fx.output.num_channels(), s.num_channels());
  EXPECT_EQ(fx.output.frame_time(), fx.clip.frame_time());

  int within = 0, outside = 0, on_limit = 0;
  double residual_max = 0, residual_sum = 0;
  int worst = -1;
  for (int f = 0; f < kFrames; ++f) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(fx.output.at(f, c), fx.clip.at(f, c))
          << "locked root channel " << c << " frame " << f;
    }
    if (f == kSkippedFrame) {
      for (int c = 0; c < s.num_channels(); ++c) {
        EXPECT_EQ(fx.output.at(f, c), fx.clip.at(f, c)) << "skipped frame copied, channel " << c;
      }
      continue;
    }
    Pose pose(s);
    pose.SetFromRow(s, fx.output.frame(f));
    const double error = (pose.world[2] * kTip - TargetOf(s, f)).norm();
    (error <= 1e-6 ? within : outside) += 1;
    EXPECT_EQ(error > 1e-6, IsFar(f)) << "frame " << f << " error " << error;
    residual_sum += error;
    if (error > residual_max) {
      residual_max = error;
      worst = f;
    }
    const double elbow = fx.output.at(f, kElbowChannel);
    EXPECT_GE(elbow, kElbowMin) << "limits hold, frame " << f;
    EXPECT_LE(elbow, 150 * kDeg) << "limits hold, frame " << f;
    if (elbow == kElbowMin || elbow == 150 * kDeg) ++on_limit;
  }
  const ik::BakeSummary& summary = fx.summary;
  EXPECT_EQ(summary.frames, kFrames);
  EXPECT_EQ(summary.skipped, 1);
  EXPECT_EQ(summary.converged, within);
  EXPECT_EQ(summary.not_converged + summary.unreachable, outside);
  EXPECT_EQ(summary.solved(), kFrames - 1);
  EXPECT_NEAR(summary.residual_max, residual_max, 1e-9);
  EXPECT_NEAR(summary.residual_mean, residual_sum / (kFrames - 1), 1e-9);
  EXPECT_EQ(summary.worst_frame, worst);
  EXPECT_EQ(summary.frames_with_limit_hits, on_limit);
  EXPECT_GT(on_limit, 0) << "a stretched arm ends with the elbow on its limit";
  EXPECT_GT(summary.iterations, 0);
  EXPECT_NEAR(summary.iterations_mean, static_cast<double>(summary.iterations) / (kFrames - 1),
              1e-12);
  EXPECT_GE(summary.iterations_max, summary.iterations_mean);
}

// Warm start (workspace carried over) and cold start (a fresh workspace each frame) agree.
TEST(BakeJob, WarmStartEqualsColdStart) {
  Fixture warm, cold;
  ASSERT_TRUE(warm.Job().Run());
  ik::BakeJob job = cold.Job();
  job.warm_start = false;
  ASSERT_TRUE(job.Run()) << job.error;
  for (int f = 0; f < kFrames; ++f) {
    for (int c = 0; c < warm.output.num_channels(); ++c) {
      EXPECT_NEAR(warm.output.at(f, c), cold.output.at(f, c), 1e-9) << f << "," << c;
    }
  }
  EXPECT_EQ(warm.summary.converged, cold.summary.converged);
  EXPECT_EQ(warm.summary.unreachable, cold.summary.unreachable);
  EXPECT_NEAR(warm.summary.residual_max, cold.summary.residual_max, 1e-9);
}

// With forward_kinematics the callback sees up-to-date world transforms.
TEST(BakeJob, CallbackSeesWorldTransforms) {
  Fixture fx;
  ik::BakeJob job = fx.Job();
  job.on_frame = [&](int f, Pose& pose, std::string*) {
    Pose fresh(*fx.skeleton);
    fresh.SetFromRow(*fx.skeleton, fx.clip.frame(f));
    EXPECT_TRUE(pose.world[2].isApprox(fresh.world[2], 0)) << f;
    return ik::FrameAction::kSkip;
  };
  ASSERT_TRUE(job.Run());
  EXPECT_EQ(fx.summary.skipped, kFrames);
  EXPECT_EQ(fx.summary.worst_frame, -1);
}

TEST(BakeJob, CallbackFailureStopsTheBake) {
  Fixture fx;
  ik::BakeJob job = fx.Job();
  int calls = 0;
  job.on_frame = [&](int f, Pose&, std::string* error) {
    ++calls;
    if (f == 3) {
      *error = "script error on frame 4";
      return ik::FrameAction::kFail;
    }
    return ik::FrameAction::kSolve;
  };
  EXPECT_FALSE(job.Run());
  EXPECT_EQ(job.error, "script error on frame 4");
  EXPECT_EQ(calls, 4);
}

// The loop keeps no size across a callback: growing the source clip bakes the frames it had;
// shrinking it stops the bake with an error (never a read or write out of bounds).
TEST(BakeJob, CallbackResizingTheClip) {
  {
    Fixture fx;
    ik::BakeJob job = fx.Job();
    job.on_frame = [&](int f, Pose&, std::string*) {
      if (f == 1) fx.clip.Resize(kFrames + 200000);
      return ik::FrameAction::kSkip;
    };
    ASSERT_TRUE(job.Run()) << job.error;
    EXPECT_EQ(fx.output.num_frames(), kFrames);
  }
  {
    Fixture fx;
    ik::BakeJob job = fx.Job();
    job.on_frame = [&](int f, Pose&, std::string*) {
      if (f == 1) fx.clip.Resize(2);
      return ik::FrameAction::kSkip;
    };
    EXPECT_FALSE(job.Run());
    EXPECT_NE(job.error.find("changed size"), std::string::npos) << job.error;
  }
}

TEST(BakeJob, InvalidRigNamesTheFrame) {
  Fixture fx;
  fx.rig.tasks[0].weight = -1;  // rejected by Workspace::Prepare
  ik::BakeJob job = fx.Job();
  EXPECT_FALSE(job.Run());
  EXPECT_EQ(job.error.rfind("frame 1: invalid rig: ", 0), 0u) << job.error;
}

}  // namespace
}  // namespace bake_test
}  // namespace rigel
