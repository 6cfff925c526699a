// Every take of an input: which takes a command processes (--take NAME or all), where each one's
// BVH output goes (BVH holds one take per file), and the per-take rows of a batch report.
// `rigel convert`, `rigel bake` and `rigel retarget` share these (docs/formats.md, "Takes").
#ifndef RIGEL_CLI_BATCH_TAKES_H_
#define RIGEL_CLI_BATCH_TAKES_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cli/batch/batch.h"
#include "core/scene.h"

namespace rigel::batch {

// The indices of the clips (takes) of `scene` to process: all of them when `take` is empty, else
// the one named `take`. Throws std::runtime_error "PATH: no take 'X' (takes: 'a', 'b')" when no
// clip has that name, and "PATH: no animation" when the scene has no clip.
std::vector<std::size_t> SelectTakes(const Scene& scene, const std::string& take,
                                     const std::string& path);

// File-safe forms of take names, one per name and all different: letters, digits, '-' and '_'
// are kept, anything else becomes '_'; a name left with nothing becomes "takeN" (N from 1), and a
// name equal to an earlier one (after that) gets "_N" appended.
std::vector<std::string> FileSafeTakeNames(const std::vector<std::string>& names);

// Where one take of a multi-take input goes when the output format holds one take per file:
// DIR/STEM.bvh -> DIR/STEM.<safe take>.bvh.
std::string TakeOutputPath(const std::string& output, const std::string& safe_take);

// Writes the outputs of one input's takes, whose report rows are `rows` (each with its output and
// frames): `write_all()` when they go to one file (one take, or a format that holds several),
// else `write_take(k)` for each take into rows[k].output, removing the files already written if
// one fails (nothing of the input is left half written) and saying on stderr, as `command`, that
// BVH got a file per take. Then shares the write time out over the rows by frames (phases.write,
// added to seconds).
void WriteTakeOutputs(const char* command, const std::string& input, bool split,
                      std::vector<ClipReport>& rows, const std::function<void()>& write_all,
                      const std::function<void(std::size_t)>& write_take);

// The report of an input from its take rows: the one row itself for a single take (output left
// for batch::Run to fill), else a report holding the rows as `takes` with their frames and solver
// frame counts summed, "suspect" when a take is; `read_seconds` goes to its read phase.
ClipReport InputReport(std::vector<ClipReport> rows, double read_seconds);

// The names of the clips of `scene` at `indices`.
std::vector<std::string> TakeNames(const Scene& scene, const std::vector<std::size_t>& indices);

}  // namespace rigel::batch

#endif  // RIGEL_CLI_BATCH_TAKES_H_
