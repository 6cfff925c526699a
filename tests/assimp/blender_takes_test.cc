// Blender cross-check of every FBX in ../shared/data (label "blender", issue 12 item 7): every
// frame of every take of rigel's import (LoadScene, one Clip per AnimationStack) against Blender's
// own FBX importer, one Blender run per file (blender_dump.py "takes" mode). docs/formats.md,
// "Known upstream faults", explains every difference this test allows.
//
// Blender's side: the takes and their spans (LocalStart, LocalStop) and the frame rate are read
// from the file by Blender's FBX parser; take frame f is Blender frame 1 + (start + f / fps) *
// round(fps) (the importer puts FBX time 0 on frame 1 and keys at time * round(fps)). Each joint
// is the pose bone, or else the object, of the same name: the armature object itself (rigel's
// root joint 'Armature', '01_01', 'Hips'), empties ('Bip01 Footsteps') and meshes ('Box001') are
// objects in Blender.
//
// Mapping: Blender is Z-up and in metres: rigel's Y-up (x, y, z) in file units becomes
// unit * (x, -z, y), unit = UnitScaleFactor / 100 (Scene::file_unit_metres). Rotations: a bone's
// world rotation in Blender is the FBX node's global rotation (default bone axes, no automatic
// orientation), so rigel's world rotation maps by the same axis change, with no per-joint offset.
//
// Compared per take: world positions (relative to the figure's height), world rotations, and the
// rotation since the take's first frame ("motion": what is left once a constant per-joint offset,
// a different rest orientation, is taken out).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "blender_util.h"
#include "core/pose.h"
#include "importers/fbx_curves.h"
#include "importers/load_scene.h"
#include "test_util.h"
#include "world_compare.h"

