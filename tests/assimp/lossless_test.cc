// Nothing lost on the way out (issue 12): every FBX of the corpus converts to BVH with the same
// world joint positions and rotations on every frame (rest orientations folded into the
// channels), rotation curves written to FBX and glTF have no wrap jumps, and glTF is written in
// metres from a BVH of a known or estimated unit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"
#include "core/skeleton_utils.h"
#include "exporters/atomic_file.h"
#include "exporters/bvh_writer.h"
#include "exporters/save_scene.h"
#include "fbx_corpus.h"
#include "importers/bvh_reader.h"
#include "importers/load_scene.h"
#include "test_util.h"
#include "world_compare.h"

namespace rigel {
namespace lossless_test {
namespace {

using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Worst world position (relative to the height) and rotation (radians) differences between two
// skeletons with the same joint names, on every frame.
struct WorldError {
  double position = 0;  // over height
  double rotation = 0;  // radians
};

WorldError CompareWorld(const Skeleton& a, const Clip& ca, const Skeleton& b, const Clip& cb) {
  WorldError e;
  EXPECT_EQ(ca.num_frames(), cb.num_frames());
  // Relative to the height; absolute for a figure without one (a single joint).
  const double h = testing::Height(a, ca);
  const double height = h > 0 ? h : 1.0;
  Pose pa(a), pb(b);
  for (int f = 0; f < std::min(ca.num_frames(), cb.num_frames()); ++f) {
    pa.SetFromRow(a, ca.frame(f));
    pb.SetFromRow(b, cb.frame(f));
    for (int j = 0; j < a.num_joints(); ++j) {
      const int k = b.FindJoint(a.name(j));
      EXPECT_GE(k, 0) << a.name(j);
      if (k < 0) continue;
      e.position = std::max(
          e.position, (pa.world[j].translation() - pb.world[k].translation()).norm() / height);
      const Eigen::AngleAxisd d(pa.world[j].linear().transpose() * pb.world[k].linear());
      e.rotation = std::max(e.rotation, std::abs(d.angle()));
    }
  }
  return e;
}

TEST(FoldRestOrientations, KeepsWorldTransformsAndAddsMissingChannels) {
  // A chain with rest orientations everywhere, one joint without rotation channels and one with
  // a single rotation channel.
  RawSkeleton raw;
  raw.roots.emplace_back();
  RawSkeleton::Joint& root = raw.roots.back();
  root.name = "root";
  root.rest_translation = {0, 1, 0};
  root.rest_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()));
  root.channels = {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition,
                   ChannelType::kZrotation, ChannelType::kYrotation, ChannelType::kXrotation};
  root.children.emplace_back();
  RawSkeleton::Joint& fixed = root.children.back();
  fixed.name = "fixed";
  fixed.rest_translation = {0.3, 0.2, 0};
  fixed.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(-1.1, Eigen::Vector3d::UnitZ()));
  fixed.children.emplace_back();
  RawSkeleton::Joint& hinge = fixed.children.back();
  hinge.name = "hinge";
  hinge.rest_translation = {0, 0.5, 0.1};
  hinge.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(2.5, Eigen::Vector3d::UnitY()));
  hinge.channels = {ChannelType::kXrotation};
  hinge.end_sites.push_back({0, 0.4, 0});
  std::string error;
  const std::unique_ptr<Skeleton> skeleton = SkeletonBuilder().Build(raw, &error);
  ASSERT_TRUE(skeleton) << error;
  Clip clip(50, skeleton->num_channels(), 0.04);
  for (int f = 0; f < 50; ++f) {
    const double t = f * 0.2;
    const double values[] = {
        t, 0.1 * std::sin(t), -t, 3 * t, std::cos(t), 1.5 * std::sin(2 * t), 4 * std::sin(t)};
    for (int c = 0; c < 7; ++c) clip.at(f, c) = values[c];
  }
  std::unique_ptr<Skeleton> folded;
  Clip folded_clip;
  FoldRestOrientations(*skeleton, clip, &folded, &folded_clip);
  EXPECT_FALSE(HasRestOrientations(*folded));
  EXPECT_EQ(folded->channel_count(0), 6);
  EXPECT_EQ(folded->channel_count(1), 3);  // fixed joint: the root's order, ZYX
  EXPECT_EQ(folded->rotation_order(1), EulerOrder::kZYX);
  EXPECT_EQ(folded->rotation_order(2), EulerOrder::kXYZ);  // X it had, then Y, Z
  const WorldError e = CompareWorld(*skeleton, clip, *folded, folded_clip);
  EXPECT_LE(e.position, 1e-12);
  EXPECT_LE(e.rotation, 1e-12);
  // End site world positions too.
  Pose pa(*skeleton), pb(*folded);
  pa.SetFromRow(*skeleton, clip.frame(17));
  pb.SetFromRow(*folded, folded_clip.frame(17));
  EXPECT_LE(
      (EndSitePosition(*skeleton, pa.world, 0) - EndSitePosition(*folded, pb.world, 0)).norm(),
      1e-12);
  // Continuous curves: consecutive keys never differ by more than 180 degrees.
  for (int f = 1; f < 50; ++f) {
    for (int c = 0; c < folded->num_channels(); ++c) {
      if (IsRotation(folded->channels()[c])) {
        EXPECT_LE(std::abs(folded_clip.at(f, c) - folded_clip.at(f - 1, c)), kPi) << f << " " << c;
      }
    }
  }
}

