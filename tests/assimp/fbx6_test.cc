// FBX 6.x files, read through their FBX 7.4 upgrade (importers/fbx_upgrade.h), checked against
// what does not go through it: the same scene saved as FBX 7.x (read by Assimp directly), and the
// 6.x keys and rest properties read here by a minimal reader of the test's own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "core/pose.h"
#include "importers/fbx_tree.h"
#include "importers/fbx_upgrade.h"
#include "importers/import_error.h"
#include "importers/load_scene.h"
#include "test_util.h"
#include "world_compare.h"

namespace rigel {
namespace {

using testing::SharedData;

const Clip* FindClip(const Scene& s, const std::string& name) {
  for (const Clip& c : s.clips) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// The same scene saved by Maya as FBX 6.1 and as FBX 7.x: every joint's world position on every
// frame agrees within 1e-5 of the figure's height.
TEST(Fbx6, TwinsOfOtherVersionsAgreeOnEveryFrame) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Twin {
    const char* old_file;
    const char* new_file;
    const char* take;  // of the new file ("" = its first)
  };
  for (const Twin& t :
       {Twin{"ufbx/maya_game_sausage_6100_binary_spin.fbx",
             "ufbx/maya_game_sausage_7500_ascii_combined.fbx", "spin"},
        Twin{"ufbx/maya_game_sausage_6100_binary_spin.fbx",
             "wild/ufbx_ufbx/maya_game_sausage_7500_binary_combined.fbx", "spin"}}) {
    SCOPED_TRACE(t.old_file);
    const Scene a = LoadScene(SharedData() + "/" + t.old_file);
    const Scene b = LoadScene(SharedData() + "/" + t.new_file);
    ASSERT_EQ(a.clips.size(), 1u);
    const Clip* cb = FindClip(b, t.take);
    ASSERT_NE(cb, nullptr);
    EXPECT_EQ(a.clips[0].name(), t.take);
    EXPECT_EQ(a.clips[0].num_frames(), cb->num_frames());
    EXPECT_NEAR(a.clips[0].frame_time(), cb->frame_time(), 1e-12);
    EXPECT_EQ(a.skeleton->num_joints(), b.skeleton->num_joints());
    int shared = 0;
    const double height = testing::Height(*b.skeleton, *cb);
    const double diff =
        testing::MaxWorldDifference(*a.skeleton, a.clips[0], *b.skeleton, *cb, 1.0, &shared);
    EXPECT_EQ(shared, b.skeleton->num_joints());
    ASSERT_GT(height, 0);
    EXPECT_LT(diff / height, 1e-5)
        << "max world difference " << diff << " (height " << height << ")";
    std::printf("%s vs %s: max world difference %.3g (%.3g of the height %.4g)\n", t.old_file,
                t.new_file, diff, diff / height, height);
  }
}

// A hand-written FBX 6.1 file (the fbx_scan fuzzer's seed): its keys, evaluated by hand, on frames
// between keys. Hips: T.X linear 0 -> 10 over frames 0-10, T.Y constant 10 then 12 from frame 5.
// Arm: R.Z user-flat 0 at frame 0, automatic 60 at frame 5 (slope of the chord: 90 / (1/3 s) =
// 270 deg/s, within the clamp), user-flat 90 at frame 10. Cubic Bezier, handles a third in:
// frame 2 (x = 0.4 of 0..5): 3 (0.6) 0.4^2 (60 - 270/18) + 0.4^3 60 = 16.8;
// frame 7 (x = 0.4 of 5..10): 0.6^3 60 + 3 0.6^2 0.4 (60 + 15) + 3 0.6 0.4^2 90 + 0.4^3 90 = 77.04.
TEST(Fbx6, HandWrittenKeysAsEvaluatedByHand) {
  const std::string path =
      std::string(RIGEL_SOURCE_DIR) + "/tests/fuzz/seeds/fbx_scan/two_joints_6100_ascii.fbx";
  const Scene s = LoadScene(path);
  ASSERT_EQ(s.clips.size(), 1u);
  const Clip& clip = s.clips[0];
  EXPECT_EQ(clip.name(), "wave");
  EXPECT_EQ(clip.num_frames(), 11);
  EXPECT_NEAR(clip.frame_rate(), 30.0, 1e-9);
  const int hips = s.skeleton->FindJoint("Hips"), arm = s.skeleton->FindJoint("Arm");
  ASSERT_GE(hips, 0);
  ASSERT_GE(arm, 0);
  auto world = [&](int f) {
    Pose pose(*s.skeleton);
    pose.SetFromRow(*s.skeleton, clip.frame(f));
    return pose.world;
  };
  for (int f = 0; f <= 10; ++f) {
    const auto w = world(f);
    EXPECT_NEAR(w[hips].translation().x(), f, 1e-5) << f;
    EXPECT_NEAR(w[hips].translation().y(), f < 5 ? 10.0 : 12.0, 1e-5) << f;
    EXPECT_NEAR((w[arm].translation() - w[hips].translation()).x(), 5.0, 1e-5) << f;
  }
  auto arm_z = [&](int f) {
    // A matrix, not an expression: the poses of world(f) end with this statement.
    const Eigen::Matrix3d m = world(f)[arm].rotation();
    return std::atan2(m(1, 0), m(0, 0)) * 180.0 / std::numbers::pi;
  };
  EXPECT_NEAR(arm_z(0), 0.0, 1e-4);
  EXPECT_NEAR(arm_z(2), 16.8, 1e-3);
  EXPECT_NEAR(arm_z(5), 60.0, 1e-4);
  EXPECT_NEAR(arm_z(7), 77.04, 1e-3);
  EXPECT_NEAR(arm_z(10), 90.0, 1e-4);
  // The Visibility keys are not carried, and the warning says so, naming the file.
  bool said = false;
  for (const std::string& w : s.warnings) {
    said |= w.find(path) != std::string::npos &&
            w.find("1 animated 'Visibility' channel(s)") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// FBX 6.x blend shapes (Shape records of the mesh, animated by take channels of their names) read
// as morph targets whose weights follow the keys: TopH keyed 100, 0, 100 on frames 1, 24 and 60,
// TopV on frames 1, 40 and 90 (flat user tangents; the take starts on frame 1, the clip's frame
// 0). Between two flat keys the Bezier passes their mean halfway: TopV at frame 65 is 0.5.
// Its FBX 7.1 twin holds the shapes in 7.1's legacy layout, which is refused.
TEST(Fbx6, BlendShapeWeightsFollowTheirKeys) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene s = LoadScene(SharedData() + "/ufbx/maya_blend_shape_cube_6100_ascii.fbx");
  ASSERT_EQ(s.clips.size(), 1u);
  const Clip& clip = s.clips[0];
  ASSERT_EQ(clip.num_weights(), 2);
  int top_h = -1, top_v = -1;
  for (int w = 0; w < clip.num_weights(); ++w) {
    if (clip.weight_channels()[w].target == "TopH") top_h = w;
    if (clip.weight_channels()[w].target == "TopV") top_v = w;
  }
  ASSERT_GE(top_h, 0);
  ASSERT_GE(top_v, 0);
  struct Key {
    int weight, file_frame;
    double value;
  };
  for (const Key& k :
       {Key{top_h, 1, 1.0}, Key{top_h, 24, 0.0}, Key{top_h, 60, 1.0}, Key{top_v, 1, 1.0},
        Key{top_v, 40, 0.0}, Key{top_v, 90, 1.0}, Key{top_v, 65, 0.5}}) {
    EXPECT_NEAR(clip.weights(k.file_frame - 1)[k.weight], k.value, 1e-5)
        << clip.weight_channels()[k.weight].target << " frame " << k.file_frame;
  }
}

// What the upgrade refuses, it refuses saying why; the reader names the version.
TEST(Fbx6, MalformedAndFlatFilesRefusedWithTheReason) {
  std::string why;
  EXPECT_FALSE(UpgradeFbx6("; FBX 6.1.0 project file\nObjects:  {\n", &why));
  EXPECT_NE(why.find("malformed"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(UpgradeFbx6(
      "FBXHeaderExtension:  {\n FBXVersion: 5800\n}\nModel: \"Model::A\" {\n}\n", &why));
  EXPECT_NE(why.find("no Objects and Connections sections"), std::string::npos) << why;
  const std::string seed = rigel::testing::FileBytes(
      std::string(RIGEL_SOURCE_DIR) + "/tests/fuzz/seeds/fbx_scan/two_joints_6100_ascii.fbx");
  const std::size_t key = seed.find("Key: 0,0,U,s,0,0,n");
  ASSERT_NE(key, std::string::npos);
  std::string bad = seed;
  bad.replace(key, 18, "Key: 0,0,U,x,0,0,n");  // an unknown slope mode
  why.clear();
  EXPECT_FALSE(UpgradeFbx6(bad, &why));
  EXPECT_NE(why.find("take 'wave', model 'Arm': the keys of channel R|Z are malformed"),
            std::string::npos)
      << why;
}

// ---- A minimal reader of FBX 6.x binary files, the test's own (it shares nothing with
// importers/fbx_tree): records with 32-bit offsets, scalar values, arrays skipped.
struct TNode {
  std::string name;
  std::vector<std::string> strings;             // S and C values, in order
  std::vector<double> numbers;                  // I, L, D, F, Y values, in order
  std::vector<std::pair<char, double>> values;  // every value: type ('S' as 0), number
  std::vector<TNode> children;
  const TNode* Child(const std::string& n) const {
    for (const TNode& c : children) {
      if (c.name == n) return &c;
    }
    return nullptr;
  }
};

// The children of `n`, none when it is null (a reference: no copy).
const std::vector<TNode>& Kids(const TNode* n) {
  static const std::vector<TNode> kNone;
  return n ? n->children : kNone;
}

template <typename T>
T At(const std::string& d, std::size_t p) {
  T v{};
  if (p + sizeof(T) <= d.size()) std::memcpy(&v, d.data() + p, sizeof(T));
  return v;
}

void ReadRecords(const std::string& d, std::size_t at, std::size_t end, std::vector<TNode>* out) {
  while (at + 13 <= end) {
    const auto next = At<std::uint32_t>(d, at), count = At<std::uint32_t>(d, at + 4),
               len = At<std::uint32_t>(d, at + 8);
    if (next == 0 || next > end || next <= at) return;
    TNode n;
    const std::size_t name_len = static_cast<unsigned char>(d[at + 12]);
    n.name = d.substr(at + 13, name_len);
    std::size_t p = at + 13 + name_len;
    const std::size_t props_end = p + len;
    for (std::uint32_t k = 0; k < count && p < props_end; ++k) {
      const char t = d[p++];
      double x = 0;
      if (t == 'S' || t == 'R') {
        const auto l = At<std::uint32_t>(d, p);
        if (t == 'S') n.strings.push_back(d.substr(p + 4, l));
        n.values.push_back({'S', 0});
        p += 4 + l;
        continue;
      }
      if (t == 'C') {
        n.strings.push_back(std::string(1, d[p]));
        n.values.push_back({'C', static_cast<double>(d[p])});
        p += 1;
        continue;
      }
      if (t == 'f' || t == 'd' || t == 'i' || t == 'l' || t == 'b') {
        p += 12 + At<std::uint32_t>(d, p + 8);
        continue;
      }
      if (t == 'I') x = At<std::int32_t>(d, p), p += 4;
      if (t == 'Y') x = At<std::int16_t>(d, p), p += 2;
      if (t == 'F') x = At<float>(d, p), p += 4;
      if (t == 'D') x = At<double>(d, p), p += 8;
      if (t == 'L') x = static_cast<double>(At<std::int64_t>(d, p)), p += 8;
      n.numbers.push_back(x);
      n.values.push_back({t, x});
    }
    if (props_end < next) ReadRecords(d, props_end, next, &n.children);
    out->push_back(std::move(n));
    at = next;
  }
}

std::string ModelOf(const std::string& binary_name) {
  return binary_name.substr(0, binary_name.find('\0'));
}

// The keys (time in ticks, value) of a 6.x Key record: after each key's time, value and mode, the
// mode's data ('C': a character; 'L': none; 'U': a slope mode 's'/'b' with two slopes or 'a'
// without, then a weight mode 'n', or 'a' with two weights, or 'r'/'l' with one).
std::vector<std::pair<std::int64_t, double>> TestKeys(const TNode& key) {
  std::vector<std::pair<std::int64_t, double>> out;
  const auto& v = key.values;
  std::size_t i = 0;
  auto chr = [&]() { return i < v.size() ? static_cast<char>(v[i++].second) : '\0'; };
  while (i + 2 < v.size()) {
    out.push_back({static_cast<std::int64_t>(v[i].second), v[i + 1].second});
    i += 2;
    const char mode = chr();
    if (mode == 'C') chr();
    if (mode != 'U') continue;
    const char slope = chr();
    if (slope == 's' || slope == 'b') i += 2;
    const char weight = chr();
    if (weight == 'a') i += 2;
    if (weight == 'r' || weight == 'l') i += 1;
  }
  return out;
}

Eigen::Quaterniond EulerXyz(const Eigen::Vector3d& deg) {
  const Eigen::Vector3d r = deg * std::numbers::pi / 180.0;
  return Eigen::AngleAxisd(r.z(), Eigen::Vector3d::UnitZ()) *
         Eigen::AngleAxisd(r.y(), Eigen::Vector3d::UnitY()) *
         Eigen::AngleAxisd(r.x(), Eigen::Vector3d::UnitX());
}

// A model's Properties60 vector (or `fallback`).
Eigen::Vector3d Prop(const TNode& model, const std::string& name, Eigen::Vector3d fallback) {
  const TNode* p60 = model.Child("Properties60");
  for (const TNode& p : Kids(p60)) {
    if (!p.strings.empty() && p.strings[0] == name && p.numbers.size() >= 3) {
      return {p.numbers[0], p.numbers[1], p.numbers[2]};
    }
  }
  return fallback;
}

// What the test reads of a 6.x binary file: its models, their parents and its first take.
struct FileFacts {
  explicit FileFacts(const std::string& bytes) {
    ReadRecords(bytes, 27, bytes.size(), &top);
    for (const TNode& t : top) {
      for (const TNode& o : t.children) {
        if (t.name == "Objects" && o.name == "Model") models[ModelOf(o.strings[0])] = &o;
        if (t.name == "Connections" && o.strings.size() >= 3 && o.strings[0] == "OO" &&
            o.strings[2].ends_with("Model")) {
          parent_of[ModelOf(o.strings[1])] = ModelOf(o.strings[2]);
        }
        if (t.name == "Takes" && o.name == "Take" && take == nullptr) take = &o;
      }
    }
  }
  std::vector<TNode> top;
  std::map<std::string, const TNode*> models;
  std::map<std::string, std::string> parent_of;
  const TNode* take = nullptr;
};

// The keys of `model` in `take`, by channel ("TX", "RZ", ...); `scaled` when a scale key is not 1.
std::map<std::string, std::vector<std::pair<std::int64_t, double>>> ModelKeys(
    const TNode* take, const std::string& model, bool* scaled) {
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> keys;
  for (const TNode& tm : Kids(take)) {
    if (tm.name != "Model" || ModelOf(tm.strings[0]) != model) continue;
    for (const TNode& trs : Kids(tm.Child("Channel"))) {
      for (const TNode& axis : trs.children) {
        if (axis.name != "Channel" || axis.Child("Key") == nullptr) continue;
        const auto& k = keys[trs.strings[0] + axis.strings[0]] = TestKeys(*axis.Child("Key"));
        for (const auto& [t, v] : k) *scaled |= trs.strings[0] == "S" && std::abs(v - 1) > 1e-6;
      }
    }
  }
  return keys;
}

// Files without a 7.x twin: every joint's local transform, read by rigel (parent world inverse
// times world), against the file's own numbers read by the reader above: on every frame that
// holds a key, the keyed translation and rotation (pre-rotation times the XYZ Euler angles), and
// on a file without takes the Properties60 rest transform. Joints with pivots, offsets, a rotation
// order other than XYZ or a scale other than 1 are left to the twin test (their composition is
// not what this checks).
TEST(Fbx6, LocalTransformsMatchTheFilesKeysAndProperties) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    int compared_joints;  // at least
    int checks;           // (joint, frame) pairs compared, at least
  };
  for (const Case& c : {Case{"ufbx/max_transformed_skin_6100_binary.fbx", 5, 8},
                        Case{"ufbx/max2009_blob_6100_binary.fbx", 1, 2},
                        Case{"ufbx/maya_character_6100_binary.fbx", 63, 63},
                        Case{"ufbx/maya_advanced_skinned_pivot_6100_binary.fbx", 3, 3}}) {
    SCOPED_TRACE(c.file);
    const std::string bytes = rigel::testing::FileBytes(SharedData() + "/" + c.file);
    const FileFacts facts(bytes);
    const auto& models = facts.models;
    const TNode* take = facts.take;
    std::map<std::string, std::string> parent_of = facts.parent_of;
    const Scene s = LoadScene(SharedData() + "/" + c.file);
    const Skeleton& sk = *s.skeleton;
    const Clip& clip = s.clips[0];
    const double height = std::max(testing::Height(sk, clip), 1e-9);
    const auto frame_ticks =
        static_cast<std::int64_t>(std::llround(46186158000.0 * clip.frame_time()));
    const std::int64_t start =
        take ? static_cast<std::int64_t>(take->Child("LocalTime")->numbers[0]) : 0;
    int compared = 0, checks = 0;
    for (int j = 0; j < sk.num_joints(); ++j) {
      const auto m = models.find(sk.name(j));
      if (m == models.end()) continue;
      const TNode& model = *m->second;
      const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
      bool plain =
          Prop(model, "Lcl Scaling", Eigen::Vector3d::Ones()).isApprox(Eigen::Vector3d::Ones());
      for (const char* p :
           {"RotationOffset", "RotationPivot", "ScalingOffset", "ScalingPivot", "PostRotation"}) {
        plain = plain && Prop(model, p, zero).norm() == 0;
      }
      const int parent = sk.parent(j);
      const std::string file_parent = parent_of[sk.name(j)];
      if (!plain || (parent >= 0 ? sk.name(parent) != file_parent : models.count(file_parent))) {
        continue;
      }
      bool scaled = false;
      const auto keys = ModelKeys(take, sk.name(j), &scaled);
      if (scaled) continue;
      const Eigen::Vector3d rest_t = Prop(model, "Lcl Translation", zero);
      const Eigen::Vector3d rest_r = Prop(model, "Lcl Rotation", zero);
      const Eigen::Quaterniond pre = EulerXyz(Prop(model, "PreRotation", zero));
      // The frames to check: every frame holding a key of this model (frame 0 when none).
      std::set<int> frames{0};
      for (const auto& [name, ks] : keys) {
        for (const auto& [t, v] : ks) {
          if ((t - start) % frame_ticks == 0 && t >= start)
            frames.insert(static_cast<int>((t - start) / frame_ticks));
        }
      }
      for (const int f : frames) {
        if (f >= clip.num_frames()) continue;
        const std::int64_t t = start + f * frame_ticks;
        Eigen::Vector3d tr = rest_t, rot = rest_r;
        bool known = true;
        for (int a = 0; a < 3; ++a) {
          for (const char ch : {'T', 'R'}) {
            const auto k = keys.find(std::string(1, ch) + "XYZ"[a]);
            if (k == keys.end()) continue;
            bool found = false;
            for (const auto& [kt, kv] : k->second) {
              if (kt == t) (ch == 'T' ? tr : rot)[a] = kv, found = true;
            }
            known = known && found;
          }
        }
        if (!known) continue;
        Pose pose(sk);
        pose.SetFromRow(sk, clip.frame(f));
        const Eigen::Isometry3d local =
            parent >= 0 ? pose.world[parent].inverse() * pose.world[j] : pose.world[j];
        EXPECT_LT((local.translation() - tr).norm() / height, 1e-5) << sk.name(j) << " frame " << f;
        const Eigen::Quaterniond want = pre * EulerXyz(rot);
        EXPECT_LT(Eigen::Quaterniond(local.rotation()).angularDistance(want), 1e-5)
            << sk.name(j) << " frame " << f;
        ++checks;
      }
      ++compared;
    }
    EXPECT_GE(compared, c.compared_joints);
    EXPECT_GE(checks, c.checks);
    std::printf("%s: %d joints, %d (joint, frame) transforms compared\n", c.file, compared, checks);
  }
}

}  // namespace
}  // namespace rigel
