// The batch machinery behind `rigel bake` and `rigel retarget`: inputs, shards, manifests,
// stale temporaries, parallel runs and reports.
#include "cli/batch/batch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "cli/batch/takes.h"
#include "exporters/atomic_file.h"
#include "test_util.h"

namespace rigel::batch {
namespace {

void Touch(const std::filesystem::path& p, const std::string& text = "x") {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string Message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Batch, CollectsFilesFoldersAndLists) {
  rigel::testing::TempDir dir;
  const auto& root = dir.path();
  Touch(root / "lib/a.bvh");
  Touch(root / "lib/sub/b.BVH");
  Touch(root / "lib/readme.txt");
  Touch(root / "single.bvh");
  Touch(root / "other/c.bvh");
  Touch(root / "list.txt", "# clips\n\nother/c.bvh\r\n  single.bvh  \n");
  const InputList inputs = CollectInputs(
      {(root / "lib").string(), "@" + (root / "list.txt").string(), (root / "single.bvh").string()},
      {".bvh"});
  ASSERT_EQ(inputs.size(), 4u);  // single.bvh given twice counts once
  std::set<std::string> stems;
  for (const Input& i : inputs) stems.insert(i.stem);
  EXPECT_EQ(stems, (std::set<std::string>{"a", "sub/b", "c", "single"}));
  for (std::size_t i = 1; i < inputs.size(); ++i) EXPECT_LT(inputs.path(i - 1), inputs.path(i));
  // Paths are the folder's as given, a separator and the path below it.
  EXPECT_EQ(inputs.path(0), (root / "lib" / "a.bvh").string());
  EXPECT_EQ(inputs.path(1), (root / "lib" / "sub" / "b.BVH").string());
}

// The compact list gives back each input as it was found: paths, stems (with the file name's
// extension rules of std::filesystem) and order, for folders given with and without a trailing
// separator, files, and inputs given whole.
TEST(Batch, InputListKeepsPathsAndStems) {
  rigel::testing::TempDir dir;
  const auto& root = dir.path();
  Touch(root / "lib/z.bvh");
  Touch(root / "lib/a.b.bvh");
  Touch(root / "lib/deep/er/.hidden.bvh");
  Touch(root / "lib/.bvh");  // no extension to std::filesystem: not a clip
  Touch(root / "one.bvh");
  const InputList inputs =
      CollectInputs({(root / "lib").string() + "/", (root / "one.bvh").string()}, {".bvh"});
  std::vector<std::pair<std::string, std::string>> got;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    got.emplace_back(inputs.path(i), std::string(inputs.stem(i)));
    EXPECT_EQ(inputs[i].path, inputs.path(i));
    EXPECT_EQ(inputs[i].stem, inputs.stem(i));
  }
  const std::string lib = (root / "lib").string() + "/";
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{
                     {lib + "a.b.bvh", "a.b"},
                     {lib + "deep/er/.hidden.bvh", "deep/er/.hidden"},
                     {lib + "z.bvh", "z"},
                     {(root / "one.bvh").string(), "one"}}));
  // Inputs given whole keep their order and stems (an empty stem too); a shard keeps every
  // N-th of them.
  const InputList given(std::vector<Input>{{"b/x.bvh", "q"}, {"a/y.bvh", ""}, {"c", "c/d"}});
  ASSERT_EQ(given.size(), 3u);
  EXPECT_EQ(given.path(1), "a/y.bvh");
  EXPECT_EQ(given.stem(1), "");
  EXPECT_EQ(given.stem(2), "c/d");
  const InputList shard = SelectShard(inputs, {1, 2});
  ASSERT_EQ(shard.size(), 2u);
  EXPECT_EQ(shard.path(0), lib + "deep/er/.hidden.bvh");
  EXPECT_EQ(shard.path(1), (root / "one.bvh").string());
}