namespace rigel {
namespace blender_takes_test {
namespace {

using testing::TempDir;

// Numbers per bone or object in a row of blender_dump.py's "takes" mode: position, rotation
// (w, x, y, z), scale.
constexpr int kRow = 10;

// Blender's Z-up axes from the file's Y-up axes.
Eigen::Matrix3d YUpToZUp() {
  Eigen::Matrix3d a;
  a << 1, 0, 0, 0, 0, -1, 0, 1, 0;
  return a;
}

// Rotation angle of a proper rotation matrix.
double Angle(const Eigen::Matrix3d& r) {
  return std::acos(std::clamp((r.trace() - 1.0) / 2.0, -1.0, 1.0));
}

// A difference a file is known to have on a joint, with its own bounds (radians).
struct Known {
  std::string joint;
  double rotation;   // world rotation
  double motion;     // rotation since the take's first frame
  std::string take;  // the take it applies to; empty: every take
};

// What one file must meet.
struct Expectation {
  explicit Expectation(std::string f) : file(std::move(f)) {}
  std::string file;                   // under ../shared/data
  double position = 2e-5;             // of the height (or of the path, for one joint)
  double rotation = 1e-4;             // radians, world rotation of every other joint
  double motion = 1e-4;               // radians, rotation since the first frame
  std::vector<Known> known;           // joints with their own bounds
  std::vector<std::string> mirrored;  // joints whose world matrix mirrors (checked by Blender)
};

// Worst differences of one take.
struct TakeResult {
  std::string name;
  int frames = 0;
  double position = 0;  // relative to the reference length
  double rotation = 0;  // radians, joints without their own bounds
  double motion = 0;    // radians, joints without their own bounds
  double mirrored = 0;  // radians, mirrored joints: rotation since the take's first frame
  std::string position_at, rotation_at, motion_at;
  std::vector<double> known_rotation, known_motion;  // per Known entry
};

// Blender's output for one file.
struct BlenderTakes {
  nlohmann::json json;
  double seconds = 0;
};

// `copy`, when given, is read in place of the file (written under the file's name).
BlenderTakes RunBlender(std::string path, const std::string* copy = nullptr) {
  BlenderTakes out;
  TempDir dir;
  if (copy) {
    path = dir.file(std::filesystem::path(path).filename().string());
    std::ofstream(path, std::ios::binary) << *copy;
  }
  const std::string json_path = dir.file("takes.json");
  const std::string cmd =
      fmt::format("blender -b --factory-startup --python '{}' -- '{}' '{}' takes > '{}' 2>&1",
                  RIGEL_BLENDER_SCRIPT, path, json_path, dir.file("blender.log"));
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream in(json_path);
  if (rc != 0 || !in) {
    std::ifstream log(dir.file("blender.log"));
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    ADD_FAILURE() << cmd << " failed (" << rc << "):\n" << text;
    return out;
  }
  out.json = nlohmann::json::parse(in);
  return out;
}

// Compares every frame of every take of `scene` with Blender's. `reference` is the length position
// differences are divided by. Fails the test on structural mismatches (take names, frame counts,
// joints Blender does not have, mirrored joints).
std::vector<TakeResult> CompareTakes(const Expectation& e, const Scene& scene,
                                     const nlohmann::json& blender, double reference) {
  std::vector<TakeResult> out;
  const auto names = blender["names"].get<std::vector<std::string>>();
  const auto mirrored = blender["mirrored"].get<std::vector<std::string>>();
  const Skeleton& skeleton = *scene.skeleton;
  // Per rigel joint: its slot in Blender's rows (the first entry of that name: bones come first),
  // its Known entry (or -1), whether its world matrix mirrors.
  std::vector<int> slot(skeleton.num_joints(), -1);
  std::vector<char> mirror(skeleton.num_joints(), 0);
  std::vector<std::string> mirrored_joints;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const std::string& name = skeleton.name(j);
    const auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end()) slot[j] = static_cast<int>(it - names.begin());
    EXPECT_GE(slot[j], 0) << e.file << ": Blender has no bone or object '" << name << "'";
    if (std::find(mirrored.begin(), mirrored.end(), name) != mirrored.end()) {
      mirror[j] = 1;
      mirrored_joints.push_back(name);
    }
  }
  EXPECT_EQ(mirrored_joints, e.mirrored) << e.file << ": joints whose world matrix mirrors";
  const auto& takes = blender["takes"];
  EXPECT_EQ(takes.size(), scene.clips.size()) << e.file << ": take count";
  const double unit = scene.file_unit_metres;
  const Eigen::Matrix3d axes = YUpToZUp();
  for (std::size_t t = 0; t < std::min(takes.size(), scene.clips.size()); ++t) {
    const Clip& clip = scene.clips[t];
    const auto& take = takes[t];
    TakeResult r;
    r.name = take["name"].get<std::string>();
    r.known_rotation.assign(e.known.size(), 0.0);
    r.known_motion.assign(e.known.size(), 0.0);
    EXPECT_EQ(clip.name(), r.name) << e.file << ": take " << t;
    std::vector<int> known(skeleton.num_joints(), -1);
    for (std::size_t k = 0; k < e.known.size(); ++k) {
      const int j = skeleton.FindJoint(e.known[k].joint);
      EXPECT_GE(j, 0) << e.known[k].joint;
      if (j >= 0 && (e.known[k].take.empty() || e.known[k].take == r.name)) {
        known[j] = static_cast<int>(k);
      }
    }
    const auto& rows = take["pose"];
    r.frames = static_cast<int>(rows.size());
    EXPECT_EQ(clip.num_frames(), r.frames) << e.file << ": frames of take '" << r.name << "'";
    const int frames = std::min(clip.num_frames(), r.frames);
    Pose pose(skeleton);
    // Per joint: both world rotations on the take's first frame.
    std::vector<Eigen::Matrix3d> first_mine(skeleton.num_joints()),
        first_theirs(skeleton.num_joints());
    const char* trace = std::getenv("RIGEL_BLENDER_JOINT");
    for (int f = 0; f < frames; ++f) {
      pose.SetFromRow(skeleton, clip.frame(f));
      const auto row = rows[f].get<std::vector<double>>();
      for (int j = 0; j < skeleton.num_joints(); ++j) {
        if (slot[j] < 0) continue;
        const std::string& name = skeleton.name(j);
        const double* b = row.data() + kRow * slot[j];
        const Eigen::Vector3d expected = unit * (axes * pose.world[j].translation());
        const double d = (Eigen::Vector3d(b[0], b[1], b[2]) - expected).norm() / (unit * reference);
        if (d > r.position) {
          r.position = d;
          r.position_at = fmt::format("'{}' frame {}", name, f);
        }
        const Eigen::Matrix3d mine = axes * pose.world[j].rotation();
        const Eigen::Matrix3d theirs =
            Eigen::Quaterniond(b[3], b[4], b[5], b[6]).normalized().toRotationMatrix();
        if (f == 0) {
          first_mine[j] = mine;
          first_theirs[j] = theirs;
        }
        const double angle = Angle(mine.transpose() * theirs);
        const double motion = Angle((mine * first_mine[j].transpose()).transpose() *
                                    (theirs * first_theirs[j].transpose()));
        if (mirror[j]) {
          // A mirroring matrix has no one rotation: rigel keeps -M / s, Blender another (1.2 to
          // 1.4 rad away); both turn alike.
          r.mirrored = std::max(r.mirrored, motion);
          continue;
        }
        if (trace && name == trace) {
          std::printf("  %s take '%s' frame %d: position %.3g rotation %.3g motion %.3g\n", trace,
                      r.name.c_str(), f, d, angle, motion);
        }
        if (known[j] >= 0) {
          r.known_rotation[known[j]] = std::max(r.known_rotation[known[j]], angle);
          r.known_motion[known[j]] = std::max(r.known_motion[known[j]], motion);
          continue;
        }
        if (angle > r.rotation) {
          r.rotation = angle;
          r.rotation_at = fmt::format("'{}' frame {}", name, f);
        }
        if (motion > r.motion) {
          r.motion = motion;
          r.motion_at = fmt::format("'{}' frame {}", name, f);
        }
      }
    }
    out.push_back(r);
  }
  return out;
}

// Reads e.file with rigel and Blender and checks every frame of every take against `e`.
void ExpectEveryTakeMatches(const Expectation& e) {
  const std::string path = testing::SharedData() + "/" + e.file;
  const Scene scene = LoadScene(path);
  ASSERT_FALSE(scene.clips.empty());
  ASSERT_GT(scene.file_unit_metres, 0);
  // The figure's height; a figure of one joint (an animated mesh node) has none: its path's
  // extent over every frame of every take, then.
  double reference = testing::Height(*scene.skeleton, scene.clips[0]);
  if (scene.skeleton->num_joints() == 1) {
    Eigen::AlignedBox3d box;
    for (const Clip& clip : scene.clips) {
      for (int f = 0; f < clip.num_frames(); ++f) {
        box.extend(testing::WorldPositions(*scene.skeleton, clip, f)[0]);
      }
    }
    reference = box.sizes().maxCoeff();
  }
  ASSERT_GT(reference, 0);
  // Blender 3.4 interpolates every FBX curve linearly between keys; rigel evaluates cubic and
  // stepped curves as keyed (importers/fbx_curves.h, against closed forms in fbx_curves_test.cc).
  // Where a file has curves that differ between keys, Blender reads rigel's copy of it keyed on
  // every frame: the comparison then checks everything else (transform composition, axes, units,
  // takes) against Blender's own importer, frame by frame.
  std::ifstream original(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(original)),
                          std::istreambuf_iterator<char>());
  const std::optional<FbxDensified> keyed = DensifyFbxCurves(bytes);
  if (keyed) {
    std::printf("%s: Blender reads the copy keyed on frames (%d of %d curves, %lld -> %lld keys)\n",
                e.file.c_str(), keyed->densified, keyed->curves,
                static_cast<long long>(keyed->keys_before),
                static_cast<long long>(keyed->keys_after));
  }
  const BlenderTakes blender = RunBlender(path, keyed ? &keyed->bytes : nullptr);
  if (blender.json.is_null()) return;
  const std::vector<TakeResult> results = CompareTakes(e, scene, blender.json, reference);
  ASSERT_EQ(results.size(), scene.clips.size());
  for (const TakeResult& r : results) {
    std::printf(
        "%s take '%s': %d frames; worst position %.3g of the height at %s; rotation %.3g rad at "
        "%s; motion %.3g rad at %s; mirrored joints' motion %.3g rad\n",
        e.file.c_str(), r.name.c_str(), r.frames, r.position, r.position_at.c_str(), r.rotation,
        r.rotation_at.c_str(), r.motion, r.motion_at.c_str(), r.mirrored);
    const std::string where = e.file + " take '" + r.name + "'";
    EXPECT_LE(r.position, e.position) << where << " at " << r.position_at;
    EXPECT_LE(r.rotation, e.rotation) << where << " at " << r.rotation_at;
    EXPECT_LE(r.motion, e.motion) << where << " at " << r.motion_at;
    EXPECT_LE(r.mirrored, e.rotation) << where << ": mirrored joints";
    for (std::size_t k = 0; k < e.known.size(); ++k) {
      std::printf("  '%s' (known): rotation %.3g rad, motion %.3g rad\n", e.known[k].joint.c_str(),
                  r.known_rotation[k], r.known_motion[k]);
      EXPECT_LE(r.known_rotation[k], e.known[k].rotation) << where << " '" << e.known[k].joint;
      EXPECT_LE(r.known_motion[k], e.known[k].motion) << where << " '" << e.known[k].joint;
    }
  }
  std::printf("%s: Blender run %.1f s\n", e.file.c_str(), blender.seconds);
}

