// What the Blender cross-checks (label "blender") share: whether `blender` is installed, and the
// skip that says it is not.
#ifndef RIGEL_TESTS_ASSIMP_BLENDER_UTIL_H_
#define RIGEL_TESTS_ASSIMP_BLENDER_UTIL_H_

#include <gtest/gtest.h>

#include <cstdlib>

namespace rigel::testing {

inline bool HaveBlender() { return std::system("command -v blender > /dev/null 2>&1") == 0; }

}  // namespace rigel::testing

#define REQUIRE_BLENDER()                                                   \
  do {                                                                      \
    if (!::rigel::testing::HaveBlender()) {                                 \
      GTEST_SKIP() << "blender not installed: Blender cross-check skipped"; \
    }                                                                       \
  } while (0)

#endif  // RIGEL_TESTS_ASSIMP_BLENDER_UTIL_H_