// A file a folder holds through a symlink to elsewhere is named by where it is in the folder:
// its output stays inside --out.
TEST(Batch, SymlinkedFileInAFolderKeepsItsNameInTheFolder) {
  rigel::testing::TempDir dir;
  const auto& root = dir.path();
  Touch(root / "elsewhere/deep/real.bvh");
  std::filesystem::create_directories(root / "lib");
  std::filesystem::create_symlink(root / "elsewhere/deep/real.bvh", root / "lib/link.bvh");
  const InputList inputs = CollectInputs({(root / "lib").string()}, {".bvh"});
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs.stem(0), "link");
  EXPECT_EQ(inputs.path(0), (root / "lib/link.bvh").string());
}

TEST(Batch, InputErrors) {
  rigel::testing::TempDir dir;
  const auto& root = dir.path();
  Touch(root / "x/walk.bvh");
  Touch(root / "y/walk.bvh");
  Touch(root / "list.txt", "x/walk.bvh\nmissing.bvh\n");
  // Missing files are kept as inputs: they fail as clips, the batch goes on.
  const InputList listed = CollectInputs({"@" + (root / "list.txt").string()}, {".bvh"});
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].path, (root / "missing.bvh").string());
  EXPECT_EQ(Message([&] { CollectInputs({"@" + (root / "nolist.txt").string()}, {".bvh"}); }),
            (root / "nolist.txt").string() + ": cannot read the input list");
  EXPECT_NE(
      Message([&] {
        CollectInputs({(root / "x/walk.bvh").string(), (root / "y/walk.bvh").string()}, {".bvh"});
      }).find("would both write the output 'walk'"),
      std::string::npos);
  Touch(root / "empty/readme.txt");
  EXPECT_EQ(Message([&] { CollectInputs({(root / "empty").string()}, {".bvh"}); }),
            "no input files");
}

TEST(Batch, ShardsPartitionDeterministically) {
  EXPECT_EQ(ParseShard("2/5").index, 2);
  EXPECT_EQ(ParseShard("2/5").count, 5);
  for (const char* bad : {"5/5", "-1/3", "1", "a/b", "1/0", "1/2x"}) {
    EXPECT_NE(Message([&] { ParseShard(bad); }).find("--shard: expected K/N"), std::string::npos)
        << bad;
  }
  std::vector<Input> inputs;
  for (int i = 0; i < 23; ++i) inputs.push_back({"clip" + std::to_string(100 + i), ""});
  std::multiset<std::string> all;
  for (int k = 0; k < 4; ++k) {
    for (const Input& i : SelectShard(inputs, {k, 4})) all.insert(i.path);
  }
  EXPECT_EQ(all.size(), inputs.size());
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), inputs.size());
}