// Every FBX of the corpus, every take: written to BVH and read back, the same world positions and
// rotations on every frame (1e-6 of the height, 1e-6 rad).
TEST(FbxToBvh, EveryFbxOfTheCorpusEveryTake) {
  RIGEL_REQUIRE_SHARED_DATA();
  TempDir dir;
  int files = 0;
  double worst_position = 0, worst_rotation = 0;
  const std::vector<std::string> readable = testing::ReadableCorpusFbx();
  for (const std::string& path : readable) {
    SCOPED_TRACE(path);
    const Scene scene = LoadScene(path);
    for (std::size_t c = 0; c < scene.clips.size(); ++c) {
      const std::string out = dir.file(fmt::format("take{}.bvh", c));
      ASSERT_NO_THROW(WriteBvh(*scene.skeleton, scene.clips[c], out));
      BvhReadOptions options;
      options.translation = BvhTranslation::kAdd;  // rigel writes deltas for FBX sources
      const Scene back = ReadBvh(out, options);
      const WorldError e =
          CompareWorld(*scene.skeleton, scene.clips[c], *back.skeleton, back.clips[0]);
      EXPECT_LE(e.position, 1e-6);
      EXPECT_LE(e.rotation, 1e-6);
      worst_position = std::max(worst_position, e.position);
      worst_rotation = std::max(worst_rotation, e.rotation);
      // The automatic reading agrees with the writer's convention.
      const Scene automatic = ReadBvh(out);
      const WorldError ea =
          CompareWorld(*scene.skeleton, scene.clips[c], *automatic.skeleton, automatic.clips[0]);
      EXPECT_LE(ea.position, 1e-6);
    }
    ++files;
  }
  EXPECT_EQ(files, static_cast<int>(readable.size()));
  EXPECT_GE(files, 5);
  fmt::print("FBX->BVH: {} files, worst world position {:.3g} of the height, rotation {:.3g} rad\n",
             files, worst_position, worst_rotation);
}

// --- reading back the curves rigel wrote ---

// A node of an uncompressed binary FBX 7.4 (as rigel writes it): name, properties, children.
struct FbxNode {
  std::string name;
  std::vector<std::int64_t> ids;     // 'L' properties
  std::vector<std::string> strings;  // 'S' properties
  std::vector<float> floats;         // an 'f' array
  std::vector<FbxNode> children;
};

bool ParseFbxNode(const std::string& d, std::size_t* pos, FbxNode* node) {
  auto u32 = [&](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, d.data() + at, 4);
    return v;
  };
  const std::uint32_t end = u32(*pos);
  const std::uint32_t count = u32(*pos + 4);
  if (end == 0) {
    *pos += 13;
    return false;
  }
  const unsigned name_len = static_cast<unsigned char>(d[*pos + 12]);
  node->name = d.substr(*pos + 13, name_len);
  std::size_t p = *pos + 13 + name_len;
  for (std::uint32_t i = 0; i < count; ++i) {
    const char code = d[p++];
    switch (code) {
      case 'I':
        p += 4;
        break;
      case 'L': {
        std::int64_t v;
        std::memcpy(&v, d.data() + p, 8);
        node->ids.push_back(v);
        p += 8;
        break;
      }
      case 'D':
        p += 8;
        break;
      case 'C':
        p += 1;
        break;
      case 'S':
      case 'R': {
        const std::uint32_t n = u32(p);
        if (code == 'S') node->strings.push_back(d.substr(p + 4, n));
        p += 4 + n;
        break;
      }
      default: {  // arrays: count, encoding (0), byte length, data
        const std::uint32_t n = u32(p), bytes = u32(p + 8);
        if (code == 'f') {
          node->floats.resize(n);
          std::memcpy(node->floats.data(), d.data() + p + 12, bytes);
        }
        p += 12 + bytes;
      }
    }
  }
  while (p < end) {
    FbxNode child;
    if (ParseFbxNode(d, &p, &child)) node->children.push_back(std::move(child));
  }
  *pos = end;
  return true;
}

