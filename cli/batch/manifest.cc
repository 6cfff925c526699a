// Resume manifests: hashes of what an output was made from, kept beside it; and the removal of
// the temporaries an interrupted run left.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "cli/batch/batch.h"
#include "exporters/atomic_file.h"

// xxHash (Debian's libxxhash-dev), inlined: no library to link, and the sanitizer builds
// instrument it with the rest.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fs = std::filesystem;

namespace rigel::batch {

std::string HashBytes(std::string_view bytes) {
  return fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
}

std::string HashFile(const std::string& path) {
  // Plain read(2) into an uninitialized buffer: no stdio copy, no zeroing (a zeroed 1 MB vector per
  // file and fread's copy were most of the supervisor's time in a bake).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  constexpr size_t kChunk = 256 * 1024;
  const std::unique_ptr<char[]> buffer(new char[kChunk]);
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  while (true) {
    const ssize_t got = ::read(fd, buffer.get(), kChunk);
    if (got > 0) {
      XXH3_64bits_update(&state, buffer.get(), static_cast<size_t>(got));
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": read error: " + std::strerror(err));
    }
  }
  ::close(fd);
  return fmt::format("{:016x}", XXH3_64bits_digest(&state));
}

std::string ManifestPath(const std::string& output) {
  const fs::path p(output);
  return (p.parent_path() / ("." + p.filename().string() + ".rigel-manifest")).string();
}

bool ManifestMatches(const std::string& output, const Provenance& provenance) {
  std::ifstream in(ManifestPath(output));
  if (!in) return false;
  try {
    const nlohmann::json m = nlohmann::json::parse(in);
    if (m.at("input_hash") != provenance.input_hash ||
        m.at("recipe_hash") != provenance.recipe_hash || m.at("version") != provenance.version) {
      return false;
    }
    std::error_code ec;
    if (!m.contains("files")) {  // written by rigel 0.x before takes: the output alone
      return fs::is_regular_file(output, ec) && m.at("output_hash") == HashFile(output);
    }
    const fs::path folder = fs::path(output).parent_path();
    if (!m.at("files").is_object() || m.at("files").empty()) return false;
    for (const auto& [name, hash] : m.at("files").items()) {
      const fs::path file = folder / name;
      if (fs::path(name).has_parent_path() || !fs::is_regular_file(file, ec) ||
          hash != HashFile(file.string())) {
        return false;
      }
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void WriteManifest(const std::string& output, const Provenance& provenance,
                   const std::vector<std::string>& files) {
  nlohmann::json hashes = nlohmann::json::object();
  for (const std::string& file : files.empty() ? std::vector<std::string>{output} : files) {
    hashes[fs::path(file).filename().string()] = HashFile(file);
  }
  const nlohmann::json m = {{"input_hash", provenance.input_hash},
                            {"recipe_hash", provenance.recipe_hash},
                            {"version", provenance.version},
                            {"files", hashes}};
  // Not fsynced: the outputs it vouches for already are, and a lost manifest only means the clip
  // is baked again.
  WriteFileAtomically(ManifestPath(output),
                      m.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                      /*durable=*/false);
}

int RemoveStaleTemporaries(const std::vector<std::string>& outputs) {
  // Temporaries AtomicFile makes for an output and for its manifest, per folder.
  std::map<fs::path, std::vector<std::string>> prefixes;
  for (const std::string& output : outputs) {
    const fs::path p(output);
    for (const fs::path& target : {p, fs::path(ManifestPath(output))}) {
      prefixes[p.parent_path()].push_back("." + target.filename().string() + ".tmp.");
    }
  }
  int removed = 0;
  std::error_code ec;
  for (const auto& [folder, names] : prefixes) {
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec), end;
         !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      for (const std::string& prefix : names) {
        if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) {
          stale.push_back(it->path());
          break;
        }
      }
    }
    for (const fs::path& p : stale) removed += fs::remove(p, ec) ? 1 : 0;
  }
  return removed;
}

}  // namespace rigel::batch
