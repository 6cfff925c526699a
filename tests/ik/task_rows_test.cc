// The rows the solver runs on (core/ik/task_rows.h), taken from the solver itself
// (internal::EvaluateStage: the general path's FillSystem and the serial path's system), against
// central finite differences of the task errors computed here from ForwardKinematics, Pinocchio
// style (alpha = 1e-7, tolerance sqrt(alpha) relative). Every task type (position on all axes,
// on two axes, with the alternate Jacobian; orientation; pose; aim; pole), all six Euler orders,
// position channels listed before and after the rotations, on the tree of ik_test_util.h: a
// 6-channel floating root, 3-channel joints, a joint with prismatic channels around its
// rotations, rest orientations, an effector offset, a task weight and a joint strength.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>

#include "core/ik/iterate.h"
#include "core/ik/solve.h"
#include "core/pose.h"
#include "ik_test_util.h"

namespace rigel::ik {
namespace task_rows_test {
namespace {

constexpr double kAlpha = 1e-7;
const double kTolerance = std::sqrt(kAlpha);

struct Case {
  EulerOrder order;
  bool position_last;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(EulerOrderName(info.param.order)) +
         (info.param.position_last ? "_position_last" : "_position_first");
}

// One task on the hand of the tree, one iterative stage, a weight and a joint strength that the
// rows must carry.
struct Problem {
  std::shared_ptr<const Skeleton> skeleton;
  Rig rig;
  std::vector<Target> targets;
  int hand = -1;
  double weight = 0.0;
};

Problem MakeProblem(const Case& param, const Task& task_in, std::mt19937& rng) {
  Problem s;
  s.skeleton = rigel::testing::FdTree(param.order, param.position_last);
  s.rig = Rig(s.skeleton);
  s.hand = s.skeleton->FindJoint("hand");
  Task task = task_in;
  task.joint = s.hand;
  task.offset = Eigen::Vector3d(0.05, -0.02, 0.11);
  task.offset_rotation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 1, 0).normalized()));
  task.weight = 0.8;
  if (task.type == TaskType::kPole) {
    task.pole_root = s.skeleton->FindJoint("spine");
    task.pole_mid = s.skeleton->FindJoint("slider");
  }
  s.rig.AddTask(task);
  s.rig.SetStrength(s.skeleton->FindJoint("spine"), 1.5);
  s.rig.SetStrength(s.skeleton->FindJoint("slider"), 0.7);
  s.rig.stages.push_back(Stage{});
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Target target;
  target.position = Eigen::Vector3d(u(rng), 1.5 + u(rng), u(rng));
  target.orientation = Eigen::Quaterniond(
      Eigen::AngleAxisd(2.0 * u(rng), Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized()));
  target.weight = 0.9;
  s.targets = {target};
  s.weight = task.weight * target.weight;
  return s;
}

std::vector<double> RandomChannels(const Skeleton& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> angle(-2.5, 2.5);
  std::vector<double> ch(s.num_channels());
  for (double& v : ch) v = angle(rng);
  return ch;
}

std::vector<Eigen::Isometry3d> World(const Skeleton& s, const std::vector<double>& ch) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, ch, world);
  return world;
}

// The task's quantities at channel values `ch`, computed here from ForwardKinematics.
struct Effector {
  Eigen::Vector3d point;      // world_from_hand * offset.
  Eigen::Matrix3d rotation;   // world_from_hand.R * offset_rotation.
  Eigen::Vector3d aim;        // world_from_hand.R * aim_axis.
  Eigen::Vector3d root, mid;  // Pole chain joints' origins.
};

Effector Evaluate(const Problem& s, const std::vector<double>& ch) {
  const std::vector<Eigen::Isometry3d> world = World(*s.skeleton, ch);
  const Task& t = s.rig.tasks[0];
  Effector e;
  e.point = world[s.hand] * t.offset;
  e.rotation = world[s.hand].linear() * t.offset_rotation.toRotationMatrix();
  e.aim = world[s.hand].linear() * t.aim_axis;
  if (t.type == TaskType::kPole) {
    e.root = world[t.pole_root].translation();
    e.mid = world[t.pole_mid].translation();
  }
  return e;
}

// Central difference of f (any vector quantity of the channels) for channel c.
Eigen::VectorXd Difference(const std::function<Eigen::VectorXd(const std::vector<double>&)>& f,
                           std::vector<double> ch, int c) {
  const double keep = ch[c];
  ch[c] = keep + kAlpha;
  const Eigen::VectorXd plus = f(ch);
  ch[c] = keep - kAlpha;
  const Eigen::VectorXd minus = f(ch);
  return (plus - minus) / (2 * kAlpha);
}

