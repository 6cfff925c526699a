#include "importers/bvh_reader.h"

#include <fast_float/fast_float.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "core/body.h"
#include "core/clip_check.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "core/retarget/upside_down.h"
#include "core/skeleton_builder.h"
#include "core/skeleton_utils.h"
#include "importers/bvh_text.h"
#include "importers/bvh_translation_rule.h"
#include "importers/utf8.h"
#include "io/exact_decimal.h"

namespace rigel {
namespace {

using bvh_internal::DecideTranslation;
using bvh_internal::IsSpace;
using bvh_internal::JointVerdict;
using bvh_internal::Quote;

constexpr size_t kChunkBytes = 1 << 20;

// Serves lines (without their line ending) from a file, read in large blocks, or from memory.
// A returned view stays valid until the next call to Next().
class LineReader {
 public:
  LineReader(std::FILE* file, uint64_t file_size) : file_(file), total_(file_size) {
    buffer_.resize(kChunkBytes);
    begin_ = end_ = buffer_.data();
  }
  explicit LineReader(std::string_view text)
      : total_(text.size()), begin_(text.data()), end_(text.data() + text.size()), eof_(true) {}

  bool Next(std::string_view* line) {
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(begin_, '\n', end_ - begin_));
      if (nl) {
        Emit(begin_, nl, line);
        consumed_ += (nl - begin_) + 1;
        begin_ = nl + 1;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        Emit(begin_, end_, line);
        consumed_ += end_ - begin_;
        begin_ = end_;
        return true;
      }
      Refill();
    }
  }

  // 1-based number of the line last returned by Next().
  int line() const { return line_; }
  // Bytes not yet returned.
  uint64_t remaining() const { return total_ - consumed_; }

 private:
  void Emit(const char* b, const char* e, std::string_view* line) {
    if (e > b && e[-1] == '\r') --e;
    *line = std::string_view(b, e - b);
    ++line_;
  }

  void Refill() {
    const size_t kept = end_ - begin_;
    char* data = buffer_.data();
    if (begin_ != data && kept) std::memmove(data, begin_, kept);
    if (kept == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // a very long line
    data = buffer_.data();
    const size_t got = std::fread(data + kept, 1, buffer_.size() - kept, file_);
    if (got == 0) eof_ = true;
    begin_ = data;
    end_ = data + kept + got;
  }

  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  uint64_t total_ = 0;
  uint64_t consumed_ = 0;
  const char* begin_ = nullptr;
  const char* end_ = nullptr;
  bool eof_ = false;
  int line_ = 0;
};

enum class NumberStatus { kOk, kNotNumber, kComma, kNotFinite };

// Parses one number starting at `p` (no leading whitespace). On success `*next` is the first
// character after it, which must be whitespace or `end` for the number to be whole.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

[[gnu::always_inline]] inline NumberStatus ParseNumber(const char* p, const char* end,
                                                       double* value, const char** next) {
  // Fast path for the plain decimals mocap files are made of ("-12.345678", ".5", "90"): at most
  // 15 significant digits, no exponent. mantissa and 10^k are exact doubles, so one division is
  // correctly rounded (Clinger's fast path): the same bits fast_float gives. Anything else
  // (exponent, long digit strings, nan, junk) goes to fast_float below.
  {
    const char* q = p;
    const bool negative = q < end && *q == '-';
    q += negative;
    uint64_t mantissa = 0;
    int digits = 0, fraction = 0;
    while (q < end && static_cast<unsigned>(*q - '0') < 10) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*q - '0');
      ++q;
      ++digits;
    }
    if (q < end && *q == '.') {
      ++q;
      while (q < end && static_cast<unsigned>(*q - '0') < 10) {
        mantissa = mantissa * 10 + static_cast<unsigned>(*q - '0');
        ++q;
        ++digits;
        ++fraction;
      }
    }
    if (digits > 0 && digits <= 15 && (q == end || IsSpace(*q))) {
      const double m = static_cast<double>(mantissa);
      *value = negative ? -(m / kPow10[fraction]) : m / kPow10[fraction];
      *next = q;
      return NumberStatus::kOk;
    }
  }
  const char* start = p;
  if (p < end && *p == '+' && p + 1 < end && *(p + 1) != '-' && *(p + 1) != '+') ++p;
  const auto result = fast_float::from_chars(p, end, *value);
  if (result.ec != std::errc() || result.ptr == p) {
    *next = start;
    return NumberStatus::kNotNumber;
  }
  *next = result.ptr;
  if (result.ptr < end && !IsSpace(*result.ptr)) {
    if (*result.ptr == ',') return NumberStatus::kComma;
    return NumberStatus::kNotNumber;
  }
  if (!std::isfinite(*value)) return NumberStatus::kNotFinite;
  return NumberStatus::kOk;
}

