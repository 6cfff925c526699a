// Test tool: writes rigel's copy of an FBX file keyed on every frame (importers/fbx_curves.h) for
// a reader that interpolates curves linearly (Blender 3.4), so that it reads on frames what the
// file's curves say. Exit 0 and OUT written when the file needed a copy, 3 when it did not.
//   fbx_keyed_copy IN.fbx OUT.fbx
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "importers/fbx_curves.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fbx_keyed_copy IN.fbx OUT.fbx\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    std::fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 2;
  }
  const auto copy = rigel::DensifyFbxCurves(bytes);
  if (!copy) return 3;
  std::ofstream out(argv[2], std::ios::binary);
  out << copy->bytes;
  if (!out) return 2;
  std::printf("%d of %d curves keyed on frames (%lld -> %lld keys)", copy->densified, copy->curves,
              static_cast<long long>(copy->keys_before), static_cast<long long>(copy->keys_after));
  if (copy->axes_completed > 0) {
    std::printf("; %d unkeyed axes given their stated value", copy->axes_completed);
  }
  std::printf("\n");
  return 0;
}
