// Preview pages: see preview_page.h.
#include "cli/preview/preview_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/batch/takes.h"
#include "cli/preview/preview_assets.h"
#include "core/channel.h"
#include "core/pose.h"
#include "core/skeleton.h"
#include "core/skeleton_utils.h"
#include "exporters/atomic_file.h"
#include "importers/bone_map.h"
#include "importers/load_scene.h"

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

namespace rigel::preview {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "pages embed little-endian typed arrays: add a byte swap for this platform");

constexpr double kDegPerRad = 57.29577951308232;

std::string Base64(const void* data, size_t size) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < size; i += 3) {
    const unsigned v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += kDigits[(v >> 6) & 63];
    out += kDigits[v & 63];
  }
  if (i < size) {
    const unsigned v = (p[i] << 16) | (i + 1 < size ? p[i + 1] << 8 : 0);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < size ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string UnitName(double metres) {
  if (!(metres > 0)) return "unknown";
  const std::pair<double, const char*> known[] = {{1.0, "m"},     {0.01, "cm"},   {0.001, "mm"},
                                                  {0.0254, "in"}, {0.3048, "ft"}, {0.1, "dm"}};
  for (const auto& [m, name] : known) {
    if (std::abs(metres - m) <= 1e-9 * m) return name;
  }
  return fmt::format("{:g} m", metres);
}

// JSON that can sit inside a <script> element: "</" never appears.
std::string ScriptSafeJson(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The take of that name, else the scene's first clip.
const Clip& PickTake(const Scene& scene, const std::string& take) {
  const Clip* picked = &scene.clips.front();
  for (const Clip& c : scene.clips) {
    if (!take.empty() && c.name() == take) {
      picked = &c;
      break;
    }
  }
  return *picked;
}

// A clip sampled per frame: joint and end-site world positions, channel values (rotations in
// degrees), and the joints' bounds on the first frame.
struct ClipSamples {
  std::vector<double> positions;
  std::vector<float> ends;
  std::vector<float> channels;
  Eigen::AlignedBox3d first_box;
};

ClipSamples SampleClip(const Skeleton& sk, const Clip& clip) {
  const int nj = sk.num_joints();
  const int ne = static_cast<int>(sk.end_sites().size());
  const int nc = sk.num_channels();
  const int nf = clip.num_frames();
  ClipSamples s;
  s.positions.resize(static_cast<size_t>(nf) * nj * 3);
  s.ends.resize(static_cast<size_t>(nf) * ne * 3);
  s.channels.resize(static_cast<size_t>(nf) * nc);
  Pose pose(sk);
  for (int f = 0; f < nf; ++f) {
    pose.SetFromRow(sk, clip.frame(f));
    if (f == 0) s.first_box = JointBounds(pose.world);
    for (int j = 0; j < nj; ++j) {
      const Eigen::Vector3d p = pose.world[j].translation();
      for (int a = 0; a < 3; ++a) s.positions[(static_cast<size_t>(f) * nj + j) * 3 + a] = p[a];
    }
    for (int e = 0; e < ne; ++e) {
      const Eigen::Vector3d p = EndSitePosition(sk, pose.world, e);
      for (int a = 0; a < 3; ++a)
        s.ends[(static_cast<size_t>(f) * ne + e) * 3 + a] = static_cast<float>(p[a]);
    }
    const std::span<const double> row = clip.frame(f);
    for (int c = 0; c < nc; ++c) {
      const double v = IsRotation(sk.channels()[c]) ? row[c] * kDegPerRad : row[c];
      s.channels[static_cast<size_t>(f) * nc + c] = static_cast<float>(v);
    }
  }
  return s;
}

// A joint whose world position equals, bit for bit and on every frame, that of an earlier joint
// (zero-length bones) is stored once: *alias names that joint (-1: stored). Returns the stored
// joints' positions, frame by frame.
std::vector<double> PackPositions(const Skeleton& sk, int nf, const std::vector<double>& positions,
                                  std::vector<int>& alias) {
  const int nj = sk.num_joints();
  const size_t stride = static_cast<size_t>(nj) * 3;
  alias.assign(nj, -1);
  std::vector<int> stored_joints;
  for (int j = 0; j < nj; ++j) {
    for (int k = sk.parent(j); k >= 0 && alias[j] < 0; k = sk.parent(k)) {
      bool same = true;
      for (int f = 0; f < nf && same; ++f) {
        same = std::memcmp(&positions[f * stride + 3 * j], &positions[f * stride + 3 * k],
                           3 * sizeof(double)) == 0;
      }
      if (same) alias[j] = alias[k] >= 0 ? alias[k] : k;
    }
    if (alias[j] < 0) stored_joints.push_back(j);
  }
  std::vector<double> packed;
  packed.reserve(static_cast<size_t>(nf) * stored_joints.size() * 3);
  for (int f = 0; f < nf; ++f) {
    for (int j : stored_joints) {
      for (int a = 0; a < 3; ++a) packed.push_back(positions[f * stride + 3 * j + a]);
    }
  }
  return packed;
}

// A channel constant over the clip is stored once (*constant, else null there); the others'
// values, frame by frame, are returned.
std::vector<float> PackChannels(int nc, int nf, const std::vector<float>& channels,
                                json& constant) {
  std::vector<float> animated;
  std::vector<int> animated_channels;
  for (int c = 0; c < nc; ++c) {
    bool same = true;
    for (int f = 1; f < nf && same; ++f) same = channels[f * nc + c] == channels[c];
    if (same && nf > 0) {
      constant.push_back(channels[c]);
    } else {
      constant.push_back(nullptr);
      animated_channels.push_back(c);
    }
  }
  for (int f = 0; f < nf; ++f) {
    for (int c : animated_channels) animated.push_back(channels[static_cast<size_t>(f) * nc + c]);
  }
  return animated;
}

// One clip as the page draws it.
json ClipJson(const std::string& path, const std::string& role, const std::string& take) {
  const Scene scene = LoadScene(path);
  if (scene.clips.empty()) throw std::runtime_error(path + ": no animation");
  const Skeleton& sk = *scene.skeleton;
  const Clip& clip = PickTake(scene, take);
  const int nc = sk.num_channels();
  const int nf = clip.num_frames();

  const ClipSamples samples = SampleClip(sk, clip);
  const Eigen::AlignedBox3d& first_box = samples.first_box;
  const int up = first_box.isEmpty() ? 1 : GuessUpAxis(first_box);
  // Size: zero-length bones and constant channels are stored once.
  std::vector<int> alias;
  const std::vector<double> packed = PackPositions(sk, nf, samples.positions, alias);
  json constant = json::array();
  const std::vector<float> animated = PackChannels(nc, nf, samples.channels, constant);
  json j;
  j["name"] = fs::path(path).filename().string();
  j["path"] = path;
  j["role"] = role;
  j["joints"] = std::vector<std::string>(sk.names().begin(), sk.names().end());
  j["parents"] = std::vector<int>(sk.parents().begin(), sk.parents().end());
  std::vector<int> end_parents;
  for (const EndSite& e : sk.end_sites()) end_parents.push_back(e.parent);
  j["end_parents"] = end_parents;
  std::vector<std::string> channel_names;
  std::vector<int> channel_joints;
  for (int c = 0; c < nc; ++c) {
    channel_names.emplace_back(ChannelName(sk.channels()[c]));
    channel_joints.push_back(sk.channel_joint(c));
  }
  j["channel_names"] = channel_names;
  j["channel_joints"] = channel_joints;
  j["frames"] = nf;
  j["frame_time"] = clip.frame_time();
  j["clip_name"] = clip.name();
  const double unit_metres =
      scene.file_unit_metres > 0 ? scene.file_unit_metres / scene.length_scale : 0.0;
  j["unit"] = UnitName(unit_metres);
  j["unit_metres"] = unit_metres;
  j["up"] = up;
  j["height"] = first_box.isEmpty() ? 1.0 : std::max(first_box.sizes()[up], 1e-9);
  j["warnings"] = scene.warnings;
  j["position_alias"] = alias;
  j["positions"] = Base64(packed.data(), packed.size() * sizeof(double));
  j["end_positions"] = Base64(samples.ends.data(), samples.ends.size() * sizeof(float));
  j["channel_constant"] = constant;
  j["channel_values"] = Base64(animated.data(), animated.size() * sizeof(float));
  return j;
}

double Number(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nan("");
  return it->get<double>();
}

json NumberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A frames report turned into column arrays for the plots, and its counts for the index.
struct Report {
  json header;
  json columns;
};

// The report's lines: the header into report.header, the records returned.
std::vector<json> ReadReportLines(const std::string& path, Report& report) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the frames report");
  std::string line;
  int line_no = 0;
  std::vector<json> records;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json value = json::parse(line, nullptr, false);
    if (value.is_discarded() || !value.is_object()) {
      throw std::runtime_error(
          fmt::format("{}:{}: expected one JSON object per line", path, line_no));
    }
    if (report.header.is_null()) {
      if (!value.contains("rigel_frames_report")) {
        throw std::runtime_error(fmt::format(
            "{}:{}: expected the header {{\"rigel_frames_report\": 1, ...}}", path, line_no));
      }
      report.header = std::move(value);
      continue;
    }
    records.push_back(std::move(value));
  }
  if (report.header.is_null()) throw std::runtime_error(path + ": empty frames report");
  return records;
}

