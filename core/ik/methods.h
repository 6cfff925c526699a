// The solver methods table: one row per ik::Method with its one spelling (used by core, the Lua
// module, the CLI, the docs and error messages), the function that runs a stage of it, what it
// plans at Prepare time, whether it iterates, and which task types its stage takes. ik::Solve and
// the planner dispatch through it; the Lua binding reads its names (bindings/lua/wrap_rig.cc).
//
// Adding a solver: a Method value (core/ik/rig.h), one file core/ik/<solver>.cc defining
// Run<Solver> (and Plan<Solver> when it plans more than the common plan) declared in stages.h,
// one row in kMethodTable below, one test file tests/ik/<solver>_test.cc. docs/architecture.md has
// the recipe.
#ifndef RIGEL_CORE_IK_METHODS_H_
#define RIGEL_CORE_IK_METHODS_H_

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "core/ik/rig.h"
#include "core/ik/stages.h"

namespace rigel::ik {

// Bit of a task type in MethodRow::tasks.
constexpr unsigned TaskBit(TaskType type) { return 1u << static_cast<unsigned>(type); }
constexpr unsigned kAllTasks = TaskBit(TaskType::kPosition) | TaskBit(TaskType::kOrientation) |
                               TaskBit(TaskType::kPose) | TaskBit(TaskType::kAim) |
                               TaskBit(TaskType::kPole);

// One solver method.
struct MethodRow {
  Method method;
  // The one spelling: Lua `rig:stage{method = ...}`, docs, reports, errors ("pinv").
  std::string_view name;
  // Runs one stage of this method (core/ik/stages.h).
  internal::StageRunner run;
  // Plans what the method needs beyond the common plan at Prepare time (its chain, its tasks),
  // and checks the stage; nullptr when the common plan is all (the Jacobian methods).
  internal::StagePlanner plan;
  // Jacobian iterations: Settings' iteration cap, tolerances, damping and restarts apply.
  bool iterative;
  // Task types (TaskBit) the method solves; its planner refuses the others (FABRIK) or leaves
  // them to other stages (CCD, two-bone).
  unsigned tasks;
};

// Every method, in Method order: method, name, run, plan, iterative, tasks.
inline constexpr unsigned kPositionOrPose = TaskBit(TaskType::kPosition) | TaskBit(TaskType::kPose);
inline constexpr std::array<MethodRow, 9> kMethodTable{{
    {Method::kTranspose, "transpose", internal::RunIterative, nullptr, true, kAllTasks},
    {Method::kPseudoInverse, "pinv", internal::RunIterative, nullptr, true, kAllTasks},
    {Method::kSvd, "svd", internal::RunIterative, nullptr, true, kAllTasks},
    {Method::kQr, "qr", internal::RunIterative, nullptr, true, kAllTasks},
    {Method::kDls, "dls", internal::RunIterative, nullptr, true, kAllTasks},
    {Method::kDlsAdaptive, "dls_adaptive", internal::RunIterative, nullptr, true, kAllTasks},
    {Method::kCcd, "ccd", internal::RunCcd, internal::PlanCcd, false, kPositionOrPose},
    {Method::kTwoBone, "two_bone", internal::RunTwoBone, internal::PlanTwoBone, false,
     kPositionOrPose | TaskBit(TaskType::kPole)},
    {Method::kFabrik, "fabrik", internal::RunFabrik, internal::PlanFabrik, false, kPositionOrPose},
}};

constexpr bool RowsInMethodOrder() {
  for (std::size_t i = 0; i < kMethodTable.size(); ++i) {
    if (static_cast<std::size_t>(kMethodTable[i].method) != i) return false;
  }
  return kMethodTable.size() == static_cast<std::size_t>(Method::kFabrik) + 1;
}
static_assert(RowsInMethodOrder(), "one row per Method, in Method order");

// The row of `method`.
constexpr const MethodRow& RowOf(Method method) {
  return kMethodTable[static_cast<std::size_t>(method)];
}

// The row named `name` ("pinv"), nullptr when none.
const MethodRow* FindMethod(std::string_view name);

// Task type names as scripts spell them, in TaskType order (kPose is "both": position and
// orientation); TaskTypeName and the Lua binding read it.
inline constexpr std::array<std::string_view, 5> kTaskTypeNames = {"position", "orientation",
                                                                   "both", "aim", "pole"};
static_assert(kTaskTypeNames.size() == static_cast<std::size_t>(TaskType::kPole) + 1);

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_METHODS_H_
