// A constraint stack: constraints in declaration order, each recorded with the solver stage after
// which it runs (-1: before any stage). The bake loop (core/ik/bake.h) and rig:solve evaluate the
// entries with after_stage < 0 before the solve and the others after it.
#ifndef RIGEL_CORE_CONSTRAINTS_STACK_H_
#define RIGEL_CORE_CONSTRAINTS_STACK_H_

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/constraints/aim.h"
#include "core/constraints/constraint.h"
#include "core/constraints/copy_location.h"
#include "core/constraints/copy_rotation.h"
#include "core/constraints/copy_scale.h"
#include "core/constraints/limit_distance.h"
#include "core/constraints/limit_location.h"
#include "core/constraints/limit_rotation.h"
#include "core/constraints/limit_scale.h"
#include "core/constraints/orient.h"
#include "core/constraints/parent.h"
#include "core/constraints/point.h"
#include "core/constraints/spline_ik.h"
#include "core/constraints/twist.h"

namespace rigel::constraints {

// Any constraint job.
using Constraint =
    std::variant<ParentConstraint, PointConstraint, OrientConstraint, AimConstraint,
                 CopyLocationConstraint, CopyRotationConstraint, LimitRotationConstraint,
                 LimitDistanceConstraint, TwistConstraint, LimitLocationConstraint,
                 SplineIkConstraint, CopyScaleConstraint, LimitScaleConstraint>;

// "parent", "point", "orient", "aim", "copy_location", "copy_rotation", "limit_rotation",
// "limit_distance", "twist", "limit_location", "spline_ik": the kind of `constraint` (the names
// rig:constraint accepts).
std::string_view KindName(const Constraint& constraint);

// The constrained joint of `constraint` (a twist's first twist joint, a spline IK's chain root;
// -1 when it has none).
int ConstrainedJoint(const Constraint& constraint);

// One declared constraint.
struct Entry {
  Constraint constraint;
  // Runs after solver stage `after_stage` (0-based index into Rig::stages); -1: before any stage.
  int after_stage = -1;
};

// Per-entry states of a stack, carried across frames (caller-owned). Sized by Evaluate.
struct StackState {
  std::vector<State> states;
  // Forgets every captured offset: the next evaluation captures them again.
  void Reset() { states.clear(); }
};

// Constraints in evaluation order.
struct Stack {
  // Validates every entry (see each job's Validate); `error` names the failing entry
  // ("constraint 2 (aim): ...").
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Evaluates, in order, the entries whose after_stage lies in [first_stage, last_stage], on
  // `pose` (world transforms up to date; kept up to date) at `frame` (0-based). Returns false at
  // the first failing entry with `error` set; entries before it have been applied.
  bool Evaluate(const Skeleton& skeleton, Pose& pose, int frame, int first_stage, int last_stage,
                StackState& state, std::string* error) const;
  // Whether some entry has after_stage in [first_stage, last_stage].
  bool Any(int first_stage, int last_stage) const;

  std::vector<Entry> entries;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_STACK_H_
