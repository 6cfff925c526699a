// Every real BVH in ../shared/data loads and round-trips through the writer: identical
// hierarchy and channel layout, every value, offset and the frame time the same double bit for
// bit (-0.0 included), FK world positions identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/pose.h"
#include "exporters/bvh_writer.h"
#include "importers/bvh_reader.h"
#include "test_util.h"

namespace rigel {
namespace {

// The same double, bit for bit.
bool Identical(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

void ExpectSameScene(const Scene& a, const Scene& b, const std::string& what) {
  const Skeleton& sa = *a.skeleton;
  const Skeleton& sb = *b.skeleton;
  ASSERT_EQ(sa.num_joints(), sb.num_joints()) << what;
  ASSERT_EQ(sa.num_channels(), sb.num_channels()) << what;
  for (int j = 0; j < sa.num_joints(); ++j) {
    EXPECT_EQ(sa.name(j), sb.name(j)) << what;
    EXPECT_EQ(sa.parent(j), sb.parent(j)) << what << " joint " << sa.name(j);
    for (int k = 0; k < 3; ++k) {
      EXPECT_TRUE(Identical(sa.rest_translation(j)[k], sb.rest_translation(j)[k]))
          << what << " offset of " << sa.name(j);
    }
    ASSERT_EQ(sa.channel_count(j), sb.channel_count(j)) << what << " joint " << sa.name(j);
  }
  EXPECT_TRUE(std::equal(sa.channels().begin(), sa.channels().end(), sb.channels().begin()))
      << what << ": channel layout differs";
  ASSERT_EQ(sa.end_sites().size(), sb.end_sites().size()) << what;
  for (size_t e = 0; e < sa.end_sites().size(); ++e) {
    EXPECT_EQ(sa.end_sites()[e].parent, sb.end_sites()[e].parent) << what;
    for (int k = 0; k < 3; ++k) {
      EXPECT_TRUE(Identical(sa.end_sites()[e].offset[k], sb.end_sites()[e].offset[k]));
    }
  }
  const Clip& ca = a.clips.at(0);
  const Clip& cb = b.clips.at(0);
  ASSERT_EQ(ca.num_frames(), cb.num_frames()) << what;
  EXPECT_TRUE(Identical(ca.frame_time(), cb.frame_time())) << what;
  int bad = 0;
  for (size_t i = 0; i < ca.values().size(); ++i) {
    if (!Identical(ca.values()[i], cb.values()[i]) && bad++ < 5) {
      ADD_FAILURE() << what << ": value " << i << " " << ::testing::PrintToString(ca.values()[i])
                    << " vs " << ::testing::PrintToString(cb.values()[i]);
    }
  }
  EXPECT_EQ(bad, 0) << what;
  // FK world positions of every joint on every frame.
  Pose pa(sa), pb(sb);
  double worst = 0;
  for (int f = 0; f < ca.num_frames(); ++f) {
    pa.SetFromRow(sa, ca.frame(f));
    pb.SetFromRow(sb, cb.frame(f));
    for (int j = 0; j < sa.num_joints(); ++j) {
      worst = std::max(worst, (pa.world[j].translation() - pb.world[j].translation()).norm());
    }
  }
  EXPECT_EQ(worst, 0.0) << what << ": FK positions differ by " << worst;
}

TEST(BvhRoundTrip, EveryRealFile) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::vector<std::string> files = rigel::testing::SharedFiles(".bvh");
  ASSERT_GE(files.size(), 10u);
  rigel::testing::TempDir dir;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const Scene original = ReadBvh(file);
    ASSERT_EQ(original.clips.size(), 1u);
    EXPECT_GT(original.clips[0].num_frames(), 0);
    const std::string out = dir.file("roundtrip.bvh");
    WriteBvh(*original.skeleton, original.clips[0], out);
    // Read back with the unit stated: no warning but the undecided translation conventions the
    // original had (the written values are the file's own, so the data decide the same way).
    BvhReadOptions stated;
    stated.unit_metres = 0.01;
    const Scene again = ReadBvh(out, stated);
    const auto undecided = [](const Scene& s) {
      return std::count_if(s.warnings.begin(), s.warnings.end(), [](const std::string& w) {
        return w.find("the data do not decide") != std::string::npos;
      });
    };
    EXPECT_EQ(static_cast<std::ptrdiff_t>(again.warnings.size()), undecided(original))
        << ::testing::PrintToString(again.warnings);
    EXPECT_EQ(undecided(again), undecided(original));
    for (int j = 0; j < original.skeleton->num_joints(); ++j) {
      EXPECT_EQ(again.skeleton->translation_mode(j), original.skeleton->translation_mode(j));
    }
    ExpectSameScene(original, again, file);
    // Writing what was read back gives the same bytes: the writer is a fixed point.
    EXPECT_EQ(FormatBvh(*again.skeleton, again.clips[0]),
              FormatBvh(*original.skeleton, original.clips[0]));
  }
}

// The numbers of a BVH text as the file states them, each parsed on its own by strtod (correctly
// rounded): the OFFSETs (End Sites included) in file order, the frame time, then every MOTION
// value.
std::vector<double> FileNumbers(const std::string& text) {
  std::vector<double> numbers;
  const size_t motion = text.find("MOTION");
  std::istringstream hierarchy(text.substr(0, motion));
  std::string token;
  while (hierarchy >> token) {
    if (token != "OFFSET") continue;
    for (int k = 0; k < 3 && hierarchy >> token; ++k) {
      numbers.push_back(std::strtod(token.c_str(), nullptr));
    }
  }
  std::istringstream rest(text.substr(text.find("Frame Time:", motion) + 11));
  while (rest >> token) numbers.push_back(std::strtod(token.c_str(), nullptr));
  return numbers;
}

// How many numbers of `written` differ from `original` as doubles, bit for bit (-0.0 included);
// the first few are reported.
int DifferingNumbers(const std::string& original, const std::string& written,
                     const std::string& what, size_t ignored_values = 0) {
  std::vector<double> a = FileNumbers(original);
  const std::vector<double> b = FileNumbers(written);
  // Rows after the declared frame count (Boxing_Toes.bvh has one, which the reader ignores with a
  // warning) are not part of the clip.
  if (a.size() < ignored_values) {
    ADD_FAILURE() << what << ": fewer numbers than the ignored rows hold";
    return -1;
  }
  a.resize(a.size() - ignored_values);
  EXPECT_EQ(a.size(), b.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (!Identical(a[i], b[i]) && bad++ < 3) {
      ADD_FAILURE() << what << ": number " << i << " " << ::testing::PrintToString(a[i])
                    << " written as " << ::testing::PrintToString(b[i]);
    }
  }
  return bad;
}

// BVH -> BVH keeps every number of the file: each OFFSET, the frame time and every MOTION value
// reads (strtod) as the same double in the written file as in the source, on every real file and
// under every reading of the position channels.
TEST(BvhRoundTrip, EveryRealFileKeepsEveryNumberBitForBit) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::vector<std::string> files = rigel::testing::SharedFiles(".bvh");
  ASSERT_GE(files.size(), 17u);
  for (const std::string& file : files) {
    const std::string text = rigel::testing::FileBytes(file);
    for (const BvhTranslation mode :
         {BvhTranslation::kAuto, BvhTranslation::kAdd, BvhTranslation::kReplace}) {
      BvhReadOptions options;
      options.translation = mode;
      const Scene scene = ReadBvh(file, options);
      const std::string written = FormatBvh(*scene.skeleton, scene.clips[0]);
      size_t ignored = 0;
      for (const std::string& w : scene.warnings) {
        const size_t at = w.find(" motion row");
        if (at != w.npos && w.find("declared by 'Frames:' ignored") != w.npos) {
          ignored = std::stoul(w.substr(w.rfind(' ', at - 1) + 1)) * scene.clips[0].num_channels();
        }
      }
      EXPECT_EQ(DifferingNumbers(text, written, file, ignored), 0)
          << file << " read " << static_cast<int>(mode);
    }
  }
}