// A Blender 2.90 export: one take, 14 bones plus the armature node.
TEST(BlenderTakes, AnimationWithSkeleton) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  ExpectEveryTakeMatches(Expectation("fbx/assimp/animation_with_skeleton.fbx"));
}

// No skeleton: three takes of one animated mesh node ('Box001'), sharing one timeline through
// LocalStart / LocalStop. rigel reads the node as a one-joint skeleton with a clip per take.
// 'spin' turns Z from 0 to +180 degrees between two keys, easing in and out; read from the file
// itself Blender keys -180 (it rebuilds Euler angles from matrices, and 180 is a tie) and turns
// the other way (SpinTurnsTheWayTheCurveSays in upstream_faults_test.cc checks rigel); the copy
// keyed on frames turns the right way, and the bound below stays for the file itself.
TEST(BlenderTakes, MultipleAnimationsMeshNode) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  Expectation e("fbx/assimp/multiple_animations_test.fbx");
  e.known = {{"Box001", M_PI, M_PI, "spin"}};
  ExpectEveryTakeMatches(e);
}

// 2752 frames at 120 fps. The hands' zero-length bones: Blender rebuilds their rest orientation
// (float32, centimetres, a 25 m figure) up to 4e-4 rad off (the right hand 9e-5); the children
// of the left hand inherit it.
TEST(BlenderTakes, Cmu0101) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  Expectation e("fbx/cmu_isaacgym/01_01_cmu.fbx");
  e.known = {{"LeftHand", 6e-4, 3e-4, ""},
             {"LeftFingerBase", 3e-4, 3e-4, ""},
             {"LeftHandIndex1", 3e-4, 3e-4, ""},
             {"LThumb", 3e-4, 3e-4, ""},
             {"RightHand", 3e-4, 3e-4, ""}};
  ExpectEveryTakeMatches(e);
}

const std::vector<std::string> kOzzMirrored = {"Bip01RFinger0Nub", "Bip01RFinger1Nub",
                                               "Bip01RFinger2Nub", "Bip01RFinger3Nub",
                                               "Bip01RFinger4Nub", "Bip01LToe0Nub"};

// Three takes (jog, run, walk); jog and run are keyed between frames. 'Bip01 Footsteps' is an
// empty in Blender, whose Euler angles it interpolates linearly between keys (every second
// frame), where rigel slerps.
TEST(BlenderTakes, OzzLocomotions) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  Expectation e("fbx/ozz_pab/locomotions.fbx");
  e.known = {{"Bip01 Footsteps", 6e-4, 6e-4, ""}};
  e.mirrored = kOzzMirrored;
  ExpectEveryTakeMatches(e);
}

// One take; keys run past the stack's end (LocalStop 1.33 s, keys to 1.9 s).
TEST(BlenderTakes, OzzWalk) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  Expectation e("fbx/ozz_pab/walk.fbx");
  e.mirrored = kOzzMirrored;
  ExpectEveryTakeMatches(e);
}

}  // namespace
}  // namespace blender_takes_test
}  // namespace rigel
