// LoadScene: the one entry point for reading an animation file, dispatching on its extension.
#ifndef RIGEL_IMPORTERS_LOAD_SCENE_H_
#define RIGEL_IMPORTERS_LOAD_SCENE_H_

#include <string>
#include <vector>

#include "core/scene.h"
#include "importers/import_error.h"

namespace rigel {

// File extensions LoadScene reads, lower case with the dot (".bvh", ...).
std::vector<std::string> ReadableExtensions();

// Reads `path` with the importer its extension selects (case-insensitive). Throws ImportError,
// whose message names the file.
Scene LoadScene(const std::string& path);

// Lower-case extension of `path`, with the dot ("" when none).
std::string LowerExtension(const std::string& path);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_LOAD_SCENE_H_