// True when the BVH writer (bvh_writer.cc), given the clip value x that the file's number v
// became (x = v * scale - offset), would write a number other than v: it writes the shortest text
// that maps to x, one of x's preimages, and it is v about half the time. Only then must v be kept
// in Clip::file_values. The writer's own steps: guess x * to_file + offset (-0.0 for a zero
// offset, to keep -0.0), forward d * scale - offset.
bool WriterMisses(double v, double x, double to_file, double scale, double offset) {
  char text[kMaxDecimalChars];
  const char* end = WriteDecimalFor(text, x, x * to_file + (offset == 0 ? -0.0 : offset),
                                    [scale, offset](double d) { return d * scale - offset; });
  double back = 0;
  const auto result = fast_float::from_chars(text, end, back);
  return result.ec != std::errc() || std::bit_cast<uint64_t>(back) != std::bit_cast<uint64_t>(v);
}

// End of the whitespace-delimited token starting at p.
const char* TokenEnd(const char* p, const char* end) {
  while (p < end && !IsSpace(*p)) ++p;
  return p;
}

class BvhParser {
 public:
  BvhParser(LineReader* reader, std::string name, const BvhReadOptions& options)
      : reader_(reader), name_(std::move(name)), options_(options) {}

  Scene Parse() {
    Scene scene;
    scene.source = name_;
    RawSkeleton raw;
    Expect("HIERARCHY");
    for (;;) {
      const std::string keyword = PeekCopy();
      if (keyword == "ROOT" || keyword == "JOINT") {
        Take();
        if (keyword == "JOINT") {
          // Blender and three.js read a top-level JOINT as a root; so does rigel, and says so.
          scene.warnings.push_back(fmt::format(
              "{}:{}: the hierarchy has 'JOINT' where 'ROOT' belongs; read as a root joint", name_,
              line_no_));
        }
        raw.roots.emplace_back();
        ParseJoint(&raw.roots.back(), 1);
      } else if (keyword == "MOTION") {
        Take();
        break;
      } else if (keyword.empty() && at_eof_) {
        Fail(line_no_, "ROOT or MOTION", "end of file (hierarchy cut short)");
      } else if (keyword == "}") {
        Fail(line_no_, "ROOT or MOTION", "'}' (unbalanced braces: one '}' too many)");
      } else {
        Fail(line_no_, "ROOT or MOTION", Quote(keyword) + " (unknown keyword)");
      }
    }
    if (raw.roots.empty()) Fail(line_no_, "a ROOT joint before MOTION", "'MOTION'");
    std::string error;
    std::unique_ptr<Skeleton> skeleton = SkeletonBuilder().Build(raw, &error);
    if (!skeleton) throw ImportError(name_ + ": " + error);
    ParseMotion(*skeleton, &scene);
    ResolveTranslation(&raw, &skeleton, &scene);
    WarnUpsideDown(*skeleton, &scene);
    ResolveUnit(*skeleton, &scene);
    scene.skeleton = std::move(skeleton);
    return scene;
  }

 private:
  [[noreturn]] void Fail(int line, std::string_view expected, std::string_view found) {
    throw ImportError(fmt::format("{}:{}: expected {}, found {}", name_, line, expected, found));
  }

