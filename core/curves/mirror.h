// Mirroring a clip left to right across the character's own left-right plane, and the clip edits
// that go with cleaning curves: trimming by time and making a cycle loop.
#ifndef RIGEL_CORE_CURVES_MIRROR_H_
#define RIGEL_CORE_CURVES_MIRROR_H_

#include <Eigen/Geometry>
#include <string>
#include <utility>
#include <vector>

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

// Each joint's counterpart on the other side (itself for a joint on the centre line): joints
// whose names differ only by their side marker, as the automatic bone map reads names
// (core/retarget/humanoid.h NormaliseJointName: "LeftUpLeg" / "RightUpLeg", "upperleg01.L" /
// "upperleg01.R", "LHipJoint" / "RHipJoint"). `pairs` (names, either order) are added first and
// win over the names' own sides. Throws std::invalid_argument naming a pair joint the skeleton
// lacks.
std::vector<int> MirrorCounterparts(
    const Skeleton& skeleton, const std::vector<std::pair<std::string, std::string>>& pairs = {});

// The character's left-right plane at rest: a point on it and its unit normal (the mean
// direction from right to left joints of the pairs, snapped to a coordinate axis when within 5
// degrees of one), through the mean of the pairs' midpoints. Throws std::invalid_argument when no
// joint has a counterpart.
struct MirrorPlane {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitX();
};
MirrorPlane CharacterPlane(const Skeleton& skeleton, const std::vector<int>& counterparts);

// `clip` mirrored across `plane`, with each joint taking its counterpart's motion: on every frame
// joint j's world rotation is its rest world rotation turned by the reflection of its
// counterpart's turn away from rest (M dR M, M the reflection), so rest poses that are not mirror
// images of each other are handled; the position of every joint with position channels is the
// reflection of its counterpart's. Mirroring twice gives the clip back (world transforms to
// rounding). A joint with fewer than three rotation channels keeps the nearest rotation its
// channels hold. A joint with scale channels takes its counterpart's scale on each of its axes
// (positions are then stated in the mirrored parent's scaled space). Blend-shape weights are kept
// as they are.
Clip MirrorClip(const Skeleton& skeleton, const Clip& clip, const std::vector<int>& counterparts,
                const MirrorPlane& plane);

// Frames from `start_s` to `end_s` seconds (rounded to the nearest frames, clamped to the clip;
// start before end). Throws std::invalid_argument for an empty or reversed range.
Clip TrimClipSeconds(const Clip& clip, double start_s, double end_s);

struct LoopOptions {
  // Frames over which the end is blended into the start (>= 1, at most the clip's frames - 1).
  int blend_frames = 10;
  // The up axis (0 X, 1 Y, 2 Z): the travelling joint keeps its motion across it.
  int up_axis = 1;
};

// A clip whose last frame is its first frame again (plus the travel of one cycle), so that
// playing frames 0 .. n-2 over and over loops without a jump. Over the last `blend_frames`
// frames each channel is moved by an offset that grows (smoothstep) from 0 to what its last
// frame lacks to meet the first: rotations of three-channel joints by a growing share of the
// rotation between them (quaternions), other channels as numbers. The travelling joint (the first
// joint with position channels) keeps its horizontal travel per cycle: only its height meets the
// first frame's. Throws std::invalid_argument for options out of range.
Clip LoopClip(const Skeleton& skeleton, const Clip& clip, const LoopOptions& options);

}  // namespace rigel

#endif  // RIGEL_CORE_CURVES_MIRROR_H_
