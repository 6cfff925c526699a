#include "exporters/frames_report.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/channel.h"
#include "exporters/atomic_file.h"

namespace rigel {

namespace {

using nlohmann::json;

constexpr double kDegPerRad = 180.0 / 3.14159265358979323846;

// A number for JSON: non-finite values (never expected) become null rather than invalid JSON.
json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Per clip frame: the index of its record in in.records->frames, or -1.
std::vector<int> RecordOfFrame(const FramesReportInput& in, int frames) {
  std::vector<int> index(frames, -1);
  if (in.records == nullptr) return index;
  for (size_t i = 0; i < in.records->frames.size(); ++i) {
    const int f = in.records->frames[i].frame;
    if (f >= 0 && f < frames) index[f] = static_cast<int>(i);
  }
  return index;
}

std::string EffectorName(const ik::BakeRecords& r, int task) {
  return task >= 0 && task < static_cast<int>(r.effector_names.size())
             ? r.effector_names[task]
             : "task " + std::to_string(task);
}

}  // namespace

std::string FormatFramesReport(const FramesReportInput& in) {
  const Skeleton& s = *in.skeleton;
  const int frames = in.clip->num_frames();
  json header = {{"rigel_frames_report", 1}, {"clip", in.clip_name},
                 {"source", in.source},      {"output", in.output},
                 {"unit", in.unit},          {"frame_time", Number(in.clip->frame_time())},
                 {"frames", frames}};
  json effectors = json::array();
  if (in.records != nullptr) {
    for (size_t t = 0; t < in.records->effector_names.size(); ++t) {
      const int j = t < in.records->effector_joints.size() ? in.records->effector_joints[t] : -1;
      effectors.push_back({{"name", in.records->effector_names[t]},
                           {"joint", j >= 0 && j < s.num_joints() ? s.name(j) : ""}});
    }
  }
  header["effectors"] = effectors;
  std::string text = header.dump() + "\n";
  const std::vector<int> record_of = RecordOfFrame(in, frames);
  for (int f = 0; f < frames; ++f) {
    json line = {{"frame", f}};
    if (record_of[f] >= 0) {
      const ik::FrameRecord& r = in.records->frames[record_of[f]];
      line["status"] = ik::StatusName(r.status);
      line["iterations"] = r.iterations;
      json es = json::array();
      for (const ik::EffectorResidual& e : r.effectors) {
        es.push_back({{"name", EffectorName(*in.records, e.task)},
                      {"position_error", Number(e.position_error)},
                      {"angle_error", Number(e.angle_error)},
                      {"target", e.active ? json::array({Number(e.target.x()), Number(e.target.y()),
                                                         Number(e.target.z())})
                                          : json(nullptr)}});
      }
      line["effectors"] = es;
      json limits = json::array();
      for (const int c : r.channels_on_limit) {
        if (c < 0 || c >= s.num_channels()) continue;
        limits.push_back(s.name(s.channel_joint(c)) + "." +
                         std::string(ChannelName(s.channels()[c])));
      }
      line["limits"] = limits;
      if (!r.limbs.empty()) line["swivel_jump"] = Number(r.SwivelJumpDegrees());
    }
    if (in.evidence != nullptr) {
      if (f < static_cast<int>(in.evidence->foot_slide.size()) && in.evidence->foot_slide[f] >= 0) {
        line["foot_slide"] = Number(in.evidence->foot_slide[f]);
      }
      if (f < static_cast<int>(in.evidence->pop.size())) line["pop"] = Number(in.evidence->pop[f]);
    }
    text += line.dump();
    text += '\n';
  }
  return text;
}

void WriteFramesReport(const FramesReportInput& in, const std::string& path) {
  AtomicFile file(path);
  file.Write(FormatFramesReport(in));
  file.Commit();
}

FramesCounts CountFrames(const FramesReportInput& in) {
  FramesCounts c;
  const int frames = in.clip->num_frames();
  // (badness class, score) per frame: unreachable frames first, then pops, then residual.
  std::vector<std::tuple<int, double, int>> ranked;
  const std::vector<int> record_of = RecordOfFrame(in, frames);
  for (int f = 0; f < frames; ++f) {
    double residual = 0.0, pop = 0.0;
    bool unreachable = false;
    if (record_of[f] >= 0) {
      const ik::FrameRecord& r = in.records->frames[record_of[f]];
      unreachable = r.status == ik::Status::kUnreachable;
      c.unreachable += unreachable;
      c.not_converged += r.status == ik::Status::kNotConverged;
      c.limit_frames += !r.channels_on_limit.empty();
      c.flips += r.SwivelJumpDegrees() >= kFlipDegrees;
      for (const ik::EffectorResidual& e : r.effectors) {
        if (e.active) residual = std::max(residual, e.position_error);
      }
    }
    if (in.evidence != nullptr) {
      if (f < static_cast<int>(in.evidence->pop.size())) pop = in.evidence->pop[f];
      c.pops += pop >= 1.0;
      if (f < static_cast<int>(in.evidence->foot_slide.size())) {
        c.foot_slide_max = std::max(c.foot_slide_max, in.evidence->foot_slide[f]);
      }
    }
    const int cls = unreachable ? 2 : pop >= 1.0 ? 1 : 0;
    const double score = cls == 1 ? pop : residual;
    if (cls > 0 || residual > 0) ranked.emplace_back(cls, score, f);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
    if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) > std::get<1>(b);
    return std::get<2>(a) < std::get<2>(b);
  });
  for (size_t i = 0; i < ranked.size() && i < 5; ++i)
    c.worst_frames.push_back(std::get<2>(ranked[i]));
  return c;
}

}  // namespace rigel
