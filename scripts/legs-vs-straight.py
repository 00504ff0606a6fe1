#!/usr/bin/env python3
"""Issue 37's cost of sittings: two legs of HOURS/2 (the second a new run
continued from the first's saved model, `tammi train --from`, so its replay
window starts empty and is refilled by the current net) against one straight
run of HOURS, same config and seed.

Both arms train at the same time on one core each (`selfplay.threads = 1`,
`run.match_threads = 1`), so other load on the machine falls on both alike;
then each final model plays `alphabeta:depth=DEPTH` by simulations
(`sims=SIMS`, which no load can change), and the two play each other. The
matches use the ballot deck, colours swapped per opening, so the two arms'
games against alpha-beta pair by opening (`scripts/paired-diff.py`).

    scripts/legs-vs-straight.py OUT [--hours 2] [--seed 1]
        [--base configs/default.toml] [--sims 2000] [--depth 8] [--games 100]

Resumable: a finished step (a run that has spent its hours, a saved model,
a match whose result file exists) is not done again, so a killed script or
an ended sitting goes on where it stopped. Prints one Markdown table.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import threading

here = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    """A sibling script as a module (ablate.py's set_key, variant-table.py's
    match_once and cell)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ablate = load("ablate", "ablate.py")
table = load("variant_table", "variant-table.py")


def train(tammi, run, hours, log, config=None, source=None):
    """Runs (or continues) `tammi train` on RUN until it has spent HOURS."""
    cmd = [tammi, "train", "--run", run, "--hours", str(hours)]
    if not os.path.exists(os.path.join(run, "state.json")):
        if source:
            cmd += ["--from", source]
        else:
            cmd += ["--config", config]
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=True)


def final_model(run):
    """The run's last accepted model directory."""
    state = json.load(open(os.path.join(run, "state.json")))
    return os.path.join(run, "models", "gen-%04d" % state["accepted"])


def straight_arm(tammi, out, cfg, hours):
    train(tammi, os.path.join(out, "straight"), hours, os.path.join(out, "straight.log"), cfg)


def legs_arm(tammi, out, cfg, hours):
    log = os.path.join(out, "legs.log")
    first = os.path.join(out, "leg1")
    saved = os.path.join(out, "leg1-model")
    train(tammi, first, hours / 2, log, cfg)
    if not os.path.exists(saved):
        with open(log, "a") as f:
            subprocess.run([tammi, "train", "--run", first, "--save-model", saved],
                           stdout=f, stderr=subprocess.STDOUT, check=True)
    train(tammi, os.path.join(out, "leg2"), hours / 2, log, source=saved)


def match(tammi, out, name, a, b, games):
    """One match (skipped when its result exists); its JSON result."""
    cmd = [tammi, "match", "--a", a, "--b", b, "--games", str(games),
           "--openings", "ballot", "--threads", "2", "--json",
           "--pdn", os.path.join(out, name + ".pdn")]
    return table.match_once(cmd, os.path.join(out, name + ".json"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--hours", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--base", default="configs/default.toml")
    p.add_argument("--sims", type=int, default=2000)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--tammi", default=os.environ.get("TAMMI", "target/release/tammi"))
    a = p.parse_args()
    if a.hours <= 0 or a.games < 2 or a.games % 2:
        sys.exit("--hours must be above 0 and --games even")
    os.makedirs(a.out, exist_ok=True)
    text = open(a.base).read()
    for key, value in [("run.seed", str(a.seed)), ("selfplay.threads", "1"),
                       ("run.match_threads", "1")]:
        text = ablate.set_key(text, key, value)
    cfg = os.path.join(a.out, "config.toml")
    if not os.path.exists(cfg):
        with open(cfg, "w") as f:
            f.write(text)
    errors = []

    def guarded(fn):
        def go():
            try:
                fn(a.tammi, a.out, cfg, a.hours)
            except Exception as e:  # reported after both arms stop
                errors.append(f"{fn.__name__}: {e}")
        return go

    arms = [threading.Thread(target=guarded(f)) for f in (straight_arm, legs_arm)]
    for t in arms:
        t.start()
    for t in arms:
        t.join()
    if errors:
        sys.exit("; ".join(errors))
    models = {"straight": final_model(os.path.join(a.out, "straight")),
              "legs": final_model(os.path.join(a.out, "leg2"))}
    limit = f"sims={a.sims}"
    rows = []
    for arm, model in models.items():
        r = match(a.tammi, a.out, f"{arm}-d{a.depth}", f"mcts:model={model},{limit}",
                  f"alphabeta:depth={a.depth}", a.games)
        rows.append((arm, model, r))
    head = match(a.tammi, a.out, "legs-vs-straight", f"mcts:model={models['legs']},{limit}",
                 f"mcts:model={models['straight']},{limit}", a.games)
    print(f"| arm | final model | vs `alphabeta:depth={a.depth}` ({limit}) |")
    print("|---|---|---|")
    for arm, model, r in rows:
        print(f"| {arm} | {os.path.relpath(model, a.out)} | {table.cell(r)} |")
    print(f"\nlegs against straight, head to head ({limit}): {table.cell(head)}")
    print(f"paired by opening: scripts/paired-diff.py --opponent alphabeta:depth={a.depth} "
          f"{os.path.join(a.out, f'straight-d{a.depth}.pdn')} "
          f"{os.path.join(a.out, f'legs-d{a.depth}.pdn')}")


if __name__ == "__main__":
    main()
