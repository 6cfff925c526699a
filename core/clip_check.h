// The one clip validator: what makes a clip unfit to be written or baked on a skeleton (a row
// width that is not the skeleton's channel count, no frame, a frame time that is not finite and
// > 0, a NaN or infinite value or rest transform), located by frame, channel and joint. Every
// writer (BVH, glTF, FBX) and the bake check clips with it.
#ifndef RIGEL_CORE_CLIP_CHECK_H_
#define RIGEL_CORE_CLIP_CHECK_H_

#include <optional>
#include <string>

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

// The first NaN or infinite value of a clip, in frame-major order.
struct NonFinite {
  int frame = 0;       // 0-based frame (row)
  int channel = 0;     // 0-based channel (column of the skeleton's channel layout)
  int joint = 0;       // joint that owns the channel
  double value = 0.0;  // the value itself (NaN or +-infinity)
};

// First non-finite value of `clip` (frame 0 first, then channel by channel), or nullopt when
// every value is finite. Requires clip.matches(skeleton).
std::optional<NonFinite> FindNonFinite(const Skeleton& skeleton, const Clip& clip);

// The frame times a clip may have: finite, from kMinFrameTime to kMaxFrameTime seconds, with a
// finite duration over `frames` frames and the last two key times distinct in single precision
// (glTF and FBX store key times as floats). nullptr when `frame_time` fits, else what is wrong
// ("is below 1e-06 s (keys would share times)"). Readers and writers use it, so no Inf
// or zero-spaced key time reaches a file.
inline constexpr double kMinFrameTime = 1e-6;
inline constexpr double kMaxFrameTime = 86400.0;
const char* FrameTimeProblem(double frame_time, long long frames);

// Why a clip cannot be written or baked on a skeleton.
struct ClipFault {
  enum class Kind {
    kChannelCount,     // the clip's row width is not the skeleton's channel count
    kNoFrame,          // the clip has no frame
    kFrameTime,        // the frame time does not fit (FrameTimeProblem)
    kNonFiniteRest,    // a joint's rest translation or orientation is not finite (`joint`)
    kNonFiniteValue,   // a value is NaN or infinite (`value`)
    kNonFiniteWeight,  // a blend-shape weight is NaN or infinite (`value`: frame, channel = the
                       // weight channel, joint -1)
  };
  Kind kind = Kind::kChannelCount;
  // kNonFiniteValue: where; kNonFiniteRest: value.joint only.
  NonFinite value;
};

// The first fault of `clip` on `skeleton`, checked in the order of ClipFault::Kind, or nullopt
// for a clip that can be written. Rest orientations other than identity are not faults (BVH's
// writer refuses them itself).
std::optional<ClipFault> CheckClip(const Skeleton& skeleton, const Clip& clip);

// One line describing `fault` of `clip` on `skeleton`, for messages prefixed by the file (and
// clip) name: "frame 12, joint 'LeftFoot', channel Xrotation: value is nan", "clip has 5
// channels per frame, the skeleton 66", "clip has no frame", "frame time 0 is not a finite
// number > 0", "joint 'Hips' has a non-finite rest transform", "frame 3, weight 'Face/Smile':
// value is nan".
std::string DescribeClipFault(const ClipFault& fault, const Skeleton& skeleton, const Clip& clip);

}  // namespace rigel

#endif  // RIGEL_CORE_CLIP_CHECK_H_
