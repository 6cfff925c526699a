// Internal to rigel_batch: the worker-process runner behind batch::Run (batch.h, RunOptions::
// processes).
#ifndef RIGEL_CLI_BATCH_WORKERS_H_
#define RIGEL_CLI_BATCH_WORKERS_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cli/batch/batch.h"

namespace rigel::batch {

// Before clip i: fills its provenance; false when --resume skips it (the report is then final).
using PrepareFn = std::function<bool(size_t, Provenance*, ClipReport*)>;
// After clip i: its report and the seconds it took.
using FinishFn = std::function<void(size_t, ClipReport, double)>;

// Runs `process` over `inputs` in `jobs` forked worker processes (see RunOptions), calling
// `prepare` before and `finish` after each clip, from this thread.
void RunInWorkers(const InputList& inputs, const RunOptions& options, int jobs,
                  const Processor& process, const PrepareFn& prepare, const FinishFn& finish);

}  // namespace rigel::batch

#endif  // RIGEL_CLI_BATCH_WORKERS_H_
