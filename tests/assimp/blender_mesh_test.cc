// Meshes carried through (issue 12 item 4), checked by the real client (label "blender"): rigel
// writes each file of the corpus that has meshes as .glb and as .fbx, Blender imports it and
// evaluates the deformed meshes (armature modifier, or the bone a mesh hangs from) on three frames,
// and the vertex positions must equal rigel's own skinning (core/mesh.h DeformMesh) of the same
// frames to 1e-4 of the figure's height. Blender is Z-up: rigel's (x, y, z) is Blender's (x, -z,
// y). An FBX mesh's vertices in Blender are the Geometry's control points (rigel writes a point
// per vertex position, skin and morph offsets: core/mesh.h VertexClasses), so Blender's vertex i
// is rigel's first vertex of point i; and there are as many as Blender finds in the source file.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "blender_util.h"
#include "core/pose.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace blender_mesh_test {
namespace {

using testing::TempDir;

// Bounding-box diagonal of every mesh at frame 0, in the scene's units (the tolerance's yardstick).
double MeshSize(const Scene& scene) {
  Eigen::AlignedBox3d box;
  for (const Mesh& mesh : scene.meshes) {
    for (const Eigen::Vector3d& p : mesh.positions) box.extend(p);
  }
  return box.isEmpty() ? 0.0 : box.diagonal().norm();
}

void ExpectBlenderDeformsLikeRigel(const std::string& rel, const char* ext) {
  TempDir dir;
  const Scene scene = LoadScene(testing::SharedData() + "/" + rel);
  ASSERT_FALSE(scene.meshes.empty()) << rel << ": rigel imported no mesh";
  const std::string glb = dir.file(std::string("out.") + ext);
  SaveScene(scene, glb);
  const Clip& clip = scene.clips.front();
  const std::vector<int> frames{0, clip.num_frames() / 2, clip.num_frames() - 1};
  const nlohmann::json result = testing::RunBlenderScript(
      RIGEL_BLENDER_MESH_SCRIPT,
      fmt::format("'{}' {{json}} {} {}", glb, clip.frame_rate(), fmt::join(frames, " ")), dir);
  ASSERT_FALSE(result.is_null());
  const double metres = MetresPerUnitOrEstimate(scene) > 0 ? MetresPerUnitOrEstimate(scene) : 1.0;
  const double size = MeshSize(scene) * metres;
  ASSERT_GT(size, 0);
  double worst = 0;
  std::string worst_at;
  std::size_t compared = 0;
  double moved = 0;  // how far a vertex travels between the frames: the check is not trivial
  const bool fbx = std::string(ext) == "fbx";
  // Blender's own reading of the source, for its vertex counts.
  const nlohmann::json source =
      fbx ? testing::RunBlenderScript(
                RIGEL_BLENDER_MESH_SCRIPT,
                fmt::format("'{}' {{json}} {} {}", testing::SharedData() + "/" + rel,
                            clip.frame_rate(), frames.front()),
                dir, "source")
          : nlohmann::json();
  Pose pose(*scene.skeleton);
  std::vector<Eigen::Vector3d> deformed, first, all;
  std::size_t control_points = 0;
  for (const Mesh& mesh : scene.meshes) {
    ASSERT_TRUE(result["meshes"].contains(mesh.name))
        << "Blender has no mesh '" << mesh.name << "'";
    std::vector<std::uint32_t> points;  // FBX: the first vertex of each control point
    VertexClasses(mesh, false, &points);
    control_points += points.size();
    for (const int f : frames) {
      pose.SetFromRow(*scene.skeleton, clip.frame(f));
      DeformMesh(mesh, pose.world, &all);
      deformed.clear();
      if (fbx) {
        for (const std::uint32_t v : points) deformed.push_back(all[v]);
      } else {
        deformed = all;
      }
      if (f == frames.front()) first = deformed;
      for (std::size_t v = 0; v < deformed.size(); ++v) {
        moved = std::max(moved, metres * (deformed[v] - first[v]).norm());
      }
      const auto& got = result["meshes"][mesh.name][std::to_string(f)];
      ASSERT_EQ(got.size(), deformed.size()) << mesh.name << ": Blender's vertex count";
      for (std::size_t v = 0; v < deformed.size(); ++v) {
        const Eigen::Vector3d p = metres * deformed[v];
        const Eigen::Vector3d expected(p.x(), -p.z(), p.y());
        const Eigen::Vector3d b(got[v][0].get<double>(), got[v][1].get<double>(),
                                got[v][2].get<double>());
        const double d = (b - expected).norm();
        if (d > worst) {
          worst = d;
          worst_at = fmt::format("mesh '{}' vertex {} frame {}", mesh.name, v, f);
        }
        ++compared;
      }
    }
  }
  if (fbx) {
    // Blender finds as many vertices in rigel's FBX as in the source (its mesh objects may be
    // named otherwise: the totals).
    std::size_t in_source = 0, polygons = 0, source_polygons = 0;
    for (const auto& [name, by_frame] : source["meshes"].items()) {
      in_source += by_frame[std::to_string(frames.front())].size();
    }
    for (const auto& [name, count] : result["polygons"].items()) polygons += count.get<int>();
    for (const auto& [name, count] : source["polygons"].items()) {
      source_polygons += count.get<int>();
    }
    EXPECT_EQ(control_points, in_source) << rel << ": vertices of rigel's FBX and the source's";
    EXPECT_EQ(polygons, source_polygons) << rel << ": polygons of rigel's FBX and the source's";
    std::printf("%s as .fbx: %zu vertices and %zu polygons in Blender, as in the source\n",
                rel.c_str(), control_points, polygons);
  }
  ::testing::Test::RecordProperty("max_rel_diff", fmt::format("{:.3g}", worst / size));
  std::printf(
      "%s as .%s: %zu vertex positions on %zu frames (moving up to %.3g of the size), worst "
      "%.3g of the size (%s)\n",
      rel.c_str(), ext, compared, frames.size(), moved / size, worst / size, worst_at.c_str());
  EXPECT_LE(worst, 1e-4 * size) << rel << ": worst at " << worst_at;
  EXPECT_GT(moved, 0.02 * size) << rel << ": the meshes hardly move over the frames compared";
}

TEST(BlenderMesh, SkinnedMeshDeformsLikeRigel) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  ExpectBlenderDeformsLikeRigel("fbx/assimp/animation_with_skeleton.fbx", "glb");
  ExpectBlenderDeformsLikeRigel("fbx/assimp/animation_with_skeleton.fbx", "fbx");
}

TEST(BlenderMesh, AttachedMeshMovesLikeRigel) {
  RIGEL_REQUIRE_SHARED_DATA();
  REQUIRE_BLENDER();
  ExpectBlenderDeformsLikeRigel("fbx/assimp/multiple_animations_test.fbx", "glb");
  ExpectBlenderDeformsLikeRigel("fbx/assimp/multiple_animations_test.fbx", "fbx");
}

}  // namespace
}  // namespace blender_mesh_test
}  // namespace rigel
