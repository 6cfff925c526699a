// BVH position channels: deltas added to the OFFSET or absolute translations replacing it,
// decided per joint from the data (importers/bvh_reader.h). Each synthetic file below is built in
// one convention and its figure's height and foot height are checked against values computed by
// hand from the OFFSETs; the writer gives the file's own values back; every real BVH in
// ../shared/data reads as before except the files the rule is meant to change.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/pose.h"
#include "core/skeleton_utils.h"
#include "exporters/bvh_writer.h"
#include "importers/bvh_reader.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

// World position of `joint` on frame `f`.
Eigen::Vector3d WorldOf(const Scene& scene, const std::string& joint, int f) {
  const Skeleton& s = *scene.skeleton;
  Pose pose(s);
  pose.SetFromRow(s, scene.clips.at(0).frame(f));
  const int j = s.FindJoint(joint);
  EXPECT_GE(j, 0) << joint;
  return pose.world[j].translation();
}

// Up-axis extent of the joints on frame `f`.
double HeightOf(const Scene& scene, int up, int f) {
  const Skeleton& s = *scene.skeleton;
  Pose pose(s);
  pose.SetFromRow(s, scene.clips.at(0).frame(f));
  return JointBounds(pose.world).sizes()[up];
}

TranslationMode ModeOf(const Scene& scene, const std::string& joint) {
  return scene.skeleton->translation_mode(scene.skeleton->FindJoint(joint));
}

// Every number of the MOTION section, in order.
std::vector<double> MotionValues(const std::string& text) {
  std::istringstream in(text.substr(text.find("Frame Time:")));
  std::string line;
  std::getline(in, line);
  std::vector<double> values;
  double v;
  while (in >> v) values.push_back(v);
  return values;
}

// 3ds Max Biped / Truebones / Bandai Namco style: every joint has 6 channels and at rest each
// position channel restates its OFFSET (here with +-0.01 jitter and a root walking along X).
//        Head (0,20,0)
//        Spine (0,10,0)
//  Hips (0,100,0)
//  LeftUpLeg (10,0,0) - LeftLeg (0,-45,0) - LeftFoot (0,-45,0)
// Read right: head at 100+10+20 = 130, foot at 100-45-45 = 10, height 120.
// Read as deltas (every bone doubled): head at 260, foot at 20, height 240.
std::string SixChannelFile() {
  std::string joint_block;
  auto joint = [](const char* kind, const char* name, const char* offset) {
    return fmt::format(
        "{} {}\n{{\nOFFSET {}\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
        "Yrotation\n",
        kind, name, offset);
  };
  std::string text =
      "HIERARCHY\n" + joint("ROOT", "Hips", "0 100 0") + joint("JOINT", "Spine", "0 10 0") +
      joint("JOINT", "Head", "0 20 0") + "End Site\n{\nOFFSET 0 5 0\n}\n}\n}\n" +
      joint("JOINT", "LeftUpLeg", "10 0 0") + joint("JOINT", "LeftLeg", "0 -45 0") +
      joint("JOINT", "LeftFoot", "0 -45 0") + "End Site\n{\nOFFSET 0 0 8\n}\n}\n}\n}\n}\n";
  text += "MOTION\nFrames: 4\nFrame Time: 0.0333333\n";
  const double jitter[4] = {0.0, 0.01, -0.01, 0.005};
  for (int f = 0; f < 4; ++f) {
    const double e = jitter[f];
    text += fmt::format(
        "{} {} 0 0 0 0  0 {} 0 0 0 0  0 {} 0 0 0 0  {} 0 0 0 0 0  0 {} 0 0 0 0  0 {} 0 0 0 0\n",
        30.0 * f, 100 + e, 10 - e, 20 + e, 10 + e, -45 + e, -45 - e);
  }
  return text;
}

