// Batch processing shared by `rigel bake` and `rigel retarget`: collecting inputs (files, folders,
// @lists), deterministic sharding, output naming, resume manifests, parallel workers, progress
// and the JSON report.
#ifndef RIGEL_CLI_BATCH_BATCH_H_
#define RIGEL_CLI_BATCH_BATCH_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ik/bake.h"

namespace rigel::batch {

// A problem with the command line itself (exit code 2).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

struct Input {
  // The file to read, as given or found.
  std::string path;
  // Output name relative to the output folder, without extension: the file's stem, or its path
  // relative to the folder it was found in (so folders keep their structure).
  std::string stem;
};

// A batch's inputs, sorted by path, held compactly: a file found in a folder keeps only its path
// below that folder (the folder is stored once), and its stem is read from that text; about
// 9 bytes an input beyond the text (a std::vector<Input> took some 130 bytes an input, most of a
// 100,000-clip batch coordinator's memory). An element is made on demand as an Input.
class InputList {
 public:
  InputList() = default;
  // Each input as given (path and stem stored whole), in the given order.
  InputList(const std::vector<Input>& inputs);  // NOLINT: implicit, a list of inputs is one

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  Input operator[](std::size_t i) const { return {path(i), std::string(stem(i))}; }
  std::string path(std::size_t i) const;
  std::string_view stem(std::size_t i) const;