// The hard cases of that: values whose degrees -> radians or OFFSET subtraction maps two file
// numbers to one double, written with 17 digits or as the shorter neighbour, with exponents;
// and the reader's numbers against strtod for long mantissas and extreme exponents.
TEST(BvhRoundTrip, NumbersThatShareTheirValueInsideRigelComeBackAsWritten) {
  // -122.19429663954202 and -122.194296639542 are neighbouring doubles that give the same
  // radians; so are 3.60829e-06 and 3.6082899999999995e-06 (the examples).
  const std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 1.5 85.52902 -2.13670418\nCHANNELS 6 Xposition "
      "Yposition Zposition Zrotation Yrotation Xrotation\nEnd Site\n{\nOFFSET 0 10 0\n}\n}\n"
      "MOTION\nFrames: 4\nFrame Time: 0.0083333\n"
      "1.5 85.52902 -2.13670418 -122.19429663954202 3.60829e-06 -0\n"
      "1.5000000000000002 85.529020000000003 1e-300 -122.194296639542 3.6082899999999995e-06 "
      "179.99999999999997\n"
      "0.1 1e5 -2.1367041800000001 1.0000000000000002 -1.7976931348623157e308 4.9e-324\n"
      "2.2250738585072011e-308 -0.000 123456789012345678901234567890e-30 "
      "0.30000000000000004 359.99999999999994 -89.999999999999986\n";
  for (const BvhTranslation mode :
       {BvhTranslation::kAuto, BvhTranslation::kAdd, BvhTranslation::kReplace}) {
    BvhReadOptions options;
    options.translation = mode;
    const Scene scene = ParseBvh(text, "hard.bvh", options);
    const std::string written = FormatBvh(*scene.skeleton, scene.clips[0]);
    EXPECT_EQ(DifferingNumbers(text, written, "hard.bvh"), 0) << written;
    // Written again from what was read back: the same text (a fixed point).
    const Scene again = ParseBvh(written, "again.bvh", options);
    EXPECT_EQ(FormatBvh(*again.skeleton, again.clips[0]), written);
  }
}

