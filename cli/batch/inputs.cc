// Collecting a batch's inputs (files, folders, @lists), refusing outputs that would overwrite
// them, and sharding.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "cli/batch/batch.h"

namespace fs = std::filesystem;

namespace rigel::batch {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string WithoutExtension(const fs::path& p) {
  return (p.parent_path() / p.stem()).generic_string();
}

void AddPath(const std::string& arg, const fs::path& base,
             const std::vector<std::string>& extensions, std::vector<Input>* out,
             const std::string& origin) {
  fs::path p(arg);
  if (p.is_relative() && !base.empty()) p = base / p;
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string ext = Lower(it->path().extension().string());
      if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) {
        // Strings, not fs::paths (their components cost some 300 bytes a file).
        out->push_back({it->path().string(), WithoutExtension(fs::relative(it->path(), p))});
      }
    }
    return;
  }
  // A missing file is kept: it fails as its clip ("cannot open: No such file or directory") and
  // the batch goes on, like any other unreadable input.
  (void)origin;
  out->push_back({p.string(), p.stem().string()});
}

}  // namespace

std::vector<Input> CollectInputs(const std::vector<std::string>& args,
                                 const std::vector<std::string>& extensions) {
  std::vector<Input> inputs;
  for (const std::string& arg : args) {
    if (!arg.empty() && arg[0] == '@') {
      const fs::path list(arg.substr(1));
      std::ifstream in(list);
      if (!in) throw UsageError(fmt::format("{}: cannot read the input list", list.string()));
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        while (!line.empty() &&
               (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
          line.pop_back();
        }
        const size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        AddPath(line.substr(start), list.parent_path(), extensions, &inputs,
                fmt::format(" (listed at {}:{})", list.string(), number));
      }
      continue;
    }
    AddPath(arg, fs::path(), extensions, &inputs, "");
  }
  std::sort(inputs.begin(), inputs.end(),
            [](const Input& a, const Input& b) { return a.path < b.path; });
  inputs.erase(std::unique(inputs.begin(), inputs.end(),
                           [](const Input& a, const Input& b) {
                             std::error_code ec;
                             return a.path == b.path || fs::equivalent(a.path, b.path, ec);
                           }),
               inputs.end());
  if (inputs.empty()) throw UsageError("no input files");
  // Two inputs of one stem: the first input (in path order) that repeats an earlier one's stem,
  // named with the first of that stem. Indexes sorted by stem (4 bytes an input, not a map).
  std::vector<std::uint32_t> by_stem(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) by_stem[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(by_stem.begin(), by_stem.end(), [&inputs](std::uint32_t a, std::uint32_t b) {
    return inputs[a].stem < inputs[b].stem;
  });
  std::optional<std::pair<std::uint32_t, std::uint32_t>> clash;  // first of the stem, repeat
  for (std::size_t k = 1, group = 0; k < by_stem.size(); ++k) {
    if (inputs[by_stem[k]].stem != inputs[by_stem[group]].stem) {
      group = k;
    } else if (!clash || by_stem[k] < clash->second) {
      clash = {by_stem[group], by_stem[k]};
    }
  }
  if (clash) {
    const Input& first = inputs[clash->first];
    throw UsageError(fmt::format("{} and {} would both write the output '{}'", first.path,
                                 inputs[clash->second].path, first.stem));
  }
  return inputs;
}

namespace {

// st_dev/st_ino of what `path` names (through symlinks); nullopt when it does not exist.
std::optional<std::pair<dev_t, ino_t>> FileId(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

fs::path Resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) p = path;
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}

}  // namespace

