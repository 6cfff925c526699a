// What the three parts of the FBX curve reader share (importers/fbx_curves.cc: the evaluator and
// the frame grid; fbx_curves_binary.cc and fbx_curves_ascii.cc: the copy of a binary and of an
// ASCII file). Not installed; nothing outside these files includes it.
#ifndef RIGEL_IMPORTERS_FBX_CURVES_INTERNAL_H_
#define RIGEL_IMPORTERS_FBX_CURVES_INTERNAL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/fbx_curves.h"
#include "importers/fbx_scan.h"

namespace rigel::fbx_curves_internal {

constexpr double kTicks = static_cast<double>(kFbxTicksPerSecond);
constexpr std::string_view kBinaryMagic("Kaydara FBX Binary  \0", 21);
constexpr int kMaxDepth = 64;
// A curve is keyed on at most this many frames (a day at 120 fps): more is not a curve rigel
// would sample, and the copy must stay bounded.
constexpr std::int64_t kMaxDenseKeys = 10'368'000;

// Densifies one curve on the grid start + i * step (ticks, step may be fractional); false when
// Assimp's linear reading is already exact on every grid time.
bool Densify(const FbxCurveKeys& c, std::int64_t start, double step, FbxCurveKeys* out);
// Whether Assimp's linear reading of `c` is wrong on some grid time start + i * step.
bool NeedsKeys(const FbxCurveKeys& c, std::int64_t start, double step);

// Frame rate the file states; 0 when none.
double StatedRate(int mode, double custom);
// The grid of a file that states no frame rate (see fbx_curves.cc); 0 when its keys are frames.
double UnstatedRate(std::vector<std::int64_t> times, double* key_spacing);

// Which stack's start each curve keys from: curve -> curve node -> layer -> stack.
struct Takes {
  std::unordered_multimap<std::int64_t, std::int64_t> parent;  // OO/OP child -> parents
  std::unordered_map<std::int64_t, std::int64_t> stack_start;
  // The LocalStart of the stack above `curve` (curve -> curve node -> layer -> stack), else the
  // first stack's.
  std::int64_t StartOf(std::int64_t curve) const {
    std::vector<std::int64_t> level{curve};
    for (int hop = 0; hop < 3 && !level.empty(); ++hop) {
      std::vector<std::int64_t> next;
      for (const std::int64_t at : level) {
        const auto [b, e] = parent.equal_range(at);
        for (auto p = b; p != e; ++p) {
          if (const auto s = stack_start.find(p->second); s != stack_start.end()) return s->second;
          next.push_back(p->second);
        }
      }
      level = std::move(next);
    }
    return stack_start.empty() ? 0 : stack_start.begin()->second;
  }
};

// An AnimationCurveNode that animates a node's Lcl Translation, Rotation or Scaling: the value it
// states on each axis (its d|X, d|Y, d|Z) and the curve on each (0: none).
struct CurveNodeAxes {
  char property = 0;  // 'T', 'R', 'S'; 0 when it animates something else
  std::array<std::optional<double>, 3> value;
  std::array<std::int64_t, 3> curve{0, 0, 0};
};

// A constant curve the copy adds on an axis the file keys no curve on.
struct AxisCurve {
  std::int64_t id = 0, node = 0;
  int axis = 0;
  double value = 0;
  std::int64_t t0 = 0, t1 = 0;  // the span of the node's other curves
};

std::vector<AxisCurve> MissingAxisCurves(
    const std::unordered_map<std::int64_t, CurveNodeAxes>& nodes,
    const std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>>& spans,
    std::int64_t next_id);
// 'T', 'R', 'S' for Lcl Translation, Rotation, Scaling; 0 otherwise.
char LclProperty(std::string_view name);

// An "OP" connection: `child` connected to `parent`'s property.
struct OpLink {
  std::int64_t child, parent;
  std::string property;
};
// Each curve node's curves (a curve on its "d|X", "d|Y", "d|Z") and the property it animates.
void ApplyOpLinks(const std::vector<OpLink>& links,
                  std::unordered_map<std::int64_t, CurveNodeAxes>* nodes);

std::optional<FbxDensified> DensifyBinary(std::string_view bytes);
std::optional<FbxDensified> DensifyAscii(std::string_view d);

}  // namespace rigel::fbx_curves_internal

#endif  // RIGEL_IMPORTERS_FBX_CURVES_INTERNAL_H_
