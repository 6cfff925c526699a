#!/usr/bin/env bash
# The job array of docs/farm.md on a real Slurm: sets up a one-node cluster on this machine
# (munged, slurmctld and slurmd on localhost, 2 CPUs, every file under WORK_DIR, free ports),
# submits the documented `bake_array.sbatch` in 4 shards and the merge job, and checks that the
# shards' outputs equal a single `rigel bake` run byte for byte and that the merged report lists
# every clip once. Then it cancels a running task with `scancel`, resubmits it as docs/farm.md
# says, and checks that it resumes and ends with the same bytes.
#   slurm_farm_test.sh RIGEL SOURCE_DIR WORK_DIR [DATA_DIR]
# Exits 77 (skipped) when not root or when Slurm or munge is not installed. Without DATA_DIR
# (the shared corpus) it bakes clips generated from samples/cmu_walk/walk.bvh instead.
# Idempotent: stops the daemons a previous run left (by their pid files) and starts afresh; the
# daemons are stopped on exit.
set -uo pipefail
rigel=$1; src=$2; work=$3; data=${4:-}
skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the one-node Slurm cluster needs root (slurmd starts jobs as their user)"
for b in munged slurmctld slurmd sbatch squeue scancel scontrol sinfo; do
  command -v "$b" > /dev/null || skip "$b not found: install Debian's slurm-wlm and munge (.ci/install-deps)"
done
fail=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
die() { echo "FAILED: $*"; exit 1; }