TEST(BvhTranslation, SixChannelsRestatingTheOffsetReplaceIt) {
  const std::string text = SixChannelFile();
  const Scene scene = ParseBvh(text, "six.bvh");
  for (const char* j : {"Hips", "Spine", "Head", "LeftUpLeg", "LeftLeg", "LeftFoot"}) {
    EXPECT_EQ(ModeOf(scene, j), TranslationMode::kReplace) << j;
  }
  // Frame 0 has no jitter: the hand-computed figure.
  EXPECT_NEAR(WorldOf(scene, "Head", 0).y(), 130.0, 1e-12);
  EXPECT_NEAR(WorldOf(scene, "LeftFoot", 0).y(), 10.0, 1e-12);
  EXPECT_NEAR(HeightOf(scene, 1, 0), 120.0, 1e-12);
  // Frame 2: root walked to x = 60, jitter -0.01 on every channel.
  EXPECT_NEAR(WorldOf(scene, "Head", 2).y(), 99.99 + 10.01 + 19.99, 1e-9);
  EXPECT_NEAR(WorldOf(scene, "LeftFoot", 2).y(), 99.99 - 45.01 - 44.99, 1e-9);
  EXPECT_NEAR(WorldOf(scene, "LeftFoot", 2).x(), 60 + 9.99, 1e-9);
  // No warning about the convention (only the unit estimate).
  for (const std::string& w : scene.warnings) EXPECT_EQ(w.find("do not decide"), w.npos) << w;

  // The override reads every bone doubled, as rigel did before.
  BvhReadOptions add;
  add.translation = BvhTranslation::kAdd;
  const Scene doubled = ParseBvh(text, "six.bvh", add);
  EXPECT_EQ(ModeOf(doubled, "Spine"), TranslationMode::kAdd);
  EXPECT_NEAR(WorldOf(doubled, "Head", 0).y(), 260.0, 1e-12);
  EXPECT_NEAR(WorldOf(doubled, "LeftFoot", 0).y(), 20.0, 1e-12);

  // The writer gives back the file's own values.
  const std::vector<double> written = MotionValues(FormatBvh(*scene.skeleton, scene.clips[0]));
  const std::vector<double> original = MotionValues(text);
  ASSERT_EQ(written.size(), original.size());
  for (size_t i = 0; i < original.size(); ++i) EXPECT_EQ(written[i], original[i]) << i;
  // And the file written from the add reading too (its values are the file's as well).
  EXPECT_EQ(MotionValues(FormatBvh(*doubled.skeleton, doubled.clips[0])), original);
}

// PyMO style: the root's OFFSET is its first position and its channels are absolute positions
// (walking along X). Y up.  Hips OFFSET (5,35,-20); LeftUpLeg (4,-3,0); LeftLeg (0,-16,0);
// LeftFoot (0,-15,0); Spine (0,10,0); Head (0,12,0).
// Read right: on frame f the root is at (5+10f, 35+b_f, -20): head at 35+b+22 = 57+b, foot at
// 35+b-34 = 1+b, height 56. Read as deltas the root floats 35 up: foot at 36.
std::string PymoFile() {
  std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 5 35 -20\nCHANNELS 6 Xposition Yposition Zposition "
      "Zrotation Xrotation Yrotation\n"
      "JOINT Spine\n{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT Head\n{\nOFFSET 0 12 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "End Site\n{\nOFFSET 0 4 0\n}\n}\n}\n"
      "JOINT LeftUpLeg\n{\nOFFSET 4 -3 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftLeg\n{\nOFFSET 0 -16 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftFoot\n{\nOFFSET 0 -15 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "End Site\n{\nOFFSET 0 0 3\n}\n}\n}\n}\n}\n"
      "MOTION\nFrames: 6\nFrame Time: 0.00833333\n";
  const double bob[6] = {0.0, 0.5, 1.0, 0.5, 0.0, -0.5};
  for (int f = 0; f < 6; ++f) {
    text += fmt::format("{} {} -20 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 5 + 10 * f, 35 + bob[f]);
  }
  return text;
}

