#include "core/skeleton_utils.h"

#include <algorithm>

namespace rigel {

Eigen::AlignedBox3d JointBounds(std::span<const Eigen::Isometry3d> world) {
  Eigen::AlignedBox3d box;
  for (const Eigen::Isometry3d& w : world) box.extend(w.translation());
  return box;
}

int GuessUpAxis(const Eigen::AlignedBox3d& bounds) {
  if (bounds.isEmpty()) return 1;
  const Eigen::Vector3d size = bounds.sizes();
  return size.z() > size.y() ? 2 : 1;
}

std::vector<std::string> RotationOrdersUsed(const Skeleton& skeleton) {
  std::vector<std::string> orders;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    std::string order;
    for (const int c : skeleton.rotation_channels(j)) {
      order += static_cast<char>('X' + ChannelAxis(skeleton.channels()[c]));
    }
    if (!order.empty() && std::find(orders.begin(), orders.end(), order) == orders.end()) {
      orders.push_back(order);
    }
  }
  return orders;
}

}  // namespace rigel
