// Correct outputs of the real corpus pass the plausibility checks (issue 27 item 2): every file
// of ../shared/data with a skeleton and a clip, converted (written and read back, as BVH and as
// glb) and, for the humanoids, retargeted onto targets whose rest pose stands on their floor.
// A flagged output is printed with its findings and their diagnosis; the test fails on a finding
// that is not one of the known faults of the outputs diagnosed below (Diagnose).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/check/motion.h"
#include "core/check/plausibility.h"
#include "core/clip_ops.h"
#include "core/retarget/retarget.h"
#include "core/scene.h"
#include "exporters/gltf_writer.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::check {
namespace {

// Frames of each clip used (the checks cost little; the retarget and the writers more).
constexpr int kFrames = 600;

CheckSide SideOf(const Scene& scene, const Clip& clip) {
  return CheckSideOf(scene, *scene.skeleton, clip);
}

struct Source {
  std::string label;  // path under the data folder
  Scene scene;        // the first clip only, at most kFrames frames
};

std::vector<Source> CorpusSources() {
  std::vector<Source> sources;
  const std::string root = testing::SharedData();
  for (const char* ext : {".bvh", ".fbx", ".glb", ".gltf"}) {
    for (const std::string& path : testing::SharedFiles(ext)) {
      Source s;
      s.label = path.substr(root.size() + 1);
      try {
        s.scene = LoadScene(path);
      } catch (const std::exception& e) {
        std::printf("[checks] skipped %s: %s\n", s.label.c_str(), e.what());
        continue;
      }
      if (!s.scene.skeleton || s.scene.clips.empty() || s.scene.clips.front().num_frames() < 2 ||
          s.scene.skeleton->num_joints() < 2) {
        std::printf("[checks] skipped %s: no skeleton with a clip of 2 frames or more\n",
                    s.label.c_str());
        continue;
      }
      const Clip& clip = s.scene.clips.front();
      s.scene.clips = {SliceClip(clip, 0, std::min(clip.num_frames(), kFrames) - 1)};
      s.scene.meshes.clear();
      sources.push_back(std::move(s));
    }
  }
  return sources;
}

// What an output was made of, for the diagnoses.
struct Made {
  std::string source;  // label under the data folder
  std::string output;  // target file name, or the written extension
  const Scene* source_scene = nullptr;
  const Scene* output_scene = nullptr;
};

bool Pab(const std::string& name) {
  return name.find("ozz_pab") != std::string::npos || name == "walk.fbx";
}

// The diagnosis of a finding on a known fault of the output (not of the checks), or "" when the
// finding is not explained. Each was examined by hand (issue 27, the checks' closing note).
std::string Diagnose(const Made& m, const Finding& f) {
  // Fixed since the checks found them (issue 27), so a flag of theirs fails this test again: a
  // non-humanoid written as BVH read back +Z up from its extent (the BVH reader now takes +Y, as
  // BVH readers do, when the body does not decide), and retargets floating a hip height over a
  // source whose rest pose hangs from the hips at the origin (the retarget now stands each figure
  // on the floor its clip stands on), and retargets onto the ProAnimationBank rig that moved its
  // 'Spine' (taken for the hips) and stretched the Pelvis -> Spine bone over the path (the
  // translation now goes to the top of the body, its root 'Hips').
  if (f.check == "ground" && m.source.find("mocapbank/") != std::string::npos &&
      m.output == "100style_character.fbx") {
    return "retarget (rotations copied, no IK): the MocapBank performer kneels (its right knee "
           "2.8 cm over its floor at frame 240, the toes by it); with the 100STYLE character's "
           "leg and foot proportions the same bend puts its toe tips 7 to 10 cm under its floor "
           "(frames 280-411); found once the retarget stood the output on its floor (before, "
           "it floated a hip height)";
  }
  if (f.check == "orientation" && (Pab(m.source) || Pab(m.output)) &&
      f.reason.find("right foot") != std::string::npos) {
    return "open: the ProAnimationBank rig's bind pose is not a neutral stance (its legs differ "
           "by 13 % in it) and its feet have no toe joint, so the feet are compared from their "
           "rest directions, which that rest distorts; not decided whether the output's right "
           "foot is wrong";
  }
  // glTF cannot hold FBX's segment scale compensation (Rrs) under a non-uniform parent scale:
  // such joints are written inheriting it and the writer warns naming them (UncompensatedJoints;
  // under a uniform parent scale they are exact, GltfWriter.CompensatingJoints...); .fbx keeps it.
  if (f.check == "bone_length" && m.output == ".glb" && m.source_scene != nullptr &&
      !UncompensatedJoints(*m.source_scene->skeleton, m.source_scene->clips).empty()) {
    return "glTF has no segment scale compensation: a joint with InheritType Rrs under a "
           "non-uniformly scaled parent is written inheriting that scale, and rigel warns "
           "naming it";
  }
  return "";
}

struct Tally {
  int outputs = 0;
  int flagged = 0;
  std::vector<std::string> unexplained;
};

void Judge(const Made& m, const CheckReport& r, Tally* tally) {
  ++tally->outputs;
  const std::string name = m.source + " -> " + m.output;
  std::printf("[checks] %-70s %s (%d frames, scale %.4g)\n", name.c_str(),
              r.suspect() ? "SUSPECT" : "ok", r.frames, r.scale);
  if (!r.suspect()) return;
  ++tally->flagged;
  for (const Finding& f : r.findings) {
    const std::string why = Diagnose(m, f);
    std::printf("      %s\n        known fault: %s\n", DescribeFinding(f).c_str(),
                why.empty() ? "NONE" : why.c_str());
    if (why.empty()) tally->unexplained.push_back(name + ": " + DescribeFinding(f));
  }
}

void Summarise(const char* what, const Tally& tally) {
  std::printf("[checks] %s: %d outputs, %d flagged, %zu findings unexplained\n", what,
              tally.outputs, tally.flagged, tally.unexplained.size());
  for (const std::string& u : tally.unexplained) ADD_FAILURE() << "flagged: " << u;
}

TEST(PlausibilityCorpus, ConvertedFilesPass) {
  RIGEL_REQUIRE_SHARED_DATA();
  testing::TempDir tmp;
  Tally tally;
  int n = 0;
  for (const Source& s : CorpusSources()) {
    for (const char* ext : {".bvh", ".glb"}) {
      const std::string out = tmp.file(std::to_string(n++) + ext);
      Scene back;
      try {
        SaveScene(s.scene, out);
        // BVH states no axes and keeps the source's (rigel warns: AxesDroppedBy): read back told
        // them, as --up does, since a non-humanoid does not show its up axis to the reader.
        LoadOptions read;
        if (std::string(ext) == ".bvh") {
          read.axes.up = s.scene.axes.up.value;
          read.axes.forward = s.scene.axes.forward.value;
        }
        back = LoadScene(out, read);
      } catch (const std::exception& e) {
        std::printf("[checks] %s -> %s not written: %s\n", s.label.c_str(), ext, e.what());
        continue;
      }
      ASSERT_FALSE(back.clips.empty()) << s.label << ext;
      PlausibilityJob job;
      job.kind = OutputKind::kConvert;
      job.source = SideOf(s.scene, s.scene.clips.front());
      job.output = SideOf(back, back.clips.front());
      // The writer's promise: glTF in metres (the input's unit, stated or estimated, converted);
      // BVH, which states no unit, in the input's own numbers.
      const double a = job.source.metres_per_unit, b = MetresPerUnit(back);
      job.scale = a > 0 && b > 0 ? a / b : 1.0;
      Judge({s.label, ext, &s.scene, &back}, job.Run(), &tally);
    }
  }
  Summarise("converted", tally);
}

TEST(PlausibilityCorpus, RetargetedHumanoidsPass) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string data = testing::SharedData();
  std::vector<std::pair<std::string, Scene>> targets;
  for (const std::string& t :
       {std::string(RIGEL_SOURCE_DIR "/samples/basics/walk.bvh"), data + "/fbx/ozz_pab/walk.fbx",
        data + "/wild/orangeduck_100style-retarget/100style_character.fbx"}) {
    if (std::filesystem::exists(t)) {
      targets.emplace_back(std::filesystem::path(t).filename().string(), LoadScene(t));
    }
  }
  Tally tally;
  for (const Source& s : CorpusSources()) {
    if (!FindBodyParts(*s.scene.skeleton).humanoid) continue;
    for (const auto& [name, target] : targets) {
      retarget::RetargetOptions options;
      options.source_unit_metres = MetresPerUnit(s.scene);
      options.target_unit_metres = MetresPerUnit(target);
      const SignedAxis su = s.scene.axes.up.value, tu = target.axes.up.value;
      options.source_up_axis = su.sign > 0 && su.axis > 0 ? su.axis : -1;
      options.target_up_axis = tu.sign > 0 && tu.axis > 0 ? tu.axis : -1;
      std::string error;
      const auto r = retarget::Retargeter::Create(s.scene.skeleton, target.skeleton, {}, options,
                                                  &error, &s.scene.clips.front());
      if (!r) {
        std::printf("[checks] %s -> %s: not retargeted: %s\n", s.label.c_str(), name.c_str(),
                    error.c_str());
        continue;
      }
      const retarget::RetargetResult result = r->Run(s.scene.clips.front());
      PlausibilityJob job;
      job.kind = OutputKind::kRetarget;
      job.source = SideOf(s.scene, s.scene.clips.front());
      job.output = SideOf(target, result.clip);
      job.output_floor_clip = target.clips.empty() ? nullptr : &target.clips.front();
      Judge({s.label, name, &s.scene, &target}, job.Run(), &tally);
    }
  }
  Summarise("retargeted", tally);
}

}  // namespace
}  // namespace rigel::check
