// Spline IK against Blender's own Spline IK constraint (label "blender"): the same chain from
// rigel's BVH, the same Bézier curve (points and handles), Blender 3.4's result read back from
// blender_spline_ik.py. Compared: every chain point's world position (to 1e-4 of the chain's
// length), each bone's direction, and each bone's world rotation change (its roll included).
//
// Blender's armature is built from the chain as rigel's FK places it on the frame (rest pose =
// that pose, roll 0, zero-length bones merged since Blender has none), so both start from the
// same bones; the rotation compared is the change R_after R_before^T, the same in both whatever
// each one's bone frame. Blender tessellates the curve (resolution 1024 per segment here) and
// works in single precision: the agreement figures are recorded as test properties.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "assimp/blender_util.h"
#include "core/constraints/spline_ik.h"
#include "core/pose.h"
#include "core/skeleton.h"
#include "importers/bvh_reader.h"
#include "test_util.h"

namespace rigel {
namespace spline_ik_blender_test {
namespace {

using constraints::ControlPoint;
using constraints::CurveType;
using constraints::SplineIkConstraint;
using V = Eigen::Vector3d;

// A tail of 6-channel joints (the stretch cases move the joints through position channels).
constexpr const char* kTailBvh = R"(HIERARCHY
ROOT Tail0
{
  OFFSET 0 1 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Tail1
  {
    OFFSET 0 0 -0.4
    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
    JOINT Tail2
    {
      OFFSET 0.05 0 -0.35
      CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
      JOINT Tail3
      {
        OFFSET 0 0.03 -0.3
        CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
        JOINT Tail4
        {
          OFFSET 0 0 -0.25
          CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
          End Site
          {
            OFFSET 0 0 -0.2
          }
        }
      }
    }
  }
}
MOTION
Frames: 1
Frame Time: 0.033333
0.1 0 0.2 5 -10 3  0 0 0 8 12 -4  0 0 0 -6 9 2  0 0 0 10 -7 5  0 0 0 3 4 -12
)";

// One case: the chain before and after rigel's constraint, and what Blender is given.
struct Case {
  std::string name;
  std::vector<V> before, after;  // chain points: the joints, then the End Site
  std::vector<Eigen::Matrix3d> rotation_before, rotation_after;  // per chain joint
  std::vector<V> bezier;
  std::string y_scale;
  double influence = 1;
  bool rolls_off = false;  // the chain is longer than the curve
};

// Blender's tessellation of each Bézier segment (its curve's resolution_u).
constexpr int kResolution = 1024;

// The world points of `joints` and the last one's End Site, and the joints' world rotations.
void ChainState(const Skeleton& s, const Pose& pose, const std::vector<int>& joints,
                std::vector<V>* points, std::vector<Eigen::Matrix3d>* rotations) {
  points->clear();
  rotations->clear();
  for (const int j : joints) {
    points->push_back(pose.world[j].translation());
    rotations->push_back(pose.world[j].linear());
  }
  for (const EndSite& e : s.end_sites()) {
    if (e.parent == joints.back()) points->push_back(pose.world[joints.back()] * e.offset);
  }
}

// A Bézier of two segments ahead of the chain `x` (its points), bending sideways and up, of about
// `reach` times the chain's length.
std::vector<V> CurveAhead(const std::vector<V>& x, double reach) {
  double length = 0;
  for (size_t i = 1; i < x.size(); ++i) length += (x[i] - x[i - 1]).norm();
  const V d = (x.back() - x.front()).normalized();
  const V side = d.cross(V(0.3, 0.2, 1).normalized()).normalized();
  const V up = d.cross(side);
  const double l = length * reach;
  const V p0 = x.front();
  const V p3 = p0 + 0.5 * l * d + 0.25 * l * side;
  const V p6 = p0 + 0.95 * l * d - 0.1 * l * side + 0.2 * l * up;
  const V t3 = (0.8 * d + 0.3 * side + 0.1 * up).normalized();
  return {p0, p0 + 0.3 * l * d,  p3 - 0.2 * l * t3,
          p3, p3 + 0.2 * l * t3, p6 - 0.2 * l * (d - 0.3 * up).normalized(),
          p6};
}

Case MakeCase(const std::string& name, const Skeleton& s, const std::vector<double>& row,
              const std::vector<int>& joints, double reach, bool stretch, double influence) {
  Pose pose(s);
  pose.channels = row;
  pose.UpdateWorld(s);
  Case k;
  k.name = name;
  ChainState(s, pose, joints, &k.before, &k.rotation_before);
  k.bezier = CurveAhead(k.before, reach);
  k.y_scale = stretch ? "FIT_CURVE" : "NONE";
  k.influence = influence;
  SplineIkConstraint c;
  c.joints = joints;
  c.curve = CurveType::kBezier;
  c.stretch = stretch;
  c.influence = influence;
  for (const V& p : k.bezier) c.points.push_back(ControlPoint{-1, p});
  constraints::State state;
  std::string error;
  EXPECT_TRUE(c.Run(s, pose, 0, state, &error)) << name << ": " << error;
  ChainState(s, pose, joints, &k.after, &k.rotation_after);
  return k;
}

nlohmann::json Json(const V& v) { return {v.x(), v.y(), v.z()}; }

Eigen::Matrix3d Matrix(const nlohmann::json& rows) {
  Eigen::Matrix3d m;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) m(r, c) = rows[r][c].get<double>();
  }
  return m;
}

