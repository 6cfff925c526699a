// Internal to the glTF writer (exporters/gltf_writer.cc, gltf_mesh.cc): the binary buffer both
// fill, and the meshes' part of the document.
#ifndef RIGEL_EXPORTERS_GLTF_INTERNAL_H_
#define RIGEL_EXPORTERS_GLTF_INTERNAL_H_

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/mesh.h"

namespace rigel::gltf_internal {

constexpr int kFloat = 5126;

// Accumulates the binary buffer, its views and accessors.
class BufferBuilder {
 public:
  // Adds `values` (float32) as one view + accessor of `type` ("SCALAR", "VEC3", ...); returns the
  // accessor index. min/max are written when `bounds` is set.
  int Add(const std::vector<float>& values, const char* type, int components, bool bounds,
          nlohmann::json& gltf) {
    while (data_.size() % 4) data_.push_back('\0');
    const std::size_t offset = data_.size();
    data_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    nlohmann::json view = {
        {"buffer", 0}, {"byteOffset", offset}, {"byteLength", values.size() * sizeof(float)}};
    gltf["bufferViews"].push_back(view);
    nlohmann::json accessor = {{"bufferView", gltf["bufferViews"].size() - 1},
                               {"componentType", kFloat},
                               {"count", values.size() / components},
                               {"type", type}};
    if (bounds) {
      std::vector<float> lo(components, INFINITY), hi(components, -INFINITY);
      for (std::size_t i = 0; i < values.size(); ++i) {
        lo[i % components] = std::min(lo[i % components], values[i]);
        hi[i % components] = std::max(hi[i % components], values[i]);
      }
      accessor["min"] = lo;
      accessor["max"] = hi;
    }
    gltf["accessors"].push_back(accessor);
    return static_cast<int>(gltf["accessors"].size()) - 1;
  }
  // Adds raw little-endian `bytes` (count elements of `type` with `component_type`) as one view
  // (with `target`: 34962 vertex attributes, 34963 indices; 0 none) and one accessor.
  int AddRaw(const void* bytes, std::size_t size, int component_type, const char* type,
             std::size_t count, int target, nlohmann::json& gltf) {
    while (data_.size() % 4) data_.push_back('\0');
    const std::size_t offset = data_.size();
    data_.append(static_cast<const char*>(bytes), size);
    nlohmann::json view = {{"buffer", 0}, {"byteOffset", offset}, {"byteLength", size}};
    if (target != 0) view["target"] = target;
    gltf["bufferViews"].push_back(view);
    gltf["accessors"].push_back({{"bufferView", gltf["bufferViews"].size() - 1},
                                 {"componentType", component_type},
                                 {"count", count},
                                 {"type", type}});
    return static_cast<int>(gltf["accessors"].size()) - 1;
  }
  std::string& data() { return data_; }

 private:
  std::string data_;
};

// Adds `mesh` (core/mesh.h) to `gltf`: its node (a root, or a child of its attach joint's node),
// its primitive and, when skinned, its own skin. `scale`: metres per unit.
int AddMesh(const Mesh& mesh, double scale, const Eigen::Matrix3d& rotation, BufferBuilder& buffer,
            nlohmann::json& gltf, std::vector<int>* scene_nodes,
            std::vector<std::string>* materials);

}  // namespace rigel::gltf_internal

#endif  // RIGEL_EXPORTERS_GLTF_INTERNAL_H_
