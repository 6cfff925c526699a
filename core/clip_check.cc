#include "core/clip_check.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>

#include "core/channel.h"

namespace rigel {
namespace {

// Shortest round-trip text of `v` ("0", "-0.01", "nan", "inf"), as fmt's "{}" prints it.
std::string Number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::optional<NonFinite> FindNonFinite(const Skeleton& skeleton, const Clip& clip) {
  const std::span<const double> values = clip.values();
  const int channels = clip.num_channels();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    NonFinite at;
    at.frame = static_cast<int>(i / static_cast<std::size_t>(channels));
    at.channel = static_cast<int>(i % static_cast<std::size_t>(channels));
    at.joint = skeleton.channel_joint(at.channel);
    at.value = values[i];
    return at;
  }
  return std::nullopt;
}

const char* FrameTimeProblem(double frame_time, long long frames) {
  if (!std::isfinite(frame_time) || frame_time <= 0) return "is not a finite number > 0";
  if (frame_time < kMinFrameTime) return "is below 1e-06 s (keys would share times)";
  if (frame_time > kMaxFrameTime) return "is above 86400 s (a day per frame)";
  const double last = frame_time * static_cast<double>(std::max<long long>(frames - 1, 0));
  if (!std::isfinite(last)) return "gives an infinite duration";
  // The spacing of single-precision floats at the last key time: a step below it makes keys share
  // a time somewhere in the clip.
  const float last_key = static_cast<float>(last);
  if (frames > 1 &&
      frame_time < static_cast<double>(std::nextafter(last_key, INFINITY) - last_key)) {
    return "is too small for the clip's length (keys would share a time in single precision)";
  }
  return nullptr;
}

std::optional<ClipFault> CheckClip(const Skeleton& skeleton, const Clip& clip) {
  ClipFault fault;
  if (!clip.matches(skeleton)) {
    fault.kind = ClipFault::Kind::kChannelCount;
    return fault;
  }
  if (clip.num_frames() < 1) {
    fault.kind = ClipFault::Kind::kNoFrame;
    return fault;
  }
  if (FrameTimeProblem(clip.frame_time(), clip.num_frames()) != nullptr) {
    fault.kind = ClipFault::Kind::kFrameTime;
    return fault;
  }
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (!skeleton.rest_translation(j).allFinite() ||
        !skeleton.rest_orientation(j).coeffs().allFinite()) {
      fault.kind = ClipFault::Kind::kNonFiniteRest;
      fault.value.joint = j;
      return fault;
    }
  }
  if (const std::optional<NonFinite> at = FindNonFinite(skeleton, clip)) {
    fault.kind = ClipFault::Kind::kNonFiniteValue;
    fault.value = *at;
    return fault;
  }
  const std::span<const double> weights = clip.weight_values();
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (std::isfinite(weights[i])) continue;
    fault.kind = ClipFault::Kind::kNonFiniteWeight;
    const auto n = static_cast<std::size_t>(clip.num_weights());
    fault.value = {static_cast<int>(i / n), static_cast<int>(i % n), -1, weights[i]};
    return fault;
  }
  return std::nullopt;
}

std::string DescribeClipFault(const ClipFault& fault, const Skeleton& skeleton, const Clip& clip) {
  switch (fault.kind) {
    case ClipFault::Kind::kChannelCount:
      return "clip has " + std::to_string(clip.num_channels()) +
             " channels per frame, the skeleton " + std::to_string(skeleton.num_channels());
    case ClipFault::Kind::kNoFrame:
      return "clip has no frame";
    case ClipFault::Kind::kFrameTime:
      return "frame time " + Number(clip.frame_time()) + " " +
             FrameTimeProblem(clip.frame_time(), clip.num_frames());
    case ClipFault::Kind::kNonFiniteRest:
      return "joint '" + skeleton.name(fault.value.joint) + "' has a non-finite rest transform";
    case ClipFault::Kind::kNonFiniteValue: {
      const NonFinite& at = fault.value;
      return "frame " + std::to_string(at.frame) + ", joint '" + skeleton.name(at.joint) +
             "', channel " + std::string(ChannelName(skeleton.channels()[at.channel])) +
             ": value is " + Number(at.value);
    }
    case ClipFault::Kind::kNonFiniteWeight: {
      const NonFinite& at = fault.value;
      const WeightChannel& w = clip.weight_channels()[at.channel];
      return "frame " + std::to_string(at.frame) + ", weight '" + w.mesh + "/" + w.target +
             "': value is " + Number(at.value);
    }
  }
  return "invalid clip";
}

}  // namespace rigel
