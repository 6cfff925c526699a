// Constraint stack. See stack.h.
#include "core/constraints/stack.h"

#include "core/constraints/kinds.h"

namespace rigel::constraints {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

std::string_view KindName(const Constraint& constraint) {
  return kConstraintKinds[constraint.index()].name;  // core/constraints/kinds.h
}

int ConstrainedJoint(const Constraint& constraint) {
  return std::visit(
      Overloaded{
          [](const TwistConstraint& c) { return c.joints.empty() ? -1 : c.joints.front(); },
          [](const SplineIkConstraint& c) { return c.joints.empty() ? -1 : c.joints.front(); },
          [](const auto& c) { return c.joint; }},
      constraint);
}

bool Stack::Validate(const Skeleton& skeleton, std::string* error) const {
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string why;
    if (!std::visit([&](const auto& c) { return c.Validate(skeleton, &why); },
                    entries[i].constraint)) {
      if (error != nullptr) *error = "constraint " + std::to_string(i + 1) + ": " + why;
      return false;
    }
  }
  return true;
}

bool Stack::Any(int first_stage, int last_stage) const {
  for (const Entry& e : entries) {
    if (e.after_stage >= first_stage && e.after_stage <= last_stage) return true;
  }
  return false;
}

bool Stack::Evaluate(const Skeleton& skeleton, Pose& pose, int frame, int first_stage,
                     int last_stage, StackState& state, std::string* error) const {
  if (state.states.size() != entries.size()) state.states.resize(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.after_stage < first_stage || e.after_stage > last_stage) continue;
    std::string why;
    const bool ok = std::visit(
        [&](const auto& c) { return c.Run(skeleton, pose, frame, state.states[i], &why); },
        e.constraint);
    if (!ok) {
      if (error != nullptr) *error = "constraint " + std::to_string(i + 1) + ": " + why;
      return false;
    }
  }
  return true;
}

}  // namespace rigel::constraints
