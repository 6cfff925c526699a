// Internal to the FBX 6.x upgrade (fbx_upgrade.cc: objects and connections; fbx_upgrade_mesh.cc:
// geometry, skins, poses; fbx_upgrade_takes.cc: takes and their keys).
#ifndef RIGEL_IMPORTERS_FBX_UPGRADE_INTERNAL_H_
#define RIGEL_IMPORTERS_FBX_UPGRADE_INTERNAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "importers/fbx_tree.h"

namespace rigel::fbx_upgrade {

// An object's class and name: "Model::Hips" (ASCII) and "Hips\0\1Model" (binary) are both
// {"Model", "Hips"}.
struct Named {
  std::string cls, name;
  std::string Key() const { return cls + "::" + name; }
};
Named SplitName(std::string_view raw);

// The 7.x binary name of an object: "Hips\0\1Model".
std::string BinaryName(std::string_view name, std::string_view cls);

// A 6.x record copied as a 7.4 record: array records (Vertices, Indexes, ...) as typed arrays,
// other numbers as I, L or D, strings as S; children likewise.
void CopyGeneric(const fbx_tree::Node& n, fbx_tree::Out& o, int depth = 0);

// A 6.x Properties60 block (Property: name, type, flags, values) as a 7.x Properties70 child of
// `dst` (P: name, type, label, flags, values), each value typed as Assimp parses its type; the
// Properties70 record.
fbx_tree::Out& Properties70(const fbx_tree::Node* p60, fbx_tree::Out& dst);

class Upgrader {
 public:
  void Header(const fbx_tree::Node* header);
  void Settings(const fbx_tree::Node* settings, const fbx_tree::Node* version5);
  void Objects(const fbx_tree::Node& objects);
  void Connections(const fbx_tree::Node& connections);
  // False, with `why`, on a take whose keys are malformed.
  bool Takes(const fbx_tree::Node& takes, std::string* why);
  std::vector<std::string> Dropped() const;
  std::string Encode();

 private:
  std::int64_t Id(const std::string& key);
  std::optional<std::int64_t> Find(const std::string& key) const;
  void Connect(std::int64_t child, std::int64_t parent, std::string_view property = {});
  void Model(const fbx_tree::Node& m);
  void Mesh(const fbx_tree::Node& m, const std::string& name, std::int64_t model);
  void BlendShapes(const fbx_tree::Node& m, const std::string& name, std::int64_t geometry);
  void Deformer(const fbx_tree::Node& d);
  void Pose(const fbx_tree::Node& p);
  void Material(const fbx_tree::Node& m);
  bool Take(const fbx_tree::Node& take, std::string* why);
  bool ShapeChannel(const fbx_tree::Node& c, std::int64_t channel, std::int64_t layer,
                    std::string* why);
  bool TransformChannel(const fbx_tree::Node& transform, std::int64_t model, std::int64_t layer,
                        std::string* why);

  std::vector<fbx_tree::Out> top_;
  fbx_tree::Out objects_{"Objects"}, connections_{"Connections"};
  std::map<std::string, std::int64_t> ids_;  // object key (Named::Key) -> 7.x id
  std::int64_t next_id_ = 1000;
  std::vector<std::string> dropped_;
  std::map<std::string, int> dropped_kinds_, dropped_objects_;
  std::map<std::string, int> dropped_channels_;  // animated channels not carried, by name
  int shapes_ = 0;  // blend shapes not carried (unnamed or named twice)
};

}  // namespace rigel::fbx_upgrade

#endif  // RIGEL_IMPORTERS_FBX_UPGRADE_INTERNAL_H_
