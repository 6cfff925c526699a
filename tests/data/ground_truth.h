// Reads tests/data/ground_truth.csv (tests/data/README.md): what a person sees when opening each
// file of ../shared/data in Blender 3.4. Shared by the ground-truth test and the corpus stand
// tests (issue 26).
#ifndef RIGEL_TESTS_DATA_GROUND_TRUTH_H_
#define RIGEL_TESTS_DATA_GROUND_TRUTH_H_

#include <fstream>
#include <string>
#include <vector>

namespace rigel::testing {

// One row: the file under ../shared/data, its signed up axis ("?" when nobody can tell), metres
// per file unit ("?"), standing height in metres (empty without a figure), humanoid or not.
struct Truth {
  std::string file, up, unit, height;
  bool humanoid = false;
};

inline std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The rows of the table at `path` (comment lines start with '#'; the first other line is the
// header).
inline std::vector<Truth> ReadTruth(const std::string& path) {
  std::ifstream in(path);
  std::vector<Truth> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    const std::vector<std::string> f = SplitCsv(line);
    if (f.size() < 5) continue;
    rows.push_back({f[0], f[1], f[2], f[3], f[4] == "yes"});
  }
  return rows;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_DATA_GROUND_TRUTH_H_
