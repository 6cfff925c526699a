// Resume manifests: hashes of what an output was made from, kept beside it; and the removal of
// the temporaries an interrupted run left.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

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

namespace {

// A manifest is a few hundred bytes (a file and its hash per take): one over this is not ours
// (a script may write into --out) and is not read, so the supervisor's memory stays bounded.
constexpr off_t kMaxManifestBytes = 64 * 1024;

// The text of the manifest at `path`, or nullopt when it is absent, not a regular file (not
// followed through a symlink) or larger than kMaxManifestBytes.
std::optional<std::string> ReadManifestText(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxManifestBytes) {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got == bytes.size()) text = std::move(bytes);
  }
  ::close(fd);
  return text;
}

}  // namespace

bool ManifestMatches(const std::string& output, const Provenance& provenance) {
  const std::optional<std::string> text = ReadManifestText(ManifestPath(output));
  if (!text) return false;
  try {
    const nlohmann::json m = nlohmann::json::parse(*text);
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

namespace {

// Removes the temporary `path` unless its writer still holds it (AtomicFile keeps an flock on its
// temporary until it is closed): another run writing into the same folder keeps its files.
bool RemoveUnlessInUse(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(fd);
    return false;
  }
  std::error_code ec;
  const bool removed = fs::remove(path, ec);
  if (fd >= 0) ::close(fd);
  return removed;
}

}  // namespace

int RemoveStaleTemporaries(const std::vector<std::string>& outputs) {
  return RemoveStaleTemporaries(outputs.size(), [&outputs](std::size_t i) { return outputs[i]; });
}

int RemoveStaleTemporaries(std::size_t count,
                           const std::function<std::string(std::size_t)>& output) {
  // An output's folder and file name ("" for the working folder).
  const auto split = [](const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos
               ? std::make_pair(std::string(), path)
               : std::make_pair(fs::path(path).parent_path().string(), path.substr(slash + 1));
  };
  // The folders the outputs go to (a few: the outputs are not kept, most of a 100,000-clip
  // batch's peak memory once).
  std::set<std::string> folders;
  for (std::size_t i = 0; i < count; ++i) folders.insert(split(output(i)).first);
  // The temporaries in them, by the folder and name of the file each was made for: a temporary
  // AtomicFile makes for NAME is ".NAME.tmp.XXXXXX"; an output's manifest is
  // ".OUTPUT.rigel-manifest".
  constexpr std::string_view kTmp = ".tmp.", kManifest = ".rigel-manifest";
  std::map<std::pair<std::string, std::string>, std::vector<fs::path>> temporaries;
  std::error_code ec;
  for (const std::string& folder : folders) {
    for (fs::directory_iterator it(folder.empty() ? fs::path(".") : fs::path(folder), ec), end;
         !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      const std::string_view name(file);
      if (name.size() < 1 + kTmp.size() + 6 || name[0] != '.' ||
          name.substr(name.size() - 6 - kTmp.size(), kTmp.size()) != kTmp) {
        continue;
      }
      std::string_view target = name.substr(1, name.size() - 1 - kTmp.size() - 6);
      if (target.size() > 1 + kManifest.size() && target[0] == '.' &&
          target.substr(target.size() - kManifest.size()) == kManifest) {
        // A manifest's temporary, or an output named like one: either may be the one.
        temporaries[{folder, std::string(target.substr(1, target.size() - 1 - kManifest.size()))}]
            .push_back(it->path());
      }
      temporaries[{folder, std::string(target)}].push_back(it->path());
    }
  }
  if (temporaries.empty()) return 0;
  std::set<fs::path> stale;
  for (std::size_t i = 0; i < count; ++i) {
    const auto found = temporaries.find(split(output(i)));
    if (found != temporaries.end()) stale.insert(found->second.begin(), found->second.end());
  }
  int removed = 0;
  for (const fs::path& p : stale) removed += RemoveUnlessInUse(p) ? 1 : 0;
  return removed;
}

}  // namespace rigel::batch
