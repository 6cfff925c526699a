// Joint names are UTF-8 everywhere rigel reads them (docs/formats.md, "Names are UTF-8"): the
// validator itself, and the Assimp path (FBX stores node names as raw bytes). The BVH reader's
// cases are in bvh_reader_test.cc (JointNamesMustBeUtf8).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "exporters/fbx_writer.h"
#include "importers/bvh_reader.h"
#include "importers/load_scene.h"
#include "importers/utf8.h"
#include "test_util.h"

namespace rigel {
namespace {

TEST(Utf8, ValidSequences) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("Hips"));
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b\x7f\t", 5)));  // ASCII control bytes are UTF-8
  EXPECT_TRUE(IsValidUtf8("\xc2\x80"));                    // U+0080, smallest 2-byte
  EXPECT_TRUE(IsValidUtf8("\xdf\xbf"));                    // U+07FF
  EXPECT_TRUE(IsValidUtf8("\xe0\xa0\x80"));                // U+0800, smallest 3-byte
  EXPECT_TRUE(IsValidUtf8("\xed\x9f\xbf"));                // U+D7FF, just below surrogates
  EXPECT_TRUE(IsValidUtf8("\xee\x80\x80"));                // U+E000, just above them
  EXPECT_TRUE(IsValidUtf8("\xef\xbf\xbf"));                // U+FFFF
  EXPECT_TRUE(IsValidUtf8("\xf0\x90\x80\x80"));            // U+10000, smallest 4-byte
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));            // U+10FFFF, the largest
  EXPECT_TRUE(IsValidUtf8("\xe5\xb7\xa6\xe8\x85\x95"));    // two CJK characters
}

TEST(Utf8, InvalidSequences) {
  for (const std::string bad : {
           "\x80",
           "\xbf",  // continuation bytes alone
           "\xc0\x80",
           "\xc1\xbf",          // overlong 2-byte forms
           "\xe0\x9f\xbf",      // overlong 3-byte form of U+07FF
           "\xf0\x8f\xbf\xbf",  // overlong 4-byte form of U+FFFF
           "\xed\xa0\x80",
           "\xed\xbf\xbf",      // surrogates U+D800, U+DFFF
           "\xf4\x90\x80\x80",  // U+110000
           "\xf5\x80\x80\x80",
           "\xf8",
           "\xfe",
           "\xff",
           "\xc3",
           "\xe2\x82",
           "\xf0\x9f\x96",  // cut short at the end
           "\xc3(",
           "\xe2(\xac",
           "\xf0\x9f(\x90",  // a non-continuation byte inside
           "ok\xe9",         // Latin-1
       }) {
    EXPECT_FALSE(IsValidUtf8(bad)) << ::testing::PrintToString(bad);
  }
}

// An FBX whose joint name is Latin-1 (the bytes of "Chest" replaced in rigel's own FBX output, the
// same length so the file stays well formed) fails through Assimp with the file name; the
// untouched file loads.
TEST(Utf8, FbxJointNameThroughAssimp) {
  const char* kBvh =
      "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition "
      "Zrotation Xrotation Yrotation\n  JOINT Chest\n  {\n    OFFSET 0 5 0\n    CHANNELS 3 "
      "Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 3 0\n    }\n  }\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.0333333\n1 2 3 4 5 6 7 8 9\n2 3 4 5 6 7 8 9 10\n";
  const Scene scene = ParseBvh(kBvh, "chest.bvh");
  const std::string fbx = FormatFbx(*scene.skeleton, scene.clips, FbxOptions{}, "chest.fbx");
  rigel::testing::TempDir dir;
  const std::string good = dir.file("good.fbx");
  std::ofstream(good, std::ios::binary) << fbx;
  EXPECT_EQ(LoadScene(good).skeleton->name(1), "Chest");

  std::string latin1 = fbx;
  int replaced = 0;
  for (size_t at = latin1.find("Chest"); at != std::string::npos;
       at = latin1.find("Chest", at + 5)) {
    latin1.replace(at, 5, "Ch\xe9st");
    ++replaced;
  }
  ASSERT_GT(replaced, 0);
  const std::string bad = dir.file("latin1.fbx");
  std::ofstream(bad, std::ios::binary) << latin1;
  try {
    const Scene s = LoadScene(bad);
    FAIL() << "loaded, joint 1 named " << ::testing::PrintToString(s.skeleton->name(1));
  } catch (const ImportError& e) {
    EXPECT_EQ(std::string(e.what()), bad + ": joint name is not valid UTF-8");
  }
}

}  // namespace
}  // namespace rigel