  // Decides each joint's TranslationMode (see bvh_reader.h), stores it in the skeleton and turns
  // the values of kReplace joints into deltas.
  void ResolveTranslation(RawSkeleton* raw, std::unique_ptr<Skeleton>* skeleton, Scene* scene) {
    const Skeleton& sk = **skeleton;
    Clip& clip = scene->clips.front();
    // Raw joints in the builder's order (depth first, file order).
    std::vector<RawSkeleton::Joint*> joints;
    std::vector<RawSkeleton::Joint*> stack;
    for (auto it = raw->roots.rbegin(); it != raw->roots.rend(); ++it) stack.push_back(&*it);
    while (!stack.empty()) {
      RawSkeleton::Joint* j = stack.back();
      stack.pop_back();
      joints.push_back(j);
      for (auto it = j->children.rbegin(); it != j->children.rend(); ++it) stack.push_back(&*it);
    }
    const std::vector<TranslationMode> modes = DecideModes(sk, clip, scene);
    std::vector<Clip::FileValue> file_values;
    bool any_replace = false;
    for (int j = 0; j < sk.num_joints(); ++j) {
      joints[j]->translation_mode = modes[j];
      if (modes[j] != TranslationMode::kReplace) continue;
      any_replace = true;
      for (int k = 0; k < 3; ++k) {
        const int c = sk.translation_channel(j, k);
        if (c < 0) continue;
        const double o = sk.rest_translation(j)[k];
        for (int f = 0; f < clip.num_frames(); ++f) {
          const double v = clip.at(f, c);
          const double x = v - o;
          clip.at(f, c) = x;
          // Subtracting the OFFSET can map neighbouring file values to one delta: keep the
          // file's value for the writer (Clip::file_values).
          if ((decimal_internal::StepUlps(v, 1) - o == x ||
               decimal_internal::StepUlps(v, -1) - o == x) &&
              WriterMisses(v, x, 1.0, 1.0, o)) {
            file_values.push_back({static_cast<size_t>(f) * clip.num_channels() + c, v});
          }
        }
      }
    }
    if (!any_replace) return;
    if (!file_values.empty()) {
      file_values.insert(file_values.end(), clip.file_values().begin(), clip.file_values().end());
      std::sort(
          file_values.begin(), file_values.end(),
          [](const Clip::FileValue& a, const Clip::FileValue& b) { return a.index < b.index; });
      clip.set_file_values(std::move(file_values));
    }
    std::string error;
    std::unique_ptr<Skeleton> rebuilt = SkeletonBuilder().Build(*raw, &error);
    if (!rebuilt) throw ImportError(name_ + ": " + error);
    *skeleton = std::move(rebuilt);
  }

  // The mode of every joint (kAdd for joints without position channels). Under kAuto each joint
  // is first judged by its own data; a joint they leave undecided takes the reading every decided
  // joint of the file has (the file's convention), and warns only when the file has none.
  std::vector<TranslationMode> DecideModes(const Skeleton& sk, const Clip& clip, Scene* scene) {
    std::vector<TranslationMode> modes(sk.num_joints(), TranslationMode::kAdd);
    std::vector<int> undecided;
    std::vector<std::string> details;
    int adds = 0, replaces = 0;
    Pose& rest = scratch_pose_;
    rest.channels.assign(rest.channels.size(), 0.0);
    rest.UpdateWorld(sk);
    const Eigen::AlignedBox3d box = JointBounds(rest.world);
    const double size = box.isEmpty() ? 0.0 : box.sizes().maxCoeff();
    for (int j = 0; j < sk.num_joints(); ++j) {
      bool has_position = false;
      for (int k = 0; k < 3; ++k) has_position |= sk.translation_channel(j, k) >= 0;
      if (!has_position || options_.translation == BvhTranslation::kAdd) continue;
      if (options_.translation == BvhTranslation::kReplace) {
        modes[j] = TranslationMode::kReplace;
        continue;
      }
      JointVerdict verdict = DecideTranslation(sk, clip, j, size, scratch_values_);
      if (verdict.kind == JointVerdict::kDecided) {
        modes[j] = verdict.mode;
        (verdict.mode == TranslationMode::kReplace ? replaces : adds) += 1;
      } else if (verdict.kind == JointVerdict::kUndecided) {
        undecided.push_back(j);
        details.push_back(std::move(verdict.detail));
      }
    }
    for (size_t u = 0; u < undecided.size(); ++u) {
      if (replaces > 0 && adds == 0) {
        modes[undecided[u]] = TranslationMode::kReplace;
        continue;
      }
      if (adds > 0 && replaces == 0) continue;  // kAdd
      const std::string others =
          adds + replaces == 0
              ? std::string("no other joint of the file decides")
              : fmt::format("nor do the file's other joints: {} read as deltas, {} as absolute",
                            adds, replaces);
      scene->warnings.push_back(fmt::format(
          "{}: joint '{}': the data do not decide whether its position channels are deltas "
          "added to the OFFSET or absolute translations replacing it ({}; {}); read as deltas "
          "(--bvh-translation replace to read them as absolute)",
          name_, sk.name(undecided[u]), details[u], others));
    }
    return modes;
  }

