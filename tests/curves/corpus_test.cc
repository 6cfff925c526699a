// Every curve operation on every clip of ../shared/data (issue 29): key reduction written as FBX
// and glb and read back (keys and bytes before and after, the largest error by FK on the file
// read back, within the bound), the low-pass filter, mirroring (twice = identity), trimming,
// resampling and loops.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/reduce_keys.h"
#include "core/clip_ops.h"
#include "core/curves/filter.h"
#include "core/curves/key_reduction.h"
#include "core/curves/mirror.h"
#include "core/pose.h"
#include "core/scene.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool Finite(const Clip& clip) {
  for (const double v : clip.values()) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// Largest world-space distance (metres) between two clips' joints and their axes (1 m away).
double WorldDistance(const Skeleton& skeleton, const Clip& a, const Clip& b, double mpu) {
  std::vector<Eigen::Isometry3d> wa(skeleton.num_joints()), wb(skeleton.num_joints());
  double worst = 0;
  for (int f = 0; f < a.num_frames(); ++f) {
    ForwardKinematics(skeleton, a.frame(f), wa);
    ForwardKinematics(skeleton, b.frame(f), wb);
    for (int j = 0; j < skeleton.num_joints(); ++j) {
      worst = std::max(worst, (wa[j].translation() - wb[j].translation()).norm() * mpu);
      worst = std::max(worst, (wa[j].linear() - wb[j].linear()).cwiseAbs().maxCoeff());
    }
  }
  return worst;
}

struct Totals {
  long long dense_keys = 0, keys = 0;
  std::uintmax_t dense_bytes = 0, bytes = 0;
  double worst_read_back = 0;
  double worst_excess = 0;  // read back: reduced file's error beyond the dense file's
  long long frames = 0;
  double seconds = 0;
};