// The reader's numbers are correctly rounded whatever their length: each equals strtod's double,
// bit for bit, for long mantissas, halfway cases, subnormals and the extremes of the range.
TEST(BvhReader, NumbersAreCorrectlyRoundedLikeStrtod) {
  std::vector<std::string> numbers = {
      "9007199254740993",                                           // 2^53 + 1: halfway, to even
      "9007199254740993.0000000000000000000000000000000000001",     // just above halfway
      "0.1000000000000000055511151231257827021181583404541015625",  // exactly 0.1's double
      "0.1000000000000000055511151231257827021181583404541015624",
      "0.1000000000000000055511151231257827021181583404541015626",
      "2."
      "4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818"
      "0810e-324",  // just below half the smallest subnormal: 0
      "2."
      "4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818"
      "0812e-324",  // just above: the smallest subnormal
      "4.9406564584124654e-324",
      "2.2250738585072009e-308",
      "2.2250738585072014e-308",
      "1.7976931348623157e308",
      "1.7976931348623158e308",
      "1e-400",
      "-1e-400",
      "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558"
      "632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245"
      "490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168"
      "738177180919299881250404026184124858368",  // DBL_MAX written out
      "0."
      "000000000000000000000000000000000000000000000000000000000000000000000000000000000001234567",
      "123456789012345678901234567890123456789012345678901234567890",
      "3.14159265358979323846264338327950288419716939937510582097494459",
      "1e22",
      "1e23",
      "8.98846567431158e307",
      "-0.000000000000000000000000",
      "7.2057594037927933e16",
      "1.00000000000000011102230246251565404236316680908203125",  // halfway between 1 and next
      "1.00000000000000011102230246251565404236316680908203124",
      "1.00000000000000011102230246251565404236316680908203126",
      "+3",
      ".5",
      "5.",
      "1E5",
      "1e+5",
      "0x10"};
  // Pseudo-random long mantissas with exponents across the range.
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int i = 0; i < 2000; ++i) {
    std::string s = (next() & 1) ? "-" : "";
    const int digits = 1 + static_cast<int>(next() % 40);
    const int point = static_cast<int>(next() % (digits + 1));
    for (int d = 0; d < digits; ++d) {
      if (d == point) s += '.';
      s += static_cast<char>('0' + next() % 10);
    }
    s += "e" + std::to_string(static_cast<int>(next() % 660) - 340);
    numbers.push_back(s);
  }
  numbers.erase(std::remove(numbers.begin(), numbers.end(), "0x10"), numbers.end());  // not BVH
  std::string text =
      "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\nMOTION\nFrames: " +
      std::to_string(numbers.size()) + "\nFrame Time: 0.1\n";
  std::vector<double> expected;
  for (const std::string& n : numbers) {
    const double v = std::strtod(n.c_str(), nullptr);
    if (!std::isfinite(v)) continue;  // refused by the reader (tested elsewhere)
    text += n + "\n";
    expected.push_back(v);
  }
  const std::string header_count = "Frames: " + std::to_string(numbers.size());
  text.replace(text.find(header_count), header_count.size(),
               "Frames: " + std::to_string(expected.size()));
  BvhReadOptions options;
  options.unit_metres = 1;
  const Scene scene = ParseBvh(text, "numbers.bvh", options);
  const Clip& clip = scene.clips[0];
  ASSERT_EQ(clip.num_frames(), static_cast<int>(expected.size()));
  int bad = 0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    if (!Identical(clip.at(f, 0), expected[f]) && bad++ < 5) {
      ADD_FAILURE() << "row " << f << ": " << ::testing::PrintToString(clip.at(f, 0))
                    << " vs strtod " << ::testing::PrintToString(expected[f]);
    }
  }
  EXPECT_EQ(bad, 0);
}

