// ResolveSceneFacts: what every reader does after reading a file: applies the user's axes
// (--up, --forward), infers from the body what the file does not state, checks what it states
// against the body, and warns, with the numbers, about anything guessed or implausible.
#ifndef RIGEL_IMPORTERS_SCENE_FACTS_H_
#define RIGEL_IMPORTERS_SCENE_FACTS_H_

#include <optional>

#include "core/axes.h"
#include "core/scene.h"

namespace rigel {

// Axes the user gives (each overrides what the file states or the body suggests).
struct AxesOverride {
  std::optional<SignedAxis> up;
  std::optional<SignedAxis> forward;
};

// Fills scene.axes and appends warnings to scene.warnings:
//  - up/forward given: taken (FactSource::kUser);
//  - stated by the file: kept; a humanoid whose head is over its feet along another axis in the
//    sampled frames, or below its feet in every one, is a warning (the file's axes are kept);
//  - not stated: a humanoid's up from the body (head over feet over the clip), a non-humanoid's
//    estimated from its extent, forward from the hips and shoulders, with a warning each;
//  - a humanoid whose standing height in metres (stated or estimated unit) is under 0.5 m or
//    over 3 m: a warning with the numbers.
void ResolveSceneFacts(Scene& scene, const AxesOverride& given = {});

// Plausible standing heights (head joint above the feet) of a human figure, in metres.
constexpr double kMinHumanHeightMetres = 0.5;
constexpr double kMaxHumanHeightMetres = 3.0;

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_SCENE_FACTS_H_