// Strength scale of channel c's column.
double Strength(const Problem& s, int c) { return s.rig.strength[s.skeleton->channel_joint(c)]; }

// The solver's rows and error; checks the rows against `expected` (rows x channels, before
// weight and strength) and the error against `expected_error` (before weight).
void ExpectRows(const Problem& s, const std::vector<double>& ch, bool serial,
                const Eigen::MatrixXd& expected, const Eigen::VectorXd& expected_error,
                const std::string& what, double* worst) {
  Workspace ws;
  ASSERT_TRUE(ws.Prepare(s.rig));
  Eigen::MatrixXd j;
  Eigen::VectorXd e;
  ASSERT_TRUE(internal::EvaluateStage(s.rig, s.targets, ch, ws, 0, serial, &j, &e)) << what;
  ASSERT_EQ(j.rows(), expected.rows()) << what;
  Eigen::MatrixXd scaled = s.weight * expected;
  for (int c = 0; c < scaled.cols(); ++c) scaled.col(c) *= Strength(s, c);
  const double scale = std::max(1.0, scaled.cwiseAbs().maxCoeff());
  const double deviation = (j - scaled).cwiseAbs().maxCoeff() / scale;
  *worst = std::max(*worst, deviation);
  EXPECT_LE(deviation, kTolerance) << what << "\nsolver\n"
                                   << j << "\nfinite differences\n"
                                   << scaled;
  EXPECT_LE((e - s.weight * expected_error).cwiseAbs().maxCoeff(), 1e-12) << what;
}

// Deviations recorded in the test XML (--gtest_output=xml).
std::string Scientific(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2e", v);
  return text;
}

class TaskRowsTest : public ::testing::TestWithParam<Case> {};

// Position rows: d(point)/d(channel) on the constrained axes; the alternate Jacobian equals it
// when the effector is on the target (its columns are built at the goal).
TEST_P(TaskRowsTest, Position) {
  std::mt19937 rng(1);
  double worst = 0.0;
  for (const std::uint8_t axes : {std::uint8_t{0b111}, std::uint8_t{0b101}}) {
    for (const bool alternate : {false, true}) {
      Task task;
      task.type = TaskType::kPosition;
      task.position_axes = axes;
      task.alternate_jacobian = alternate;
      for (int trial = 0; trial < 3; ++trial) {
        Problem s = MakeProblem(GetParam(), task, rng);
        const std::vector<double> ch = RandomChannels(*s.skeleton, rng);
        if (alternate) s.targets[0].position = Evaluate(s, ch).point;
        auto point = [&](const std::vector<double>& q) -> Eigen::VectorXd {
          const Eigen::Vector3d p = Evaluate(s, q).point;
          Eigen::VectorXd out(axes == 0b111 ? 3 : 2);
          int n = 0;
          for (int a = 0; a < 3; ++a) {
            if (axes & (1 << a)) out[n++] = p[a];
          }
          return out;
        };
        Eigen::MatrixXd fd(point(ch).size(), s.skeleton->num_channels());
        for (int c = 0; c < fd.cols(); ++c) fd.col(c) = Difference(point, ch, c);
        Eigen::VectorXd goal(fd.rows());
        {
          int n = 0;
          for (int a = 0; a < 3; ++a) {
            if (axes & (1 << a)) goal[n++] = s.targets[0].position[a];
          }
        }
        const Eigen::VectorXd error = goal - point(ch);
        const std::string what = "axes " + std::to_string(axes) + (alternate ? " alternate" : "");
        ExpectRows(s, ch, false, fd, error, what, &worst);
        if (axes == 0b111 && !alternate)
          ExpectRows(s, ch, true, fd, error, what + " serial", &worst);
      }
    }
  }
  RecordProperty("worst_relative_deviation", Scientific(worst));
}

// The angular velocity of the effector frame by central differences: log(R(+h) R(-h)^T) / 2h.
Eigen::MatrixXd AngularRates(const Problem& s, const std::vector<double>& ch) {
  Eigen::MatrixXd w(3, s.skeleton->num_channels());
  for (int c = 0; c < w.cols(); ++c) {
    std::vector<double> q = ch;
    q[c] = ch[c] + kAlpha;
    const Eigen::Matrix3d plus = Evaluate(s, q).rotation;
    q[c] = ch[c] - kAlpha;
    const Eigen::Matrix3d minus = Evaluate(s, q).rotation;
    const Eigen::AngleAxisd d(Eigen::Matrix3d(plus * minus.transpose()));
    w.col(c) = d.axis() * d.angle() / (2 * kAlpha);
  }
  return w;
}

