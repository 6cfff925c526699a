#include "exporters/atomic_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace rigel {
namespace {

TEST(AtomicFile, CommitReplacesWhole) {
  rigel::testing::TempDir dir;
  const std::string path = dir.file("out.txt");
  std::ofstream(path) << "old";
  WriteFileAtomically(path, "new contents");
  EXPECT_EQ(rigel::testing::FileBytes(path), "new contents");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(AtomicFile, AbandonedWriteLeavesTargetUntouched) {
  rigel::testing::TempDir dir;
  const std::string path = dir.file("out.txt");
  std::ofstream(path) << "old";
  {
    AtomicFile file(path);
    file.Write("half of a new fi");
    // No Commit(): as if an exception interrupted the export.
  }
  EXPECT_EQ(rigel::testing::FileBytes(path), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1)
      << "temporary file removed";
}

TEST(AtomicFile, MissingFolderIsAnError) {
  rigel::testing::TempDir dir;
  const std::string path = dir.file("no/such/folder/out.bvh");
  try {
    WriteFileAtomically(path, "x");
    FAIL() << "no error";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": cannot create a file in"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rigel
