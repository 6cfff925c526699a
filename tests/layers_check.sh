#!/usr/bin/env bash
# rigel's layers point one way: core <- io <- lua <- cli (docs/architecture and DESIGN.md).
#   core/       (rigel_core)  includes core/ only
#   io/ importers/ exporters/ (rigel_io)  include core/ and io/; importers/ and exporters/ never
#               include each other (what both need lives in io/ or core/)
#   bindings/   (rigel_lua)   includes core/, io/, importers/, exporters/, bindings/; never cli/
#   bindings/python/ (the Python module) sits beside the CLI, above it: it may include cli/ too
#               (it runs the CLI's commands, cli/command_line.h), never bench/ or tests/
#   tests/      never include bench/ (bench may include tests/support/)
#   cli/        (rigel)       anything above; of the binding, only bindings/lua/rigel_module.h
# Fails, listing "file:line: #include ... (reason)", on any include that goes the other way.
#   layers_check.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  # Tracked and new (not ignored) files: a fresh file is checked before its first commit.
  files=$(git ls-files --cached --others --exclude-standard -- core io importers exporters \
    bindings cli tests | grep -E '\.(cc|h)$')
else
  files=$(find core io importers exporters bindings cli tests -name '*.cc' -o -name '*.h' 2>/dev/null)
fi

# forbidden DIR: the project folders a file under DIR may not include.
forbidden() {
  case "$1" in
    core) echo "io importers exporters bindings cli bench tests" ;;
    io) echo "importers exporters bindings cli bench tests" ;;
    importers) echo "exporters bindings cli bench tests" ;;
    exporters) echo "importers bindings cli bench tests" ;;
    bindings) echo "cli bench tests" ;;
    bindings/python) echo "bench tests" ;;
    cli) echo "bench tests" ;;
    tests) echo "bench" ;;  # shared test skeletons live under tests/support/, bench uses them
  esac
}

violations=0
checked=0
for f in $files; do
  [ -f "$f" ] || continue
  top=${f%%/*}
  case "$f" in bindings/python/*) top=bindings/python ;; esac
  bad=$(forbidden "$top")
  checked=$((checked + 1))
  while IFS=: read -r line text; do
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]+)[">].*/\1/' \
      <<<"$text")
    dir=${target%%/*}
    for b in $bad; do
      if [ "$dir" = "$b" ]; then
        echo "$f:$line: #include \"$target\" ($top/ may not include $b/)"
        violations=$((violations + 1))
      fi
    done
    # The CLI sees the binding only through its public header.
    if [ "$top" = cli ] && [ "$dir" = bindings ] && [ "$target" != bindings/lua/rigel_module.h ]; then
      echo "$f:$line: #include \"$target\" (cli/ may include only bindings/lua/rigel_module.h)"
      violations=$((violations + 1))
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][a-z_]+/' "$f")
done
if [ "$violations" -gt 0 ]; then
  echo "$violations include(s) against the layering (core <- io <- lua <- cli)"
  exit 1
fi
echo "layers: $checked files, every include goes one way"
