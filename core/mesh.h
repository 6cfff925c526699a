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

#include "core/skeleton.h"

namespace rigel {

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

  // Skinned: the joints that move it and their world transforms at bind (rigid).
  std::vector<int> skin_joints;
  std::vector<Eigen::Isometry3d> bind_world;
  // Per vertex: indices into skin_joints and weights (summing to 1; unused slots weight 0).
  std::vector<std::array<std::uint16_t, kMaxInfluences>> vertex_joints;
  std::vector<std::array<float, kMaxInfluences>> vertex_weights;

  // Not skinned: the joint it moves with rigidly (its bind is `attach_bind`), or -1 (static).
  int attach_joint = -1;
  Eigen::Isometry3d attach_bind = Eigen::Isometry3d::Identity();

  bool skinned() const { return !skin_joints.empty(); }
};

// Checks a mesh against its skeleton: triangle indices below the vertex count, per-vertex arrays
// of the vertex count, skin joints and attach joint inside the skeleton, finite values. Returns
// "" when it holds, else what is wrong ("mesh 'Body': triangle 12 refers to vertex 900 of 850").
std::string CheckMesh(const Skeleton& skeleton, const Mesh& mesh);

// Deformed positions of `mesh` for joint world transforms `world` (e.g. Pose::world), by linear
// blend skinning (skinned), the attach joint's motion (attached) or unchanged (static).
void DeformMesh(const Mesh& mesh, std::span<const Eigen::Isometry3d> world,
                std::vector<Eigen::Vector3d>* positions);

// Multiplies the mesh's lengths (positions, bind translations) by `factor`.
void ScaleMesh(Mesh& mesh, double factor);

}  // namespace rigel

#endif  // RIGEL_CORE_MESH_H_