TEST(BvhTranslation, RootOffsetEqualToFirstPositionWithAbsoluteChannels) {
  const std::string text = PymoFile();
  const Scene scene = ParseBvh(text, "pymo.bvh");
  EXPECT_EQ(ModeOf(scene, "Hips"), TranslationMode::kReplace);
  const double bob[6] = {0.0, 0.5, 1.0, 0.5, 0.0, -0.5};
  for (int f = 0; f < 6; ++f) {
    EXPECT_NEAR(WorldOf(scene, "Hips", f).x(), 5 + 10 * f, 1e-12);
    EXPECT_NEAR(WorldOf(scene, "Head", f).y(), 57 + bob[f], 1e-12);
    EXPECT_NEAR(WorldOf(scene, "LeftFoot", f).y(), 1 + bob[f], 1e-12);
    EXPECT_NEAR(HeightOf(scene, 1, f), 56.0, 1e-12);
  }
  BvhReadOptions add;
  add.translation = BvhTranslation::kAdd;
  EXPECT_NEAR(WorldOf(ParseBvh(text, "pymo.bvh", add), "LeftFoot", 0).y(), 36.0, 1e-12);
  const std::vector<double> written = MotionValues(FormatBvh(*scene.skeleton, scene.clips[0]));
  EXPECT_EQ(written, MotionValues(text));
}

// MakeHuman / iClone style: Z up, the root OFFSET holds the hip height and the root's position
// channels are small deltas. Root OFFSET (0,1.2,9.5); Spine (0,0,2); Head (0,0,3);
// LeftUpLeg (1,0,-1); LeftLeg (0,0,-4); LeftFoot (0,0,-4.4).
// Read right: head at 9.5+2+3 = 14.5 + d, foot at 9.5-1-4-4.4 = 0.1 + d, height 14.4. The root
// also drifts along Y by -0.25 per frame (a spread of 0.75 > 0.5 x 1.2: that axis says nothing).
std::string DeltaRootFile() {
  std::string text =
      "HIERARCHY\nROOT Root\n{\nOFFSET 0 1.2 9.5\nCHANNELS 6 Xposition Yposition Zposition "
      "Xrotation Yrotation Zrotation\n"
      "JOINT Spine\n{\nOFFSET 0 0 2\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
      "JOINT Head\n{\nOFFSET 0 0 3\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
      "End Site\n{\nOFFSET 0 0 1\n}\n}\n}\n"
      "JOINT LeftUpLeg\n{\nOFFSET 1 0 -1\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
      "JOINT LeftLeg\n{\nOFFSET 0 0 -4\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
      "JOINT LeftFoot\n{\nOFFSET 0 0 -4.4\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
      "End Site\n{\nOFFSET 0 -1 0\n}\n}\n}\n}\n}\n"
      "MOTION\nFrames: 4\nFrame Time: 0.041667\n";
  const double d[4] = {0.0, 0.05, 0.1, 0.05};
  for (int f = 0; f < 4; ++f) {
    text += fmt::format("0 {} {} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", -0.25 * f, d[f]);
  }
  return text;
}

TEST(BvhTranslation, RootWithDeltaChannelsAddsThem) {
  const std::string text = DeltaRootFile();
  const Scene scene = ParseBvh(text, "delta.bvh");
  EXPECT_EQ(ModeOf(scene, "Root"), TranslationMode::kAdd);
  const double d[4] = {0.0, 0.05, 0.1, 0.05};
  for (int f = 0; f < 4; ++f) {
    EXPECT_NEAR(WorldOf(scene, "Head", f).z(), 14.5 + d[f], 1e-12);
    EXPECT_NEAR(WorldOf(scene, "LeftFoot", f).z(), 0.1 + d[f], 1e-12);
    EXPECT_NEAR(WorldOf(scene, "Root", f).y(), 1.2 - 0.25 * f, 1e-12);
    EXPECT_NEAR(HeightOf(scene, 2, f), 14.4, 1e-12);
  }
  for (const std::string& w : scene.warnings) EXPECT_EQ(w.find("do not decide"), w.npos) << w;
  EXPECT_EQ(MotionValues(FormatBvh(*scene.skeleton, scene.clips[0])), MotionValues(text));
}

