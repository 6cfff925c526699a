#!/usr/bin/env bash
# `rigel run` runs the script in a child process: when that process dies (here: SIGSEGV sent to
# a script stuck in a loop, as a crash in a binding would), the CLI survives, names the signal
# and exits 1.
#   run_crash_test.sh RIGEL WORK_DIR
set -uo pipefail
rigel=$1; work=$2
rm -rf "$work"; mkdir -p "$work"
echo 'local x = 0 while true do x = x + 1 end' > "$work/loop.lua"
"$rigel" run "$work/loop.lua" 2> "$work/err.txt" &
parent=$!
child=""
for _ in $(seq 100); do
  child=$(cat "/proc/$parent/task/$parent/children" 2> /dev/null | awk '{print $1}')
  [ -n "$child" ] && break
  sleep 0.05
done
if [ -z "$child" ]; then echo "FAILED: no script process under rigel run"; kill "$parent"; exit 1; fi
sleep 0.2
kill -SEGV "$child"
wait "$parent"
rc=$?
cat "$work/err.txt"
fail=0
[ "$rc" = 1 ] || { echo "FAILED: exit $rc, expected 1"; fail=1; }
grep -q "^rigel run: error: .*loop.lua: the script's process was killed by signal 11 (SEGV)$" \
  "$work/err.txt" || { echo "FAILED: message"; fail=1; }
exit $fail