// The effectors the header and the records name, in order of first appearance, with their index.
std::vector<std::string> CollectEffectors(const json& header, const std::vector<json>& records,
                                          std::map<std::string, int>& effector_index) {
  std::vector<std::string> effectors;
  auto add_effector = [&](const std::string& name) {
    if (effector_index.emplace(name, static_cast<int>(effectors.size())).second)
      effectors.push_back(name);
  };
  if (header.contains("effectors") && header["effectors"].is_array()) {
    for (const json& e : header["effectors"]) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
      add_effector(e["name"].get<std::string>());
    }
  }
  for (const json& r : records) {
    if (r.contains("effectors") && r["effectors"].is_array()) {
      for (const json& e : r["effectors"]) {
        if (e.is_object() && e.contains("name") && e["name"].is_string())
          add_effector(e["name"].get<std::string>());
      }
    }
  }
  return effectors;
}

// Each effector's joint as the header states it ("" when it does not).
json EffectorJoints(const json& header, const std::vector<std::string>& effectors) {
  json effector_joints = json::array();
  for (const std::string& name : effectors) {
    std::string joint;
    if (header.contains("effectors") && header["effectors"].is_array()) {
      for (const json& e : header["effectors"]) {
        if (e.is_object() && e.value("name", "") == name) joint = e.value("joint", "");
      }
    }
    effector_joints.push_back(joint);
  }
  return effector_joints;
}

