// The writers share one clip check (CheckClipsForExport on core's CheckClip): each refuses a
// non-finite value naming file, clip, frame, joint and channel, and writes nothing. Plus the
// glTF JSON's top-level arrays (clang once wrote "buffers" as an object).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/channel.h"
#include "exporters/atomic_file.h"
#include "exporters/bvh_writer.h"
#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "exporters/save_scene.h"
#include "importers/bvh_reader.h"
#include "test_util.h"

namespace rigel {
namespace {

Scene TwoJointScene() {
  return ParseBvh(
      "HIERARCHY\nROOT hips\n{\nOFFSET 0 0 0\n"
      "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
      "JOINT knee\n{\nOFFSET 0 -1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "End Site\n{\nOFFSET 0 -1 0\n}\n}\n}\n"
      "MOTION\nFrames: 3\nFrame Time: 0.1\n"
      "0 1 0 0 0 0 10 0 0\n0 1 0 5 0 0 20 0 0\n0 1 0 10 0 0 30 0 0\n",
      "two.bvh");
}

TEST(GltfWriter, TopLevelArraysAreArrays) {
  const Scene scene = TwoJointScene();
  GltfOptions options;
  options.binary = false;
  const std::string text = FormatGltf(*scene.skeleton, scene.clips, options, "two.gltf");
  const nlohmann::json gltf = nlohmann::json::parse(text);
  for (const char* key :
       {"buffers", "bufferViews", "accessors", "nodes", "skins", "scenes", "animations"}) {
    ASSERT_TRUE(gltf.contains(key)) << key;
    EXPECT_TRUE(gltf[key].is_array()) << key << " is " << gltf[key].type_name();
  }
  ASSERT_EQ(gltf["buffers"].size(), 1u);
  const nlohmann::json& buffer = gltf["buffers"][0];
  EXPECT_TRUE(buffer.is_object());
  EXPECT_TRUE(
      buffer["uri"].get<std::string>().starts_with("data:application/octet-stream;base64,"));
  // byteLength covers every view.
  std::size_t end = 0;
  for (const auto& view : gltf["bufferViews"]) {
    end = std::max(end,
                   view["byteOffset"].get<std::size_t>() + view["byteLength"].get<std::size_t>());
  }
  EXPECT_GE(buffer["byteLength"].get<std::size_t>(), end);

  // The binary form carries the same JSON chunk: "buffers" an array of one, without a uri.
  options.binary = true;
  const std::string glb = FormatGltf(*scene.skeleton, scene.clips, options, "two.glb");
  ASSERT_GT(glb.size(), 20u);
  std::uint32_t json_length = 0;
  std::memcpy(&json_length, glb.data() + 12, 4);
  const nlohmann::json chunk = nlohmann::json::parse(glb.substr(20, json_length));
  ASSERT_TRUE(chunk["buffers"].is_array());
  ASSERT_EQ(chunk["buffers"].size(), 1u);
  EXPECT_FALSE(chunk["buffers"][0].contains("uri"));
}

// Every writer, through SaveClips: a NaN in frame 1 of the knee's Xrotation is refused with
// the file, (the clip,) the frame, the joint and the channel, and no file is left behind.
TEST(Writers, RefuseNonFiniteNamingWhere) {
  const Scene scene = TwoJointScene();
  Clip clip = scene.clips[0];
  clip.set_name("take1");
  const int channel = 7;  // knee: Zrotation (6), Xrotation (7), Yrotation (8)
  ASSERT_EQ(ChannelName(scene.skeleton->channels()[channel]), "Xrotation");
  clip.at(1, channel) = NAN;
  rigel::testing::TempDir dir;
  for (const char* ext : {".bvh", ".glb", ".gltf", ".fbx"}) {
    const std::string out = dir.file(std::string("out") + ext);
    try {
      SaveClip(*scene.skeleton, clip, out);
      ADD_FAILURE() << ext << ": no error";
    } catch (const ExportError& e) {
      EXPECT_EQ(std::string(e.what()),
                out + ": clip 'take1': frame 1, joint 'knee', channel Xrotation: value is nan")
          << ext;
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << ext;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "no temporary file left behind";
}

// The same check for every writer on the other faults: row width, no frame, frame time.
TEST(Writers, RefuseMalformedClips) {
  const Scene scene = TwoJointScene();
  Clip narrow(2, 8, 0.1);
  Clip empty(0, 9, 0.1);
  Clip bad_time = scene.clips[0];
  bad_time.set_frame_time(0);
  rigel::testing::TempDir dir;
  for (const char* ext : {".bvh", ".glb", ".fbx"}) {
    const std::string out = dir.file(std::string("out") + ext);
    for (const auto& [clip, reason] :
         {std::pair{&narrow, "clip has 8 channels per frame, the skeleton 9"},
          std::pair{&empty, "clip has no frame"},
          std::pair{&bad_time, "frame time 0 is not a finite number > 0"}}) {
      try {
        SaveClip(*scene.skeleton, *clip, out);
        ADD_FAILURE() << ext << ": no error for " << reason;
      } catch (const ExportError& e) {
        EXPECT_EQ(std::string(e.what()), out + ": " + reason) << ext;
      }
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace rigel
