// Text helpers the BVH reader's parts share (importers/bvh_reader.cc, bvh_units.cc). Not
// installed.
#ifndef RIGEL_IMPORTERS_BVH_TEXT_H_
#define RIGEL_IMPORTERS_BVH_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "importers/utf8.h"

namespace rigel::bvh_internal {

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A token for a message: at most 40 bytes, valid UTF-8 (other bytes written "\xFF"), so the
// message can go into a JSON report.
inline std::string Quote(std::string_view s) {
  constexpr size_t kMax = 40;
  bool cut = false;
  const std::string shown = Utf8ForMessage(s, kMax, &cut);
  return "'" + shown + (cut ? "...'" : "'");
}

}  // namespace rigel::bvh_internal

#endif  // RIGEL_IMPORTERS_BVH_TEXT_H_