namespace {

constexpr const char* kNever = "inputs are never written";

// Throws when output folder `folder` (`option` names it in the message) is an input's folder or
// contains one, compared by st_dev/st_ino (through symlinks and bind mounts) and by path.
template <typename Paths>
void CheckFolder(const Paths& inputs, const std::string& folder, const std::string& option) {
  const auto out_id = FileId(folder);
  const fs::path out = Resolved(folder);
  std::map<fs::path, bool> inside;  // folder -> is `folder` or under it (cache)
  auto folder_inside = [&](const fs::path& f) {
    auto [it, fresh] = inside.emplace(f, false);
    if (!fresh) return it->second;
    bool hit = false;
    for (fs::path q = f;; q = q.parent_path()) {
      if (out_id && FileId(q) == out_id) hit = true;
      if (hit || q == q.root_path() || q.empty()) break;
    }
    it->second = hit;
    return hit;
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& input = inputs[i];
    if (input.empty()) continue;
    std::error_code ec;
    const fs::path given = fs::absolute(input, ec).lexically_normal();
    const fs::path resolved = Resolved(input);
    const auto [mismatch, ignored] =
        std::mismatch(out.begin(), out.end(), resolved.begin(), resolved.end());
    (void)ignored;
    const bool lexically_inside = mismatch == out.end() || mismatch->empty();
    if (lexically_inside || folder_inside(given.parent_path()) ||
        folder_inside(resolved.parent_path())) {
      if (option == "--out") {
        throw UsageError(
            fmt::format("the output folder '{}' contains the input '{}': an output could "
                        "overwrite an input ({}); choose another --out",
                        folder, input, kNever));
      }
      throw UsageError(
          fmt::format("the {} folder '{}' contains the input '{}': a file written "
                      "there could overwrite an input ({}); choose another {}",
                      option, folder, input, kNever, option));
    }
  }
}

// Throws when one of `files` is an input, a hard link or a symlink to one.
template <typename Paths>
void CheckFiles(const Paths& inputs, const std::vector<std::string>& files) {
  if (std::all_of(files.begin(), files.end(), [](const std::string& f) { return f.empty(); })) {
    return;
  }
  // Each input's id and the hash of its resolved path, with its index, sorted (stable: the first
  // input of a key first): 24 and 16 bytes an input, where maps of ids and fs::paths took about
  // 500 bytes (the coordinator's peak memory at 100,000 clips).
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::size_t>> by_id;
  std::vector<std::pair<std::size_t, std::size_t>> by_path;
  by_id.reserve(inputs.size());
  by_path.reserve(inputs.size());
  const std::hash<std::string> hash;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;
    if (const auto id = FileId(inputs[i])) by_id.emplace_back(*id, i);
    by_path.emplace_back(hash(Resolved(inputs[i]).native()), i);
  }
  const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::stable_sort(by_id.begin(), by_id.end(), by_key);
  std::stable_sort(by_path.begin(), by_path.end(), by_key);
  for (const std::string& output : files) {
    if (output.empty()) continue;
    const auto id = FileId(output);
    const fs::path resolved = Resolved(output);
    const std::string* same_path = nullptr;  // the first input of the same resolved path
    for (auto it =
             std::lower_bound(by_path.begin(), by_path.end(),
                              std::make_pair(hash(resolved.native()), std::size_t{0}), by_key);
         it != by_path.end() && it->first == hash(resolved.native()) && !same_path; ++it) {
      if (Resolved(inputs[it->second]) == resolved) same_path = &inputs[it->second];
    }
    const std::string* same_id = nullptr;  // the first input of the same id
    if (id) {
      const auto it =
          std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(*id, std::size_t{0}), by_key);
      if (it != by_id.end() && it->first == *id) same_id = &inputs[it->second];
    }
    if (!same_path && !same_id) continue;
    const std::string& input = same_path ? *same_path : *same_id;
    std::error_code ec;
    const char* how = fs::is_symlink(fs::symlink_status(output, ec)) ? "a symlink to"
                      : same_path                                    ? "the same file as"
                                                                     : "a hard link to";
    throw UsageError(
        fmt::format("the output '{}' is {} the input '{}': it would overwrite the input ({})",
                    output, how, input, kNever));
  }
}

// The paths of a batch's inputs, read in place (no copy of a path per input).
struct InputPaths {
  const std::vector<Input>& inputs;
  std::size_t size() const { return inputs.size(); }
  const std::string& operator[](std::size_t i) const { return inputs[i].path; }
};

}  // namespace

void CheckInputsNotOverwritten(const WritePlan& plan) {
  for (const auto& [folder, option] : plan.folders) {
    if (!folder.empty()) CheckFolder(plan.inputs, folder, option);
  }
  CheckFiles(plan.inputs, plan.files);
}

void CheckInputsNotOverwritten(const std::vector<std::string>& inputs, const std::string& out_dir,
                               const std::vector<std::string>& outputs) {
  if (!out_dir.empty()) CheckFolder(inputs, out_dir, "--out");
  CheckFiles(inputs, outputs);
}

void CheckInputsNotOverwritten(const std::vector<Input>& inputs, const std::string& out_dir,
                               const std::vector<std::string>& outputs) {
  const InputPaths paths{inputs};
  if (!out_dir.empty()) CheckFolder(paths, out_dir, "--out");
  CheckFiles(paths, outputs);
}

Shard ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  Shard s;
  try {
    if (slash == std::string_view::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    const std::string k(text.substr(0, slash)), n(text.substr(slash + 1));
    s.index = std::stoi(k, &used);
    if (used != k.size()) throw std::invalid_argument("k");
    s.count = std::stoi(n, &used);
    if (used != n.size()) throw std::invalid_argument("n");
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--shard: expected K/N (e.g. 0/4), found '{}'", text));
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw UsageError(fmt::format("--shard: expected K/N with 0 <= K < N, found '{}'", text));
  }
  return s;
}

std::vector<Input> SelectShard(const std::vector<Input>& inputs, Shard shard) {
  std::vector<Input> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) == shard.index) {
      out.push_back(inputs[i]);
    }
  }
  return out;
}

}  // namespace rigel::batch
