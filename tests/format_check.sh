#!/usr/bin/env bash
# Every C++ source tracked by git is clang-formatted (.clang-format: Google style, 100 columns).
#   format_check.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
if ! command -v clang-format >/dev/null; then
  echo "clang-format not installed: format check skipped"
  exit 0
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout: format check skipped"
  exit 0
fi
files=$(git ls-files '*.cc' '*.h')
out=$(clang-format --dry-run $files 2>&1 | grep "warning:" | cut -d: -f1 | sort | uniq -c)
if [ -n "$out" ]; then
  echo "not clang-formatted (run clang-format -i on them):"
  echo "$out"
  exit 1
fi
echo "all $(echo "$files" | wc -l) C++ files are clang-formatted"
