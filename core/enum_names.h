// Names of an enum's values kept in one table, for the name and parse functions of the enums that
// reports and options spell out (ik::MethodName, retarget::ParseRootMotion, ...). The enum's values
// are 0, 1, 2, ... in table order; each table sits next to a static_assert on its last value.
#ifndef RIGEL_CORE_ENUM_NAMES_H_
#define RIGEL_CORE_ENUM_NAMES_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace rigel {

// The name of `value` in `names` (indexed by the value); `fallback` when it is out of range.
template <typename Enum, std::size_t N>
constexpr std::string_view EnumName(Enum value, const std::array<std::string_view, N>& names,
                                    std::string_view fallback = "?") {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? names[i] : fallback;
}

// The value named `text` (exactly) in `names`; nullopt when none is.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> ParseEnumName(std::string_view text,
                                            const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace rigel

#endif  // RIGEL_CORE_ENUM_NAMES_H_
