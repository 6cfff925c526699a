// The plausibility checks' own view of a clip (core/check/plausibility.h): world positions by
// forward kinematics written here, independent of core/pose.h (which the solver and the
// retargeter use), and the parts of the body the checks measure, found on each skeleton by itself.
#ifndef RIGEL_CORE_CHECK_MOTION_H_
#define RIGEL_CORE_CHECK_MOTION_H_

#include <Eigen/Geometry>
#include <array>
#include <vector>

#include "core/axes.h"
#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel::check {

// World positions of a skeleton's points over sampled frames of a clip. Points are the joints
// (0 .. joints-1), then the end sites (joints + e for end site e).
struct Motion {
  // Samples, and the clip frame of each.
  int frames = 0;
  std::vector<int> frame;
  int points = 0;
  // frames x points, sample-major; zero for the points not tracked.
  std::vector<Eigen::Vector3d> position;
  const Eigen::Vector3d& at(int sample, int point) const {
    return position[static_cast<size_t>(sample) * points + point];
  }
};

// Positions of the points of `skeleton` for frames 0, stride, 2 stride, ... and the last of the
// first `count` frames of `clip` (count < 0: every frame), or for the rest pose (every channel
// zero: one sample) when `clip` is null. Only the joints with `tracked[j]` (null: all) and their
// end sites are computed; `tracked` must hold every tracked joint's parent. A joint's local
// transform is its rest translation plus its position channels, its rest orientation, then its
// rotation channels in the order the joint lists them (the convention of core/channel.h),
// composed here column by column.
Motion TrackClip(const Skeleton& skeleton, const Clip* clip, int stride = 1, int count = -1,
                 const std::vector<bool>* tracked = nullptr);

// The parts of a figure the checks measure, as point indices into a Motion (-1 when missing).
struct BodyParts {
  // Hips, head, both legs and both feet found by the humanoid classification.
  bool humanoid = false;
  // The hips (humanoid), else the first joint with several children (or joint 0): the joint
  // whose height and travel are measured.
  int hips = 0;
  int head = -1;
  // limbs[k] = {root, middle, end}: k = 0 left arm (upper arm, lower arm, hand), 1 right arm,
  // 2 left leg (upper leg, lower leg, foot), 3 right leg.
  std::array<std::array<int, 3>, 4> limbs;
  // The points whose mean is the tip of an end part: feet (toes, or the foot's children and end
  // sites), hands (their children and end sites), head (its children and end sites). Empty when
  // the part has none.
  std::array<std::vector<int>, 2> foot_tip;
  // Whether each foot's tip is a toe joint (ClassifyHumanoid found the toes).
  std::array<bool, 2> toes = {false, false};
  std::array<std::vector<int>, 2> hand_tip;
  std::vector<int> head_tip;
  // The points the floor is measured with: the feet, the toes and the children and end sites of
  // both (humanoid), else every point of the body.
  std::vector<int> soles;
  // The two points whose left-right line gives the way the figure faces (left upper leg, right
  // upper leg), -1 when unknown.
  int left = -1;
  int right = -1;

  BodyParts() {
    for (auto& l : limbs) l.fill(-1);
  }
};

// Finds the parts of `skeleton` (core/retarget/humanoid.h ClassifyHumanoid, on this skeleton
// alone).
BodyParts FindBodyParts(const Skeleton& skeleton);

// The joints whose positions the checks read: the parts' joints (and the parents of their end
// sites) with every ancestor; every joint for a figure that is not a humanoid.
std::vector<bool> TrackedJoints(const Skeleton& skeleton, const BodyParts& parts);

// The height of a position along a signed up axis.
inline double Height(const Eigen::Vector3d& p, SignedAxis up) { return up.sign * p[up.axis]; }

// A vector with its component along `up` removed.
inline Eigen::Vector3d Horizontal(Eigen::Vector3d v, SignedAxis up) {
  v[up.axis] = 0.0;
  return v;
}

}  // namespace rigel::check

#endif  // RIGEL_CORE_CHECK_MOTION_H_
