// UTF-8 validation for names read from files (joint names): glTF and the JSON reports need valid
// UTF-8, so importers reject other bytes where they read them, naming the file.
#ifndef RIGEL_IMPORTERS_UTF8_H_
#define RIGEL_IMPORTERS_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace rigel {

// Length in bytes (1 to 4) of the well-formed UTF-8 sequence starting at text[pos], or 0 when the
// bytes there are not one (RFC 3629, Unicode table 3-7: a stray continuation byte, a truncated
// sequence, an overlong form, a surrogate U+D800..U+DFFF, or a code point above U+10FFFF).
inline int Utf8SequenceLength(std::string_view text, std::size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  const std::size_t left = text.size() - pos;
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
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
    return 0;  // continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (left < static_cast<std::size_t>(length)) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (int k = 2; k < length; ++k) {
    if ((p[k] & 0xC0) != 0x80) return 0;
  }
  return length;
}

// True when `text` is well-formed UTF-8. ASCII, including control characters, is valid.
inline bool IsValidUtf8(std::string_view text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const int n = Utf8SequenceLength(text, pos);
    if (n == 0) return false;
    pos += static_cast<std::size_t>(n);
  }
  return true;
}

// At most `max_bytes` of `text` for an error message, always valid UTF-8: a byte that does not
// start a well-formed sequence is written as "\xFF", and a sequence is never cut in the middle.
// Sets *cut when bytes were left out.
inline std::string Utf8ForMessage(std::string_view text, std::size_t max_bytes, bool* cut) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const int n = Utf8SequenceLength(text, pos);
    if (pos + static_cast<std::size_t>(n > 0 ? n : 1) > max_bytes) break;
    if (n > 0) {
      out.append(text.substr(pos, static_cast<std::size_t>(n)));
      pos += static_cast<std::size_t>(n);
    } else {
      const auto byte = static_cast<unsigned char>(text[pos]);
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
      ++pos;
    }
  }
  *cut = pos < text.size();
  return out;
}

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_UTF8_H_
