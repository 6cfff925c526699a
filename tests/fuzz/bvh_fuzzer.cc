// libFuzzer harness: the BVH reader, and the writer round trip of whatever it accepts.
//
// Every error message is valid UTF-8 (it goes into JSON reports). Properties checked for every
// input the reader accepts (ParseBvh does not throw ImportError):
// - the scene is well formed: one skeleton, one clip of its width, at least one frame, a finite
//   frame time > 0, finite values, joint names non-empty, unique and valid UTF-8;
// - the writer accepts it (no ExportError), and the reader accepts what it wrote;
// - the re-read hierarchy is identical (names, parents, channel layouts, End Sites) and offsets,
//   frame time and values agree to the writer's 15 significant digits;
// - writing is a fixed point: writing the re-read scene gives the same text, byte for byte.
// Any other exception escapes and aborts; sanitizer reports are findings too.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "exporters/bvh_writer.h"
#include "fuzz_check.h"
#include "importers/bvh_reader.h"
#include "importers/utf8.h"

namespace {

// |a - b| within the 15 significant digits the writer prints (plus the degree/radian
// conversion of rotation channels, and the absolute floor of subnormal numbers).
bool Close(double a, double b) {
  return std::fabs(a - b) <= 2e-14 * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

void CheckWellFormed(const rigel::Scene& scene) {
  FUZZ_CHECK(scene.skeleton != nullptr, "no skeleton");
  FUZZ_CHECK(scene.clips.size() == 1, "not one clip");
  const rigel::Skeleton& s = *scene.skeleton;
  const rigel::Clip& clip = scene.clips[0];
  FUZZ_CHECK(clip.matches(s), "clip width");
  FUZZ_CHECK(clip.num_frames() >= 1, "no frame");
  FUZZ_CHECK(std::isfinite(clip.frame_time()) && clip.frame_time() > 0, "frame time");
  for (const double v : clip.values()) FUZZ_CHECK(std::isfinite(v), "non-finite value");
  std::unordered_set<std::string> names;
  for (int j = 0; j < s.num_joints(); ++j) {
    FUZZ_CHECK(!s.name(j).empty(), "empty name");
    FUZZ_CHECK(rigel::IsValidUtf8(s.name(j)), "name not UTF-8");
    FUZZ_CHECK(names.insert(s.name(j)).second, "duplicate name");
    FUZZ_CHECK(s.parent(j) < j, "parent after child");
    for (int k = 0; k < 3; ++k) FUZZ_CHECK(std::isfinite(s.rest_translation(j)[k]), "offset");
  }
}

void CheckSame(const rigel::Scene& a, const rigel::Scene& b) {
  const rigel::Skeleton& sa = *a.skeleton;
  const rigel::Skeleton& sb = *b.skeleton;
  FUZZ_CHECK(sa.num_joints() == sb.num_joints(), "joint count changed");
  for (int j = 0; j < sa.num_joints(); ++j) {
    FUZZ_CHECK(sa.name(j) == sb.name(j), "name changed");
    FUZZ_CHECK(sa.parent(j) == sb.parent(j), "parent changed");
    FUZZ_CHECK(std::ranges::equal(sa.joint_channels(j), sb.joint_channels(j)), "channels changed");
    for (int k = 0; k < 3; ++k) {
      FUZZ_CHECK(Close(sa.rest_translation(j)[k], sb.rest_translation(j)[k]), "offset changed");
    }
  }
  FUZZ_CHECK(sa.end_sites().size() == sb.end_sites().size(), "End Site count changed");
  for (size_t e = 0; e < sa.end_sites().size(); ++e) {
    FUZZ_CHECK(sa.end_sites()[e].parent == sb.end_sites()[e].parent, "End Site parent changed");
    for (int k = 0; k < 3; ++k) {
      FUZZ_CHECK(Close(sa.end_sites()[e].offset[k], sb.end_sites()[e].offset[k]),
                 "End Site offset changed");
    }
  }
  const rigel::Clip& ca = a.clips[0];
  const rigel::Clip& cb = b.clips[0];
  FUZZ_CHECK(ca.num_frames() == cb.num_frames(), "frame count changed");
  FUZZ_CHECK(Close(ca.frame_time(), cb.frame_time()), "frame time changed");
  for (size_t i = 0; i < ca.values().size(); ++i) {
    FUZZ_CHECK(Close(ca.values()[i], cb.values()[i]), "value changed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  rigel::Scene first;
  try {
    first = rigel::ParseBvh(text, "fuzz.bvh");
  } catch (const rigel::ImportError& e) {
    // Rejected with a message: fine. The message goes into JSON reports: it must be UTF-8.
    FUZZ_CHECK(rigel::IsValidUtf8(e.what()), e.what());
    return 0;
  }
  CheckWellFormed(first);
  // Everything below must succeed: an exception escapes and aborts the run.
  const std::string written = rigel::FormatBvh(*first.skeleton, first.clips[0]);
  const rigel::Scene second = rigel::ParseBvh(written, "written.bvh");
  CheckWellFormed(second);
  CheckSame(first, second);
  const std::string rewritten = rigel::FormatBvh(*second.skeleton, second.clips[0]);
  FUZZ_CHECK(rewritten == written, "writing the re-read scene changed the text");
  return 0;
}