// log(R_d R_e^T) as a rotation vector.
Eigen::Vector3d Log(const Eigen::Matrix3d& r) {
  const Eigen::AngleAxisd aa(r);
  return aa.axis() * aa.angle();
}

// Orientation rows: the effector frame's angular velocity; pose rows: position rows on top.
TEST_P(TaskRowsTest, OrientationAndPose) {
  std::mt19937 rng(2);
  double worst = 0.0;
  for (const TaskType type : {TaskType::kOrientation, TaskType::kPose}) {
    Task task;
    task.type = type;
    for (int trial = 0; trial < 3; ++trial) {
      const Problem s = MakeProblem(GetParam(), task, rng);
      const std::vector<double> ch = RandomChannels(*s.skeleton, rng);
      const Eigen::MatrixXd w = AngularRates(s, ch);
      const Eigen::Vector3d rotation_error =
          Log(s.targets[0].orientation.toRotationMatrix() * Evaluate(s, ch).rotation.transpose());
      if (type == TaskType::kOrientation) {
        ExpectRows(s, ch, false, w, rotation_error, "orientation", &worst);
        continue;
      }
      auto point = [&](const std::vector<double>& q) -> Eigen::VectorXd {
        return Evaluate(s, q).point;
      };
      Eigen::MatrixXd fd(6, s.skeleton->num_channels());
      for (int c = 0; c < fd.cols(); ++c) {
        fd.col(c) << Difference(point, ch, c), w.col(c);
      }
      Eigen::VectorXd error(6);
      error << s.targets[0].position - Evaluate(s, ch).point, rotation_error;
      ExpectRows(s, ch, false, fd, error, "pose", &worst);
      ExpectRows(s, ch, true, fd, error, "pose serial", &worst);
    }
  }
  RecordProperty("worst_relative_deviation", Scientific(worst));
}

