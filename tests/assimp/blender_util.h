// What the Blender cross-checks (label "blender") share: whether `blender` is installed, the
// skip that says it is not, and one run of a Blender-side script that writes JSON.
#ifndef RIGEL_TESTS_ASSIMP_BLENDER_UTIL_H_
#define RIGEL_TESTS_ASSIMP_BLENDER_UTIL_H_

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace rigel::testing {

inline bool HaveBlender() { return std::system("command -v blender > /dev/null 2>&1") == 0; }

// Runs `blender -b --factory-startup --python script -- args` (args: the script's arguments, as
// the shell reads them; `{json}` in them stands for the output file) and returns the JSON the
// script wrote to dir/tag.json, its log in dir/tag.log. A failure (a non-zero exit, no output) is
// a test failure naming the command and the log, and returns null. PATH is given without pyenv's
// shims, which would hand Blender another Python.
inline nlohmann::json RunBlenderScript(const std::string& script, const std::string& args,
                                       const TempDir& dir, const std::string& tag = "blender") {
  const std::string json_path = dir.file(tag + ".json");
  std::filesystem::remove(json_path);
  const std::string cmd = fmt::format(
      "PATH=\"$(printf %s \"$PATH\" | tr ':' '\\n' | grep -v pyenv | paste -sd: -)\" "
      "blender -b --factory-startup --python '{}' -- {} > '{}' 2>&1",
      script, fmt::format(fmt::runtime(args), fmt::arg("json", "'" + json_path + "'")),
      dir.file(tag + ".log"));
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd << "\nsee " << dir.file(tag + ".log");
  std::ifstream in(json_path);
  EXPECT_TRUE(in) << "Blender wrote no result; see " << dir.file(tag + ".log");
  if (rc != 0 || !in) return nullptr;
  return nlohmann::json::parse(in);
}

// blender_dump.py's frame mode (`script`): Blender's world bone heads of the first armature of
// `file` on clip frames 0 .. frames-1 at `fps`.
inline nlohmann::json BlenderBoneHeads(const std::string& script, const std::string& file,
                                       double fps, int frames, const TempDir& dir,
                                       const std::string& tag = "blender") {
  std::string list;
  for (int f = 0; f < frames; ++f) list += fmt::format(" {}", f);
  return RunBlenderScript(script, fmt::format("'{}' {{json}} {}{}", file, fps, list), dir, tag);
}

}  // namespace rigel::testing

#define REQUIRE_BLENDER()                                                   \
  do {                                                                      \
    if (!::rigel::testing::HaveBlender()) {                                 \
      GTEST_SKIP() << "blender not installed: Blender cross-check skipped"; \
    }                                                                       \
  } while (0)

#endif  // RIGEL_TESTS_ASSIMP_BLENDER_UTIL_H_
