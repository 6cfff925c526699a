// Foot roll (core/constraints/foot_roll.h), proven by where the pivots go: whatever the foot
// pivots about stays where it was planted, the toes stay planted while the foot rolls over the
// ball and the toe tip, and the ankle moves as the rotations about the pivots say.
#include "core/constraints/foot_roll.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rigel::constraints {
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

}  // namespace
}  // namespace rigel::constraints
