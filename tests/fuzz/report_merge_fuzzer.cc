// libFuzzer harness: merging JSON reports (`rigel bake --merge`, batch::MergeReports).
//
// The input is split at each "\n--\n" into up to 4 report files. Properties: MergeReports throws
// UsageError (a report that is unreadable or not a rigel report) or returns a report whose clips
// are sorted by input, whose summary counts them, and which dumps as JSON (the CLI writes it);
// merging that result again gives the same report. Any other exception escapes and aborts.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/batch/batch.h"
#include "fuzz_check.h"

namespace {

// A folder of this process for the report files.
const std::filesystem::path& Folder() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path p = std::filesystem::temp_directory_path() /
                              ("rigel_report_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p;
  }();
  return dir;
}

std::string Write(const std::string& name, std::string_view bytes) {
  const std::string path = (Folder() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> paths;
  size_t begin = 0;
  while (paths.size() < 4) {
    const size_t sep = input.find("\n--\n", begin);
    const std::string_view part =
        input.substr(begin, sep == std::string_view::npos ? sep : sep - begin);
    paths.push_back(Write("r" + std::to_string(paths.size()) + ".json", part));
    if (sep == std::string_view::npos) break;
    begin = sep + 4;
  }
  nlohmann::json merged;
  try {
    merged = rigel::batch::MergeReports(paths);
  } catch (const rigel::batch::UsageError&) {
    return 0;
  }
  const nlohmann::json& clips = merged.at("clips");
  FUZZ_CHECK(clips.is_array(), "clips not an array");
  for (size_t i = 1; i < clips.size(); ++i) {
    FUZZ_CHECK(
        !(clips[i].at("input").get<std::string>() < clips[i - 1].at("input").get<std::string>()),
        "clips not sorted by input");
  }
  const nlohmann::json& summary = merged.at("summary");
  FUZZ_CHECK(summary.at("clips").get<size_t>() == clips.size(), "summary.clips");
  const long long counted = summary.at("ok").get<long long>() +
                            summary.at("failed").get<long long>() +
                            summary.at("skipped").get<long long>();
  FUZZ_CHECK(counted >= 0 && counted <= static_cast<long long>(clips.size()), "summary counts");
  // What the CLI writes (cmd_bake.cc: merged.dump(2)), then merged again: the same report.
  const std::string text = merged.dump(2);
  const std::string again = Write("merged.json", text);
  const nlohmann::json remerged = rigel::batch::MergeReports({again});
  FUZZ_CHECK(remerged == merged, "merging a merged report changed it");
  return 0;
}