  // Says so when the figure's head is below its feet on every frame (retarget::FindUpsideDown):
  // the file's axes have that axis pointing down (Azure Kinect writes +Y down).
  void WarnUpsideDown(const Skeleton& skeleton, Scene* scene) {
    const retarget::UpsideDown down = retarget::FindUpsideDown(skeleton, scene->clips.front());
    if (down.axis < 0) return;
    const char axis = static_cast<char>('X' + down.axis);
    scene->warnings.push_back(fmt::format(
        "{}: the figure is upside down: its head ('{}') is below its feet ('{}') along {} on "
        "every frame ({} frames, by {:.4g} units at least), so the file's +{} points down (as in "
        "Azure Kinect's camera frame); the file's axes are kept",
        name_, down.head, down.feet, axis, down.frames, down.least_depth, axis));
  }

  // Sets scene->file_unit_metres from the options, or estimates it from the body (a humanoid's
  // standing height over the clip, EstimateUnitFromBody) with a warning; a figure that is not a
  // humanoid leaves the unit unknown, with a warning.
  void ResolveUnit(const Skeleton& skeleton, Scene* scene) {
    if (options_.unit_metres > 0) {
      scene->file_unit_metres = options_.unit_metres;
      return;
    }
    BodyMeasure body;
    const double unit = EstimateUnitFromBody(skeleton, &scene->clips.front(), &body);
    if (unit > 0) {
      scene->estimated_unit_metres = unit;
      scene->warnings.push_back(fmt::format(
          "{}: BVH does not state its length unit; estimated {} from the body: the figure stands "
          "{:.4g} units = {:.3g} m (head over feet, {} frames; bones head-hips-foot {:.4g} units) "
          "(--unit-in to state it)",
          name_, UnitLabel(unit), body.height, body.height * unit, body.frames, body.chain_height));
    } else if (!body.humanoid) {
      scene->warnings.push_back(fmt::format(
          "{}: BVH does not state its length unit and the figure is not a humanoid, whose size "
          "would tell it ({}): the unit is unknown, lengths are kept as they are (--unit-in to "
          "state it)",
          name_, body.evidence));
    } else {
      scene->warnings.push_back(fmt::format(
          "{}: BVH does not state its length unit and the figure has no height to estimate it "
          "from (--unit-in to state it)",
          name_));
    }
  }

  // --- token stream over the hierarchy (lines copied: the hierarchy is small) ---
  bool LoadLine() {
    std::string_view view;
    if (!reader_->Next(&view)) {
      at_eof_ = true;
      line_.clear();
      pos_ = 0;
      return false;
    }
    line_.assign(view.data(), view.size());
    line_no_ = reader_->line();
    pos_ = 0;
    return true;
  }
  // Skips whitespace and blank lines. False at end of file.
  bool SkipToToken() {
    for (;;) {
      while (pos_ < line_.size() && IsSpace(line_[pos_])) ++pos_;
      if (pos_ < line_.size()) return true;
      if (!LoadLine()) return false;
    }
  }
  // The next token (copied), or "" at end of file. Does not consume it.
  std::string PeekCopy() {
    if (!SkipToToken()) return std::string();
    const char* b = line_.data() + pos_;
    return std::string(b, TokenEnd(b, line_.data() + line_.size()));
  }
  std::string Take() {
    std::string t = PeekCopy();
    pos_ += t.size();
    return t;
  }
  std::string Found(const std::string& token) {
    return token.empty() && at_eof_ ? std::string("end of file (hierarchy cut short)")
                                    : Quote(token);
  }
  void Expect(std::string_view keyword) {
    const std::string t = Take();
    if (t != keyword) Fail(line_no_, fmt::format("'{}'", keyword), Found(t));
  }
  // The rest of the current line, trimmed (joint names may contain spaces).
  std::string RestOfLine() {
    while (pos_ < line_.size() && IsSpace(line_[pos_])) ++pos_;
    size_t e = line_.size();
    while (e > pos_ && IsSpace(line_[e - 1])) --e;
    std::string rest = line_.substr(pos_, e - pos_);
    pos_ = line_.size();
    return rest;
  }
  double TakeNumber(std::string_view what) {
    const std::string t = Take();
    const int line = line_no_;
    if (t.empty()) Fail(line, what, Found(t));
    double v = 0;
    const char* next = nullptr;
    switch (ParseNumber(t.data(), t.data() + t.size(), &v, &next)) {
      case NumberStatus::kOk:
        return v;
      case NumberStatus::kComma:
        Fail(line, fmt::format("{} with '.' as decimal separator", what), Quote(t));
      case NumberStatus::kNotFinite:
        Fail(line, fmt::format("{} (finite)", what), Quote(t));
      case NumberStatus::kNotNumber:
        break;
    }
    Fail(line, what, Quote(t));
  }
  Eigen::Vector3d TakeOffset() {
    Eigen::Vector3d v;
    const int line = line_no_;
    for (int k = 0; k < 3; ++k) {
      // OFFSET values sit on the OFFSET line.
      if (!(pos_ < line_.size() &&
            line_.find_first_not_of(" \t\r\v\f", pos_) != std::string::npos)) {
        Fail(line, "3 numbers after OFFSET", fmt::format("{} (end of line)", k));
      }
      v[k] = TakeNumber("a number (OFFSET)");
    }
    return v;
  }

