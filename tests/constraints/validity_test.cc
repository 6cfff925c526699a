// The validity matrix of every constraint kind, one row a case: a job on constraint_test_util.h's
// tree and what Validate must say of it (valid, or a part of the error it gives).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "constraint_test_util.h"
#include "core/constraints/stack.h"

namespace rigel::constraints_test {
namespace validity_test {
namespace {

using constraints::AimConstraint;
using constraints::Constraint;
using constraints::CopyLocationConstraint;
using constraints::CopyRotationConstraint;
using constraints::LimitDistanceConstraint;
using constraints::LimitLocationConstraint;
using constraints::LimitRotationConstraint;
using constraints::OrientConstraint;
using constraints::ParentConstraint;
using constraints::PointConstraint;
using constraints::SplineIkConstraint;
using constraints::TwistConstraint;
using constraints::UpType;

struct ValidityCase {
  std::string name;
  Constraint job;
  bool valid;
  std::string error;  // a part of Validate's error (invalid cases)
};

void PrintTo(const ValidityCase& k, std::ostream* os) { *os << k.name; }

// `job` after `edit(job)`.
template <class Job, class Edit>
Job With(Job job, Edit edit) {
  edit(job);
  return job;
}

// The row every kind has: a default job (no joint) is invalid, naming its kind.
template <class Job>
ValidityCase DefaultJob() {
  const std::string kind(constraints::KindName(Job()));
  return {kind + "_default", Job(), false, kind + ": joint index -1 out of range"};
}
// A twist has a driver, not a joint.
template <>
ValidityCase DefaultJob<TwistConstraint>() {
  return {"twist_default", TwistConstraint(), false, "twist: driver index -1 out of range"};
}
// A spline IK has a chain, not a joint.
template <>
ValidityCase DefaultJob<SplineIkConstraint>() {
  return {"spline_ik_default", SplineIkConstraint(), false, "spline_ik: no chain joint"};
}
template <size_t... kIndex>
void AddDefaultJobs(std::vector<ValidityCase>& cases, std::index_sequence<kIndex...>) {
  (cases.push_back(DefaultJob<std::variant_alternative_t<kIndex, Constraint>>()), ...);
}

// The row every axis-masked kind has: an empty mask is invalid.
template <class Job>
ValidityCase EmptyMask(Job job) {
  job.axes = 0;
  const std::string kind(constraints::KindName(job));
  return {kind + "_no_axis", job, false, kind + ": no axis constrained"};
}

std::vector<ValidityCase> Cases() {
  std::vector<ValidityCase> cases;
  AddDefaultJobs(cases, std::make_index_sequence<std::variant_size_v<Constraint>>());
  const auto parent = Make<ParentConstraint>(kProp, kHand);
  const auto point = Make<PointConstraint>(kProp, kHand);
  const auto orient = Make<OrientConstraint>(kOther, kHand);
  const auto copy_location = Make<CopyLocationConstraint>(kProp, kHand);
  const auto copy_rotation = Make<CopyRotationConstraint>(kProp, kHand);
  const auto limit_distance = Make<LimitDistanceConstraint>(kProp, kHand);
  cases.insert(cases.end(), {EmptyMask(point), EmptyMask(orient), EmptyMask(copy_location),
                             EmptyMask(copy_rotation)});
  const std::vector<ValidityCase> rows = {
      // Parent.
      {"parent_valid", parent, true, ""},
      {"parent_joint_out_of_range", With(parent, [](auto& c) { c.joint = 99; }), false,
       "joint index 99 out of range"},
      {"parent_own_target", With(parent, [](auto& c) { c.target = kProp; }), false, "own target"},
      {"parent_influence_above_one", With(parent, [](auto& c) { c.influence = 1.5; }), false,
       "influence must be in [0, 1]"},
      {"parent_no_position_channels", Make<ParentConstraint>(kOther, kHand), false, "Xposition"},
      {"parent_switch_frames_repeat",
       With(parent,
            [](auto& c) {
              c.switches = {{5, kHand}, {5, kOther}};
            }),
       false, "increasing frame order"},
      // Point.
      {"point_valid", point, true, ""},
      {"point_negative_influence", With(point, [](auto& c) { c.influence = -0.1; }), false,
       "influence"},
      {"point_no_position_channel", Make<PointConstraint>(kOther, kHand), false,
       "point: joint 'other' has no Xposition channel"},
      // Orient.
      {"orient_valid", orient, true, ""},
      {"orient_target_below_joint", Make<OrientConstraint>(kArm, kHand), false,
       "target 'hand' is a descendant of 'arm'"},
      {"orient_one_rotation_channel", Make<OrientConstraint>(kStub, kHand), false,
       "this needs three"},
      // Aim.
      {"aim_valid", ValidAim(), true, ""},
      {"aim_axis_not_unit",
       With(ValidAim(), [](auto& c) { c.aim_axis = Eigen::Vector3d(2, 0, 0); }), false,
       "unit length"},
      {"aim_up_axis_along_aim", With(ValidAim(), [](auto& c) { c.up_axis = c.aim_axis; }), false,
       "parallel"},
      {"aim_object_up_without_up_target",
       With(ValidAim(), [](auto& c) { c.up_type = UpType::kObject; }), false,
       "up_target is required"},
      {"aim_zero_up", With(ValidAim(), [](auto& c) { c.up = Eigen::Vector3d::Zero(); }), false,
       "must not be zero"},
      {"aim_one_rotation_channel", With(ValidAim(), [](auto& c) { c.joint = kStub; }), false,
       "this needs three"},
      // Copy location and copy rotation.
      {"copy_location_valid", copy_location, true, ""},
      {"copy_location_no_y_position_channel",
       With(Make<CopyLocationConstraint>(kOther, kHand), [](auto& c) { c.axes = 0b010; }), false,
       "Yposition"},
      {"copy_rotation_valid", copy_rotation, true, ""},
      {"copy_rotation_one_rotation_channel", Make<CopyRotationConstraint>(kStub, kHand), false,
       "this needs three"},
      // Limit rotation.
      {"limit_rotation_valid", ArmLimit(), true, ""},
      {"limit_rotation_min_above_max", With(ArmLimit(), [](auto& c) { c.min.y() = 0.5; }), false,
       "min > max on axis y"},
      {"limit_rotation_no_axis", With(ArmLimit(), [](auto& c) { c.axes = 0; }), false,
       "no axis limited"},
      {"limit_rotation_influence_above_one", With(ArmLimit(), [](auto& c) { c.influence = 2; }),
       false, "influence must be in [0, 1]"},
      // Limit distance.
      {"limit_distance_valid", limit_distance, true, ""},
      {"limit_distance_nan", With(limit_distance, [](auto& c) { c.distance = std::nan(""); }),
       false, "distance is NaN"},
      {"limit_distance_no_position_channels",
       With(Make<LimitDistanceConstraint>(kOther, kHand), [](auto& c) { c.distance = 1; }), false,
       "Xposition"},
  };
  cases.insert(cases.end(), rows.begin(), rows.end());
  // Twist: the hand drives `other` (both below the root, the default reference).
  TwistConstraint twist;
  twist.driver = kHand;
  twist.joints = {kOther};
  twist.weights = {0.5};
  const std::vector<ValidityCase> twist_rows = {
      {"twist_valid", twist, true, ""},
      {"twist_no_joint",
       With(twist,
            [](auto& c) {
              c.joints.clear();
              c.weights.clear();
            }),
       false, "twist: no twist joint"},
      {"twist_weights_per_joint",
       With(twist,
            [](auto& c) {
              c.weights = {0.5, 0.5};
            }),
       false, "2 weight(s) for 1 twist joint(s)"},
      {"twist_weight_above_one", With(twist, [](auto& c) { c.weights = {1.5}; }), false,
       "weight of 'other' must be in [0, 1]"},
      {"twist_joint_out_of_range", With(twist, [](auto& c) { c.joints = {42}; }), false,
       "twist joint index 42 out of range"},
      {"twist_joint_is_the_driver", With(twist, [](auto& c) { c.joints = {kHand}; }), false,
       "cannot be one of its twist joints"},
      {"twist_joint_below_the_driver",
       With(twist,
            [](auto& c) {
              c.driver = kArm;
              c.joints = {kHand};
            }),
       false, "twist joint 'hand' is below the driver 'arm'"},
      {"twist_joint_twice",
       With(twist,
            [](auto& c) {
              c.joints = {kOther, kOther};
              c.weights = {0.5, 0.5};
            }),
       false, "appears twice"},
      {"twist_one_rotation_channel", With(twist, [](auto& c) { c.joints = {kStub}; }), false,
       "twist: joint 'stub' has 1 rotation channel(s); this needs three"},
      {"twist_reference_not_above", With(twist, [](auto& c) { c.reference = kArm; }), false,
       "reference 'arm' is not above the driver and every twist joint"},
      {"twist_axis_nan", With(twist, [](auto& c) { c.axis.x() = std::nan(""); }), false,
       "axis not finite"},
      {"twist_influence_above_one", With(twist, [](auto& c) { c.influence = 1.5; }), false,
       "influence must be in [0, 1]"},
  };
  cases.insert(cases.end(), twist_rows.begin(), twist_rows.end());
  // Limit location: the prop (three position channels) under a ceiling.
  LimitLocationConstraint limit_location;
  limit_location.joint = kProp;
  limit_location.max.y() = 1;
  const std::vector<ValidityCase> limit_location_rows = {
      {"limit_location_valid", limit_location, true, ""},
      {"limit_location_no_bound", LimitLocationConstraint{.joint = kProp}, false,
       "limit_location: no bound given"},
      {"limit_location_min_above_max", With(limit_location, [](auto& c) { c.min.y() = 2; }), false,
       "min > max on axis y"},
      {"limit_location_nan", With(limit_location, [](auto& c) { c.min.x() = std::nan(""); }), false,
       "bound on axis x is NaN"},
      {"limit_location_influence", With(limit_location, [](auto& c) { c.influence = -1; }), false,
       "influence must be in [0, 1]"},
      {"limit_location_world_needs_position_channels",
       With(limit_location, [](auto& c) { c.joint = kOther; }), false,
       "limit_location: joint 'other' has no Xposition channel"},
      {"limit_location_local_needs_the_bounded_channel",
       With(limit_location,
            [](auto& c) {
              c.joint = kOther;
              c.space = constraints::Space::kLocal;
            }),
       false, "has no Yposition channel"},
  };
  cases.insert(cases.end(), limit_location_rows.begin(), limit_location_rows.end());
  // Spline IK: the arm-hand bone along a curve from the root joint to a fixed point.
  SplineIkConstraint spline;
  spline.joints = {kArm, kHand};
  spline.points = {{kRoot, Eigen::Vector3d::Zero()}, {-1, Eigen::Vector3d(1, 1, 0)}};
  const std::vector<ValidityCase> spline_rows = {
      {"spline_ik_valid", spline, true, ""},
      {"spline_ik_joint_out_of_range",
       With(spline,
            [](auto& c) {
              c.joints = {kArm, 42};
            }),
       false, "spline_ik: chain joint index 42 out of range"},
      {"spline_ik_broken_chain",
       With(spline,
            [](auto& c) {
              c.joints = {kRoot, kHand};
            }),
       false, "chain joint 'hand' is not a child of 'root'"},
      {"spline_ik_zero_length", With(spline, [](auto& c) { c.joints = {kStub}; }), false,
       "has zero length"},
      {"spline_ik_one_point", With(spline, [](auto& c) { c.points.resize(1); }), false,
       "1 control point(s); at least 2 are needed"},
      {"spline_ik_bezier_count",
       With(spline,
            [](auto& c) {
              c.curve = constraints::CurveType::kBezier;
              c.points.push_back({kOther, Eigen::Vector3d::Zero()});
            }),
       false, "a Bezier curve needs 3k + 1 points"},
      {"spline_ik_control_joint_below_the_root",
       With(spline, [](auto& c) { c.points[1].joint = kHand; }), false,
       "control point 2: joint 'hand' lies below the chain's root 'arm'"},
      {"spline_ik_point_nan",
       With(spline, [](auto& c) { c.points[1].position.x() = std::nan(""); }), false,
       "control point 2 is not finite"},
      {"spline_ik_influence_above_one", With(spline, [](auto& c) { c.influence = 1.5; }), false,
       "influence must be in [0, 1]"},
      {"spline_ik_stretch_needs_position_channels", With(spline, [](auto& c) { c.stretch = true; }),
       false, "spline_ik: joint 'hand' has no Xposition channel"},
      {"spline_ik_ends_without_an_end_up",
       With(spline, [](auto& c) { c.twist = constraints::SplineTwist::kEnds; }), false,
       "up_end is not given and the last control point is not a joint"},
      {"spline_ik_ends_up_axis_not_unit",
       With(spline,
            [](auto& c) {
              c.twist = constraints::SplineTwist::kEnds;
              c.up_end.vector = Eigen::Vector3d::UnitY();
              c.up_axis = Eigen::Vector3d(0, 0, 2);
            }),
       false, "up_axis must be unit length"},
      {"spline_ik_ends_valid",
       With(spline,
            [](auto& c) {
              c.twist = constraints::SplineTwist::kEnds;
              c.up_end.joint = kOther;
            }),
       true, ""},
  };
  cases.insert(cases.end(), spline_rows.begin(), spline_rows.end());
  return cases;
}

class Validity : public ::testing::TestWithParam<ValidityCase> {};

TEST_P(Validity, Matrix) {
  const ValidityCase& k = GetParam();
  const auto s = Tree();
  std::string error;
  const bool valid = std::visit([&](const auto& job) { return job.Validate(*s, &error); }, k.job);
  if (k.valid) {
    EXPECT_TRUE(valid) << error;
  } else {
    EXPECT_FALSE(valid);
    EXPECT_NE(error.find(k.error), std::string::npos) << error;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, Validity, ::testing::ValuesIn(Cases()), NameOf());

}  // namespace
}  // namespace validity_test
}  // namespace rigel::constraints_test
