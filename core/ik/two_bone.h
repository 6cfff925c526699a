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

// Frame-to-frame continuity of a limb's swivel (the elbow's turn about the upper -> target axis),
// owned by the caller (one per limb, kept across the frames of a clip; ozz style, no statics).
//
// Blend rule. The pole's well-definedness is w = |q_perp| / |q|, the sine of the angle between
// the upper -> pole direction q and the limb axis (upper -> target). The elbow's direction away
// from the axis is
//   - the pole's direction q_perp / |q_perp| when w >= kPoleSharp (sin 30 deg = 0.5);
//   - the previous frame's direction (moved onto the plane normal to the new axis) when
//     w <= kPoleDegenerate (sin 2 deg ~ 0.035): the pole is on the limb axis (degenerate), or
//     the target is crossing the upper -> pole line;
//   - in between, the previous direction turned towards the pole's by the fraction
//     f = max((t - t_prev) / (1 - t_prev), kPoleFollow t) of the angle between them, where
//     t = smoothstep((w - kPoleDegenerate) / (kPoleSharp - kPoleDegenerate)) is the pole's weight
//     and t_prev the previous frame's (f = 0 while t does not grow, apart from the slow follow
//     term). The remaining angle then shrinks in proportion to 1 - t: a pole that flipped sides
//     while the target crossed its line is caught up evenly over the frames in which w grows
//     to kPoleSharp, not in one frame. Per frame the swivel turns by at most
//     pi dt + kPoleFollow pi / 4 (dt the growth of t that frame; t (1 - t) <= 1/4), and a pole
//     that moves while it stays within 30 degrees of the axis is followed with a lag
//     (time constant 1 / (kPoleFollow t) frames).
// Without a previous frame (valid == false) the pole's direction is used whenever w > 0, and a
// degenerate pole (w <= kPoleDegenerate) leaves the smallest-turn swivel, flagged in
// pole_degenerate. Call Reset() at a cut (a new clip or a jump in time).
struct Swivel {
  static constexpr double kPoleDegenerate = 0.03489949670250097;  // sin(2 deg)
  static constexpr double kPoleSharp = 0.5;                       // sin(30 deg)
  static constexpr double kPoleFollow = 0.1;

  void Reset() { valid = false; }
  // Starts a frame: clears jump, pole_weight and pole_degenerate; returns the previous frame's
  // pole weight (1 without a previous frame), which SwivelTarget's blend needs.
  double Begin();

  // In/out state: whether `direction` holds a previous frame's elbow direction (world, unit,
  // normal to that frame's upper -> target axis).
  bool valid = false;
  Eigen::Vector3d direction = Eigen::Vector3d::Zero();
  // Out: the turn of the elbow direction since the previous frame (radians, 0 without one),
  // the pole's weight t in the blend (1 without a pole or previous frame), and whether the pole
  // lay on the limb axis (w <= kPoleDegenerate).
  double jump = 0.0;
  double pole_weight = 1.0;
  bool pole_degenerate = false;
};

// The direction (normal to `axis`, the unit upper -> target axis) the elbow should take this
// frame: the pole's (`q` = pole - upper) blended with the previous frame's direction by Swivel's
// rule; zero to keep the smallest turn (no pole and no previous frame). `t_prev` is what
// Swivel::Begin returned; sets swivel->pole_weight and pole_degenerate (swivel may be null).
// `prev` receives the previous direction moved onto the plane (zero when there is none).
Eigen::Vector3d SwivelTarget(Swivel* swivel, double t_prev, const Eigen::Vector3d& axis,
                             bool use_pole, const Eigen::Vector3d& q, Eigen::Vector3d* prev);
// Records the elbow direction as solved (`elbow` = elbow - upper, any length off the axis) and its
// jump from `prev` (SwivelTarget's; zero: no jump).
void SwivelRecord(Swivel* swivel, const Eigen::Vector3d& axis, const Eigen::Vector3d& elbow,
                  const Eigen::Vector3d& prev);

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

  // A job on the limb upper -> lower -> end of `skeleton`, solving `channels` (a whole Clip row)
  // posed by `world`; the rest at its defaults.
  static TwoBoneJob OnLimb(const Skeleton& skeleton, std::span<double> channels,
                           std::span<const Eigen::Isometry3d> world, int upper, int lower,
                           int end) {
    TwoBoneJob job;
    job.skeleton = &skeleton;
    job.channels = channels;
    job.world = world;
    job.upper = upper;
    job.lower = lower;
    job.end = end;
    return job;
  }

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
  // In/out (optional): the limb's swivel continuity (see Swivel). Null: the pole (or, without
  // one, the smallest turn) sets the swivel every frame, as before.
  Swivel* swivel = nullptr;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_TWO_BONE_H_
