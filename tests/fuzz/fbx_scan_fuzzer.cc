// libFuzzer harness: the FBX readers rigel runs before Assimp sees a file, on untrusted bytes:
// the scan (versions, model kinds, stacks, layers), the stack widening and the keyed copy of the
// curves (DensifyFbxCurves, importers/fbx_curves.h), binary and ASCII.
//
// Properties checked for every input:
// - names the scan returns are what it read (no read outside the bytes: the sanitizers see it);
// - a stack's recorded value offsets lie inside the file;
// - widening the stacks keeps the file's size class: the copy scans again with the same models,
//   stacks and layers, and every stack that had a stop now stops `margin` ticks later;
// - the keyed copy, when one is made, scans again with the same models, and keyed again needs no
//   copy (a curve keyed on every frame of its grid is read right by Assimp as it is);
//   its counts are consistent (densified <= curves, every keyed curve has keys).
// - the FBX 7.4 copy of a 6.x file (UpgradeFbx6, importers/fbx_upgrade.h), when one is made,
//   scans as binary FBX 7.4 whose every model's name is in the file, and passes every check
//   above itself (the reader runs the scan, widening and keyed copy on it).
// Any exception escapes and aborts; sanitizer reports are findings too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "importers/fbx_curves.h"
#include "importers/fbx_scan.h"
#include "importers/fbx_upgrade.h"

namespace {

void CheckSameModels(const rigel::FbxScan& a, const rigel::FbxScan& b, const char* what) {
  FUZZ_CHECK(a.models.size() == b.models.size(), what);
  for (std::size_t i = 0; i < a.models.size(); ++i) {
    FUZZ_CHECK(a.models[i].name == b.models[i].name, what);
    FUZZ_CHECK(a.models[i].kind == b.models[i].kind, what);
  }
  FUZZ_CHECK(a.stacks.size() == b.stacks.size(), what);
  FUZZ_CHECK(a.layers.size() == b.layers.size(), what);
}

void Check(std::string_view bytes, bool upgraded);

// The upgrade of any input (whatever its version: the tree reader must hold on every byte).
void CheckUpgrade(std::string_view bytes) {
  std::string why;
  const std::optional<rigel::FbxUpgrade> up = rigel::UpgradeFbx6(bytes, &why);
  if (!up) {
    FUZZ_CHECK(!why.empty(), "an upgrade refused without a reason");
    return;
  }
  const std::optional<rigel::FbxScan> again = rigel::ScanFbx(up->bytes);
  FUZZ_CHECK(again.has_value(), "the FBX 7.4 copy is not an FBX file");
  FUZZ_CHECK(again->binary && again->version == 7400, "the FBX 7.4 copy is not binary 7.4");
  // Not "a model the scan lists": the scan reads models line by line (ASCII) where the upgrade
  // reads the whole record tree; every name the copy holds is one the file holds.
  for (const rigel::FbxModelKind& m : again->models) {
    FUZZ_CHECK(bytes.find(m.name) != std::string_view::npos,
               "the FBX 7.4 copy has a model the file does not name");
  }
  Check(up->bytes, true);
}

void Check(std::string_view bytes, bool upgraded) {
  const std::size_t size = bytes.size();
  const std::optional<rigel::FbxScan> scan = rigel::ScanFbx(bytes);
  if (!scan) return;
  if (!upgraded) CheckUpgrade(bytes);
  for (const rigel::FbxStackRange& s : scan->stacks) {
    // Binary values are 8-byte integers; ASCII ones their digits.
    const std::size_t start_len = scan->binary ? 8 : s.start_len;
    const std::size_t stop_len = scan->binary ? 8 : s.stop_len;
    if (s.has_start) FUZZ_CHECK(s.start_at + start_len <= size, "stack start offset");
    if (s.has_stop) FUZZ_CHECK(s.stop_at + stop_len <= size, "stack stop offset");
    for (const std::string& name : rigel::LayersWithCurves(*scan, s)) {
      bool known = false;
      for (const rigel::FbxLayer& l : scan->layers) known = known || l.name == name;
      FUZZ_CHECK(known, "a layer with curves that the scan does not list");
    }
  }
  constexpr std::int64_t kMargin = 1000;
  const std::string widened = rigel::WidenFbxStacks(std::string(bytes), *scan, kMargin);
  const std::optional<rigel::FbxScan> rescanned = rigel::ScanFbx(widened);
  FUZZ_CHECK(rescanned.has_value(), "the widened copy is not an FBX file");
  CheckSameModels(*scan, *rescanned, "the widened copy scans differently");
  for (std::size_t i = 0; i < scan->stacks.size(); ++i) {
    const rigel::FbxStackRange& a = scan->stacks[i];
    const rigel::FbxStackRange& b = rescanned->stacks[i];
    if (a.has_stop && a.stop <= INT64_MAX - kMargin && !(a.start == 0 && a.stop == 0)) {
      FUZZ_CHECK(b.has_stop && b.stop == a.stop + kMargin, "the stack was not widened");
    }
  }
  const std::optional<rigel::FbxDensified> keyed = rigel::DensifyFbxCurves(bytes);
  if (keyed) {
    FUZZ_CHECK(keyed->densified <= keyed->curves, "more curves keyed than the file has");
    // Not keys_after >= keys_before: keys between frames (sub-frame keys) are not kept, the
    // copy holds the curve's value on every frame of its grid, which is all a reader samples.
    FUZZ_CHECK(keyed->keys_after >= keyed->densified, "a keyed curve without keys");
    const std::optional<rigel::FbxScan> again = rigel::ScanFbx(keyed->bytes);
    FUZZ_CHECK(again.has_value(), "the keyed copy is not an FBX file");
    CheckSameModels(*scan, *again, "the keyed copy scans differently");
    FUZZ_CHECK(!rigel::DensifyFbxCurves(keyed->bytes).has_value(),
               "the keyed copy needs keying again");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Check(std::string_view(reinterpret_cast<const char*>(data), size), false);
  return 0;
}
