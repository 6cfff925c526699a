// ScanFbx: an FBX file's version and model kinds, read before Assimp (importers/fbx_scan.h).
#include "importers/fbx_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>

#include "exporters/save_scene.h"
#include "importers/bvh_reader.h"
#include "importers/import_error.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

using testing::SharedData;
using testing::TempDir;

std::map<std::string, int> KindCounts(const FbxScan& scan) {
  std::map<std::string, int> counts;
  for (const FbxModelKind& m : scan.models) ++counts[m.kind];
  return counts;
}

constexpr const char* kTwoJoints =
    "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation "
    "Xrotation Yrotation\nJOINT Spine\n{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation "
    "Yrotation\nEnd Site\n{\nOFFSET 0 5 0\n}\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n"
    "0 0 0 0 0 0 0 0 0\n1 0 0 0 0 0 0 0 30\n";

// rigel's own FBX writer (binary 7.4): the scan finds its version and its LimbNodes by name (the
// writer keeps the end site as a LimbNode too).
TEST(FbxScan, ReadsRigelsOwnBinaryFbx) {
  TempDir dir;
  SaveScene(ParseBvh(kTwoJoints, "two.bvh"), dir.file("two.fbx"));
  const std::string bytes = rigel::testing::FileBytes(dir.file("two.fbx"));
  const std::optional<FbxScan> scan = ScanFbx(bytes);
  ASSERT_TRUE(scan);
  EXPECT_TRUE(scan->binary);
  EXPECT_EQ(scan->version, 7400);
  std::vector<std::string> limbs;
  for (const FbxModelKind& m : scan->models) {
    if (IsSkeletonKind(m.kind)) limbs.push_back(m.name);
  }
  std::sort(limbs.begin(), limbs.end());
  EXPECT_EQ(limbs, (std::vector<std::string>{"Hips", "Spine", "Spine_end"}));
  // Every truncation of the file scans without reading outside it (ASan in the clang job) and
  // finds no model that is not in the whole file.
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    const std::optional<FbxScan> part = ScanFbx(std::string_view(bytes).substr(0, n));
    if (!part) continue;
    EXPECT_LE(part->models.size(), scan->models.size());
  }
}

TEST(FbxScan, AsciiHeaderAndModels) {
  const std::string text =
      "; FBX 7.5.0 project file\nFBXHeaderExtension:  {\n\tFBXHeaderVersion: 1003\n"
      "\tFBXVersion: 7500\n}\nObjects:  {\n\tModel: 123, \"Model::joint1\", \"LimbNode\" {\n"
      "\t}\n\tModel: 124, \"Model::pCube1\", \"Mesh\" {\n\t}\n}\n";
  const std::optional<FbxScan> scan = ScanFbx(text);
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->binary);
  EXPECT_EQ(scan->version, 7500);
  ASSERT_EQ(scan->models.size(), 2u);
  EXPECT_EQ(scan->models[0].name, "joint1");
  EXPECT_EQ(scan->models[0].kind, "LimbNode");
  EXPECT_EQ(scan->models[1].kind, "Mesh");
  EXPECT_FALSE(ScanFbx("HIERARCHY\nROOT Hips\n"));
  EXPECT_EQ(FbxVersionName(6100), "6.1");
}

// Facts from ../shared/data/MANIFEST.md (object counts read from the files by other code).
TEST(FbxScan, ManifestFacts) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Fact {
    const char* file;
    int version;
    int limbs;
    int nulls;
  };
  for (const Fact& f : std::vector<Fact>{
           {"wild/ufbx_ufbx/maya_human_ik_7400_binary.fbx", 7400, 62, 2},
           {"wild/orangeduck_100style-retarget/100style_character.fbx", 7700, 28, 1},
           {"wild/Rokoko_rokoko-studio-live-unity/Rokoko_Newton.FBX", 7400, 40, 127},
           {"wild/ufbx_ufbx/maya_game_sausage_7500_binary_combined.fbx", 7500, 4, 0},
           {"wild/ufbx_ufbx/maya_anim_no_inherit_scale_7700_ascii.fbx", 7700, 4, 0},
       }) {
    SCOPED_TRACE(f.file);
    const std::optional<FbxScan> scan =
        ScanFbx(rigel::testing::FileBytes(SharedData() + "/" + f.file));
    ASSERT_TRUE(scan);
    EXPECT_EQ(scan->version, f.version);
    std::map<std::string, int> kinds = KindCounts(*scan);
    EXPECT_EQ(kinds["LimbNode"], f.limbs);
    EXPECT_EQ(kinds["Null"], f.nulls);
  }
  // The versions in the ufbx corpus's file names (max2009_cube_anim_5800 has 3000 in its binary
  // header and 5800 in FBXHeaderExtension).
  for (const std::string& path : testing::SharedFiles(".fbx")) {
    const std::string name = std::filesystem::path(path).filename().string();
    for (const char* v : {"_5800_", "_6100_", "_7100_", "_7400_", "_7500_", "_7700_"}) {
      if (name.find(v) == std::string::npos) continue;
      const std::optional<FbxScan> scan = ScanFbx(rigel::testing::FileBytes(path));
      ASSERT_TRUE(scan) << path;
      EXPECT_EQ(scan->version, std::stoi(std::string(v + 1, 4))) << path;
    }
  }
}

