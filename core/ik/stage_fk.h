// Forward kinematics of a stage (internal to core/ik): the flat per-stage program that Prepare
// builds (StageWork::fk), run once per iteration; it fills the joint frames and every column's
// world axis and pivot, the inputs of the task rows (core/ik/task_rows.h).
#ifndef RIGEL_CORE_IK_STAGE_FK_H_
#define RIGEL_CORE_IK_STAGE_FK_H_

#include "core/ik/plan.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::ik::internal {

// Forward kinematics over the stage's joints (its flattened program st.fk) for the channel
// values `theta` (a whole Clip row), filling the joint frames w.rot/w.pos and the columns' world
// axes and pivots (seed 001 eq. 21-26: axis k is column ak of the rotation after channel k).
void ChainFk(const Skeleton& s, Workspace::Impl& w, StageWork& st, const double* theta);

// ChainFk at the start of an iteration, skipped when the joint frames are those of these exact
// channel values (a frame-by-frame solve warm-started from the previous answer). Only with one
// stage: another stage may have overwritten shared joints' frames.
void StartFk(const Skeleton& s, Workspace::Impl& w, StageWork& st, const double* theta);

// pose.world for every joint after a solve: the last stage's joint frames when they are current
// (they are computed exactly as ForwardKinematics does), forward kinematics for the other joints.
void UpdateWorldAfterSolve(const Skeleton& s, Workspace::Impl& w, Pose& pose);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_STAGE_FK_H_
