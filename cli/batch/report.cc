// The JSON report of a batch: one entry per clip, a summary, and the merging of shard reports.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
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

}  // namespace

// The figures the summary sums of one row.
struct RowFigures {
  std::string status;
  int warnings = 0;
  long long frames = 0;
  double seconds = 0;
  double phases[4] = {0, 0, 0, 0};  // read, script, write, report
};

// The summary of a report, accumulated clip row by clip row.
class SummaryBuilder {
 public:
  void Add(const nlohmann::json& c) {
    RowFigures f;
    f.status = c.at("status");
    if (const auto w = c.find("warnings"); w != c.end() && w->is_array()) {
      f.warnings = static_cast<int>(w->size());
    }
    f.frames = c.at("frames").get<long long>();
    f.seconds = c.at("seconds").get<double>();
    if (const auto p = c.find("phases_s"); p != c.end() && p->is_object()) {
      for (int k = 0; k < 4; ++k) {
        const auto v = p->find(kPhases[k]);
        if (v != p->end() && v->is_number()) f.phases[k] = v->get<double>();
      }
    }
    Add(f);
  }
  void Add(const RowFigures& f) {
    ++clips_;
    ok_ += f.status == "ok";
    suspect_ += f.status == "suspect";
    failed_ += f.status == "failed";
    skipped_ += f.status == "skipped";
    warnings_ += f.warnings;
    frames_ += f.frames;
    seconds_ += f.seconds;
    for (int k = 0; k < 4; ++k) phases_[k] += f.phases[k];
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

namespace {

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

// The rows summed so far, in input order, and those that finished before the next to sum.
struct SummaryState {
  SummaryBuilder builder;
  std::size_t next = 0;                                    // the first input not summed yet
  std::map<std::size_t, std::vector<RowFigures>> waiting;  // finished before `next`
};

namespace {

int OpenUnnamedTemporary() {
  std::vector<std::string> folders;
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') {
    folders.push_back(tmp);
  }
  folders.push_back("/tmp");
  int error = 0;
  for (const std::string& folder : folders) {
    int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC | O_EXCL, 0600);
    if (fd >= 0) return fd;
    error = errno;
    // No O_TMPFILE on this file system: a named file, unlinked at once.
    std::string name = folder + "/.rigel-report.XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) {
      ::unlink(name.c_str());
      return fd;
    }
  }
  throw std::runtime_error(fmt::format("cannot create the report's temporary file in {}: {}",
                                       folders.front(), std::strerror(error)));
}

// The text of a row in the report: its JSON dumped with indent 2, indented as an element of the
// clips array (dump(2) of the whole document).
void AppendRowText(const ClipReport& row, std::string* out) {
  const std::string dumped =
      ClipReportJson(row).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  for (const char ch : dumped) {
    out->push_back(ch);
    if (ch == '\n') out->append("    ");
  }
}

constexpr std::size_t kSpillBuffer = 256 * 1024;

}  // namespace

ReportSpill::ReportSpill(std::size_t inputs)
    : fd_(OpenUnnamedTemporary()), inputs_(inputs), summary_(std::make_unique<SummaryState>()) {}

ReportSpill::~ReportSpill() {
  if (fd_ >= 0) ::close(fd_);
}

