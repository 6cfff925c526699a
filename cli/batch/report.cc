// The JSON report of a batch: one entry per clip, a summary, and the merging of shard reports.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <string_view>

#include "cli/batch/batch.h"
#include "exporters/atomic_file.h"

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
  j["phases_s"] = {{"read", r.phases.read},
                   {"script", r.phases.script},
                   {"write", r.phases.write},
                   {"report", r.phases.report}};
  if (!r.extra.is_null()) j["metrics"] = r.extra;
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  if (!r.frames_report.empty()) j["frames_report"] = r.frames_report;
  if (!r.frames_evidence.is_null()) j["frames_evidence"] = r.frames_evidence;
  if (!r.checks.is_null()) j["checks"] = r.checks;
  if (!r.keys.is_null()) j["keys"] = r.keys;
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
  if (const auto p = j.find("phases_s"); p != j.end() && p->is_object()) {
    r.phases.read = p->value("read", 0.0);
    r.phases.script = p->value("script", 0.0);
    r.phases.write = p->value("write", 0.0);
    r.phases.report = p->value("report", 0.0);
  }
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
  if (j.contains("checks")) r.checks = j.at("checks");
  if (j.contains("keys")) r.keys = j.at("keys");
  r.take = j.value("take", "");
  if (j.contains("takes")) {
    for (const nlohmann::json& t : j.at("takes")) r.takes.push_back(ClipReportFromJson(t));
  }
  return r;
}

std::vector<ClipReport> ReportRows(const std::vector<ClipReport>& reports) {
  std::vector<ClipReport> rows;
  for (const ClipReport& r : reports) {
    if (r.takes.empty() || !Written(r.status)) {
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
      // A take keeps its own "suspect"; otherwise the input's status and reason.
      if (row.status != "suspect") {
        row.status = r.status == "suspect" ? "ok" : r.status;
        row.reason = r.status == "suspect" ? "" : r.reason;
      }
      row.takes.clear();
      if (i == 0) {
        row.seconds += std::max(0.0, r.seconds - take_seconds);
        row.phases.read += r.phases.read;
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

// The summary of a report, accumulated clip row by clip row.
class SummaryBuilder {
 public:
  void Add(const nlohmann::json& c) {
    ++clips_;
    const std::string s = c.at("status");
    ok_ += s == "ok";
    suspect_ += s == "suspect";
    failed_ += s == "failed";
    skipped_ += s == "skipped";
    if (const auto w = c.find("warnings"); w != c.end() && w->is_array()) {
      warnings_ += static_cast<int>(w->size());
    }
    frames_ += c.at("frames").get<long long>();
    seconds_ += c.at("seconds").get<double>();
    if (const auto p = c.find("phases_s"); p != c.end() && p->is_object()) {
      for (int k = 0; k < 4; ++k) {
        const auto v = p->find(kPhases[k]);
        if (v != p->end() && v->is_number()) phases_[k] += v->get<double>();
      }
    }
  }
  nlohmann::json Result() const {
    nlohmann::json phase_sums = nlohmann::json::object();
    for (int k = 0; k < 4; ++k) phase_sums[kPhases[k]] = phases_[k];
    return {{"clips", clips_},          {"ok", ok_},
            {"suspect", suspect_},      {"failed", failed_},
            {"skipped", skipped_},      {"frames", frames_},
            {"clip_seconds", seconds_}, {"warnings", warnings_},
            {"phases_s", phase_sums}};
  }

 private:
  static constexpr const char* kPhases[4] = {"read", "script", "write", "report"};
  std::size_t clips_ = 0;
  int ok_ = 0, suspect_ = 0, failed_ = 0, skipped_ = 0, warnings_ = 0;
  long long frames_ = 0;
  double seconds_ = 0;
  double phases_[4] = {0, 0, 0, 0};
};

nlohmann::json Summary(const nlohmann::json& clips) {
  SummaryBuilder summary;
  for (const auto& c : clips) summary.Add(c);
  return summary.Result();
}

// The peak resident memory of this process and of the children it reaped (worker processes,
// import children), in MiB.
nlohmann::json PeakMemory() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return {{"coordinator", static_cast<double>(self.ru_maxrss) / 1024.0},
          {"workers", static_cast<double>(children.ru_maxrss) / 1024.0}};
}

}  // namespace

nlohmann::json ReportJson(const std::vector<ClipReport>& reports, const RunOptions& options) {
  nlohmann::json clips = nlohmann::json::array();
  for (const ClipReport& r : ReportRows(reports)) clips.push_back(ClipReportJson(r));
  nlohmann::json summary = Summary(clips);
  summary["peak_rss_mb"] = PeakMemory();
  return {{"rigel_version", options.recipe.version},
          {"command", options.command},
          {"clips", clips},
          {"summary", summary}};
}

namespace {

// The report's text, handed to `sink` piece by piece: the document without its clips (version,
// command, the command's `extra` fields, the summary) is dumped with a placeholder where the clip
// rows go; then comes the head, each row dumped on its own (with the indentation dump(2) gives an
// array element), and the tail. No text of the whole batch is ever held: the memory of a
// 10,000-clip report is that of its rows. Two passes over the rows: the summary follows them in
// the text but belongs to the document dumped before them.
void EmitReport(const std::vector<ClipReport>& reports, const RunOptions& options,
                const nlohmann::json& extra, const std::function<void(std::string_view)>& sink) {
  SummaryBuilder summary;
  for (const ClipReport& report : reports) {
    for (const ClipReport& row : ReportRows({report})) summary.Add(ClipReportJson(row));
  }
  static const std::string kPlaceholder = "\x01rigel clips\x01";
  nlohmann::json document = extra.is_object() ? extra : nlohmann::json::object();
  document["rigel_version"] = options.recipe.version;
  document["command"] = options.command;
  document["clips"] = kPlaceholder;
  nlohmann::json s = summary.Result();
  s["peak_rss_mb"] = PeakMemory();
  document["summary"] = s;
  const std::string text = document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string quoted = nlohmann::json(kPlaceholder).dump();
  const std::size_t at = text.find(quoted);
  sink(std::string_view(text).substr(0, at));
  bool first = true;
  std::string indented;
  for (const ClipReport& report : reports) {
    for (const ClipReport& row : ReportRows({report})) {
      const std::string dumped =
          ClipReportJson(row).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      indented.assign(first ? "[\n    " : ",\n    ");
      for (const char ch : dumped) {
        indented.push_back(ch);
        if (ch == '\n') indented.append("    ");
      }
      sink(indented);
      first = false;
    }
  }
  sink(first ? "[]" : "\n  ]");
  sink(std::string_view(text).substr(at + quoted.size()));
  sink("\n");
}

}  // namespace

std::string ReportText(const std::vector<ClipReport>& reports, const RunOptions& options,
                       const nlohmann::json& extra) {
  std::string text;
  EmitReport(reports, options, extra, [&text](std::string_view piece) { text += piece; });
  return text;
}

void WriteReport(const std::string& path, const std::vector<ClipReport>& reports,
                 const RunOptions& options, const nlohmann::json& extra) {
  AtomicFile file(path);
  EmitReport(reports, options, extra, [&file](std::string_view piece) { file.Write(piece); });
  file.Commit();
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
