// ReduceWeightKeys: blend-shape weight keys held to the vertex bound, checked by this test's own
// arithmetic (each vertex's displacement under the dense and the interpolated weights, every
// frame), with two targets sharing a vertex (their errors add), a still column and a target that
// moves nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/curves/key_reduction.h"

namespace rigel {
namespace {

// One mesh of three vertices: "smile" moves vertices 0 and 1 (up to 2 cm), "blink" vertices 1
// and 2 (up to 1 cm), "flat" nothing; vertex 1 is moved by two targets.
std::vector<Mesh> Face() {
  Mesh mesh;
  mesh.name = "face";
  mesh.positions = {Eigen::Vector3d::Zero(), Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY()};
  MorphTarget smile{
      "smile", {0, 1}, {Eigen::Vector3d(0, 0.02, 0), Eigen::Vector3d(0, 0.01, 0)}, {}, 0.0};
  MorphTarget blink{
      "blink", {1, 2}, {Eigen::Vector3d(0.01, 0, 0), Eigen::Vector3d(0, 0, 0.005)}, {}, 0.0};
  MorphTarget flat{"flat", {0}, {Eigen::Vector3d::Zero()}, {}, 0.0};
  mesh.morph_targets = {smile, blink, flat};
  return {mesh};
}

// The weight of column `c` at frame `f` interpolated linearly between `keys`.
double Interpolated(const Clip& clip, int c, const std::vector<int>& keys, int f) {
  if (keys.size() == 1) return clip.weights(keys[0])[c];
  for (std::size_t k = 0; k + 1 < keys.size(); ++k) {
    const int a = keys[k], b = keys[k + 1];
    if (f >= a && f <= b) {
      const double t = static_cast<double>(f - a) / (b - a);
      return clip.weights(a)[c] + t * (clip.weights(b)[c] - clip.weights(a)[c]);
    }
  }
  ADD_FAILURE() << "frame " << f << " outside the keys";
  return 0;
}

TEST(WeightKeys, EveryVertexWithinTheBoundOnEveryFrame) {
  const std::vector<Mesh> meshes = Face();
  constexpr int kFrames = 400;
  Clip clip(kFrames, 0, 1.0 / 60);
  clip.SetWeightChannels(MorphWeightChannels(meshes));
  for (int f = 0; f < kFrames; ++f) {
    const double t = f / 60.0;
    clip.weights(f)[0] = 0.5 + 0.5 * std::sin(2.0 * t);                        // smooth
    clip.weights(f)[1] = f % 90 < 6 ? 1.0 - std::abs(f % 90 - 3) / 3.0 : 0.0;  // blinks
    clip.weights(f)[2] = 0.3 + 0.2 * std::sin(7.0 * t);                        // moves nothing
  }
  KeyReductionOptions options;
  options.max_error = 1e-4;  // 0.1 mm
  options.metres_per_unit = 1.0;
  ClipKeys keys;
  ReduceWeightKeys(clip, meshes, options, &keys);
  ASSERT_EQ(keys.weights.size(), 3u);
  EXPECT_EQ(keys.weights[2], std::vector<int>{0}) << "a target that moves nothing needs one key";
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(keys.weights[c].front(), 0);
    EXPECT_EQ(keys.weights[c].back(), kFrames - 1);
    EXPECT_LT(keys.weights[c].size(), kFrames / 4u) << "column " << c;
  }
  EXPECT_EQ(keys.dense_keys, 3 * kFrames);
  EXPECT_EQ(keys.keys, static_cast<long long>(keys.weights[0].size() + keys.weights[1].size() + 1));
  // Each vertex's displacement error, by this test's arithmetic.
  const Mesh& mesh = meshes[0];
  double worst = 0;
  for (int f = 0; f < kFrames; ++f) {
    std::vector<Eigen::Vector3d> error(mesh.positions.size(), Eigen::Vector3d::Zero());
    for (int c = 0; c < 3; ++c) {
      const double dw = Interpolated(clip, c, keys.weights[c], f) - clip.weights(f)[c];
      const MorphTarget& target = mesh.morph_targets[c];
      for (std::size_t i = 0; i < target.vertices.size(); ++i) {
        error[target.vertices[i]] += dw * target.position_deltas[i];
      }
    }
    for (const Eigen::Vector3d& e : error) worst = std::max(worst, e.norm());
  }
  EXPECT_LE(worst, options.max_error * (1 + 1e-9));
  EXPECT_GT(worst, options.max_error / 20) << "the bound is used, not far undercut";
  EXPECT_LE(worst, keys.max_error * (1 + 1e-9)) << "max_error bounds the error found here";
  // Halving the bound keeps more keys.
  options.max_error /= 2;
  ClipKeys finer;
  ReduceWeightKeys(clip, meshes, options, &finer);
  EXPECT_GT(finer.weights[0].size(), keys.weights[0].size());
}

TEST(WeightKeys, ColumnsThatAreNotTheMeshesTargetsAreLeftDense) {
  const std::vector<Mesh> meshes = Face();
  Clip clip(10, 0, 1.0 / 30);
  clip.SetWeightChannels({{"face", "smile"}, {"face", "blink"}});  // "flat" missing
  ClipKeys keys;
  ReduceWeightKeys(clip, meshes, KeyReductionOptions{}, &keys);
  EXPECT_TRUE(keys.weights.empty());
  EXPECT_EQ(keys.dense_keys, 0);
}

}  // namespace
}  // namespace rigel
