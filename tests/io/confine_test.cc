// Kernel confinement (importers/confine.h) and the isolated loader's use of it: each check runs
// in a forked child that confines itself and reports the errno of one file operation.
#include "importers/confine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/landlock.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "exporters/save_scene.h"
#include "importers/isolated_load.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

namespace fs = std::filesystem;

#define RIGEL_REQUIRE_LANDLOCK()                                         \
  do {                                                                   \
    if (ProbeConfinement().kind != ConfinementKind::kLandlock)           \
      GTEST_SKIP() << "no Landlock here: " << ProbeConfinement().reason; \
  } while (0)

// Runs `op` in a child confined by `rules`; returns what `op` returned (an errno, 0 = success),
// or -1 when the child could not confine itself or died.
int InConfinedChild(const ConfinementRules& rules, const std::function<int()>& op) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      if (ConfineCurrentThread(rules) != ConfinementKind::kLandlock) _exit(255);
    } catch (...) {
      _exit(255);
    }
    _exit(op() & 0xff);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 255) return -1;
  return WEXITSTATUS(status);
}

int Errno(int result) { return result < 0 ? errno : 0; }

int OpenErrno(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// ro/data.txt (read-only), rw/ (read-write), outside/secret.txt (nothing), and
// rw/dangling -> outside/created.txt (which does not exist).
class ConfineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.path() / "ro");
    fs::create_directories(dir_.path() / "rw");
    fs::create_directories(dir_.path() / "outside");
    WriteText(dir_.path() / "ro/data.txt", "inputs");
    WriteText(dir_.path() / "rw/mine.txt", "mine");
    WriteText(dir_.path() / "outside/secret.txt", "secret");
    fs::create_symlink(dir_.path() / "outside/created.txt", dir_.path() / "rw/dangling");
    rules_.read_only = {P("ro")};
    rules_.read_write = {P("rw")};
  }
  std::string P(const std::string& name) const { return dir_.file(name); }

  testing::TempDir dir_;
  ConfinementRules rules_;
};

TEST(ConfineProbe, AgreesWithTheKernel) {
  if (ProbeConfinement().reason.find("RIGEL_CONFINEMENT") != std::string::npos) GTEST_SKIP();
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0,
                           static_cast<unsigned>(LANDLOCK_CREATE_RULESET_VERSION));
  if (abi >= 1) {
    EXPECT_EQ(ProbeConfinement().kind, ConfinementKind::kLandlock);
    EXPECT_EQ(ProbeConfinement().abi, abi);
    EXPECT_EQ(DescribeConfinement(), "landlock (ABI " + std::to_string(abi) + ")");
  } else {
    EXPECT_EQ(ProbeConfinement().kind, ConfinementKind::kNone);
    EXPECT_NE(DescribeConfinement().find("none (Landlock unavailable"), std::string::npos);
  }
}

// Issue 25: a confined process could connect to a pathname Unix socket and send UDP (Landlock
// does not restrict them). No new socket at all now; the control makes them unconfined.
TEST_F(ConfineTest, NoNewSockets) {
  RIGEL_REQUIRE_LANDLOCK();
  const auto make = [](int domain, int type) {
    return [domain, type]() {
      const int fd = socket(domain, type, 0);
      if (fd < 0) return errno;
      close(fd);
      return 0;
    };
  };
  EXPECT_EQ(make(AF_UNIX, SOCK_STREAM)(), 0) << "control: unconfined";
  EXPECT_EQ(make(AF_INET, SOCK_DGRAM)(), 0) << "control: unconfined";
  EXPECT_EQ(InConfinedChild(rules_, make(AF_UNIX, SOCK_STREAM)), EPERM) << "pathname Unix socket";
  EXPECT_EQ(InConfinedChild(rules_, make(AF_UNIX, SOCK_DGRAM)), EPERM);
  EXPECT_EQ(InConfinedChild(rules_, make(AF_INET, SOCK_DGRAM)), EPERM) << "UDP";
  EXPECT_EQ(InConfinedChild(rules_, make(AF_INET6, SOCK_DGRAM)), EPERM) << "UDP over IPv6";
  EXPECT_EQ(InConfinedChild(rules_,
                            [] {
                              int sv[2];
                              return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ? errno : 0;
                            }),
            EPERM);
}

