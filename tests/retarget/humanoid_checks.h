// Helpers of the humanoid-role and automatic-map tests: joints to build skeletons from, the shared
// corpus's scenes, and the names the tests compare ("-" standing for none).
#ifndef RIGEL_TESTS_RETARGET_HUMANOID_CHECKS_H_
#define RIGEL_TESTS_RETARGET_HUMANOID_CHECKS_H_

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <string>
#include <utility>
#include <vector>

#include "core/raw_skeleton.h"
#include "core/retarget/humanoid.h"
#include "core/skeleton.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::testing {

// A joint with ZXY rotation channels, `offset` from its parent, and `children`.
inline RawSkeleton::Joint ZxyJoint(const char* name, Eigen::Vector3d offset,
                                   std::vector<RawSkeleton::Joint> children = {}) {
  RawSkeleton::Joint j;
  j.name = name;
  j.rest_translation = offset;
  j.channels = {ChannelType::kZrotation, ChannelType::kXrotation, ChannelType::kYrotation};
  j.children = std::move(children);
  return j;
}

// The scene of `file`, a path under the shared data folder.
inline Scene LoadShared(const std::string& file) { return LoadScene(SharedData() + "/" + file); }

// The name of joint `j` of `s`, or "-" when there is none (j < 0).
inline std::string JointName(const Skeleton& s, int j) { return j >= 0 ? s.name(j) : "-"; }

// Expects `h` to give each role of `expected` the joint of `s` named there ("-": none); a failure
// names `context` and the role.
inline void ExpectRoles(const Skeleton& s, const retarget::HumanoidJoints& h,
                        const std::vector<std::pair<retarget::Role, const char*>>& expected,
                        const std::string& context = "") {
  for (const auto& [role, name] : expected) {
    EXPECT_EQ(JointName(s, h[role]), name) << context << " " << retarget::RoleName(role);
  }
}

// The target joint `map` gives the source joint `source`, or "-" when it maps none.
inline std::string MappedTarget(const retarget::BoneMap& map, const std::string& source) {
  for (const auto& e : map.entries) {
    if (e.source == source) return e.target;
  }
  return "-";
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_RETARGET_HUMANOID_CHECKS_H_
