// The corpus ground truth (tests/data/ground_truth.csv): for every file of ../shared/data, what a
// person sees when opening it in Blender 3.4 (up axis in the file's frame, metres per file unit,
// standing height in metres, humanoid or not), against what rigel infers. The figures before
// (frame 0's bounding box: the rule rigel used until issue 26) and after are printed.
#include "data/ground_truth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "core/body.h"
#include "core/pose.h"
#include "core/skeleton_utils.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

using testing::Truth;

// rigel's rule until issue 26: up = Z when frame 0's joints extend further in Z than in Y, the
// height that extent, the unit of a BVH the named unit that makes it nearest 1.6 m.
struct OldGuess {
  std::string up;
  double unit = 0, height_m = 0;
};
OldGuess OldRule(const Scene& scene) {
  Pose pose(*scene.skeleton);
  if (!scene.clips.empty() && scene.clips[0].num_frames() > 0) {
    pose.SetFromRow(*scene.skeleton, scene.clips[0].frame(0));
  }
  const Eigen::AlignedBox3d box = JointBounds(pose.world);
  const int up = GuessUpAxis(box);
  const double height = box.isEmpty() ? 0.0 : box.sizes()[up];
  OldGuess g{up == 2 ? "+Z" : "+Y", scene.file_unit_metres, 0};
  if (!(g.unit > 0) && height > 0) {
    double best = INFINITY;
    for (const double u : {1.0, 0.1, 0.01, 0.001, 0.0254}) {
      const double d = std::abs(std::log(height * u / 1.6));
      if (d < best) best = d, g.unit = u;
    }
  }
  g.height_m = height * g.unit;
  return g;
}

struct Tally {
  int checked = 0, right = 0, old_right = 0;
  std::string Line(const char* what) const {
    std::ostringstream s;
    s << what << ": " << right << "/" << checked << " right (before: " << old_right << "/"
      << checked << ")";
    return s.str();
  }
};

bool Near(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

TEST(GroundTruth, EveryCorpusFileReadsAsItsAuthorMeant) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::vector<Truth> rows = testing::ReadTruth(RIGEL_GROUND_TRUTH);
  ASSERT_GE(rows.size(), 90u);
  Tally up, unit, height, humanoid;
  int refused = 0, read = 0;
  for (const Truth& t : rows) {
    SCOPED_TRACE(t.file);
    const std::string path = testing::SharedData() + "/" + t.file;
    Scene scene;
    try {
      scene = LoadScene(path);
    } catch (const std::exception& e) {
      ++refused;  // refusing is another issue's matter; the row counts as refused
      std::printf("refused: %s: %s\n", t.file.c_str(), e.what());
      continue;
    }
    ++read;
    const OldGuess old = OldRule(scene);
    const BodyMeasure body = MeasureBody(
        *scene.skeleton, scene.clips.empty() ? nullptr : &scene.clips[0], scene.axes.up.value);
    const double metres = MetresPerUnitOrEstimate(scene) * scene.length_scale;
    if (t.up != "?") {
      ++up.checked;
      const std::string got = SignedAxisName(scene.axes.up.value);
      up.right += got == t.up;
      up.old_right += old.up == t.up;
      EXPECT_EQ(got, t.up) << "up axis: " << DescribeAxes(scene.axes);
    }
    if (t.unit != "?") {
      const double want = std::stod(t.unit);
      ++unit.checked;
      // A figure that is not a humanoid may leave a BVH's unit unknown (said in a warning).
      const bool ok = Near(metres, want, 0.01) || (!t.humanoid && metres == 0);
      unit.right += ok;
      unit.old_right += Near(old.unit, want, 0.01);
      EXPECT_TRUE(ok) << "unit: rigel " << metres << " m, truth " << want << " m";
    }
    ++humanoid.checked;
    humanoid.right += body.humanoid == t.humanoid;
    EXPECT_EQ(body.humanoid, t.humanoid) << body.evidence;
    if (!t.height.empty()) {
      const double want = std::stod(t.height);
      ++height.checked;
      const bool ok = Near(body.height * metres, want, 0.10);
      height.right += ok;
      height.old_right += Near(old.height_m, want, 0.10);
      EXPECT_TRUE(ok) << "height: rigel " << body.height << " units x " << metres
                      << " m = " << body.height * metres << " m, truth " << want << " m ("
                      << body.evidence << ")";
      if (want < kMinHumanHeightMetres || want > kMaxHumanHeightMetres) {
        bool warned = false;
        for (const std::string& w : scene.warnings) warned |= w.find("implausible") != w.npos;
        EXPECT_TRUE(warned) << "a " << want << " m human must be warned about";
      }
    }
  }
  std::printf("ground truth: %zu files, %d read, %d refused\n  %s\n  %s\n  %s\n  %s\n", rows.size(),
              read, refused, up.Line("up axis").c_str(), unit.Line("unit").c_str(),
              height.Line("height").c_str(), humanoid.Line("humanoid (no rule before)").c_str());
}

// A figure whose file's Y points down (the Azure Kinect camera frame): the body says -Y up and the
// warning says the file's +Y points down; read with --up y, it stands upside down and that is said.
TEST(UpsideDown, HeadBelowTheFeetIsDetectedAndSaid) {
  const std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 -100 0\nCHANNELS 6 Xposition Yposition Zposition "
      "Zrotation Xrotation Yrotation\nJOINT Spine\n{\nOFFSET 0 -10 0\nCHANNELS 3 Zrotation "
      "Xrotation Yrotation\nJOINT Head\n{\nOFFSET 0 -50 0\nCHANNELS 3 Zrotation Xrotation "
      "Yrotation\nEnd Site\n{\nOFFSET 0 -10 0\n}\n}\n}\nJOINT LeftUpLeg\n{\nOFFSET 10 0 0\n"
      "CHANNELS 3 Zrotation Xrotation Yrotation\nJOINT LeftLeg\n{\nOFFSET 0 45 0\nCHANNELS 3 "
      "Zrotation Xrotation Yrotation\nJOINT LeftFoot\n{\nOFFSET 0 45 0\nCHANNELS 3 Zrotation "
      "Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 0 8\n}\n}\n}\n}\n}\nMOTION\nFrames: 2\n"
      "Frame Time: 0.1\n0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
      "5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  Scene inferred = ParseBvh(text, "kinect.bvh");
  ResolveSceneFacts(inferred);
  EXPECT_EQ(SignedAxisName(inferred.axes.up.value), "-Y") << DescribeAxes(inferred.axes);
  EXPECT_EQ(inferred.axes.up.source, FactSource::kInferred);
  EXPECT_NE(::testing::PrintToString(inferred.warnings).find("the file's +Y points down"),
            std::string::npos)
      << ::testing::PrintToString(inferred.warnings);
  Scene given = ParseBvh(text, "kinect.bvh");
  ResolveSceneFacts(given, {SignedAxis{1, 1}, std::nullopt});
  EXPECT_EQ(given.axes.up.source, FactSource::kUser);
  EXPECT_NE(::testing::PrintToString(given.warnings).find("stands upside down along +Y up"),
            std::string::npos)
      << ::testing::PrintToString(given.warnings);
}

}  // namespace
}  // namespace rigel
