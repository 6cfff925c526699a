// BVH reader: layouts and number forms it must accept, and the malformed-file corpus it must
// reject with "file:line: expected X, found Y".
#include "importers/bvh_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/pose.h"
#include "support/import_error_of.h"
#include "test_util.h"

namespace rigel {
namespace {

using C = ChannelType;

// Line numbers in the comments are the ones the malformed cases below refer to.
// clang-format off
const char* const kBase =
    "HIERARCHY\n"                                                                 // 1
    "ROOT Hips\n"                                                                 // 2
    "{\n"                                                                         // 3
    "  OFFSET 0 0 0\n"                                                            // 4
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"  // 5
    "  JOINT Chest\n"                                                             // 6
    "  {\n"                                                                       // 7
    "    OFFSET 0 5 0\n"                                                          // 8
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n"                              // 9
    "    End Site\n"                                                              // 10
    "    {\n"                                                                     // 11
    "      OFFSET 0 3 0\n"                                                        // 12
    "    }\n"                                                                     // 13
    "  }\n"                                                                       // 14
    "}\n"                                                                         // 15
    "MOTION\n"                                                                    // 16
    "Frames: 2\n"                                                                 // 17
    "Frame Time: 0.0333333\n"                                                     // 18
    "10.000000 11.000000 12.000000 13.000000 14.000000 15.000000 16.000000 17.000000 18.000000\n"  // 19
    "20.000000 21.000000 22.000000 23.000000 24.000000 25.000000 26.000000 27.000000 28.000000\n";  // 20
// clang-format on

// kBase with `line` (1-based) replaced by `text` (several lines allowed, "" deletes it).
std::string Edit(int line, const std::string& text) {
  std::string out;
  std::string s = kBase;
  size_t pos = 0;
  for (int n = 1; pos < s.size(); ++n) {
    const size_t nl = s.find('\n', pos);
    const std::string current = s.substr(pos, nl - pos + 1);
    if (n == line) {
      if (!text.empty()) out += text + "\n";
    } else {
      out += current;
    }
    pos = nl + 1;
  }
  return out;
}

// The message of the error parsing `text` (as "case.bvh") raises.
std::string ErrorOf(const std::string& text) {
  return rigel::testing::ImportErrorOf([&] { ParseBvh(text, "case.bvh"); });
}

TEST(BvhReader, BaseParses) {
  // The unit is stated so that no warning is expected (an unstated unit is estimated, with one).
  BvhReadOptions stated;
  stated.unit_metres = 0.01;
  const Scene scene = ParseBvh(kBase, "base.bvh", stated);
  ASSERT_TRUE(scene.skeleton);
  EXPECT_EQ(scene.skeleton->num_joints(), 2);
  EXPECT_EQ(scene.skeleton->num_channels(), 9);
  ASSERT_EQ(scene.clips.size(), 1u);
  const Clip& clip = scene.clips[0];
  EXPECT_EQ(clip.num_frames(), 2);
  EXPECT_DOUBLE_EQ(clip.frame_time(), 0.0333333);
  EXPECT_DOUBLE_EQ(clip.at(0, 0), 10.0);               // position: file units
  EXPECT_DOUBLE_EQ(clip.at(0, 3), 13.0 * kRadPerDeg);  // rotation: radians
  EXPECT_DOUBLE_EQ(clip.at(1, 8), 28.0 * kRadPerDeg);
  EXPECT_TRUE(scene.warnings.empty());
}

struct Malformed {
  const char* what;
  std::string text;
  std::string message;  // exact expected message
};

// One case per error the issue lists (and a few more).
TEST(BvhReader, MalformedCorpus) {
  std::string deep = "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\n";
  for (int d = 1; d <= Skeleton::kMaxDepth; ++d) {
    deep += "JOINT j" + std::to_string(d) + "\n{\nOFFSET 0 1 0\n";
  }
  std::string many = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\n";
  for (int j = 1; j <= Skeleton::kMaxJoints; ++j) {
    many += "JOINT j" + std::to_string(j) + "\n{\nOFFSET 0 1 0\n}\n";
  }
  const std::vector<Malformed> cases = {
      {"unknown keyword", Edit(8, "    OFSET 0 5 0"),
       "case.bvh:8: expected JOINT, End Site, OFFSET, CHANNELS or '}', found 'OFSET' (unknown "
       "keyword)"},
      {"unknown top-level keyword", Edit(2, "BONE Hips"),
       "case.bvh:2: expected ROOT or MOTION, found 'BONE' (unknown keyword)"},
      {"missing HIERARCHY", Edit(1, "HIERARCHIE"),
       "case.bvh:1: expected 'HIERARCHY', found 'HIERARCHIE'"},
      {"CHANNELS count too big", Edit(9, "    CHANNELS 7 Zrotation Xrotation Yrotation"),
       "case.bvh:9: expected a channel count from 0 to 6, found '7'"},
      {"CHANNELS count not a number", Edit(9, "    CHANNELS three Zrotation Xrotation Yrotation"),
       "case.bvh:9: expected a channel count from 0 to 6, found 'three'"},
      {"bad channel name", Edit(9, "    CHANNELS 3 Zrotation Xrot Yrotation"),
       "case.bvh:9: expected channel name 2 of 3 (Xposition, Yposition, Zposition, Xrotation, "
       "Yrotation or Zrotation), found 'Xrot'"},
      {"fewer channel names than the count",
       Edit(9, "    CHANNELS 4 Zrotation Xrotation Yrotation"),
       "case.bvh:10: expected channel name 4 of 4 (Xposition, Yposition, Zposition, Xrotation, "
       "Yrotation or Zrotation), found 'End'"},
      {"more channel names than the count", Edit(9, "    CHANNELS 2 Zrotation Xrotation Yrotation"),
       "case.bvh:9: expected JOINT, End Site, OFFSET, CHANNELS or '}', found 'Yrotation' (more "
       "channel names than CHANNELS declares?)"},
      {"channel twice", Edit(9, "    CHANNELS 3 Zrotation Xrotation Zrotation"),
       "case.bvh:9: expected each channel at most once per joint, found 'Zrotation' twice"},
      {"duplicate joint name", Edit(6, "  JOINT Hips"),
       "case.bvh:6: expected a unique joint name, found 'Hips' again (first defined at line 2)"},
      {"missing closing brace", Edit(14, ""),
       "case.bvh:15: expected '}' closing joint 'Hips' (opened at line 2), found 'MOTION' "
       "(unbalanced braces)"},
      {"extra closing brace", Edit(15, "}\n}"),
       "case.bvh:16: expected ROOT or MOTION, found '}' (unbalanced braces: one '}' too many)"},
      {"hierarchy cut short", std::string(kBase).substr(0, std::string(kBase).find("    End Site")),
       "case.bvh:9: expected '}' closing joint 'Chest' (opened at line 6), found end of file "
       "(hierarchy cut short)"},
      {"OFFSET with two numbers", Edit(8, "    OFFSET 0 5"),
       "case.bvh:8: expected 3 numbers after OFFSET, found 2 (end of line)"},
      {"OFFSET not a number", Edit(8, "    OFFSET 0 five 0"),
       "case.bvh:8: expected a number (OFFSET), found 'five'"},
      {"OFFSET with a comma", Edit(8, "    OFFSET 0 5,5 0"),
       "case.bvh:8: expected a number (OFFSET) with '.' as decimal separator, found '5,5'"},
      {"motion cut short", Edit(17, "Frames: 3"),
       "case.bvh:21: expected 3 motion rows (Frames: 3), found 2 (motion cut short)"},
      {"non-numeric value", Edit(19, "10 11 abc 13 14 15 16 17 18"),
       "case.bvh:19: expected a number at row 1, value 3 (Hips Zposition), found 'abc'"},
      {"NaN", Edit(20, "20 21 22 23 24 nan 26 27 28"),
       "case.bvh:20: expected a finite number at row 2, value 6 (Hips Yrotation), found 'nan'"},
      {"Inf", Edit(19, "10 11 12 13 14 15 -inf 17 18"),
       "case.bvh:19: expected a finite number at row 1, value 7 (Chest Zrotation), found '-inf'"},
      {"overflow to Inf", Edit(19, "10 11 12 13 14 15 16 1e999 18"),
       "case.bvh:19: expected a finite number at row 1, value 8 (Chest Xrotation), found '1e999'"},
      {"comma as decimal separator", Edit(19, "10 11 12,5 13 14 15 16 17 18"),
       "case.bvh:19: expected a number with '.' as decimal separator at row 1, value 3 (Hips "
       "Zposition), found '12,5'"},
      {"row with too few values", Edit(19, "10 11 12 13 14 15 16 17"),
       "case.bvh:19: expected 9 values in motion row 1, found 8"},
      {"row with too many values", Edit(20, "20 21 22 23 24 25 26 27 28 29"),
       "case.bvh:20: expected 9 values in motion row 2, found more (extra value '29')"},
      {"Frames: 0", Edit(17, "Frames: 0"), "case.bvh:17: expected a frame count > 0, found '0'"},
      {"Frames: negative", Edit(17, "Frames: -4"),
       "case.bvh:17: expected a frame count > 0, found '-4'"},
      {"Frames: not an integer", Edit(17, "Frames: 2.5"),
       "case.bvh:17: expected a whole number of frames after 'Frames:', found '2.5'"},
      {"Frames: more than the file can hold", Edit(17, "Frames: 1000000"),
       "case.bvh:17: expected at most 10 frames (the rest of the file holds 180 bytes, 9 values "
       "per frame), found 'Frames: 1000000'"},
      {"missing Frames:", Edit(17, "Frame: 2"), "case.bvh:17: expected 'Frames:', found 'Frame:'"},
      {"Frame Time: 0", Edit(18, "Frame Time: 0"),
       "case.bvh:18: expected a frame time > 0, found '0'"},
      {"Frame Time: negative", Edit(18, "Frame Time: -0.01"),
       "case.bvh:18: expected a frame time > 0, found '-0.01'"},
      {"Frame Time: NaN", Edit(18, "Frame Time: nan"),
       "case.bvh:18: expected a frame time in seconds (finite), found 'nan'"},
      {"Frame Time: Inf", Edit(18, "Frame Time: inf"),
       "case.bvh:18: expected a frame time in seconds (finite), found 'inf'"},
      // Issue 25: a huge frame time gave glTF key times of +inf, a denormal one all keys at 0.
      {"Frame Time: 1e308", Edit(18, "Frame Time: 1e308"),
       "case.bvh:18: expected a frame time from 1e-06 to 86400 s (this one is above 86400 s (a "
       "day per frame)), found '1e+308'"},
      {"Frame Time: 1e-320", Edit(18, "Frame Time: 1e-320"),
       "case.bvh:18: expected a frame time from 1e-06 to 86400 s (this one is below 1e-06 s "
       "(keys would share times)), found '1e-320'"},
      {"empty file", "",
       "case.bvh:0: expected 'HIERARCHY', found end of file (hierarchy cut short)"},
      {"nesting too deep", deep,
       "case.bvh:" + std::to_string(2 + 3 * Skeleton::kMaxDepth) +
           ": expected joints nested at most 256 deep, found deeper nesting"},
      {"too many joints", many,
       "case.bvh:" + std::to_string(1 + 4 * Skeleton::kMaxJoints) +
           ": expected at most 1024 joints, found more"},
  };
  for (const Malformed& c : cases) {
    EXPECT_EQ(ErrorOf(c.text), c.message) << "case: " << c.what;
  }
}

TEST(BvhReader, ExtraMotionRowsWarn) {
  BvhReadOptions stated;  // no unit estimate warning
  stated.unit_metres = 0.01;
  const Scene scene = ParseBvh(std::string(kBase) + "1 2 3 4 5 6 7 8 9\n\n", "extra.bvh", stated);
  EXPECT_EQ(scene.clips[0].num_frames(), 2);
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_EQ(scene.warnings[0],
            "extra.bvh:21: 1 motion row after the 2 declared by 'Frames:' ignored");
}

// A hierarchy that opens with JOINT where ROOT belongs: Blender and three.js read it as a root,
// and so does rigel, with a warning naming the file and line. The figure is the same as with ROOT.
TEST(BvhReader, ATopLevelJointReadsAsARootWithAWarning) {
  BvhReadOptions stated;  // no unit estimate warning
  stated.unit_metres = 0.01;
  const Scene scene = ParseBvh(Edit(2, "JOINT Hips"), "joint_root.bvh", stated);
  const Scene root = ParseBvh(kBase, "base.bvh", stated);
  ASSERT_EQ(scene.warnings.size(), 1u) << ::testing::PrintToString(scene.warnings);
  EXPECT_EQ(scene.warnings[0],
            "joint_root.bvh:2: the hierarchy has 'JOINT' where 'ROOT' belongs; read as a root "
            "joint");
  ASSERT_EQ(scene.skeleton->num_joints(), 2);
  EXPECT_EQ(scene.skeleton->parent(0), -1);
  EXPECT_EQ(scene.skeleton->name(0), "Hips");
  EXPECT_EQ(scene.skeleton->parent(1), 0);
  Pose a(*scene.skeleton), b(*root.skeleton);
  for (int f = 0; f < 2; ++f) {
    a.SetFromRow(*scene.skeleton, scene.clips[0].frame(f));
    b.SetFromRow(*root.skeleton, root.clips[0].frame(f));
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(a.world[j].translation(), b.world[j].translation()) << f << " " << j;
    }
  }
  // A JOINT inside a joint is still a child; a stray keyword at the top is still an error.
  EXPECT_EQ(ErrorOf(Edit(2, "BONE Hips")),
            "case.bvh:2: expected ROOT or MOTION, found 'BONE' (unknown keyword)");
}

// A humanoid whose file axis Y points down (Azure Kinect's camera frame): its head is below its
// feet on every frame. The reader says so, naming the file, the joints and the axis; the same
// figure with Y up gets no such warning.
std::string HumanoidFile(double up) {
  const auto y = [up](double v) { return std::to_string(v * up); };
  return "HIERARCHY\nROOT Hips\n{\nOFFSET 0 " + y(90) +
         " 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
         "JOINT Spine\n{\nOFFSET 0 " +
         y(20) +
         " 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "JOINT Head\n{\nOFFSET 0 " +
         y(45) +
         " 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "End Site\n{\nOFFSET 0 " +
         y(15) +
         " 0\n}\n}\n}\n"
         "JOINT LeftUpLeg\n{\nOFFSET 10 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "JOINT LeftLeg\n{\nOFFSET 0 " +
         y(-45) +
         " 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "JOINT LeftFoot\n{\nOFFSET 0 " +
         y(-40) +
         " 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "End Site\n{\nOFFSET 0 0 10\n}\n}\n}\n}\n"
         "JOINT RightUpLeg\n{\nOFFSET -10 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "JOINT RightLeg\n{\nOFFSET 0 " +
         y(-45) +
         " 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "JOINT RightFoot\n{\nOFFSET 0 " +
         y(-40) +
         " 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
         "End Site\n{\nOFFSET 0 0 10\n}\n}\n}\n}\n}\n"
         "MOTION\nFrames: 3\nFrame Time: 0.0333333\n"
         "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
         "5 0 0 0 20 0 10 0 0 0 0 0 -30 0 0 40 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
         "10 0 0 0 -20 0 0 0 0 0 0 0 0 0 0 0 0 0 -30 0 0 40 0 0 0 0 0 0 0 0\n";
}

TEST(BvhReader, AFigureUpsideDownInItsFileIsSaid) {
  BvhReadOptions stated;  // no unit estimate warning
  stated.unit_metres = 0.01;
  const Scene down = ParseBvh(HumanoidFile(-1), "kinect.bvh", stated);
  ASSERT_EQ(down.warnings.size(), 1u) << ::testing::PrintToString(down.warnings);
  EXPECT_EQ(down.warnings[0].rfind(
                "kinect.bvh: the figure is upside down: its head ('Head') is below its feet "
                "('LeftFoot, RightFoot') along Y on every frame (3 frames, by ",
                0),
            0u)
      << down.warnings[0];
  EXPECT_NE(down.warnings[0].find("so the file's +Y points down"), std::string::npos);
  // Independently: by FK the head is below both feet along Y on every frame.
  Pose pose(*down.skeleton);
  const Skeleton& s = *down.skeleton;
  for (int f = 0; f < 3; ++f) {
    pose.SetFromRow(s, down.clips[0].frame(f));
    const double head = pose.world[s.FindJoint("Head")].translation().y();
    EXPECT_LT(head, pose.world[s.FindJoint("LeftFoot")].translation().y());
    EXPECT_LT(head, pose.world[s.FindJoint("RightFoot")].translation().y());
  }
  const Scene up = ParseBvh(HumanoidFile(1), "upright.bvh", stated);
  EXPECT_TRUE(up.warnings.empty()) << ::testing::PrintToString(up.warnings);
}

// Real exporters' quirks: CRLF, tabs, runs of spaces, trailing whitespace, ".5", "1.87e-05",
// "+3", angles beyond 180, position channels after rotations, subsets, a position-only joint,
// joints without CHANNELS, several roots, names with spaces and colons.
TEST(BvhReader, AcceptsRealWorldForms) {
  const std::string text =
      "HIERARCHY\r\n"
      "ROOT mixamorig:Hips\r\n"
      "{\r\n"
      "\tOFFSET\t.5   -1.87e-05  +3\t \r\n"
      "\tCHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition\r\n"
      "\tJOINT Left Up Leg\r\n"
      "\t{\r\n"
      "\t\tOFFSET 1 2 3\r\n"
      "\t\tCHANNELS 2 Yrotation Xrotation\r\n"
      "\t\tEnd Site\r\n"
      "\t\t{\r\n"
      "\t\t\tOFFSET 0 -1 0\r\n"
      "\t\t}\r\n"
      "\t}\r\n"
      "\tJOINT slider\r\n"
      "\t{\r\n"
      "\t\tOFFSET 0 0 0\r\n"
      "\t\tCHANNELS 1 Zposition\r\n"
      "\t\tJOINT fixed\r\n"
      "\t\t{\r\n"
      "\t\t\tOFFSET 0 1 0\r\n"
      "\t\t}\r\n"
      "\t}\r\n"
      "}\r\n"
      "ROOT prop\r\n"
      "{\r\n"
      "\tOFFSET 5 0 0\r\n"
      "\tCHANNELS 3 Xposition Yposition Zposition\r\n"
      "}\r\n"
      "MOTION\r\n"
      "Frames:    1   \r\n"
      "Frame Time:\t.0083333\r\n"
      "  370.5 -200 .25   1.5e+01 -2E-3 +7 \t 181 -90 0.5 1 2 3  \r\n";
  const Scene scene = ParseBvh(text, "quirks.bvh");
  const Skeleton& s = *scene.skeleton;
  ASSERT_EQ(s.num_joints(), 5);
  EXPECT_EQ(s.name(0), "mixamorig:Hips");
  EXPECT_EQ(s.name(1), "Left Up Leg");
  EXPECT_EQ(s.name(4), "prop");
  EXPECT_EQ(s.parent(4), -1);
  EXPECT_EQ(s.channel_count(3), 0);
  EXPECT_VEC3_NEAR(s.rest_translation(0), Eigen::Vector3d(0.5, -1.87e-05, 3), 0);
  EXPECT_EQ(s.rotation_order(0), EulerOrder::kZXY);
  EXPECT_EQ(s.translation_channel(0, 0), 3);
  EXPECT_EQ(std::vector<ChannelType>(s.joint_channels(1).begin(), s.joint_channels(1).end()),
            (std::vector<ChannelType>{C::kYrotation, C::kXrotation}));
  ASSERT_EQ(s.end_sites().size(), 1u);
  EXPECT_EQ(s.end_sites()[0].parent, 1);
  const Clip& clip = scene.clips[0];
  EXPECT_DOUBLE_EQ(clip.frame_time(), 0.0083333);
  const std::vector<double> expected = {370.5 * kRadPerDeg,
                                        -200 * kRadPerDeg,
                                        0.25 * kRadPerDeg,
                                        15,
                                        -0.002,
                                        7,
                                        181 * kRadPerDeg,
                                        -90 * kRadPerDeg,
                                        0.5,
                                        1,
                                        2,
                                        3};
  ASSERT_EQ(clip.num_channels(), static_cast<int>(expected.size()));
  for (int c = 0; c < clip.num_channels(); ++c) EXPECT_DOUBLE_EQ(clip.at(0, c), expected[c]) << c;
  // Position channels listed after rotations still translate in the parent's space.
  Pose pose(s);
  pose.SetFromRow(s, clip.frame(0));
  EXPECT_VEC3_NEAR(pose.world[0].translation(), Eigen::Vector3d(15.5, -0.002 - 1.87e-05, 10),
                   1e-12);
  EXPECT_VEC3_NEAR(pose.world[4].translation(), Eigen::Vector3d(6, 2, 3), 1e-12);
}

TEST(BvhReader, FileErrors) {
  rigel::testing::TempDir dir;
  const std::string missing = dir.file("missing.bvh"), folder = dir.path().string();
  EXPECT_EQ(rigel::testing::ImportErrorOf([&] { ReadBvh(missing); }),
            missing + ": cannot open: No such file or directory");
  EXPECT_EQ(rigel::testing::ImportErrorOf([&] { ReadBvh(folder); }),
            folder + ": cannot read: not a regular file");
}

// The file reader (block reads) and the memory parser agree, including across block boundaries:
// a file larger than one 1 MB block.
TEST(BvhReader, FileMatchesMemoryAcrossBlocks) {
  std::string text = Edit(17, "Frames: 20000");
  text = text.substr(0, text.find("10.000000"));
  for (int f = 0; f < 20000; ++f) {
    for (int c = 0; c < 9; ++c) text += std::to_string(f * 0.001 + c) + (c == 8 ? "\n" : " ");
  }
  ASSERT_GT(text.size(), 1u << 20);
  rigel::testing::TempDir dir;
  const std::string path = dir.file("big.bvh");
  std::ofstream(path, std::ios::binary) << text;
  const Scene a = ReadBvh(path);
  const Scene b = ParseBvh(text, path);
  ASSERT_EQ(a.clips[0].num_frames(), 20000);
  EXPECT_TRUE(std::equal(a.clips[0].values().begin(), a.clips[0].values().end(),
                         b.clips[0].values().begin()));
  EXPECT_DOUBLE_EQ(a.clips[0].at(19999, 8), (19999 * 0.001 + 8) * kRadPerDeg);
}

// Joint names must be UTF-8 (glTF and the JSON reports cannot hold other bytes): any malformed
// sequence fails at the joint's line, naming the file; valid multi-byte names are kept as they
// are. Each bad case is one defect class of RFC 3629.
TEST(BvhReader, JointNamesMustBeUtf8) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"latin-1 e acute", "Ch\xe9st"},
      {"stray continuation byte", "Chest\x80"},
      {"truncated 2-byte sequence at the end", "Chest\xc3"},
      {"truncated 3-byte sequence", "Ch\xe2\x82st"},
      {"overlong '/' (C0 AF)", "Chest\xc0\xaf"},
      {"overlong 3-byte NUL (E0 80 80)", "Chest\xe0\x80\x80"},
      {"UTF-16 surrogate U+D800 (ED A0 80)", "Chest\xed\xa0\x80"},
      {"above U+10FFFF (F4 90 80 80)", "Chest\xf4\x90\x80\x80"},
      {"F5 lead byte", "Chest\xf5\x80\x80\x80"},
      {"FF byte", "\xff"},
  };
  for (const auto& [what, name] : bad) {
    EXPECT_EQ(ErrorOf(Edit(6, "  JOINT " + name)), "case.bvh:6: joint name is not valid UTF-8")
        << what;
    EXPECT_EQ(ErrorOf(Edit(2, "ROOT " + name)), "case.bvh:2: joint name is not valid UTF-8")
        << what;
  }
  // The same from a file: the message names the path.
  rigel::testing::TempDir dir;
  const std::string path = dir.file("latin1.bvh");
  std::ofstream(path, std::ios::binary) << Edit(6, "  JOINT Ch\xe9st");
  EXPECT_EQ(rigel::testing::ImportErrorOf([&] { ReadBvh(path); }),
            path + ":6: joint name is not valid UTF-8");
  // Valid UTF-8 of every length passes unchanged: e acute (2 bytes), the euro sign (3), an emoji
  // (4), and the largest code point U+10FFFF.
  for (const std::string name : {"Ch\xc3\xa9st", "\xe2\x82\xac", "Hand \xf0\x9f\x96\x90",
                                 "x\xf4\x8f\xbf\xbf", "\xed\x9f\xbf"}) {
    const Scene scene = ParseBvh(Edit(6, "  JOINT " + name), "ok.bvh");
    EXPECT_EQ(scene.skeleton->name(1), name);
  }
}

// Messages quote tokens as valid UTF-8 (they go into JSON reports): other bytes are shown as
// "\xFF", and the 40-byte cut never splits a multi-byte character.
TEST(BvhReader, MessagesAreUtf8) {
  EXPECT_EQ(ErrorOf(Edit(7, "  \xff\xfe{")), "case.bvh:7: expected '{', found '\\xFF\\xFE{'");
  // 39 ASCII bytes then a 2-byte character: the cut at 40 bytes leaves the character out whole.
  const std::string long_token = std::string(39, 'a') + "\xc3\xa9" + "bc";
  EXPECT_EQ(ErrorOf(Edit(7, "  " + long_token)),
            "case.bvh:7: expected '{', found '" + std::string(39, 'a') + "...'");
  const std::string e_acute = std::string(10, 'a') + "\xc3\xa9";
  EXPECT_EQ(ErrorOf(Edit(7, "  " + e_acute)), "case.bvh:7: expected '{', found '" + e_acute + "'");
}

}  // namespace
}  // namespace rigel
