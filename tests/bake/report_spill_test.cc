// batch::ReportSpill: the rows of a batch report spilled to an unnamed temporary file as clips
// finish, in any order and from several threads, make the report the in-memory path makes
// (ReportJson dumped), byte for byte; the file never shows in $TMPDIR.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli/batch/batch.h"
#include "test_util.h"

namespace rigel::batch {
namespace {

// A few hundred reports of every kind: ok, failed, suspect, skipped, with warnings, metrics,
// checks, and multi-take inputs (a row per take).
std::vector<ClipReport> Reports(int count) {
  std::vector<ClipReport> reports;
  for (int i = 0; i < count; ++i) {
    ClipReport r;
    r.input = "in/c" + std::to_string(i) + ".bvh";
    r.output = "out/c" + std::to_string(i) + ".bvh";
    const char* statuses[] = {"ok", "ok", "failed", "suspect", "skipped"};
    r.status = statuses[i % 5];
    if (r.status == "failed") r.reason = "in/c" + std::to_string(i) + ".bvh:3: broken \xff";
    r.frames = 10 + i % 7;
    r.seconds = 0.001 * i + 1.0 / 3.0;
    r.phases = {0.1 / (i + 1), 0.2 / 3.0, 1e-7 * i, 0.0};
    r.solver.frames = r.frames;
    r.solver.residual_mean = 1e-5 / (i + 1);
    if (i % 3 == 0) r.warnings = {"warning " + std::to_string(i), "\"quoted\"\n"};
    if (i % 11 == 0) r.extra = {{"metric", i * 0.5}};
    if (i % 13 == 0) r.checks = {{"ran", {"pops"}}, {"seconds", 0.125}};
    if (i % 17 == 1 && r.status == "ok") {
      for (const char* name : {"jog", "run"}) {
        ClipReport take;
        take.take = name;
        take.output = "out/c" + std::to_string(i) + "." + name + ".bvh";
        take.frames = 5;
        take.seconds = 0.1;
        take.warnings = {std::string("take warning ") + name};
        r.takes.push_back(take);
      }
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

// The report with its measured memory (taken when each is made) blanked.
std::string WithoutPeakMemory(std::string text) {
  const std::size_t at = text.find("\"peak_rss_mb\"");
  const std::size_t end = text.find('}', at);
  return at == std::string::npos ? text : text.erase(at, end - at);
}

TEST(ReportSpill, SameReportAsInMemoryFromAnyOrderAndThreads) {
  rigel::testing::TempDir dir;
  const std::string tmp = dir.file("tmp");
  std::filesystem::create_directories(tmp);
  ASSERT_EQ(setenv("TMPDIR", tmp.c_str(), 1), 0);
  const std::vector<ClipReport> reports = Reports(400);
  RunOptions options;
  options.recipe.version = "test";
  const std::string expected =
      ReportJson(reports, options).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  std::vector<std::size_t> order(reports.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  ReportSpill spill(reports.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t k = t; k < order.size(); k += 3) spill.Add(order[k], reports[order[k]]);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the spill file has no name";
  std::string text;
  spill.Emit(options, nlohmann::json::object(), [&text](std::string_view s) { text += s; });
  EXPECT_EQ(WithoutPeakMemory(text), WithoutPeakMemory(expected));
  // The same through ReportText (the in-memory reports spilled in order).
  EXPECT_EQ(WithoutPeakMemory(ReportText(reports, options)), WithoutPeakMemory(expected));

  // The failed rows, in input order, read back.
  std::vector<std::string> failed;
  spill.ForEachRow([&](const ClipReport& r) { failed.push_back(r.input + " " + r.status); },
                   /*failed_only=*/true);
  ASSERT_EQ(static_cast<int>(failed.size()), spill.failed());
  ASSERT_EQ(failed.size(), 80u);
  EXPECT_EQ(failed.front(), "in/c2.bvh failed");
  EXPECT_EQ(failed.back(), "in/c397.bvh failed");
  // Every row (a row per take), with its take and output.
  std::vector<ClipReport> rows;
  spill.ForEachRow([&](const ClipReport& r) { rows.push_back(r); }, /*failed_only=*/false);
  const std::vector<ClipReport> expected_rows = ReportRows(reports);
  ASSERT_EQ(rows.size(), expected_rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].input, expected_rows[i].input);
    EXPECT_EQ(rows[i].output, expected_rows[i].output);
    EXPECT_EQ(rows[i].take, expected_rows[i].take);
    EXPECT_EQ(rows[i].status, expected_rows[i].status);
    EXPECT_EQ(rows[i].frames, expected_rows[i].frames);
    EXPECT_EQ(rows[i].warnings.size(), expected_rows[i].warnings.size());
  }
  // Written atomically: the file holds the same text, no temporary is left beside it.
  const std::string path = dir.file("report.json");
  spill.Write(path, options);
  std::ifstream in(path);
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(WithoutPeakMemory(written), WithoutPeakMemory(expected));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    files += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(files, 1);
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
  unsetenv("TMPDIR");
}

TEST(ReportSpill, AnInputWithoutItsReportIsAnError) {
  ReportSpill spill(3);
  spill.Add(0, Reports(1)[0]);
  spill.Add(2, Reports(1)[0]);
  RunOptions options;
  EXPECT_THROW(spill.Emit(options, {}, [](std::string_view) {}), std::logic_error);
  EXPECT_THROW(spill.Add(3, Reports(1)[0]), std::logic_error);
}

}  // namespace
}  // namespace rigel::batch
