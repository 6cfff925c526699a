// The writers share one clip check (CheckClipsForExport on core's CheckClip): each refuses a
// non-finite value naming file, clip, frame, joint and channel, and writes nothing. Plus the
// glTF JSON's top-level arrays (clang once wrote "buffers" as an object).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/channel.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"
#include "exporters/atomic_file.h"
#include "exporters/bvh_writer.h"
#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "exporters/save_scene.h"
#include "importers/bvh_reader.h"
#include "importers/load_scene.h"
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

namespace rigel {
namespace {

Pose PoseAt(const Skeleton& skeleton, const Clip& clip, int frame) {
  Pose pose(skeleton);
  std::ranges::copy(clip.frame(frame), pose.channels.begin());
  pose.UpdateWorld(skeleton);
  return pose;
}

// BVH holds no scale. Below an animated, non-uniform scale (root's and mid's, one inheriting and
// one compensating), the written file still puts every joint where the scaled original has it on
// every frame: the BVH is read back and its FK compared with the scaled FK.
TEST(BvhWriter, AnimatedScaleKeepsEveryJointsWorldPosition) {
  using C = ChannelType;
  for (const ScaleInheritance tip_mode :
       {ScaleInheritance::kInherit, ScaleInheritance::kCompensate}) {
    RawSkeleton raw;
    RawSkeleton::Joint root, mid, tip, leaf;
    root.name = "root";
    root.channels = {C::kXposition, C::kYposition, C::kZposition, C::kZrotation, C::kXrotation,
                     C::kYrotation, C::kXscale,    C::kYscale,    C::kZscale};
    mid.name = "mid";
    mid.rest_translation = {0, 1, 0};
    mid.channels = {C::kZrotation, C::kXrotation, C::kYrotation,
                    C::kXscale,    C::kYscale,    C::kZscale};
    tip.name = "tip";
    tip.rest_translation = {0.5, 1, 0};
    tip.channels = {C::kZrotation, C::kXrotation, C::kYrotation};
    tip.scale_inheritance = tip_mode;
    leaf.name = "leaf";
    leaf.rest_translation = {0, 1, 0.25};
    leaf.channels = {C::kZrotation};
    leaf.end_sites = {{0, 1, 0}};
    tip.children.push_back(leaf);
    mid.children.push_back(tip);
    root.children.push_back(mid);
    raw.roots.push_back(root);
    std::string error;
    const auto skeleton = SkeletonBuilder().Build(raw, &error);
    ASSERT_TRUE(skeleton) << error;
    const int frames = 5;
    Clip clip(frames, skeleton->num_channels(), 1.0 / 30);
    for (int f = 0; f < frames; ++f) {
      const std::span<double> row = clip.frame(f);
      for (int c = 0; c < skeleton->num_channels(); ++c) {
        const ChannelType type = skeleton->channels()[c];
        // Scales from 0.5 to 1.7, different per axis; rotations up to about 40 degrees.
        row[c] = IsScale(type)      ? 0.3 * std::sin(0.7 * f + c) + 0.2 * ChannelAxis(type) - 0.1
                 : IsRotation(type) ? 0.7 * std::sin(0.4 * f + 1.3 * c)
                                    : 0.1 * f + c;
      }
    }
    ASSERT_FALSE(UnfoldableScaleJoints(*skeleton, clip).empty());
    const Scene back = ParseBvh(FormatBvh(*skeleton, clip), "scaled.bvh");
    ASSERT_EQ(back.skeleton->num_joints(), 4);
    EXPECT_FALSE(back.skeleton->has_scale());
    for (int f = 0; f < frames; ++f) {
      const Pose want = PoseAt(*skeleton, clip, f);
      const Pose got = PoseAt(*back.skeleton, back.clips[0], f);
      for (int j = 0; j < 4; ++j) {
        EXPECT_LT((want.world[j].translation() - got.world[j].translation()).norm(), 1e-9)
            << "frame " << f << " joint " << skeleton->name(j);
        EXPECT_LT((want.world[j].linear() - got.world[j].linear()).norm(), 1e-9)
            << "frame " << f << " joint " << skeleton->name(j) << ": rotations are kept";
      }
    }
  }
}

}  // namespace
}  // namespace rigel

