// Clip: a sampled animation in a skeleton's channel layout.
#ifndef RIGEL_CORE_CLIP_H_
#define RIGEL_CORE_CLIP_H_

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rigel {

class Skeleton;

// A blend-shape weight channel: the morph target `target` of the mesh `mesh` (names as in the
// scene's meshes, core/mesh.h). Weights are plain numbers (0 = not applied, 1 = fully applied;
// FBX's DeformPercent / 100).
struct WeightChannel {
  std::string mesh;
  std::string target;
  bool operator==(const WeightChannel& other) const {
    return mesh == other.mesh && target == other.target;
  }
};

// frames x channels values, row-major and contiguous: row f is frame f, column c is the
// skeleton's channel c. Rotation channels are radians, position channels are in file units.
class Clip {
 public:
  Clip() = default;
  // A clip of `num_frames` rows of `num_channels` zeros. frame_time is in seconds.
  Clip(int num_frames, int num_channels, double frame_time);

  int num_frames() const { return num_frames_; }
  int num_channels() const { return num_channels_; }
  // Seconds between two frames (> 0).
  double frame_time() const { return frame_time_; }
  void set_frame_time(double seconds) { frame_time_ = seconds; }
  double frame_rate() const { return 1.0 / frame_time_; }
  // Time from the first to the last frame: (frames - 1) * frame_time.
  double duration() const { return num_frames_ > 0 ? (num_frames_ - 1) * frame_time_ : 0.0; }

  // Name of the take (FBX animation stack); empty for BVH.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  std::span<double> frame(int f) {
    return std::span<double>(values_).subspan(static_cast<size_t>(f) * num_channels_,
                                              num_channels_);
  }
  std::span<const double> frame(int f) const {
    return std::span<const double>(values_).subspan(static_cast<size_t>(f) * num_channels_,
                                                    num_channels_);
  }
  double& at(int f, int c) { return values_[static_cast<size_t>(f) * num_channels_ + c]; }
  double at(int f, int c) const { return values_[static_cast<size_t>(f) * num_channels_ + c]; }

  std::span<double> values() { return values_; }
  std::span<const double> values() const { return values_; }

  // Resizes to `num_frames` rows (new rows are zero, kept rows unchanged), weights included.
  void Resize(int num_frames);

  // Blend-shape weights: a second block of channels, frames x num_weights(), beside the joint
  // channels (the skeleton's layout stays the joints' own, so FK, solvers and BVH never see
  // them). Column w is the scene's w-th morph target (core/mesh.h MorphWeightChannels: meshes in
  // order, targets in order); weight_channels() names them. No columns: the clip does not animate
  // weights (each target keeps its mesh's default weight).
  int num_weights() const { return static_cast<int>(weight_channels_.size()); }
  const std::vector<WeightChannel>& weight_channels() const { return weight_channels_; }
  // Sets the weight channels; every weight becomes `initial[w]` (zero past its end).
  void SetWeightChannels(std::vector<WeightChannel> channels, std::span<const double> initial = {});
  std::span<double> weights(int f) {
    return std::span<double>(weights_).subspan(static_cast<size_t>(f) * num_weights(),
                                               num_weights());
  }
  std::span<const double> weights(int f) const {
    return std::span<const double>(weights_).subspan(static_cast<size_t>(f) * num_weights(),
                                                     num_weights());
  }
  std::span<double> weight_values() { return weights_; }
  std::span<const double> weight_values() const { return weights_; }
  // Copies the weight channels and the weights of frames [first, first + num_frames()) of
  // `other` (frames past its end repeat its last).
  void CopyWeightsFrom(const Clip& other, int first = 0);

  // True when the clip's row width is the skeleton's channel count.
  bool matches(const Skeleton& skeleton) const;

  // A value of the file the clip was read from that the clip's own value does not determine:
  // a reader that transforms what it parses (BVH: degrees to radians, absolute translations less
  // their OFFSET) can map two file values to one clip value. `index` is into values().
  struct FileValue {
    size_t index;
    double value;
  };
  // Those values, sorted by index (empty when every file value follows from the clip's). A
  // writer of the file's format writes value i back as the hint when the hint still maps to
  // values()[i]; edits need not maintain them (a stale hint maps elsewhere and is not used, or
  // maps to the same clip value and is as exact as any other text).
  const std::vector<FileValue>& file_values() const { return file_values_; }
  void set_file_values(std::vector<FileValue> values) { file_values_ = std::move(values); }

 private:
  int num_frames_ = 0;
  int num_channels_ = 0;
  double frame_time_ = 1.0 / 30.0;
  std::string name_;
  std::vector<double> values_;
  std::vector<FileValue> file_values_;
  std::vector<WeightChannel> weight_channels_;
  std::vector<double> weights_;
};

}  // namespace rigel

#endif  // RIGEL_CORE_CLIP_H_
