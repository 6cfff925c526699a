// Length units of BVH files (importers/bvh_reader.h): the names --unit-in takes, the label of a
// unit, and the unit estimated from a figure's height.
#include <fast_float/fast_float.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "core/body.h"
#include "core/clip.h"
#include "importers/bvh_reader.h"
#include "importers/bvh_text.h"

namespace rigel {
namespace {

using bvh_internal::IsSpace;
using bvh_internal::Quote;

struct UnitName {
  std::string_view name;
  double metres;
};
constexpr UnitName kUnits[] = {
    {"m", 1.0}, {"dm", 0.1}, {"cm", 0.01}, {"mm", 0.001}, {"in", 0.0254}};
// The units a BVH figure's size is compared against: the named ones and the CMU ASF unit
// (1/0.45 inch), the unit of every BVH converted from the CMU motion-capture database.
constexpr double kCmuAsfUnit = 0.0254 / 0.45;

}  // namespace

std::optional<double> ParseBvhUnit(std::string_view text, std::string* error) {
  for (const UnitName& u : kUnits) {
    if (u.name == text) return u.metres;
  }
  // A factor: "0.0254" (metres), "2.54cm", "1e-3", "2.54 cm".
  const auto fail = [&](std::string_view why) -> std::optional<double> {
    if (error != nullptr) {
      *error = fmt::format(
          "{} is not a length unit ({}): give m, dm, cm, mm, in, or the length of one file "
          "unit as a number > 0 in metres or followed by one of those units (0.0254, 2.54cm, "
          "1e-3)",
          Quote(text), why);
    }
    return std::nullopt;
  };
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end && IsSpace(*p)) ++p;
  double factor = 0;
  const auto result = fast_float::from_chars(p, end, factor);
  if (result.ptr == p) return fail(text.empty() ? "empty" : "no number and not a unit name");
  if (result.ec != std::errc() || !std::isfinite(factor)) return fail("out of range");
  if (!(factor > 0)) return fail("not > 0");
  p = result.ptr;
  while (p < end && IsSpace(*p)) ++p;
  const std::string_view suffix(p, end - p);
  double unit = 1.0;
  if (!suffix.empty()) {
    const UnitName* found = nullptr;
    for (const UnitName& u : kUnits) {
      if (u.name == suffix) found = &u;
    }
    if (found == nullptr)
      return fail(fmt::format("unknown unit {} after the number", Quote(suffix)));
    unit = found->metres;
  }
  const double metres = factor * unit;
  if (!(metres > 0) || !std::isfinite(metres)) return fail("out of range");
  return metres;
}

std::vector<std::string> BvhUnitNames() {
  std::vector<std::string> names;
  for (const UnitName& u : kUnits) names.emplace_back(u.name);
  return names;
}

std::string UnitLabel(double metres) {
  for (const UnitName& u : kUnits) {
    if (u.metres == metres) return std::string(u.name);
  }
  if (metres == kCmuAsfUnit) return fmt::format("{:.6g} m (the CMU ASF unit, 1/0.45 inch)", metres);
  return fmt::format("{:g} m", metres);
}

double EstimateBvhUnit(double height) {
  if (!(height > 0) || !std::isfinite(height)) return 0.0;
  double best = 0, best_distance = INFINITY;
  auto consider = [&](double metres) {
    const double d = std::abs(std::log(height * metres / 1.6));
    if (d < best_distance) {
      best_distance = d;
      best = metres;
    }
  };
  for (const UnitName& u : kUnits) consider(u.metres);
  consider(kCmuAsfUnit);
  return best;
}

double EstimateUnitFromBody(const Skeleton& skeleton, const Clip* clip, BodyMeasure* measure) {
  BodyMeasure body = MeasureBody(skeleton, clip);
  const double unit = body.humanoid ? EstimateBvhUnit(body.height) : 0.0;
  if (measure != nullptr) *measure = std::move(body);
  return unit;
}

double EstimateUnitFromFrame(const Skeleton& skeleton, std::span<const double> row,
                             double* height) {
  Clip clip(1, skeleton.num_channels(), 1.0);
  std::copy(row.begin(), row.end(), &clip.at(0, 0));
  BodyMeasure body;
  const double unit = EstimateUnitFromBody(skeleton, &clip, &body);
  if (height != nullptr) *height = body.height;
  return unit;
}

}  // namespace rigel