  void ParseJoint(RawSkeleton::Joint* joint, int depth) {
    const int open_line = line_no_;
    if (depth > Skeleton::kMaxDepth) {
      Fail(line_no_, fmt::format("joints nested at most {} deep", Skeleton::kMaxDepth),
           "deeper nesting");
    }
    if (++joint_count_ > Skeleton::kMaxJoints) {
      Fail(line_no_, fmt::format("at most {} joints", Skeleton::kMaxJoints), "more");
    }
    joint->name = RestOfLine();
    if (joint->name.empty()) Fail(line_no_, "a joint name", "end of line");
    // glTF, FBX and the JSON reports need UTF-8 names: refuse other bytes here, naming the line.
    if (!IsValidUtf8(joint->name)) {
      throw ImportError(fmt::format("{}:{}: joint name is not valid UTF-8", name_, line_no_));
    }
    if (auto it = first_line_.find(joint->name); it != first_line_.end()) {
      Fail(line_no_, "a unique joint name",
           fmt::format("{} again (first defined at line {})", Quote(joint->name), it->second));
    }
    first_line_.emplace(joint->name, line_no_);
    Expect("{");
    bool has_offset = false, has_channels = false;
    for (;;) {
      const std::string t = Take();
      const int line = line_no_;
      if (t == "OFFSET") {
        if (has_offset) Fail(line, "one OFFSET per joint", "a second OFFSET");
        joint->rest_translation = TakeOffset();
        has_offset = true;
      } else if (t == "CHANNELS") {
        if (has_channels) Fail(line, "one CHANNELS per joint", "a second CHANNELS");
        ParseChannels(joint);
        has_channels = true;
      } else if (t == "JOINT") {
        if (!has_offset)
          Fail(line, fmt::format("OFFSET in joint '{}' before its children", joint->name),
               "'JOINT'");
        joint->children.emplace_back();
        ParseJoint(&joint->children.back(), depth + 1);
      } else if (t == "End") {
        Expect("Site");
        Expect("{");
        Expect("OFFSET");
        joint->end_sites.push_back(TakeOffset());
        const std::string close = Take();
        if (close != "}") Fail(line_no_, "'}' closing End Site", Found(close));
      } else if (t == "}") {
        if (!has_offset) Fail(line, fmt::format("OFFSET in joint '{}'", joint->name), "'}'");
        return;
      } else if (t.empty() && at_eof_) {
        Fail(line_no_,
             fmt::format("'}}' closing joint '{}' (opened at line {})", joint->name, open_line),
             "end of file (hierarchy cut short)");
      } else if (t == "MOTION" || t == "ROOT") {
        Fail(line,
             fmt::format("'}}' closing joint '{}' (opened at line {})", joint->name, open_line),
             Quote(t) + " (unbalanced braces)");
      } else if (ParseChannelName(t)) {
        Fail(line, "JOINT, End Site, OFFSET, CHANNELS or '}'",
             Quote(t) + " (more channel names than CHANNELS declares?)");
      } else {
        Fail(line, "JOINT, End Site, OFFSET, CHANNELS or '}'", Quote(t) + " (unknown keyword)");
      }
    }
  }

