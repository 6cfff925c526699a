#include "core/scene.h"

#include <cmath>
#include <sstream>

#include "core/channel.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"

namespace rigel {

double MetresPerUnit(const Scene& scene) {
  return scene.file_unit_metres > 0 && scene.length_scale > 0
             ? scene.file_unit_metres / scene.length_scale
             : 0.0;
}

double MetresPerUnitOrEstimate(const Scene& scene) {
  const double unit =
      scene.file_unit_metres > 0 ? scene.file_unit_metres : scene.estimated_unit_metres;
  return unit > 0 && scene.length_scale > 0 ? unit / scene.length_scale : 0.0;
}

bool ScaleSceneLengths(Scene& scene, double factor, std::string* error) {
  if (!std::isfinite(factor) || factor <= 0) {
    std::ostringstream message;
    message << "invalid length scale " << factor;
    if (error != nullptr) *error = message.str();
    return false;
  }
  if (factor == 1.0) return true;
  RawSkeleton raw = ToRawSkeleton(*scene.skeleton);
  std::vector<RawSkeleton::Joint*> stack;
  for (auto& r : raw.roots) stack.push_back(&r);
  while (!stack.empty()) {
    RawSkeleton::Joint* j = stack.back();
    stack.pop_back();
    j->rest_translation *= factor;
    for (auto& e : j->end_sites) e *= factor;
    for (auto& c : j->children) stack.push_back(&c);
  }
  std::shared_ptr<const Skeleton> skeleton = SkeletonBuilder().Build(raw, error);
  if (!skeleton) return false;
  const auto channels = skeleton->channels();
  for (Clip& clip : scene.clips) {
    for (int f = 0; f < clip.num_frames(); ++f) {
      auto row = clip.frame(f);
      for (std::size_t c = 0; c < channels.size(); ++c) {
        if (IsTranslation(channels[c])) row[c] *= factor;
      }
    }
  }
  for (Mesh& mesh : scene.meshes) ScaleMesh(mesh, factor);
  scene.skeleton = std::move(skeleton);
  scene.length_scale *= factor;
  return true;
}

}  // namespace rigel
