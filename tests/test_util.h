// Shared test helpers: real-data paths, temporary folders, Eigen comparisons.
#ifndef RIGEL_TESTS_TEST_UTIL_H_
#define RIGEL_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace rigel::testing {

// ../shared/data, or "" when it is absent.
inline std::string SharedData() {
  const std::filesystem::path p(RIGEL_SHARED_DATA);
  return std::filesystem::is_directory(p) ? p.string() : std::string();
}

// One degree in radians.
inline constexpr double kDegree = M_PI / 180.0;

// The whole content of a file ("" when it cannot be read).
inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every file under the shared data folder with extension `ext` (".bvh"), sorted.
inline std::vector<std::string> SharedFiles(const std::string& ext) {
  std::vector<std::string> files;
  const std::string root = SharedData();
  if (root.empty()) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    // Case-insensitive: "Rokoko_Newton.FBX" is an FBX file.
    std::string found = e.path().extension().string();
    for (char& c : found) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (e.is_regular_file() && found == ext) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

#define RIGEL_REQUIRE_SHARED_DATA()                                                               \
  do {                                                                                            \
    if (::rigel::testing::SharedData().empty())                                                   \
      GTEST_SKIP() << "../shared/data not found (" RIGEL_SHARED_DATA "): real-data test skipped"; \
  } while (0)

// A fresh temporary folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        std::filesystem::temp_directory_path() /
        ("rigel_" + std::string(info ? info->name() : "test") + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace rigel::testing

#define EXPECT_VEC3_NEAR(a, b, tol)    \
  EXPECT_LE(((a) - (b)).norm(), (tol)) \
      << "expected " << (b).transpose() << "\n got " << (a).transpose()

#define EXPECT_TRANSFORM_NEAR(a, b, tol)                                  \
  do {                                                                    \
    EXPECT_LE(((a).matrix() - (b).matrix()).cwiseAbs().maxCoeff(), (tol)) \
        << "expected\n"                                                   \
        << (b).matrix() << "\n got\n"                                     \
        << (a).matrix();                                                  \
  } while (0)

#endif  // RIGEL_TESTS_TEST_UTIL_H_
