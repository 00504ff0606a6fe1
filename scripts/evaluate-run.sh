#!/usr/bin/env bash
# Plays the final accepted model of a training run against alpha-beta at
# fixed depths, as issue 14's bars are stated: MCTS at 200 ms per move,
# ballot openings, colours swapped per opening, two games at once.
#
#   scripts/evaluate-run.sh RUN [DEPTH:GAMES ...]
#
# Default: depth 8 and depth 6 over 100 games each, depth 4 over 60.
# Results are appended to RUN/eval/final.jsonl (one JSON line per match,
# readable by `tammi ratings`) and the games written to RUN/eval/final-dN.pdn.
# Run it on an otherwise idle machine: the MCTS side plays by the clock.
# MCTS_LIMIT=sims=2000 plays it by simulations instead (about 200 ms a move
# for the default 4x32 net on one 2026 EPYC core), which no other load on
# the machine can change: the way to compare runs evaluated side by side.
set -euo pipefail
run=${1:?usage: scripts/evaluate-run.sh RUN [DEPTH:GAMES ...]}
shift
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(8:100 6:100 4:60)
tammi=${TAMMI:-target/release/tammi}
limit=${MCTS_LIMIT:-movetime=200ms}
accepted=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["accepted"])' "$run/state.json")
model=$(printf '%s/models/gen-%04d' "$run" "$accepted")
[ -d "$model" ] || { echo "no model directory $model" >&2; exit 1; }
echo "final accepted model: $model"
for spec in "${specs[@]}"; do
    depth=${spec%%:*}
    games=${spec##*:}
    echo "== mcts:model=$model,$limit vs alphabeta:depth=$depth, $games games"
    "$tammi" match --a "mcts:model=$model,$limit" --b "alphabeta:depth=$depth" \
        --games "$games" --openings ballot --threads 2 \
        --results "$run/eval/final.jsonl" --pdn "$run/eval/final-d$depth.pdn"
done
