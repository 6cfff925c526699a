// Retarget set-up pass: rest-pose, scale and up-axis alignment of a source skeleton onto a
// target, computed once per source/target pair and read by every per-clip pass (transfer,
// contacts, clean-up, metrics).
//
// Per mapped target joint j the alignment rotation is
//   alignment_j = (up_from_source * source_reference_world_j)^-1 * target_aligned_world_j,
// where the target's reference pose is first bent, joint by joint from the root, so its bones
// point where the source's bones point (A-pose <-> T-pose). Scale is the ratio of hip heights;
// units are given or estimated from the figure's height; up axes are given or guessed by
// core/skeleton_utils.h GuessUpAxis.
#ifndef RIGEL_CORE_RETARGET_ALIGNMENT_H_
#define RIGEL_CORE_RETARGET_ALIGNMENT_H_

#include <Eigen/Geometry>
#include <span>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/ik/two_bone.h"
#include "core/retarget/humanoid.h"
#include "core/retarget/retarget.h"
#include "core/skeleton.h"

namespace rigel::retarget {

// A two-bone chain of the IK clean-up pass (target joints) and the source joint its end follows.
struct Limb {
  int upper = -1;
  int lower = -1;
  int end = -1;
  int source_end = -1;
  bool foot = false;
  std::string name;
  // The source joint driving `upper` (-1: unmapped) and the chain's length ratio: (target
  // upper->lower + lower->end) / (the source's same two segments), in the reference poses (the
  // hip-height ratio when the source's chain is not mapped). Feet goals are scaled by it about the
  // upper leg (core/retarget/cleanup.h), so a leg reaches what the source's leg reached.
  int source_upper = -1;
  double ratio = 1.0;
};

// A segment measured by the metrics: source joints a -> b and the target joints they drive.
// `branch` marks segments out of a joint with several mapped children.
struct Bone {
  int source_a, source_b, target_a, target_b;
  bool branch;
};

// What the set-up finds; read-only afterwards (shared by concurrent Run calls).
struct Alignment {
  // Per target joint: the source joint driving it (-1 = unmapped) and its alignment rotation.
  std::vector<int> source_of;
  std::vector<Eigen::Matrix3d> alignment;
  // Per target joint with one mapped child: that child's target joint and the segment to it in
  // the joint's space (aligned reference). The swing that keeps this segment on the source's
  // segment absorbs the motion of source joints between the two that the map skips.
  std::vector<int> single_child;
  std::vector<Eigen::Vector3d> child_segment;
  // Channel values of the target's reference pose (unmapped joints keep them).
  std::vector<double> target_reference_row;
  // Turns source world vectors into the target's up convention.
  Eigen::Matrix3d up_from_source = Eigen::Matrix3d::Identity();
  int source_up = 1;
  int target_up = 1;
  int source_hips = -1;
  int target_hips = -1;
  // The target joint whose translation channels move the hips (-1: none).
  int translation_joint = -1;
  // Target hip height / source hip height.
  double scale = 1.0;
  // Target hip height above the ground in its aligned reference pose (target units): the length
  // the contact thresholds scale with.
  double target_hip_height = 1.0;
  // Height of the hips joint above the ground in each reference pose.
  double source_hips_up = 0.0;
  double target_hips_up = 0.0;
  // Source unit / target unit, and each in metres.
  double unit_ratio = 1.0;
  double source_unit = 1.0;
  double target_unit = 1.0;
  bool source_unit_estimated = false;
  bool target_unit_estimated = false;
  // Ground-level points under the hips in the reference poses.
  Eigen::Vector3d source_origin = Eigen::Vector3d::Zero();
  Eigen::Vector3d target_origin = Eigen::Vector3d::Zero();
  std::vector<Bone> bones;
  // IK chains: feet first (when found), then hands.
  std::vector<Limb> limbs;
  // Upper legs of the target (-1 when missing), for the facing direction.
  int left_upper_leg = -1;
  int right_upper_leg = -1;
  // Number of map entries.
  int mapped = 0;
  // RootMotion::kExtract (SetUpRootMotion, core/retarget/root_motion.h): the root bone (-1: no
  // extraction), its world position and rotation in the aligned reference pose, and the hips'
  // heading axis: a horizontal axis of the reference pose (the hips' left-right line) in the hips'
  // space and in the world. The hips' heading is the yaw of that axis about the up axis.
  int root_bone = -1;
  bool root_bone_added = false;
  Eigen::Vector3d root_reference_position = Eigen::Vector3d::Zero();
  Eigen::Matrix3d root_reference_rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d heading_axis_hips = Eigen::Vector3d::UnitX();
  Eigen::Vector3d heading_axis_world = Eigen::Vector3d::UnitX();
};

// The two-bone IK job of `limb` on the channel row `row` of `target` and its world transforms
// `world` (upper, lower and end set; target, pole and outputs are the caller's).
ik::TwoBoneJob LimbJob(const Skeleton& target, const Limb& limb, std::span<double> row,
                       std::span<const Eigen::Isometry3d> world);

// Rotation taking the source's up axis onto the target's: Y-up -> Z-up is +90 degrees about X
// (+Z forward becomes -Y forward, the Blender convention), Z-up -> Y-up its inverse; identity
// otherwise.
Eigen::Matrix3d UpFromSource(int source_up, int target_up);

// `v` with its component along axis `up` set to zero.
inline Eigen::Vector3d Horizontal(const Eigen::Vector3d& v, int up) {
  Eigen::Vector3d h = v;
  h[up] = 0.0;
  return h;
}

// Extent of a pose along axis `up`, end sites included; `*ground` (optional) receives the lowest
// coordinate. 0 for an empty pose.
double PoseHeight(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world, int up,
                  double* ground);

// The lowest coordinate along `up` that the body of `clip` (joints and end sites) reaches over up
// to 512 evenly spaced frames: the floor the clip stands on.
double ClipFloor(const Skeleton& skeleton, const Clip& clip, int up);

// The floor (along `up`) a figure stands on, given its reference pose (`reference`, its lowest
// point `reference_ground`, its hips joint) and its clip (may be null): the reference pose's
// lowest point, unless the reference pose's hips sit less than half their standing height
// (hips above `reference_ground`) above the clip's floor (ClipFloor): then the pose does not stand
// on the floor its clip stands on (a BVH whose root channels place the hips absolutely hangs its
// rest pose from the origin, a hip height below the floor its clip walks on: CMU, Bandai), and
// the clip's floor is the figure's. The two cases are a whole hip height apart; half decides.
double FloorOf(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> reference, int hips,
               double reference_ground, int up, const Clip* clip);

// Metres per unit from a standing humanoid's height (1.7 m), snapped to m, dm, cm, mm or inch
// when within 20 %.
double EstimateUnitMetres(double height);

// Aligns `source` onto `target` with `map` (entries as given: the caller substitutes AutoMap for
// an empty map). The clips are read for the reference frames (may be null when those are -1) and
// the source clip for its floor (without it, the source's reference pose stands on the floor).
// Fills `*out`, appends non-fatal findings to `*warnings` and returns "" on success, else the error
// message:
// - "<map>:<line>: source joint 'X' not found in the source skeleton" (same for the target);
// - "<map>:<line>: target joint 'X' is mapped twice";
// - "<map>: no joint is mapped (the hips at least must be)";
// - a reference frame out of range, or asked for without its clip;
// - "<map>: --pin-feet needs the target's left leg (...) mapped" when options.pin_feet is set.
std::string Align(const Skeleton& source, const Skeleton& target, const BoneMap& map,
                  const RetargetOptions& options, const Clip* source_clip, const Clip* target_clip,
                  Alignment* out, std::vector<std::string>* warnings);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_ALIGNMENT_H_
