// Blend shapes (issue 28 item 2), without Blender: morph targets and their animated weights
// (clip weight channels, core/clip.h) cross the import child's codec exactly, go through glTF and
// FBX and back with the same offsets and weights, survive slicing, resampling and the bake, and
// what cannot hold them (BVH) says so. The corpus's morph-only files read.
#include <gtest/gtest.h>

#include <cmath>

#include "core/clip_check.h"
#include "core/clip_ops.h"
#include "core/ik/bake.h"
#include "core/skeleton_builder.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "importers/scene_codec.h"
#include "test_util.h"

namespace rigel {
namespace morph_io_test {
namespace {

using testing::TempDir;

// A two-joint skeleton (Root, Tip at +1 Y) with a quad attached to Tip that has two blend shapes
// ("Up": vertices 2 and 3 up by 0.25 with normal offsets; "Wide": vertex 1 out by 0.5), and one
// 5-frame clip that bends Tip and animates both weights.
Scene SmallMorphScene() {
  RawSkeleton raw;
  RawSkeleton::Joint root;
  root.name = "Root";
  root.channels = {ChannelType::kZrotation, ChannelType::kXrotation, ChannelType::kYrotation};
  RawSkeleton::Joint tip;
  tip.name = "Tip";
  tip.rest_translation = Eigen::Vector3d(0, 1, 0);
  tip.channels = root.channels;
  root.children.push_back(tip);
  raw.roots.push_back(root);
  std::string error;
  Scene scene;
  scene.skeleton = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(scene.skeleton) << error;
  scene.file_unit_metres = 1.0;
  Mesh mesh;
  mesh.name = "Quad";
  mesh.positions = {{0, 1, 0}, {1, 1, 0}, {1, 2, 0}, {0, 2, 0}};
  mesh.normals.assign(4, Eigen::Vector3d(0, 0, 1));
  mesh.triangles = {0, 1, 2, 0, 2, 3};
  mesh.attach_joint = 1;
  mesh.attach_bind.translation() = Eigen::Vector3d(0, 1, 0);
  MorphTarget up;
  up.name = "Up";
  up.vertices = {2, 3};
  up.position_deltas = {{0, 0.25, 0}, {0, 0.25, 0}};
  up.normal_deltas = {{0, 0.5, -0.125}, {0, 0.5, -0.125}};
  MorphTarget wide;
  wide.name = "Wide";
  wide.vertices = {1};
  wide.position_deltas = {{0.5, 0, 0}};
  wide.default_weight = 0.25;
  mesh.morph_targets = {up, wide};
  scene.meshes.push_back(mesh);
  Clip clip(5, scene.skeleton->num_channels(), 1.0 / 30);
  clip.set_name("wave");
  clip.SetWeightChannels(MorphWeightChannels(scene.meshes));
  for (int f = 0; f < 5; ++f) {
    clip.at(f, 3) = 0.1 * f;  // Tip's Zrotation
    clip.weights(f)[0] = 0.25 * f;
    clip.weights(f)[1] = 1.0 - 0.125 * f;
  }
  scene.clips.push_back(clip);
  return scene;
}

TEST(MorphData, ChecksAndCountsTargets) {
  Scene scene = SmallMorphScene();
  EXPECT_EQ(CountMorphTargets(scene.meshes), 2);
  const std::vector<WeightChannel> channels = MorphWeightChannels(scene.meshes);
  ASSERT_EQ(channels.size(), 2u);
  EXPECT_EQ(channels[1].mesh, "Quad");
  EXPECT_EQ(channels[1].target, "Wide");
  EXPECT_EQ(CheckMesh(*scene.skeleton, scene.meshes[0]), "");
  Mesh bad = scene.meshes[0];
  bad.morph_targets[0].vertices = {3, 2};
  EXPECT_NE(CheckMesh(*scene.skeleton, bad).find("morph target 'Up'"), std::string::npos);
  bad = scene.meshes[0];
  bad.morph_targets[1].vertices = {4};
  EXPECT_NE(CheckMesh(*scene.skeleton, bad).find("not below 4"), std::string::npos);
  bad = scene.meshes[0];
  bad.morph_targets[1].position_deltas.clear();
  EXPECT_NE(CheckMesh(*scene.skeleton, bad).find("offsets for 1 vertices"), std::string::npos);
  Clip clip = scene.clips[0];
  clip.weights(2)[1] = NAN;
  const std::optional<ClipFault> fault = CheckClip(*scene.skeleton, clip);
  ASSERT_TRUE(fault);
  EXPECT_EQ(DescribeClipFault(*fault, *scene.skeleton, clip),
            "frame 2, weight 'Quad/Wide': value is nan");
}

TEST(MorphData, DeformAppliesWeightsBeforeTheJoint) {
  const Scene scene = SmallMorphScene();
  Pose pose(*scene.skeleton);
  std::vector<Eigen::Vector3d> out;
  DeformMesh(scene.meshes[0], pose.world, &out);  // default weights: Up 0, Wide 0.25
  EXPECT_TRUE(out[1].isApprox(Eigen::Vector3d(1.125, 1, 0)));
  EXPECT_TRUE(out[2].isApprox(Eigen::Vector3d(1, 2, 0)));
  const std::vector<double> weights{1.0, 0.0};
  DeformMesh(scene.meshes[0], pose.world, &out, weights);
  EXPECT_TRUE(out[2].isApprox(Eigen::Vector3d(1, 2.25, 0)));
  EXPECT_TRUE(out[1].isApprox(Eigen::Vector3d(1, 1, 0)));
}

TEST(MorphData, CodecRoundTripIsExact) {
  const Scene scene = SmallMorphScene();
  const Scene back = DecodeScene(EncodeScene(scene), "test");
  ASSERT_EQ(back.meshes.size(), 1u);
  const Mesh& m = back.meshes[0];
  ASSERT_EQ(m.morph_targets.size(), 2u);
  for (std::size_t t = 0; t < 2; ++t) {
    const MorphTarget& a = scene.meshes[0].morph_targets[t];
    const MorphTarget& b = m.morph_targets[t];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.vertices, b.vertices);
    EXPECT_EQ(a.position_deltas, b.position_deltas);
    EXPECT_EQ(a.normal_deltas, b.normal_deltas);
    EXPECT_EQ(a.default_weight, b.default_weight);
  }
  const Clip& c = back.clips[0];
  EXPECT_EQ(c.weight_channels(), scene.clips[0].weight_channels());
  const auto a = scene.clips[0].weight_values();
  const auto b = c.weight_values();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

TEST(MorphData, SliceResampleAndBakeCarryWeights) {
  const Scene scene = SmallMorphScene();
  const Clip& clip = scene.clips[0];
  const Clip slice = SliceClip(clip, 1, 3);
  ASSERT_EQ(slice.num_weights(), 2);
  EXPECT_EQ(slice.weights(0)[0], clip.weights(1)[0]);
  EXPECT_EQ(slice.weights(2)[1], clip.weights(3)[1]);
  const Clip fast = ResampleClip(*scene.skeleton, clip, 60);
  ASSERT_EQ(fast.num_frames(), 9);
  EXPECT_NEAR(fast.weights(1)[0], 0.125, 1e-12);  // halfway between frames 0 and 1
  EXPECT_EQ(fast.weights(8)[1], clip.weights(4)[1]);
  // The bake keeps the clip's weights and writes what the callback keys.
  ik::Rig rig(scene.skeleton);
  std::vector<ik::Target> targets;
  ik::Workspace workspace;
  Clip baked;
  ik::BakeJob job;
  job.rig = &rig;
  job.targets = &targets;
  job.clip = &clip;
  job.output = &baked;
  job.workspace = &workspace;
  job.on_frame = [](int f, Pose& pose, std::string*) {
    EXPECT_EQ(pose.weight_channels.size(), 2u);
    if (f == 2) pose.weights[1] = 0.75;
    return ik::FrameAction::kSkip;
  };
  ASSERT_TRUE(job.Run()) << job.error;
  ASSERT_EQ(baked.num_weights(), 2);
  EXPECT_EQ(baked.weights(2)[1], 0.75);
  EXPECT_EQ(baked.weights(3)[0], clip.weights(3)[0]);
}

// The offset `target` gives the vertex of `mesh` at `position` (zero when it does not move it).
Eigen::Vector3d OffsetAt(const Mesh& mesh, const MorphTarget& target,
                         const Eigen::Vector3d& position) {
  for (std::size_t i = 0; i < target.vertices.size(); ++i) {
    if ((mesh.positions[target.vertices[i]] - position).norm() < 1e-6) {
      return target.position_deltas[i];
    }
  }
  return Eigen::Vector3d::Zero();
}

// Out as `ext` and back through Assimp: the same targets (names; each vertex moved by the same
// offset: FBX comes back with a vertex per triangle corner, so vertices are matched by position)
// and the same weights on every frame, to float precision (glTF and FBX store floats).
void ExpectRoundTrip(const char* ext) {
  TempDir dir;
  const Scene scene = SmallMorphScene();
  const std::string out = dir.file(std::string("morph.") + ext);
  SaveScene(scene, out);
  const Scene back = LoadScene(out);
  ASSERT_EQ(back.meshes.size(), 1u);
  const Mesh& a_mesh = scene.meshes[0];
  const Mesh& m = back.meshes[0];
  ASSERT_EQ(m.morph_targets.size(), 2u);
  for (std::size_t t = 0; t < 2; ++t) {
    const MorphTarget& a = a_mesh.morph_targets[t];
    const MorphTarget& b = m.morph_targets[t];
    EXPECT_EQ(a.name, b.name);
    EXPECT_NEAR(b.default_weight, std::string(ext) == "fbx" ? 0.0 : a.default_weight, 1e-7);
    for (const Eigen::Vector3d& p : m.positions) {
      EXPECT_LT((OffsetAt(a_mesh, a, p) - OffsetAt(m, b, p)).norm(), 1e-6) << a.name;
    }
  }
  ASSERT_EQ(back.clips.size(), 1u);
  const Clip& c = back.clips[0];
  ASSERT_EQ(c.num_frames(), 5);
  ASSERT_EQ(c.num_weights(), 2);
  EXPECT_EQ(c.weight_channels(), scene.clips[0].weight_channels());
  for (int f = 0; f < 5; ++f) {
    for (int w = 0; w < 2; ++w) {
      EXPECT_NEAR(c.weights(f)[w], scene.clips[0].weights(f)[w], 1e-6) << "frame " << f;
    }
  }
}

TEST(MorphIo, GlbRoundTrip) { ExpectRoundTrip("glb"); }
TEST(MorphIo, GltfRoundTrip) { ExpectRoundTrip("gltf"); }
TEST(MorphIo, FbxRoundTrip) { ExpectRoundTrip("fbx"); }

TEST(MorphIo, WritersRefuseAWrongWeightCount) {
  TempDir dir;
  Scene scene = SmallMorphScene();
  scene.meshes[0].morph_targets.pop_back();
  for (const char* ext : {"glb", "fbx"}) {
    try {
      SaveScene(scene, dir.file(std::string("bad.") + ext));
      ADD_FAILURE() << ext << ": no error";
    } catch (const ExportError& e) {
      EXPECT_NE(std::string(e.what()).find("2 weight channels, the meshes have 1 blend shapes"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(MorphIo, BvhNamesTheBlendShapesItDrops) {
  EXPECT_EQ(DroppedBy("a.bvh", 1, 1, 2),
            (std::vector<std::string>{
                "a.bvh: BVH holds no mesh: 1 mesh not written (write .glb or .fbx to keep them)",
                "a.bvh: BVH holds no blend shape: 2 blend shapes and their weights not written "
                "(write .glb or .fbx to keep them)"}));
  EXPECT_TRUE(DroppedBy("a.glb", 1, 1, 2).empty());
  EXPECT_TRUE(DroppedBy("a.fbx", 1, 1, 2).empty());
}

// The corpus's morph files: what each holds, read and through glb and FBX with the same weights.
struct MorphFile {
  const char* rel;
  int targets;            // over all meshes
  int frames;             // of the first take
  int animated;           // weight channels that change in the first take
  double weight0_frame5;  // the first target's weight on frame 5
};

TEST(MorphIo, CorpusMorphFilesReadAndRoundTrip) {
  RIGEL_REQUIRE_SHARED_DATA();
  const MorphFile files[] = {
      {"wild/bevyengine_bevy/MorphStressTest.gltf", 16, 225, 16, NAN},
      {"wild/Sensor-Guided-Living_vr/Horse.glb", 15, 46, 15, 0.0},
      {"wild/Sensor-Guided-Living_vr/RobotExpressive.glb", 9, 81, 0, 0.0},
  };
  TempDir dir;
  for (const MorphFile& file : files) {
    SCOPED_TRACE(file.rel);
    const Scene scene = LoadScene(testing::SharedData() + "/" + file.rel);
    EXPECT_EQ(CountMorphTargets(scene.meshes), file.targets);
    const Clip& clip = scene.clips.front();
    EXPECT_EQ(clip.num_frames(), file.frames);
    ASSERT_EQ(clip.num_weights(), file.targets);
    int animated = 0;
    for (int w = 0; w < clip.num_weights(); ++w) {
      for (int f = 1; f < clip.num_frames(); ++f) {
        if (clip.weights(f)[w] == clip.weights(0)[w]) continue;
        ++animated;
        break;
      }
    }
    EXPECT_EQ(animated, file.animated);
    if (!std::isnan(file.weight0_frame5)) {
      EXPECT_EQ(clip.weights(5)[0], file.weight0_frame5);
    }
    for (const char* ext : {"glb", "fbx"}) {
      SCOPED_TRACE(ext);
      const std::string out = dir.file(std::string("out.") + ext);
      SaveScene(scene, out);
      const Scene back = LoadScene(out);
      ASSERT_EQ(back.clips.size(), scene.clips.size());
      ASSERT_EQ(CountMorphTargets(back.meshes), file.targets);
      for (std::size_t k = 0; k < scene.clips.size(); ++k) {
        const Clip& a = scene.clips[k];
        const Clip& b = back.clips[k];
        ASSERT_EQ(b.num_frames(), a.num_frames());
        ASSERT_EQ(b.num_weights(), a.num_weights());
        double worst = 0;
        for (std::size_t i = 0; i < a.weight_values().size(); ++i) {
          worst = std::max(worst, std::abs(a.weight_values()[i] - b.weight_values()[i]));
        }
        EXPECT_LT(worst, 1e-5) << "take " << a.name();  // float key times and values
      }
    }
  }
}

// Horse.glb animates nothing but its 15 weights (no skeleton, no animated node): it used to be
// refused with "no skeleton"; its mesh node is now the one joint, and the weights are the file's
// (key k sets target k to 1 at k * 0.1 s; at 30 fps frame 3 is key 1).
TEST(MorphIo, MorphOnlyFileReads) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene scene = LoadScene(testing::SharedData() + "/wild/Sensor-Guided-Living_vr/Horse.glb");
  EXPECT_EQ(scene.skeleton->num_joints(), 1);
  ASSERT_EQ(scene.clips.size(), 1u);
  const Clip& clip = scene.clips[0];
  EXPECT_EQ(clip.weights(0)[0], 1.0);
  EXPECT_EQ(clip.weights(3)[0], 0.0);
  EXPECT_EQ(clip.weights(3)[1], 1.0);
  EXPECT_NEAR(clip.weights(4)[1], 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(clip.weights(4)[2], 1.0 / 3.0, 1e-12);
}

}  // namespace
}  // namespace morph_io_test
}  // namespace rigel