TEST(CurvesCorpus, EveryOperationOnEveryClip) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string root = testing::SharedData();
  const fs::path dir = fs::path(::testing::TempDir()) / "curves_corpus";
  fs::create_directories(dir);
  std::map<std::string, Totals> totals;  // per written format
  std::map<std::string, double> speed_frames, speed_seconds;
  int clips = 0;
  for (const char* ext : {".bvh", ".fbx"}) {
    for (const std::string& path : testing::SharedFiles(ext)) {
      const std::string label = path.substr(root.size() + 1);
      Scene scene;
      try {
        scene = LoadScene(path);
      } catch (const std::exception& e) {
        std::printf("[curves] skipped %s: does not load: %s\n", label.c_str(), e.what());
        continue;
      }
      if (!scene.skeleton || scene.clips.empty()) {
        std::printf("[curves] skipped %s: no skeleton with a clip\n", label.c_str());
        continue;
      }
      const Skeleton& skeleton = *scene.skeleton;
      const double mpu = MetresPerUnitOrEstimate(scene);
      for (std::size_t take = 0; take < scene.clips.size(); ++take) {
        const Clip& clip = scene.clips[take];
        SCOPED_TRACE(label + " take " + std::to_string(take));
        ++clips;
        // Key reduction, written and read back.
        for (const char* format : {".fbx", ".glb"}) {
          const std::string stem = fs::path(label).stem().string() + "_" + std::to_string(take);
          const std::string dense = (dir / (stem + "_dense" + format)).string();
          const std::string reduced = (dir / (stem + "_reduced" + format)).string();
          Scene one;
          one.skeleton = scene.skeleton;
          one.clips = {clip};
          one.meshes = scene.meshes;
          one.axes = scene.axes;
          one.file_unit_metres = scene.file_unit_metres;
          one.estimated_unit_metres = scene.estimated_unit_metres;
          one.length_scale = scene.length_scale;
          cli::ReduceArgs args;
          SaveScene(one, dense);
          args.enabled = true;
          const auto start = Clock::now();
          const std::vector<ClipKeys> keys = cli::SaveSceneReduced(one, reduced, args);
          const double seconds = Since(start);
          ASSERT_EQ(keys.size(), 1u);
          EXPECT_LE(keys[0].max_error, 1e-4);
          double back = -1, dense_back = -1;
          try {
            back = cli::ReadBackError(one, clip, reduced, {}, 0, 0.02);
            dense_back = cli::ReadBackError(one, clip, dense, {}, 0, 0.02);
          } catch (const std::exception& e) {
            ADD_FAILURE() << "read back: " << e.what();
          }
          // Within the bound, beyond what the dense file itself holds (float32 values).
          EXPECT_LE(back, 1e-4 + dense_back) << format;
          Totals& t = totals[format];
          t.dense_keys += keys[0].dense_keys;
          t.keys += keys[0].keys;
          t.dense_bytes += fs::file_size(dense);
          t.bytes += fs::file_size(reduced);
          t.worst_read_back = std::max(t.worst_read_back, back);
          t.worst_excess = std::max(t.worst_excess, back - dense_back);
          t.frames += clip.num_frames();
          t.seconds += seconds;
          std::printf(
              "[curves] %-60s %s %6d frames: keys %8lld -> %7lld, bytes %9ju -> %8ju, "
              "error %.4f mm (read back %.4f mm, dense %.4f mm)\n",
              (label + ":" + std::to_string(take)).c_str(), format, clip.num_frames(),
              keys[0].dense_keys, keys[0].keys, static_cast<std::uintmax_t>(fs::file_size(dense)),
              static_cast<std::uintmax_t>(fs::file_size(reduced)), keys[0].max_error * 1e3,
              back * 1e3, dense_back * 1e3);
          fs::remove(dense);
          fs::remove(reduced);
        }
        // Filter: 6 Hz (or a fifth of the frame rate), contacts kept.
        if (clip.num_frames() >= 2) {
          FilterOptions filter;
          filter.cutoff_hz = std::min(6.0, clip.frame_rate() / 5);
          const int up = scene.axes.up.value.axis;
          filter.up_axis = up >= 0 && up <= 2 ? up : 1;
          const auto start = Clock::now();
          const Clip filtered = FilterClip(skeleton, clip, filter);
          speed_seconds["filter"] += Since(start);
          speed_frames["filter"] += clip.num_frames();
          EXPECT_TRUE(Finite(filtered));
          EXPECT_EQ(filtered.num_frames(), clip.num_frames());
        }
        // Mirror, twice.
        const std::vector<int> mates = MirrorCounterparts(skeleton);
        bool paired = false;
        for (std::size_t j = 0; j < mates.size(); ++j) paired |= mates[j] != static_cast<int>(j);
        if (paired) {
          MirrorPlane plane;
          try {
            plane = CharacterPlane(skeleton, mates);
          } catch (const std::invalid_argument& e) {
            paired = false;
            std::printf("[curves] %s: not mirrored: %s\n", label.c_str(), e.what());
          }
          if (paired) {
            const auto start = Clock::now();
            const Clip once = MirrorClip(skeleton, clip, mates, plane);
            speed_seconds["mirror"] += Since(start);
            speed_frames["mirror"] += clip.num_frames();
            const Clip twice = MirrorClip(skeleton, once, mates, plane);
            EXPECT_TRUE(Finite(once));
            bool exact = true;  // every rotating joint holds any rotation (three channels)
            for (int j = 0; j < skeleton.num_joints(); ++j) {
              const std::size_t n = skeleton.rotation_channels(j).size();
              exact = exact && (n == 0 || n == 3);
            }
            if (exact) {
              EXPECT_LT(WorldDistance(skeleton, clip, twice, mpu), 1e-9);
            }
          }
        } else {
          std::printf("[curves] %s: no left/right joints: not mirrored\n", label.c_str());
        }
        // Trim (the middle half, by time), resample (30 frames/s), loop.
        {
          auto start = Clock::now();
          const Clip trimmed =
              TrimClipSeconds(clip, clip.duration() / 4, std::max(clip.duration() * 3 / 4, 1e-9));
          speed_seconds["trim"] += Since(start);
          speed_frames["trim"] += trimmed.num_frames();
          EXPECT_GE(trimmed.num_frames(), 1);
          start = Clock::now();
          const Clip resampled = ResampleClip(skeleton, clip, 30.0);
          speed_seconds["resample"] += Since(start);
          speed_frames["resample"] += resampled.num_frames();
          EXPECT_TRUE(Finite(resampled));
          if (clip.num_frames() >= 3) {
            LoopOptions loop;
            loop.blend_frames = std::min(10, clip.num_frames() - 1);
            const int up = scene.axes.up.value.axis;
            loop.up_axis = up >= 0 && up <= 2 ? up : 1;
            start = Clock::now();
            const Clip looped = LoopClip(skeleton, clip, loop);
            speed_seconds["loop"] += Since(start);
            speed_frames["loop"] += clip.num_frames();
            EXPECT_TRUE(Finite(looped));
          }
        }
      }
    }
  }
  EXPECT_GT(clips, 20);
  for (const auto& [format, t] : totals) {
    std::printf(
        "[curves] total %s over %d clips: keys %lld -> %lld (%.1f%%), bytes %ju -> %ju "
        "(%.1f%%), largest read-back error %.4f mm, reduction %.0f frames/s\n",
        format.c_str(), clips, t.dense_keys, t.keys,
        100.0 * static_cast<double>(t.keys) / static_cast<double>(t.dense_keys), t.dense_bytes,
        t.bytes, 100.0 * static_cast<double>(t.bytes) / static_cast<double>(t.dense_bytes),
        t.worst_read_back * 1e3, static_cast<double>(t.frames) / t.seconds);
  }
  for (const auto& [op, frames] : speed_frames) {
    std::printf("[curves] %s: %.0f frames/s\n", op.c_str(), frames / speed_seconds[op]);
  }
}

}  // namespace
}  // namespace rigel