  void ParseChannels(RawSkeleton::Joint* joint) {
    const std::string t = Take();
    int count = -1;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), count);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size() || count < 0 ||
        count > 6) {
      Fail(line_no_, "a channel count from 0 to 6", Found(t));
    }
    unsigned used = 0;
    for (int k = 0; k < count; ++k) {
      const std::string c = Take();
      const auto channel = ParseChannelName(c);
      if (!channel) {
        Fail(line_no_,
             fmt::format("channel name {} of {} (Xposition, Yposition, Zposition, Xrotation, "
                         "Yrotation or Zrotation)",
                         k + 1, count),
             Found(c));
      }
      const unsigned bit = 1u << static_cast<int>(*channel);
      if (used & bit) Fail(line_no_, "each channel at most once per joint", Quote(c) + " twice");
      used |= bit;
      joint->channels.push_back(*channel);
    }
  }

  // --- motion section ---
  void ParseMotion(const Skeleton& skeleton, Scene* scene) {
    // "Frames: N"
    std::string t = Take();
    if (t != "Frames:") Fail(line_no_, "'Frames:'", Found(t));
    t = Take();
    const int frames_line = line_no_;
    long long frames = 0;
    {
      const auto r = std::from_chars(t.data(), t.data() + t.size(), frames);
      if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size()) {
        Fail(frames_line, "a whole number of frames after 'Frames:'", Found(t));
      }
      if (frames <= 0) Fail(frames_line, "a frame count > 0", Quote(t));
    }
    // "Frame Time: T"
    t = Take();
    if (t != "Frame") Fail(line_no_, "'Frame Time:'", Found(t));
    t = Take();
    if (t != "Time:") Fail(line_no_, "'Frame Time:'", Found("Frame " + t));
    const double frame_time = TakeNumber("a frame time in seconds");
    if (!(frame_time > 0)) Fail(line_no_, "a frame time > 0", Quote(fmt::format("{}", frame_time)));
    if (const char* problem = FrameTimeProblem(frame_time, frames)) {
      Fail(line_no_, fmt::format("a frame time from 1e-06 to 86400 s (this one {})", problem),
           Quote(fmt::format("{}", frame_time)));
    }
    if (!RestOfLine().empty()) Fail(line_no_, "end of line after the frame time", "more text");

    const int channels = skeleton.num_channels();
    // Each value needs at least one character and one separator; a row at least its newline.
    const uint64_t min_row_bytes = std::max<uint64_t>(1, 2ull * channels);
    const uint64_t capacity = reader_->remaining() / min_row_bytes;
    if (static_cast<uint64_t>(frames) > capacity) {
      Fail(frames_line,
           fmt::format(
               "at most {} frames (the rest of the file holds {} bytes, {} values per frame)",
               capacity, reader_->remaining(), channels),
           fmt::format("'Frames: {}'", frames));
    }

    // The scratch of the decisions after the motion (ResolveTranslation, ResolveUnit) is made
    // before the clip: made after it, these blocks sat above the clip's block on the heap and,
    // freed, made the next read's clip take fresh memory (glibc's small-block cache keeps a few
    // chunks above them in use): 4,500 page faults per 29 MB clip when reading clip after clip.
    scratch_pose_ = Pose(skeleton);
    scratch_values_.reserve(static_cast<size_t>(frames));
    Clip clip(static_cast<int>(frames), channels, frame_time);
    std::vector<double> scale(channels);
    for (int c = 0; c < channels; ++c) {
      scale[c] = IsRotation(skeleton.channels()[c]) ? kRadPerDeg : 1.0;
    }
    double* const base = clip.values().data();
    double* out = base;
    std::vector<Clip::FileValue> file_values;
    std::string_view row;
    int done = 0;
    while (done < frames) {
      if (!reader_->Next(&row)) {
        Fail(reader_->line() + 1, fmt::format("{} motion rows (Frames: {})", frames, frames),
             fmt::format("{} (motion cut short)", done));
      }
      const char* p = row.data();
      const char* end = p + row.size();
      int n = 0;
      for (;;) {
        while (p < end && IsSpace(*p)) ++p;
        if (p == end) break;
        if (n == channels) {
          Fail(reader_->line(), fmt::format("{} values in motion row {}", channels, done + 1),
               fmt::format("more (extra value {})",
                           Quote(std::string_view(p, TokenEnd(p, end) - p))));
        }
        double v;
        const char* next;
        const NumberStatus status = ParseNumber(p, end, &v, &next);
        if (status != NumberStatus::kOk) RowFail(status, p, end, done, n, skeleton);
        const double x = v * scale[n];
        out[n] = x;
        // Degrees to radians can map two neighbouring file values to one clip value: keep the
        // file's (Clip::file_values) so the writer gives it back. Zero needs none: the writer
        // writes +-0 for +-0.
        if (scale[n] != 1.0 && v != 0 &&
            (decimal_internal::StepUlps(v, 1) * scale[n] == x ||
             decimal_internal::StepUlps(v, -1) * scale[n] == x) &&
            WriterMisses(v, x, kDegPerRad, scale[n], 0.0)) {
          file_values.push_back({static_cast<size_t>(out + n - base), v});
        }
        ++n;
        p = next;
      }
      if (n == 0) continue;  // blank line
      if (n != channels) {
        Fail(reader_->line(), fmt::format("{} values in motion row {}", channels, done + 1),
             fmt::format("{}", n));
      }
      out += channels;
      ++done;
    }
    WarnExtraRows(frames, scene);
    clip.set_file_values(std::move(file_values));
    scene->clips.push_back(std::move(clip));
  }

  // Counts the non-blank rows after the `frames` declared ones: ignored, with a warning.
  void WarnExtraRows(long long frames, Scene* scene) {
    std::string_view row;
    int extra = 0, first_extra = 0;
    while (reader_->Next(&row)) {
      if (row.find_first_not_of(" \t\r\v\f") == std::string_view::npos) continue;
      if (extra++ == 0) first_extra = reader_->line();
    }
    if (extra) {
      scene->warnings.push_back(
          fmt::format("{}:{}: {} motion row{} after the {} declared by 'Frames:' ignored", name_,
                      first_extra, extra, extra == 1 ? "" : "s", frames));
    }
  }

  [[noreturn]] void RowFail(NumberStatus status, const char* p, const char* end, int row, int n,
                            const Skeleton& skeleton) {
    const std::string_view token(p, TokenEnd(p, end) - p);
    const int joint = skeleton.channel_joint(n);
    const std::string where =
        fmt::format("row {}, value {} ({} {})", row + 1, n + 1, skeleton.name(joint),
                    ChannelName(skeleton.channels()[n]));
    switch (status) {
      case NumberStatus::kComma:
        Fail(reader_->line(), fmt::format("a number with '.' as decimal separator at {}", where),
             Quote(token));
      case NumberStatus::kNotFinite:
        Fail(reader_->line(), fmt::format("a finite number at {}", where), Quote(token));
      default:
        Fail(reader_->line(), fmt::format("a number at {}", where), Quote(token));
    }
  }

  LineReader* reader_;
  std::string name_;
  BvhReadOptions options_;
  Pose scratch_pose_;                   // rest pose, then frame 0 (see ParseMotion)
  std::vector<double> scratch_values_;  // one channel's values (DecideTranslation)
  std::string line_;
  size_t pos_ = 0;
  int line_no_ = 0;
  bool at_eof_ = false;
  int joint_count_ = 0;
  std::unordered_map<std::string, int> first_line_;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::optional<BvhTranslation> ParseBvhTranslation(std::string_view text) {
  if (text == "auto") return BvhTranslation::kAuto;
  if (text == "add") return BvhTranslation::kAdd;
  if (text == "replace") return BvhTranslation::kReplace;
  return std::nullopt;
}

Scene ReadBvh(const std::string& path, const BvhReadOptions& options) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw ImportError(fmt::format("{}: cannot read: not a regular file", path));
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw ImportError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (std::fseek(file.get(), 0, SEEK_END) != 0) {
    throw ImportError(fmt::format("{}: cannot read: not a regular file", path));
  }
  const long size = std::ftell(file.get());
  std::fseek(file.get(), 0, SEEK_SET);
  if (size < 0) throw ImportError(fmt::format("{}: cannot read: not a regular file", path));
  LineReader reader(file.get(), static_cast<uint64_t>(size));
  BvhParser parser(&reader, path, options);
  Scene scene = parser.Parse();
  if (std::ferror(file.get())) throw ImportError(fmt::format("{}: read error", path));
  return scene;
}

Scene ParseBvh(std::string_view text, const std::string& name, const BvhReadOptions& options) {
  LineReader reader(text);
  BvhParser parser(&reader, name, options);
  return parser.Parse();
}

}  // namespace rigel
