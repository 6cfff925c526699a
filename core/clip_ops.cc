// Clip slicing and resampling. See clip_ops.h.
#include "core/clip_ops.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/channel.h"
#include "core/euler.h"

namespace rigel {

Clip SliceClip(const Clip& clip, int first, int last) {
  assert(0 <= first && first <= last && last < clip.num_frames() && "slice out of range");
  Clip out(last - first + 1, clip.num_channels(), clip.frame_time());
  out.set_name(clip.name());
  for (int f = first; f <= last; ++f) {
    const std::span<const double> row = clip.frame(f);
    std::copy(row.begin(), row.end(), out.frame(f - first).begin());
  }
  out.CopyWeightsFrom(clip, first);
  return out;
}

Clip ResampleClip(const Skeleton& skeleton, const Clip& clip, double frames_per_second) {
  assert(frames_per_second > 0 && clip.matches(skeleton) && clip.num_frames() > 0);
  const double new_time = 1.0 / frames_per_second;
  const int frames = static_cast<int>(std::floor(clip.duration() * frames_per_second + 1e-6)) + 1;
  Clip out(frames, clip.num_channels(), new_time);
  out.set_name(clip.name());
  out.SetWeightChannels(clip.weight_channels());
  const int last = clip.num_frames() - 1;
  for (int f = 0; f < frames; ++f) {
    const double s = std::min(f * new_time / clip.frame_time(), static_cast<double>(last));
    const int i0 = std::min(static_cast<int>(std::floor(s)), last);
    const int i1 = std::min(i0 + 1, last);
    const double t = s - i0;
    const std::span<const double> a = clip.frame(i0);
    const std::span<const double> b = clip.frame(i1);
    std::span<double> row = out.frame(f);
    for (int c = 0; c < clip.num_channels(); ++c) row[c] = a[c] + (b[c] - a[c]) * t;
    const std::span<const double> wa = clip.weights(i0), wb = clip.weights(i1);
    const std::span<double> w = out.weights(f);
    for (int c = 0; c < clip.num_weights(); ++c) w[c] = wa[c] + (wb[c] - wa[c]) * t;
    if (t == 0.0) continue;
    for (int j = 0; j < skeleton.num_joints(); ++j) {
      const std::optional<EulerOrder> order = skeleton.rotation_order(j);
      if (!order) continue;
      const std::span<const int> rot = skeleton.rotation_channels(j);
      Eigen::Vector3d xa, xb, xl;
      for (int k = 0; k < 3; ++k) {
        const int axis = ChannelAxis(skeleton.channels()[rot[k]]);
        xa[axis] = a[rot[k]];
        xb[axis] = b[rot[k]];
        xl[axis] = row[rot[k]];
      }
      const Eigen::Quaterniond qa = EulerToQuaternion(*order, xa);
      const Eigen::Quaterniond qb = EulerToQuaternion(*order, xb);
      const Eigen::Vector3d x = QuaternionToEulerNear(qa.slerp(t, qb), *order, xl);
      for (int k = 0; k < 3; ++k) row[rot[k]] = x[ChannelAxis(skeleton.channels()[rot[k]])];
    }
  }
  return out;
}

}  // namespace rigel
