// The expected outcome of every FBX file in ../shared/data: read (joints, takes with their frames,
// frame rate, unit) or refused (a fragment of the true message). Every corpus-wide FBX test walks
// this table, and a file without a row fails them: a new file needs a decision, not a skip.
//
// Where the figures come from: takes, frame ranges and rates from each file's AnimationStacks and
// GlobalSettings (TimeMode, CustomFrameRate; MANIFEST.md), cross-checked against Blender 3.4's
// import (actions and bones) where Blender reads the file; joints are the file's skin bones,
// animated nodes and LimbNodes with their ancestors (importers/assimp_reader.h). FBX 6.x files
// read through rigel's upgrade to 7.4 (importers/fbx_upgrade.h): their takes, ranges and rates
// from each Take's LocalTime and GlobalSettings TimeMode (3ds Max 2009: Version5 FrameRate), unit
// from UnitScaleFactor. Refusals: files older than FBX 6.0 (the versions are in the file names and
// headers), and files whose models are meshes, cameras and lights only, with nothing skinned or
// animated (Blender imports no armature from any of them), and takes that blend more than one
// animation layer with curves (Assimp merges the layers' curves into neither). A file that animates
// only blend-shape weights reads, its mesh nodes as the joints (issue 28).
#ifndef RIGEL_TESTS_ASSIMP_FBX_CORPUS_H_
#define RIGEL_TESTS_ASSIMP_FBX_CORPUS_H_

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace rigel::testing {

struct FbxOutcome {
  std::string file;  // relative to ../shared/data
  bool read = true;
  int joints = 0;
  std::vector<std::string> clips;
  std::vector<int> frames;
  double fps = 0;
  double unit_metres = 0;
  std::string refusal;  // a fragment of the error, when !read
};

inline FbxOutcome Read(int joints, std::vector<std::string> clips, std::vector<int> frames,
                       double fps, double unit) {
  FbxOutcome o;
  o.joints = joints;
  o.clips = std::move(clips);
  o.frames = std::move(frames);
  o.fps = fps;
  o.unit_metres = unit;
  return o;
}

inline FbxOutcome Refused(std::string fragment) {
  FbxOutcome o;
  o.read = false;
  o.refusal = std::move(fragment);
  return o;
}

inline const std::vector<FbxOutcome>& FbxCorpus() {
  static const std::vector<FbxOutcome> table = [] {
    struct Row {
      const char* file;
      FbxOutcome outcome;
    };
    const std::vector<Row> rows = {
        {"fbx/assimp/animation_with_skeleton.fbx",
         Read(15, {"Armature|ArmatureAction"}, {21}, 24, 0.01)},
        {"fbx/assimp/multiple_animations_test.fbx",
         Read(1, {"anim 1", "anim 2", "spin"}, {21, 16, 16}, 30, 1)},
        {"fbx/cmu_isaacgym/01_01_cmu.fbx", Read(32, {"01_01|01_01"}, {2752}, 120, 0.01)},
        {"fbx/ozz_pab/locomotions.fbx", Read(68, {"jog", "run", "walk"}, {25, 21, 41}, 30, 0.01)},
        {"fbx/ozz_pab/walk.fbx", Read(68, {"walk"}, {41}, 30, 0.01)},
        {"ufbx/axes_nxny_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/axes_pxpz_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/blender_279_bone_radius_7400_binary.fbx", Read(6, {""}, {1}, 30, 0.01)},
        {"ufbx/blender_279_sausage_7400_binary.fbx",
         Read(4, {"Skeleton|Base", "Skeleton|Spin", "Skeleton|Wiggle"}, {2, 20, 20}, 24, 1)},
        {"ufbx/blender_293_half_skinned_7400_binary.fbx", Read(2, {""}, {1}, 30, 1)},
        {"ufbx/blender_331_static_blend_shape_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/blender_340_default_unscaled_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/blender_340_y_up_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/blender_340_z_up_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/blender_402_ortho_scale_unit_7400_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/casegen_rotation_order_7500_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        // UnitScaleFactor 2.54 (inches), which Assimp reads as a float.
        {"ufbx/max2009_blob_6100_binary.fbx",
         Read(1, {"Take 001"}, {25}, 30, static_cast<double>(2.54f) / 100)},
        {"ufbx/max2009_cube_anim_5800_binary.fbx",
         Refused("FBX 5.8 (binary, version 5800) is older than rigel reads: rigel reads FBX 6.x "
                 "(through its own upgrade to 7.4) and FBX 7.1 (FBX 2011) and later")},
        {"ufbx/max_transformed_skin_6100_binary.fbx", Read(5, {"Take 001"}, {101}, 30, 0.01)},
        {"ufbx/maya_advanced_skinned_pivot_6100_binary.fbx", Read(3, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_anim_extrapolation_7700_binary.fbx", Read(1, {"Take 001"}, {120}, 24, 0.01)},
        // Layered takes (issue 33): Assimp reads all layers' curves as one, neither layer nor
        // blend.
        {"ufbx/maya_anim_layer_anim_7700_ascii.fbx",
         Refused("take 'Take 001' blends 2 animation layers that carry curves (BaseLayer, "
                 "AnimLayer1)")},
        {"ufbx/maya_anim_layers_7500_binary.fbx",
         Refused("take 'Take 001' blends 3 animation layers that carry curves (BaseLayer, X, Y)")},
        {"ufbx/maya_anim_layers_over_7500_binary.fbx",
         Refused("take 'Take 001' blends 3 animation layers that carry curves (BaseLayer, X, Y)")},
        {"ufbx/maya_anim_pivot_rotate_7700_ascii.fbx", Read(1, {"Take 001"}, {21}, 24, 0.01)},
        {"ufbx/maya_axes_anim_7700_ascii.fbx", Read(7, {"Take 001"}, {21}, 24, 0.01)},
        // Animates only blend-shape weights (issue 28): its mesh node is the one joint.
        {"ufbx/maya_blend_inbetween_7500_binary.fbx", Read(1, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_blend_shape_cube_6100_ascii.fbx", Read(1, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_blend_shape_cube_7100_binary.fbx",
         Refused("it holds 1 mesh(es), 2 blend shape(s) in FBX 7.1's older layout (Shape inside "
                 "Geometry), which rigel does not read")},
        {"ufbx/maya_bone_radius_7500_ascii.fbx", Read(8, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_character_6100_binary.fbx", Read(63, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_child_pivots_7700_ascii.fbx", Read(3, {"Take 001"}, {21}, 24, 0.01)},
        {"ufbx/maya_constraint_zoo_7500_binary.fbx", Read(11, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_dual_quaternion_scale_7500_ascii.fbx", Read(2, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_extrapolate_cube_7700_binary.fbx", Read(1, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_game_sausage_6100_binary_spin.fbx", Read(3, {"spin"}, {21}, 24, 0.01)},
        {"ufbx/maya_game_sausage_7500_ascii_combined.fbx",
         Read(3, {"wiggle", "spin", "deform"}, {20, 21, 21}, 24, 0.01)},
        {"ufbx/maya_game_sausage_7500_binary_wiggle.fbx", Read(3, {"wiggle"}, {20}, 24, 0.01)},
        {"ufbx/maya_human_ik_7400_ascii.fbx", Read(63, {""}, {1}, 30, 1)},
        {"ufbx/maya_human_ik_7400_binary.fbx", Read(63, {""}, {1}, 30, 1)},
        {"ufbx/maya_keyframe_offset_7700_ascii.fbx", Read(1, {"Take 001"}, {47}, 30, 0.01)},
        {"ufbx/maya_mixed_inherit_mode_7700_ascii.fbx", Read(6, {"Take 001"}, {21}, 24, 0.01)},
        {"ufbx/maya_null_pivots_6100_ascii.fbx", Read(2, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_pivot_offset_7700_binary.fbx", Read(4, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_pivots_6100_ascii.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes; it holds 1 mesh(es)")},
        {"ufbx/maya_pivots_7500_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/maya_resampled_7500_binary.fbx", Read(1, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_rotation_order_7500_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/maya_scale_no_inherit_7700_ascii.fbx", Read(3, {"Take 001"}, {120}, 24, 1)},
        {"ufbx/maya_skinned_pivot_7700_ascii.fbx", Read(2, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_slime_7500_binary.fbx", Read(13, {"Idle"}, {61}, 30, 0.01)},
        {"ufbx/maya_static_no_inherit_scale_7700_ascii.fbx", Read(4, {""}, {1}, 30, 0.01)},
        {"ufbx/maya_transform_animation_7500_binary.fbx", Read(1, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/maya_transformed_skin_7700_binary.fbx", Read(3, {"Take 001"}, {21}, 24, 0.01)},
        {"ufbx/maya_zero_scale_pivot_7700_binary.fbx", Read(4, {"Take 001"}, {120}, 24, 0.01)},
        {"ufbx/motionbuilder_actor_7700_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/motionbuilder_cube_7700_binary.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/motionbuilder_tangent_velocity_split_7700_binary.fbx",
         Read(1, {"Take 001"}, {151}, 30, 0.01)},
        {"ufbx/synthetic_blend_shape_order_7500_ascii.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/synthetic_pre_post_rotate_7500_ascii.fbx",
         Refused("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and no "
                 "animated nodes")},
        {"ufbx/synthetic_rotation_order_layers_7700_ascii.fbx",
         Refused("take 'Take 001' blends 3 animation layers that carry curves (BaseLayer, Base, "
                 "Rotation)")},
        {"ufbx/synthetic_sausage_wiggle_no_bind_7500_ascii.fbx",
         Read(3, {"wiggle"}, {20}, 24, 0.01)},
        {"wild/Rokoko_rokoko-studio-live-unity/Rokoko_Newton.FBX",
         Read(164, {"Take 001"}, {101}, 30, 0.01)},
        {"wild/Rokoko_rokoko-studio-live-unity/Rokoko_Newtonface.FBX",
         Read(1, {"Take 001"}, {101}, 30, 0.01)},
        {"wild/orangeduck_100style-retarget/100style_character.fbx", Read(29, {""}, {1}, 30, 0.01)},
        {"wild/ufbx_ufbx/maya_anim_no_inherit_scale_7700_ascii.fbx",
         Read(3, {"Take 001"}, {34}, 24, 0.01)},
        {"wild/ufbx_ufbx/maya_game_sausage_7500_binary_combined.fbx",
         Read(3, {"wiggle", "spin", "deform"}, {20, 21, 21}, 24, 0.01)},
        {"wild/ufbx_ufbx/maya_human_ik_7400_binary.fbx", Read(63, {""}, {1}, 30, 1)},
    };
    std::vector<FbxOutcome> out;
    for (const Row& r : rows) {
      out.push_back(r.outcome);
      out.back().file = r.file;
    }
    return out;
  }();
  return table;
}

// The row of `path` (a file under ../shared/data), or null.
inline const FbxOutcome* FbxOutcomeOf(const std::string& path) {
  const std::string rel = std::filesystem::relative(path, SharedData()).generic_string();
  for (const FbxOutcome& o : FbxCorpus()) {
    if (o.file == rel) return &o;
  }
  return nullptr;
}

// Every FBX of the corpus that the table says reads; a corpus file without a row is a test
// failure (reported here), so no folder is ever skipped silently.
inline std::vector<std::string> ReadableCorpusFbx() {
  std::vector<std::string> files;
  for (const std::string& path : SharedFiles(".fbx")) {
    const FbxOutcome* o = FbxOutcomeOf(path);
    if (o == nullptr) {
      ADD_FAILURE() << path << ": no row in tests/assimp/fbx_corpus.h: decide its outcome";
    } else if (o->read) {
      files.push_back(path);
    }
  }
  return files;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_ASSIMP_FBX_CORPUS_H_
