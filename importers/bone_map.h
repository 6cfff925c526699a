// Bone-map files: source -> target joint names for retargeting, as XML (read with pugixml).
//
//   <?xml version="1.0"?>
//   <rigel-bone-map version="1" source="01_01.bvh" target="tpose.bvh">
//     <bone source="Hips" target="root" role="Hips"/>
//     <bone source="LeftArm" target="upperarm01.L" rotate="0 0 10" order="XYZ"/>
//   </rigel-bone-map>
//
// `source`, `target`: joint names (required). `role`: the target joint's humanoid role
// (core/retarget/humanoid.h RoleName; optional). `rotate`: an extra rotation in the target
// joint's space after rest-pose alignment, three angles in degrees about X, Y, Z (optional),
// composed in `order` (default XYZ). See docs/retarget.md.
#ifndef RIGEL_IMPORTERS_BONE_MAP_H_
#define RIGEL_IMPORTERS_BONE_MAP_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/retarget/humanoid.h"
#include "importers/import_error.h"

namespace rigel {

// Reads a bone-map file. Throws ImportError "file:line: reason" for unreadable files, malformed
// XML, a wrong root element, unknown elements or attributes, a missing or empty source/target,
// a bad rotate/order/role value, or a target joint listed twice. Joint names are checked against
// the skeletons later, by retarget::Retargeter::Create (which names the same file and line).
retarget::BoneMap ReadBoneMap(const std::string& path);

// Parses a bone map from memory; `origin` names it in messages.
retarget::BoneMap ParseBoneMap(const std::string& xml, const std::string& origin);

// The XML text of `map` (what `rigel retarget --suggest-map` prints); `notes` become comments.
// `s` with & < > " replaced by their entities, for XML and HTML attribute or text content (the
// bone-map writer and the preview pages).
std::string EscapeMarkup(std::string_view s);

std::string FormatBoneMap(const retarget::BoneMap& map, const std::vector<std::string>& notes = {});

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_BONE_MAP_H_