// FBX 6.x files read (through the upgrade to 7.4, importers/fbx_upgrade.h); a file older than
// FBX 6.0 is refused with rigel's message naming its version and the versions rigel reads, not
// Assimp's message about its internals.
TEST(FbxScan, OldVersionsReadOrRefusedWithTheirVersion) {
  RIGEL_REQUIRE_SHARED_DATA();
  for (const char* rel :
       {"ufbx/maya_character_6100_binary.fbx", "ufbx/maya_null_pivots_6100_ascii.fbx"}) {
    SCOPED_TRACE(rel);
    const Scene scene = LoadScene(SharedData() + "/" + rel);
    EXPECT_GT(scene.skeleton->num_joints(), 0);
  }
  try {
    LoadScene(SharedData() + "/ufbx/max2009_cube_anim_5800_binary.fbx");
    ADD_FAILURE() << "read";
  } catch (const ImportError& e) {
    const std::string what = e.what();
    EXPECT_NE(
        what.find("FBX 5.8 (binary, version 5800) is older than rigel reads: rigel reads "
                  "FBX 6.x (through its own upgrade to 7.4) and FBX 7.1 (FBX 2011) and later"),
        std::string::npos)
        << what;
    EXPECT_EQ(what.find("FBX-DOM"), std::string::npos) << what;
  }
}

// A glTF that requires Draco (or meshopt) mesh compression is refused naming the extension
// (Assimp's own error named a missing node instead), as .gltf and as .glb.
TEST(GltfExtensions, CompressedMeshesRefusedNamingTheExtension) {
  TempDir dir;
  for (const char* extension : {"KHR_draco_mesh_compression", "EXT_meshopt_compression"}) {
    const std::string json =
        std::string(R"({"asset": {"version": "2.0"}, "extensionsUsed": [")") + extension +
        R"("], "extensionsRequired": [")" + extension +
        R"("], "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"name": "Hips"}]})";
    const std::string gltf = dir.file("compressed.gltf");
    std::ofstream(gltf) << json;
    std::string padded = json;
    while (padded.size() % 4 != 0) padded += ' ';
    std::string glb = "glTF";
    auto u32 = [&glb](std::uint32_t v) { glb.append(reinterpret_cast<const char*>(&v), 4); };
    u32(2);
    u32(static_cast<std::uint32_t>(20 + padded.size()));
    u32(static_cast<std::uint32_t>(padded.size()));
    glb += "JSON";
    glb += padded;
    std::ofstream(dir.file("compressed.glb"), std::ios::binary) << glb;
    for (const std::string& path : {gltf, dir.file("compressed.glb")}) {
      SCOPED_TRACE(path);
      try {
        LoadScene(path);
        ADD_FAILURE() << "read";
      } catch (const ImportError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(path + ": the file requires the glTF extension " + extension, 0), 0u)
            << what;
      }
    }
  }
}

