#!/usr/bin/env bash
# Do two tammi binaries play the same games?  Records fixed-seed self-play,
# matches, an opening deck and analyses with each (one thread) and compares
# the files byte for byte.  For refactors that must not change behaviour.
#
#   scripts/same-games.sh OLD_BINARY NEW_BINARY [WORK_DIR]
#
# Exit 0 when every file is identical; 1 and the differing files otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
work=${3:-$(mktemp -d -t tammi-same-games-XXXXXX)}
model=models/english-default

record() {
    local T=$1 OUT=$2
    rm -rf "$OUT"
    mkdir -p "$OUT"
    "$T" selfplay --config configs/tiny.toml --games 6 --threads 1 --seed 7 --out "$OUT/sp" >/dev/null
    "$T" selfplay --config configs/tiny.toml --model "$model" --games 4 --threads 1 --seed 9 --out "$OUT/sp-model" >/dev/null
    "$T" match --a alphabeta:depth=4 --b "mcts:model=$model,sims=64" --games 6 --threads 1 --seed 3 --openings ballot --pdn "$OUT/m1.pdn" >/dev/null
    "$T" match --a mcts:sims=32 --b random --games 4 --threads 1 --seed 5 --pdn "$OUT/m2.pdn" >/dev/null
    "$T" match --variant konane --a mcts:sims=16,solve=2000 --b alphabeta:depth=2 --games 4 --threads 1 --seed 5 --openings random:4 --pdn "$OUT/m3.pdn" >/dev/null
    "$T" openings --plies 2 --depth 8 >"$OUT/openings.txt"
    # Analyses without their timings.
    local strip='import json,sys; d=json.load(sys.stdin); [d.pop(k,None) for k in ("seconds","nps")]; print(json.dumps(d,sort_keys=True))'
    "$T" analyze --player alphabeta:depth=14 --json | python3 -c "$strip" >"$OUT/ab.json"
    "$T" analyze --variant international --player alphabeta:depth=8 --json | python3 -c "$strip" >"$OUT/ab-international.json"
    "$T" analyze --player "mcts:model=$model,sims=200" --json | python3 -c "$strip" >"$OUT/mcts.json"
}

record "$old" "$work/old"
record "$new" "$work/new"
status=0
while IFS= read -r f; do
    if cmp -s "$work/old/$f" "$work/new/$f"; then
        echo "same $f"
    else
        echo "DIFFERENT $f"
        status=1
    fi
done < <(cd "$work/old" && find . -type f | sort)
exit $status