TEST(Batch, ManifestVouchesOnlyForSameInputsAndUntouchedOutput) {
  rigel::testing::TempDir dir;
  const std::string out = dir.file("walk.bvh");
  Touch(out, "baked");
  const Provenance p{"aaaa", "bbbb", "0.1.0"};
  EXPECT_FALSE(ManifestMatches(out, p));
  WriteManifest(out, p);
  EXPECT_TRUE(ManifestMatches(out, p));
  EXPECT_FALSE(ManifestMatches(out, {"aaab", "bbbb", "0.1.0"}));
  EXPECT_FALSE(ManifestMatches(out, {"aaaa", "bbbc", "0.1.0"}));
  EXPECT_FALSE(ManifestMatches(out, {"aaaa", "bbbb", "0.2.0"}));
  Touch(out, "edited by hand");
  EXPECT_FALSE(ManifestMatches(out, p));
  // XXH3 64-bit, seed 0: the empty input's published value; a file hashes as its bytes do.
  EXPECT_EQ(HashBytes(""), "2d06800538d394c2");
  EXPECT_NE(HashBytes("a"), HashBytes("b"));
  Touch(out, std::string(3 << 20, 'x') + "tail");  // several read chunks
  EXPECT_EQ(HashFile(out), HashBytes(std::string(3 << 20, 'x') + "tail"));
  // Unreadable files: an error naming the file and why, never a hash of nothing.
  auto hash_error = [](const std::string& path) {
    try {
      HashFile(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string missing = dir.file("no_such_input.bvh");
  EXPECT_EQ(hash_error(missing), missing + ": cannot open: No such file or directory");
  EXPECT_EQ(hash_error(dir.path().string()), dir.path().string() + ": read error: Is a directory");
}

TEST(Batch, ManifestOfTakesVouchesForEveryTakeFile) {
  rigel::testing::TempDir dir;
  const std::string out = dir.file("walk.bvh");  // never written: the takes have files of their own
  const std::string jog = dir.file("walk.jog.bvh"), run = dir.file("walk.run.bvh");
  Touch(jog, "jog");
  Touch(run, "run");
  const Provenance p{"aaaa", "bbbb", "0.1.0"};
  WriteManifest(out, p, {jog, run});
  EXPECT_TRUE(ManifestMatches(out, p));
  Touch(run, "run, edited");
  EXPECT_FALSE(ManifestMatches(out, p));
  WriteManifest(out, p, {jog, run});
  EXPECT_TRUE(ManifestMatches(out, p));
  std::filesystem::remove(jog);
  EXPECT_FALSE(ManifestMatches(out, p));
}

TEST(Batch, ReportHasARowPerTake) {
  ClipReport input;
  input.input = "in/loco.fbx";
  input.status = "ok";
  input.seconds = 1.0;
  input.warnings = {"a file-level warning"};
  for (const char* name : {"jog", "run"}) {
    ClipReport take;
    take.take = name;
    take.output = std::string("out/loco.") + name + ".bvh";
    take.frames = name[0] == 'j' ? 25 : 21;
    take.seconds = 0.25;
    input.takes.push_back(take);
  }
  ClipReport single;
  single.input = "in/walk.bvh";
  single.output = "out/walk.bvh";
  single.status = "ok";
  single.frames = 40;
  // The worker transport keeps the takes.
  const ClipReport back = ClipReportFromJson(ClipReportJson(input));
  ASSERT_EQ(back.takes.size(), 2u);
  EXPECT_EQ(back.takes[1].take, "run");
  EXPECT_EQ(back.takes[1].output, "out/loco.run.bvh");

  const std::vector<ClipReport> rows = ReportRows({back, single});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].input, "in/loco.fbx");
  EXPECT_EQ(rows[0].take, "jog");
  EXPECT_EQ(rows[1].take, "run");
  EXPECT_EQ(rows[1].status, "ok");
  EXPECT_EQ(rows[1].frames, 21);
  EXPECT_EQ(rows[0].warnings, std::vector<std::string>{"a file-level warning"});
  EXPECT_TRUE(rows[1].warnings.empty());
  EXPECT_DOUBLE_EQ(rows[0].seconds + rows[1].seconds, 1.0);  // the input's time is kept whole
  EXPECT_EQ(rows[2].take, "");

  RunOptions options;
  const nlohmann::json report = ReportJson({back, single}, options);
  EXPECT_EQ(report["summary"]["clips"], 3);
  EXPECT_EQ(report["summary"]["frames"], 86);
  EXPECT_EQ(report["summary"]["warnings"], 1);
  EXPECT_EQ(WrittenFiles(back, "out/loco.bvh"),
            (std::vector<std::string>{"out/loco.jog.bvh", "out/loco.run.bvh"}));
  EXPECT_EQ(WrittenFiles(single, "out/walk.bvh"), std::vector<std::string>{"out/walk.bvh"});
}

TEST(Batch, TakeNamesAreFileSafeAndDistinct) {
  EXPECT_EQ(FileSafeTakeNames({"walk fast!", "walk_fast_", "walk_fast_", "", "Take 001"}),
            (std::vector<std::string>{"walk_fast_", "walk_fast__2", "walk_fast__3", "take4",
                                      "Take_001"}));
  EXPECT_EQ(TakeOutputPath("out/sub/loco.bvh", "jog"), "out/sub/loco.jog.bvh");
  Scene scene;
  scene.clips.resize(2);
  scene.clips[0].set_name("jog");
  scene.clips[1].set_name("run");
  EXPECT_EQ(SelectTakes(scene, "", "x.fbx"), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(SelectTakes(scene, "run", "x.fbx"), std::vector<std::size_t>{1});
  try {
    SelectTakes(scene, "walk", "x.fbx");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "x.fbx: no take 'walk' (takes: 'jog', 'run')");
  }
}

TEST(Batch, RemovesOnlyStaleTemporaries) {
  rigel::testing::TempDir dir;
  Touch(dir.path() / ".walk.bvh.tmp.Ab12Cd");
  Touch(dir.path() / "sub/.run.glb.tmp.XXXXXX");
  Touch(dir.path() / "walk.bvh");
  Touch(dir.path() / ".walk.bvh.rigel-manifest");
  Touch(dir.path() / "notes.tmp.txt");
  Touch(dir.path() / ".other_shard.bvh.tmp.Zz99Yy");           // another run's output in progress
  Touch(dir.path() / "..walk.bvh.rigel-manifest.tmp.Qq11Ww");  // AtomicFile temp of the manifest
  EXPECT_EQ(RemoveStaleTemporaries(
                {(dir.path() / "walk.bvh").string(), (dir.path() / "sub/run.glb").string()}),
            3);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / ".other_shard.bvh.tmp.Zz99Yy"))
      << "temporaries of outputs this run does not make are left alone";
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "walk.bvh"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / ".walk.bvh.rigel-manifest"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "notes.tmp.txt"));
}

