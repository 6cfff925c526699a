// Internal to the FBX writer (exporters/fbx_writer.cc, fbx_mesh.cc): the node records it builds
// before encoding them, and the property helpers both files use.
#ifndef RIGEL_EXPORTERS_FBX_INTERNAL_H_
#define RIGEL_EXPORTERS_FBX_INTERNAL_H_

#include <Eigen/Geometry>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/mesh.h"
#include "core/skeleton.h"

namespace rigel::fbx_internal {

// One property of an FBX node record.
using Property =
    std::variant<std::int32_t, std::int64_t, double, bool, std::string, std::vector<float>,
                 std::vector<double>, std::vector<std::int64_t>, std::vector<std::int32_t>>;

struct Raw {
  std::string bytes;
};

struct Element {
  std::string name;
  std::vector<Property> props;
  std::vector<Raw> raw;  // 'R' properties (FileId), written after props
  std::vector<Element> children;
  // Its array properties are written deflated (FBX array encoding 1): the Shape geometries of
  // blend shapes, whose offsets would otherwise make files tens of times larger than the FBX SDK's.
  bool compress = false;

  Element& Add(std::string child_name, std::vector<Property> child_props = {}) {
    children.push_back({std::move(child_name), std::move(child_props), {}, {}});
    return children.back();
  }
};

inline std::string NameClass(const std::string& name, const char* cls) {
  std::string s = name;
  s.push_back('\0');
  s.push_back('\x01');
  s += cls;
  return s;
}

// P: name, type, label, flags, values...
inline std::vector<Property> P(const char* name, const char* type, const char* label,
                               const char* flags, std::vector<Property> values) {
  std::vector<Property> props{std::string(name), std::string(type), std::string(label),
                              std::string(flags)};
  props.insert(props.end(), values.begin(), values.end());
  return props;
}

inline std::vector<Property> PVec(const char* name, const char* type, const char* label,
                                  const char* flags, const Eigen::Vector3d& v) {
  return P(name, type, label, flags, {v.x(), v.y(), v.z()});
}

// The objects and connections being built, with the next free uid and object counts.
struct Build {
  Element objects{"Objects", {}, {}, {}};
  Element connections{"Connections", {}, {}, {}};
  std::int64_t next_uid = 1000000000LL;
  int geometries = 0, materials = 0, deformers = 0, poses = 0, mesh_models = 0;
  // The BlendShapeChannel uid of every morph target, meshes in order, targets in order: the
  // clip's weight columns (core/clip.h), whose DeformPercent curves connect to them.
  std::vector<std::int64_t> blend_channels;

  std::int64_t Uid() { return next_uid++; }
  void Connect(std::int64_t child, std::int64_t parent) {
    connections.Add("C", {std::string("OO"), child, parent});
  }
};

// Adds `meshes` (core/mesh.h) as Model (Mesh) + Geometry (+ Material, + Skin and Clusters and a
// BindPose when skinned, + a BlendShape deformer with a BlendShapeChannel and a Shape geometry per
// morph target) under the root, or under their attach joint's model. `joint_model`: the
// Model uid of every joint; `length_scale`: file lengths per unit.
void AddMeshes(const Skeleton& skeleton, std::span<const Mesh> meshes, double length_scale,
               const std::vector<std::int64_t>& joint_model, Build& build);

// A mesh's FBX control points: its vertices that differ in position, skin or morph offsets
// (core/mesh.h VertexClasses; normals and UVs go by polygon corner): `first` holds each point's
// first vertex, `of` each vertex's point.
struct ControlPoints {
  explicit ControlPoints(const Mesh& mesh);
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> of;
  // The polygons' corners (mesh vertices) in order, and whether each ends its polygon: the
  // file's polygons (Mesh::polygon_triangles, when its triangles are the fans it says), else the
  // triangles.
  std::vector<std::uint32_t> corners;
  std::vector<bool> ends;
};

// Adds the morph targets of `mesh` on `geometry`: a BlendShape deformer, and per target a
// BlendShapeChannel (DeformPercent = default weight x 100, FullWeights 100) with its Shape
// geometry (Indexes of control points, Vertices and Normals as offsets, in `to_space` scaled by
// `length_scale`); records the channels in build.blend_channels.
void AddBlendShapes(const Mesh& mesh, const ControlPoints& points,
                    const Eigen::Isometry3d& to_space, double length_scale, std::int64_t geometry,
                    Build& build);

}  // namespace rigel::fbx_internal

#endif  // RIGEL_EXPORTERS_FBX_INTERNAL_H_
