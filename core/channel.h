// Animation channels: the six BVH degrees of freedom a joint can expose, in any subset and order,
// and three scale channels (FBX and glTF; BVH cannot hold them).
#ifndef RIGEL_CORE_CHANNEL_H_
#define RIGEL_CORE_CHANNEL_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace rigel {

// One scalar degree of freedom of a joint. Position channels are lengths in the file's unit, added
// to the joint's rest translation in its parent's space; rotation channels are radians about the
// joint's local axis, composed in the order the joint lists them (see core/euler.h). Scale
// channels are unitless: the joint's scale along its own X/Y/Z axis is 1 + value (so a zero row is
// the rest pose, and a channel interpolated linearly is a scale interpolated linearly), applied
// after the rotation (T * R * S, glTF's and FBX's order); the rest's own scale is folded into the
// rest translations of the joint's children.
enum class ChannelType : std::uint8_t {
  kXposition = 0,
  kYposition = 1,
  kZposition = 2,
  kXrotation = 3,
  kYrotation = 4,
  kZrotation = 5,
  kXscale = 6,
  kYscale = 7,
  kZscale = 8,
};

// How a joint's scaled frame inherits its parent's scale (FBX InheritType). The child's
// translation is always in the parent's scaled space.
//   kInherit:    world linear = parent's world linear * R * S (FBX RrSs, glTF, Blender).
//   kCompensate: the parent's scale is left out of the child's rotation and scale (FBX Rrs, as
//                the FBX SDK computes it; Maya's segment scale compensation):
//                world linear = parent's world rotation frame * R * S.
enum class ScaleInheritance : std::uint8_t { kInherit = 0, kCompensate = 1 };

// How a file states a joint's position channels. rigel always stores them as deltas added to the
// rest translation (so FK, solvers and exporters see one meaning); the mode records the file's own
// convention so the BVH writer gives the values back as the file had them.
//   kAdd:     the file's values are deltas added to the OFFSET (most BVH roots).
//   kReplace: the file's values are absolute local translations that replace the OFFSET on the
//             axes they cover (exports with 6 channels on every joint); rigel stores value -
//             OFFSET.
enum class TranslationMode : std::uint8_t { kAdd = 0, kReplace = 1 };

constexpr bool IsRotation(ChannelType c) {
  return static_cast<int>(c) >= 3 && static_cast<int>(c) < 6;
}
constexpr bool IsScale(ChannelType c) { return static_cast<int>(c) >= 6; }
constexpr bool IsTranslation(ChannelType c) { return static_cast<int>(c) < 3; }
// 0 = X, 1 = Y, 2 = Z.
constexpr int ChannelAxis(ChannelType c) { return static_cast<int>(c) % 3; }

// The BVH spelling: "Xposition", "Zrotation", ...; scale channels "Xscale", "Yscale", "Zscale".
std::string_view ChannelName(ChannelType c);

// Parses a BVH channel name, case-insensitively ("Xrotation", "XROTATION"). nullopt if unknown
// (scale channels are not BVH channels: ParseAnyChannelName reads them too).
std::optional<ChannelType> ParseChannelName(std::string_view name);
std::optional<ChannelType> ParseAnyChannelName(std::string_view name);

}  // namespace rigel

#endif  // RIGEL_CORE_CHANNEL_H_
