// Spline IK: a chain of joints fitted along a curve through control points (fixed world points
// or joints), as Blender's Spline IK constraint fits a bone chain to a curve object and Maya's
// IK spline handle to a NURBS curve. The curve is a cubic Bézier (control points and handles, as
// a Blender Bézier curve) or a centripetal Catmull-Rom spline through the points, evaluated at
// every Run from the current pose.
#ifndef RIGEL_CORE_CONSTRAINTS_SPLINE_IK_H_
#define RIGEL_CORE_CONSTRAINTS_SPLINE_IK_H_

#include <string>
#include <vector>

#include "core/constraints/constraint.h"

namespace rigel::constraints {

// How the curve goes through the control points.
enum class CurveType : std::uint8_t {
  // Piecewise cubic Bézier: 3k + 1 points P0 H0 H1 P1 H2 H3 P2 ..., the curve passes through P0,
  // P1, ... and segment i has handles H(2i), H(2i+1) (Blender's right handle of P(i) and left
  // handle of P(i+1)).
  kBezier,
  // Centripetal Catmull-Rom (alpha = 1/2) through every point, ends extended by reflection
  // (P(-1) = 2 P0 - P1); consecutive coincident points count once.
  kCatmullRom,
};

// Where the roll of the fitted bones comes from.
enum class SplineTwist : std::uint8_t {
  // Each bone turns by the smallest rotation taking its bone axis onto its chord, parents first,
  // so it keeps the roll it had (Blender's Spline IK, which has no twist option).
  kKeep,
  // The roll goes from the start's up vector to the end's (Maya's IK spline advanced twist): the
  // start up, projected off the first chord, is carried down the chain by the smallest rotations
  // between consecutive chords (parallel transport); the angle between the carried up and the
  // end up at the last bone is then shared out in proportion to the chain length above each bone
  // (0 at the first bone, all of it at the last one). Each bone's up_axis turns towards its up.
  kEnds,
};

// A control point: joint >= 0 reads that joint's world position each Run, else `position`
// (world) is fixed.
struct ControlPoint {
  int joint = -1;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
};

// An up vector of kEnds: joint >= 0: that joint's world rotation times up_axis; else `vector`
// (world). Neither (joint < 0, zero vector): the first (start) or last (end) control point's
// joint, which must then be a joint.
struct UpSource {
  int joint = -1;
  Eigen::Vector3d vector = Eigen::Vector3d::Zero();
};

// The chain `joints` (root first, each the parent of the next) has one bone per joint: from the
// joint to the next one, and for the last joint to its End Site when it has one (the last joint
// is otherwise only the tip of the bone before it; its rotation is not changed). A bone's axis
// and length are the next point's offset in the joint's space in the current pose.
//
// The root joint goes to the curve's start (through its position channels; a root without them
// must already lie there, e.g. the root itself as the first control point). Then, bone by bone:
// - stretch off: the bone's tip is the first point of the curve after the previous tip whose
//   distance from the bone's head is the bone's length (a sphere-curve intersection, Blender's
//   "Y Scale Mode: None"): the chain keeps its bone lengths and every tip lies on the curve; a
//   chain shorter than the curve stops short of its end. A longer one rolls off the end as in
//   Blender: the bone crossing the end aims at the point of the end tangent's line at its length
//   from its head, turned only by the part of its path (arc to the end, then the line) that lies
//   on the curve, and the bones after it keep their pose relative to it.
// - stretch on: the tips go to arc lengths proportional to the cumulated bone lengths, the last
//   one at the curve's end (Blender's "Fit Curve"); the joints are moved there through their
//   position channels (every chain joint below the root needs three), the bones aim at them.
// Each bone's rotation is set by `twist`; influence blends each joint's world rotation (slerp)
// and each moved position (lerp) with its own, parents first, so influence 0 leaves the pose
// as it is. A curve of zero length (all control points coincident) leaves the pose as it is; a
// zero-length bone keeps its rotation.
struct SplineIkConstraint {
  // Validates the job. Returns false (and sets `error`) when:
  // - a chain joint is not a joint of the skeleton, the chain is empty, or a joint is not the
  //   parent of the next one; every bone has zero rest length;
  // - a chain joint below the root lacks three rotation channels (the root needs them too), or,
  //   with stretch on, three position channels;
  // - a control point joint is not a joint, or lies below the chain's root (it would move with
  //   the chain); a fixed point is not finite;
  // - fewer than 2 control points; a Bézier has not 3k + 1 points (k >= 1);
  // - influence is outside [0, 1];
  // - kEnds: up_axis is not unit length, an up source's joint is not a joint or lies below the
  //   chain's root, an up vector is not finite, or an up source is not given and the control
  //   point it defaults to is not a joint.
  bool Validate(const Skeleton& skeleton, std::string* error) const;
  // Applies the constraint to `pose` (world transforms up to date; kept up to date).
  bool Run(const Skeleton& skeleton, Pose& pose, int frame, State& state, std::string* error) const;

