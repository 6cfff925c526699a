// AtomicFile: writes a file whole or not at all. Data goes to a temporary file in the target's
// folder, which Commit() flushes, syncs and renames over the target; if Commit() is never reached
// (an exception, a crash) the target is untouched and the destructor removes the temporary.
#ifndef RIGEL_EXPORTERS_ATOMIC_FILE_H_
#define RIGEL_EXPORTERS_ATOMIC_FILE_H_

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rigel {

// The one exception exporters throw; the message names the file and the reason.
class ExportError : public std::runtime_error {
 public:
  explicit ExportError(const std::string& message) : std::runtime_error(message) {}
};

class AtomicFile {
 public:
  // Creates "<dir>/.<name>.tmp.XXXXXX" next to `path`. Throws ExportError.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes. Throws ExportError on a write error (disk full...).
  void Write(std::string_view bytes);
  // Flushes, fsyncs and renames the temporary over the target. Throws ExportError.
  void Commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// Writes `bytes` to `path` atomically. Throws ExportError.
void WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_ATOMIC_FILE_H_