// The plots' columns, one value (or null) per frame.
struct FrameColumns {
  FrameColumns(size_t n, size_t ne)
      : null_column(std::vector<json>(n, nullptr)),
        status(null_column),
        iterations(null_column),
        swivel(null_column),
        slide(null_column),
        pop(null_column),
        residual(ne, null_column),
        angle(ne, null_column),
        targets(ne, json(std::vector<json>(3 * n, nullptr))) {}
  const json null_column;
  json status, iterations, swivel, slide, pop;
  std::vector<json> residual, angle;
  std::vector<json> targets;
  json limits = json::object();
  double worst = -1;
};

// A record's solve status, counted into the summary.
void AddStatus(const json& r, int f, FrameColumns& c, PageSummary& summary) {
  const std::string s = r.contains("status") && r["status"].is_string()
                            ? r["status"].get<std::string>()
                            : std::string();
  if (!s.empty()) {
    const int code = s == "converged"       ? 0
                     : s == "not_converged" ? 1
                     : s == "unreachable"   ? 2
                     : s == "invalid"       ? 3
                                            : -1;
    if (code >= 0) c.status[f] = code;
    if (code == 2 || code == 3) ++summary.unreachable;
    if (code == 1) ++summary.not_converged;
  }
}

// A record's effectors: residuals, angle errors and targets; the worst residual is the summary's.
void AddEffectors(const json& r, int f, std::map<std::string, int>& effector_index, FrameColumns& c,
                  PageSummary& summary) {
  if (r.contains("effectors") && r["effectors"].is_array()) {
    for (const json& e : r["effectors"]) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
      const int k = effector_index[e["name"].get<std::string>()];
      const double err = Number(e, "position_error");
      c.residual[k][f] = NumberOrNull(err);
      c.angle[k][f] = NumberOrNull(Number(e, "angle_error"));
      if (std::isfinite(err) && err > c.worst) {
        c.worst = err;
        summary.worst_frame = f;
        summary.worst_residual = err;
      }
      if (e.contains("target") && e["target"].is_array() && e["target"].size() == 3) {
        for (int a = 0; a < 3; ++a) {
          const json& v = e["target"][a];
          if (v.is_number()) c.targets[k][3 * f + a] = v.get<double>();
        }
      }
    }
  }
}

