// The writers' clip check: CheckClip (core/clip_check.h) on every clip, as an ExportError.
#ifndef RIGEL_EXPORTERS_EXPORT_CHECK_H_
#define RIGEL_EXPORTERS_EXPORT_CHECK_H_

#include <span>
#include <string>

#include "core/clip.h"
#include "core/mesh.h"
#include "core/skeleton.h"

namespace rigel {

// Throws ExportError "<name>: [clip '<clip>': ]<fault>" (DescribeClipFault: frame, joint and
// channel of a non-finite value, ...) for the first clip of `clips` CheckClip refuses on
// `skeleton`, or "<name>: nothing to write (no clip)" when `clips` is empty. The clip's name is
// given when it has one (glTF and FBX takes; BVH clips have none). With `meshes` (glTF, FBX), a
// clip that animates blend-shape weights must have one weight channel per morph target of
// `meshes` (core/mesh.h CountMorphTargets): "clip 'walk': 3 weight channels, the meshes have 2
// blend shapes".
void CheckClipsForExport(const Skeleton& skeleton, std::span<const Clip> clips,
                         const std::string& name, std::span<const Mesh> meshes = {});

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_EXPORT_CHECK_H_
