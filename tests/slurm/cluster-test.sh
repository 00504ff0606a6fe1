#!/usr/bin/env bash
# The cluster test of issue 19, run by .ci/run: a real single-node Slurm
# cluster on localhost runs a tammi trainer job and a job array of three
# `tammi worker` tasks over one run directory; one worker task is cancelled
# with scancel while it plays.  At the end every finished game must be on
# disk exactly once (`tammi train --verify`), the generations must have
# taken games from all three workers, and no partial shard may exist.
#
#   tests/slurm/cluster-test.sh [TAMMI_BINARY]
#
# Needs root (or sudo) to install slurm-wlm and munge from the Debian
# packages; the daemons it starts (munged, slurmctld, slurmd, on their own
# socket and ports) are stopped at the end.  If the cluster cannot be
# started, the test fails with the reason; it is never skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
tammi=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/release/tammi}")
[ -x "$tammi" ] || { echo "FAIL: no tammi binary at $tammi (build it first)" >&2; exit 1; }
export TAMMI=$tammi

fail() {
    echo "FAIL: $*" >&2
    for log in "${work:-/nonexistent}"/*.log "${work:-/nonexistent}"/*.out; do
        [ -f "$log" ] && { echo "--- $log (last lines)" >&2; tail -n 20 "$log" >&2; }
    done
    exit 1
}
# A command that fails under `set -e` says where, with the logs.
trap 'fail "line $LINENO: a command exited with status $?"' ERR

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else echo "FAIL: installing Slurm needs root or sudo" >&2; exit 1
    fi
}

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "installing slurm-wlm and munge from the Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
        { as_root apt-get update -q >/dev/null && \
          as_root apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null; } ||
        { echo "FAIL: apt-get could not install slurm-wlm and munge" >&2; exit 1; }
fi
[ "$(id -u)" = 0 ] || { echo "FAIL: the single-node cluster runs its daemons as root; run as root" >&2; exit 1; }

work=$(mktemp -d /tmp/tammi-slurm.XXXXXX)
cleanup() {
    for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
        [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    sleep 1
    for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
        [ -f "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null || true
    done
    # Job processes left by a failed test.
    pkill -f "tammi worker --run $work/" 2>/dev/null || true
    pkill -f "train --config .* --run $work/" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# munge: its own key, socket and files, so no system munge is touched.
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
munged --force --socket="$work/munge.sock" --key-file="$work/munge.key" \
    --pid-file="$work/munged.pid" --log-file="$work/munged.log" \
    --seed-file="$work/munged.seed" 2>>"$work/munged.log" ||
    fail "munged did not start"

ports=$(python3 -c 'import socket
ps = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ps.append(s)
print(" ".join(str(s.getsockname()[1]) for s in ps))')
read -r ctld_port slurmd_port <<<"$ports"
host=$(hostname -s)
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<EOF
ClusterName=tammi-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
KillWait=5
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
export SLURM_CONF=$work/slurm.conf
slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 60); do
    state=$(sinfo -h -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 1
done
[ "$state" = idle ] || fail "the node did not come up (sinfo says '${state:-nothing}')"
echo "cluster up: $(sinfo -h -o '%P %D %T %N')"

run=$work/run
trainer=$(sbatch --parsable -o "$work/trainer.out" scripts/slurm/trainer.sbatch \
    "$run" "$repo/tests/slurm/tiny-external.toml" --generations 4) || fail "sbatch trainer"
array=$(sbatch --parsable --array=0-2 -o "$work/worker-%a.out" scripts/slurm/worker.sbatch \
    "$run" 1) || fail "sbatch workers"
echo "trainer job $trainer, worker array $array"

# Cancel task 1 while it plays a chunk: once it has finished a chunk with a
# trained model (games with the uniform first model take milliseconds) and
# has started the next one.  The cancel can still land between two chunks
# (a chunk takes well under a second); the checks below hold either way, and
# the one about the cut chunk applies when it was cut.
victim=$run/workers/$array-1
cancelled=
for _ in $(seq 1200); do
    last=$(ls -d "$victim"/chunk-* 2>/dev/null | sort | tail -n 1 || true)
    if [ -n "$last" ] && [ ! -e "$last/.done.json" ] && [ -e "$last/.start.json" ] \
        && ! grep -q '"model_generation": *0[,}]' "$last/.start.json" \
        && ls "$victim"/chunk-*/.done.json >/dev/null 2>&1; then
        scancel "${array}_1"
        cancelled=$(date +%s)
        break
    fi
    sleep 0.1
done
[ -n "$cancelled" ] || fail "worker task 1 started no chunk with a trained model within 2 minutes"
echo "cancelled worker task ${array}_1"

for _ in $(seq 600); do
    squeue -h -j "$trainer" 2>/dev/null | grep -q . || break
    sleep 1
done
squeue -h -j "$trainer" 2>/dev/null | grep -q . && fail "the trainer job did not finish in 10 minutes"
grep -q "generation limit reached" "$work/trainer.out" || fail "the trainer job did not reach its generation limit"
scancel "$array"
for _ in $(seq 60); do
    squeue -h 2>/dev/null | grep -q . || break
    sleep 1
done
squeue -h | grep -q . && fail "jobs still running after scancel: $(squeue -h)"

"$tammi" train --run "$run" --verify | tee "$work/verify.log" || fail "tammi train --verify refused the run"
"$tammi" train --run "$run" --report >"$work/report.md" || fail "tammi train --report"

python3 - "$run" "$array" <<'EOF' || fail "the run's records are wrong"
import glob, json, os, sys
run, array = sys.argv[1], sys.argv[2]
ids = [f"{array}-{i}" for i in range(3)]
manifests = sorted(glob.glob(os.path.join(run, "external", "gen-*.json")))
gens = [json.load(open(m)) for m in manifests]
assert [g["generation"] for g in gens] == [1, 2, 3, 4], [g["generation"] for g in gens]
seen = set()
fresh_by = {}
for g in gens:
    for c in g["fresh"] + g["stale"]:
        key = (c["worker"], c["chunk"])
        assert key not in seen, f"chunk {key} taken in twice"
        seen.add(key)
    for c in g["fresh"]:
        fresh_by[c["worker"]] = fresh_by.get(c["worker"], 0) + c["games"]
missing = [i for i in ids if fresh_by.get(i, 0) == 0]
assert not missing, f"no games trained on from workers {missing}: {fresh_by}"
state = json.load(open(os.path.join(run, "state.json")))
assert state["generation"] == 5, state
assert state["games"] == sum(fresh_by.values()), (state["games"], fresh_by)
# Only complete chunks are taken in; a chunk cut by the cancel is not.
for path in glob.glob(os.path.join(run, "workers", "*", "chunk-*")):
    key = (os.path.basename(os.path.dirname(path)), int(path.rsplit("-", 1)[1]))
    done = os.path.exists(os.path.join(path, ".done.json"))
    assert done or key not in seen, f"incomplete chunk {key} was taken in"
chunks = sorted(glob.glob(os.path.join(run, "workers", ids[1], "chunk-*")))
assert chunks, "the cancelled worker wrote no chunk"
if os.path.exists(os.path.join(chunks[-1], ".done.json")):
    print("note: the cancel landed between two chunks of the cancelled worker")
else:
    print("the cancelled worker was cut inside", os.path.basename(chunks[-1]))
# No partial shard: every visible file is a whole shard or its PDN (verify
# read every shard); interrupted writes only ever leave hidden temporaries.
for path in glob.glob(os.path.join(run, "workers", "*", "chunk-*", "*")):
    name = os.path.basename(path)
    assert name.startswith("shard-") and name.endswith((".bin", ".pdn")), path
print("ok: games trained on per worker:", fresh_by, "state:", state["games"], "games")
EOF
echo "PASS: Slurm cluster test (trainer job $trainer, worker array $array)"
