// The JSON report of a batch: one entry per clip, a summary, and the merging of shard reports.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "cli/batch/batch.h"

namespace rigel::batch {

nlohmann::json ClipReportJson(const ClipReport& r) {
  nlohmann::json j = {{"input", r.input},   {"output", r.output}, {"status", r.status},
                      {"reason", r.reason}, {"frames", r.frames}, {"seconds", r.seconds}};
  j["solver"] = {{"frames", r.solver.frames},
                 {"residual_mean", r.solver.residual_mean},
                 {"residual_max", r.solver.residual_max},
                 {"iterations_mean", r.solver.iterations_mean},
                 {"iterations_max", r.solver.iterations_max},
                 {"frames_with_limit_hits", r.solver.frames_with_limit_hits},
                 {"frames_unreachable", r.solver.unreachable}};
  if (!r.extra.is_null()) j["metrics"] = r.extra;
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  if (!r.frames_report.empty()) j["frames_report"] = r.frames_report;
  if (!r.frames_evidence.is_null()) j["frames_evidence"] = r.frames_evidence;
  if (!r.take.empty()) j["take"] = r.take;
  if (!r.takes.empty()) {
    j["takes"] = nlohmann::json::array();
    for (const ClipReport& t : r.takes) j["takes"].push_back(ClipReportJson(t));
  }
  return j;
}

ClipReport ClipReportFromJson(const nlohmann::json& j) {
  ClipReport r;
  r.input = j.value("input", "");
  r.output = j.value("output", "");
  r.status = j.at("status").get<std::string>();
  r.reason = j.value("reason", "");
  if (j.contains("warnings")) r.warnings = j.at("warnings").get<std::vector<std::string>>();
  r.frames = j.value("frames", 0);
  r.seconds = j.value("seconds", 0.0);
  if (j.contains("solver")) {
    const nlohmann::json& s = j.at("solver");
    r.solver.frames = s.at("frames");
    r.solver.residual_mean = s.at("residual_mean");
    r.solver.residual_max = s.at("residual_max");
    r.solver.iterations_mean = s.at("iterations_mean");
    r.solver.iterations_max = s.at("iterations_max");
    r.solver.frames_with_limit_hits = s.at("frames_with_limit_hits");
    r.solver.unreachable = s.at("frames_unreachable");
  }
  if (j.contains("metrics")) r.extra = j.at("metrics");
  r.frames_report = j.value("frames_report", "");
  if (j.contains("frames_evidence")) r.frames_evidence = j.at("frames_evidence");
  r.take = j.value("take", "");
  if (j.contains("takes")) {
    for (const nlohmann::json& t : j.at("takes")) r.takes.push_back(ClipReportFromJson(t));
  }
  return r;
}

std::vector<ClipReport> ReportRows(const std::vector<ClipReport>& reports) {
  std::vector<ClipReport> rows;
  for (const ClipReport& r : reports) {
    if (r.takes.empty() || r.status != "ok") {
      ClipReport row = r;
      row.takes.clear();
      rows.push_back(std::move(row));
      continue;
    }
    double take_seconds = 0;
    for (const ClipReport& t : r.takes) take_seconds += t.seconds;
    for (std::size_t i = 0; i < r.takes.size(); ++i) {
      ClipReport row = r.takes[i];
      row.input = r.input;
      row.status = r.status;
      row.reason = r.reason;
      row.takes.clear();
      if (i == 0) {
        row.seconds += std::max(0.0, r.seconds - take_seconds);
        row.warnings.insert(row.warnings.begin(), r.warnings.begin(), r.warnings.end());
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

namespace {

// A clip of a report to merge must hold what Summary and the sort read, with the types
// ToJson writes; anything else is "not a rigel report" (found by tests/fuzz/report_merge_fuzzer:
// a missing "status" escaped as a json exception, "frames": 1e300 was an undefined conversion).
void CheckClipEntry(const nlohmann::json& c) {
  if (!c.is_object()) throw std::runtime_error("a clip is not an object");
  for (const char* key : {"input", "status"}) {
    const auto it = c.find(key);
    if (it == c.end() || !it->is_string()) {
      throw std::runtime_error(fmt::format("a clip has no '{}' string", key));
    }
  }
  const auto frames = c.find("frames");
  const bool frames_ok =
      frames != c.end() && (frames->is_number_unsigned()
                                ? frames->get<std::uint64_t>() <= 2147483647u
                                : frames->is_number_integer() && frames->get<std::int64_t>() >= 0 &&
                                      frames->get<std::int64_t>() <= 2147483647);
  if (!frames_ok)
    throw std::runtime_error("a clip's 'frames' is not a whole number from 0 to 2^31-1");
  const auto seconds = c.find("seconds");
  if (seconds == c.end() || !seconds->is_number() || !std::isfinite(seconds->get<double>()) ||
      seconds->get<double>() < 0) {
    throw std::runtime_error("a clip's 'seconds' is not a finite number >= 0");
  }
}

nlohmann::json Summary(const nlohmann::json& clips) {
  int ok = 0, failed = 0, skipped = 0, warnings = 0;
  long long frames = 0;
  double seconds = 0;
  for (const auto& c : clips) {
    const std::string s = c.at("status");
    ok += s == "ok";
    failed += s == "failed";
    skipped += s == "skipped";
    if (const auto w = c.find("warnings"); w != c.end() && w->is_array()) {
      warnings += static_cast<int>(w->size());
    }
    frames += c.at("frames").get<long long>();
    seconds += c.at("seconds").get<double>();
  }
  return {{"clips", clips.size()}, {"ok", ok},         {"failed", failed},
          {"skipped", skipped},    {"frames", frames}, {"clip_seconds", seconds},
          {"warnings", warnings}};
}

}  // namespace

nlohmann::json ReportJson(const std::vector<ClipReport>& reports, const RunOptions& options) {
  nlohmann::json clips = nlohmann::json::array();
  for (const ClipReport& r : ReportRows(reports)) clips.push_back(ClipReportJson(r));
  return {{"rigel_version", options.recipe.version},
          {"command", options.command},
          {"clips", clips},
          {"summary", Summary(clips)}};
}

nlohmann::json MergeReports(const std::vector<std::string>& paths) {
  nlohmann::json clips = nlohmann::json::array();
  std::string version, command;
  for (const std::string& p : paths) {
    std::ifstream in(p);
    if (!in) throw UsageError(p + ": cannot read the report");
    nlohmann::json r;
    try {
      r = nlohmann::json::parse(in);
      if (!r.at("clips").is_array()) throw std::runtime_error("'clips' is not an array");
      for (const auto& c : r.at("clips")) {
        CheckClipEntry(c);
        clips.push_back(c);
      }
      version = r.at("rigel_version");
      command = r.at("command");
    } catch (const std::exception& e) {
      throw UsageError(p + ": not a rigel report (" + e.what() + ")");
    }
  }
  // Stable: the rows of one multi-take input keep their take order.
  std::stable_sort(clips.begin(), clips.end(),
                   [](const nlohmann::json& a, const nlohmann::json& b) {
                     return a.at("input").get<std::string>() < b.at("input").get<std::string>();
                   });
  return {{"rigel_version", version},
          {"command", command},
          {"clips", clips},
          {"summary", Summary(clips)}};
}

}  // namespace rigel::batch