TEST_F(ConfineTest, ReadsOnlyTheReadOnlyPaths) {
  RIGEL_REQUIRE_LANDLOCK();
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno(P("ro/data.txt"), O_RDONLY); }), 0);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno(P("rw/mine.txt"), O_RDONLY); }), 0);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno(P("outside/secret.txt"), O_RDONLY); }),
            EACCES);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno("/etc/passwd", O_RDONLY); }), EACCES);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno(P("outside"), O_RDONLY); }), EACCES);
}

TEST_F(ConfineTest, WritesOnlyTheReadWritePaths) {
  RIGEL_REQUIRE_LANDLOCK();
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno(P("ro/data.txt"), O_WRONLY); }), EACCES);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return OpenErrno(P("ro/new.txt"), O_WRONLY | O_CREAT); }),
            EACCES);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return Errno(unlink(P("ro/data.txt").c_str())); }),
            EACCES);
  EXPECT_EQ(InConfinedChild(rules_, [&] { return Errno(mkdir(P("outside/d").c_str(), 0755)); }),
            EACCES);
  if (ProbeConfinement().abi >= 3) {
    EXPECT_EQ(InConfinedChild(rules_, [&] { return Errno(truncate(P("ro/data.txt").c_str(), 0)); }),
              EACCES);
  }
  EXPECT_EQ(rigel::testing::FileBytes(P("ro/data.txt")), "inputs");
  EXPECT_TRUE(fs::exists(P("outside/secret.txt")));
  // The read-write folder: create, write, rename and remove inside it.
  EXPECT_EQ(InConfinedChild(rules_,
                            [&] {
                              const int e = OpenErrno(P("rw/new.txt"), O_WRONLY | O_CREAT);
                              if (e != 0) return e;
                              if (rename(P("rw/new.txt").c_str(), P("rw/moved.txt").c_str()) != 0)
                                return errno;
                              return Errno(mkdir(P("rw/sub").c_str(), 0755));
                            }),
            0);
  EXPECT_TRUE(fs::exists(P("rw/moved.txt")));
  EXPECT_TRUE(fs::is_directory(P("rw/sub")));
}

TEST_F(ConfineTest, DanglingSymlinkDoesNotCreateOutside) {
  RIGEL_REQUIRE_LANDLOCK();
  EXPECT_EQ(
      InConfinedChild(rules_, [&] { return OpenErrno(P("rw/dangling"), O_WRONLY | O_CREAT); }),
      EACCES);
  EXPECT_FALSE(fs::exists(P("outside/created.txt")));
  // Unconfined, the same call creates the file: the test above is not vacuous.
  EXPECT_EQ(OpenErrno(P("rw/dangling"), O_WRONLY | O_CREAT), 0);
  EXPECT_TRUE(fs::exists(P("outside/created.txt")));
}

TEST_F(ConfineTest, RenameAndLinkCannotMoveFilesAcross) {
  RIGEL_REQUIRE_LANDLOCK();
  EXPECT_NE(
      InConfinedChild(
          rules_,
          [&] { return Errno(rename(P("rw/mine.txt").c_str(), P("outside/mine.txt").c_str())); }),
      0);
  EXPECT_NE(
      InConfinedChild(
          rules_,
          [&] { return Errno(rename(P("ro/data.txt").c_str(), P("rw/stolen.txt").c_str())); }),
      0);
  EXPECT_NE(
      InConfinedChild(
          rules_,
          [&] { return Errno(link(P("outside/secret.txt").c_str(), P("rw/leak.txt").c_str())); }),
      0);
  EXPECT_TRUE(fs::exists(P("rw/mine.txt")));
  EXPECT_TRUE(fs::exists(P("ro/data.txt")));
  EXPECT_FALSE(fs::exists(P("rw/leak.txt")));
  EXPECT_FALSE(fs::exists(P("outside/mine.txt")));
}

