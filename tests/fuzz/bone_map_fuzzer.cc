// libFuzzer harness: the XML bone-map reader, and FormatBoneMap's round trip of what it accepts.
//
// Properties: ParseBoneMap either throws ImportError or returns a map with at least one entry,
// non-empty source and target names, distinct targets, unit offsets, lines >= 1; FormatBoneMap of
// that map parses back to the same names, roles and (to the 6 digits it prints) rotations.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_check.h"
#include "importers/bone_map.h"

namespace {

void CheckWellFormed(const rigel::retarget::BoneMap& map) {
  FUZZ_CHECK(!map.entries.empty(), "no entry");
  std::set<std::string> targets;
  for (const rigel::retarget::BoneMapEntry& e : map.entries) {
    FUZZ_CHECK(!e.source.empty() && !e.target.empty(), "empty name");
    FUZZ_CHECK(targets.insert(e.target).second, "target twice");
    FUZZ_CHECK(e.offset.coeffs().allFinite(), "non-finite rotation");
    FUZZ_CHECK(std::fabs(e.offset.norm() - 1) < 1e-9, "rotation not unit");
    FUZZ_CHECK(e.line >= 1, "no line");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  rigel::retarget::BoneMap map;
  try {
    map = rigel::ParseBoneMap(xml, "fuzz.xml");
  } catch (const rigel::ImportError&) {
    return 0;
  }
  CheckWellFormed(map);
  const std::string text = rigel::FormatBoneMap(map, {"a note -- with dashes", "-->"});
  const rigel::retarget::BoneMap back = rigel::ParseBoneMap(text, "formatted.xml");
  CheckWellFormed(back);
  FUZZ_CHECK(back.entries.size() == map.entries.size(), "entry count changed");
  FUZZ_CHECK(back.source_name == map.source_name, "source attribute changed");
  FUZZ_CHECK(back.target_name == map.target_name, "target attribute changed");
  for (size_t i = 0; i < map.entries.size(); ++i) {
    const rigel::retarget::BoneMapEntry& a = map.entries[i];
    const rigel::retarget::BoneMapEntry& b = back.entries[i];
    FUZZ_CHECK(a.source == b.source, "source changed");
    FUZZ_CHECK(a.target == b.target, "target changed");
    FUZZ_CHECK(a.role == b.role, "role changed");
    // 6 significant digits of degrees: at most 5e-4 degrees per angle of up to 360.
    FUZZ_CHECK(a.offset.angularDistance(b.offset) < 1e-4, "rotation changed");
  }
  return 0;
}
