#include "core/retarget/retarget.h"

#include <array>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/enum_names.h"
#include "core/euler.h"
#include "core/retarget/alignment.h"
#include "core/retarget/cleanup.h"
#include "core/retarget/contacts.h"
#include "core/retarget/humanoid.h"
#include "core/retarget/metrics.h"
#include "core/retarget/root_motion.h"
#include "core/retarget/transfer.h"
#include "core/skeleton.h"

namespace rigel::retarget {

namespace {

constexpr std::array<std::string_view, 4> kRootMotionNames = {"scale", "keep", "in-place",
                                                              "extract"};
static_assert(kRootMotionNames.size() == static_cast<std::size_t>(RootMotion::kExtract) + 1);

// True when both skeletons have the same joints, by name, under the same parents.
bool SameNamesAndHierarchy(const Skeleton& a, const Skeleton& b) {
  if (a.num_joints() != b.num_joints()) return false;
  for (int j = 0; j < a.num_joints(); ++j) {
    const int k = b.FindJoint(a.name(j));
    if (k < 0) return false;
    const int pa = a.parent(j), pb = b.parent(k);
    if ((pa < 0) != (pb < 0) || (pa >= 0 && a.name(pa) != b.name(pb))) return false;
  }
  return true;
}

// The roles the automatic map needs to place a humanoid (hips, head, each leg down to its foot),
// those `h` lacks, comma-separated; empty for a humanoid.
std::string MissingHumanoidRoles(const HumanoidJoints& h) {
  std::string missing;
  for (const Role r :
       {Role::kHips, Role::kHead, Role::kLeftUpperLeg, Role::kLeftLowerLeg, Role::kLeftFoot,
        Role::kRightUpperLeg, Role::kRightLowerLeg, Role::kRightFoot}) {
    if (h[r] < 0) missing += (missing.empty() ? "" : ", ") + std::string(RoleName(r));
  }
  return missing;
}

// The automatic map, or why there is none: the identity map when source and target share names
// and hierarchy (any skeleton: a chicken onto itself keeps its tail, wings and toes); else the
// humanoid map, which needs two humanoids.
std::string AutomaticMap(const Skeleton& source, const Skeleton& target, BoneMap* map,
                         std::vector<std::string>* warnings) {
  if (SameNamesAndHierarchy(source, target)) {
    for (int j = 0; j < target.num_joints(); ++j) {
      BoneMapEntry e;
      e.source = e.target = target.name(j);
      e.comment = "same name and parent";
      map->entries.push_back(std::move(e));
    }
    map->origin = "automatic map (identity: source and target share names and hierarchy)";
    return "";
  }
  for (const auto& [skeleton, side] : {std::pair{&source, "source"}, {&target, "target"}}) {
    const std::string missing = MissingHumanoidRoles(ClassifyHumanoid(*skeleton));
    if (missing.empty()) continue;
    return std::string("retarget: the ") + side + " skeleton (root '" + skeleton->name(0) +
           "') is not a humanoid: no " + missing +
           " found by name and hierarchy; the automatic map pairs humanoids (or two skeletons "
           "with the same names and hierarchy) only: give a bone map (--map FILE, "
           "docs/retarget.md; "
           "'rigel retarget --suggest-map SRC TARGET' writes one to start from)";
  }
  std::vector<std::string> notes, left_out;
  *map = AutoMap(source, target, &notes, &left_out);
  map->origin = "automatic map";
  for (const std::string& n : notes) {
    if (n.starts_with("warning: ")) warnings->push_back("automatic map: " + n.substr(9));
  }
  for (const std::string& n : left_out) warnings->push_back("automatic map: " + n);
  return "";
}

}  // namespace

std::string_view RootMotionName(RootMotion policy) {
  return EnumName(policy, kRootMotionNames, "scale");
}

std::optional<RootMotion> ParseRootMotion(std::string_view text) {
  return ParseEnumName<RootMotion>(text, kRootMotionNames);
}

Retargeter::~Retargeter() = default;

std::unique_ptr<Retargeter> Retargeter::Create(std::shared_ptr<const Skeleton> source,
                                               std::shared_ptr<const Skeleton> target,
                                               const BoneMap& map, const RetargetOptions& options,
                                               std::string* error, const Clip* source_clip,
                                               const Clip* target_clip) {
  auto fail = [&](const std::string& message) {
    if (error) *error = message;
    return std::unique_ptr<Retargeter>();
  };
  if (!source || !target) return fail("retarget: source or target skeleton missing");
  std::unique_ptr<Retargeter> r(new Retargeter());
  r->source_ = source;
  r->target_ = target;
  r->options_ = options;
  if (map.entries.empty()) {
    // The automatic map: its hierarchy warnings and the fingers it left out go to the report.
    const std::string why = AutomaticMap(*source, *target, &r->map_, &r->setup_warnings_);
    if (!why.empty()) return fail(why);
  } else {
    r->map_ = map;
  }
  // kExtract onto a target without the named root bone: the output adds it above the hips. The
  // alignment is the target's own, its joints and channels then moved one joint later.
  const bool extract = options.root_motion == RootMotion::kExtract;
  std::shared_ptr<const Skeleton> added;
  if (extract && !options.root_motion_bone.empty() &&
      target->FindJoint(options.root_motion_bone) < 0) {
    std::string add_error;
    added = AddRootBone(*target, options.root_motion_bone, options.target_up_axis, &add_error);
    if (!added) return fail(add_error);
  }
  r->alignment_ = std::make_unique<Alignment>();
  const std::string message = Align(*source, *target, r->map_, options, source_clip, target_clip,
                                    r->alignment_.get(), &r->setup_warnings_);
  if (!message.empty()) return fail(message);
  if (added) {
    const int n = added->num_channels() - target->num_channels();
    ShiftForAddedRoot(n, r->alignment_.get());
    if (!r->options_.limit_min.empty() || !r->options_.limit_max.empty()) {
      const double inf = std::numeric_limits<double>::infinity();
      r->options_.limit_min.insert(r->options_.limit_min.begin(), n, -inf);
      r->options_.limit_max.insert(r->options_.limit_max.begin(), n, inf);
    }
    r->setup_warnings_.push_back("--root-motion extract: the output adds the root bone '" +
                                 options.root_motion_bone + "' above the hips '" + target->name(0) +
                                 "': its skeleton differs from the target's by that joint");
    r->target_ = added;
    r->added_root_ = true;
  }
  if (extract) {
    const std::string root_error = SetUpRootMotion(*r->target_, r->options_, r->added_root_,
                                                   r->alignment_.get(), &r->setup_warnings_);
    if (!root_error.empty()) return fail(root_error);
  }
  return r;
}

void Retargeter::MoveMeshesToOutput(std::vector<Mesh>* meshes) const {
  if (!added_root_) return;
  for (Mesh& mesh : *meshes) {
    for (int& j : mesh.skin_joints) ++j;
    if (mesh.attach_joint >= 0) ++mesh.attach_joint;
  }
}

RetargetResult Retargeter::Run(const Clip& clip) const {
  const Skeleton& src = *source_;
  const Skeleton& tgt = *target_;
  const Alignment& a = *alignment_;
  if (!clip.matches(src)) {
    throw std::invalid_argument("retarget: clip has " + std::to_string(clip.num_channels()) +
                                " channels, the source skeleton " +
                                std::to_string(src.num_channels()));
  }
  RetargetResult result;
  result.warnings = setup_warnings_;
  const bool extract = options_.root_motion == RootMotion::kExtract;
  // kExtract places the hips as kScale does, then moves travel and heading onto the root bone.
  TransferredMotion motion =
      TransferRotations(src, tgt, a, extract ? RootMotion::kScale : options_.root_motion, clip);
  const std::vector<FootContact> contacts = FindFootContacts(a, motion, options_);
  CleanUpReport cleanup = IkCleanUp(tgt, a, options_, contacts, &motion, &result.warnings);
  RootMotionSummary root;
  if (extract) root = ExtractRootMotion(tgt, a, &motion.clip);
  result.metrics = MeasureRetarget(tgt, a, options_, motion, contacts, &result.warnings);
  result.metrics.ik_applied = cleanup.applied;
  result.metrics.ik_unreached = cleanup.unreached;
  if (extract) {
    result.metrics.root_bone = tgt.name(a.root_bone);
    result.metrics.root_bone_added = a.root_bone_added;
    result.metrics.root_path_length_m = root.path_length * a.target_unit;
    result.metrics.root_heading_change_deg = root.heading_change * kDegPerRad;
    result.metrics.root_heading_turned_deg = root.heading_turned * kDegPerRad;
  }
  result.records = std::move(cleanup.records);
  result.clip = std::move(motion.clip);
  result.clip.set_name(clip.name());  // the take keeps its name (CLI, Lua, any caller)
  return result;
}

RetargetResult Retarget(std::shared_ptr<const Skeleton> source, const Clip& clip,
                        std::shared_ptr<const Skeleton> target, const BoneMap& map,
                        const RetargetOptions& options, const Clip* target_clip) {
  std::string error;
  std::unique_ptr<Retargeter> r = Retargeter::Create(std::move(source), std::move(target), map,
                                                     options, &error, &clip, target_clip);
  if (!r) throw std::invalid_argument(error);
  return r->Run(clip);
}

}  // namespace rigel::retarget
