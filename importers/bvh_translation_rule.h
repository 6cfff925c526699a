// The per-joint rule for a BVH file's position channels (importers/bvh_translation_rule.cc), used
// by the reader (importers/bvh_reader.cc). Not installed.
#ifndef RIGEL_IMPORTERS_BVH_TRANSLATION_RULE_H_
#define RIGEL_IMPORTERS_BVH_TRANSLATION_RULE_H_

#include <string>
#include <vector>

#include "core/channel.h"
#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel::bvh_internal {

// What one joint's own data say about its position channels (the header comment's rule).
struct JointVerdict {
  enum Kind { kTrivial, kDecided, kUndecided } kind = kTrivial;
  TranslationMode mode = TranslationMode::kAdd;  // kDecided only
  std::string detail;                            // kUndecided: why, in words
};

// The per-joint decision of the reader's header comment from the joint's own values. `clip`
// holds the file's values; `values` is scratch space.
JointVerdict DecideTranslation(const Skeleton& skeleton, const Clip& clip, int joint,
                               double figure_size, std::vector<double>& values);

}  // namespace rigel::bvh_internal

#endif  // RIGEL_IMPORTERS_BVH_TRANSLATION_RULE_H_
