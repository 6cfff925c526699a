#include "cli/reduce_keys.h"

#include <fmt/format.h>

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/pose.h"

namespace rigel::cli {

void AddReduceOptions(CLI::App* sub, ReduceArgs* args) {
  sub->add_flag("--reduce-keys", args->enabled,
                "Write the fewest keys (FBX, glTF) that keep every joint and every point "
                "--reduce-vertex from it within --reduce-error of the dense clip on every frame "
                "(BVH keys every frame by format)");
  sub->add_option("--reduce-error", args->error_mm,
                  "Largest world-space error of --reduce-keys, in mm (default 0.1)")
      ->check(CLI::Range(1e-6, 1e6));
  sub->add_option("--reduce-vertex", args->vertex_mm,
                  "Distance of the virtual vertices from each joint, in mm (default 20)")
      ->check(CLI::Range(0.0, 1e6));
}

std::optional<KeyReductionOptions> ReductionOf(const ReduceArgs& args, double metres_per_unit) {
  if (!args.enabled) return std::nullopt;
  KeyReductionOptions options;
  options.max_error = args.error_mm * 1e-3;
  options.virtual_vertex = args.vertex_mm * 1e-3;
  options.metres_per_unit = metres_per_unit > 0 ? metres_per_unit : 1.0;
  return options;
}

std::vector<ClipKeys> SaveSceneReduced(const Scene& scene, const std::string& path,
                                       const ReduceArgs& args) {
  std::vector<ClipKeys> keys;
  if (!args.enabled || !scene.skeleton) {
    SaveScene(scene, path);
    return keys;
  }
  SaveOptions save;
  save.metres_per_unit = MetresPerUnitOrEstimate(scene);
  save.meshes = scene.meshes;
  save.axes = scene.axes;
  const std::optional<KeyReductionOptions> reduction = ReductionOf(args, save.metres_per_unit);
  save.reduce = &*reduction;
  save.reduced = &keys;
  SaveClips(*scene.skeleton, scene.clips, path, save);
  return keys;
}

nlohmann::json KeysJson(const ClipKeys& keys, const ReduceArgs& args,
                        std::optional<double> read_back_m) {
  nlohmann::json j = {{"before", keys.dense_keys},
                      {"after", keys.keys},
                      {"bound_mm", args.error_mm},
                      {"virtual_vertex_mm", args.vertex_mm},
                      {"max_error_mm", keys.max_error * 1e3}};
  if (read_back_m) j["read_back_error_mm"] = *read_back_m * 1e3;
  return j;
}

namespace {

// 2 sin(angle / 2) of the rotation between two rotation matrices: the distance a point 1 away
// moves.
double Chord(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  const Eigen::Quaterniond q(a.transpose() * b);
  return 2 * q.vec().norm();
}

// The rigid transform (metres) that best takes the input's joints onto the file's on frame 0
// (Kabsch), or on every frame when frame 0's joints are collinear.
Eigen::Isometry3d FrameOfFile(const Skeleton& a, const Clip& ca, const Skeleton& b, const Clip& cb,
                              const std::vector<std::pair<int, int>>& joints, double ma,
                              double mb) {
  std::vector<Eigen::Isometry3d> wa(a.num_joints()), wb(b.num_joints());
  for (int frames : {1, std::min(ca.num_frames(), cb.num_frames())}) {
    std::vector<Eigen::Vector3d> pa, pb;
    for (int f = 0; f < frames; ++f) {
      ForwardKinematics(a, ca.frame(f), wa);
      ForwardKinematics(b, cb.frame(f), wb);
      for (const auto& [j, k] : joints) {
        pa.push_back(wa[j].translation() * ma);
        pb.push_back(wb[k].translation() * mb);
      }
    }
    Eigen::Vector3d ca_mean = Eigen::Vector3d::Zero(), cb_mean = Eigen::Vector3d::Zero();
    for (std::size_t i = 0; i < pa.size(); ++i) {
      ca_mean += pa[i];
      cb_mean += pb[i];
    }
    ca_mean /= static_cast<double>(pa.size());
    cb_mean /= static_cast<double>(pb.size());
    Eigen::Matrix3d h = Eigen::Matrix3d::Zero();
    for (std::size_t i = 0; i < pa.size(); ++i) {
      h += (pa[i] - ca_mean) * (pb[i] - cb_mean).transpose();
    }
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
    const Eigen::Vector3d s = svd.singularValues();
    if (s[1] <= 1e-12 * std::max(s[0], 1e-300) && frames == 1) continue;
    Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
    d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1.0 : 1.0;
    Eigen::Isometry3d out = Eigen::Isometry3d::Identity();
    out.linear() = svd.matrixV() * d * svd.matrixU().transpose();
    out.translation() = cb_mean - out.linear() * ca_mean;
    return out;
  }
  return Eigen::Isometry3d::Identity();
}

// The largest distance between a vertex's blend-shape displacement under `clip`'s weights and
// under `written`'s (the same columns read back), over every frame: what reducing the weight keys
// moved a vertex, in metres (0 when the clip animates no weight or the file does not hold them).
double WeightReadBackError(const Scene& input, const Clip& clip, const Clip& written,
                           double metres) {
  if (clip.num_weights() == 0 || written.weight_channels() != clip.weight_channels() ||
      clip.weight_channels() != MorphWeightChannels(input.meshes)) {
    return 0.0;
  }
  double worst = 0.0;
  std::vector<Eigen::Vector3d> moved;
  for (int f = 0; f < clip.num_frames() && f < written.num_frames(); ++f) {
    int column = 0;
    for (const Mesh& mesh : input.meshes) {
      bool any = false;
      for (const MorphTarget& target : mesh.morph_targets) {
        const double dw = written.weights(f)[column] - clip.weights(f)[column];
        ++column;
        if (dw == 0.0) continue;
        if (!any) moved.assign(mesh.positions.size(), Eigen::Vector3d::Zero());
        any = true;
        for (std::size_t i = 0; i < target.vertices.size(); ++i) {
          if (target.vertices[i] < moved.size()) {
            moved[target.vertices[i]] += dw * target.position_deltas[i];
          }
        }
      }
      if (!any) continue;
      for (const Eigen::Vector3d& d : moved) worst = std::max(worst, d.norm() * metres);
    }
  }
  return worst;
}

}  // namespace

double ReadBackError(const Scene& input, const Clip& clip, const std::string& path,
                     LoadOptions options, std::size_t take, double vertex_m) {
  const Skeleton& a = *input.skeleton;
  options.unit = LengthUnit::kFile;
  const Scene back = LoadScene(path, options);
  if (!back.skeleton || back.clips.size() <= take) {
    throw std::runtime_error(fmt::format("{}: does not read back with take {}", path, take + 1));
  }
  const Skeleton& b = *back.skeleton;
  const Clip& written = back.clips[take];
  const double ma = MetresPerUnitOrEstimate(input);
  double mb = MetresPerUnit(back);
  // A file that states no unit holds the input's numbers.
  if (!(mb > 0)) mb = ma;
  std::vector<std::pair<int, int>> joints, sites;
  for (int j = 0; j < a.num_joints(); ++j) {
    const int k = b.FindJoint(a.name(j));
    if (k >= 0) joints.push_back({j, k});
  }
  if (joints.empty()) throw std::runtime_error(path + ": no joint of the input reads back");
  const auto end_sites = a.end_sites();
  for (std::size_t e = 0; e < end_sites.size(); ++e) {
    const int k = b.FindJoint(a.name(end_sites[e].parent) + "_end");
    if (k >= 0) sites.push_back({static_cast<int>(e), k});
  }
  std::vector<Eigen::Isometry3d> wa(a.num_joints()), wb(b.num_joints());
  // The file's frame against the input's: a writer may turn the figure (glTF is +Y up). The
  // rotation and shift that best take frame 0's joints onto the file's (frame 0 is always a key).
  const Eigen::Isometry3d frame = FrameOfFile(a, clip, b, written, joints, ma, mb);
  std::vector<Eigen::Matrix3d> first_offset(joints.size());
  double worst = 0;
  const int frames = std::min(clip.num_frames(), written.num_frames());
  if (frames != clip.num_frames()) {
    throw std::runtime_error(fmt::format("{}: reads back with {} frames, the take has {}", path,
                                         written.num_frames(), clip.num_frames()));
  }
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(a, clip.frame(f), wa);
    ForwardKinematics(b, written.frame(f), wb);
    for (std::size_t i = 0; i < joints.size(); ++i) {
      const auto [j, k] = joints[i];
      const Eigen::Vector3d pa = frame * (wa[j].translation() * ma);
      const Eigen::Vector3d pb = wb[k].translation() * mb;
      // The file's joint frame may differ from the input's by a constant rotation (rest
      // orientations written otherwise): the change against frame 0 is what moves a vertex.
      const Eigen::Matrix3d offset = (frame.linear() * wa[j].linear()).transpose() * wb[k].linear();
      if (f == 0) first_offset[i] = offset;
      const double turn = Chord(first_offset[i], offset);
      worst = std::max(worst, (pa - pb).norm() + vertex_m * turn);
    }
    for (const auto& [e, k] : sites) {
      const EndSite& site = end_sites[e];
      const Eigen::Vector3d pa = frame * ((wa[site.parent] * site.offset) * ma);
      worst = std::max(worst, (pa - wb[k].translation() * mb).norm());
    }
  }
  return std::max(worst, WeightReadBackError(input, clip, written, ma));
}

}  // namespace rigel::cli
