#!/usr/bin/env bash
# Issue 16's "trainable end to end" figure for each variant: a run of
# configs/tiny.toml from scratch with `[run] variant` set, then its final
# accepted model (mcts, 32 simulations) against the random player over 40
# games from 4 random plies, colours swapped per opening.
#   scripts/tiny-variants.sh OUTDIR VARIANT...
# Needs TAMMI (the release binary; default target/release/tammi); GENERATIONS
# (default: the preset's 3) trains longer, continuing a run already there.
set -euo pipefail
TAMMI="${TAMMI:-target/release/tammi}"
gens=()
[ -n "${GENERATIONS:-}" ] && gens=(--generations "$GENERATIONS")
out="$1"; shift
mkdir -p "$out"
for v in "$@"; do
  run="$out/$v"
  if [ ! -f "$run/state.json" ]; then
    cfg="$out/$v.toml"
    { cat configs/tiny.toml; echo "variant = \"$v\""; } > "$cfg"
    "$TAMMI" train --config "$cfg" --run "$run" "${gens[@]}" > "$out/$v.train.log" 2>&1
  else
    "$TAMMI" train --run "$run" "${gens[@]}" > "$out/$v.train.log" 2>&1
  fi
  gen=$(python3 -c "import json,sys; print('%04d' % json.load(open(sys.argv[1]))['accepted'])" "$run/state.json")
  "$TAMMI" match --variant "$v" --a "mcts:model=$run/models/gen-$gen,sims=32" --b random \
    --games 40 --openings random:4 --threads 2 --seed 13 --json > "$out/$v.match.json"
  python3 - "$v" "$gen" "$out/$v.match.json" <<'PY'
import json, sys
v, gen, path = sys.argv[1:]
r = json.load(open(path))
print(f"{v}: gen-{gen} vs random: {json.dumps(r.get('wdl'))} score {100*r['score']:.1f}%")
PY
done
