#include "core/retarget/upside_down.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "core/clip.h"
#include "core/pose.h"
#include "core/retarget/humanoid.h"
#include "core/skeleton.h"

namespace rigel::retarget {

UpsideDown FindUpsideDown(const Skeleton& skeleton, const Clip& clip) {
  UpsideDown result;
  if (!clip.matches(skeleton) || clip.num_frames() == 0) return result;
  const HumanoidJoints roles = ClassifyHumanoid(skeleton);
  int head = roles[Role::kHead];
  if (head < 0) head = roles[Role::kNeck];
  std::vector<int> feet;
  for (const auto& [foot, toes] : {std::pair{Role::kLeftFoot, Role::kLeftToes},
                                   std::pair{Role::kRightFoot, Role::kRightToes}}) {
    const int j = roles[foot] >= 0 ? roles[foot] : roles[toes];
    if (j >= 0) feet.push_back(j);
  }
  if (head < 0 || feet.empty()) return result;
  Pose pose(skeleton);
  int axis = -1;
  double least = std::numeric_limits<double>::infinity();
  for (int f = 0; f < clip.num_frames(); ++f) {
    pose.SetFromRow(skeleton, clip.frame(f));
    Eigen::Vector3d feet_at = Eigen::Vector3d::Zero();
    for (const int j : feet) feet_at += pose.world[j].translation();
    feet_at /= static_cast<double>(feet.size());
    const Eigen::Vector3d d = pose.world[head].translation() - feet_at;
    int a = 0;
    d.cwiseAbs().maxCoeff(&a);
    if (!(d[a] < 0) || (axis >= 0 && a != axis)) return result;
    axis = a;
    least = std::min(least, -d[a]);
  }
  result.axis = axis;
  result.frames = clip.num_frames();
  result.head = skeleton.name(head);
  for (size_t i = 0; i < feet.size(); ++i) {
    result.feet += (i ? ", " : "") + skeleton.name(feet[i]);
  }
  result.least_depth = least;
  return result;
}

}  // namespace rigel::retarget