// Number of consecutive keys more than 180 degrees apart on the rotation curves of an FBX file.
int FbxRotationJumps(const std::string& path, int* curves) {
  const std::string d = ReadAll(path);
  std::vector<FbxNode> top;
  for (std::size_t p = 27; p + 13 < d.size();) {
    FbxNode n;
    if (!ParseFbxNode(d, &p, &n)) break;
    top.push_back(std::move(n));
  }
  std::map<std::int64_t, bool> rotation_node;  // curve node id -> is "R"
  std::map<std::int64_t, const FbxNode*> curve;
  std::map<std::int64_t, std::int64_t> parent;
  for (const FbxNode& t : top) {
    for (const FbxNode& o : t.children) {
      if (t.name == "Objects" && o.name == "AnimationCurveNode" && !o.ids.empty()) {
        rotation_node[o.ids[0]] = !o.strings.empty() && o.strings[0].size() > 1 &&
                                  o.strings[0][0] == 'R' && o.strings[0][1] == '\0';
      }
      if (t.name == "Objects" && o.name == "AnimationCurve" && !o.ids.empty()) curve[o.ids[0]] = &o;
      if (t.name == "Connections" && o.name == "C" && o.ids.size() >= 2)
        parent[o.ids[0]] = o.ids[1];
    }
  }
  int jumps = 0;
  *curves = 0;
  for (const auto& [id, node] : curve) {
    const auto p = parent.find(id);
    if (p == parent.end() || !rotation_node[p->second]) continue;
    ++*curves;
    for (const FbxNode& c : node->children) {
      if (c.name != "KeyValueFloat") continue;
      for (std::size_t k = 1; k < c.floats.size(); ++k) {
        jumps += std::abs(c.floats[k] - c.floats[k - 1]) > 180.0f;
      }
    }
  }
  return jumps;
}

// Number of consecutive rotation keys of a .glb whose quaternions are more than 180 degrees of
// rotation apart along the interpolation path (dot product < 0), and the glTF node translation of
// joint `joint` (for the unit test below).
int GlbRotationJumps(const std::string& path, int* tracks) {
  const std::string d = ReadAll(path);
  std::uint32_t json_len;
  std::memcpy(&json_len, d.data() + 12, 4);
  const nlohmann::json j = nlohmann::json::parse(d.substr(20, json_len));
  const std::size_t bin = 20 + json_len + 8;
  int jumps = 0;
  *tracks = 0;
  for (const auto& anim : j["animations"]) {
    for (const auto& ch : anim["channels"]) {
      if (ch["target"]["path"] != "rotation") continue;
      ++*tracks;
      const auto& acc =
          j["accessors"][anim["samplers"][ch["sampler"].get<int>()]["output"].get<int>()];
      const auto& view = j["bufferViews"][acc["bufferView"].get<int>()];
      const std::size_t start = bin + view.value("byteOffset", 0) + acc.value("byteOffset", 0);
      const int count = acc["count"];
      std::vector<float> q(4 * count);
      std::memcpy(q.data(), d.data() + start, q.size() * 4);
      for (int k = 1; k < count; ++k) {
        float dot = 0;
        for (int i = 0; i < 4; ++i) dot += q[4 * k + i] * q[4 * (k - 1) + i];
        jumps += dot < 0;
      }
    }
  }
  return jumps;
}

