#include "core/clip.h"

#include <algorithm>

#include "core/skeleton.h"

namespace rigel {

Clip::Clip(int num_frames, int num_channels, double frame_time)
    : num_frames_(num_frames),
      num_channels_(num_channels),
      frame_time_(frame_time),
      values_(static_cast<size_t>(num_frames) * num_channels, 0.0) {}

void Clip::Resize(int num_frames) {
  num_frames_ = num_frames;
  values_.resize(static_cast<size_t>(num_frames) * num_channels_, 0.0);
  weights_.resize(static_cast<size_t>(num_frames) * weight_channels_.size(), 0.0);
}

void Clip::SetWeightChannels(std::vector<WeightChannel> channels, std::span<const double> initial) {
  weight_channels_ = std::move(channels);
  const size_t n = weight_channels_.size();
  weights_.assign(static_cast<size_t>(num_frames_) * n, 0.0);
  for (int f = 0; f < num_frames_; ++f) {
    for (size_t w = 0; w < n && w < initial.size(); ++w) weights_[f * n + w] = initial[w];
  }
}

void Clip::CopyWeightsFrom(const Clip& other, int first) {
  SetWeightChannels(other.weight_channels());
  if (other.num_frames() == 0) return;
  for (int f = 0; f < num_frames_; ++f) {
    const std::span<const double> row = other.weights(std::min(first + f, other.num_frames() - 1));
    std::copy(row.begin(), row.end(), weights(f).begin());
  }
}

bool Clip::matches(const Skeleton& skeleton) const {
  return num_channels_ == skeleton.num_channels();
}

}  // namespace rigel
