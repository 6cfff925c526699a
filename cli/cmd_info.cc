// rigel info FILE [--json]: what a file holds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/read_options.h"
#include "cli/scene_info.h"
#include "core/body.h"
#include "core/pose.h"
#include "core/skeleton_utils.h"
#include "importers/confine.h"
#include "importers/load_scene.h"

namespace rigel::cli {

namespace {

nlohmann::json DescribeAxesJson(const SceneAxes& axes) {
  nlohmann::json out;
  for (const auto& [key, fact] : {std::pair{"up", &axes.up}, {"forward", &axes.forward}}) {
    out[key] = {{"axis", SignedAxisName(fact->value)},
                {"source", std::string(FactSourceKey(fact->source))},
                {"evidence", fact->evidence}};
  }
  out["right_handed"] = axes.right_handed;
  out["original_up"] = axes.original_up.axis >= 0 ? SignedAxisName(axes.original_up) : "";
  out["text"] = DescribeAxes(axes);
  return out;
}

}  // namespace

nlohmann::json DescribeScene(const Scene& scene) {
  const Skeleton& skeleton = *scene.skeleton;
  nlohmann::json info;
  info["file"] = scene.source;
  info["joints"] = skeleton.num_joints();
  info["end_sites"] = skeleton.end_sites().size();
  info["channels"] = skeleton.num_channels();
  info["joint_names"] = std::vector<std::string>(skeleton.names().begin(), skeleton.names().end());
  info["rotation_orders"] = RotationOrdersUsed(skeleton);
  const Clip* first = scene.clips.empty() ? nullptr : &scene.clips.front();
  info["axes"] = DescribeAxesJson(scene.axes);
  const BodyMeasure body = MeasureBody(skeleton, first, scene.axes.up.value);
  info["up_axis"] = std::string(1, static_cast<char>('X' + scene.axes.up.value.axis));
  info["height"] = body.height;
  const double unit = MetresPerUnitOrEstimate(scene);
  info["body"] = {{"humanoid", body.humanoid},
                  {"height", body.height},
                  {"height_metres", unit > 0 ? body.height * unit : 0.0},
                  {"chain_height", body.chain_height},
                  {"upside_down", body.upside_down},
                  {"frames", body.frames},
                  {"evidence", body.evidence}};
  nlohmann::json clips = nlohmann::json::array();
  for (const Clip& clip : scene.clips) {
    clips.push_back({{"name", clip.name()},
                     {"frames", clip.num_frames()},
                     {"frame_time", clip.frame_time()},
                     {"duration", clip.duration()}});
  }
  info["clips"] = clips;
  info["frames"] = first ? first->num_frames() : 0;
  info["frame_time"] = first ? first->frame_time() : 0.0;
  info["duration"] = first ? first->duration() : 0.0;
  info["warnings"] = scene.warnings;
  info["unit_metres"] = MetresPerUnit(scene);
  info["unit_estimated_metres"] = scene.file_unit_metres > 0 || scene.estimated_unit_metres <= 0
                                      ? 0.0
                                      : scene.estimated_unit_metres / scene.length_scale;
  // How each joint with position channels reads them (BVH: decided per joint, see bvh_reader.h).
  nlohmann::json translation = nlohmann::json::object();
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    bool has_position = false;
    for (int k = 0; k < 3; ++k) has_position |= skeleton.translation_channel(j, k) >= 0;
    if (!has_position) continue;
    translation[skeleton.name(j)] =
        skeleton.translation_mode(j) == TranslationMode::kReplace ? "replace" : "add";
  }
  info["translation_modes"] = translation;
  nlohmann::json meshes = nlohmann::json::array();
  for (const Mesh& mesh : scene.meshes) {
    meshes.push_back(
        {{"name", mesh.name},
         {"material", mesh.material},
         {"vertices", mesh.positions.size()},
         {"triangles", mesh.triangles.size() / 3},
         {"polygons", mesh.polygon_triangles.empty() ? mesh.triangles.size() / 3
                                                     : mesh.polygon_triangles.size()},
         {"skin_joints", mesh.skin_joints.size()},
         {"attached_to", mesh.attach_joint >= 0 ? skeleton.name(mesh.attach_joint) : ""}});
    if (mesh.morph_targets.empty()) continue;
    std::vector<std::string> targets;
    for (const MorphTarget& t : mesh.morph_targets) targets.push_back(t.name);
    meshes.back()["blend_shapes"] = targets;
  }
  info["meshes"] = meshes;
  if (CountMorphTargets(scene.meshes) > 0) {
    // Per take: how many weight channels change over the take.
    nlohmann::json animated = nlohmann::json::array();
    for (const Clip& clip : scene.clips) {
      int moving = 0;
      for (int w = 0; w < clip.num_weights(); ++w) {
        for (int f = 1; f < clip.num_frames(); ++f) {
          if (clip.weights(f)[w] == clip.weights(0)[w]) continue;
          ++moving;
          break;
        }
      }
      animated.push_back(moving);
    }
    info["animated_weights"] = animated;
  }
  // How the Assimp loader (and `rigel run` scripts) are confined (docs/security.md).
  info["confinement"] = DescribeConfinement();
  return info;
}

