// batch::Run with worker processes (RunOptions::processes): a crash, an abort, a runaway loop and
// an allocation bomb each fail only their clip with the reason; workers are reused; a killed
// worker leaves no temporary; a confined worker cannot read outside its rules even with a plain
// open(2).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "cli/batch/batch.h"
#include "exporters/atomic_file.h"
#include "importers/confine.h"
#include "test_util.h"

namespace rigel::batch {
namespace {

namespace fs = std::filesystem;

std::vector<Input> MakeInputs(const fs::path& folder, const std::vector<std::string>& stems) {
  std::vector<Input> inputs;
  for (const std::string& stem : stems) {
    const fs::path p = folder / (stem + ".bvh");
    fs::create_directories(folder);
    std::ofstream(p) << "input " << stem;
    inputs.push_back({p.string(), stem});
  }
  return inputs;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Workers, EachFailureStaysInItsClip) {
  rigel::testing::TempDir dir;
  const std::vector<Input> inputs =
      MakeInputs(dir.path() / "in", {"a", "segv", "abort", "spin", "bomb", "b", "c"});
  RunOptions options;
  options.out_dir = (dir.path() / "out").string();
  options.extension = ".bvh";
  options.jobs = 2;
  options.recipe = {"", "recipe", "test"};
  options.processes = true;
  options.memory_mb = 64;
  options.timeout = 0.5;
  options.timeout_grace = 0.2;
  const pid_t self = getpid();
  auto process = [&](const Input& input, const std::string& output) {
    if (input.stem == "segv") std::raise(SIGSEGV);
    if (input.stem == "abort") std::abort();
    if (input.stem == "spin") {
      // A partial output, as a killed AtomicFile leaves it, then a loop nothing interrupts.
      std::ofstream(options.out_dir + "/.spin.bvh.tmp.AbC123") << "half";
      volatile int spin = 0;
      for (;;) spin = spin + 1;
    }
    if (input.stem == "bomb") {
      std::vector<std::unique_ptr<char[]>> blocks;
      for (int i = 0; i < 4096; ++i) blocks.emplace_back(new char[16 << 20]);
    }
    WriteFileAtomically(output, input.stem + " " + std::to_string(getpid()));
    ClipReport r;
    r.frames = 7;
    r.solver.frames = 7;
    r.solver.converged = 5;  // not in the report's JSON: must come back from the worker anyway
    return r;
  };
  const std::vector<ClipReport> reports = batch::Run(inputs, options, process);
  ASSERT_EQ(reports.size(), inputs.size());
  auto find = [&](const std::string& stem) {
    for (const ClipReport& r : reports) {
      if (fs::path(r.input).stem() == stem) return r;
    }
    ADD_FAILURE() << stem;
    return ClipReport{};
  };
  EXPECT_EQ(find("segv").reason, "worker killed by signal 11 (SEGV)");
  EXPECT_EQ(find("abort").reason, "worker killed by signal 6 (ABRT)");
  EXPECT_EQ(find("spin").reason, "clip timed out after 0.5 s (--timeout)");
  EXPECT_GE(find("spin").seconds, 0.5);
  EXPECT_LT(find("spin").seconds, 3.0);
  EXPECT_EQ(find("bomb").reason.rfind("out of memory (--memory-mb 64)", 0), 0u)
      << find("bomb").reason;
  for (const char* stem : {"segv", "abort", "spin", "bomb"}) {
    EXPECT_EQ(find(stem).status, "failed") << stem;
    const std::string out = options.out_dir + "/" + stem + ".bvh";
    EXPECT_FALSE(fs::exists(out)) << stem;
    EXPECT_FALSE(fs::exists(ManifestPath(out))) << stem;
  }
  EXPECT_FALSE(fs::exists(options.out_dir + "/.spin.bvh.tmp.AbC123"))
      << "a killed worker's temporary is removed";
  for (const std::string stem : {"a", "b", "c"}) {
    const ClipReport r = find(stem);
    EXPECT_EQ(r.status, "ok") << stem;
    EXPECT_EQ(r.frames, 7);
    EXPECT_EQ(r.solver.converged, 5);
    const std::string out = options.out_dir + "/" + stem + ".bvh";
    const std::string text = Read(out);
    ASSERT_EQ(text.rfind(stem + " ", 0), 0u) << text;
    EXPECT_NE(std::stoi(text.substr(stem.size() + 1)), self) << "baked in a worker process";
    EXPECT_TRUE(fs::exists(ManifestPath(out))) << "the supervisor writes the manifest";
  }
}

TEST(Workers, ReusedAcrossClips) {
  rigel::testing::TempDir dir;
  const std::vector<Input> inputs = MakeInputs(dir.path() / "in", {"a", "b", "c", "d", "e"});
  RunOptions options;
  options.out_dir = (dir.path() / "out").string();
  options.extension = ".txt";
  options.jobs = 1;
  options.processes = true;
  auto process = [](const Input&, const std::string& output) {
    WriteFileAtomically(output, std::to_string(getpid()));
    return ClipReport{};
  };
  const std::vector<ClipReport> reports = batch::Run(inputs, options, process);
  const std::string first = Read(options.out_dir + "/a.txt");
  EXPECT_NE(first, std::to_string(getpid()));
  for (const Input& input : inputs) {
    EXPECT_EQ(Read(options.out_dir + "/" + input.stem + ".txt"), first) << "one worker, reused";
  }
}

// A processor that reads a file outside the worker's rules with open(2), below any Lua check.
ClipReport ReadSecret(const std::string& secret, const Input& input, const std::string& output) {
  const int own = open(input.path.c_str(), O_RDONLY);
  if (own < 0) throw std::runtime_error("cannot read the input: " + std::string(strerror(errno)));
  close(own);
  const int fd = open(secret.c_str(), O_RDONLY);
  if (fd >= 0) {
    close(fd);
    throw std::runtime_error("read the secret");
  }
  const int err = errno;
  WriteFileAtomically(output, "refused");
  throw std::runtime_error(std::string("refused: ") + strerror(err));
}

TEST(Workers, ConfinedWorkerCannotReadOutsideItsRules) {
  if (ProbeConfinement().kind == ConfinementKind::kNone) {
    GTEST_SKIP() << "no Landlock: " << DescribeConfinement();
  }
  rigel::testing::TempDir dir;
  const std::string secret = (dir.path() / "secret.txt").string();
  std::ofstream(secret) << "secret";
  const std::vector<Input> inputs = MakeInputs(dir.path() / "in", {"a"});
  RunOptions options;
  options.out_dir = (dir.path() / "out").string();
  options.extension = ".txt";
  options.processes = true;
  ConfinementRules rules;
  rules.read_only = {inputs[0].path};
  rules.read_write = {options.out_dir};
  options.worker_setup = [rules] { ConfineCurrentThread(rules); };
  auto process = [&](const Input& input, const std::string& output) {
    return ReadSecret(secret, input, output);
  };
  std::vector<ClipReport> reports = batch::Run(inputs, options, process);
  EXPECT_EQ(reports[0].reason, "refused: Permission denied") << "the kernel refused the read";
  EXPECT_EQ(Read(options.out_dir + "/a.txt"), "refused") << "--out stays writable";
  // Unconfined (what --allow-io does), the same read succeeds: the rules made the difference.
  options.worker_setup = nullptr;
  reports = batch::Run(inputs, options, process);
  EXPECT_EQ(reports[0].reason, "read the secret");
}

}  // namespace
}  // namespace rigel::batch