// One record (frame f) into the columns and the summary's counts.
void AddRecord(const json& r, int f, std::map<std::string, int>& effector_index, FrameColumns& c,
               PageSummary& summary) {
  AddStatus(r, f, c, summary);
  c.iterations[f] = NumberOrNull(Number(r, "iterations"));
  const double sw = Number(r, "swivel_jump");
  c.swivel[f] = NumberOrNull(sw);
  if (std::abs(sw) >= kFlipDegrees) ++summary.flips;
  const double fs_ = Number(r, "foot_slide");
  c.slide[f] = NumberOrNull(fs_);
  if (std::isfinite(fs_)) {
    summary.foot_slide_max = std::max(summary.foot_slide_max, fs_);
    summary.foot_slide_sum += fs_;
  }
  const double p = Number(r, "pop");
  c.pop[f] = NumberOrNull(p);
  if (p >= kPopScore) ++summary.pops;
  if (r.contains("limits") && r["limits"].is_array() && !r["limits"].empty()) {
    json names = json::array();
    for (const json& l : r["limits"])
      if (l.is_string()) names.push_back(l);
    c.limits[std::to_string(f)] = names;
    ++summary.limit_frames;
  }
  AddEffectors(r, f, effector_index, c, summary);
}

Report ReadFramesReport(const std::string& path, PageSummary& summary) {
  Report report;
  const std::vector<json> records = ReadReportLines(path, report);
  int frames = report.header.value("frames", 0);
  for (const json& r : records) frames = std::max(frames, r.value("frame", -1) + 1);
  std::map<std::string, int> effector_index;
  const std::vector<std::string> effectors =
      CollectEffectors(report.header, records, effector_index);
  json effector_joints = EffectorJoints(report.header, effectors);
  const size_t n = static_cast<size_t>(frames);
  const size_t ne = effectors.size();
  FrameColumns columns(n, ne);
  for (const json& r : records) {
    const int f = r.value("frame", -1);
    if (f < 0 || f >= frames) continue;
    AddRecord(r, f, effector_index, columns, summary);
  }
  summary.has_report = true;
  summary.frames = std::max(summary.frames, frames);
  json& c = report.columns;
  c["name"] = report.header.value("clip", fs::path(path).stem().string());
  c["path"] = path;
  c["frames"] = frames;
  c["effectors"] = effectors;
  c["effector_joints"] = effector_joints;
  c["status"] = std::move(columns.status);
  c["iterations"] = std::move(columns.iterations);
  c["residual"] = columns.residual;
  c["angle_error"] = columns.angle;
  c["targets"] = columns.targets;
  c["limits"] = std::move(columns.limits);
  c["swivel_jump"] = std::move(columns.swivel);
  c["foot_slide"] = std::move(columns.slide);
  c["pop"] = std::move(columns.pop);
  c["unit"] = report.header.value("unit", "unknown");
  return report;
}

bool SamePath(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
}

// Substitutes {{NAME}} placeholders of the template (never inside the substituted text).
std::string FillTemplate(std::string_view tmpl, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) break;
    const size_t close = tmpl.find("}}", open);
    if (close == std::string_view::npos) break;
    const std::string key(tmpl.substr(open + 2, close - open - 2));
    auto it = values.find(key);
    if (it == values.end()) {
      out.append(tmpl.substr(pos, close + 2 - pos));
    } else {
      out.append(tmpl.substr(pos, open - pos));
      out += it->second;
    }
    pos = close + 2;
  }
  out.append(tmpl.substr(pos));
  return out;
}

// The bundle inside a <script> element: esbuild escapes "</script" in string literals; this
// covers anything else.
std::string ScriptSafe(std::string_view code) {
  std::string out(code);
  for (size_t at = out.find("</script"); at != std::string::npos; at = out.find("</script", at))
    out.replace(at, 2, "<\\/");
  return out;
}

}  // namespace

bool PreviewAvailable() { return AssetsEmbedded(); }

std::string LibraryVersions() { return std::string(AssetVersions()); }