// Issue 25: a second bake on the same --out removed the first one's in-flight temporaries (3 of 60
// clips failed "cannot replace"). A temporary whose writer is alive is now left alone.
TEST(Batch, LeavesTemporariesOfALiveWriter) {
  rigel::testing::TempDir dir;
  const std::string output = (dir.path() / "walk.bvh").string();
  std::string temp;
  {
    AtomicFile writing(output);  // another run, writing this output now
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      temp = entry.path().string();  // the one file: its temporary
    }
    ASSERT_NE(temp.find(".walk.bvh.tmp."), std::string::npos) << temp;
    EXPECT_EQ(RemoveStaleTemporaries({output}), 0);
    EXPECT_TRUE(std::filesystem::exists(temp)) << "a live writer's temporary was removed";
    writing.Write("x");
    writing.Commit();
  }
  EXPECT_TRUE(std::filesystem::exists(output)) << "the writer still commits its file";
  Touch(dir.path() / ".walk.bvh.tmp.Dead01");  // left by a writer that died: removed
  EXPECT_EQ(RemoveStaleTemporaries({output}), 1);
}

TEST(Batch, RunsInParallelIsolatesFailuresAndResumes) {
  rigel::testing::TempDir dir;
  std::vector<Input> inputs;
  for (int i = 0; i < 12; ++i) {
    const auto p = dir.path() / "in" / ("c" + std::to_string(i) + ".bvh");
    Touch(p, "input " + std::to_string(i));
    inputs.push_back({p.string(), "c" + std::to_string(i)});
  }
  RunOptions options;
  options.out_dir = (dir.path() / "out").string();
  options.extension = ".bvh";
  options.jobs = 3;
  options.recipe = {"", "recipe", "test"};
  std::mutex m;
  std::set<std::thread::id> threads;
  int calls = 0;
  auto process = [&](const Input& input, const std::string& output) {
    {
      std::lock_guard<std::mutex> lock(m);
      threads.insert(std::this_thread::get_id());
      ++calls;
    }
    if (input.stem == "c5") throw std::runtime_error(input.path + ":3: broken on purpose");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    WriteFileAtomically(output, "baked " + input.stem);
    ClipReport r;
    r.frames = 10;
    return r;
  };
  std::vector<ClipReport> reports = batch::Run(inputs, options, process);
  ASSERT_EQ(reports.size(), inputs.size());
  EXPECT_EQ(calls, 12);
  EXPECT_GE(threads.size(), 2u) << "work spread over threads";
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].input, inputs[i].path) << "reports in input order";
    EXPECT_EQ(reports[i].status, i == 5 ? "failed" : "ok");
  }
  EXPECT_EQ(reports[5].reason, inputs[5].path + ":3: broken on purpose");
  EXPECT_FALSE(std::filesystem::exists(options.out_dir + "/c5.bvh"));
  // Resume: only the failed clip runs again; the others are skipped as up to date.
  options.resume = true;
  calls = 0;
  reports = batch::Run(inputs, options, process);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(reports[0].status, "skipped");
  // A changed input is redone even with --resume.
  Touch(inputs[2].path, "input 2, edited");
  calls = 0;
  reports = batch::Run(inputs, options, process);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(reports[2].status, "ok");
  const nlohmann::json json = ReportJson(reports, options);
  EXPECT_EQ(json["summary"]["clips"], 12);
  EXPECT_EQ(json["summary"]["failed"], 1);
  EXPECT_EQ(json["summary"]["skipped"], 10);
  EXPECT_EQ(json["clips"][5]["reason"], inputs[5].path + ":3: broken on purpose");
  // The streamed text is the same document, with the command's own fields beside.
  nlohmann::json text = nlohmann::json::parse(ReportText(reports, options, {{"target", "t.bvh"}}));
  EXPECT_EQ(text["target"], "t.bvh");
  text.erase("target");
  nlohmann::json dom = json;
  text["summary"].erase("peak_rss_mb");  // measured when each is made
  dom["summary"].erase("peak_rss_mb");
  EXPECT_EQ(text, dom);
  EXPECT_EQ(ReportText(reports, options).substr(0, 2), "{\n");
  EXPECT_EQ(nlohmann::json::parse(ReportText({}, options))["clips"], nlohmann::json::array());
  // --report's file is written as it is made: the same document, parsed back from the file.
  const std::string file = options.out_dir + "/report.json";
  WriteReport(file, reports, options, {{"target", "t.bvh"}});
  std::ifstream in(file);
  nlohmann::json written = nlohmann::json::parse(in);
  EXPECT_EQ(written["target"], "t.bvh");
  written.erase("target");
  written["summary"].erase("peak_rss_mb");
  EXPECT_EQ(written, dom);
  WriteReport(file, {}, options);
  std::ifstream empty(file);
  EXPECT_EQ(nlohmann::json::parse(empty)["clips"], nlohmann::json::array());
}

TEST(Batch, MergesShardReports) {
  rigel::testing::TempDir dir;
  RunOptions options;
  options.recipe.version = "v";
  ClipReport a, b;
  a.input = "b.bvh";
  a.status = "ok";
  a.frames = 3;
  b.input = "a.bvh";
  b.status = "failed";
  WriteFileAtomically(dir.file("r0.json"), ReportJson({a}, options).dump());
  WriteFileAtomically(dir.file("r1.json"), ReportJson({b}, options).dump());
  const nlohmann::json merged = MergeReports({dir.file("r0.json"), dir.file("r1.json")});
  ASSERT_EQ(merged["clips"].size(), 2u);
  EXPECT_EQ(merged["clips"][0]["input"], "a.bvh");
  EXPECT_EQ(merged["summary"]["failed"], 1);
  EXPECT_EQ(merged["summary"]["frames"], 3);
  EXPECT_NE(Message([&] { MergeReports({dir.file("nope.json")}); }).find("cannot read the report"),
            std::string::npos);
}

}  // namespace
}  // namespace rigel::batch