  // Appends a file found in folder `folder` (`below`: its path below it, "sub/a.bvh"): its path
  // is the folder's, a separator and `below`; its stem is `below` without the extension.
  // Consecutive calls with the same folder store it once.
  void AddBelow(std::string_view folder, std::string_view below);
  // Appends a file given by its path: its stem is its file name without the extension.
  void AddFile(std::string_view path);
  // Appends an input as given.
  void Add(const Input& input);
  // Sorts by path, dropping repeats (the same path, or the same file: fs::equivalent) after the
  // first; frees the slack the list grew with.
  void SortUnique();
  // The inputs whose position is `index` modulo `count` (a shard).
  InputList Every(std::size_t count, std::size_t index) const;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Input;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Input;
    Iterator(const InputList* list, std::size_t i) : list_(list), i_(i) {}
    Input operator*() const { return (*list_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }

   private:
    const InputList* list_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  // How an entry's stem is read from its text.
  enum Kind : std::uint32_t { kBelow = 0, kFile = 1, kGiven = 2 };
  struct Entry {
    std::uint32_t text;    // offset of its text in `text_`: NUL-terminated path or path below
                           // the folder, then for kGiven its stem, NUL-terminated
    std::uint32_t folder;  // kind in the top two bits, then the index in `folders_`
  };
  std::uint32_t Append(std::string_view a, std::string_view b = {});
  std::string_view Text(const Entry& e) const { return text_.data() + e.text; }
  std::string_view Folder(const Entry& e) const;
  static Kind KindOf(const Entry& e) { return static_cast<Kind>(e.folder >> 30); }
  // Whether entry a's path sorts before entry b's.
  bool Less(const Entry& a, const Entry& b) const;

  std::vector<Entry> entries_;
  std::string text_;
  std::vector<std::string> folders_;  // each with its trailing separator
};

// Expands command-line inputs: a file is taken as is; a folder is searched recursively for files
// whose lower-case extension is in `extensions`; "@list.txt" reads one input per line (blank
// lines and lines starting with '#' ignored; relative paths are relative to the list's folder).
// The result is sorted by path, duplicates removed. A path that does not exist is kept (it fails
// as a clip, like any unreadable file). Throws UsageError for an unreadable list, an empty
// result, or two inputs that would write the same output.
InputList CollectInputs(const std::vector<std::string>& args,
                        const std::vector<std::string>& extensions);

// Inputs are never written. Throws UsageError (one line naming both paths) when `out_dir`
// (empty: no output folder) is the folder of an input or contains one, or when one of `outputs`
// is an input, a hard link to one or a symlink to one. Folders and files are compared by
// st_dev/st_ino, through symlinks and bind mounts, and by their resolved paths. Call it before
// anything is written (Run does, first thing).
void CheckInputsNotOverwritten(const std::vector<std::string>& inputs, const std::string& out_dir,
                               const std::vector<std::string>& outputs);
struct RunOptions;
// The same over a batch's inputs and their outputs (OutputPath of each input, made as it is
// compared): no path of an input or an output is kept. Only an output that exists can be the
// same file as an input the folder check has not already refused (it is inside `out_dir`), so
// the index it builds holds the inputs' file ids (16 bytes an input), not their paths.
void CheckInputsNotOverwritten(const InputList& inputs, const RunOptions& options);

// Everything a command reads and writes, for the one inputs-are-never-written check: inputs are
// the clips, the rig script, the retarget target and map; folders are written into (--out,
// --frames-report, --preview, each with the option that names it); files are written (the
// outputs, --report).
struct WritePlan {
  std::vector<std::string> inputs;
  std::vector<std::pair<std::string, std::string>> folders;  // path, option
  std::vector<std::string> files;
  const InputList* batch = nullptr;  // a batch's inputs, read in place: inputs before `inputs`
};
// The same check over a whole plan: any folder that is or contains an input, any file that is an
// input, a hard link or a symlink to one, throws UsageError naming both.
void CheckInputsNotOverwritten(const WritePlan& plan);

// "K/N" with 0 <= K < N.
struct Shard {
  int index = 0;
  int count = 1;
};
// Parses "K/N". Throws UsageError naming the expected form.
Shard ParseShard(std::string_view text);
// The inputs of shard K: every input whose position in the sorted list is K modulo N.
InputList SelectShard(const InputList& inputs, Shard shard);

// XXH3 (64-bit, seed 0) of a file's bytes, as 16 hex digits: about 20 GB/s where the FNV-1a it
// replaced ran at 0.7 GB/s (11 % of a bake's time went to hashing inputs and outputs). Throws
// std::runtime_error when unreadable.
std::string HashFile(const std::string& path);
std::string HashBytes(std::string_view bytes);

// What an output was made from. An output is up to date when its manifest (a small JSON file
// beside it, ".NAME.rigel-manifest") holds the same values.
struct Provenance {
  std::string input_hash;
  std::string recipe_hash;  // rig script (bake) or target + map (retarget), with options
  std::string version;      // rigel version
};
std::string ManifestPath(const std::string& output);
// Whether `output`'s manifest holds `provenance` and every file it lists (the output itself, or
// the per-take files of a multi-take input) exists with the hash it recorded.
bool ManifestMatches(const std::string& output, const Provenance& provenance);
// Records `provenance` and the hashes of `files` (in the output's folder; empty: the output
// itself) in `output`'s manifest.
void WriteManifest(const std::string& output, const Provenance& provenance,
                   const std::vector<std::string>& files = {});
// Removes the temporary files (".NAME.tmp.XXXXXX") a killed run left for these outputs and their
// manifests. Only these: other runs writing other outputs into the same folder (farm shards)
// keep their files in progress.
int RemoveStaleTemporaries(const std::vector<std::string>& outputs);
// The same for `count` outputs made one at a time by `output` (twice each: the folders to look
// in, then the names of the temporaries found there), none kept.
int RemoveStaleTemporaries(std::size_t count,
                           const std::function<std::string(std::size_t)>& output);

// Seconds from `start` to now (a clip's phases, PhaseSeconds).
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Where a clip's time went, in seconds: reading the input, running the processor's work (the rig
// script with its solves, or the retarget), writing the outputs, and the frames report.
struct PhaseSeconds {
  double read = 0, script = 0, write = 0, report = 0;
};

struct ClipReport {
  std::string input;
  std::string output;
  // "ok", "suspect" (written, but a plausibility check broke: core/check/plausibility.h),
  // "failed", "skipped" (up to date, with --resume).
  std::string status;
  std::string reason;  // why it failed, or why it is suspect
  int frames = 0;
  double seconds = 0;
  PhaseSeconds phases;
  ik::BakeSummary solver;  // solver statistics (all zero when the processor solved nothing)
  nlohmann::json extra;    // processor-specific figures (retarget quality metrics), may be null
  // What the output could not keep (e.g. takes beyond the first); also printed on stderr.
  std::vector<std::string> warnings;
  // With --frames-report: the clip's frames report (path) and its counts (flips, pops,
  // unreachable and limit frames, largest foot slide, worst frames); empty / null otherwise.
  std::string frames_report;
  nlohmann::json frames_evidence;
  // The plausibility checks of the output (cli/checks_output.h ChecksJson): the checks that ran,
  // the findings (check, reason, worst frame); null when none ran.
  nlohmann::json checks;
  // With --reduce-keys (cli/reduce_keys.h KeysJson): keys before and after, the bound and the
  // largest error; null otherwise.
  nlohmann::json keys;
  // The take (clip) of the input this report is about: set on the rows of a multi-take input.
  std::string take;
  // A multi-take input: one report per take (take, output, frames, seconds, solver, metrics,
  // warnings, frames report), in the input's order. The batch report has a row per take
  // (ReportRows). Empty for an input of one take.
  std::vector<ClipReport> takes;
};

// Whether a clip's status means its output was written: "ok" or "suspect".
inline bool Written(std::string_view status) { return status == "ok" || status == "suspect"; }

// The rows of the batch report: one per input, or one per take for a multi-take input (the
// input's status, reason and warnings carried onto its rows: the warnings onto the first, and the
// input's seconds beyond the takes' own onto the first, so the sums stay).
std::vector<ClipReport> ReportRows(const std::vector<ClipReport>& reports);

// The files a processed input wrote: its takes' outputs (each once), or `output`.
std::vector<std::string> WrittenFiles(const ClipReport& report, const std::string& output);

// Turns one input into one output file (written atomically), or, for a multi-take input in a
// format of one take per file, into one file per take (ClipReport::takes names them). Runs on
// worker threads, several at once: it must not share mutable state between calls. Errors are
// reported by throwing; the runner catches them and marks the clip failed with the exception's
// message.
using Processor = std::function<ClipReport(const Input& input, const std::string& output)>;

struct RunOptions {
  std::string out_dir;
  std::string extension;  // ".bvh", ".glb", ...
  int jobs = 1;           // worker threads; 0 = one per core
  bool resume = false;
  Provenance recipe;  // recipe_hash and version; input_hash is filled per input
  // Progress bar on stderr (a terminal); otherwise only the final line.
  bool progress = false;
  std::string command = "bake";  // for messages

  // Worker processes (docs/bake.md, "Workers"). When `processes` is set, `jobs` worker processes
  // are forked from this one (which must be single-threaded at that moment) and reused clip after
  // clip; `process` runs in them, this process only hands out clips, writes the manifests and
  // enforces the limits. A worker that passes a limit or dies fails only its clip, and a fresh
  // worker takes the next clip. Otherwise `process` runs on `jobs` threads of this process.
  bool processes = false;
  // Address-space budget of each worker in MiB (RLIMIT_AS, soft and hard) on top of what the
  // worker maps when it starts; 0 = none. A clip whose allocation fails is reported
  // "out of memory (--memory-mb N)".
  std::size_t memory_mb = 0;
  // Wall-clock seconds a clip may take in a worker (0 = none); past it plus `timeout_grace` the
  // worker is killed (SIGKILL) and the clip fails "timed out after N s (--timeout)". The grace
  // lets a cooperative limit inside the worker (the Lua count hook) answer first.
  double timeout = 0;
  double timeout_grace = 1.0;
  // Runs in each worker before its first clip (to confine it, see importers/confine.h). When it
  // throws, every clip given to that worker fails with the message.
  std::function<void()> worker_setup;
};

// The rows of a batch report kept on disk as their clips finish, not in memory: each input's rows
// are dumped (the text --report holds) into an unnamed temporary file (O_TMPFILE in $TMPDIR, or
// /tmp: nothing to remove, even when the process is killed), and this keeps 12 bytes per input
// (where its text is). The summary is summed in input order as inputs complete (a few finished
// out of order wait for the ones before them), so the report is the one ReportText makes of the
// same reports, byte for byte. Add is thread-safe. The file is written with pwrite from a buffer
// of this process (no stdio stream a forked worker could flush twice).
class ReportSpill {
 public:
  // `inputs`: how many inputs the batch has. Throws std::runtime_error when no temporary file can
  // be made.
  explicit ReportSpill(std::size_t inputs);
  ~ReportSpill();
  ReportSpill(const ReportSpill&) = delete;
  ReportSpill& operator=(const ReportSpill&) = delete;

  // Input `index`'s report (once per input). A write error is kept and thrown by Emit.
  void Add(std::size_t index, const ClipReport& report);
  // Inputs added whose status is "failed".
  int failed() const { return static_cast<int>(failed_.size()); }
  // The report's rows in input order (failed ones only with `failed_only`), read back from the
  // file with the fields a row shows (input, output, status, reason, frames, warnings, frames
  // report, take; not the solver statistics or metrics).
  void ForEachRow(const std::function<void(const ClipReport&)>& fn, bool failed_only) const;
  // The report's text to `sink` (see ReportText).
  void Emit(const RunOptions& options, const nlohmann::json& extra,
            const std::function<void(std::string_view)>& sink) const;
  // Emit to `path`, atomically (AtomicFile). Throws ExportError.
  void Write(const std::string& path, const RunOptions& options,
             const nlohmann::json& extra = nlohmann::json::object()) const;

 private:
  void Flush() const;
  std::string Read(std::size_t index) const;

  int fd_ = -1;
  std::size_t inputs_;
  std::vector<std::uint64_t> offset_;  // per input, allocated with the first Add (after forks)
  std::vector<std::uint32_t> length_;  // bytes of its rows' text, 0: not added
  std::vector<std::uint32_t> failed_;  // inputs whose status is "failed"
  mutable std::string buffer_;         // text not yet written, starting at file offset `written_`
  mutable std::uint64_t written_ = 0;
  std::uint64_t end_ = 0;  // file offset after the buffered text
  std::string error_;      // the first write error, thrown by Emit and ForEachRow
  std::unique_ptr<struct SummaryState> summary_;
  mutable std::mutex mutex_;
};

// Runs `process` over `inputs` on `options.jobs` threads. Reports come back in input order.
// First it refuses (UsageError) outputs that could overwrite an input
// (CheckInputsNotOverwritten), then it prepares the output folder: creates it, removes the
// temporary files an interrupted run left there (saying so on stderr), and turns off fsync for
// atomic writes (the manifests record each output's hash, see exporters/atomic_file.h).
std::vector<ClipReport> Run(const InputList& inputs, const RunOptions& options,
                            const Processor& process);
// The same, each input's report handed to `spill` as it completes instead of kept: what `rigel
// bake` runs, so that the coordinator's memory does not grow with the batch.
void Run(const InputList& inputs, const RunOptions& options, const Processor& process,
         ReportSpill* spill);

// DIR/<stem><extension>: where Run writes an input's output.
std::string OutputPath(const RunOptions& options, const Input& input);
std::string OutputPath(const RunOptions& options, std::string_view stem);

// One clip of the report as JSON, and back (workers send their reports this way).
nlohmann::json ClipReportJson(const ClipReport& report);
ClipReport ClipReportFromJson(const nlohmann::json& json);

// The default --memory-mb for `workers` worker processes: min(4096, RAM / (2 * workers)) MiB.
std::size_t DefaultWorkerMemoryMb(int workers);

// "11 (SEGV)": a signal number and its abbreviation.
std::string SignalName(int signal);

// The JSON report: {"rigel_version", "command", "clips": [...], "summary": {...}}. The summary
// sums the clips' phases ("phases_s") and gives the peak resident memory of this process and of
// its worker processes so far ("peak_rss_mb": {"coordinator", "workers"}).
nlohmann::json ReportJson(const std::vector<ClipReport>& reports, const RunOptions& options);
// ReportJson's document as the text written to --report (dump with indent 2, plus a newline),
// with the command's own fields `extra` (an object) beside the standard ones; the clip rows are
// dumped one by one (no JSON document of the whole batch).
std::string ReportText(const std::vector<ClipReport>& reports, const RunOptions& options,
                       const nlohmann::json& extra = nlohmann::json::object());
// ReportText's text written to `path` atomically as it is made (AtomicFile), without holding it:
// what --report writes. Throws ExportError.
void WriteReport(const std::string& path, const std::vector<ClipReport>& reports,
                 const RunOptions& options, const nlohmann::json& extra = nlohmann::json::object());
// Merges several reports (shards) into one, clips sorted by input. Throws UsageError when a
// report is unreadable.
nlohmann::json MergeReports(const std::vector<std::string>& paths);

}  // namespace rigel::batch

#endif  // RIGEL_CLI_BATCH_BATCH_H_
