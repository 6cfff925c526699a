// The per-frame bake loop. See bake.h.
#include "core/ik/bake.h"

#include <algorithm>
#include <cmath>

#include "core/channel.h"
#include "core/ik/character_rig.h"
#include "core/ik/constrained_solve.h"

namespace rigel::ik {

namespace {

// Adds one solved frame's report to the statistics.
void AddSolve(const SolveReport& report, int frame, BakeSummary* s) {
  s->iterations += report.iterations;
  s->iterations_max = std::max(s->iterations_max, report.iterations);
  s->frames_with_limit_hits += report.channels_on_limit.empty() ? 0 : 1;
  switch (report.status) {
    case Status::kConverged:
      ++s->converged;
      break;
    case Status::kUnreachable:
      ++s->unreachable;
      break;
    default:
      ++s->not_converged;
      break;
  }
  double frame_residual = 0;
  for (size_t i = 0; i < report.position_error.size(); ++i) {
    frame_residual = std::max(frame_residual, report.position_error[i]);
    if (report.position_error[i] > s->residual_max) {
      s->residual_max = report.position_error[i];
      s->worst_frame = frame;
    }
    if (i < report.angle_error.size()) {
      s->max_angle_error = std::max(s->max_angle_error, report.angle_error[i]);
    }
  }
  s->residual_mean += frame_residual;  // a sum until the end of the bake
}

}  // namespace

bool BakeJob::Whole(BakeJob* whole) const {
  if (rig != nullptr || targets != nullptr || workspace != nullptr || report != nullptr ||
      constraints != nullptr || !foot_rolls.empty()) {
    error =
        "bake: a job with a character rig takes its rig, targets, workspace, report, "
        "constraints and foot rolls from it";
    return false;
  }
  *whole = *this;
  whole->character = nullptr;
  whole->rig = &character->rig;
  whole->targets = &character->targets;
  whole->workspace = &character->workspace;
  whole->report = &character->report;
  whole->constraints = &character->constraints;
  whole->foot_rolls = character->foot_rolls;
  return true;
}

bool BakeJob::Validate() const {
  if (character != nullptr) {
    BakeJob whole;
    if (!Whole(&whole)) return false;
    if (whole.Validate()) return true;
    error = whole.error;
    return false;
  }
  if (rig == nullptr || targets == nullptr || clip == nullptr || output == nullptr ||
      workspace == nullptr) {
    error = "bake: rig, targets, clip, output and workspace are required";
    return false;
  }
  if (!rig->skeleton_ptr()) {
    error = "bake: the rig has no skeleton";
    return false;
  }
  const Skeleton& skeleton = rig->skeleton();
  if (!clip->matches(skeleton)) {
    error = "bake: the clip has " + std::to_string(clip->num_channels()) +
            " channels, the rig's skeleton " + std::to_string(skeleton.num_channels());
    return false;
  }
  if (targets->size() < rig->tasks.size()) {
    error = "bake: " + std::to_string(targets->size()) + " targets for " +
            std::to_string(rig->tasks.size()) + " tasks";
    return false;
  }
  if (pose != nullptr && !pose->matches(skeleton)) {
    error = "bake: the pose does not match the rig's skeleton";
    return false;
  }
  if (output == clip) {
    error = "bake: the output must not be the source clip";
    return false;
  }
  if (constraints != nullptr && !constraints->Validate(skeleton, &error)) {
    error = "bake: " + error;
    return false;
  }
  return true;
}

bool BakeJob::Run() const {
  if (character != nullptr) {
    error.clear();
    BakeJob whole;
    if (!Whole(&whole)) return false;
    const bool ok = whole.Run();
    error = whole.error;
    return ok;
  }
  if (!Validate()) return false;
  const Skeleton& skeleton = rig->skeleton();
  // Read once: a callback may resize the clip (the Lua binding forbids it, but the loop must not
  // depend on that) and the output is sized from this count.
  const int frames = clip->num_frames();
  const int channels = clip->num_channels();
  *output = Clip(frames, channels, clip->frame_time());
  output->set_name(clip->name());
  output->CopyWeightsFrom(*clip);  // the callback may key them (Pose::weights)
  const int weights = clip->num_weights();
  Pose own_pose;
  Pose& p = pose != nullptr ? *pose : own_pose;
  if (pose == nullptr) p = Pose(skeleton);
  p.weight_channels = clip->weight_channels();
  SolveReport own_report;
  SolveReport& r = report != nullptr ? *report : own_report;
  BakeSummary s;
  s.frames = frames;
  constraints::StackState constraint_state;
  ConstrainedFrame frame_job{.rig = rig,
                             .targets = *targets,
                             .constraints = constraints,
                             .state = &constraint_state,
                             .foot_rolls = foot_rolls,
                             .workspace = workspace};
  if (records != nullptr) records->clear();
  for (int f = 0; f < frames; ++f) {
    // Every size is checked again after the previous frame's callback.
    if (f >= clip->num_frames() || clip->num_channels() != channels ||
        clip->num_weights() != weights || p.channels.size() != static_cast<size_t>(channels)) {
      error = "frame " + std::to_string(f + 1) + ": the clip or pose changed size during the bake";
      return false;
    }
    const std::span<const double> row = clip->frame(f);
    std::copy(row.begin(), row.end(), p.channels.begin());
    const std::span<const double> weight_row = clip->weights(f);
    p.weights.assign(weight_row.begin(), weight_row.end());
    if (forward_kinematics) p.UpdateWorld(skeleton, 0);
    FrameAction action = FrameAction::kSolve;
    bool solved = false;
    if (on_frame) {
      action = on_frame(f, p, &error);
      if (action == FrameAction::kFail) return false;
      if (p.channels.size() != static_cast<size_t>(channels) ||
          p.weights.size() != static_cast<size_t>(weights) || targets->size() < rig->tasks.size()) {
        error = "frame " + std::to_string(f + 1) + ": the pose or targets changed size";
        return false;
      }
    }
    if (action == FrameAction::kSolve) {
      if (!warm_start) *workspace = Workspace();
      frame_job.targets = *targets;  // the callback may have resized the vector
      if (!frame_job.Run(f, p, &r, &solved, &error)) {
        // A workspace whose preparation failed is not reused: the next solve prepares afresh.
        if (r.status == Status::kInvalidInput) *workspace = Workspace();
        error = "frame " + std::to_string(f + 1) + ": " + error;
        return false;
      }
      if (solved) {
        AddSolve(r, f, &s);
        if (records != nullptr) {
          records->emplace_back();
          RecordFrame(f, *rig, *targets, r, &records->back());
        }
      }
    } else {
      ++s.skipped;
    }
    std::copy(p.channels.begin(), p.channels.end(), output->frame(f).begin());
    std::copy(p.weights.begin(), p.weights.end(), output->weights(f).begin());
    if (on_frame_done) on_frame_done(f, p, solved ? &r : nullptr);
  }
  const int solved = s.solved();
  s.residual_mean = solved > 0 ? s.residual_mean / solved : 0.0;
  s.iterations_mean = solved > 0 ? static_cast<double>(s.iterations) / solved : 0.0;
  if (summary != nullptr) *summary = s;
  return true;
}

}  // namespace rigel::ik
