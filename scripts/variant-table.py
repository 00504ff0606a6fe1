#!/usr/bin/env python3
"""Issue 38's per-game table: does every game tammi plays learn?

For each variant: a run of configs/default.toml with only `[run] variant`
changed, for the same wall-time budget, then its final accepted model at
MOVETIME a move (MCTS) against alpha-beta depth 2, alpha-beta depth 4 and
random, GAMES games each from the variant's standard openings (English's
three-move deck, 4 random plies elsewhere), colours swapped per opening.
Prints one Markdown row per variant; VARIANTS.md keeps the table.

    scripts/variant-table.py OUT [VARIANT ...] [--minutes 20] [--games 40]
        [--movetime 100ms] [--seed 1] [--tammi target/release/tammi]
        [--base-config configs/default.toml]

Resumable: a variant whose run has spent its budget is not trained again,
and a match whose result file exists is not played again, so a killed
script (or a session that ends) goes on where it stopped.  Without
VARIANT, every variant of README's table, in that order.  Run it on an
otherwise idle machine: the runs compete on wall time.
"""

import argparse
import json
import math
import os
import subprocess
import sys

VARIANTS = [
    "english", "italian", "international", "russian", "brazilian", "finnish",
    "finnish:huffing", "czech", "portuguese", "thai", "canadian",
    "english-giveaway", "finnish-giveaway", "russian-giveaway",
    "international-giveaway", "turkish", "gothic", "dameo", "konane",
    "alquerque", "corner", "one-way",
]

OPPONENTS = [("depth 2", "alphabeta:depth=2"), ("depth 4", "alphabeta:depth=4"),
             ("random", "random")]


def safe(name):
    """A file name for a variant (`finnish:huffing` has a colon)."""
    return name.replace(":", "-")


def config_for(base, variant, minutes, seed):
    """BASE (configs/default.toml) with the variant, the budget and the seed set."""
    lines = open(base).read().split("\n")
    out, section = [], None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1]
        elif section == "run" and stripped.startswith("variant ="):
            line = f'variant = "{variant}"'
        elif section == "run" and stripped.startswith("max_hours ="):
            line = f"max_hours = {minutes / 60.0}"
        elif section == "run" and stripped.startswith("seed ="):
            line = f"seed = {seed}"
        out.append(line)
    return "\n".join(out)


def train(tammi, out, variant, minutes, seed, base):
    """Trains (or continues) the variant's run; returns its final model."""
    run = os.path.join(out, safe(variant))
    log = open(os.path.join(out, safe(variant) + ".train.log"), "a")
    if not os.path.exists(os.path.join(run, "state.json")):
        cfg = os.path.join(out, safe(variant) + ".toml")
        with open(cfg, "w") as f:
            f.write(config_for(base, variant, minutes, seed))
        cmd = [tammi, "train", "--config", cfg, "--run", run, "--hours", str(minutes / 60.0)]
    else:
        cmd = [tammi, "train", "--run", run, "--hours", str(minutes / 60.0)]
    subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True)
    state = json.load(open(os.path.join(run, "state.json")))
    return os.path.join(run, "models", "gen-%04d" % state["accepted"]), state


def match_once(cmd, path):
    """Runs `tammi match ... --json` CMD unless PATH holds its result already;
    the result line is written atomically, so a killed match is played again."""
    if not os.path.exists(path):
        result = subprocess.run(cmd, capture_output=True, text=True, check=True)
        last = result.stdout.strip().split("\n")[-1]
        json.loads(last)
        with open(path + ".tmp", "w") as f:
            f.write(last)
        os.replace(path + ".tmp", path)
    return json.load(open(path))


def play(tammi, out, variant, model, name, spec, games, movetime, seed):
    """The model against one opponent; the match's JSON result."""
    stem = os.path.join(out, f"{safe(variant)}.{name.replace(' ', '')}")
    cmd = [tammi, "match", "--variant", variant,
           "--a", f"mcts:model={model},movetime={movetime}", "--b", spec,
           "--games", str(games), "--openings", "standard", "--threads", "2",
           "--seed", str(seed), "--json", "--pdn", stem + ".pdn"]
    return match_once(cmd, stem + ".json")


def cell(r):
    """`score% [low, high] (+w =d -l)` of a match result."""
    low, high = r["score_interval"]
    w = r["wdl"]
    return (f"{100 * r['score']:.1f}% [{100 * low:.0f}, {100 * high:.0f}] "
            f"(+{w['wins']} ={w['draws']} -{w['losses']})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("variants", nargs="*")
    p.add_argument("--minutes", type=float, default=20.0)
    p.add_argument("--games", type=int, default=40)
    p.add_argument("--movetime", default="100ms")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tammi", default=os.environ.get("TAMMI", "target/release/tammi"))
    p.add_argument("--base-config", default="configs/default.toml",
                   help="the config every run starts from (for ablations; the table uses the default)")
    a = p.parse_args()
    if a.minutes <= 0 or a.minutes > 20 or a.games < 2 or a.games % 2:
        sys.exit("--minutes must be in (0, 20] and --games even")
    unknown = [v for v in a.variants if v not in VARIANTS]
    if unknown:
        sys.exit(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    os.makedirs(a.out, exist_ok=True)
    print("| game | generations | final model | vs depth 2 | vs depth 4 | vs random |")
    print("|---|---|---|---|---|---|")
    for v in a.variants or VARIANTS:
        model, state = train(a.tammi, a.out, v, a.minutes, a.seed, a.base_config)
        cells = [cell(play(a.tammi, a.out, v, model, name, spec, a.games, a.movetime, a.seed))
                 for name, spec in OPPONENTS]
        print(f"| {v} | {state['generation'] - 1} | {os.path.basename(model)} | "
              + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