// A lone root Hips at OFFSET `offset` (six channels, an End Site 10 above) with two frames of
// motion, `rows` (six values and a newline per frame).
std::string HipsOnlyFile(const std::string& offset, const std::string& rows) {
  return "HIERARCHY\nROOT Hips\n{\nOFFSET " + offset +
         "\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
         "End Site\n{\nOFFSET 0 10 0\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n" +
         rows;
}

TEST(BvhTranslation, UndecidedDataWarnAndAdd) {
  // Root OFFSET y = 50, channels hold y = 25 on every frame: neither restating nor near zero.
  const std::string text = HipsOnlyFile("0 50 0", "0 25 0 0 0 0\n0 25 0 0 0 0\n");
  const Scene scene = ParseBvh(text, "odd.bvh");
  EXPECT_EQ(ModeOf(scene, "Hips"), TranslationMode::kAdd);
  EXPECT_NEAR(WorldOf(scene, "Hips", 0).y(), 75.0, 1e-12);
  int warned = 0;
  for (const std::string& w : scene.warnings) {
    if (w.find("odd.bvh: joint 'Hips': the data do not decide") != w.npos) ++warned;
  }
  EXPECT_EQ(warned, 1);
  BvhReadOptions replace;
  replace.translation = BvhTranslation::kReplace;
  EXPECT_NEAR(WorldOf(ParseBvh(text, "odd.bvh", replace), "Hips", 0).y(), 25.0, 1e-12);
}

// LAFAN1 / MotionBuilder / Perception Neuron style: every joint has 6 channels. The Hips OFFSET
// (0, 90, -20) is where the body stood at rest; in this clip it walked away along Z and stays
// near z = 200 (spread 4 < 0.5 x 20: the axis is judged, and 200 is -10 x the OFFSET: neither
// reading fits), while Y restates 90. Its own data do not decide; every other joint restates its
// OFFSET (`others_restate`) or holds zero (`!others_restate`), and the file's convention decides.
//   Hips (0,90,-20) - Spine (0,10,0) - Head (0,20,0)
//   Hips - LeftUpLeg (10,0,0) - LeftLeg (0,-40,0) - LeftFoot (0,-45,0)
// Read as absolute: head at y = 90 + 30 = 120, foot at 90 - 85 = 5, height 115. Read as deltas
// the Hips floats 90 up (head at 210) and every other bone doubles.
std::string WalkedAwayFile(bool others_restate) {
  auto joint = [](const char* kind, const char* name, const char* offset) {
    return fmt::format(
        "{} {}\n{{\nOFFSET {}\nCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation "
        "Xrotation\n",
        kind, name, offset);
  };
  std::string text =
      "HIERARCHY\n" + joint("ROOT", "Hips", "0 90 -20") + joint("JOINT", "Spine", "0 10 0") +
      joint("JOINT", "Head", "0 20 0") + "End Site\n{\nOFFSET 0 5 0\n}\n}\n}\n" +
      joint("JOINT", "LeftUpLeg", "10 0 0") + joint("JOINT", "LeftLeg", "0 -40 0") +
      joint("JOINT", "LeftFoot", "0 -45 0") + "End Site\n{\nOFFSET 0 0 8\n}\n}\n}\n}\n}\n";
  text += "MOTION\nFrames: 5\nFrame Time: 0.0166667\n";
  const double z[5] = {198, 199, 200, 201, 202};
  const double r = others_restate ? 1.0 : 0.0;
  for (int f = 0; f < 5; ++f) {
    text += fmt::format(
        "{} 90 {} 0 0 0  0 {} 0 0 0 0  0 {} 0 0 0 0  {} 0 0 0 0 0  0 {} 0 0 0 0  0 {} 0 0 0 0\n",
        0.5 * f, z[f], 10 * r, 20 * r, 10 * r, -40 * r, -45 * r);
  }
  return text;
}