namespace rigel {
namespace {

// A leaf bone's name (3ds Max's "Bip01 HeadNub") is kept as the end site's name: through the
// skeleton's raw form, into glTF and FBX node names; BVH cannot hold it and says so, naming it.
TEST(EndSiteNames, KeptByGltfAndFbxNamedWhereBvhDropsThem) {
  RawSkeleton raw;
  RawSkeleton::Joint head;
  head.name = "Bip01 Head";
  head.channels = {ChannelType::kZrotation};
  head.end_sites = {{0, 1, 0}, {0, 0, 1}};
  head.end_site_names = {"Bip01 HeadNub", ""};
  raw.roots.push_back(head);
  std::string error;
  const auto skeleton = SkeletonBuilder().Build(raw, &error);
  ASSERT_TRUE(skeleton) << error;
  ASSERT_EQ(skeleton->end_sites().size(), 2u);
  EXPECT_EQ(skeleton->end_sites()[0].name, "Bip01 HeadNub");
  EXPECT_EQ(skeleton->end_sites()[1].name, "");
  EXPECT_EQ(ToRawSkeleton(*skeleton).roots[0].end_site_names, head.end_site_names);
  raw.roots[0].end_site_names = {"one"};
  EXPECT_FALSE(SkeletonBuilder().Build(raw, &error)) << "names must match the end sites";

  Clip clip(2, skeleton->num_channels(), 0.1);
  GltfOptions options;
  options.binary = false;
  const std::string gltf_text =
      FormatGltf(*skeleton, std::span<const Clip>(&clip, 1), options, "named.gltf");
  const nlohmann::json gltf = nlohmann::json::parse(gltf_text);
  std::vector<std::string> nodes;
  for (const auto& node : gltf["nodes"]) nodes.push_back(node.value("name", ""));
  EXPECT_NE(std::ranges::find(nodes, "Bip01 HeadNub"), nodes.end());
  EXPECT_NE(std::ranges::find(nodes, "Bip01 Head_end"), nodes.end()) << "the unnamed one";

  const testing::TempDir dir;
  const std::string fbx = dir.file("named.fbx");
  SaveClip(*skeleton, clip, fbx);
  std::ifstream in(fbx, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("Bip01 HeadNub"), std::string::npos) << "the FBX model's name";

  const std::vector<std::string> bvh = SkeletonDroppedBy("out.bvh", *skeleton, {});
  ASSERT_EQ(bvh.size(), 1u);
  EXPECT_NE(bvh[0].find("Bip01 HeadNub"), std::string::npos) << bvh[0];
  EXPECT_NE(bvh[0].find("no names"), std::string::npos) << bvh[0];
  EXPECT_TRUE(SkeletonDroppedBy("out.glb", *skeleton, {}).empty());
  EXPECT_TRUE(SkeletonDroppedBy("out.fbx", *skeleton, {}).empty());
}

}  // namespace
}  // namespace rigel

namespace rigel {
namespace {

// glTF has no segment scale compensation: a kCompensate joint under a uniformly scaled parent is
// written with the parent's scale divided out of its own, which glTF's inheritance then puts back:
// read back, every joint is where the original puts it on every frame. Under a non-uniform
// parent scale the writer cannot do that and UncompensatedJoints names the joint.
TEST(GltfWriter, CompensatingJointsUnderAUniformScaleAreExact) {
  using C = ChannelType;
  for (const bool uniform : {true, false}) {
    RawSkeleton raw;
    RawSkeleton::Joint root, arm, hand;
    root.name = "root";
    root.channels = {C::kZrotation, C::kXscale, C::kYscale, C::kZscale};
    arm.name = "arm";
    arm.rest_translation = {0, 1, 0};
    arm.channels = {C::kZrotation, C::kXrotation};
    arm.scale_inheritance = ScaleInheritance::kCompensate;
    hand.name = "hand";
    hand.rest_translation = {0.3, 1, 0};
    hand.channels = {C::kXrotation};
    hand.end_sites = {{0, 0.5, 0}};
    arm.children.push_back(hand);
    root.children.push_back(arm);
    raw.roots.push_back(root);
    std::string error;
    const auto skeleton = SkeletonBuilder().Build(raw, &error);
    ASSERT_TRUE(skeleton) << error;
    Clip clip(4, skeleton->num_channels(), 1.0 / 30);
    for (int f = 0; f < 4; ++f) {
      const std::span<double> row = clip.frame(f);
      row[0] = 0.2 * f;                      // root Zrot
      row[1] = 0.5 * f;                      // X scale 1 .. 2.5
      row[2] = uniform ? 0.5 * f : 0.1 * f;  // Y
      row[3] = 0.5 * f;                      // Z
      row[4] = 0.3 - 0.1 * f;                // arm Zrot
      row[5] = 0.25 * f;                     // arm Xrot
      row[6] = -0.4 * f;                     // hand Xrot
    }
    const std::vector<std::string> uncompensated =
        UncompensatedJoints(*skeleton, std::span<const Clip>(&clip, 1));
    if (!uniform) {
      EXPECT_EQ(uncompensated, std::vector<std::string>{"arm"});
      continue;
    }
    EXPECT_TRUE(uncompensated.empty());
    const testing::TempDir dir;
    const std::string path = dir.file("compensated.glb");
    SaveClip(*skeleton, clip, path);
    const Scene back = LoadScene(path);
    ASSERT_EQ(back.skeleton->num_joints(), 3);
    // Compared by what the file's frame (axes, root placement) does not change: the distances
    // between the joints and the lengths of each joint's scaled axes.
    std::vector<int> k(3);
    for (int j = 0; j < 3; ++j) {
      k[j] = back.skeleton->FindJoint(skeleton->name(j));
      ASSERT_GE(k[j], 0);
    }
    for (int f = 0; f < 4; ++f) {
      const Pose want = PoseAt(*skeleton, clip, f);
      const Pose got = PoseAt(*back.skeleton, back.clips[0], f);
      for (int a = 0; a < 3; ++a) {
        for (int b = a + 1; b < 3; ++b) {
          const double w = (want.world[a].translation() - want.world[b].translation()).norm();
          const double g = (got.world[k[a]].translation() - got.world[k[b]].translation()).norm();
          EXPECT_NEAR(g, w, 1e-5) << "frame " << f << " " << skeleton->name(a) << " to "
                                  << skeleton->name(b);
        }
        const Eigen::Matrix3d w = want.ScaledWorld(a).linear();
        const Eigen::Matrix3d g = got.ScaledWorld(k[a]).linear();
        for (int axis = 0; axis < 3; ++axis) {
          EXPECT_NEAR(g.col(axis).norm(), w.col(axis).norm(), 1e-5)
              << "frame " << f << " " << skeleton->name(a) << "'s world scale on axis " << axis;
        }
      }
    }
  }
}

}  // namespace
}  // namespace rigel