namespace {

// Up to 6 names, then "...".
std::string Short(const std::vector<std::string>& names) {
  if (names.size() <= 6) return fmt::format("{}", fmt::join(names, " "));
  return fmt::format("{} ...", fmt::join(names.begin(), names.begin() + 6, " "));
}

void PrintHuman(const nlohmann::json& info) {
  fmt::print("file:            {}\n", info["file"].get<std::string>());
  fmt::print("joints:          {} (+{} end sites)\n", info["joints"].get<int>(),
             info["end_sites"].get<int>());
  fmt::print("channels:        {}\n", info["channels"].get<int>());
  const double ft = info["frame_time"].get<double>();
  fmt::print("frames:          {}\n", info["frames"].get<int>());
  fmt::print("frame time:      {:g} s ({:.6g} fps)\n", ft, ft > 0 ? 1.0 / ft : 0.0);
  fmt::print("duration:        {:.6g} s\n", info["duration"].get<double>());
  fmt::print("rotation orders: {}\n",
             fmt::join(info["rotation_orders"].get<std::vector<std::string>>(), " "));
  fmt::print("axes:            {}\n", info["axes"]["text"].get<std::string>());
  const nlohmann::json& body = info["body"];
  const double metres = body["height_metres"].get<double>();
  fmt::print("height:          {:.6g}{} (along {}; {})\n", info["height"].get<double>(),
             metres > 0 ? fmt::format(" = {:.3g} m", metres) : "",
             info["axes"]["up"]["axis"].get<std::string>(),
             body["humanoid"].get<bool>() ? "humanoid: " + body["evidence"].get<std::string>()
                                          : body["evidence"].get<std::string>());
  if (info["clips"].size() > 1) {
    for (const auto& clip : info["clips"]) {
      const double t = clip["frame_time"].get<double>();
      fmt::print("take:            '{}' {} frames at {:.6g} fps\n", clip["name"].get<std::string>(),
                 clip["frames"].get<int>(), t > 0 ? 1.0 / t : 0.0);
    }
  }
  const double unit = info["unit_metres"].get<double>();
  const double estimate = info["unit_estimated_metres"].get<double>();
  fmt::print("unit:            {}\n",
             unit > 0       ? fmt::format("{:g} m", unit)
             : estimate > 0 ? fmt::format("{:g} m (estimated from the body's height)", estimate)
                            : "not stated");
  std::vector<std::string> add, replace;
  for (const auto& [name, mode] : info["translation_modes"].items()) {
    (mode.get<std::string>() == "replace" ? replace : add).push_back(name);
  }
  std::vector<std::string> parts;
  if (!add.empty()) {
    parts.push_back(fmt::format("{} joint{} add to the OFFSET ({})", add.size(),
                                add.size() == 1 ? "" : "s", Short(add)));
  }
  if (!replace.empty()) {
    parts.push_back(fmt::format("{} joint{} replace the OFFSET ({})", replace.size(),
                                replace.size() == 1 ? "" : "s", Short(replace)));
  }
  if (!parts.empty()) fmt::print("translation:     {}\n", fmt::join(parts, "; "));
  for (const nlohmann::json& mesh : info["meshes"]) {
    const std::size_t skin = mesh["skin_joints"].get<std::size_t>();
    const std::string attached = mesh["attached_to"].get<std::string>();
    const std::size_t triangles = mesh["triangles"].get<std::size_t>();
    const std::size_t polygons = mesh["polygons"].get<std::size_t>();
    fmt::print("mesh:            '{}' {} vertices, {} triangles{}, {}{}\n",
               mesh["name"].get<std::string>(), mesh["vertices"].get<std::size_t>(), triangles,
               polygons != triangles ? fmt::format(" ({} polygons)", polygons) : "",
               skin > 0 ? fmt::format("skinned to {} joints", skin)
                        : (attached.empty() ? "static" : "attached to '" + attached + "'"),
               mesh["material"].get<std::string>().empty()
                   ? ""
                   : ", material '" + mesh["material"].get<std::string>() + "'");
    if (mesh.contains("blend_shapes")) {
      const auto names = mesh["blend_shapes"].get<std::vector<std::string>>();
      fmt::print("blend shapes:    {} on '{}': {}\n", names.size(), mesh["name"].get<std::string>(),
                 Short(names));
    }
  }
  if (info.contains("animated_weights")) {
    fmt::print("animated weights: {} per take\n",
               fmt::join(info["animated_weights"].get<std::vector<int>>(), ", "));
  }
  fmt::print("joint names:     {}\n",
             fmt::join(info["joint_names"].get<std::vector<std::string>>(), " "));
  fmt::print("confinement:     {}\n", info["confinement"].get<std::string>());
}

}  // namespace

Runner AddInfoCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "info",
      "Print a file's skeleton and animation: joints, channels, frames, frame time, "
      "duration, rotation orders, height.");
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("FILE", *file, "Animation file (.bvh, .fbx, .glb, .gltf, .dae)")->required();
  auto unit = std::make_shared<std::string>("file");
  sub->add_option("--unit", *unit, "Length unit of the output: file (as stored), m or cm")
      ->check(CLI::IsMember({"file", "m", "cm"}));
  sub->add_flag("--json", *json, "Print one JSON object on stdout");
  auto read = std::make_shared<ReadArgs>();
  AddReadOptions(sub, read.get());
  return [file, json, unit, read]() {
    try {
      LoadOptions options = ApplyReadArgs(*read);
      options.unit = ParseLengthUnit(*unit).value_or(LengthUnit::kFile);
      const Scene scene = LoadScene(*file, options);
      for (const std::string& w : scene.warnings) fmt::print(stderr, "rigel: warning: {}\n", w);
      const nlohmann::json info = DescribeScene(scene);
      if (*json) {
        fmt::print("{}\n", info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        PrintHuman(info);
      }
      return kExitOk;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel info: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
