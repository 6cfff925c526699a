#include "exporters/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace rigel {

namespace {
std::atomic<bool> g_durable_by_default{true};
}  // namespace

void SetDurableWritesByDefault(bool durable) { g_durable_by_default = durable; }
bool DurableWritesByDefault() { return g_durable_by_default; }

AtomicFile::AtomicFile(std::string path) : AtomicFile(std::move(path), DurableWritesByDefault()) {}

AtomicFile::AtomicFile(std::string path, bool durable) : path_(std::move(path)), durable_(durable) {
  const std::filesystem::path target(path_);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const std::string pattern =
      (dir / fmt::format(".{}.tmp.XXXXXX", target.filename().string())).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    throw ExportError(fmt::format("{}: cannot create a file in '{}': {}", path_, dir.string(),
                                  std::strerror(errno)));
  }
  ::fchmod(fd, 0644);
  // Held until the file is closed: RemoveStaleTemporaries (cli/batch) leaves a temporary alone
  // while its writer lives, so a second run on the same folder never removes it.
  ::flock(fd, LOCK_EX | LOCK_NB);
  temp_path_ = name.data();
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    ::unlink(temp_path_.c_str());
    throw ExportError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  }
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFile::Write(std::string_view bytes) {
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    throw ExportError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  }
}

void AtomicFile::Commit() {
  if (std::fflush(file_) != 0 || (durable_ && ::fsync(::fileno(file_)) != 0)) {
    throw ExportError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  }
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw ExportError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    throw ExportError(fmt::format("{}: cannot replace: {}", path_, std::strerror(errno)));
  }
  committed_ = true;
}

void WriteFileAtomically(const std::string& path, std::string_view bytes) {
  WriteFileAtomically(path, bytes, DurableWritesByDefault());
}

void WriteFileAtomically(const std::string& path, std::string_view bytes, bool durable) {
  AtomicFile file(path, durable);
  file.Write(bytes);
  file.Commit();
}

}  // namespace rigel