// Facts from ../shared/data/MANIFEST.md, checked against what the reader makes of the files.
TEST(BvhRoundTrip, ManifestFacts) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string root = rigel::testing::SharedData();
  struct Fact {
    const char* file;
    int joints, end_sites, channels, frames;
    double frame_time;
  };
  const Fact facts[] = {
      {"/assimp_misc/Boxing_Toes.bvh", 21, 5, 66, 3069, 0.01},
      {"/cmu_cgspeed/01_01.bvh", 31, 7, 96, 2752, 0.0083333},
      {"/cmu_cgspeed/01_03.bvh", 31, 7, 96, 4511, 0.0083333},
      {"/makehuman/tpose.bvh", 173, 49, 951, 1, 0.041667},
      {"/makehuman/walk1.bvh", 75, 16, 228, 14, 0.041667},
      {"/pybvh/bvh_test1.bvh", 24, 5, 75, 75, 0.033333},
      // wild/ (MANIFEST rows 1-5 and 7).
      {"/wild/wspr_bvh-matlab/milad_perception_neuron.bvh", 59, 13, 354, 422, 0.008},
      {"/wild/orangeduck_lafan1-resolved/Geno_bind.bvh", 75, 21, 450, 2, 0.016667},
      {"/wild/wspr_bvh-matlab/louise_optitrack_arena.bvh", 18, 5, 57, 2998, 0.01},
      {"/wild/facebookresearch_fairmotion/pfnn_hierarchy.bvh", 31, 7, 96, 60, 0.0333333},
      {"/wild/Firepal_godot_vr_mocap/godot_vr_tracking_test.bvh", 4, 3, 18, 100, 0.013889},
      {"/wild/Sensor-Guided-Living_vr/pirouette.bvh", 43, 14, 132, 592, 0.00833333},
  };
  for (const Fact& f : facts) {
    const Scene s = ReadBvh(root + f.file);
    EXPECT_EQ(s.skeleton->num_joints(), f.joints) << f.file;
    EXPECT_EQ(static_cast<int>(s.skeleton->end_sites().size()), f.end_sites) << f.file;
    EXPECT_EQ(s.skeleton->num_channels(), f.channels) << f.file;
    EXPECT_EQ(s.clips[0].num_frames(), f.frames) << f.file;
    EXPECT_DOUBLE_EQ(s.clips[0].frame_time(), f.frame_time) << f.file;
  }
  // Boxing_Toes.bvh has one motion row more than 'Frames:' says: loaded, with a warning.
  BvhReadOptions stated;  // no unit estimate warning
  stated.unit_metres = 0.01;
  const Scene boxing = ReadBvh(root + "/assimp_misc/Boxing_Toes.bvh", stated);
  ASSERT_EQ(boxing.warnings.size(), 1u);
  EXPECT_NE(boxing.warnings[0].find("1 motion row after the 3069 declared"), std::string::npos);
  // bvh_test1 mixes rotation orders per joint.
  const Scene mixed = ReadBvh(root + "/pybvh/bvh_test1.bvh");
  int xzy = 0, zyx = 0;
  for (int j = 0; j < mixed.skeleton->num_joints(); ++j) {
    xzy += mixed.skeleton->rotation_order(j) == EulerOrder::kXZY;
    zyx += mixed.skeleton->rotation_order(j) == EulerOrder::kZYX;
  }
  EXPECT_EQ(xzy, 16);
  EXPECT_EQ(zyx, 2);
  // pirouette.bvh: root ZYX, the 42 other joints ZXY; the VR recording's root has no channel.
  const Scene pirouette = ReadBvh(root + "/wild/Sensor-Guided-Living_vr/pirouette.bvh");
  int zxy = 0;
  for (int j = 0; j < pirouette.skeleton->num_joints(); ++j) {
    zxy += pirouette.skeleton->rotation_order(j) == EulerOrder::kZXY;
  }
  EXPECT_EQ(pirouette.skeleton->rotation_order(0), EulerOrder::kZYX);
  EXPECT_EQ(zxy, 42);
  const Scene vr = ReadBvh(root + "/wild/Firepal_godot_vr_mocap/godot_vr_tracking_test.bvh");
  EXPECT_EQ(vr.skeleton->channel_count(0), 0);
  EXPECT_EQ(vr.skeleton->name(0), "__0");
}

TEST(BvhWriter, RefusesNonFiniteAndMismatch) {
  const Scene scene = ParseBvh(
      "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.1\n1 2 3\n4 5 6\n",
      "a.bvh");
  Clip clip = scene.clips[0];
  clip.at(1, 2) = NAN;
  rigel::testing::TempDir dir;
  const std::string out = dir.file("out.bvh");
  try {
    WriteBvh(*scene.skeleton, clip, out);
    FAIL() << "no error";
  } catch (const ExportError& e) {
    EXPECT_EQ(std::string(e.what()), out + ": frame 1, joint 'a', channel Yrotation: value is nan");
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing may be written";
  Clip narrow(2, 2, 0.1);
  EXPECT_THROW(WriteBvh(*scene.skeleton, narrow, out), ExportError);
  Clip bad_time = scene.clips[0];
  bad_time.set_frame_time(0);
  EXPECT_THROW(WriteBvh(*scene.skeleton, bad_time, out), ExportError);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "no temporary file left behind";
}

}  // namespace
}  // namespace rigel
