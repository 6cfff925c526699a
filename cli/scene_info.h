// What `rigel info` says about a scene, as JSON: the one description `rigel info --json` prints
// and Python's rigel.info returns.
#ifndef RIGEL_CLI_SCENE_INFO_H_
#define RIGEL_CLI_SCENE_INFO_H_

#include <nlohmann/json.hpp>

#include "core/scene.h"

namespace rigel::cli {

// Joints, channels, takes, axes with their provenance, the body's height, unit, translation
// conventions, meshes, warnings and the loader's confinement (keys as `rigel info --json`).
nlohmann::json DescribeScene(const Scene& scene);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_SCENE_INFO_H_
