#!/usr/bin/env bash
# Alpha-beta's node rate and depth at a fixed time per move with each
# evaluation (issue 36): every position reached by the English deck's
# openings (the first N of them), searched once per evaluation, in one run.
#
#   scripts/eval-speed.sh [MOVETIME] [N] EVAL...
#
# EVAL is a spec's eval= value (a model directory, `material`) or `-` for
# the handcrafted evaluation.  Prints, per evaluation: positions, mean
# depth, mean nodes per second.  Run it on an otherwise idle machine.
set -euo pipefail
movetime=${1:-200ms}
n=${2:-40}
shift 2 || true
[ $# -gt 0 ] || set -- -
tammi=${TAMMI:-target/release/tammi}
deck=search/data/english-3move.txt
mapfile -t openings < <(sed 's/ *#.*//' "$deck" | grep -v '^$' | head -n "$n")
printf '| evaluation | positions | mean depth | mean nodes/s |\n|---|---:|---:|---:|\n'
for eval in "$@"; do
    spec="alphabeta:movetime=$movetime"
    [ "$eval" = - ] || spec="alphabeta:eval=$eval,movetime=$movetime"
    for opening in "${openings[@]}"; do
        "$tammi" analyze --player "$spec" --play "$opening" --json
    done | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
depth = sum(r["depth"] for r in rows) / len(rows)
nps = sum(r["nps"] for r in rows) / len(rows)
name = sys.argv[1] if sys.argv[1] != "-" else "handcrafted"
print(f"| {name} | {len(rows)} | {depth:.1f} | {nps/1e6:.2f} M |")
' "$eval"
done
