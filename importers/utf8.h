// UTF-8 validation for names read from files (joint names): glTF and the JSON reports need valid
// UTF-8, so importers reject other bytes where they read them, naming the file.
#ifndef RIGEL_IMPORTERS_UTF8_H_
#define RIGEL_IMPORTERS_UTF8_H_

#include <cstddef>
#include <string_view>

namespace rigel {

// True when `text` is well-formed UTF-8 (RFC 3629, Unicode table 3-7): no stray continuation
// bytes, no truncated sequences, no overlong forms, no surrogates (U+D800..U+DFFF), nothing above
// U+10FFFF. ASCII, including control characters, is valid.
inline bool IsValidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int length = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;  // continuation byte, C0/C1 (overlong) or F5..FF
    }
    if (end - p < length) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int k = 2; k < length; ++k) {
      if ((p[k] & 0xC0) != 0x80) return false;
    }
    p += length;
  }
  return true;
}

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_UTF8_H_
