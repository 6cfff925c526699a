// The FBX writer's meshes (exporters/fbx_internal.h): each core/mesh.h Mesh as a Model of type
// Mesh with its Geometry (control points: the vertices that differ in position, skin or morph
// offsets; triangles; normals and UVs by polygon vertex; one material), and for a skinned mesh a
// Skin deformer with a Cluster per joint (Transform and TransformLink from the mesh's bind pose, as
// FBX SDK, Blender and Assimp read them) plus a BindPose. Skinned and static meshes hang from the
// root with an identity transform and keep their world-space bind geometry; an attached mesh hangs
// from its joint's Model with its geometry in that joint's space at bind.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "exporters/fbx_internal.h"

namespace rigel::fbx_internal {

ControlPoints::ControlPoints(const Mesh& mesh) : of(VertexClasses(mesh, false, &first)) {
  const std::vector<std::uint32_t>& t = mesh.triangles;
  // Each polygon's fan (a b c, a c d, ...) gives its corners a b c d ...
  bool fans = !mesh.polygon_triangles.empty();
  std::size_t next = 0;  // the polygon's first triangle
  for (std::size_t p = 0; fans && p < mesh.polygon_triangles.size(); ++p) {
    const std::size_t count = mesh.polygon_triangles[p];
    fans = count > 0 && 3 * (next + count) <= t.size();
    for (std::size_t k = 1; fans && k < count; ++k) {
      const std::size_t a = 3 * (next + k), b = 3 * (next + k - 1);
      fans = t[a] == t[3 * next] && t[a + 1] == t[b + 2];
    }
    for (std::size_t k = 0; fans && k < count; ++k) {
      if (k == 0) corners.insert(corners.end(), {t[3 * next], t[3 * next + 1]});
      corners.push_back(t[3 * (next + k) + 2]);
    }
    if (fans) {
      ends.resize(corners.size(), false);
      ends.back() = true;
    }
    next += count;
  }
  if (!fans || 3 * next != t.size()) {
    corners = t;
    ends.assign(t.size(), false);
    for (std::size_t i = 2; i < ends.size(); i += 3) ends[i] = true;
  }
}

namespace {

// A 4x4 transform as FBX stores it (column-major doubles), lengths scaled.
std::vector<double> Matrix16(Eigen::Isometry3d t, double length_scale) {
  t.translation() *= length_scale;
  const Eigen::Matrix4d m = t.matrix();
  return std::vector<double>(m.data(), m.data() + 16);
}

// The mesh's Model, hanging from its joint's Model when attached, else from the root.
std::int64_t AddMeshModel(const Mesh& mesh, bool attached,
                          const std::vector<std::int64_t>& joint_model, Build& build) {
  const std::int64_t model = build.Uid();
  Element& m =
      build.objects.Add("Model", {model, NameClass(mesh.name, "Model"), std::string("Mesh")});
  m.Add("Version", {std::int32_t{232}});
  Element& mp = m.Add("Properties70");
  mp.Add("P", P("DefaultAttributeIndex", "int", "Integer", "", {std::int32_t{0}}));
  mp.Add("P", PVec("Lcl Translation", "Lcl Translation", "", "A", Eigen::Vector3d::Zero()));
  mp.Add("P", PVec("Lcl Rotation", "Lcl Rotation", "", "A", Eigen::Vector3d::Zero()));
  mp.Add("P", PVec("Lcl Scaling", "Lcl Scaling", "", "A", Eigen::Vector3d::Ones()));
  m.Add("Shading", {true});
  m.Add("Culling", {std::string("CullingOff")});
  build.Connect(model, attached ? joint_model[mesh.attach_joint] : 0);
  ++build.mesh_models;
  return model;
}

// The Geometry's control points (in to_space, lengths scaled) and triangles.
void AddVertices(const Mesh& mesh, const ControlPoints& points, const Eigen::Isometry3d& to_space,
                 double length_scale, Element& g) {
  std::vector<double> vertices;
  vertices.reserve(points.first.size() * 3);
  for (const std::uint32_t v : points.first) {
    const Eigen::Vector3d q = length_scale * (to_space * mesh.positions[v]);
    vertices.insert(vertices.end(), {q.x(), q.y(), q.z()});
  }
  g.Add("Vertices", {vertices});
  std::vector<std::int32_t> polygons;
  polygons.reserve(points.corners.size());
  for (std::size_t c = 0; c < points.corners.size(); ++c) {
    const auto point = static_cast<std::int32_t>(points.of[points.corners[c]]);
    polygons.push_back(points.ends[c] ? -point - 1 : point);
  }
  g.Add("PolygonVertexIndex", {polygons});
}

// The Layer's entry naming a LayerElement of the Geometry.
void AddLayerElement(Element& layer_def, const char* type) {
  Element& e = layer_def.Add("LayerElement");
  e.Add("Type", {std::string(type)});
  e.Add("TypedIndex", {std::int32_t{0}});
}

// Normals, turned into to_space: by control point when each point's corners share one normal
// (a smooth mesh), else by polygon corner (a hard edge splits a point), each corner's normal
// written out or an index into the mesh's normals, whichever is smaller.
void AddNormalsLayer(const Mesh& mesh, const ControlPoints& points,
                     const Eigen::Isometry3d& to_space, Element& g, Element& layer_def) {
  Element& n = g.Add("LayerElementNormal", {std::int32_t{0}});
  n.Add("Version", {std::int32_t{101}});
  n.Add("Name", {std::string("")});
  const bool by_point = std::all_of(
      points.corners.begin(), points.corners.end(),
      [&](std::uint32_t v) { return mesh.normals[v] == mesh.normals[points.first[points.of[v]]]; });
  // Bytes: 24 a normal, 4 an index.
  const bool indexed = !by_point && mesh.normals.size() * 24 + points.corners.size() * 4 <
                                        points.corners.size() * 24;
  n.Add("MappingInformationType", {std::string(by_point ? "ByVertice" : "ByPolygonVertex")});
  n.Add("ReferenceInformationType", {std::string(indexed ? "IndexToDirect" : "Direct")});
  const std::vector<std::uint32_t>& from = by_point ? points.first : points.corners;
  std::vector<double> normals;
  const auto add = [&](const Eigen::Vector3d& normal) {
    const Eigen::Vector3d q = (to_space.linear() * normal).normalized();
    normals.insert(normals.end(), {q.x(), q.y(), q.z()});
  };
  if (indexed) {
    for (const Eigen::Vector3d& normal : mesh.normals) add(normal);
  } else {
    for (const std::uint32_t v : from) add(mesh.normals[v]);
  }
  n.Add("Normals", {normals});
  if (indexed) {
    n.Add("NormalsIndex",
          {std::vector<std::int32_t>(points.corners.begin(), points.corners.end())});
  }
  AddLayerElement(layer_def, "LayerElementNormal");
}

// UVs by polygon vertex.
void AddUvLayer(const Mesh& mesh, const ControlPoints& points, Element& g, Element& layer_def) {
  Element& u = g.Add("LayerElementUV", {std::int32_t{0}});
  u.Add("Version", {std::int32_t{101}});
  u.Add("Name", {std::string("UVMap")});
  u.Add("MappingInformationType", {std::string("ByPolygonVertex")});
  u.Add("ReferenceInformationType", {std::string("IndexToDirect")});
  std::vector<double> uv;
  uv.reserve(mesh.uvs.size() * 2);
  for (const Eigen::Vector2d& t : mesh.uvs) uv.insert(uv.end(), {t.x(), t.y()});
  u.Add("UV", {uv});
  u.Add("UVIndex", {std::vector<std::int32_t>(points.corners.begin(), points.corners.end())});
  AddLayerElement(layer_def, "LayerElementUV");
}

// One material for the whole mesh; its Material object is written once per name and connected
// to the model.
void AddMaterialLayer(const Mesh& mesh, std::int64_t model,
                      std::map<std::string, std::int64_t>& materials, Element& g,
                      Element& layer_def, Build& build) {
  Element& e = g.Add("LayerElementMaterial", {std::int32_t{0}});
  e.Add("Version", {std::int32_t{101}});
  e.Add("Name", {std::string("")});
  e.Add("MappingInformationType", {std::string("AllSame")});
  e.Add("ReferenceInformationType", {std::string("IndexToDirect")});
  e.Add("Materials", {std::vector<std::int32_t>{0}});
  AddLayerElement(layer_def, "LayerElementMaterial");
  auto it = materials.find(mesh.material);
  if (it == materials.end()) {
    const std::int64_t id = build.Uid();
    Element& mat =
        build.objects.Add("Material", {id, NameClass(mesh.material, "Material"), std::string("")});
    mat.Add("Version", {std::int32_t{102}});
    mat.Add("ShadingModel", {std::string("phong")});
    mat.Add("MultiLayer", {std::int32_t{0}});
    Element& props = mat.Add("Properties70");
    props.Add("P", P("DiffuseColor", "Color", "", "A", {0.8, 0.8, 0.8}));
    it = materials.emplace(mesh.material, id).first;
    ++build.materials;
  }
  build.Connect(it->second, model);
}

// The mesh's Geometry, connected to its model; returns its id.
std::int64_t AddGeometry(const Mesh& mesh, const ControlPoints& points,
                         const Eigen::Isometry3d& to_space, double length_scale, std::int64_t model,
                         std::map<std::string, std::int64_t>& materials, Build& build) {
  const std::int64_t geometry = build.Uid();
  // Built here and added to the objects last: Add() on a vector invalidates references.
  Element g{"Geometry", {geometry, NameClass(mesh.name, "Geometry"), std::string("Mesh")}, {}, {}};
  g.Add("Properties70");
  g.Add("GeometryVersion", {std::int32_t{124}});
  AddVertices(mesh, points, to_space, length_scale, g);
  Element layer_def{"Layer", {std::int32_t{0}}, {}, {}};
  layer_def.Add("Version", {std::int32_t{100}});
  if (!mesh.normals.empty()) AddNormalsLayer(mesh, points, to_space, g, layer_def);
  if (!mesh.uvs.empty()) AddUvLayer(mesh, points, g, layer_def);
  if (!mesh.material.empty()) AddMaterialLayer(mesh, model, materials, g, layer_def, build);
  g.children.push_back(std::move(layer_def));  // after the elements it lists
  build.objects.children.push_back(std::move(g));
  build.Connect(geometry, model);
  ++build.geometries;
  return geometry;
}

// Skin: a Cluster per joint, its vertices and weights; bind matrices from the mesh's bind; and
// the mesh's BindPose.
void AddSkin(const Skeleton& skeleton, const Mesh& mesh, const ControlPoints& points,
             double length_scale, const std::vector<std::int64_t>& joint_model, std::int64_t model,
             std::int64_t geometry, Build& build) {
  const std::int64_t skin = build.Uid();
  Element& sk =
      build.objects.Add("Deformer", {skin, NameClass("", "Deformer"), std::string("Skin")});
  sk.Add("Version", {std::int32_t{101}});
  sk.Add("Link_DeformAcuracy", {50.0});
  build.Connect(skin, geometry);
  ++build.deformers;
  std::vector<std::vector<std::int32_t>> indexes(mesh.skin_joints.size());
  std::vector<std::vector<double>> weights(mesh.skin_joints.size());
  for (std::size_t i = 0; i < points.first.size(); ++i) {
    const std::uint32_t v = points.first[i];
    for (int k = 0; k < Mesh::kMaxInfluences; ++k) {
      const float w = mesh.vertex_weights[v][k];
      if (w <= 0) continue;
      indexes[mesh.vertex_joints[v][k]].push_back(static_cast<std::int32_t>(i));
      weights[mesh.vertex_joints[v][k]].push_back(w);
    }
  }
  const std::int64_t pose = build.Uid();
  Element bind_pose{"Pose", {pose, NameClass(mesh.name, "Pose"), std::string("BindPose")}, {}, {}};
  bind_pose.Add("Type", {std::string("BindPose")});
  bind_pose.Add("Version", {std::int32_t{100}});
  bind_pose.Add("NbPoseNodes", {static_cast<std::int32_t>(mesh.skin_joints.size() + 1)});
  Element& mesh_node = bind_pose.Add("PoseNode");
  mesh_node.Add("Node", {model});
  mesh_node.Add("Matrix", {Matrix16(Eigen::Isometry3d::Identity(), length_scale)});
  ++build.poses;
  for (std::size_t i = 0; i < mesh.skin_joints.size(); ++i) {
    const int joint = mesh.skin_joints[i];
    const std::int64_t cluster = build.Uid();
    Element& c = build.objects.Add(
        "Deformer",
        {cluster, NameClass(skeleton.name(joint), "SubDeformer"), std::string("Cluster")});
    c.Add("Version", {std::int32_t{100}});
    c.Add("UserData", {std::string(""), std::string("")});
    c.Add("Indexes", {indexes[i]});
    c.Add("Weights", {weights[i]});
    // Transform: the bone's bind inverse times the mesh's (identity) world; TransformLink: the
    // bone's world at bind.
    c.Add("Transform", {Matrix16(mesh.bind_world[i].inverse(), length_scale)});
    c.Add("TransformLink", {Matrix16(mesh.bind_world[i], length_scale)});
    build.Connect(cluster, skin);
    build.Connect(joint_model[joint], cluster);
    ++build.deformers;
    Element& node = bind_pose.Add("PoseNode");
    node.Add("Node", {joint_model[joint]});
    node.Add("Matrix", {Matrix16(mesh.bind_world[i], length_scale)});
  }
  build.objects.children.push_back(std::move(bind_pose));
}

}  // namespace

void AddMeshes(const Skeleton& skeleton, std::span<const Mesh> meshes, double length_scale,
               const std::vector<std::int64_t>& joint_model, Build& build) {
  std::map<std::string, std::int64_t> materials;
  for (const Mesh& mesh : meshes) {
    Eigen::Isometry3d to_space = Eigen::Isometry3d::Identity();
    const bool attached = !mesh.skinned() && mesh.attach_joint >= 0;
    if (attached) to_space = mesh.attach_bind.inverse();
    const std::int64_t model = AddMeshModel(mesh, attached, joint_model, build);
    const ControlPoints points(mesh);
    const std::int64_t geometry =
        AddGeometry(mesh, points, to_space, length_scale, model, materials, build);
    AddBlendShapes(mesh, points, to_space, length_scale, geometry, build);
    if (!mesh.skinned()) continue;
    AddSkin(skeleton, mesh, points, length_scale, joint_model, model, geometry, build);
  }
}

void AddBlendShapes(const Mesh& mesh, const ControlPoints& points,
                    const Eigen::Isometry3d& to_space, double length_scale, std::int64_t geometry,
                    Build& build) {
  if (mesh.morph_targets.empty()) return;
  const std::int64_t blend = build.Uid();
  Element& b =
      build.objects.Add("Deformer", {blend, NameClass(mesh.name, "Deformer"), "BlendShape"});
  b.Add("Version", {std::int32_t{100}});
  build.Connect(blend, geometry);
  ++build.deformers;
  for (const MorphTarget& target : mesh.morph_targets) {
    const std::int64_t shape = build.Uid();
    Element& g =
        build.objects.Add("Geometry", {shape, NameClass(target.name, "Geometry"), "Shape"});
    g.Add("Version", {std::int32_t{100}});
    // A shape that moves no vertex lists vertex 0 with a zero offset: Blender 3.4 refuses a Shape
    // without indexes (its FullWeights check).
    // An entry per control point: the first vertex's (the point's other vertices have the same
    // offsets, VertexClasses).
    std::vector<std::size_t> entries;
    for (std::size_t k = 0; k < target.vertices.size(); ++k) {
      const std::uint32_t v = target.vertices[k];
      if (v < points.of.size() && points.first[points.of[v]] == v) entries.push_back(k);
    }
    std::vector<std::int32_t> indexes;
    std::vector<double> vertices, normals;
    vertices.reserve(entries.size() * 3);
    for (const std::size_t k : entries) {
      indexes.push_back(static_cast<std::int32_t>(points.of[target.vertices[k]]));
      const Eigen::Vector3d q = length_scale * (to_space.linear() * target.position_deltas[k]);
      vertices.insert(vertices.end(), {q.x(), q.y(), q.z()});
    }
    if (indexes.empty()) {
      indexes.push_back(0);
      vertices.assign(3, 0.0);
    }
    g.Add("Indexes", {indexes}).compress = true;
    g.Add("Vertices", {vertices}).compress = true;
    // Normals are written even when the target has none (zero offsets): Assimp skips a Shape
    // without them.
    normals.assign(vertices.size(), 0.0);
    if (target.normal_deltas.size() == target.vertices.size() && !mesh.normals.empty()) {
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const Eigen::Vector3d q = to_space.linear() * target.normal_deltas[entries[i]];
        for (int a = 0; a < 3; ++a) normals[i * 3 + a] = q[a];
      }
    }
    g.Add("Normals", {normals}).compress = true;
    ++build.geometries;
    const std::int64_t channel = build.Uid();
    Element& c = build.objects.Add(
        "Deformer", {channel, NameClass(target.name, "SubDeformer"), "BlendShapeChannel"});
    c.Add("Version", {std::int32_t{100}});
    c.Add("DeformPercent", {target.default_weight * 100.0});
    c.Add("FullWeights", {std::vector<double>{100.0}});
    build.Connect(channel, blend);
    build.Connect(shape, channel);
    build.blend_channels.push_back(channel);
    ++build.deformers;
  }
}

}  // namespace rigel::fbx_internal
