// Helpers shared by the Assimp tests: world joint positions per frame, compared by joint name.
#ifndef RIGEL_TESTS_ASSIMP_WORLD_COMPARE_H_
#define RIGEL_TESTS_ASSIMP_WORLD_COMPARE_H_

#include <Eigen/Geometry>
#include <algorithm>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/scene.h"
#include "core/skeleton_utils.h"

namespace rigel::testing {

// World position of every joint on frame `f` of `clip`.
inline std::vector<Eigen::Vector3d> WorldPositions(const Skeleton& skeleton, const Clip& clip,
                                                   int f) {
  Pose pose(skeleton);
  pose.SetFromRow(skeleton, clip.frame(f));
  std::vector<Eigen::Vector3d> out;
  for (const auto& w : pose.world) out.push_back(w.translation());
  return out;
}

// Height (largest extent of the joint bounds) on frame 0.
inline double Height(const Skeleton& skeleton, const Clip& clip) {
  Pose pose(skeleton);
  pose.SetFromRow(skeleton, clip.frame(0));
  const Eigen::AlignedBox3d box = JointBounds(pose.world);
  return box.sizes().maxCoeff();
}

// Largest distance, over every frame and every joint of `a` that `b` also has (by name), between
// a's world position times `scale` and b's, with b's frame f matched to a's frame f.
inline double MaxWorldDifference(const Skeleton& a, const Clip& ca, const Skeleton& b,
                                 const Clip& cb, double scale = 1.0, int* shared = nullptr,
                                 int stride = 1) {
  std::vector<std::pair<int, int>> pairs;
  for (int j = 0; j < a.num_joints(); ++j) {
    const int k = b.FindJoint(a.name(j));
    if (k >= 0) pairs.push_back({j, k});
  }
  if (shared) *shared = static_cast<int>(pairs.size());
  double worst = 0;
  const int frames = std::min(ca.num_frames(), cb.num_frames());
  for (int f = 0; f < frames; f += stride) {
    const auto pa = WorldPositions(a, ca, f);
    const auto pb = WorldPositions(b, cb, f);
    for (const auto& [j, k] : pairs) worst = std::max(worst, (pa[j] * scale - pb[k]).norm());
  }
  return worst;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_ASSIMP_WORLD_COMPARE_H_
