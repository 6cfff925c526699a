// Test helper (issue 26 item 7): a copy of a binary FBX whose animation stack stops a fraction of
// a frame before its last key, as Mixamo's exports do. Every P record "LocalStop" with a non-zero
// 64-bit value (the stack's; the template's default is 0) is moved `frames` frames earlier at
// `fps`. Written for the tests, independent of rigel's own FBX scan.
#ifndef RIGEL_TESTS_ASSIMP_FBX_STOP_PATCH_H_
#define RIGEL_TESTS_ASSIMP_FBX_STOP_PATCH_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace rigel::testing {

// The number of stops moved; `bytes` is changed in place.
inline int MoveFbxStopsEarlier(std::string* bytes, double frames, double fps) {
  const std::string name = "LocalStop";
  int moved = 0;
  for (std::size_t at = bytes->find(name); at != std::string::npos;
       at = bytes->find(name, at + 1)) {
    // After the name: 'S' "KTime", 'S' "Time", 'S' "", then 'L' and the value.
    std::size_t p = at + name.size();
    bool ok = true;
    for (int s = 0; s < 3 && ok; ++s) {
      std::uint32_t len = 0;
      ok = p + 5 <= bytes->size() && (*bytes)[p] == 'S';
      if (ok) std::memcpy(&len, bytes->data() + p + 1, 4);
      p += 5 + len;
    }
    if (!ok || p + 9 > bytes->size() || (*bytes)[p] != 'L') continue;
    std::int64_t v = 0;
    std::memcpy(&v, bytes->data() + p + 1, 8);
    if (v == 0) continue;
    v -= static_cast<std::int64_t>(std::llround(frames * 46186158000.0 / fps));
    std::memcpy(bytes->data() + p + 1, &v, 8);
    ++moved;
  }
  return moved;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_ASSIMP_FBX_STOP_PATCH_H_
