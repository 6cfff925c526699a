#include "core/retarget/retarget.h"

#include <array>
#include <cstddef>
#include <stdexcept>
#include <utility>

#include "core/enum_names.h"
#include "core/retarget/alignment.h"
#include "core/retarget/cleanup.h"
#include "core/retarget/contacts.h"
#include "core/retarget/metrics.h"
#include "core/retarget/transfer.h"

namespace rigel::retarget {

namespace {

constexpr std::array<std::string_view, 3> kRootMotionNames = {"scale", "keep", "in-place"};
static_assert(kRootMotionNames.size() == static_cast<std::size_t>(RootMotion::kInPlace) + 1);

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
    std::vector<std::string> notes, left_out;
    r->map_ = AutoMap(*source, *target, &notes, &left_out);
    r->map_.origin = "automatic map";
    for (const std::string& n : notes) {
      if (n.starts_with("warning: ")) r->setup_warnings_.push_back("automatic map: " + n.substr(9));
    }
    for (const std::string& n : left_out) r->setup_warnings_.push_back("automatic map: " + n);
  } else {
    r->map_ = map;
  }
  r->alignment_ = std::make_unique<Alignment>();
  const std::string message = Align(*source, *target, r->map_, options, source_clip, target_clip,
                                    r->alignment_.get(), &r->setup_warnings_);
  if (!message.empty()) return fail(message);
  return r;
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
  TransferredMotion motion = TransferRotations(src, tgt, a, options_.root_motion, clip);
  const std::vector<FootContact> contacts = FindFootContacts(a, motion, options_);
  const CleanUpReport cleanup = IkCleanUp(tgt, a, options_, contacts, &motion, &result.warnings);
  result.metrics = MeasureRetarget(tgt, a, options_, motion, contacts, &result.warnings);
  result.metrics.ik_applied = cleanup.applied;
  result.metrics.ik_unreached = cleanup.unreached;
  result.clip = std::move(motion.clip);
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
