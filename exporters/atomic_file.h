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
  // Creates "<dir>/.<name>.tmp.XXXXXX" next to `path`. Throws ExportError. `durable`: Commit()
  // fsyncs the data before the rename, so the file survives a power loss whole; without it the
  // file is still whole or absent after a crash of the process (rename is atomic), which is
  // enough for files that can be remade (manifests, reports).
  explicit AtomicFile(std::string path, bool durable);
  // Durable when DurableWritesByDefault() is (true unless a batch command turned it off).
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
  bool durable_ = true;
};

// Writes `bytes` to `path` atomically (see AtomicFile for `durable`). Throws ExportError.
void WriteFileAtomically(const std::string& path, std::string_view bytes, bool durable);
void WriteFileAtomically(const std::string& path, std::string_view bytes);

// Process-wide default of AtomicFile's `durable` (initially true). Batch commands turn it off:
// their manifests record each output's hash, so a file torn by a power loss is detected and
// remade by --resume, and skipping one fsync per clip keeps a batch CPU-bound.
void SetDurableWritesByDefault(bool durable);
bool DurableWritesByDefault();

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_ATOMIC_FILE_H_
