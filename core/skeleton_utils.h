// Free functions over a Skeleton and its poses: bounds, up axis, joint queries.
#ifndef RIGEL_CORE_SKELETON_UTILS_H_
#define RIGEL_CORE_SKELETON_UTILS_H_

#include <Eigen/Geometry>
#include <span>
#include <string>
#include <vector>

#include "core/skeleton.h"

namespace rigel {

// Axis-aligned box around the world positions of every joint (end sites not included).
Eigen::AlignedBox3d JointBounds(std::span<const Eigen::Isometry3d> world);

// Guess of the up axis from a pose's bounds: 2 (Z) when the Z extent exceeds the Y extent, else
// 1 (Y). X is never up: a T-pose's arm span can exceed its height.
int GuessUpAxis(const Eigen::AlignedBox3d& bounds);

// Distinct rotation orders used by the skeleton's joints, in first-use order, as the axes of
// their rotation channels ("ZXY"; "ZX" for a joint with two rotation channels).
std::vector<std::string> RotationOrdersUsed(const Skeleton& skeleton);

}  // namespace rigel

#endif  // RIGEL_CORE_SKELETON_UTILS_H_