TEST(SplineIkBlender, AgreesWithBlendersSplineIk) {
  REQUIRE_BLENDER();
  std::vector<Case> cases;
  // A CMU spine (real data): LowerBack .. Head and its End Site; Spine1 -> Neck has zero length.
  const std::string cmu = std::string(RIGEL_SHARED_DATA) + "/cmu_cgspeed/01_01.bvh";
  if (!std::filesystem::exists(cmu)) GTEST_SKIP() << cmu << " not found (the data corpus)";
  const Scene spine = ReadBvh(cmu);
  const Skeleton& s = *spine.skeleton;
  std::vector<int> chain;
  for (const char* n : {"LowerBack", "Spine", "Spine1", "Neck", "Neck1", "Head"}) {
    chain.push_back(s.FindJoint(n));
    ASSERT_GE(chain.back(), 0) << n;
  }
  // LowerBack has no position channels: the curve starts on it.
  for (const int f : {0, 700, 1400, 2100}) {
    const auto frame = spine.clips[0].frame(f);
    const std::vector<double> row(frame.begin(), frame.end());
    cases.push_back(MakeCase(fmt::format("cmu_frame{}", f), s, row, chain, 1.15, false, 1.0));
  }
  {
    const auto frame = spine.clips[0].frame(350);
    const std::vector<double> row(frame.begin(), frame.end());
    cases.push_back(MakeCase("cmu_influence_half", s, row, chain, 1.15, false, 0.5));
    cases.push_back(MakeCase("cmu_rolls_off_the_end", s, row, chain, 0.75, false, 1.0));
    cases.back().rolls_off = true;
  }
  // The tail: stretch off and on (Blender's Fit Curve).
  const Scene tail = ParseBvh(kTailBvh, "tail.bvh");
  const Skeleton& t = *tail.skeleton;
  std::vector<int> tail_chain;
  for (int j = 0; j < t.num_joints(); ++j) tail_chain.push_back(j);
  const auto tail_frame = tail.clips[0].frame(0);
  const std::vector<double> tail_row(tail_frame.begin(), tail_frame.end());
  cases.push_back(MakeCase("tail", t, tail_row, tail_chain, 1.3, false, 1.0));
  cases.push_back(MakeCase("tail_stretch", t, tail_row, tail_chain, 1.3, true, 1.0));
  cases.push_back(MakeCase("tail_stretch_shorter_curve", t, tail_row, tail_chain, 0.8, true, 1.0));

  // Blender's input: the chain without zero-length bones.
  const testing::TempDir dir;
  nlohmann::json in;
  in["cases"] = nlohmann::json::array();
  std::vector<std::vector<size_t>> kept(cases.size());  // chain points Blender has, per case
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    nlohmann::json points = nlohmann::json::array();
    for (size_t i = 0; i < k.before.size(); ++i) {
      if (i > 0 && (k.before[i] - k.before[kept[c].back()]).norm() < 1e-9) continue;
      kept[c].push_back(i);
      points.push_back(Json(k.before[i]));
    }
    nlohmann::json bezier = nlohmann::json::array();
    for (const V& p : k.bezier) bezier.push_back(Json(p));
    in["cases"].push_back({{"name", k.name},
                           {"chain", points},
                           {"bezier", bezier},
                           {"y_scale", k.y_scale},
                           {"influence", k.influence},
                           {"resolution", kResolution}});
  }
  const std::string in_path = dir.file("in.json"), out_path = dir.file("out.json");
  std::ofstream(in_path) << in.dump();
  const std::string cmd =
      fmt::format("blender -b --factory-startup --python '{}' -- '{}' '{}' > '{}' 2>&1",
                  RIGEL_BLENDER_SPLINE_IK_SCRIPT, in_path, out_path, dir.file("blender.log"));
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream result_file(out_path);
  ASSERT_TRUE(result_file) << "Blender wrote no result; see " << dir.file("blender.log");
  const nlohmann::json out = nlohmann::json::parse(result_file);

  double worst_position = 0, worst_direction = 0, worst_rotation = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const nlohmann::json& b = out["cases"][k.name];
    const size_t bones = kept[c].size() - 1;
    ASSERT_EQ(b["heads"].size(), bones) << k.name;
    double length = 0;
    for (size_t i = 1; i < k.before.size(); ++i) length += (k.before[i] - k.before[i - 1]).norm();
    double position = 0, direction = 0, rotation = 0;
    for (size_t i = 0; i < bones; ++i) {
      const size_t head = kept[c][i], next = kept[c][i + 1];
      const V bh(b["heads"][i][0].get<double>(), b["heads"][i][1].get<double>(),
                 b["heads"][i][2].get<double>());
      const V bt(b["tails"][i][0].get<double>(), b["tails"][i][1].get<double>(),
                 b["tails"][i][2].get<double>());
      position = std::max(position, (bh - k.after[head]).norm());
      // With stretch, an End Site cannot move (no scale, no channels): Blender scales that bone
      // to the curve's end, rigel aims it there. Compared: its direction.
      const bool end_site =
          next + 1 == k.before.size() && k.before.size() > k.rotation_before.size();
      if (!(k.y_scale == "FIT_CURVE" && end_site)) {
        position = std::max(position, (bt - k.after[next]).norm());
      }
      const V rigel_dir = (k.after[next] - k.after[head]).normalized();
      direction =
          std::max(direction, std::acos(std::min(1.0, rigel_dir.dot((bt - bh).normalized()))));
      // The joint heading this bone: the last of the merged zero-length run.
      const size_t joint = next - 1;
      const Eigen::Matrix3d rigel_change =
          k.rotation_after[joint] * k.rotation_before[joint].transpose();
      const Eigen::Matrix3d blender_change =
          Matrix(b["rotations"][i]) * Matrix(b["rest"][i]).transpose();
      rotation =
          std::max(rotation, Eigen::AngleAxisd(rigel_change.transpose() * blender_change).angle());
    }
    // A chain rolling off the end: Blender extends the curve along its last tessellated segment,
    // rigel along the exact end tangent. The angle between the two, alpha (2.4e-3 rad here, 4
    // times more at resolution 256), widens the tolerance of that case by alpha / 2.
    double tolerance = 1e-4;
    if (k.rolls_off) {
      const size_t n = k.bezier.size();
      const auto last_segment = [&](double u) {
        const double r = 1 - u;
        return V(r * r * r * k.bezier[n - 4] + 3 * r * r * u * k.bezier[n - 3] +
                 3 * r * u * u * k.bezier[n - 2] + u * u * u * k.bezier[n - 1]);
      };
      const V chord = (last_segment(1) - last_segment(1 - 1.0 / kResolution)).normalized();
      const V tangent = (k.bezier[n - 1] - k.bezier[n - 2]).normalized();
      const double alpha = std::acos(std::min(1.0, chord.dot(tangent)));
      ::testing::Test::RecordProperty(k.name + "_alpha", fmt::format("{:.3g}", alpha));
      std::printf("%-28s alpha %.2e rad\n", k.name.c_str(), alpha);
      tolerance += alpha / 2;
    }
    ::testing::Test::RecordProperty(k.name + "_rel_position",
                                    fmt::format("{:.3g}", position / length));
    std::printf("%-28s position %.2e of the chain length, direction %.2e rad, rotation %.2e rad\n",
                k.name.c_str(), position / length, direction, rotation);
    EXPECT_LE(position, tolerance * length) << k.name;
    EXPECT_LE(direction, tolerance) << k.name;
    EXPECT_LE(rotation, tolerance) << k.name;
    if (k.rolls_off) continue;
    worst_position = std::max(worst_position, position / length);
    worst_direction = std::max(worst_direction, direction);
    worst_rotation = std::max(worst_rotation, rotation);
  }
  // Worst over the cases whose definitions coincide (all but the one rolling off the end).
  ::testing::Test::RecordProperty("max_rel_position", fmt::format("{:.3g}", worst_position));
  ::testing::Test::RecordProperty("max_direction_rad", fmt::format("{:.3g}", worst_direction));
  ::testing::Test::RecordProperty("max_rotation_rad", fmt::format("{:.3g}", worst_rotation));
}

}  // namespace
}  // namespace spline_ik_blender_test
}  // namespace rigel
