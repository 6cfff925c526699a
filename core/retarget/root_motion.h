// Retarget pass: root-motion extraction (RootMotion::kExtract).
//
// After the clean-up, with the hips placed as by kScale, every frame moves the hips' horizontal
// travel and heading onto a root bone above the hips:
//   root_world_position = the hips' world position with its up component set to the root's
//                         reference-pose height (the hips' path projected on the ground plane);
//   root_world_rotation = Yaw(heading) * root_reference_rotation, where heading is the yaw about
//                         the up axis of the hips' heading axis (Alignment::heading_axis_*)
//                         relative to the reference pose, unwrapped frame to frame;
// and the hips' channels are rewritten so their world transform is unchanged (their translation
// channels then hold the height and the offset from the root's path). Joints between the root
// and the hips keep their channels. Every world transform but the root's equals the kScale
// result's.
#ifndef RIGEL_CORE_RETARGET_ROOT_MOTION_H_
#define RIGEL_CORE_RETARGET_ROOT_MOTION_H_

#include <memory>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/retarget/alignment.h"
#include "core/retarget/retarget.h"
#include "core/skeleton.h"

namespace rigel::retarget {

// `target` with a joint named `name` added above its root (the hips): on the ground under the
// hips of the rest pose (up axis `up_axis`, or guessed when < 1; the ground is the rest pose's
// lowest point, end sites included), identity rest orientation, channels Xposition Yposition
// Zposition then the root's rotation channels in its order (ZXY when it has none). The hips'
// rest offset is reduced by the root's, so every joint's rest world transform is unchanged. The new
// joint is joint 0 and every other joint moves one index later, its channels likewise. Returns
// nullptr and sets `*error` when the target has several roots or the name is taken.
std::shared_ptr<const Skeleton> AddRootBone(const Skeleton& target, const std::string& name,
                                            int up_axis, std::string* error);

// Moves the target joints and channels of `*a` (an alignment onto the skeleton AddRootBone was
// given) one joint later, in front of which AddRootBone's joint is unmapped, with `added_channels`
// zero reference channels: the alignment onto the skeleton AddRootBone returned, identical in
// everything else (the added joint changes neither the ground nor the up axis found).
void ShiftForAddedRoot(int added_channels, Alignment* a);

// Finds the root bone of kExtract on `target` (aligned in `*a`; `added` = the root was added by
// AddRootBone) and fills Alignment::root_bone, root_reference_* and heading_axis_*. The bone is
// `options.root_motion_bone` when given, else the target's root. Returns "" or the error:
// - the bone is not a proper ancestor of the hips ("...: the target's root is its hips 'X': name
//   a root bone to add with --root-motion-bone NAME");
// - the bone lacks position channels on both horizontal axes, or the hips lack position channels.
// Appends to `*warnings` when the root bone has no rotation channel (the heading stays on the
// hips).
std::string SetUpRootMotion(const Skeleton& target, const RetargetOptions& options, bool added,
                            Alignment* a, std::vector<std::string>* warnings);

// Path length and heading change of an extraction, in target units and radians.
struct RootMotionSummary {
  double path_length = 0.0;
  double heading_change = 0.0;
  double heading_turned = 0.0;
};

// Rewrites the root bone's and the hips' channels of every frame of `clip` (a clip of `target`)
// as the file comment says. Needs SetUpRootMotion's fields in `a`.
RootMotionSummary ExtractRootMotion(const Skeleton& target, const Alignment& a, Clip* clip);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_ROOT_MOTION_H_
