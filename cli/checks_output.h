// The plausibility checks (core/check/plausibility.h) as the commands use them: a scene's side of
// a comparison, the report row's "checks" JSON, and a suspect row's status, reason and stderr
// lines; `--strict` turns a suspect into a failed clip.
#ifndef RIGEL_CLI_CHECKS_OUTPUT_H_
#define RIGEL_CLI_CHECKS_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cli/batch/batch.h"
#include "core/check/plausibility.h"
#include "core/scene.h"

namespace rigel::cli {

using check::CheckSideOf;  // core/check/plausibility.h

// {"ran": [...], "findings": [{"check", "reason", "frame"}...], "scale", "humanoid"}.
nlohmann::json ChecksJson(const check::CheckReport& report);

// The findings in one line: "height: ... (worst frame 12); travel: ...".
std::string SuspectReason(const check::CheckReport& report);

// Records `report` in `row` (checks JSON; a suspect: status "suspect" and the reason) and prints
// one stderr line per finding ("rigel <command>: suspect: <where>: <finding>"). With `strict`, a
// suspect throws std::runtime_error instead ("suspect (--strict): ...: nothing written"): call it
// before writing.
void ApplyChecks(const check::CheckReport& report, const std::string& command,
                 const std::string& where, bool strict, batch::ClipReport* row);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_CHECKS_OUTPUT_H_
