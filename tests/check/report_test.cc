// A suspect output in the batch report and the preview index (issue 27 item 1): its status and
// reason, the summary's count, take rows keeping their own status, and suspects listed right
// after failed clips.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cli/batch/batch.h"
#include "cli/preview/preview_page.h"
#include "test_util.h"

namespace rigel {
namespace {

batch::ClipReport Row(const std::string& input, const std::string& status) {
  batch::ClipReport r;
  r.input = input;
  r.output = input + ".bvh";
  r.status = status;
  r.frames = 10;
  if (status == "suspect") {
    r.reason = "travel: the hips travel 11.0 m, expected 1.1 m";
    r.checks = {{"ran", {"travel"}}, {"findings", {{{"check", "travel"}, {"frame", 39}}}}};
  }
  return r;
}

TEST(SuspectReport, CountedAndRoundTripped) {
  batch::RunOptions options;
  options.recipe.version = "test";
  const nlohmann::json report =
      batch::ReportJson({Row("a", "ok"), Row("b", "suspect"), Row("c", "failed")}, options);
  EXPECT_EQ(report["summary"]["ok"], 1);
  EXPECT_EQ(report["summary"]["suspect"], 1);
  EXPECT_EQ(report["summary"]["failed"], 1);
  const nlohmann::json& b = report["clips"][1];
  EXPECT_EQ(b["status"], "suspect");
  EXPECT_EQ(b["checks"]["findings"][0]["check"], "travel");
  // Workers send reports as JSON: the checks come back.
  const batch::ClipReport back = batch::ClipReportFromJson(b);
  EXPECT_EQ(back.status, "suspect");
  EXPECT_EQ(back.checks["findings"][0]["frame"], 39);
  EXPECT_TRUE(batch::Written("suspect"));
  EXPECT_FALSE(batch::Written("failed"));
}

TEST(SuspectReport, TakeRowsKeepTheirStatus) {
  batch::ClipReport input;
  input.input = "takes.fbx";
  input.status = "suspect";
  input.takes = {Row("walk", "ok"), Row("run", "suspect")};
  const std::vector<batch::ClipReport> rows = batch::ReportRows({input});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_EQ(rows[1].status, "suspect");
  EXPECT_NE(rows[1].reason.find("travel"), std::string::npos);
}

TEST(SuspectReport, PreviewIndexListsSuspectsAfterFailures) {
  testing::TempDir tmp;
  std::vector<preview::PageSummary> pages(3);
  pages[0].name = "a_ok";
  pages[0].status = "ok";
  pages[1].name = "b_suspect";
  pages[1].status = "suspect";
  pages[1].reason = "height: standing height 0.4 m";
  pages[2].name = "c_failed";
  pages[2].status = "failed";
  preview::WritePreviewIndex(tmp.path().string(), pages, "index");
  std::ifstream in(tmp.file("index.html"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string html = text.str();
  const size_t failed = html.find("c_failed"), suspect = html.find("b_suspect"),
               ok = html.find("a_ok");
  ASSERT_NE(suspect, std::string::npos);
  EXPECT_LT(failed, suspect);
  EXPECT_LT(suspect, ok);
  EXPECT_NE(html.find("suspect: height: standing height 0.4 m"), std::string::npos);
}

}  // namespace
}  // namespace rigel