TEST(BvhTranslation, TheFileConventionDecidesAJointItsOwnDataLeaveOpen) {
  const std::string text = WalkedAwayFile(true);
  const Scene scene = ParseBvh(text, "walked.bvh");
  for (const char* j : {"Hips", "Spine", "Head", "LeftUpLeg", "LeftLeg", "LeftFoot"}) {
    EXPECT_EQ(ModeOf(scene, j), TranslationMode::kReplace) << j;
  }
  for (int f = 0; f < 5; ++f) {
    EXPECT_NEAR(WorldOf(scene, "Hips", f).y(), 90.0, 1e-12);
    EXPECT_NEAR(WorldOf(scene, "Hips", f).z(), 198.0 + f, 1e-12);
    EXPECT_NEAR(WorldOf(scene, "Head", f).y(), 120.0, 1e-12);
    EXPECT_NEAR(WorldOf(scene, "LeftFoot", f).y(), 5.0, 1e-12);
  }
  // The file as a whole decides: no warning about the convention.
  for (const std::string& w : scene.warnings) EXPECT_EQ(w.find("do not decide"), w.npos) << w;
  // Forced deltas: the figure floats 90 up and its bones double (head 210, foot 10).
  BvhReadOptions add;
  add.translation = BvhTranslation::kAdd;
  const Scene floated = ParseBvh(text, "walked.bvh", add);
  EXPECT_NEAR(WorldOf(floated, "Head", 0).y(), 90 + 90 + 60, 1e-12);
  EXPECT_NEAR(WorldOf(floated, "LeftFoot", 0).y(), 180 - 170, 1e-12);
  EXPECT_EQ(MotionValues(FormatBvh(*scene.skeleton, scene.clips[0])), MotionValues(text));

  // The same Hips in a file whose other joints hold deltas (zeros): read as deltas, as they are.
  const std::string deltas = WalkedAwayFile(false);
  const Scene added = ParseBvh(deltas, "walked_deltas.bvh");
  EXPECT_EQ(ModeOf(added, "Hips"), TranslationMode::kAdd);
  EXPECT_EQ(ModeOf(added, "Spine"), TranslationMode::kAdd);
  EXPECT_NEAR(WorldOf(added, "Hips", 0).y(), 180.0, 1e-12);
  EXPECT_NEAR(WorldOf(added, "Head", 0).y(), 210.0, 1e-12);
  for (const std::string& w : added.warnings) EXPECT_EQ(w.find("do not decide"), w.npos) << w;
}

TEST(BvhTranslation, AFileOfBothConventionsWarnsForTheJointItCannotDecide) {
  // Spine restates its OFFSET, LeftUpLeg holds zeros: the file has no single convention, and
  // the walked-away Hips is read as deltas with a warning that says so.
  std::string text = WalkedAwayFile(true);
  const size_t motion = text.find("Frame Time:");
  std::string rows = text.substr(motion);
  // LeftUpLeg's X value (10, its OFFSET) becomes 0 on every row: field 19 of each row.
  std::istringstream in(rows);
  std::string line, out;
  std::getline(in, line);
  out += line + "\n";
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> v;
    std::string x;
    while (fields >> x) v.push_back(x);
    v[18] = "0";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + v[i];
    out += "\n";
  }
  text = text.substr(0, motion) + out;
  const Scene scene = ParseBvh(text, "mixed.bvh");
  EXPECT_EQ(ModeOf(scene, "Spine"), TranslationMode::kReplace);
  EXPECT_EQ(ModeOf(scene, "LeftUpLeg"), TranslationMode::kAdd);
  EXPECT_EQ(ModeOf(scene, "Hips"), TranslationMode::kAdd);
  int warned = 0;
  for (const std::string& w : scene.warnings) {
    if (w.find("mixed.bvh: joint 'Hips': the data do not decide") == 0) {
      ++warned;
      EXPECT_NE(w.find("Z: median 200 is -10 x OFFSET -20"), w.npos) << w;
      EXPECT_NE(w.find("nor do the file's other joints: 1 read as deltas, 4 as absolute"), w.npos)
          << w;
      EXPECT_NE(w.find("read as deltas (--bvh-translation replace"), w.npos) << w;
    }
  }
  EXPECT_EQ(warned, 1) << ::testing::PrintToString(scene.warnings);
}

