// What importers and exporters share: the file formats table (one row per format) and the
// file-format key of a path. rigel_io's common ground (importers/ and exporters/ both include it;
// they never include each other). Everything that asks "which formats, which extension, one take
// or several, meshes or not" reads FileFormats(): LoadScene and SaveClips dispatch on it, the CLI
// builds its --format lists and --help texts from it, the Lua module's save and *_formats too.
#ifndef RIGEL_IO_FILE_FORMAT_H_
#define RIGEL_IO_FILE_FORMAT_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clip.h"
#include "core/scene.h"
#include "core/skeleton.h"

namespace rigel {

struct LoadOptions;  // importers/load_scene.h
struct SaveOptions;  // exporters/save_scene.h

// Reads a whole file (throws ImportError naming it). The rows point at entry points defined next
// to each reader (importers/load_scene.cc).
using SceneReader = Scene (*)(const std::string& path, const LoadOptions& options);
// Writes the takes of one skeleton (throws ExportError naming the file). SaveClips has already
// checked that the format holds that many takes. Defined next to each writer's options
// (exporters/save_scene.cc).
using ClipsWriter = void (*)(const Skeleton& skeleton, std::span<const Clip> clips,
                             const std::string& path, const SaveOptions& options);

// One file format: what it is called, which extensions select it, what one file of it holds, and
// the functions that read and write it.
struct FileFormat {
  std::string_view name;   // "bvh": the --format value, the name in docs
  std::string_view label;  // "BVH": the name in messages
  // Lower case with the dot; the first is the one written.
  std::vector<std::string_view> extensions;
  bool several_takes = false;   // one file holds several takes (else a file per take)
  bool meshes = false;          // holds meshes
  bool skins = false;           // holds skinned meshes (joint weights, bind poses)
  bool blend_shapes = false;    // holds blend shapes (morph targets)
  bool polygons = false;        // holds polygons of more than three corners (else triangles)
  bool scale = false;           // records its length unit (SaveOptions::metres_per_unit)
  bool sparse_keys = false;     // keys each curve at its own frames (SaveOptions::reduce)
  SceneReader read = nullptr;   // nullptr: rigel does not read it
  ClipsWriter write = nullptr;  // nullptr: rigel does not write it
};

// Every format, in the order lists show them (writers first).
const std::vector<FileFormat>& FileFormats();

// Lower-case extension of `path`, with the dot ("" when none): ".bvh" for "Walk.BVH". LoadScene
// and SaveClips dispatch on it.
std::string LowerExtension(const std::string& path);

// The row whose extensions hold `path`'s (case-insensitive), nullptr when none.
const FileFormat* FormatOfPath(const std::string& path);

// The row named `name` ("bvh", "glb", ...), nullptr when none.
const FileFormat* FormatNamed(std::string_view name);

// True when `path` names a format that holds one take per file (BVH): several takes are written
// to a file each.
bool OneTakePerFile(const std::string& path);

// Extensions of the formats rigel reads / writes, lower case with the dot, in table order.
std::vector<std::string> ReadableExtensions();
std::vector<std::string> WritableExtensions();

// Names of the formats rigel writes ("bvh", "glb", ...): the --format choices.
std::vector<std::string> WritableFormatNames();

}  // namespace rigel

#endif  // RIGEL_IO_FILE_FORMAT_H_