void ReportSpill::Flush() const {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::pwrite(fd_, buffer_.data() + done, buffer_.size() - done,
                               static_cast<off_t>(written_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(
          fmt::format("cannot write the report's temporary file: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  written_ += done;
  buffer_.clear();
}

void ReportSpill::Add(std::size_t index, const ClipReport& report) {
  std::string text;
  std::vector<RowFigures> figures;
  for (const ClipReport& row : ReportRows({report})) {
    if (!text.empty()) text += ",\n    ";
    AppendRowText(row, &text);
    RowFigures f;
    f.status = row.status;
    f.warnings = static_cast<int>(row.warnings.size());
    f.frames = row.frames;
    f.seconds = row.seconds;
    f.phases[0] = row.phases.read;
    f.phases[1] = row.phases.script;
    f.phases[2] = row.phases.write;
    f.phases[3] = row.phases.report;
    figures.push_back(std::move(f));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (index >= inputs_) throw std::logic_error("ReportSpill::Add: no such input");
  if (offset_.empty()) {
    offset_.assign(inputs_, 0);
    length_.assign(inputs_, 0);
  }
  offset_[index] = end_;
  length_[index] = static_cast<std::uint32_t>(text.size());
  end_ += text.size();
  buffer_ += text;
  if (buffer_.size() >= kSpillBuffer && error_.empty()) {
    try {
      Flush();
    } catch (const std::exception& e) {
      error_ = e.what();  // thrown by Emit: Add runs on worker threads
    }
  }
  if (!error_.empty()) buffer_.clear();
  if (report.status == "failed") failed_.push_back(static_cast<std::uint32_t>(index));
  SummaryState& s = *summary_;
  s.waiting.emplace(index, std::move(figures));
  for (auto it = s.waiting.begin(); it != s.waiting.end() && it->first == s.next;
       it = s.waiting.erase(it), ++s.next) {
    for (const RowFigures& f : it->second) s.builder.Add(f);
  }
}

std::string ReportSpill::Read(std::size_t index) const {
  std::string text(length_[index], '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pread(fd_, text.data() + done, text.size() - done,
                              static_cast<off_t>(offset_[index] + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(
          fmt::format("cannot read the report's temporary file: {}", std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  return text;
}

void ReportSpill::ForEachRow(const std::function<void(const ClipReport&)>& fn,
                             bool failed_only) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) throw std::runtime_error(error_);
  if (!buffer_.empty()) Flush();
  std::vector<std::uint32_t> failed = failed_;
  std::sort(failed.begin(), failed.end());
  const std::size_t count = failed_only ? failed.size() : (length_.empty() ? 0 : inputs_);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = failed_only ? failed[k] : k;
    if (length_[i] == 0) continue;
    const nlohmann::json rows = nlohmann::json::parse("[" + Read(i) + "]");
    for (const nlohmann::json& j : rows) {
      ClipReport r;
      r.input = j.value("input", "");
      r.output = j.value("output", "");
      r.status = j.value("status", "");
      r.reason = j.value("reason", "");
      r.frames = j.value("frames", 0);
      if (const auto w = j.find("warnings"); w != j.end() && w->is_array()) {
        for (const nlohmann::json& s : *w)
          r.warnings.push_back(s.is_string() ? s.get<std::string>() : s.dump());
      }
      r.frames_report = j.value("frames_report", "");
      r.take = j.value("take", "");
      fn(r);
    }
  }
}

void ReportSpill::Emit(const RunOptions& options, const nlohmann::json& extra,
                       const std::function<void(std::string_view)>& sink) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) throw std::runtime_error(error_);
  if (!buffer_.empty()) Flush();
  if (summary_->next < inputs_ || !summary_->waiting.empty()) {
    throw std::logic_error("ReportSpill::Emit: an input has no report");
  }
  static const std::string kPlaceholder = "\x01rigel clips\x01";
  nlohmann::json document = extra.is_object() ? extra : nlohmann::json::object();
  document["rigel_version"] = options.recipe.version;
  document["command"] = options.command;
  document["clips"] = kPlaceholder;
  nlohmann::json s = summary_->builder.Result();
  s["peak_rss_mb"] = PeakMemory();
  document["summary"] = s;
  const std::string text = document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string quoted = nlohmann::json(kPlaceholder).dump();
  const std::size_t at = text.find(quoted);
  sink(std::string_view(text).substr(0, at));
  bool first = true;
  for (std::size_t i = 0; i < length_.size(); ++i) {
    if (length_[i] == 0) continue;
    sink(first ? "[\n    " : ",\n    ");
    sink(Read(i));
    first = false;
  }
  sink(first ? "[]" : "\n  ]");
  sink(std::string_view(text).substr(at + quoted.size()));
  sink("\n");
}

void ReportSpill::Write(const std::string& path, const RunOptions& options,
                        const nlohmann::json& extra) const {
  AtomicFile file(path);
  Emit(options, extra, [&file](std::string_view piece) { file.Write(piece); });
  file.Commit();
}

std::string ReportText(const std::vector<ClipReport>& reports, const RunOptions& options,
                       const nlohmann::json& extra) {
  ReportSpill spill(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) spill.Add(i, reports[i]);
  std::string text;
  spill.Emit(options, extra, [&text](std::string_view piece) { text += piece; });
  return text;
}

void WriteReport(const std::string& path, const std::vector<ClipReport>& reports,
                 const RunOptions& options, const nlohmann::json& extra) {
  ReportSpill spill(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) spill.Add(i, reports[i]);
  spill.Write(path, options, extra);
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
