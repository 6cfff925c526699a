#include "exporters/bvh_writer.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <span>

#include "core/euler.h"
#include "exporters/export_check.h"

namespace rigel {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

// Appends `v` with 15 significant digits, shortest form ("0", "12.5", "1.87e-05").
void AppendNumber(std::string* out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 15);
  out->append(buf, r.ptr);
}

void CheckExportable(const Skeleton& skeleton, const Clip& clip, const std::string& target) {
  CheckClipsForExport(skeleton, std::span<const Clip>(&clip, 1), target);
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (!skeleton.rest_orientation(j).isApprox(Eigen::Quaterniond::Identity(), 1e-12)) {
      throw ExportError(fmt::format(
          "{}: joint '{}' has a rest orientation, which BVH cannot store (bake it into the "
          "rotation channels first)",
          target, skeleton.name(j)));
    }
  }
}

// Streams the BVH text to `flush(std::string&)` in blocks of about kFlushBytes.
template <typename Flush>
void Emit(const Skeleton& skeleton, const Clip& clip, Flush&& flush) {
  std::string out;
  out.reserve(kFlushBytes + 4096);
  auto indent = [&out](int depth) { out.append(static_cast<size_t>(depth), '\t'); };
  auto offset = [&out](const Eigen::Vector3d& v) {
    out += "OFFSET";
    for (int k = 0; k < 3; ++k) {
      out += ' ';
      AppendNumber(&out, v[k]);
    }
    out += '\n';
  };
  out += "HIERARCHY\n";
  // Depth of each joint (parents come first).
  std::vector<int> depth(skeleton.num_joints(), 0);
  const std::span<const EndSite> end_sites = skeleton.end_sites();
  std::vector<std::vector<int>> end_sites_of(skeleton.num_joints());
  for (size_t e = 0; e < end_sites.size(); ++e) {
    end_sites_of[end_sites[e].parent].push_back(static_cast<int>(e));
  }
  auto close_joint = [&](int j) {
    // End Sites of j (after its child joints), then its closing brace.
    for (const int e : end_sites_of[j]) {
      indent(depth[j] + 1);
      out += "End Site\n";
      indent(depth[j] + 1);
      out += "{\n";
      indent(depth[j] + 2);
      offset(end_sites[e].offset);
      indent(depth[j] + 1);
      out += "}\n";
    }
    indent(depth[j]);
    out += "}\n";
  };
  std::vector<int> open;  // stack of joints whose brace is open
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const int p = skeleton.parent(j);
    while (!open.empty() && open.back() != p) {
      close_joint(open.back());
      open.pop_back();
    }
    depth[j] = p < 0 ? 0 : depth[p] + 1;
    indent(depth[j]);
    out += p < 0 ? "ROOT " : "JOINT ";
    out += skeleton.name(j);
    out += '\n';
    indent(depth[j]);
    out += "{\n";
    indent(depth[j] + 1);
    offset(skeleton.rest_translation(j));
    indent(depth[j] + 1);
    out += "CHANNELS ";
    out += std::to_string(skeleton.channel_count(j));
    for (const ChannelType c : skeleton.joint_channels(j)) {
      out += ' ';
      out += ChannelName(c);
    }
    out += '\n';
    open.push_back(j);
  }
  while (!open.empty()) {
    close_joint(open.back());
    open.pop_back();
  }
  out += "MOTION\nFrames: ";
  out += std::to_string(clip.num_frames());
  out += "\nFrame Time: ";
  AppendNumber(&out, clip.frame_time());
  out += '\n';
  const int channels = clip.num_channels();
  std::vector<double> scale(channels);
  for (int c = 0; c < channels; ++c) {
    scale[c] = IsRotation(skeleton.channels()[c]) ? kDegPerRad : 1.0;
  }
  for (int f = 0; f < clip.num_frames(); ++f) {
    const std::span<const double> row = clip.frame(f);
    for (int c = 0; c < channels; ++c) {
      if (c) out += ' ';
      AppendNumber(&out, row[c] * scale[c]);
    }
    out += '\n';
    if (out.size() >= kFlushBytes) {
      flush(out);
      out.clear();
    }
  }
  flush(out);
}

}  // namespace

std::string FormatBvh(const Skeleton& skeleton, const Clip& clip) {
  CheckExportable(skeleton, clip, "BVH");
  std::string text;
  Emit(skeleton, clip, [&text](const std::string& block) { text += block; });
  return text;
}

void WriteBvh(const Skeleton& skeleton, const Clip& clip, const std::string& path) {
  CheckExportable(skeleton, clip, path);
  AtomicFile file(path);
  Emit(skeleton, clip, [&file](const std::string& block) { file.Write(block); });
  file.Commit();
}

}  // namespace rigel
