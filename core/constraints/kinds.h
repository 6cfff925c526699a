// The constraint kinds table: one row per kind, in the order of the Constraint variant
// (core/constraints/stack.h), whose alternative is the kind's job (its Validate and Run apply it).
// A row gives the kind's name (the one rig:constraint takes) and its options with their types and
// defaults, in the order error messages list them. The Lua binding reads the names and options
// from here and keeps one reader per row (bindings/lua/wrap_constraint.cc).
//
// Adding a kind: docs/architecture.md, "Add a constraint kind".
#ifndef RIGEL_CORE_CONSTRAINTS_KINDS_H_
#define RIGEL_CORE_CONSTRAINTS_KINDS_H_

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <variant>

#include "core/constraints/stack.h"

namespace rigel::constraints {

// One option of a kind: its name, its type and its default as docs/constraints.md spells them.
struct KindOption {
  std::string_view name;
  std::string_view type;
  std::string_view default_value;  // "required" when it has none
};

// One constraint kind.
struct ConstraintKind {
  std::string_view name;                // "parent"
  std::span<const KindOption> options;  // every option it takes
  bool has_target;                      // takes a required `target` joint
};

namespace kinds {

inline constexpr KindOption kJoint{"joint", "joint", "required"};
inline constexpr KindOption kTarget{"target", "joint", "required"};
inline constexpr KindOption kInfluence{"influence", "number in [0, 1]", "1"};
inline constexpr KindOption kAfterStage{"after_stage", "stage index", "the last stage declared"};
inline constexpr KindOption kAxes{"axes", "axes string", "\"xyz\""};

inline constexpr std::array<KindOption, 6> kParent{kJoint,
                                                   kTarget,
                                                   kInfluence,
                                                   kAfterStage,
                                                   {"maintain_offset", "boolean", "true"},
                                                   {"switch", "list of {frame, target}", "none"}};
inline constexpr std::array<KindOption, 6> kPoint{
    kJoint, kTarget, kInfluence, kAfterStage, {"maintain_offset", "boolean", "false"}, kAxes};
inline constexpr std::array<KindOption, 9> kAim{
    kJoint,
    kTarget,
    kInfluence,
    kAfterStage,
    {"aim_axis", "unit vec3", "(1, 0, 0)"},
    {"up_axis", "unit vec3", "(0, 1, 0)"},
    {"up_type", "\"world\", \"object\" or \"object_rotation\"", "\"world\""},
    {"up_target", "joint", "none"},
    {"up", "vec3", "(0, 1, 0)"}};
inline constexpr std::array<KindOption, 6> kCopy{
    kJoint, kTarget, kInfluence, kAfterStage, {"mode", "\"replace\" or \"add\"", "\"replace\""},
    kAxes};
inline constexpr std::array<KindOption, 6> kLimitRotation{kJoint,
                                                          kInfluence,
                                                          kAfterStage,
                                                          kAxes,
                                                          {"min", "vec3 (degrees)", "(0, 0, 0)"},
                                                          {"max", "vec3 (degrees)", "(0, 0, 0)"}};
inline constexpr std::array<KindOption, 6> kLimitDistance{
    kJoint,
    kTarget,
    kInfluence,
    kAfterStage,
    {"distance", "number >= 0", "the first frame's"},
    {"limit", "\"inside\", \"outside\" or \"surface\"", "\"inside\""}};
inline constexpr std::array<KindOption, 7> kTwist{{{"driver", "joint", "required"},
                                                   {"joints", "list of joints", "required"},
                                                   {"weights", "list of numbers", "i / (n + 1)"},
                                                   {"axis", "vec3", "the bone's axis"},
                                                   {"reference", "joint", "none"},
                                                   kInfluence,
                                                   kAfterStage}};
inline constexpr std::array<KindOption, 6> kLimitLocation{
    kJoint,
    kInfluence,
    kAfterStage,
    {"min", "{x, y, z} bounds", "unbounded"},
    {"max", "{x, y, z} bounds", "unbounded"},
    {"space", "\"world\" or \"local\"", "\"world\""}};
inline constexpr std::array<KindOption, 12> kSplineIk{
    {{"joints", "list of joints (root to tip)", "or root and tip"},
     {"root", "joint", "or joints"},
     {"tip", "joint", "or joints"},
     {"points", "list of vec3s and joints", "required"},
     {"curve", "\"catmull_rom\" or \"bezier\"", "\"catmull_rom\""},
     {"stretch", "boolean", "false"},
     {"twist", "\"keep\" or \"ends\"", "\"keep\""},
     {"up_axis", "unit vec3", "(0, 0, 1)"},
     {"up_start", "joint or vec3", "none"},
     {"up_end", "joint or vec3", "none"},
     kInfluence,
     kAfterStage}};

inline constexpr std::array<KindOption, 5> kLimitScale{
    kJoint,
    kInfluence,
    kAfterStage,
    {"min", "{x, y, z} bounds (scale factors > 0)", "unbounded"},
    {"max", "{x, y, z} bounds (scale factors > 0)", "unbounded"}};

}  // namespace kinds

// Every kind, in Constraint variant order: name, options, has_target.
inline constexpr std::array<ConstraintKind, 13> kConstraintKinds{{
    {"parent", kinds::kParent, true},
    {"point", kinds::kPoint, true},
    {"orient", kinds::kPoint, true},
    {"aim", kinds::kAim, true},
    {"copy_location", kinds::kCopy, true},
    {"copy_rotation", kinds::kCopy, true},
    {"limit_rotation", kinds::kLimitRotation, false},
    {"limit_distance", kinds::kLimitDistance, true},
    {"twist", kinds::kTwist, false},
    {"limit_location", kinds::kLimitLocation, false},
    {"spline_ik", kinds::kSplineIk, false},
    {"copy_scale", kinds::kCopy, true},
    {"limit_scale", kinds::kLimitScale, false},
}};
static_assert(kConstraintKinds.size() == std::variant_size_v<Constraint>,
              "one row per Constraint alternative");

// The row index of the kind named `name`, -1 when none.
constexpr int KindIndex(std::string_view name) {
  for (std::size_t i = 0; i < kConstraintKinds.size(); ++i) {
    if (kConstraintKinds[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_KINDS_H_
