// Key reduction of blend-shape weight columns. See key_reduction.h (ReduceWeightKeys).
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "core/curves/key_reduction.h"

namespace rigel {

namespace {

// The fewest keys (frames, the first 0 and, with more than one, the last frames - 1) such that
// the linear interpolation of `values` between consecutive keys is within `tolerance` of every
// frame's value. Greedy: each segment runs as far as the tolerance holds.
std::vector<int> LinearKeys(const std::vector<double>& values, double tolerance) {
  const int frames = static_cast<int>(values.size());
  if (std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); })) {
    return {0};
  }
  std::vector<int> keys = {0};
  int a = 0;
  while (a < frames - 1) {
    int b = a + 1;
    // Extend the segment a..b while every frame inside stays within the tolerance.
    while (b + 1 < frames) {
      const int next = b + 1;
      bool fits = true;
      for (int f = a + 1; f < next && fits; ++f) {
        const double t = static_cast<double>(f - a) / (next - a);
        const double interpolated = values[a] + t * (values[next] - values[a]);
        fits = std::abs(interpolated - values[f]) <= tolerance;
      }
      if (!fits) break;
      b = next;
    }
    keys.push_back(b);
    a = b;
  }
  return keys;
}

// The largest error of the interpolation at `keys` over `values`.
double LinearError(const std::vector<double>& values, const std::vector<int>& keys) {
  double worst = 0.0;
  if (keys.size() == 1) {
    for (const double v : values) worst = std::max(worst, std::abs(v - values[keys[0]]));
    return worst;
  }
  for (std::size_t k = 0; k + 1 < keys.size(); ++k) {
    const int a = keys[k], b = keys[k + 1];
    for (int f = a + 1; f < b; ++f) {
      const double t = static_cast<double>(f - a) / (b - a);
      worst = std::max(worst, std::abs(values[a] + t * (values[b] - values[a]) - values[f]));
    }
  }
  return worst;
}

// Per target of `mesh`, its largest vertex offset; and the largest number of targets that move
// one vertex.
int TargetReach(const Mesh& mesh, std::vector<double>* reach) {
  std::vector<int> movers(mesh.positions.size(), 0);
  int most = 0;
  for (const MorphTarget& target : mesh.morph_targets) {
    double longest = 0.0;
    for (std::size_t i = 0; i < target.vertices.size(); ++i) {
      const double length = target.position_deltas[i].norm();
      if (length == 0.0) continue;
      longest = std::max(longest, length);
      const std::uint32_t v = target.vertices[i];
      if (v < movers.size()) most = std::max(most, ++movers[v]);
    }
    reach->push_back(longest);
  }
  return most;
}

}  // namespace

void ReduceWeightKeys(const Clip& clip, std::span<const Mesh> meshes,
                      const KeyReductionOptions& options, ClipKeys* keys) {
  const int columns = clip.num_weights();
  const int frames = clip.num_frames();
  if (columns == 0 || frames == 0 || clip.weight_channels() != MorphWeightChannels(meshes)) return;
  keys->weights.assign(columns, {});
  int column = 0;
  std::vector<double> values(frames);
  for (const Mesh& mesh : meshes) {
    std::vector<double> reach;
    const int overlap = std::max(TargetReach(mesh, &reach), 1);
    for (std::size_t t = 0; t < mesh.morph_targets.size(); ++t, ++column) {
      for (int f = 0; f < frames; ++f) values[f] = clip.weights(f)[column];
      const double metres = reach[t] * options.metres_per_unit;
      // A target that moves nothing holds one key whatever its weight does; the others are held
      // to their share of the bound, in weight units.
      const double tolerance =
          metres > 0.0 ? options.max_error / overlap / metres : std::numeric_limits<double>::max();
      std::vector<int>& kept = keys->weights[column];
      kept = metres > 0.0 ? LinearKeys(values, tolerance) : std::vector<int>{0};
      keys->dense_keys += frames;
      keys->keys += static_cast<long long>(kept.size());
      keys->max_error = std::max(keys->max_error, LinearError(values, kept) * metres * overlap);
    }
  }
}

}  // namespace rigel
