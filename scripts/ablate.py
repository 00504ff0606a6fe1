#!/usr/bin/env python3
"""One arm of an equal-wall-time ablation (issue 14).

Writes a copy of a config with some keys changed, trains a run from scratch
for a fixed number of hours with it, then plays the final accepted model
against alpha-beta (scripts/evaluate-run.sh) and prints one Markdown table
row: the arm, the scores with 95% intervals, the self-play draw rate, game
length and positions per second.

    scripts/ablate.py NAME [--set section.key=value ...] [--hours 1] [--seed 1]
        [--base configs/default.toml] [--runs /work/runs] [--eval 8:100,6:100]
    scripts/ablate.py NAME --row-only     # the row of a finished arm

Values are TOML literals (`0.0`, `false`, `"puct"`, `[4, 6]`).  Run one arm
at a time on an otherwise idle machine: the arms compete on wall time.  Or
paired: an arm and its baseline at the same time, one core each
(`--set selfplay.threads=1 --set run.match_threads=1`), evaluated by
simulations (environment MCTS_LIMIT=sims=2000, passed to evaluate-run.sh), so
that other load on the machine falls on both alike and cannot change the
evaluation (BENCHMARKS.md, "A paired arm").
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys


def set_key(text, dotted, value):
    """Sets `section.key` (the section may be dotted: `train.window.alpha`)."""
    section, key = dotted.rsplit(".", 1)
    lines = text.split("\n")
    current = None
    for i, line in enumerate(lines):
        m = re.match(r"^\[([\w.]+)\]\s*$", line)
        if m:
            current = m.group(1)
            continue
        if current == section and re.match(rf"^{re.escape(key)}\s*=", line):
            lines[i] = f"{key} = {value}"
            return "\n".join(lines)
    # Not present: add it at the end of its section, or add the section.
    for i, line in enumerate(lines):
        if line.strip() == f"[{section}]":
            j = i + 1
            while j < len(lines) and not lines[j].startswith("["):
                j += 1
            lines.insert(j, f"{key} = {value}")
            return "\n".join(lines)
    if "." in section:
        return text.rstrip("\n") + f"\n\n[{section}]\n{key} = {value}\n"
    raise SystemExit(f"no section [{section}] in the base config")


def row(name, run):
    """The arm's Markdown row: scores against depths 6 and 8 (95% interval,
    games), and self-play draw rate, game length and positions/s averaged
    over the generations after the first (which plays without the net)."""
    scores = {}
    path = os.path.join(run, "eval", "final.jsonl")
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            m = re.search(r"alphabeta:depth=(\d+)$", r["b"])
            if m:
                scores[int(m.group(1))] = r
    series = {}
    metrics = os.path.join(run, "metrics.jsonl")
    if os.path.exists(metrics):
        for line in open(metrics):
            m = json.loads(line)
            if m["tag"].startswith("selfplay/") and m["step"] >= 2:
                series.setdefault(m["tag"], []).append(m["value"])

    def mean(tag):
        xs = series.get(tag, [])
        return sum(xs) / len(xs) if xs else float("nan")

    cells = [name]
    for depth in (6, 8):
        r = scores.get(depth)
        if r is None:
            cells.append("–")
            continue
        w = r["wdl"]
        n = w["wins"] + w["draws"] + w["losses"]
        lo, hi = r["score_interval"]
        cells.append(f"{100*r['score']:.1f}% [{100*lo:.0f}, {100*hi:.0f}] ({n})")
    cells += [
        f"{100*mean('selfplay/draws'):.0f}%",
        f"{mean('selfplay/average_length'):.0f}",
        f"{mean('selfplay/positions_per_second'):.0f}",
    ]
    return "| " + " | ".join(cells) + " |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--base", default="configs/default.toml")
    ap.add_argument("--runs", default="/work/runs")
    ap.add_argument("--eval", default="8:100,6:100")
    ap.add_argument("--row-only", action="store_true")
    a = ap.parse_args()
    run = os.path.join(a.runs, a.name)
    if not a.row_only:
        text = open(a.base).read()
        text = set_key(text, "run.seed", str(a.seed))
        for s in a.set:
            k, v = s.split("=", 1)
            text = set_key(text, k.strip(), v.strip())
        os.makedirs(a.runs, exist_ok=True)
        cfg = os.path.join(a.runs, a.name + ".toml")
        with open(cfg, "w") as f:
            f.write(text)
        tammi = os.environ.get("TAMMI", "target/release/tammi")
        cmd = [tammi, "train", "--run", run, "--hours", str(a.hours)]
        if not os.path.exists(os.path.join(run, "state.json")):
            cmd += ["--config", cfg]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        subprocess.run(["scripts/evaluate-run.sh", run] + a.eval.split(","), check=True)
    print(row(a.name, run))


if __name__ == "__main__":
    sys.exit(main())
