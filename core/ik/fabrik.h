// FABRIK (Aristidou & Lasenby 2011, "FABRIK: a fast, iterative solver for the inverse kinematics
// problem"): the direction limits its constrained variant applies to each joint inside the
// iterations. The stage itself (Method::kFabrik) is run by ik::Solve (core/ik/fabrik.cc); these
// are its per-joint geometry, public so that callers and tests can use them alone.
//
// Every vector is in the joint's channel frame (its parent's world rotation times its rest
// orientation, see ik::BoneLimit), and every direction is unit length.
#ifndef RIGEL_CORE_IK_FABRIK_H_
#define RIGEL_CORE_IK_FABRIK_H_

#include <Eigen/Geometry>

namespace rigel::ik {

// The direction nearest `want` within `max_angle` (radians, in [0, pi]) of `rest`: `want` itself
// when inside the cone, else `rest` turned towards `want` by max_angle (in the plane of the two;
// when `want` is opposite `rest`, any such plane).
Eigen::Vector3d LimitToCone(const Eigen::Vector3d& rest, const Eigen::Vector3d& want,
                            double max_angle);

// The hinge angle about `axis` that turns the bone's rest direction `rest` nearest to `want`
// (the signed angle between their projections on the plane normal to `axis`), kept in
// [min, max]: an angle outside goes to the bound nearer on the circle. When either projection
// vanishes (the bone or the wanted direction along the axis), `current` kept in [min, max]. An
// infinite range ([-inf, inf]) leaves the angle free.
double HingeAngle(const Eigen::Vector3d& axis, const Eigen::Vector3d& rest,
                  const Eigen::Vector3d& want, double min, double max, double current);

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_FABRIK_H_
