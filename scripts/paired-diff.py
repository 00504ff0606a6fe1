#!/usr/bin/env python3
"""Paired score differences between `tammi match` PDN files played on the
same openings (English: results 1-0 / 0-1 / 1/2-1/2, Black moving first).

Each file is one match of a player against the same opponent (`--opponent`,
default `alphabeta:movetime=200ms`); games are grouped by opening (the
PDN `Round` tag N.1 / N.2 is opening N, colours swapped). For every arm the
script prints its score and its difference from the baseline (the first
file) with a 95% interval over the openings they share: the paired
design removes most of the openings' variance, so two arms can be told
apart with fewer games than their separate intervals suggest.

    scripts/paired-diff.py BASELINE.pdn ARM.pdn [ARM.pdn ...]

With --pool the files are instead halves of one longer match played on
different openings (e.g. ballot openings 1-50 and, from a file, 51-100):
it prints their pooled score with a 95% interval over the openings, as
`tammi match` would have for the whole match.

    scripts/paired-diff.py --pool FIRST.pdn SECOND.pdn [MORE.pdn ...]
"""
import argparse
import math
import re
import sys

POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


def points_by_opening(path, opponent):
    """{opening number: (opening moves, points of the non-opponent player)}"""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for n, game in enumerate(text.split("[Event")[1:], 1):
        tags = dict(re.findall(r'\[(\w+) "([^"]*)"\]', game))
        missing = [t for t in ("Round", "Black", "White", "Result") if t not in tags]
        if missing:
            sys.exit(f"{path}: game {n} has no {', '.join(missing)} tag")
        if tags["Result"] not in POINTS:
            sys.exit(f"{path}: game {n}: result {tags['Result']!r} is not an English result")
        if opponent not in (tags["Black"], tags["White"]):
            sys.exit(f"{path}: game {n}: neither player is {opponent}")
        black, white = POINTS[tags["Result"]]
        mine = white if tags["Black"] == opponent else black
        opening = tags["Round"].split(".")[0]
        moves, total = out.get(opening, (tags.get("Opening", ""), 0.0))
        if moves != tags.get("Opening", ""):
            sys.exit(f"{path}: opening {opening} is played from two different starts")
        out[opening] = (moves, total + mine)
    if not out:
        sys.exit(f"{path}: no games")
    return out


def mean_interval(xs):
    """Mean of `xs` and the half-width of its 95% normal interval."""
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, 1.96 * sd / math.sqrt(n)


def pooled(paths, opponent):
    """Prints the score over every opening of `paths`, which must not share one."""
    by_moves = {}
    for path in paths:
        for moves, total in points_by_opening(path, opponent).values():
            if moves in by_moves:
                sys.exit(f"{path}: opening {moves!r} is also in {by_moves[moves][0]}")
            by_moves[moves] = (path, total)
    if len(by_moves) < 2:
        sys.exit("fewer than two openings in all")
    score, half = mean_interval([total / 2 for _, total in by_moves.values()])
    print(
        f"{len(paths)} files, {len(by_moves)} openings: score {100 * score:.1f}% "
        f"[{100 * (score - half):.1f}, {100 * (score + half):.1f}]"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("baseline")
    ap.add_argument("arms", nargs="+")
    ap.add_argument("--opponent", default="alphabeta:movetime=200ms")
    ap.add_argument("--pool", action="store_true", help="pooled score of matches on distinct openings")
    args = ap.parse_args()
    if args.pool:
        return pooled([args.baseline] + args.arms, args.opponent)
    base = points_by_opening(args.baseline, args.opponent)
    for arm in args.arms:
        pts = points_by_opening(arm, args.opponent)
        shared = sorted(set(pts) & set(base), key=int)
        if len(shared) < 2:
            sys.exit(f"{arm}: fewer than two openings shared with {args.baseline}")
        if any(pts[k][0] != base[k][0] for k in shared):
            sys.exit(f"{arm}: its openings are not the baseline's (same --openings and --seed?)")
        d = [(pts[k][1] - base[k][1]) / 2 for k in shared]
        n = len(d)
        mean, half = mean_interval(d)
        score = sum(pts[k][1] for k in shared) / (2 * n)
        print(
            f"{arm}: {n} openings, score {100 * score:.1f}%, "
            f"minus baseline {100 * mean:+.1f} points [{100 * (mean - half):+.1f}, {100 * (mean + half):+.1f}]"
        )


if __name__ == "__main__":
    main()
