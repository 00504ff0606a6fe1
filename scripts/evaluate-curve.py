#!/usr/bin/env python3
"""A run's learning curve by wall-clock time: the accepted model at given
hours of the run, each played against one opponent (issue 14: "the curve
still rising at the end").

    scripts/evaluate-curve.py RUN OPPONENT GAMES HOUR [HOUR ...]
    e.g. scripts/evaluate-curve.py /work/runs/h4 alphabeta:movetime=200ms 100 1 2 3 4

The model at hour h is the newest accepted model (RUN/models/gen-N) of a
generation that had ended by h hours of the run (`run/hours` in
metrics.jsonl, ladder time included).  It plays as MCTS at 200 ms per move,
ballot openings, colours swapped, two games at once, as the issue's bars
are stated.  Results are appended to RUN/eval/curve.jsonl (readable by
`tammi ratings`), games written to RUN/eval/curve-<h>h-<opponent>.pdn.  Run
it on an otherwise idle machine: the MCTS side plays by the clock.
"""

import json
import os
import re
import subprocess
import sys


def generation_at(run, hours):
    """The last generation that had ended by `hours` hours of the run."""
    best = None
    for line in open(os.path.join(run, "metrics.jsonl")):
        m = json.loads(line)
        if m["tag"] == "run/hours" and m["value"] <= hours:
            best = m["step"] if best is None else max(best, m["step"])
    return best


def accepted_model(run, generation):
    gens = sorted(
        int(m.group(1))
        for m in (re.fullmatch(r"gen-(\d+)", n) for n in os.listdir(os.path.join(run, "models")))
        if m and int(m.group(1)) <= generation
    )
    return os.path.join(run, "models", f"gen-{gens[-1]:04d}")


def main():
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    run, opponent, games = sys.argv[1], sys.argv[2], sys.argv[3]
    tammi = os.environ.get("TAMMI", "target/release/tammi")
    os.makedirs(os.path.join(run, "eval"), exist_ok=True)
    tag = re.sub(r"[^A-Za-z0-9]+", "-", opponent).strip("-")
    for h in sys.argv[4:]:
        g = generation_at(run, float(h))
        if g is None:
            print(f"{h} h: the run had finished no generation yet", file=sys.stderr)
            continue
        model = accepted_model(run, g)
        print(f"== {h} h: generation {g}, model {model} vs {opponent}, {games} games", flush=True)
        subprocess.run(
            [
                tammi, "match",
                "--a", f"mcts:model={model},movetime=200ms",
                "--b", opponent,
                "--games", games, "--openings", "ballot", "--threads", "2",
                "--results", os.path.join(run, "eval", "curve.jsonl"),
                "--pdn", os.path.join(run, "eval", f"curve-{h}h-{tag}.pdn"),
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