// The aim error basis: u1 a unit vector normal to a (a x X, or a x Y near X), u2 = a x u1.
void AimBasis(const Eigen::Vector3d& a, Eigen::Vector3d* u1, Eigen::Vector3d* u2) {
  const Eigen::Vector3d other =
      std::abs(a.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  *u1 = a.cross(other).normalized();
  *u2 = a.cross(*u1);
}

// The aim error: the rotation vector r taking the aim axis a onto the direction d to the target,
// on (u1, u2).
Eigen::Vector2d AimError(const Effector& e, const Eigen::Vector3d& target) {
  const Eigen::Vector3d d = (target - e.point).normalized();
  const Eigen::Vector3d n = e.aim.cross(d);
  const Eigen::Vector3d r =
      n.norm() > 0 ? Eigen::Vector3d(n.normalized() * std::atan2(n.norm(), e.aim.dot(d)))
                   : Eigen::Vector3d::Zero();
  Eigen::Vector3d u1, u2;
  AimBasis(e.aim, &u1, &u2);
  return Eigen::Vector2d(u1.dot(r), u2.dot(r));
}

// Aim rows. At any pose they are the rate at which the aim axis a turns towards the direction d
// to the target, (u1, u2) . (a x da - d x dd), with da and dd by central differences. Where
// the aim is met (the target on the axis) they are -de/dtheta of the aim error itself.
TEST_P(TaskRowsTest, Aim) {
  std::mt19937 rng(3);
  double worst = 0.0;
  Task task;
  task.type = TaskType::kAim;
  task.aim_axis = Eigen::Vector3d(0.2, -0.6, 0.7).normalized();
  for (int trial = 0; trial < 3; ++trial) {
    Problem s = MakeProblem(GetParam(), task, rng);
    const std::vector<double> ch = RandomChannels(*s.skeleton, rng);
    const Effector e0 = Evaluate(s, ch);
    const Eigen::Vector3d d0 = (s.targets[0].position - e0.point).normalized();
    Eigen::Vector3d u1, u2;
    AimBasis(e0.aim, &u1, &u2);
    auto aim = [&](const std::vector<double>& q) -> Eigen::VectorXd { return Evaluate(s, q).aim; };
    auto direction = [&](const std::vector<double>& q) -> Eigen::VectorXd {
      return (s.targets[0].position - Evaluate(s, q).point).normalized();
    };
    Eigen::MatrixXd rate(2, s.skeleton->num_channels());
    for (int c = 0; c < rate.cols(); ++c) {
      const Eigen::Vector3d da = Difference(aim, ch, c), dd = Difference(direction, ch, c);
      const Eigen::Vector3d turn = e0.aim.cross(da) - d0.cross(dd);
      rate.col(c) << u1.dot(turn), u2.dot(turn);
    }
    ExpectRows(s, ch, false, rate, AimError(e0, s.targets[0].position), "aim", &worst);
    // Aim met: the target 0.7 along the axis.
    s.targets[0].position = e0.point + 0.7 * e0.aim;
    auto error = [&](const std::vector<double>& q) -> Eigen::VectorXd {
      return AimError(Evaluate(s, q), s.targets[0].position);
    };
    Eigen::MatrixXd fd(2, s.skeleton->num_channels());
    for (int c = 0; c < fd.cols(); ++c) fd.col(c) = -Difference(error, ch, c);
    ExpectRows(s, ch, false, fd, error(ch), "aim met", &worst);
  }
  RecordProperty("worst_relative_deviation", Scientific(worst));
}

// Pole rows: -dphi/dtheta of the signed angle phi about s = (p_e - p_r)/|p_e - p_r| from the
// plane through the middle joint to the pole, phi = atan2(s.(m x q), m.q) of the parts of
// m = p_m - p_r and q = pole - p_r normal to s, at any pose.
TEST_P(TaskRowsTest, Pole) {
  std::mt19937 rng(4);
  double worst = 0.0;
  Task task;
  task.type = TaskType::kPole;
  for (int trial = 0; trial < 4; ++trial) {
    const Problem s = MakeProblem(GetParam(), task, rng);
    const std::vector<double> ch = RandomChannels(*s.skeleton, rng);
    auto phi = [&](const std::vector<double>& q) -> Eigen::VectorXd {
      const Effector e = Evaluate(s, q);
      const Eigen::Vector3d axis = (e.point - e.root).normalized();
      const Eigen::Vector3d m = e.mid - e.root, p = s.targets[0].position - e.root;
      const Eigen::Vector3d m_n = m - axis * axis.dot(m), p_n = p - axis * axis.dot(p);
      return Eigen::VectorXd::Constant(1, std::atan2(axis.dot(m_n.cross(p_n)), m_n.dot(p_n)));
    };
    Eigen::MatrixXd fd(1, s.skeleton->num_channels());
    for (int c = 0; c < fd.cols(); ++c) fd.col(c) = -Difference(phi, ch, c);
    ExpectRows(s, ch, false, fd, phi(ch), "pole", &worst);
  }
  RecordProperty("worst_relative_deviation", Scientific(worst));
}

INSTANTIATE_TEST_SUITE_P(
    AllOrders, TaskRowsTest,
    ::testing::Values(Case{EulerOrder::kXYZ, false}, Case{EulerOrder::kXZY, false},
                      Case{EulerOrder::kYXZ, false}, Case{EulerOrder::kYZX, false},
                      Case{EulerOrder::kZXY, false}, Case{EulerOrder::kZYX, false},
                      Case{EulerOrder::kXYZ, true}, Case{EulerOrder::kXZY, true},
                      Case{EulerOrder::kYXZ, true}, Case{EulerOrder::kYZX, true},
                      Case{EulerOrder::kZXY, true}, Case{EulerOrder::kZYX, true}),
    Name);

// The hook refuses what the solver would not run.
TEST(TaskRows, EvaluateStageChecksItsInput) {
  std::mt19937 rng(5);
  Task task;
  task.type = TaskType::kAim;
  const Problem s = MakeProblem({EulerOrder::kZXY, false}, task, rng);
  const std::vector<double> ch(s.skeleton->num_channels(), 0.1);
  Workspace ws;
  Eigen::MatrixXd j;
  Eigen::VectorXd e;
  EXPECT_FALSE(
      internal::EvaluateStage(s.rig, s.targets, ch, ws, 0, false, &j, &e));  // Not prepared.
  ASSERT_TRUE(ws.Prepare(s.rig));
  EXPECT_TRUE(internal::EvaluateStage(s.rig, s.targets, ch, ws, 0, false, &j, &e));
  EXPECT_FALSE(internal::EvaluateStage(s.rig, s.targets, ch, ws, 1, false, &j, &e));
  EXPECT_FALSE(internal::EvaluateStage(s.rig, s.targets, ch, ws, 0, true, &j, &e));  // Not serial.
}

}  // namespace
}  // namespace task_rows_test
}  // namespace rigel::ik
