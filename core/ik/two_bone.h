// Analytic two-bone IK (seeds 002/003: law of cosines, reach condition |L1 - L2| <= d <= L1 + L2)
// on skeleton channels, with an optional pole vector.
#ifndef RIGEL_CORE_IK_TWO_BONE_H_
#define RIGEL_CORE_IK_TWO_BONE_H_

#include <Eigen/Geometry>
#include <span>
#include <string>

namespace rigel {
class Skeleton;
}

namespace rigel::ik {

// Bends `lower` so that the distance upper -> effector equals the target distance (clamped to the
// reach condition), then turns `upper` so the effector lies on the target and the chain's plane
// contains the pole. Writes the channels of `upper` and `lower` only; every other channel is left
// alone. Joints between upper and lower, or lower and end, are carried rigidly.
//
// Channel requirements: `upper` has three rotation channels (any Euler order). `lower` has one
// rotation channel (a hinge: the bend happens about that channel's axis) or three (the bend
// happens about the chain plane's normal; the result is decomposed back into its Euler order,
// continuous with the current values).
struct TwoBoneJob {
  // Validates the job. Returns false (and sets `error` when given) if:
  // - skeleton is null, or channels/world do not match it;
  // - upper, lower or end is out of range, or they are not strictly nested
  //   (upper an ancestor of lower, lower an ancestor of end);
  // - upper does not have 3 rotation channels, or lower has neither 1 nor 3;
  // - target, pole or offset is not finite;
  // - a bone has zero length.
  bool Validate(std::string* error = nullptr) const;
  // Returns false if the job is not valid (nothing changed). See Validate().
  bool Run() const;

  const Skeleton* skeleton = nullptr;
  // In/out: a whole Clip row. Only upper's and lower's rotation channels are written.
  std::span<double> channels;
  // In: world transforms matching `channels` (Pose::world). Not updated; run FK afterwards.
  std::span<const Eigen::Isometry3d> world;
  int upper = -1;
  int lower = -1;
  int end = -1;
  // Effector point in `end`'s joint space. Default the joint origin.
  Eigen::Vector3d offset = Eigen::Vector3d::Zero();
  // World position the effector must reach.
  Eigen::Vector3d target = Eigen::Vector3d::Zero();
  // World pole point: the plane through upper, lower and the effector is turned to contain it.
  // Ignored when use_pole is false (the plane keeps the smallest turn).
  Eigen::Vector3d pole = Eigen::Vector3d::Zero();
  bool use_pole = false;
  // Optional per-channel limits (whole Clip row, or empty): a hinge lower joint takes the bend
  // solution that keeps its channel inside them when one does. Channels are not clamped here.
  std::span<const double> min;
  std::span<const double> max;
  // Out (optional): whether the target satisfied the reach condition (otherwise the chain is
  // fully extended / folded towards it).
  bool* reached = nullptr;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_TWO_BONE_H_