cluster=$work/cluster
# Stops the daemons started by this script (pid files under $cluster), only if the pid still
# runs one of them with this cluster's configuration.
stop_cluster() {
  local f pid
  # Jobs still running (a failed check): cancel them first, slurmstepd outlives slurmd.
  if [ -f "$cluster/slurm.conf" ] && [ -n "$(cat "$cluster/slurmctld.pid" 2>/dev/null)" ]; then
    SLURM_CONF=$cluster/slurm.conf scancel -u "$(id -un)" 2> /dev/null
    for _ in $(seq 1 50); do
      [ -z "$(SLURM_CONF=$cluster/slurm.conf squeue -h 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
  for f in slurmd slurmctld munged; do
    [ -f "$cluster/$f.pid" ] || continue
    pid=$(cat "$cluster/$f.pid")
    if [ -n "$pid" ] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$cluster"; then
      kill "$pid" 2>/dev/null
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$cluster/$f.pid"
  done
}
stop_cluster
rm -rf "$work"
mkdir -p "$cluster"/{state,spool,munge} "$work/lib"
chmod 700 "$cluster" "$cluster/munge"
trap 'stop_cluster' EXIT
trap 'exit 143' TERM INT HUP  # so that the EXIT trap runs

# The clips: the shared corpus's BVH files, or a generated set from the sample walk.
if [ -n "$data" ] && [ -d "$data" ]; then
  find "$data" -name '*.bvh' | sort > "$work/corpus.txt"
  while read -r f; do
    rel=${f#"$data"/}; mkdir -p "$work/lib/$(dirname "$rel")"; cp "$f" "$work/lib/$rel"
  done < "$work/corpus.txt"
  echo "corpus: $(wc -l < "$work/corpus.txt") BVH files from $data"
else
  echo "note: shared corpus absent; baking 12 clips generated from samples/cmu_walk/walk.bvh"
  for i in $(seq 1 12); do
    awk -v k="$i" 'BEGIN{m=0} /^MOTION/{m=1} { if (m && $0 ~ /^[-0-9]/) { $2 = $2 + k/10 } print }' \
      "$src/samples/cmu_walk/walk.bvh" > "$work/lib/walk$i.bvh"
  done
fi
nclips=$(find "$work/lib" -name '*.bvh' | wc -l)

# Two free TCP ports on localhost, from a base that depends on WORK_DIR (parallel checkouts).
port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$((20000 + $(printf '%s' "$work" | cksum | cut -d' ' -f1) % 20000))
while ! port_free "$base" || ! port_free $((base + 1)); do base=$((base + 2)); done
host=$(hostname -s)
mem_mb=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)

dd if=/dev/urandom of="$cluster/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$cluster/munge/munge.key"
cat > "$cluster/slurm.conf" <<EOF
ClusterName=rigelfarm
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge/munge.socket
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.daemon.pid
SlurmdPidFile=$cluster/slurmd.daemon.pid
SlurmctldLogFile=$cluster/slurmctld.log
SlurmdLogFile=$cluster/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem_mb State=UNKNOWN
PartitionName=farm Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$cluster/slurm.conf
munged -F --force --key-file="$cluster/munge/munge.key" --socket="$cluster/munge/munge.socket" \
  --pid-file="$cluster/munge/munged.pid" --log-file="$cluster/munge/munged.log" \
  --seed-file="$cluster/munge/munged.seed" > "$cluster/munged.out" 2>&1 &
echo $! > "$cluster/munged.pid"
for _ in $(seq 1 50); do [ -S "$cluster/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$cluster/munge/munge.socket" ] || die "munged did not start: $(cat "$cluster/munged.out")"
slurmctld -D -f "$cluster/slurm.conf" > "$cluster/slurmctld.out" 2>&1 &
echo $! > "$cluster/slurmctld.pid"
slurmd -D -f "$cluster/slurm.conf" -N "$host" > "$cluster/slurmd.out" 2>&1 &
echo $! > "$cluster/slurmd.pid"
state=""
for _ in $(seq 1 300); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.1
done
[ "$state" = idle ] || {
  tail -n 20 "$cluster/slurmctld.log" "$cluster/slurmd.log" 2>/dev/null
  die "the one-node cluster did not come up (node state '$state')"
}
echo "ok: one-node Slurm cluster up ($host, 2 CPUs, ports $base-$((base + 1)))"

# The two blocks of docs/farm.md: the job script, and the submission (its `export` line sets the
# farm's values; the test sets its own).
awk '/^```/ { if (inblk) { inblk = 0; n++ } else inblk = 1; next } inblk { print > (dir "/block" (n + 0) ".sh") }' \
  dir="$work" "$src/docs/farm.md"
[ -f "$work/block0.sh" ] && [ -f "$work/block1.sh" ] || die "docs/farm.md lost its two code blocks"
cp "$work/block0.sh" "$work/bake_array.sbatch"
grep -v '^export ' "$work/block1.sh" > "$work/submit.sh"
echo 'echo "array job: $jobid"' >> "$work/submit.sh"  # the block keeps the array's id in $jobid
rig=$(sed -n 's/^export .*RIG=\([^ ]*\).*/\1/p' "$work/block1.sh")
[ -f "$src/$rig" ] || die "docs/farm.md's rig '$rig' is not in the repository"
export PATH="$(dirname "$rigel"):$PATH"
export RIG=$src/$rig LIBRARY=$work/lib SHARDS=4 CPUS=1

# Waits until job $1 (and its array tasks) left the queue; prints the tasks' states.
wait_job() {
  for _ in $(seq 1 1800); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && break
    sleep 0.2
  done
  scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr '\n' ' '
}

# 1. The reference: one `rigel bake` of the whole library, same options as the job script.
fmt=$(grep -o -- '--format [a-z]*' "$work/bake_array.sbatch" | cut -d' ' -f2)
start=$(date +%s.%N)
"$rigel" bake --rig "$RIG" --format "${fmt:-bvh}" --out "$work/single" -j 1 --no-progress \
  --report "$work/single.json" "$work/lib" 2> "$work/single.err"
single_rc=$?
echo "single run: rc $single_rc, $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s"
check "the single run wrote outputs" test -n "$(ls -A "$work/single" 2>/dev/null)"

# 2. The documented submission: 4 shards, then the merge job once they finished.
export OUT=$work/farm
(cd "$work" && bash -euo pipefail submit.sh) > "$work/submit.out" 2>&1
array_id=$(sed -n 's/^array job: \([0-9]*\).*/\1/p' "$work/submit.out")
merge_id=$(grep -o 'Submitted batch job [0-9]\+' "$work/submit.out" | grep -o '[0-9]\+$')
[ -n "$array_id" ] && [ -n "$merge_id" ] || die "sbatch refused the jobs: $(cat "$work/submit.out")"
echo "array job $array_id: $(wait_job "$array_id") (at ${SECONDS} s)"
echo "merge job $merge_id: $(wait_job "$merge_id") (at ${SECONDS} s)"
tasks=$(scontrol show job "$array_id" | grep -c 'ArrayTaskId=[0-3]\b')
check "4 array tasks ran" test "$tasks" = 4
# A task ends FAILED exactly when a clip of its shard failed (rigel bake exits 1), else COMPLETED.
for k in 0 1 2 3; do
  want=COMPLETED
  python3 -c "import json,sys; sys.exit(json.load(open('$OUT/reports/shard_$k.json'))['summary']['failed'] > 0)" \
    || want=FAILED
  check "task $k ended $want" bash -c "scontrol show job ${array_id}_$k | grep -q JobState=$want"
done
check "merge job completed" bash -c "scontrol show job $merge_id | grep -q JobState=COMPLETED"
check "a log per task" test "$(ls "$work"/logs/bake_*_*.log 2>/dev/null | wc -l)" = 4
check "shard outputs = single run, byte for byte" diff -r -x '.*' -x reports -x report.json \
  "$work/single" "$work/farm"
check "merged report lists every clip once, as the single run does" python3 -c "
import json, os
m = json.load(open('$work/farm/report.json')); s = json.load(open('$work/single.json'))
ins = [c['input'] for c in m['clips']]
assert len(ins) == len(set(ins)) == $nclips, (len(ins), $nclips)
assert sorted(ins) == ins, 'not sorted by input'
for k in ('clips', 'ok', 'failed', 'frames'):
    assert m['summary'][k] == s['summary'][k], (k, m['summary'], s['summary'])
assert {c['input']: c['status'] for c in m['clips']} == {c['input']: c['status'] for c in s['clips']}
"

# 3. scancel mid-run, resubmit the task, resume: same bytes. The bake tests' slow_rig.lua does
# busy work on every frame, so that the task is still running after its first clip.
mkdir -p "$work/slowlib"
for i in $(seq 1 12); do  # 12 clips of 400 frames (the sample walk ten times), 3 per shard
  awk -v k="$i" 'BEGIN { m = 0 } /^MOTION/ { m = 1 } /^Frames:/ { print "Frames: 400"; next }
    m && $0 ~ /^[-0-9]/ { $2 = $2 + k / 10; for (r = 0; r < 10; r++) rows[r] = rows[r] $0 "\n"; next }
    { print } END { for (r = 0; r < 10; r++) printf "%s", rows[r] }' \
    "$src/samples/cmu_walk/walk.bvh" > "$work/slowlib/walk$(printf %02d "$i").bvh"
done
export RIG=$src/tests/bake/fixtures/slow_rig.lua LIBRARY=$work/slowlib OUT=$work/farm2
"$rigel" bake --rig "$RIG" --format "${fmt:-bvh}" --out "$work/single2" -j 2 --no-progress \
  "$LIBRARY" 2> "$work/single2.err"
check "slow single run exits 0" test $? = 0
(cd "$work" && bash -euo pipefail submit.sh) > "$work/submit2.out" 2>&1
array2=$(sed -n 's/^array job: \([0-9]*\).*/\1/p' "$work/submit2.out")
merge2=$(grep -o 'Submitted batch job [0-9]\+' "$work/submit2.out" | grep -o '[0-9]\+$')
[ -n "$array2" ] && [ -n "$merge2" ] || die "sbatch refused the jobs: $(cat "$work/submit2.out")"
# Cancel task 0 once it wrote its first clip (the shard's first input: walk01).
for _ in $(seq 1 600); do
  [ -e "$OUT/walk01.${fmt:-bvh}" ] && break
  sleep 0.05
done
scancel "${array2}_0"
echo "array job $array2: $(wait_job "$array2") (at ${SECONDS} s)"
echo "merge job $merge2: $(wait_job "$merge2") (at ${SECONDS} s)"
check "task 0 was cancelled" bash -c "scontrol show job ${array2}_0 | grep -q JobState=CANCELLED"
check "tasks 1-3 completed" test "$(scontrol show job "$array2" | grep -c JobState=COMPLETED)" = 3
done_before=$(ls "$OUT" | grep -c "\.${fmt:-bvh}\$")
check "the cancelled task left some of its clips but not all ($done_before of 12)" \
  test "$done_before" -ge 10 -a "$done_before" -lt 12
# Resubmit the task as docs/farm.md says (`sbatch --array=K bake_array.sbatch`), then merge.
resub=$(sed -n 's/.*\(sbatch --array=[^`]*bake_array.sbatch\).*/\1/p' "$src/docs/farm.md" | head -1)
check "docs/farm.md gives the resubmission command" test -n "$resub"
resub=$(echo "$resub" | sed 's/--array=[0-9]*/--array=0/; s/^sbatch /sbatch --parsable /')
echo "resubmitting: $resub"
resub_id=$(cd "$work" && eval "$resub" | cut -d';' -f1)
echo "resubmitted task 0 as job $resub_id: $(wait_job "$resub_id") (at ${SECONDS} s)"
check "resubmitted task completed" bash -c "scontrol show job $resub_id | grep -q JobState=COMPLETED"
check "the resumed task skipped the clips it had baked" python3 -c "
import json; s = json.load(open('$OUT/reports/shard_0.json'))['summary']
assert s['skipped'] >= 1 and s['ok'] + s['skipped'] == 3 and s['failed'] == 0, s"
remerge=$(cd "$work" && sbatch --parsable --dependency=afterany:"$resub_id" --output=logs/remerge_%j.log \
  --wrap "rigel bake --merge-reports $OUT/reports/shard_*.json --report $OUT/report.json" | cut -d';' -f1)
echo "merge job again $remerge: $(wait_job "$remerge") (at ${SECONDS} s)"
check "the merge after the resubmission lists the 12 clips, all baked or skipped" python3 -c "
import json; r = json.load(open('$OUT/report.json')); s = r['summary']
assert s['clips'] == 12 and s['failed'] == 0 and s['ok'] + s['skipped'] == 12, s
assert len(set(c['input'] for c in r['clips'])) == 12"
check "no partial file left" test -z "$(ls -A "$OUT" | grep '\.tmp')"
check "after scancel and resubmission: outputs = single run, byte for byte" \
  diff -r -x '.*' -x reports -x report.json "$work/single2" "$OUT"
[ "$fail" = 0 ] && echo "all farm checks passed" 
exit $fail
