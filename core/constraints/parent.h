// Parent (child-of) constraint: the joint follows a target as if it were the target's child, with
// maintain offset, influence and target switching over time (a prop changing hands).
#ifndef RIGEL_CORE_CONSTRAINTS_PARENT_H_
#define RIGEL_CORE_CONSTRAINTS_PARENT_H_

#include <string>
#include <vector>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// From frame `frame` (0-based) on, the parent is `target`.
struct TargetSwitch {
  int frame = 0;
  int target = -1;
};

// world(joint) = world(target) * offset, blended with the joint's own world transform by
// `influence`. The offset is target_from_joint captured on the first Run when maintain_offset is
// true (identity otherwise: the joint snaps onto the target's frame). At a target switch the
// offset is recomputed so that the constrained world transform is continuous: the new offset is
// new_target_from_world * (old target's world * old offset), both at the switch frame.
struct ParentConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - joint or a target (including every switch's) is not a joint of the skeleton, or a target is
  //   the joint itself;
  // - influence is outside [0, 1];
  // - switches are not in strictly increasing frame order;
  // - the joint lacks three rotation channels or three position channels.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date) at `frame` (0-based; selects
  // the switch target). Returns false when the job is invalid.
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;
  // The target at `frame`: the last switch at or before it, the first switch before any, or
  // `target` when there are no switches.
  int TargetAt(int frame) const;

  int joint = -1;   // constrained joint
  int target = -1;  // parent target (ignored when switches are given)
  bool maintain_offset = true;
  double influence = 1.0;  // in [0, 1]
  // Target switches, by increasing frame. Empty: `target` throughout.
  std::vector<TargetSwitch> switches;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_PARENT_H_