PageSummary WritePreviewPage(const PageInput& input, const std::string& out_path) {
  if (!PreviewAvailable()) {
    throw std::runtime_error(
        "this rigel was built without the page libraries: run 'npm ci' in cli/preview "
        "(.ci/install-deps does) and rebuild");
  }
  PageSummary summary;
  json clips = json::array();
  std::vector<std::string> paths;
  if (!input.source.empty()) {
    clips.push_back(ClipJson(input.source, "source", input.take));
    paths.push_back(input.source);
  }
  for (const std::string& r : input.results) {
    clips.push_back(ClipJson(r, "result", input.take));
    paths.push_back(r);
  }
  if (clips.empty()) throw std::runtime_error("nothing to preview: no source and no result");
  for (const json& c : clips) summary.frames = std::max(summary.frames, c["frames"].get<int>());
  json reports = json::array();
  const size_t first_result = input.source.empty() ? 0 : 1;
  for (size_t k = 0; k < input.frames_reports.size(); ++k) {
    Report report = ReadFramesReport(input.frames_reports[k], summary);
    // Which clip the records describe: the one its header names as output, else by position.
    int clip = -1;
    const std::string output = report.header.value("output", "");
    for (size_t c = 0; c < paths.size() && clip < 0; ++c) {
      if (SamePath(output, paths[c])) clip = static_cast<int>(c);
    }
    if (clip < 0 && first_result + k < paths.size()) clip = static_cast<int>(first_result + k);
    if (clip < 0) clip = 0;
    report.columns["clip"] = clip;
    reports.push_back(std::move(report.columns));
  }
  const std::string title =
      !input.title.empty() ? input.title : clips[0]["name"].get<std::string>();
  json data;
  data["title"] = title;
  data["rigel_version"] = RIGEL_VERSION;
  data["libraries"] = LibraryVersions();
  data["clips"] = std::move(clips);
  data["reports"] = std::move(reports);
  data["flip_degrees"] = kFlipDegrees;
  data["pop_score"] = kPopScore;
  const std::string page = FillTemplate(
      PageTemplate(), {{"TITLE", EscapeMarkup(title)},
                       {"VERSIONS", EscapeMarkup(fmt::format("rigel {}; inlined libraries: {}",
                                                             RIGEL_VERSION, LibraryVersions()))},
                       {"STYLE", std::string(PageStyle())},
                       {"DATA", ScriptSafeJson(data)},
                       {"SCRIPT", ScriptSafe(PageScript())}});
  WriteFileAtomically(out_path, page);
  summary.bytes = page.size();
  summary.page = out_path;
  summary.status = "ok";
  return summary;
}

