// SkeletonBuilder: validates a RawSkeleton and flattens it, depth first, into a Skeleton.
#ifndef RIGEL_CORE_SKELETON_BUILDER_H_
#define RIGEL_CORE_SKELETON_BUILDER_H_

#include <memory>
#include <string>

#include "core/raw_skeleton.h"
#include "core/skeleton.h"

namespace rigel {

class SkeletonBuilder {
 public:
  // Builds the Skeleton, joints in depth-first pre-order (file order for BVH), or returns nullptr
  // and sets `*error` (when given) to a message naming the joint and the reason. Fails when:
  // - there is no joint, or more than Skeleton::kMaxJoints, or nesting deeper than kMaxDepth;
  // - a name is empty or used twice;
  // - a joint lists more than 6 channels or the same channel twice;
  // - a rest translation or end-site offset is not finite;
  // - a rest orientation is not finite or not unit length (|q| - 1 > 1e-6).
  std::unique_ptr<Skeleton> Build(const RawSkeleton& raw, std::string* error = nullptr) const;
};

// The editable tree of a built skeleton: same joints (depth-first order), rest transforms,
// channel layouts and end sites, so SkeletonBuilder rebuilds an identical Skeleton.
RawSkeleton ToRawSkeleton(const Skeleton& skeleton);

}  // namespace rigel

#endif  // RIGEL_CORE_SKELETON_BUILDER_H_
