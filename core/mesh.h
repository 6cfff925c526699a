// Mesh: a triangle mesh carried through from an input to an output, rigidly attached to a joint,
// skinned to several (linear-blend skinning), or static. Geometry is stored in world space at the
// mesh's bind pose, so the data model needs no mesh-node transform: a skinned vertex is
//   v(t) = sum_i w_i * world_j(t) * bind_world_j^-1 * v_bind        (j = skin_joints[joint_i])
// which is exact whatever the skeleton's rest pose is (FBX and glTF inverse bind matrices map to
// bind_world_j^-1 directly). Lengths are in the scene's length unit, like the skeleton's.
#ifndef RIGEL_CORE_MESH_H_
#define RIGEL_CORE_MESH_H_

#include <Eigen/Geometry>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

// A blend shape (morph target): vertex offsets that a weight scales and adds to the mesh,
//   v(w) = v_bind + sum_t w_t * delta_t(v)        (before skinning, as glTF and FBX define it).
// Sparse: only the vertices it moves are listed (FBX Shape geometry stores it so; glTF's dense
// targets keep their non-zero rows). Offsets are in the mesh's space (world at bind).
struct MorphTarget {
  std::string name;
  // Vertex indices it moves, strictly increasing, each below the mesh's vertex count.
  std::vector<std::uint32_t> vertices;
  // Position offsets, one per listed vertex.
  std::vector<Eigen::Vector3d> position_deltas;
  // Normal offsets, one per listed vertex, or empty when the file gives none.
  std::vector<Eigen::Vector3d> normal_deltas;
  // The weight when no clip animates it (glTF mesh.weights; FBX DeformPercent / 100).
  double default_weight = 0.0;
};

struct Mesh {
  // Up to this many joints move one vertex (glTF: JOINTS_0/WEIGHTS_0 and JOINTS_1/WEIGHTS_1; more
  // are cut, the importer says so).
  static constexpr int kMaxInfluences = 8;

  std::string name;
  // Material name ("" when none); materials themselves (textures, shading) are not carried.
  std::string material;
  // Vertex positions and unit normals (normals may be empty), world space at bind.
  std::vector<Eigen::Vector3d> positions;
  std::vector<Eigen::Vector3d> normals;
  // First texture coordinate set (may be empty), as in the file (v up).
  std::vector<Eigen::Vector2d> uvs;
  // Triangles: three vertex indices each.
  std::vector<std::uint32_t> triangles;
  // The file's polygons, where it has polygons of more than three corners: how many consecutive
  // triangles (a fan: a b c, a c d, a d e ...) make each, in order, summing to the triangle
  // count. Empty: each triangle is a polygon. FBX writes the polygons (glTF needs triangles).
  std::vector<std::uint32_t> polygon_triangles;

  // Skinned: the joints that move it and their world transforms at bind (rigid).
  std::vector<int> skin_joints;
  std::vector<Eigen::Isometry3d> bind_world;
  // Per vertex: indices into skin_joints and weights (summing to 1; unused slots weight 0).
  std::vector<std::array<std::uint16_t, kMaxInfluences>> vertex_joints;
  std::vector<std::array<float, kMaxInfluences>> vertex_weights;

  // Not skinned: the joint it moves with rigidly (its bind is `attach_bind`), or -1 (static).
  int attach_joint = -1;
  Eigen::Isometry3d attach_bind = Eigen::Isometry3d::Identity();

  // Blend shapes, in the file's order. Their weights are a clip's weight channels (core/clip.h).
  std::vector<MorphTarget> morph_targets;

  bool skinned() const { return !skin_joints.empty(); }
};

// Number of morph targets of all `meshes`: the weight channels a clip of their scene has when it
// animates them (column w is the w-th target, meshes in order, targets in order).
int CountMorphTargets(std::span<const Mesh> meshes);
// The polygons of more than three corners of `meshes` (Mesh::polygon_triangles).
std::size_t CountPolygons(std::span<const Mesh> meshes);

// The weight channels of `meshes`' targets in that order (core/clip.h WeightChannel).
std::vector<WeightChannel> MorphWeightChannels(std::span<const Mesh> meshes);

// Checks a mesh against its skeleton: triangle indices below the vertex count, per-vertex arrays
// of the vertex count, skin joints and attach joint inside the skeleton, morph targets' vertices
// increasing and below the vertex count with one offset each, finite values. Returns
// "" when it holds, else what is wrong ("mesh 'Body': triangle 12 refers to vertex 900 of 850").
std::string CheckMesh(const Skeleton& skeleton, const Mesh& mesh);

// Deformed positions of `mesh` for joint world transforms `world` (e.g. Pose::world): morph
// targets first (`weights`, one per target, empty: their default weights), then linear blend
// skinning (skinned), the attach joint's motion (attached) or nothing more (static). `linear`
// (Pose::linear of a skeleton with scale; empty: none) replaces the world transforms' linear
// parts, so the skin grows with its bones' scale.
void DeformMesh(const Mesh& mesh, std::span<const Eigen::Isometry3d> world,
                std::vector<Eigen::Vector3d>* positions, std::span<const double> weights = {},
                std::span<const Eigen::Matrix3d> linear = {});

// Multiplies the mesh's lengths (positions, bind translations, morph position offsets) by
// `factor`.
void ScaleMesh(Mesh& mesh, double factor);

// Merges the vertices that are identical in everything a vertex holds: position, normal, UV,
// skin joints and weights, and its offset in every morph target (bit for bit: nothing changes
// but the count). Importers that give each polygon corner its own vertex (Assimp's FBX reader:
// a quad mesh comes in with four vertices a quad) thereby keep the vertices the file has, split
// only where an attribute differs (a UV seam, a hard edge). The kept vertices stay in the order
// of their first use; triangles and morph targets are renumbered. Returns how many were merged.
std::size_t WeldVertices(Mesh& mesh);

// The classes of identical vertices WeldVertices merges, without merging them: the class of each
// vertex, classes numbered in the order of their first vertex (`first` gets it). Without
// `normals_and_uvs` only the position, skin and morph offsets are compared: the control points of
// an FBX Geometry, whose normals and UVs go by polygon corner. A mesh with an index out of range
// gives every vertex its own class.
std::vector<std::uint32_t> VertexClasses(const Mesh& mesh, bool normals_and_uvs,
                                         std::vector<std::uint32_t>* first);

}  // namespace rigel

#endif  // RIGEL_CORE_MESH_H_