void WritePreviewIndex(const std::string& dir, std::vector<PageSummary> pages,
                       const std::string& title) {
  auto rank = [](const PageSummary& p) {
    return p.status == "failed" ? 0 : p.status == "suspect" ? 1 : 2;
  };
  std::stable_sort(pages.begin(), pages.end(), [&](const PageSummary& a, const PageSummary& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.unreachable != b.unreachable) return a.unreachable > b.unreachable;
    if (a.worst_residual != b.worst_residual) return a.worst_residual > b.worst_residual;
    if (a.flips + a.pops != b.flips + b.pops) return a.flips + a.pops > b.flips + b.pops;
    if (a.foot_slide_max != b.foot_slide_max) return a.foot_slide_max > b.foot_slide_max;
    return a.name < b.name;
  });
  std::string rows;
  for (const PageSummary& p : pages) {
    const std::string link =
        p.page.empty()
            ? EscapeMarkup(p.name)
            : fmt::format("<a href=\"{}\">{}</a>", EscapeMarkup(p.page), EscapeMarkup(p.name));
    auto count = [&](int v) { return p.has_report ? std::to_string(v) : std::string("–"); };
    rows += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        p.status, link,
        EscapeMarkup(p.status == "failed" || p.status == "suspect" ? p.status + ": " + p.reason
                                                                   : p.status),
        p.frames, p.worst_frame >= 0 ? std::to_string(p.worst_frame) : "–",
        p.has_report && p.worst_frame >= 0 ? fmt::format("{:.4g}", p.worst_residual) : "–",
        count(p.unreachable), count(p.not_converged), count(p.limit_frames), count(p.flips),
        count(p.pops), p.has_report ? fmt::format("{:.4g}", p.foot_slide_max) : "–",
        p.bytes ? fmt::format("{:.1f} MB", static_cast<double>(p.bytes) / 1e6) : "–");
  }
  const std::string html = fmt::format(
      R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<!-- rigel {1} preview index -->
<style>
body{{font:14px system-ui,sans-serif;margin:16px;background:#15171c;color:#dde}}
table{{border-collapse:collapse}}th,td{{padding:3px 10px;border-bottom:1px solid #333;text-align:right}}
td:first-child,th:first-child,td:nth-child(2){{text-align:left}}a{{color:#7ab8ff}}
tr.failed td{{color:#ff7a7a}}tr.suspect td{{color:#ffc46b}}th{{position:sticky;top:0;background:#15171c}}
</style></head><body>
<h1>{0}</h1>
<p>{2} clips, sorted by worst frame: failed clips first, then suspect ones (a plausibility check
broke: docs/checks.md), then unreachable frames, then the largest effector residual. Flip: swivel jump &ge; {3} deg; pop: pop score &ge; {4}. Counts come from each
clip's frames report (&ndash; when it has none).</p>
<table id="clips"><thead><tr><th>clip</th><th>status</th><th>frames</th><th>worst frame</th>
<th>worst residual</th><th>unreachable</th><th>not converged</th><th>limit frames</th>
<th>flips</th><th>pops</th><th>max foot slide</th><th>page size</th></tr></thead>
<tbody>
{5}</tbody></table></body></html>
)",
      EscapeMarkup(title), RIGEL_VERSION, pages.size(), kFlipDegrees, kPopScore, rows);
  fs::create_directories(dir);
  WriteFileAtomically((fs::path(dir) / "index.html").string(), html);
}

std::string FramesReportPathFor(const std::string& output) {
  return fs::path(output).replace_extension(".frames.jsonl").string();
}

namespace {

// The report's rows, each handed to the function given (twice: WritePreviewRows reads them twice).
using ForEachRow = std::function<void(const std::function<void(const batch::ClipReport&)>&)>;

int WritePreviewRows(const std::string& dir, const ForEachRow& for_each_row,
                     const std::string& command) {
  std::vector<PageSummary> pages;
  int failures = 0;
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Rows of takes that share an output (only those are looked up).
  std::map<std::string, int> rows_per_output;
  for_each_row([&](const batch::ClipReport& r) {
    if (!r.take.empty()) ++rows_per_output[r.output];
  });
  for_each_row([&](const batch::ClipReport& r) {
    PageSummary s;
    s.name = fs::path(r.output.empty() ? r.input : r.output).stem().string();
    // The takes of one multi-take output (glTF, FBX) share its file: a page each, named after
    // the take.
    if (!r.take.empty() && rows_per_output[r.output] > 1) {
      s.name += "." + batch::FileSafeTakeNames({r.take}).front();
    }
    s.status = r.status;
    s.reason = r.reason;
    s.frames = r.frames;
    if (r.status != "failed") {
      try {
        PageInput in;
        in.source = r.input;
        in.results = {r.output};
        in.title = s.name;
        in.take = r.take;
        const std::string report =
            r.frames_report.empty() ? FramesReportPathFor(r.output) : r.frames_report;
        if (fs::is_regular_file(report)) in.frames_reports = {report};
        const std::string name = s.name + ".html";
        PageSummary written = WritePreviewPage(in, (fs::path(dir) / name).string());
        written.name = s.name;
        written.status = r.status;
        written.reason = r.reason;
        written.page = name;
        s = written;
      } catch (const std::exception& e) {
        ++failures;
        fmt::print(stderr, "rigel {}: preview: {}: {}\n", command, r.input, e.what());
        s.status = "failed";
        s.reason = std::string("preview: ") + e.what();
      }
    }
    pages.push_back(std::move(s));
  });
  try {
    WritePreviewIndex(dir, std::move(pages), "rigel " + command + " preview");
  } catch (const std::exception& e) {
    ++failures;
    fmt::print(stderr, "rigel {}: preview: {}\n", command, e.what());
  }
  return failures;
}

}  // namespace

int WritePreviewPages(const std::string& dir, const std::vector<batch::ClipReport>& reports,
                      const std::string& command) {
  const std::vector<batch::ClipReport> rows = batch::ReportRows(reports);
  return WritePreviewRows(
      dir,
      [&rows](const std::function<void(const batch::ClipReport&)>& fn) {
        for (const batch::ClipReport& r : rows) fn(r);
      },
      command);
}

int WritePreviewPages(const std::string& dir, const batch::ReportSpill& spill,
                      const std::string& command) {
  return WritePreviewRows(
      dir,
      [&spill](const std::function<void(const batch::ClipReport&)>& fn) {
        spill.ForEachRow(fn, /*failed_only=*/false);
      },
      command);
}

}  // namespace rigel::preview