  // Chain, root to tip (the constrained joint, ConstrainedJoint, is the root).
  std::vector<int> joints;
  std::vector<ControlPoint> points;
  CurveType curve = CurveType::kCatmullRom;
  bool stretch = false;
  SplineTwist twist = SplineTwist::kKeep;
  // kEnds: the bones' up axis (joint space, unit; its part off the bone axis is used) and the up
  // vectors at the chain's start and end.
  Eigen::Vector3d up_axis = Eigen::Vector3d::UnitZ();
  UpSource up_start;
  UpSource up_end;
  double influence = 1.0;
};

// A piecewise cubic Bézier curve in world space and its arc length (core of SplineIkConstraint,
// public for the tests and the benchmark). Parameter u in [0, segments]: segment floor(u) at
// t = u - floor(u).
class SplineCurve {
 public:
  // Builds the curve of `type` through world points `p` (see CurveType), and its arc length table
  // when `measure` (else call Measure before length, ArcLength and ParameterAt). Returns false
  // when there are too few points (a Bézier needs 3k + 1, k >= 1; a Catmull-Rom 2 distinct ones).
  bool Build(CurveType type, const std::vector<Eigen::Vector3d>& p, bool measure = true);
  // Fills the arc length table.
  void Measure();
  int segments() const { return static_cast<int>(control_.size() / 4); }
  // Whether every control point lies within `tolerance` of the first (the curve is a point).
  bool IsPoint(double tolerance) const;
  // Position and first derivative (d/du) at parameter u (clamped to [0, segments]).
  Eigen::Vector3d Position(double u) const;
  Eigen::Vector3d Derivative(double u) const;
  // Arc length between parameters a <= b (Gauss-Legendre on each sample interval; no table).
  double Integrate(double a, double b) const;
  // Total arc length (measured curves).
  double length() const { return cumulative_.empty() ? 0.0 : cumulative_.back(); }
  // Arc length from the start to parameter u (measured curves).
  double ArcLength(double u) const;
  // The parameter at arc length s, clamped to [0, length()] (measured curves).
  double ParameterAt(double s) const;
  // The first parameter u > `from` at which |Position(u) - center| reaches `radius`, with
  // |Position(from) - center| < radius. Returns false when the curve stays inside the sphere up
  // to its end.
  bool SphereExit(const Eigen::Vector3d& center, double radius, double from, double* u) const;
  // The Bézier control points, four per segment.
  const std::vector<Eigen::Vector3d>& control() const { return control_; }

  // Samples per segment of the table that brackets arc lengths and sphere crossings.
  static constexpr int kSamples = 16;

 private:
  std::vector<Eigen::Vector3d> control_;
  // Arc length at each sample u = k / kSamples, k = 0 .. segments * kSamples.
  std::vector<double> cumulative_;
};

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_SPLINE_IK_H_
