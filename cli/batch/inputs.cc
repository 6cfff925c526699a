// Collecting a batch's inputs (files, folders, @lists), refusing outputs that would overwrite
// them, and sharding.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
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

// fs::path::stem of a file name: without its extension (from the last dot, unless the name
// starts with it or is "." or "..").
std::string_view StemOf(std::string_view name) {
  if (name == "." || name == "..") return name;
  const std::size_t dot = name.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

// The file name of a path: what follows its last separator.
std::string_view NameOf(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// a1 a2 against b1 b2 (each concatenated), as std::string compares: <0, 0, >0.
int Compare(std::string_view a1, std::string_view a2, std::string_view b1, std::string_view b2) {
  const std::size_t na = a1.size() + a2.size(), nb = b1.size() + b2.size();
  for (std::size_t i = 0; i < na && i < nb; ++i) {
    const auto x = static_cast<unsigned char>(i < a1.size() ? a1[i] : a2[i - a1.size()]);
    const auto y = static_cast<unsigned char>(i < b1.size() ? b1[i] : b2[i - b1.size()]);
    if (x != y) return x < y ? -1 : 1;
  }
  return na < nb ? -1 : (na > nb ? 1 : 0);
}

constexpr std::uint32_t kFolderMask = (std::uint32_t{1} << 30) - 1;

void AddPath(const std::string& arg, const fs::path& base,
             const std::vector<std::string>& extensions, InputList* out) {
  fs::path p(arg);
  if (p.is_relative() && !base.empty()) p = base / p;
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    const std::string& folder = p.native();
    const std::string prefix = folder.empty() || folder.back() == '/' ? folder : folder + '/';
    for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string ext = Lower(it->path().extension().string());
      if (std::find(extensions.begin(), extensions.end(), ext) == extensions.end()) continue;
      // The iterator's paths are the folder's, a separator and the path below it: stored once.
      const std::string& path = it->path().native();
      if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0) {
        out->AddBelow(folder, std::string_view(path).substr(prefix.size()));
      } else {
        out->Add({path, WithoutExtension(fs::relative(it->path(), p))});
      }
    }
    return;
  }
  // A missing file is kept: it fails as its clip ("cannot open: No such file or directory") and
  // the batch goes on, like any other unreadable input.
  out->AddFile(p.native());
}

}  // namespace

InputList::InputList(const std::vector<Input>& inputs) {
  for (const Input& input : inputs) Add(input);
}

std::uint32_t InputList::Append(std::string_view a, std::string_view b) {
  const std::size_t at = text_.size();
  if (at + a.size() + b.size() + 2 > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError("too many inputs: their paths pass 4 GiB");
  }
  text_.append(a);
  text_.push_back('\0');
  if (!b.empty()) {
    text_.append(b);
    text_.push_back('\0');
  }
  return static_cast<std::uint32_t>(at);
}

void InputList::AddBelow(std::string_view folder, std::string_view below) {
  const bool separator = folder.empty() || folder.back() == '/';
  if (folders_.empty() || folders_.back().size() != folder.size() + (separator ? 0 : 1) ||
      folders_.back().compare(0, folder.size(), folder) != 0) {
    if (folders_.size() > kFolderMask) throw UsageError("too many input folders");
    folders_.emplace_back(folder);
    if (!separator) folders_.back().push_back('/');
  }
  const auto index = static_cast<std::uint32_t>(folders_.size() - 1);
  entries_.push_back({Append(below), (std::uint32_t{kBelow} << 30) | index});
}

void InputList::AddFile(std::string_view path) {
  entries_.push_back({Append(path), std::uint32_t{kFile} << 30});
}

void InputList::Add(const Input& input) {
  // A given stem is stored after the path, even when empty (then the path's text ends the entry
  // and the stem is the empty string after it).
  const std::uint32_t at = Append(input.path, input.stem);
  if (input.stem.empty()) text_.push_back('\0');
  entries_.push_back({at, std::uint32_t{kGiven} << 30});
}

std::string_view InputList::Folder(const Entry& e) const {
  return KindOf(e) == kBelow ? std::string_view(folders_[e.folder & kFolderMask])
                             : std::string_view();
}

std::string InputList::path(std::size_t i) const {
  const Entry& e = entries_[i];
  std::string path(Folder(e));
  path += Text(e);
  return path;
}

std::string_view InputList::stem(std::size_t i) const {
  const Entry& e = entries_[i];
  const std::string_view text = Text(e);
  switch (KindOf(e)) {
    case kBelow: {
      // WithoutExtension of the path below the folder: its folders, then its name's stem.
      const std::string_view name = NameOf(text);
      return text.substr(0, text.size() - name.size() + StemOf(name).size());
    }
    case kFile:
      return StemOf(NameOf(text));
    default:
      return text_.data() + e.text + text.size() + 1;
  }
}