// Every BVH and FBX of the corpus written to FBX and glb: no rotation key jumps by more than 180
// degrees from the one before.
TEST(ContinuousCurves, NoWrapJumpsInAnyFbxOrGlbWrittenFromTheCorpus) {
  RIGEL_REQUIRE_SHARED_DATA();
  TempDir dir;
  std::vector<std::string> inputs = testing::SharedFiles(".bvh");
  for (const std::string& f : testing::ReadableCorpusFbx()) inputs.push_back(f);
  int fbx_curves = 0, glb_tracks = 0;
  for (const std::string& path : inputs) {
    SCOPED_TRACE(path);
    const Scene scene = LoadScene(path);
    SaveScene(scene, dir.file("out.fbx"));
    SaveScene(scene, dir.file("out.glb"));
    int curves = 0, tracks = 0;
    EXPECT_EQ(FbxRotationJumps(dir.file("out.fbx"), &curves), 0);
    EXPECT_EQ(GlbRotationJumps(dir.file("out.glb"), &tracks), 0);
    EXPECT_GT(curves, 0);
    EXPECT_GT(tracks, 0);
    fbx_curves += curves;
    glb_tracks += tracks;
  }
  fmt::print("{} files: {} FBX rotation curves, {} glTF rotation tracks checked\n", inputs.size(),
             fbx_curves, glb_tracks);
}

// BVH -> FBX keeps the file's angles where they are continuous: the first key is the file's own.
TEST(ContinuousCurves, BvhHipTurningThroughPlusMinus180) {
  const std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition "
      "Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 10 0\n}\n}\nMOTION\nFrames: 4\n"
      "Frame Time: 0.1\n0 90 0 0 0 170\n0 90 0 0 0 179\n0 90 0 0 0 -178\n0 90 0 0 0 -170\n";
  TempDir dir;
  const Scene scene = ParseBvh(text, "turn.bvh");
  // Converting BVH to BVH keeps the values exactly (no unwrapping).
  EXPECT_NE(FormatBvh(*scene.skeleton, scene.clips[0]).find("0 90 0 0 0 -178\n"),
            std::string::npos);
  SaveScene(scene, dir.file("turn.fbx"));
  int curves = 0;
  EXPECT_EQ(FbxRotationJumps(dir.file("turn.fbx"), &curves), 0);
  EXPECT_EQ(curves, 3);
}

// A BVH figure of known height in centimetres comes out of glTF in metres.
TEST(Units, BvhInCentimetresBecomesMetresInGltf) {
  // Hips OFFSET (0, 90, 0) + Head (0, 160, 0): 160 cm from hips to head, a 160 unit tall figure
  // (nearest 1.6 m in cm, so the estimate is cm too).
  const std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 90 0\nCHANNELS 6 Xposition Yposition Zposition "
      "Zrotation Xrotation Yrotation\nJOINT Head\n{\nOFFSET 0 160 0\nCHANNELS 3 Zrotation "
      "Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 10 0\n}\n}\n}\nMOTION\nFrames: 2\n"
      "Frame Time: 0.1\n0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 5\n";
  TempDir dir;
  const std::string bvh = dir.file("fig.bvh");
  WriteFileAtomically(bvh, text);
  for (const char* unit : {"cm", ""}) {
    SCOPED_TRACE(unit);
    LoadOptions options;
    if (*unit) options.bvh.unit_metres = *ParseBvhUnit(unit);
    const Scene scene = LoadScene(bvh, options);
    SaveScene(scene, dir.file("fig.glb"));
    const std::string d = ReadAll(dir.file("fig.glb"));
    std::uint32_t json_len;
    std::memcpy(&json_len, d.data() + 12, 4);
    const nlohmann::json j = nlohmann::json::parse(d.substr(20, json_len));
    bool found = false;
    for (const auto& node : j["nodes"]) {
      if (node.value("name", "") != "Head") continue;
      found = true;
      EXPECT_NEAR(node["translation"][1].get<double>(), 1.6, 1e-9);
    }
    EXPECT_TRUE(found);
    const Scene back = LoadScene(dir.file("fig.glb"));
    EXPECT_NEAR(back.skeleton->rest_translation(back.skeleton->FindJoint("Head")).y(), 1.6, 1e-6);
    // FBX states centimetres per unit through UnitScaleFactor (written in metres: 100).
    SaveScene(scene, dir.file("fig.fbx"));
    const Scene fbx = LoadScene(dir.file("fig.fbx"));
    EXPECT_DOUBLE_EQ(fbx.file_unit_metres, 1.0);
    EXPECT_NEAR(fbx.skeleton->rest_translation(fbx.skeleton->FindJoint("Head")).y(), 1.6, 1e-6);
  }
}

}  // namespace
}  // namespace lossless_test
}  // namespace rigel
