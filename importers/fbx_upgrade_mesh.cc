// FBX 6.x meshes, skins and poses as FBX 7.4 objects (fbx_upgrade.h).
#include <fmt/format.h>

#include <set>

#include "importers/fbx_upgrade_internal.h"

namespace rigel::fbx_upgrade {

using fbx_tree::Node;
using fbx_tree::Out;

// A 6.x mesh Model holds its geometry: these records are the model's own, the others move to
// the Geometry object.
void Upgrader::Mesh(const Node& m, const std::string& name, std::int64_t model) {
  static const std::set<std::string_view> kModelRecords = {
      "Version", "Properties60", "MultiLayer",        "MultiTake", "Shading",
      "Culling", "TypeFlags",    "NodeAttributeName", "Shape"};
  if (m.Child("Vertices") == nullptr || m.Child("PolygonVertexIndex") == nullptr) {
    ++dropped_kinds_["Mesh (without polygons)"];
    return;
  }
  const std::int64_t id = Id("Geometry::" + name);
  Out& g = objects_.Add("Geometry");
  g.L(id).S(BinaryName(name, "Geometry")).S("Mesh");
  g.Add("Properties70");
  for (const Node& c : m.children) {
    if (kModelRecords.count(c.name)) continue;
    CopyGeneric(c, g);
  }
  Connect(id, model);
  BlendShapes(m, name, id);
}

// 6.x blend shapes are Shape records of the mesh (Indexes, Vertices and Normals as offsets),
// animated by a take channel of the shape's name on the mesh's model (in percent). 7.x holds each
// as a Shape geometry under a BlendShapeChannel of a BlendShape deformer of the geometry, whose
// DeformPercent the take animates (Take: BlendShapeChannel).
void Upgrader::BlendShapes(const Node& m, const std::string& name, std::int64_t geometry) {
  std::int64_t deformer = 0;
  for (const Node& c : m.children) {
    if (c.name != "Shape") continue;
    const std::string shape(c.Str(0));
    const std::string key = fmt::format("BlendShapeChannel::{}::{}", name, shape);
    if (shape.empty() || Find(key)) {
      ++shapes_;  // unnamed, or named twice: the take could not tell them apart
      continue;
    }
    if (deformer == 0) {
      deformer = next_id_++;
      Out& d = objects_.Add("Deformer");
      d.L(deformer).S(BinaryName(name, "Deformer")).S("BlendShape");
      d.Add("Version").I(100);
      Connect(deformer, geometry);
    }
    const std::int64_t channel = Id(key), target = next_id_++;
    Out& ch = objects_.Add("Deformer");
    ch.L(channel).S(BinaryName(shape, "SubDeformer")).S("BlendShapeChannel");
    ch.Add("Version").I(100);
    ch.Add("DeformPercent").D(0.0);
    ch.Add("FullWeights").Doubles({100.0});
    Out& g = objects_.Add("Geometry");
    g.L(target).S(BinaryName(shape, "Geometry")).S("Shape");
    g.Add("Version").I(100);
    for (const char* field : {"Indexes", "Vertices", "Normals"}) {
      if (const Node* f = c.Child(field)) CopyGeneric(*f, g);
    }
    Connect(target, channel);
    Connect(channel, deformer);
  }
}

// Skin and Cluster deformers: 6.x holds the same records as 7.x (Indexes, Weights, Transform,
// TransformLink); what changes is the skin's parent (the geometry: Connections).
void Upgrader::Deformer(const Node& d) {
  const Named n = SplitName(d.Str(0));
  const std::string_view type = d.Str(1);
  if (type != "Skin" && type != "Cluster") {
    ++dropped_objects_[fmt::format("{} deformer", type)];
    return;
  }
  Out& o = objects_.Add("Deformer");
  o.L(Id(n.Key())).S(BinaryName(n.name, n.cls)).S(type);
  o.Add("Version").I(type == "Skin" ? 101 : 100);
  if (type == "Skin") {
    const Node* accuracy = d.Child("Link_DeformAcuracy");
    const std::vector<double> a = accuracy ? accuracy->Numbers() : std::vector<double>{};
    o.Add("Link_DeformAcuracy").D(a.empty() ? 50.0 : a[0]);
    return;
  }
  o.Add("UserData").S("").S("");
  for (const char* field : {"Indexes", "Weights", "Transform", "TransformLink"}) {
    if (const Node* f = d.Child(field)) CopyGeneric(*f, o);
  }
}

// A pose names its nodes ("Model::Hips"); 7.x numbers them.
void Upgrader::Pose(const Node& p) {
  const Named n = SplitName(p.Str(0));
  Out& o = objects_.Add("Pose");
  o.L(Id(n.Key())).S(BinaryName(n.name, "Pose")).S(p.Str(1));
  o.Add("Type").S(p.Str(1));
  o.Add("Version").I(100);
  std::vector<const Node*> nodes;
  for (const Node& c : p.children) {
    if (c.name != "PoseNode") continue;
    const Node* node = c.Child("Node");
    const Node* matrix = c.Child("Matrix");
    if (node == nullptr || matrix == nullptr || matrix->Numbers().size() != 16) continue;
    if (!Find(SplitName(node->Str(0)).Key())) continue;
    nodes.push_back(&c);
  }
  o.Add("NbPoseNodes").I(static_cast<std::int32_t>(nodes.size()));
  for (const Node* c : nodes) {
    Out& pn = o.Add("PoseNode");
    pn.Add("Node").L(*Find(SplitName(c->Child("Node")->Str(0)).Key()));
    pn.Add("Matrix").Doubles(c->Child("Matrix")->Numbers());
  }
}

}  // namespace rigel::fbx_upgrade
