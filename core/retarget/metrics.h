// Retarget pass: quality metrics of a retargeted clip (RetargetMetrics): bone and branch direction
// errors against the source, foot slide during contacts, distance of the feet and hands from the
// scaled source positions, joint-limit violations and knee hyperextension.
#ifndef RIGEL_CORE_RETARGET_METRICS_H_
#define RIGEL_CORE_RETARGET_METRICS_H_

#include <span>
#include <string>
#include <vector>

#include "core/retarget/alignment.h"
#include "core/retarget/contacts.h"
#include "core/retarget/retarget.h"
#include "core/retarget/transfer.h"
#include "core/skeleton.h"

namespace rigel::retarget {

// Measures `motion.clip` (a clip of `target`, after any clean-up) against the source motion it
// came from. Foot slide is the horizontal distance (mm) of each foot from its mean position over
// each of `contacts`. Fills every field of RetargetMetrics but ik_applied and ik_unreached (the
// clean-up's). Appends "channel limits ignored: expected N entries" to `*warnings` when
// options.limit_min/max are given with the wrong size.
RetargetMetrics MeasureRetarget(const Skeleton& target, const Alignment& a,
                                const RetargetOptions& options, const TransferredMotion& motion,
                                std::span<const FootContact> contacts,
                                std::vector<std::string>* warnings);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_METRICS_H_
