#!/usr/bin/env bash
# Self-play throughput with 1, 2 and 4 `tammi worker` processes on this
# machine (issue 19), and the trainer's cost of taking in their games.
#
#   scripts/worker-scaling.sh [SECONDS] [MODEL]
#
# Each case: a fresh run of configs/default.toml with [external] enabled and
# MODEL (default models/english-default) as its accepted model, N workers of
# one thread each for SECONDS (default 120), then the games in complete and
# incomplete chunks counted.  Then the trainer's intake of all of them:
# `tammi train --only selfplay`, whose stage time (state.json) is the intake
# itself, and `--verify` (every shard read and checked) as a whole command.
# Run it on an otherwise idle machine.
set -euo pipefail
seconds=${1:-120}
model=${2:-models/english-default}
tammi=${TAMMI:-target/release/tammi}
work=$(mktemp -d /tmp/tammi-scaling.XXXXXX)
trap 'pkill -f "tammi.* worker --run $work/" 2>/dev/null || true; rm -rf "$work"' EXIT
cp configs/default.toml "$work/base.toml"
python3 - "$work/base.toml" <<'EOF'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
section = None
for i, l in enumerate(lines):
    if l.startswith("["):
        section = l.strip()
    if section == "[external]" and l.startswith("enabled ="):
        lines[i] = "enabled = true"
    if section == "[run]" and l.startswith("uniform_first_generation"):
        lines[i] = "uniform_first_generation = false"
    if section == "[run]" and l.startswith("games_per_generation"):
        lines[i] = "games_per_generation = 1"
open(p, "w").write("\n".join(lines))
EOF
printf '| workers | games | games/s | positions/s | chunks | intake stage | --verify command |\n|---|---|---|---|---|---|---|\n'
for n in 1 2 4; do
    run=$work/run-$n
    "$tammi" train --config "$work/base.toml" --run "$run" --generations 1 --only selfplay \
        >/dev/null 2>&1 &
    creator=$!
    # The run exists once state.json does; the trainer then waits for games.
    for _ in $(seq 100); do [ -f "$run/state.json" ] && break; sleep 0.1; done
    kill "$creator" 2>/dev/null || true
    wait "$creator" 2>/dev/null || true
    rm -rf "$run/models/gen-0000" && cp -r "$model" "$run/models/gen-0000"
    pids=()
    for i in $(seq "$n"); do
        "$tammi" worker --run "$run" --id "w$i" --threads 1 >/dev/null 2>&1 &
        pids+=($!)
    done
    sleep "$seconds"
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    read -r games positions < <(python3 - "$run" <<'EOF'
import glob, json, os, sys
run = sys.argv[1]
games = positions = 0
for done in glob.glob(os.path.join(run, "workers", "*", "chunk-*", ".done.json")):
    d = json.load(open(done))
    games += d["games"]; positions += d["positions"]
# Games of incomplete chunks: one pending file each, or in shards.
for chunk in glob.glob(os.path.join(run, "workers", "*", "chunk-*")):
    if not os.path.exists(os.path.join(chunk, ".done.json")):
        games += len(glob.glob(os.path.join(chunk, ".pending", "game-*.bin")))
        for s in glob.glob(os.path.join(chunk, "shard-*.bin")):
            a, b = os.path.basename(s)[6:-4].split("-")
            games += int(b) - int(a) + 1
print(games, positions)
EOF
)
    t0=$(date +%s.%N)
    "$tammi" train --run "$run" --verify >/dev/null
    t1=$(date +%s.%N)
    "$tammi" train --run "$run" --only selfplay >/dev/null
    t2=$(date +%s.%N)
    python3 - "$run" <<EOF
import glob, json, os, sys
run = sys.argv[1]
n, g, p, s = $n, $games, $positions, $seconds
v = $t1 - $t0
stage = json.load(open(os.path.join(run, "state.json")))["seconds"]
chunks = len(glob.glob(os.path.join(run, "workers", "*", "chunk-*", ".done.json")))
print(f"| {n} | {g} | {g/s:.2f} | {p/s:.0f} (complete chunks) | {chunks} | {1000*stage:.1f} ms | {v:.2f} s |")
EOF
done
