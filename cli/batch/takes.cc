#include "cli/batch/takes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace rigel::batch {

std::vector<std::size_t> SelectTakes(const Scene& scene, const std::string& take,
                                     const std::string& path) {
  if (scene.clips.empty()) throw std::runtime_error(path + ": no animation");
  std::vector<std::size_t> picked;
  std::vector<std::string> names;
  for (std::size_t c = 0; c < scene.clips.size(); ++c) {
    names.push_back(fmt::format("'{}'", scene.clips[c].name()));
    if (take.empty() || scene.clips[c].name() == take) picked.push_back(c);
  }
  if (picked.empty()) {
    throw std::runtime_error(
        fmt::format("{}: no take '{}' (takes: {})", path, take, fmt::join(names, ", ")));
  }
  return picked;
}

std::vector<std::string> FileSafeTakeNames(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string safe;
    for (const char ch : names[i]) {
      const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
      safe.push_back(keep ? ch : '_');
    }
    if (safe.find_first_not_of('_') == std::string::npos) safe = fmt::format("take{}", i + 1);
    std::string unique = safe;
    for (int n = 2; used.count(unique) != 0; ++n) unique = fmt::format("{}_{}", safe, n);
    used.insert(unique);
    out.push_back(std::move(unique));
  }
  return out;
}

std::string TakeOutputPath(const std::string& output, const std::string& safe_take) {
  const std::filesystem::path p(output);
  return (p.parent_path() / (p.stem().string() + "." + safe_take + p.extension().string()))
      .string();
}

void WriteTakeOutputs(const char* command, const std::string& input, bool split,
                      std::vector<ClipReport>& rows, const std::function<void()>& write_all,
                      const std::function<void(std::size_t)>& write_take) {
  const auto start = std::chrono::steady_clock::now();
  if (!split) {
    write_all();
  } else {
    std::vector<std::string> written;
    try {
      for (std::size_t k = 0; k < rows.size(); ++k) {
        write_take(k);
        written.push_back(rows[k].output);
      }
    } catch (...) {
      std::error_code ec;
      for (const std::string& w : written) std::filesystem::remove(w, ec);
      throw;
    }
    fmt::print(stderr, "rigel {}: {}: {} takes, BVH holds one: a file per take ({} ...)\n", command,
               input, rows.size(), rows.front().output);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double total_frames = 0;
  for (const ClipReport& r : rows) total_frames += r.frames;
  for (ClipReport& r : rows) {
    r.phases.write = total_frames > 0 ? seconds * r.frames / total_frames : 0.0;
    r.seconds += r.phases.write;
  }
}

ClipReport InputReport(std::vector<ClipReport> rows, double read_seconds) {
  if (rows.size() == 1) {
    ClipReport report = std::move(rows.front());
    report.output.clear();
    report.phases.read = read_seconds;
    return report;
  }
  ClipReport report;
  report.phases.read = read_seconds;
  for (const ClipReport& row : rows) {
    if (row.status == "suspect") report.status = "suspect";
    report.frames += row.frames;
    report.solver.frames += row.solver.frames;
    report.solver.unreachable += row.solver.unreachable;
  }
  report.takes = std::move(rows);
  return report;
}

std::vector<std::string> TakeNames(const Scene& scene, const std::vector<std::size_t>& indices) {
  std::vector<std::string> names;
  for (const std::size_t i : indices) names.push_back(scene.clips.at(i).name());
  return names;
}

}  // namespace rigel::batch