bool InputList::Less(const Entry& a, const Entry& b) const {
  if (KindOf(a) == kBelow && a.folder == b.folder) return Text(a) < Text(b);
  return Compare(Folder(a), Text(a), Folder(b), Text(b)) < 0;
}

void InputList::SortUnique() {
  std::sort(entries_.begin(), entries_.end(),
            [this](const Entry& a, const Entry& b) { return Less(a, b); });
  entries_.erase(std::unique(entries_.begin(), entries_.end(),
                             [this](const Entry& a, const Entry& b) {
                               if (!Less(a, b) && !Less(b, a)) return true;
                               const std::string pa = std::string(Folder(a)) += Text(a);
                               const std::string pb = std::string(Folder(b)) += Text(b);
                               std::error_code ec;
                               return fs::equivalent(pa, pb, ec);
                             }),
                 entries_.end());
  entries_.shrink_to_fit();
  text_.shrink_to_fit();
}

InputList InputList::Every(std::size_t count, std::size_t index) const {
  InputList out;
  out.folders_ = folders_;
  out.text_ = text_;
  for (std::size_t i = index; i < entries_.size(); i += count) out.entries_.push_back(entries_[i]);
  return out;
}

InputList CollectInputs(const std::vector<std::string>& args,
                        const std::vector<std::string>& extensions) {
  InputList inputs;
  for (const std::string& arg : args) {
    if (!arg.empty() && arg[0] == '@') {
      const fs::path list(arg.substr(1));
      std::ifstream in(list);
      if (!in) throw UsageError(fmt::format("{}: cannot read the input list", list.string()));
      std::string line;
      while (std::getline(in, line)) {
        while (!line.empty() &&
               (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
          line.pop_back();
        }
        const size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        AddPath(line.substr(start), list.parent_path(), extensions, &inputs);
      }
      continue;
    }
    AddPath(arg, fs::path(), extensions, &inputs);
  }
  inputs.SortUnique();
  if (inputs.empty()) throw UsageError("no input files");
  // Two inputs of one stem: the first input (in path order) that repeats an earlier one's stem,
  // named with the first of that stem. Indexes sorted by stem (4 bytes an input, not a map).
  std::vector<std::uint32_t> by_stem(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) by_stem[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(by_stem.begin(), by_stem.end(), [&inputs](std::uint32_t a, std::uint32_t b) {
    return inputs.stem(a) < inputs.stem(b);
  });
  std::optional<std::pair<std::uint32_t, std::uint32_t>> clash;  // first of the stem, repeat
  for (std::size_t k = 1, group = 0; k < by_stem.size(); ++k) {
    if (inputs.stem(by_stem[k]) != inputs.stem(by_stem[group])) {
      group = k;
    } else if (!clash || by_stem[k] < clash->second) {
      clash = {by_stem[group], by_stem[k]};
    }
  }
  if (clash) {
    throw UsageError(fmt::format("{} and {} would both write the output '{}'",
                                 inputs.path(clash->first), inputs.path(clash->second),
                                 inputs.stem(clash->first)));
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
    const auto& input = inputs[i];
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

// A file id as one number, for an index (matches are confirmed on the ids themselves).
std::uint64_t IdKey(const std::pair<dev_t, ino_t>& id) {
  return static_cast<std::uint64_t>(id.second) * 0x9E3779B97F4A7C15ull ^
         static_cast<std::uint64_t>(id.first);
}

// Throws when one of `files` is an input, a hard link or a symlink to one. `inputs` and `files`
// are read by index (size(), operator[] giving a path), each path made as it is needed.
template <typename Paths, typename Files>
void CheckFiles(const Paths& inputs, const Files& files) {
  // Only a few things are indexed (16 bytes each, with its position): the inputs that do not
  // exist, by the hash of their resolved path, and the files that exist, by their file id. A
  // fresh batch's outputs do not exist yet, so its index is empty (maps of every input's id and
  // fs::path took about 500 bytes an input, the coordinator's peak at 100,000 clips); a resumed
  // batch indexes its outputs. Sorted stable: the first of a key first.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> missing_inputs, existing_files;
  const std::hash<std::string> hash;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& input = inputs[i];
    if (!input.empty() && !FileId(input)) {
      missing_inputs.emplace_back(hash(Resolved(input).native()), static_cast<std::uint32_t>(i));
    }
  }
  const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  const auto first_of = [&by_key](const auto& index, std::uint64_t key) {
    return std::lower_bound(index.begin(), index.end(), std::make_pair(key, std::uint32_t{0}),
                            by_key);
  };
  std::stable_sort(missing_inputs.begin(), missing_inputs.end(), by_key);
  // For each file an input matches: the first input of its resolved path, the first of its id.
  struct Match {
    std::optional<std::size_t> same_path, same_id;
  };
  std::map<std::size_t, Match> matches;  // by file index: the first one is refused
  // A file that does not exist can only have the resolved path of an input that does not exist.
  for (std::size_t k = 0; k < files.size(); ++k) {
    const auto& file = files[k];
    if (file.empty()) continue;
    if (const auto id = FileId(file)) {
      existing_files.emplace_back(IdKey(*id), static_cast<std::uint32_t>(k));
      continue;
    }
    if (missing_inputs.empty()) continue;
    const fs::path resolved = Resolved(file);
    const std::uint64_t key = hash(resolved.native());
    for (auto it = first_of(missing_inputs, key); it != missing_inputs.end() && it->first == key;
         ++it) {
      if (Resolved(inputs[it->second]) == resolved) {
        matches[k].same_path = it->second;
        break;
      }
    }
  }
  // A file that exists is the same file as an input when their ids agree.
  std::stable_sort(existing_files.begin(), existing_files.end(), by_key);
  for (std::size_t i = 0; i < inputs.size() && !existing_files.empty(); ++i) {
    const auto& input = inputs[i];
    if (input.empty()) continue;
    const auto id = FileId(input);
    if (!id) continue;
    std::optional<fs::path> resolved;
    for (auto it = first_of(existing_files, IdKey(*id));
         it != existing_files.end() && it->first == IdKey(*id); ++it) {
      if (FileId(files[it->second]) != id) continue;  // another id of the same key
      Match& m = matches[it->second];
      if (!m.same_id) m.same_id = i;
      if (!resolved) resolved = Resolved(input);
      if (!m.same_path && Resolved(files[it->second]) == *resolved) m.same_path = i;
    }
  }
  for (const auto& [k, m] : matches) {
    const auto& output = files[k];
    const auto& input = inputs[m.same_path ? *m.same_path : *m.same_id];
    std::error_code ec;
    const char* how = fs::is_symlink(fs::symlink_status(output, ec)) ? "a symlink to"
                      : m.same_path                                  ? "the same file as"
                                                                     : "a hard link to";
    throw UsageError(
        fmt::format("the output '{}' is {} the input '{}': it would overwrite the input ({})",
                    output, how, input, kNever));
  }
}

// The paths of a batch's inputs, made one at a time (no copy of a path per input).
struct InputPaths {
  const InputList& inputs;
  std::size_t size() const { return inputs.size(); }
  std::string operator[](std::size_t i) const { return inputs.path(i); }
};

// A plan's inputs: the batch's, then the others.
struct PlanPaths {
  const WritePlan& plan;
  std::size_t batch() const { return plan.batch ? plan.batch->size() : 0; }
  std::size_t size() const { return batch() + plan.inputs.size(); }
  std::string operator[](std::size_t i) const {
    return i < batch() ? plan.batch->path(i) : plan.inputs[i - batch()];
  }
};

// The outputs of a batch's inputs (OutputPath), made one at a time.
struct OutputPaths {
  const InputList& inputs;
  const RunOptions& options;
  std::size_t size() const { return inputs.size(); }
  std::string operator[](std::size_t i) const { return OutputPath(options, inputs.stem(i)); }
};

}  // namespace

void CheckInputsNotOverwritten(const WritePlan& plan) {
  const PlanPaths inputs{plan};
  for (const auto& [folder, option] : plan.folders) {
    if (!folder.empty()) CheckFolder(inputs, folder, option);
  }
  CheckFiles(inputs, plan.files);
}

void CheckInputsNotOverwritten(const std::vector<std::string>& inputs, const std::string& out_dir,
                               const std::vector<std::string>& outputs) {
  if (!out_dir.empty()) CheckFolder(inputs, out_dir, "--out");
  CheckFiles(inputs, outputs);
}

void CheckInputsNotOverwritten(const InputList& inputs, const RunOptions& options) {
  const InputPaths paths{inputs};
  if (!options.out_dir.empty()) CheckFolder(paths, options.out_dir, "--out");
  CheckFiles(paths, OutputPaths{inputs, options});
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

InputList SelectShard(const InputList& inputs, Shard shard) {
  return inputs.Every(static_cast<std::size_t>(shard.count), static_cast<std::size_t>(shard.index));
}

}  // namespace rigel::batch