TEST_F(ConfineTest, ThreadsStartedAfterwardsAreConfinedAndLayersOnlyNarrow) {
  RIGEL_REQUIRE_LANDLOCK();
  EXPECT_EQ(
      InConfinedChild(rules_,
                      [&] {
                        int e = 0;
                        std::thread t([&] { e = OpenErrno(P("outside/secret.txt"), O_RDONLY); });
                        t.join();
                        return e;
                      }),
      EACCES);
  // A second layer allowing only rw/: ro/ becomes unreadable; allowing outside/ grants nothing.
  EXPECT_EQ(InConfinedChild(rules_,
                            [&] {
                              ConfinementRules narrower;
                              narrower.read_only = {P("rw"), P("outside")};
                              ConfineCurrentThread(narrower);
                              const int ro = OpenErrno(P("ro/data.txt"), O_RDONLY);
                              const int out = OpenErrno(P("outside/secret.txt"), O_RDONLY);
                              const int rw = OpenErrno(P("rw/mine.txt"), O_RDONLY);
                              return (ro == EACCES && out == EACCES && rw == 0) ? 0 : 1;
                            }),
            0);
}

// The isolated loader reads only the file's own folder: a glTF whose buffer uri leaves it fails,
// though the same file loads in-process (unconfined) and with the buffer beside it.
std::string Base64Decode(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0;
  int n = 0;
  for (char c : text) {
    const size_t v = kAlphabet.find(c);
    if (v == std::string::npos) continue;
    bits = (bits << 6) | static_cast<unsigned>(v);
    n += 6;
    if (n >= 8) {
      n -= 8;
      out.push_back(static_cast<char>((bits >> n) & 0xff));
    }
  }
  return out;
}

TEST_F(ConfineTest, IsolatedLoaderRefusesReferencesOutsideTheFilesFolder) {
  RIGEL_REQUIRE_LANDLOCK();
  const Scene scene = LoadScene(RIGEL_SOURCE_DIR "/tests/lua/fixtures/chain.bvh");
  SaveScene(scene, P("base.gltf"));
  nlohmann::json gltf = nlohmann::json::parse(rigel::testing::FileBytes(P("base.gltf")));
  const std::string uri = gltf["buffers"][0]["uri"];
  const std::string bin = Base64Decode(uri.substr(uri.find(',') + 1));
  fs::create_directories(P("rw/inner"));
  WriteText(P("rw/outside.bin"), bin);
  gltf["buffers"][0]["uri"] = "../outside.bin";
  WriteText(P("rw/inner/escape.gltf"), gltf.dump());
  gltf["buffers"][0]["uri"] = "beside.bin";
  WriteText(P("rw/inner/beside.bin"), bin);
  WriteText(P("rw/inner/beside.gltf"), gltf.dump());
  gltf["buffers"][0]["uri"] = "../../../../../../../../../../../../../etc/passwd";
  WriteText(P("rw/inner/passwd.gltf"), gltf.dump());

  // The control: the buffer beside the file loads (resampled by Assimp: 4 BVH frames -> 10).
  const int frames = LoadSceneIsolated(P("rw/inner/beside.gltf")).clips.front().num_frames();
  EXPECT_GT(frames, 0);
  LoadOptions in_process;
  in_process.isolate = false;
  EXPECT_EQ(LoadScene(P("rw/inner/escape.gltf"), in_process).clips.front().num_frames(), frames)
      << "unconfined, the reference is followed";
  try {
    LoadSceneIsolated(P("rw/inner/escape.gltf"));
    ADD_FAILURE() << "the isolated loader followed ../outside.bin";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("could not open referenced file \"../outside.bin\""),
              std::string::npos)
        << e.what();
  }
  try {
    LoadSceneIsolated(P("rw/inner/passwd.gltf"));
    ADD_FAILURE() << "the isolated loader read /etc/passwd";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("could not open referenced file"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("root:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rigel
