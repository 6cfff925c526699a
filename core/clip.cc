#include "core/clip.h"

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
}

bool Clip::matches(const Skeleton& skeleton) const {
  return num_channels_ == skeleton.num_channels();
}

}  // namespace rigel
