// FBX 6.x files (issue 33 item 4), read by upgrading them to FBX 7.4.
//
// Assimp 5.2 reads FBX 7.1 and later only. An FBX 6.x file (FBX 2006 to 2010: Maya, 3ds Max and
// MotionBuilder of those years, and every exporter that still writes "FBX 6.1") holds the same
// scene in an older object model: objects named instead of numbered ("Model::Hips", connections by
// name), properties in Properties60 blocks, geometry inside the mesh's Model, and animation not in
// AnimationStack/Layer/CurveNode/Curve objects but in a Takes section: per take, per model, a
// Transform channel with T, R and S channels of X, Y and Z keys in the 6.x key encoding.
//
// rigel hands Assimp an equivalent FBX 7.4 binary document written here (never the file itself,
// as for keyed copies: fbx_curves.h), so everything downstream reads it as any 7.x file. What the
// copy carries: models (kind, name, every property), their hierarchy, node attributes of
// skeleton joints and nulls, GlobalSettings (axes, unit, frame rate), every take as a stack with
// one layer and the T/R/S curves of every model (keys, interpolation, tangents and weights as the
// 6.x keys state them), meshes (vertices, polygons, normals, UVs, materials' names), skins
// (Skin and Cluster deformers) and bind poses. What it does not carry is listed in `dropped`, for
// the reader's warning.
#ifndef RIGEL_IMPORTERS_FBX_UPGRADE_H_
#define RIGEL_IMPORTERS_FBX_UPGRADE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rigel {

struct FbxUpgrade {
  std::string bytes;                 // the FBX 7.4 binary document
  std::vector<std::string> dropped;  // what the file holds that the copy does not, one phrase each
};

// The oldest FBX version the upgrade reads: 6000 (FBX 6.0; earlier files keep models at the top
// level without Objects and Connections sections).
constexpr int kOldestUpgradableFbx = 6000;

// The FBX 7.4 document equivalent to the FBX 6.x file `bytes`; nullopt with `why` (what is
// missing or malformed) when the bytes are not a 6.x document this reads.
std::optional<FbxUpgrade> UpgradeFbx6(std::string_view bytes, std::string* why);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_FBX_UPGRADE_H_
