// SceneCodec: a Scene as a flat byte string and back. Used to pass an imported scene from the
// isolated child process to the caller; not a file format (native endianness, no stability
// promise across versions).
#ifndef RIGEL_IMPORTERS_SCENE_CODEC_H_
#define RIGEL_IMPORTERS_SCENE_CODEC_H_

#include <string>
#include <string_view>

#include "core/raw_skeleton.h"
#include "core/scene.h"

namespace rigel {

// The skeleton, clips, source, warnings and unit fields of `scene`.
std::string EncodeScene(const Scene& scene);
// `prefix` followed by EncodeScene(scene), built in one buffer (no copy of a large scene).
std::string EncodeScene(const Scene& scene, std::string prefix);

// The inverse of EncodeScene. Throws ImportError ("<context>: ...") when `bytes` is truncated or
// malformed, or the skeleton does not build.
Scene DecodeScene(std::string_view bytes, const std::string& context);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_SCENE_CODEC_H_
