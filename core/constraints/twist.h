// Twist distribution: the twist of a driver joint about its bone axis (swing-twist decomposition)
// shared out over twist joints by weight, as forearm and upper-arm twist bones take the hand's
// roll in DCC rigs (Maya's and MotionBuilder's roll bones, Blender's twist bones driven by a
// Copy Rotation on Y with influence).
#ifndef RIGEL_CORE_CONSTRAINTS_TWIST_H_
#define RIGEL_CORE_CONSTRAINTS_TWIST_H_

#include <string>
#include <vector>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// Swing-twist decomposition of `rotation` about the unit `axis`: rotation = swing * twist, twist a
// rotation about `axis` and swing one about an axis perpendicular to it (the smallest rotation
// taking `axis` to rotation * axis). When the swing is a half turn the twist is taken as the
// identity.
void SwingTwist(const Eigen::Quaterniond& rotation, const Eigen::Vector3d& axis,
                Eigen::Quaterniond* swing, Eigen::Quaterniond* twist);

// The signed angle (radians, in [-pi, pi]) of SwingTwist's twist about `axis`.
double TwistAngle(const Eigen::Quaterniond& rotation, const Eigen::Vector3d& axis);

// All rotations are measured in the space of a reference joint (by default the nearest joint
// above the driver and every twist joint: the forearm for a hand whose twist bones hang under the
// forearm, beside the hand or between the forearm and the hand), relative to the rest pose.
// The driver's twist is the twist angle, about `axis`, of the driver's rotation relative to the
// reference joint (from the world transforms) after its rest value. It is unwrapped from frame
// to frame (a driver turning past a half turn keeps turning; the first frame's is in
// [-pi, pi]). Each twist joint keeps its own swing relative to the reference joint and takes the
// twist weights[i] * driver twist about `axis`; its world rotation is blended by `influence` and
// written through its channels (three rotation channels needed). Twist joints are set parents
// first. A driver below a twist joint keeps its world rotation (its channels take back what the
// twist joints turned), so the hand stays as animated while the bones between share its roll.
struct TwistConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - driver is not a joint of the skeleton; influence is outside [0, 1];
  // - joints is empty, or weights does not have one entry per joint, or a weight is outside
  //   [0, 1];
  // - a twist joint is not a joint of the skeleton, is the driver or below it, appears twice, or
  //   lacks three rotation channels;
  // - reference is given and is not above the driver and every twist joint, or is not given and
  //   no joint is;
  // - axis is not finite, or is zero and the driver's rest position in the reference joint's space
  //   is the origin (no bone axis);
  // - the driver lies below a twist joint and lacks three rotation channels.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date; kept up to date). `state`
  // carries the previous frame's driver twist.
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;
  // The reference joint: `reference`, or the nearest joint above the driver and every twist joint
  // (-1 when there is none).
  int ReferenceJoint(const Skeleton& skeleton) const;
  // The twist axis in the reference joint's space (unit): `axis` normalized, or the direction
  // from the reference joint to the driver in the rest pose. Zero when neither gives one.
  Eigen::Vector3d Axis(const Skeleton& skeleton, int reference) const;

  int driver = -1;
  // Twist joints and their weights (the fraction of the driver's twist each takes), one each.
  std::vector<int> joints;
  std::vector<double> weights;
  // The twist axis in the reference joint's space; zero (default): the bone axis, from the
  // reference joint to the driver at rest.
  Eigen::Vector3d axis = Eigen::Vector3d::Zero();
  // The reference joint; -1 (default): the nearest joint above the driver and the twist joints.
  int reference = -1;
  double influence = 1.0;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_TWIST_H_
