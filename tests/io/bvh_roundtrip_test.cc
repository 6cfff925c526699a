// Every real BVH in ../shared/data loads and round-trips through the writer: identical
// hierarchy and channel layout, every value, offset and the frame time the same double bit for
// bit (-0.0 included), FK world positions identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

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