// Animation stack ranges (issue 26 item 7), binary and ASCII: the scan reads each stack's name,
// LocalStart and LocalStop; WidenFbxStacks moves the stop in a copy and nothing else (the copy
// scans the same apart from the stop; lengths change only in ASCII).
TEST(FbxScan, StackRangesAndWidening) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    bool binary;
    const char* stack;
  };
  for (const Case& c : {Case{"fbx/cmu_isaacgym/01_01_cmu.fbx", true, ""},
                        Case{"ufbx/maya_anim_layer_anim_7700_ascii.fbx", false, "Take 001"}}) {
    SCOPED_TRACE(c.file);
    const std::string bytes = rigel::testing::FileBytes(SharedData() + "/" + c.file);
    const std::optional<FbxScan> scan = ScanFbx(bytes);
    ASSERT_TRUE(scan);
    EXPECT_EQ(scan->binary, c.binary);
    ASSERT_EQ(scan->stacks.size(), 1u);
    const FbxStackRange& s = scan->stacks[0];
    if (*c.stack) {
      EXPECT_EQ(s.name, c.stack);
    }
    ASSERT_TRUE(s.has_stop);
    EXPECT_GT(s.stop, s.start);
    constexpr std::int64_t kMargin = 123456789;
    const std::string wide = WidenFbxStacks(bytes, *scan, kMargin);
    if (c.binary) {
      EXPECT_EQ(wide.size(), bytes.size());
    }
    const std::optional<FbxScan> again = ScanFbx(wide);
    ASSERT_TRUE(again);
    ASSERT_EQ(again->stacks.size(), 1u);
    EXPECT_EQ(again->stacks[0].stop, s.stop + kMargin);
    EXPECT_EQ(again->stacks[0].start, s.start);
    EXPECT_EQ(again->stacks[0].name, s.name);
    EXPECT_EQ(KindCounts(*again), KindCounts(*scan));
    EXPECT_EQ(again->version, scan->version);
  }
}

}  // namespace
// Animation layers (issue 33): the scan finds each take's layers and which carry curves, in
// binary and ASCII files; a take of one layer, and rigel's own output, give one or none.
TEST(FbxScan, LayersThatCarryCurves) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    std::vector<std::string> layers;
  };
  for (const Case& c :
       {Case{"ufbx/maya_anim_layers_7500_binary.fbx", {"BaseLayer", "X", "Y"}},
        Case{"ufbx/maya_anim_layer_anim_7700_ascii.fbx", {"BaseLayer", "AnimLayer1"}},
        Case{"ufbx/maya_game_sausage_7500_binary_wiggle.fbx", {"BaseLayer"}},
        Case{"fbx/cmu_isaacgym/01_01_cmu.fbx", {}}}) {
    SCOPED_TRACE(c.file);
    const std::optional<FbxScan> scan =
        ScanFbx(rigel::testing::FileBytes(SharedData() + "/" + c.file));
    ASSERT_TRUE(scan);
    ASSERT_FALSE(scan->stacks.empty());
    const std::vector<std::string> got = LayersWithCurves(*scan, scan->stacks[0]);
    if (c.layers.empty()) {
      EXPECT_LE(got.size(), 1u);
    } else {
      EXPECT_EQ(got, c.layers);
    }
  }
  // A layered take is refused naming its layers; it was read as a merge of them before.
  try {
    (void)LoadScene(SharedData() + "/ufbx/maya_anim_layers_7500_binary.fbx");
    ADD_FAILURE() << "a take blending three layers was read";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("blends 3 animation layers that carry curves "
                                         "(BaseLayer, X, Y)"),
              std::string::npos)
        << e.what();
  }
}

// Nothing silent (issue 28 item 4): one warning per file lists what it holds and rigel does not
// carry, with names, and a file that holds nothing more says nothing.
TEST(NotCarried, OneWarningNamesWhatIsDropped) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    std::vector<std::string> said;  // fragments of the one warning; empty: no warning
  };
  for (const Case& c :
       {Case{"fbx/assimp/animation_with_skeleton.fbx",
             {"1 camera(s) (Camera)", "1 light(s) (Light)",
              "colours and textures of 1 material(s) (their names are kept)"}},
        Case{"fbx/ozz_pab/walk.fbx",
             {"4 animated node(s) outside the skeleton (Camera01.Target, Sky01, Camera02.Target, "
              "Camera03.Target)",
              "3 camera(s) (Camera01, Camera02, Camera03)",
              "1 other node(s) outside the skeleton (Sky01.Target)"}},
        Case{"wild/ufbx_ufbx/maya_human_ik_7400_binary.fbx",
             {"1 other node(s) outside the skeleton (Character1_Ctrl_Reference)"}},
        Case{"fbx/cmu_isaacgym/01_01_cmu.fbx", {}}}) {
    SCOPED_TRACE(c.file);
    const Scene scene = LoadScene(SharedData() + "/" + c.file);
    std::vector<std::string> warnings;
    for (const std::string& w : scene.warnings) {
      if (w.find(": not carried: ") != std::string::npos) warnings.push_back(w);
    }
    if (c.said.empty()) {
      EXPECT_TRUE(warnings.empty()) << warnings.front();
      continue;
    }
    ASSERT_EQ(warnings.size(), 1u);
    for (const std::string& fragment : c.said) {
      EXPECT_NE(warnings[0].find(fragment), std::string::npos) << fragment << "\n" << warnings[0];
    }
  }
}

}  // namespace rigel
