#!/usr/bin/env bash
# One paired ablation of issue 14/37: an arm and a fresh baseline trained at
# the same time from the same seed, one core each, then evaluated by
# simulations, so that whatever else loads the machine falls on both alike.
#
#     scripts/ablate-pair.sh NAME SEED [--set section.key=value ...]
#
# Trains /work/runs/NAME-base (configs/default.toml) and /work/runs/NAME
# (the same with the --set keys) for one hour each (ABLATE_HOURS), plays
# each final model against alpha-beta depths 6 and 8 (100 ballot games each
# at 2,000 simulations a move), and prints the two rows and the arm's paired
# difference by opening.  Both runs are resumable (scripts/ablate.py), so a
# killed pair goes on where it stopped when started again.
#
# Environment: TAMMI (the binary, default target/release/tammi), RUNS
# (default /work/runs), ABLATE_HOURS (default 1), NICE (default 15).
# Started in the background with setsid, the pair is its own scheduler
# autogroup, where nice ranks it only within the group: set the group's
# nice too (`echo 15 > /proc/PID/autogroup`) if other work shares the cores.
set -euo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,19p' "$0" >&2
    exit 2
fi
name=$1
seed=$2
shift 2
case $seed in
    '' | *[!0-9]*) echo "ablate-pair: SEED must be a number, got '$seed'" >&2; exit 2 ;;
esac

runs=${RUNS:-/work/runs}
hours=${ABLATE_HOURS:-1}
nice_level=${NICE:-15}
export TAMMI=${TAMMI:-target/release/tammi}
export MCTS_LIMIT=${MCTS_LIMIT:-sims=2000}
if [ ! -x "$TAMMI" ]; then
    echo "ablate-pair: no tammi binary at $TAMMI (set TAMMI)" >&2
    exit 2
fi
mkdir -p "$runs"
one_core=(--set selfplay.threads=1 --set run.match_threads=1)
common=(--seed "$seed" --hours "$hours" --runs "$runs" --eval 6:100,8:100)

nice -n "$nice_level" scripts/ablate.py "$name-base" "${common[@]}" "${one_core[@]}" \
    > "$runs/$name-base.out" 2>&1 &
base_pid=$!
nice -n "$nice_level" scripts/ablate.py "$name" "${common[@]}" "${one_core[@]}" "$@" \
    > "$runs/$name.out" 2>&1 &
arm_pid=$!
status=0
wait "$base_pid" || status=$?
wait "$arm_pid" || status=$?
if [ "$status" -ne 0 ]; then
    echo "ablate-pair: a run failed (see $runs/$name-base.out and $runs/$name.out)" >&2
    exit "$status"
fi

tail -n 1 "$runs/$name-base.out"
tail -n 1 "$runs/$name.out"
for depth in 6 8; do
    echo "paired, against depth $depth:"
    python3 scripts/paired-diff.py --opponent "alphabeta:depth=$depth" \
        "$runs/$name-base/eval/final-d$depth.pdn" "$runs/$name/eval/final-d$depth.pdn"
done
