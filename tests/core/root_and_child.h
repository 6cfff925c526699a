// A two-joint skeleton for the core tests: a root with position and ZXY rotation channels
// (Xposition Yposition Zposition Zrotation Xrotation Yrotation) and one child with a single
// rotation channel.
#ifndef RIGEL_TESTS_CORE_ROOT_AND_CHILD_H_
#define RIGEL_TESTS_CORE_ROOT_AND_CHILD_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/skeleton_builder.h"

namespace rigel {

// Root `root` at the origin; child `child` at `offset` from it, with the one channel `channel`.
inline std::unique_ptr<Skeleton> RootAndChild(const std::string& root, const std::string& child,
                                              const Eigen::Vector3d& offset, ChannelType channel) {
  using C = ChannelType;
  RawSkeleton raw;
  RawSkeleton::Joint r;
  r.name = root;
  r.channels = {C::kXposition, C::kYposition, C::kZposition,
                C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint c;
  c.name = child;
  c.rest_translation = offset;
  c.channels = {channel};
  r.children.push_back(c);
  raw.roots.push_back(r);
  std::string error;
  auto skeleton = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(skeleton) << error;
  return skeleton;
}

}  // namespace rigel

#endif  // RIGEL_TESTS_CORE_ROOT_AND_CHILD_H_
