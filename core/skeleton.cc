#include "core/skeleton.h"

#include <cctype>

namespace rigel {

namespace {
constexpr std::array<std::string_view, 9> kChannelNames = {"Xposition", "Yposition", "Zposition",
                                                           "Xrotation", "Yrotation", "Zrotation",
                                                           "Xscale",    "Yscale",    "Zscale"};

std::optional<ChannelType> ParseName(std::string_view name, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string_view candidate = kChannelNames[i];
    if (candidate.size() != name.size()) continue;
    bool equal = true;
    for (size_t k = 0; k < name.size() && equal; ++k) {
      equal = std::tolower(static_cast<unsigned char>(name[k])) ==
              std::tolower(static_cast<unsigned char>(candidate[k]));
    }
    if (equal) return static_cast<ChannelType>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view ChannelName(ChannelType c) { return kChannelNames[static_cast<int>(c)]; }

std::optional<ChannelType> ParseChannelName(std::string_view name) { return ParseName(name, 6); }

std::optional<ChannelType> ParseAnyChannelName(std::string_view name) { return ParseName(name, 9); }

int Skeleton::FindJoint(std::string_view name) const {
  const auto it = index_by_name_.find(std::string(name));
  return it == index_by_name_.end() ? -1 : it->second;
}

std::optional<EulerOrder> Skeleton::rotation_order(int joint) const {
  if (rotation_count_[joint] != 3) return std::nullopt;
  std::array<int, 3> axes{};
  for (int k = 0; k < 3; ++k) axes[k] = ChannelAxis(channels_[rotation_channel_[joint][k]]);
  return EulerOrderFromAxes(axes);
}

}  // namespace rigel
