// Foot roll (core/constraints/foot_roll.h), proven by where the pivots go: whatever the foot
// pivots about stays where it was planted, the toes stay planted while the foot rolls over the
// ball and the toe tip, and the ankle moves as the rotations about the pivots say. As a rig
// object (FootRollRig), the same by forward kinematics on a solved leg.
#include "core/constraints/foot_roll.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/ik/constrained_solve.h"
#include "core/raw_skeleton.h"
#include "support/test_skeletons.h"

namespace rigel::constraints {
namespace foot_roll_test {
namespace {

using Eigen::Vector3d;

// A right foot in the ankle's frame (Y up, Z forward, X = up x forward), 8 cm above the ground.
FootRoll Foot() {
  FootRoll f;
  f.heel = Vector3d(0, -0.08, -0.06);
  f.ball = Vector3d(0, -0.08, 0.14);
  f.toe = Vector3d(0, -0.08, 0.22);
  f.inner = Vector3d(0.04, -0.08, 0.08);
  f.outer = Vector3d(-0.04, -0.08, 0.08);
  f.side = Vector3d::UnitX();
  f.forward = Vector3d::UnitZ();
  return f;
}

// A planted ankle somewhere in the world, turned about the vertical.
Eigen::Isometry3d Planted() {
  Eigen::Isometry3d p = Eigen::Isometry3d::Identity();
  p.linear() = Eigen::AngleAxisd(0.7, Vector3d::UnitY()).toRotationMatrix();
  p.translation() = Vector3d(1.5, 0.08, -2.0);
  return p;
}

// The toe tip with the toe joint turned by `angle` about the side axis at the ball.
Vector3d ToeTip(const FootRoll& f, const Eigen::Isometry3d& ankle, double angle) {
  return ankle * (f.ball + Eigen::AngleAxisd(angle, f.side.normalized()) * (f.toe - f.ball));
}

TEST(FootRoll, FlatIsThePlantedAnkle) {
  const FootRollResult r = SolveFootRoll(Foot(), Planted());
  EXPECT_TRUE(r.ankle.isApprox(Planted(), 1e-15));
  EXPECT_EQ(r.toe_angle, 0.0);
}

TEST(FootRoll, HeelRollPivotsAboutTheHeel) {
  FootRoll f = Foot();
  f.roll = -0.4;
  const FootRollResult r = SolveFootRoll(f, Planted());
  EXPECT_NEAR((r.ankle * f.heel - Planted() * f.heel).norm(), 0, 1e-15);
  // The toes lift: the toe tip rises by |toe - heel| sin(0.4) along the world up.
  const double rise = (ToeTip(f, r.ankle, r.toe_angle) - Planted() * f.toe).y();
  EXPECT_NEAR(rise, (f.toe - f.heel).norm() * std::sin(0.4), 1e-12);
  EXPECT_EQ(r.toe_angle, 0.0);
}

TEST(FootRoll, BallRollKeepsBallAndToesPlanted) {
  FootRoll f = Foot();
  f.roll = 0.3;  // under the 30 degree break
  const FootRollResult r = SolveFootRoll(f, Planted());
  EXPECT_NEAR((r.ankle * f.ball - Planted() * f.ball).norm(), 0, 1e-15);
  EXPECT_NEAR((ToeTip(f, r.ankle, r.toe_angle) - Planted() * f.toe).norm(), 0, 1e-15);
  EXPECT_NEAR(r.toe_angle, -0.3, 1e-15);
  // The heel rises by |ball - heel| sin(0.3).
  EXPECT_NEAR((r.ankle * f.heel - Planted() * f.heel).y(), (f.ball - f.heel).norm() * std::sin(0.3),
              1e-12);
}

TEST(FootRoll, PastTheBreakTheFootRollsOnTheToeTip) {
  FootRoll f = Foot();
  f.roll = f.break_angle + 0.25;
  const FootRollResult r = SolveFootRoll(f, Planted());
  // The toes stay planted; the ball leaves the ground.
  EXPECT_NEAR((ToeTip(f, r.ankle, r.toe_angle) - Planted() * f.toe).norm(), 0, 1e-15);
  EXPECT_NEAR(r.toe_angle, -f.break_angle, 1e-15);
  EXPECT_NEAR((r.ankle * f.ball - Planted() * f.ball).y(), (f.toe - f.ball).norm() * std::sin(0.25),
              1e-12);
  // The foot turned by the whole roll about the side axis.
  const Eigen::AngleAxisd turn(Planted().linear().transpose() * r.ankle.linear());
  EXPECT_NEAR(turn.angle(), f.roll, 1e-12);
}

TEST(FootRoll, BankPivotsAboutTheEdgeAndToeTapMovesOnlyTheToes) {
  FootRoll f = Foot();
  f.bank = 0.2;
  FootRollResult r = SolveFootRoll(f, Planted());
  EXPECT_NEAR((r.ankle * f.outer - Planted() * f.outer).norm(), 0, 1e-15);
  EXPECT_GT((r.ankle * f.inner - Planted() * f.inner).norm(), 0.01);
  f.bank = -0.2;
  r = SolveFootRoll(f, Planted());
  EXPECT_NEAR((r.ankle * f.inner - Planted() * f.inner).norm(), 0, 1e-15);
  f.bank = 0;
  f.toe_tap = 0.5;
  r = SolveFootRoll(f, Planted());
  EXPECT_TRUE(r.ankle.isApprox(Planted(), 1e-15));
  EXPECT_EQ(r.toe_angle, 0.5);
}

TEST(FootRoll, ValidateNamesTheFault) {
  std::string error;
  FootRoll f = Foot();
  EXPECT_TRUE(f.Validate(&error));
  f.forward = Vector3d(2, 0, 0);
  EXPECT_FALSE(f.Validate(&error));
  EXPECT_EQ(error, "foot roll: the side and forward axes are parallel");
  f = Foot();
  f.roll = NAN;
  EXPECT_FALSE(f.Validate(&error));
  f = Foot();
  f.break_angle = -0.1;
  EXPECT_FALSE(f.Validate(&error));
}

// ---- The foot roll as a rig object (FootRollRig through ik::ConstrainedFrame) ----

using C = ChannelType;

// A leg whose foot is Foot()'s: hips (6 ch) -- thigh -- shin -- ankle -- toe (at the ball, its
// end at the toe tip), every joint three rotation channels, no rest orientation.
std::shared_ptr<const Skeleton> Leg() {
  RawSkeleton raw;
  RawSkeleton::Joint& hips = raw.roots.emplace_back();
  hips.name = "hips";
  hips.rest_translation = Vector3d(0, 0.95, 0);
  hips.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  const std::vector<C> rot = {C::kZrotation, C::kXrotation, C::kYrotation};
  auto add = [&](RawSkeleton::Joint& parent, const char* name,
                 const Vector3d& offset) -> RawSkeleton::Joint& {
    return testing::AddChild(parent, name, offset, rot);
  };
  RawSkeleton::Joint& thigh = add(hips, "thigh", Vector3d(0.1, 0, 0));
  RawSkeleton::Joint& shin = add(thigh, "shin", Vector3d(0, -0.45, 0));
  RawSkeleton::Joint& ankle = add(shin, "ankle", Vector3d(0, -0.42, 0));
  RawSkeleton::Joint& toe = add(ankle, "toe", Foot().ball);
  toe.end_sites = {Foot().toe - Foot().ball};
  return testing::BuildOrDie(raw);
}

enum LegJoint { kHips, kThigh, kShin, kAnkle, kToe };

TEST(FootRollRig, RollsTheGoalAndTurnsTheToes) {
  const std::shared_ptr<const Skeleton> s = Leg();
  ik::Rig rig(s);
  const int leg = rig.AddTask({.type = ik::TaskType::kPose, .joint = kAnkle});
  ik::Stage& stage = rig.stages.emplace_back();
  stage.chain_root = kThigh;
  stage.settings.position_tolerance = 1e-10;
  stage.settings.angle_tolerance = 1e-10;
  FootRollRig roll;
  roll.task = leg;
  roll.ankle = kAnkle;
  roll.toe = kToe;
  roll.foot = Foot();
  std::string error;
  ASSERT_TRUE(roll.Validate(*s, &error)) << error;
  // The planted ankle: a little forward and out, turned about the vertical.
  Eigen::Isometry3d planted = Eigen::Isometry3d::Identity();
  planted.linear() = Eigen::AngleAxisd(0.4, Vector3d::UnitY()).toRotationMatrix();
  planted.translation() = Vector3d(0.12, 0.2, 0.1);
  std::vector<ik::Target> targets(1);
  targets[0].position = planted.translation();
  targets[0].orientation = Eigen::Quaterniond(planted.linear());
  ik::Workspace ws;
  const std::vector<FootRollRig> rolls = {roll};
  for (const double angle : {-0.3, 0.2, 0.45}) {  // heel, ball, past the break onto the tip
    std::vector<FootRollRig> keyed = rolls;
    keyed[0].foot.roll = angle;
    const ik::ConstrainedFrame frame{.rig = &rig,
                                     .targets = targets,
                                     .constraints = nullptr,
                                     .state = nullptr,
                                     .foot_rolls = keyed,
                                     .workspace = &ws};
    Pose pose(*s);
    ik::SolveReport report;
    bool solved = false;
    ASSERT_TRUE(frame.Run(0, pose, &report, &solved, &error)) << error;
    ASSERT_EQ(report.status, ik::Status::kConverged) << angle;
    Pose fk(*s);
    fk.channels = pose.channels;
    fk.UpdateWorld(*s);
    const Eigen::Isometry3d ankle = fk.world[kAnkle];
    const Vector3d tip = fk.world[kToe] * (Foot().toe - Foot().ball);
    if (angle < 0) {
      // On the heel: the heel stays planted, the toes lift with the foot (no toe turn).
      EXPECT_LT((ankle * Foot().heel - planted * Foot().heel).norm(), 1e-8);
      EXPECT_LT(Eigen::AngleAxisd(fk.world[kToe].linear().transpose() * ankle.linear()).angle(),
                1e-8);
    } else if (angle <= Foot().break_angle) {
      // Over the ball: the ball stays planted and the toes stay flat where they were planted.
      EXPECT_LT((ankle * Foot().ball - planted * Foot().ball).norm(), 1e-8);
      EXPECT_LT(Eigen::AngleAxisd(fk.world[kToe].linear().transpose() * planted.linear()).angle(),
                1e-8);
      EXPECT_LT((tip - planted * Foot().toe).norm(), 1e-8);
      EXPECT_GT((ankle.translation() - planted.translation()).norm(), 0.01);  // the ankle rose
    } else {
      // Past the break: the toe tip stays planted.
      EXPECT_LT((tip - planted * Foot().toe).norm(), 1e-8);
      EXPECT_GT(tip.y() - (ankle * Foot().ball).y(), -1e-12);
    }
  }
}

TEST(FootRollRig, ValidateNamesWhatIsWrong) {
  const std::shared_ptr<const Skeleton> s = Leg();
  FootRollRig roll;
  roll.ankle = kAnkle;
  roll.toe = kShin;  // above the ankle
  roll.foot = Foot();
  std::string error;
  EXPECT_FALSE(roll.Validate(*s, &error));
  EXPECT_NE(error.find("below the ankle 'ankle'"), std::string::npos) << error;
  roll.toe = kToe;
  roll.foot.side = roll.foot.forward;
  EXPECT_FALSE(roll.Validate(*s, &error));
  EXPECT_NE(error.find("parallel"), std::string::npos) << error;
  // A foot roll on a position-only effector is refused by the frame, named.
  ik::Rig rig(s);
  rig.AddTask({.type = ik::TaskType::kPosition, .joint = kAnkle});
  roll.foot = Foot();
  const std::vector<FootRollRig> rolls = {roll};
  std::vector<ik::Target> targets(1);
  ik::Workspace ws;
  const ik::ConstrainedFrame frame{.rig = &rig,
                                   .targets = targets,
                                   .constraints = nullptr,
                                   .state = nullptr,
                                   .foot_rolls = rolls,
                                   .workspace = &ws};
  Pose pose(*s);
  ik::SolveReport report;
  bool solved = false;
  EXPECT_FALSE(frame.Run(0, pose, &report, &solved, &error));
  EXPECT_EQ(error.rfind("foot roll 1: its effector must be a pose effector", 0), 0u) << error;
}

}  // namespace
}  // namespace foot_roll_test
}  // namespace rigel::constraints