// A joint whose values turn around its parent at one distance (10 units) while its OFFSET is
// (10, 0, 0): no axis says anything by its values alone (X and Y spread over +-10), but only the
// absolute reading keeps the bone's length: it is read so. Under the deltas reading the bone
// would stretch from 0 to 20.
TEST(BvhTranslation, ABoneThatKeepsItsLengthOnlyAsAbsoluteReadsAbsolute) {
  std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT Arm\n{\nOFFSET 10 0 0\nCHANNELS 3 Xposition Yposition Zposition\n"
      "End Site\n{\nOFFSET 1 0 0\n}\n}\n}\nMOTION\nFrames: 8\nFrame Time: 0.1\n";
  for (int f = 0; f < 8; ++f) {
    const double a = f * M_PI / 4;
    text += fmt::format("0 0 0 {} {} 0\n", 10 * std::cos(a), 10 * std::sin(a));
  }
  const Scene scene = ParseBvh(text, "turn.bvh");
  EXPECT_EQ(ModeOf(scene, "Arm"), TranslationMode::kReplace);
  for (int f = 0; f < 8; ++f) EXPECT_NEAR(WorldOf(scene, "Arm", f).norm(), 10.0, 1e-9) << f;
  for (const std::string& w : scene.warnings) EXPECT_EQ(w.find("do not decide"), w.npos) << w;
  EXPECT_EQ(MotionValues(FormatBvh(*scene.skeleton, scene.clips[0])), MotionValues(text));
}

TEST(BvhTranslation, ZeroOffsetNeedsNoDecision) {
  const std::string text = HipsOnlyFile("0 0 0", "3 25 0 0 0 0\n1 -4 7 0 0 0\n");
  const Scene scene = ParseBvh(text, "zero.bvh");
  EXPECT_EQ(ModeOf(scene, "Hips"), TranslationMode::kAdd);
  EXPECT_NEAR(WorldOf(scene, "Hips", 1).z(), 7.0, 1e-12);
  for (const std::string& w : scene.warnings) EXPECT_EQ(w.find("do not decide"), w.npos) << w;
}

TEST(BvhUnit, StatedOrEstimatedFromTheHeight) {
  // The six-channel figure is 120 units tall (see above): as centimetres it is 1.2 m, the unit
  // nearest a 1.6 m figure on a log scale (dm would make it 12 m, mm 0.12 m, in 3.05 m).
  const Scene estimated = ParseBvh(SixChannelFile(), "six.bvh");
  EXPECT_EQ(estimated.file_unit_metres, 0.0);
  EXPECT_DOUBLE_EQ(estimated.estimated_unit_metres, 0.01);
  int named = 0;
  for (const std::string& w : estimated.warnings) {
    if (w.find("estimated cm from the body: the figure stands 120 units = 1.2 m") != w.npos)
      ++named;
  }
  EXPECT_EQ(named, 1);
  BvhReadOptions stated;
  stated.unit_metres = *ParseBvhUnit("in");
  const Scene inches = ParseBvh(SixChannelFile(), "six.bvh", stated);
  EXPECT_DOUBLE_EQ(inches.file_unit_metres, 0.0254);
  EXPECT_EQ(inches.estimated_unit_metres, 0.0);
  for (const std::string& w : inches.warnings) EXPECT_EQ(w.find("unit"), w.npos) << w;
  EXPECT_DOUBLE_EQ(EstimateBvhUnit(1.7), 1.0);
  EXPECT_DOUBLE_EQ(EstimateBvhUnit(17), 0.1);
  EXPECT_DOUBLE_EQ(EstimateBvhUnit(1700), 0.001);
  EXPECT_DOUBLE_EQ(EstimateBvhUnit(65), 0.0254);
  EXPECT_EQ(EstimateBvhUnit(0), 0.0);
  for (const std::string& u : BvhUnitNames()) EXPECT_TRUE(ParseBvhUnit(u)) << u;
  EXPECT_FALSE(ParseBvhUnit("ft"));
}

// Every BVH of the corpus: the automatic reading equals the old one (deltas everywhere) on every
// joint and frame, except where the rule decides "replace"; the files where it does are listed.
TEST(BvhTranslation, CorpusReadsAsBeforeUnlessTheRuleChangesIt) {
  RIGEL_REQUIRE_SHARED_DATA();
  std::vector<std::string> changed, undecided;
  for (const std::string& path : testing::SharedFiles(".bvh")) {
    const Scene now = ReadBvh(path);
    BvhReadOptions add;
    add.translation = BvhTranslation::kAdd;
    const Scene before = ReadBvh(path, add);
    int replaced = 0;
    for (int j = 0; j < now.skeleton->num_joints(); ++j) {
      replaced += now.skeleton->translation_mode(j) == TranslationMode::kReplace;
    }
    for (const std::string& w : now.warnings) {
      const size_t at = w.find("': the data do not decide");
      if (at == w.npos) continue;
      const size_t name = w.rfind("joint '", at) + 7;
      undecided.push_back(std::filesystem::path(path).filename().string() + ":" +
                          w.substr(name, at - name));
    }
    Pose a(*now.skeleton), b(*before.skeleton);
    double worst = 0;
    for (int f = 0; f < now.clips[0].num_frames(); ++f) {
      a.SetFromRow(*now.skeleton, now.clips[0].frame(f));
      b.SetFromRow(*before.skeleton, before.clips[0].frame(f));
      for (int j = 0; j < now.skeleton->num_joints(); ++j) {
        worst = std::max(worst, (a.world[j].translation() - b.world[j].translation()).norm());
      }
    }
    if (replaced == 0) {
      EXPECT_EQ(worst, 0.0) << path;
    } else {
      EXPECT_GT(worst, 0.0) << path;
      changed.push_back(std::filesystem::path(path).filename().string() + ":" +
                        std::to_string(replaced));
    }
  }
  // See docs/formats.md ("BVH position channels") for why: the PyMO walk's root OFFSET is a
  // position (y 35.4) its absolute channels restate, so it read 35 units up. The VR recording's
  // three trackers (head, hands), every joint of the LAFAN1/MotionBuilder Geno skeleton but its 8
  // ends whose OFFSET is 0 or ~1e-14 (both readings the same), and all 59 joints of the Perception
  // Neuron capture restate their OFFSETs: read as deltas each bone doubled
  // (TheChangedFilesStandAsTheirManifestSays checks the figures). MakeHuman's T-pose root restates
  // its OFFSET in y (0.6394 = 0.6394) but holds 0.028 against 0.631 in z: its own data do not
  // decide, and the file's 141 other decided joints all hold deltas, so it is read as deltas (as
  // before) without a warning.
  EXPECT_EQ(changed, (std::vector<std::string>{"AV_8Walk_Meredith_HVHA_Rep1.bvh:1",
                                               "godot_vr_tracking_test.bvh:3", "Geno_bind.bvh:67",
                                               "milad_perception_neuron.bvh:59"}))
      << ::testing::PrintToString(changed);
  EXPECT_EQ(undecided, std::vector<std::string>{}) << ::testing::PrintToString(undecided);
}

// The lowest point of the figure (joints and End Sites) along Y on frame `f`.
double LowestY(const Scene& scene, int f) {
  const Skeleton& s = *scene.skeleton;
  Pose pose(s);
  pose.SetFromRow(s, scene.clips.at(0).frame(f));
  double low = INFINITY;
  for (int j = 0; j < s.num_joints(); ++j) low = std::min(low, pose.world[j].translation().y());
  for (const EndSite& e : s.end_sites()) low = std::min(low, (pose.world[e.parent] * e.offset).y());
  return low;
}

// Median over the frames of (world length of the bone from its parent to `joint`) / |OFFSET|:
// 1 when the bones keep the skeleton's lengths, 2 when every bone is doubled.
double BoneRatio(const Scene& scene, int joint) {
  const Skeleton& s = *scene.skeleton;
  Pose pose(s);
  std::vector<double> ratios;
  for (int f = 0; f < scene.clips[0].num_frames(); ++f) {
    pose.SetFromRow(s, scene.clips[0].frame(f));
    ratios.push_back(
        (pose.world[joint].translation() - pose.world[s.parent(joint)].translation()).norm() /
        s.rest_translation(joint).norm());
  }
  std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
  return ratios[ratios.size() / 2];
}

// The files whose reading the rule changes, checked by forward kinematics against what
// ../shared/data/MANIFEST.md says a person sees: every bone its OFFSET's length (not doubled),
// the height the MANIFEST gives (head joint above the lowest foot/toe joint), the figure on the
// ground; and the old reading (deltas) wrong by as much as the MANIFEST says.
TEST(BvhTranslation, TheChangedFilesStandAsTheirManifestSays) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string root = rigel::testing::SharedData();
  BvhReadOptions add;
  add.translation = BvhTranslation::kAdd;
  struct Expect {
    const char* file;
    // MANIFEST: head joint above the lowest foot point (End Sites included) on frame 0 (0: not
    // given), and the scale of the figure for the ground check.
    double height, size;
  };
  const Expect files[] = {
      {"/wild/wspr_bvh-matlab/milad_perception_neuron.bvh", 155.5, 155.5},
      {"/wild/orangeduck_lafan1-resolved/Geno_bind.bvh", 153.2, 153.2},
      {"/wild/Firepal_godot_vr_mocap/godot_vr_tracking_test.bvh", 0.0, 0.0},
      {"/pymo_emotion/AV_8Walk_Meredith_HVHA_Rep1.bvh", 0.0, 55.0},  // "~55 in to head joint"
  };
  for (const Expect& e : files) {
    SCOPED_TRACE(e.file);
    const Scene now = ReadBvh(root + e.file);
    const Scene before = ReadBvh(root + e.file, add);
    const Skeleton& s = *now.skeleton;
    // Bones: each as long as its OFFSET read right, doubled in the old reading.
    for (int j = 0; j < s.num_joints(); ++j) {
      if (s.parent(j) < 0 || s.rest_translation(j).norm() <= 1e-3 * HeightOf(now, 1, 0)) continue;
      if (s.translation_mode(j) != TranslationMode::kReplace) continue;
      EXPECT_NEAR(BoneRatio(now, j), 1.0, 0.05) << s.name(j);
      EXPECT_NEAR(BoneRatio(before, j), 2.0, 0.1) << s.name(j);
    }
    if (e.height > 0) {
      EXPECT_NEAR(WorldOf(now, "Head", 0).y() - LowestY(now, 0), e.height, 0.1);
      EXPECT_GT(WorldOf(before, "Head", 0).y() - LowestY(before, 0), 1.9 * e.height);
    }
    if (e.size > 0) {
      // On the ground read right; the old reading floats (PyMO: 38 of its 55 units up).
      EXPECT_LT(std::abs(LowestY(now, 0)), 0.05 * e.size);
      if (e.height == 0) {
        EXPECT_GT(LowestY(before, 0), 0.5 * e.size);
      }
    }
  }
  // The VR recording's head tracker: 1.6148 m up on every frame (its channels are its position
  // under a root at the origin), not 3.23 m.
  const Scene vr = ReadBvh(root + "/wild/Firepal_godot_vr_mocap/godot_vr_tracking_test.bvh");
  for (int f = 0; f < vr.clips[0].num_frames(); ++f) {
    EXPECT_NEAR(WorldOf(vr, "head", f).y(), 1.6148, 1e-4) << f;
  }
}

}  // namespace
}  // namespace rigel
