#include "cli/checks_output.h"

#include <fmt/format.h>

#include <stdexcept>

namespace rigel::cli {

nlohmann::json ChecksJson(const check::CheckReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const check::Finding& f : report.findings) {
    findings.push_back({{"check", f.check},
                        {"reason", f.reason},
                        {"frame", f.frame},
                        {"value", f.value},
                        {"limit", f.limit}});
  }
  return {{"ran", report.ran},
          {"findings", findings},
          {"scale", report.scale},
          {"humanoid", report.humanoid},
          {"frames", report.frames}};
}

std::string SuspectReason(const check::CheckReport& report) {
  std::string reason;
  for (const check::Finding& f : report.findings) {
    if (!reason.empty()) reason += "; ";
    reason += check::DescribeFinding(f);
  }
  return reason;
}

void ApplyChecks(const check::CheckReport& report, const std::string& command,
                 const std::string& where, bool strict, batch::ClipReport* row) {
  row->checks = ChecksJson(report);
  if (!report.suspect()) return;
  const std::string reason = SuspectReason(report);
  if (strict) throw std::runtime_error("suspect (--strict): " + reason + ": nothing written");
  for (const check::Finding& f : report.findings) {
    fmt::print(stderr, "rigel {}: suspect: {}: {}\n", command, where, check::DescribeFinding(f));
  }
  row->status = "suspect";
  row->reason = reason;
}

}  // namespace rigel::cli
