// Foot roll: the reverse-foot rig of DCC character setups (Maya's and MotionBuilder's foot roll,
// Blender's rolling foot rigs) as one function of a planted foot. Heel, ball and toe-tip pivots
// and the two edge pivots for bank are given in the foot (ankle) joint's frame; one roll angle
// rocks the foot back on the heel (roll < 0), forward onto the ball (0 < roll <= break) and then
// onto the toe tip (roll > break, the toes planted), bank tilts it about the outer (bank > 0) or
// inner (bank < 0) edge pivot, and toe tap lifts the toes about the ball without moving the ankle.
// The result is the ankle's world transform (a leg effector's goal) and the toe joint's rotation
// about the roll axis relative to the foot (so the toes stay on the ground while the foot rolls
// over the ball).
#ifndef RIGEL_CORE_CONSTRAINTS_FOOT_ROLL_H_
#define RIGEL_CORE_CONSTRAINTS_FOOT_ROLL_H_

#include <Eigen/Geometry>
#include <string>

namespace rigel {
class Skeleton;
class Pose;
}  // namespace rigel

namespace rigel::constraints {

struct FootRoll {
  // Pivots in the ankle's frame (lengths in the skeleton's unit).
  Eigen::Vector3d heel = Eigen::Vector3d::Zero();
  Eigen::Vector3d ball = Eigen::Vector3d::Zero();
  Eigen::Vector3d toe = Eigen::Vector3d::Zero();
  Eigen::Vector3d inner = Eigen::Vector3d::Zero();
  Eigen::Vector3d outer = Eigen::Vector3d::Zero();
  // Axes in the ankle's frame: `side` is the roll axis, up x forward (then a positive roll turns
  // the toes down: the heel rises); `forward` the bank axis (the rotation is right-handed about it,
  // through the outer pivot for bank > 0, the inner for bank < 0: flip its sign for the other
  // foot). Need not be unit; must not be zero or parallel.
  Eigen::Vector3d side = Eigen::Vector3d::UnitX();
  Eigen::Vector3d forward = Eigen::Vector3d::UnitZ();
  // Angles in radians.
  double roll = 0;
  double break_angle = 0.5235987755982988;  // 30 degrees: past it the foot rolls onto the toe tip
  double bank = 0;
  double toe_tap = 0;

  // False (with `error`) when an axis is zero or the two are parallel, an angle is not finite,
  // or break_angle is negative.
  bool Validate(std::string* error) const;
};

struct FootRollResult {
  // The ankle's world transform: `planted` (the ankle where the foot stands flat) carried by the
  // roll, bank and pivots.
  Eigen::Isometry3d ankle = Eigen::Isometry3d::Identity();
  // The toe joint's rotation relative to the foot, about the side axis (radians; negative while
  // the foot rolls over the ball, plus toe_tap).
  double toe_angle = 0;
};

// The foot roll of `planted` (the ankle's world transform with the foot flat). Rotations compose
// outermost first, as a DCC reverse-foot hierarchy: bank (about the outer or inner edge pivot),
// heel, toe tip, ball.
FootRollResult SolveFootRoll(const FootRoll& foot, const Eigen::Isometry3d& planted);

// A foot roll as a rig object (rig:foot_roll): it drives a leg effector whose goal the script sets
// as the planted ankle (where the ankle is with the foot flat). Before the solve the goal becomes
// the rolled ankle (SolveFootRoll); after it the toe joint turns by the toe angle about the side
// axis, relative to the solved foot. ik::ConstrainedFrame runs both (core/ik/constrained_solve.h).
struct FootRollRig {
  // False (with `error`) when `foot` is invalid, `ankle` is not a joint, or `toe` (when >= 0) is
  // not a joint below the ankle with three rotation channels.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // The rolled goal of the planted ankle transform.
  Eigen::Isometry3d Goal(const Eigen::Isometry3d& planted) const;
  // Turns the toe joint (if any) by the toe angle about the side axis (in the ankle's world frame,
  // as it stands in `pose`), composed onto its current world rotation: toe' = A R(side, angle)
  // A^T toe, A the ankle's world rotation. pose.world up to date in and out.
  bool TurnToe(const Skeleton& skeleton, Pose& pose, std::string* error) const;

  int task = -1;   // the leg effector (an index into the rig's tasks) whose goal rolls
  int ankle = -1;  // the effector's joint
  int toe = -1;    // the toe joint, or -1
  FootRoll foot;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_FOOT_ROLL_H_
