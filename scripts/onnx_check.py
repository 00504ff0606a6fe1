#!/usr/bin/env python3
"""Run an exported tammi network in onnxruntime, using only its card.

    pip install onnxruntime numpy
    tammi export --model models/english-default --out net.onnx     # writes net.onnx.card.json too
    scripts/onnx_check.py net.onnx --fen "B:W21-32:B1-12" --moves "9-13 9-14 10-14 10-15 11-15 11-16 12-16"

prints W/D/L for the side to move and the policy over the given legal moves
(a front end has its own move generator; the network only scores moves).
With --tammi PATH --model-dir DIR it asks `tammi infer` for the legal moves
and burn's answer, and checks onnxruntime agrees within 1e-4 (exit code 1 if not).
"""

import argparse
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import onnxruntime as ort


def parse_fen(fen):
    """PDN FEN 'B:W21-32,K5:B1-12' -> side to move ('B'/'W'), {square: (colour, king)}."""
    side, *parts = fen.strip().rstrip(".").split(":")
    pieces = {}
    for part in parts:
        colour, items = part[0], part[1:]
        for item in filter(None, items.split(",")):
            king = item.startswith("K")
            item = item.lstrip("K")
            if "-" in item:
                a, b = map(int, item.split("-"))
                squares = range(a, b + 1)
            else:
                squares = [int(item)]
            for sq in squares:
                pieces[sq] = (colour, king)
    return side, pieces


def encode(card, side, pieces, no_progress=0, repetitions=0):
    """The input planes of one position, from the card alone."""
    n = card["board_size"]
    planes = np.zeros((len(card["planes"]), n, n), dtype=np.float32)
    # Black starts at the top; when the other side moves the board is turned.
    top_to_move = side == "B"
    where = {}
    for s in card["policy"]["squares"]:
        r, c = s["row"], s["col"]
        if not top_to_move:
            r, c = n - 1 - r, n - 1 - c
        key = "index_top_side_to_move" if top_to_move else "index_bottom_side_to_move"
        where[s["square"]] = (r, c, s[key])
    limit = float(card["no_progress_scale"])
    for square, (r, c, _) in where.items():
        planes[4, r, c] = 1.0
        planes[5, r, c] = min(no_progress, limit) / limit
        planes[6, r, c] = min(repetitions, 2) / 2.0
    for square, (colour, king) in pieces.items():
        r, c, _ = where[square]
        own = colour == side
        planes[(0 if own else 2) + (1 if king else 0), r, c] = 1.0
    return planes, where


def move_index(card, where, move):
    """Policy index of a move text ('11-15', '10x17x26'): from * S + to."""
    squares = [int(x) for x in move.replace("x", "-").split("-")]
    s = card["dark_squares"]
    return where[squares[0]][2] * s + where[squares[-1]][2]


def policy_over(card, where, logits, moves):
    """Softmax of the logits over the legal moves; moves sharing an index share it."""
    idx = [move_index(card, where, m) for m in moves]
    distinct = sorted(set(idx))
    top = max(logits[i] for i in distinct)
    total = sum(math.exp(logits[i] - top) for i in distinct)
    return {m: math.exp(logits[i] - top) / total / idx.count(i) for m, i in zip(moves, idx)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("onnx")
    ap.add_argument("--card", help="card file (default: FILE.card.json beside the model)")
    ap.add_argument("--fen", default="B:W21-32:B1-12")
    ap.add_argument("--moves", help="legal moves, space separated")
    ap.add_argument("--tammi", help="tammi binary, to compare with burn")
    ap.add_argument("--model-dir", help="the model directory that was exported (with --tammi)")
    args = ap.parse_args()

    onnx = pathlib.Path(args.onnx)
    card_path = pathlib.Path(args.card) if args.card else onnx.with_name(onnx.name + ".card.json")
    card = json.loads(card_path.read_text())
    if card["format"] != "onnx":
        sys.exit(f"{card_path}: card of a {card['format']} file, not onnx")

    reference = None
    if args.tammi:
        out = subprocess.run(
            [args.tammi, "infer", "--model", args.model_dir, "--variant", card["variant"], "--fen", args.fen, "--json"],
            check=True, capture_output=True, text=True,
        ).stdout
        reference = json.loads(out)
    moves = args.moves.split() if args.moves else [p["move"] for p in reference["policy"]] if reference else []
    if not moves:
        sys.exit("give the legal moves with --moves (or --tammi and --model-dir)")

    side, pieces = parse_fen(args.fen)
    planes, where = encode(card, side, pieces)
    session = ort.InferenceSession(str(onnx))
    outputs = session.run(None, {card["inputs"][0]["name"]: planes[None]})
    named = {o["name"]: v for o, v in zip(card["outputs"], outputs)}
    logits, wdl = named["policy_logits"][0], named["wdl"][0]
    policy = policy_over(card, where, logits, moves)

    print(f"wdl (side to move): win {wdl[0]:.4f} draw {wdl[1]:.4f} loss {wdl[2]:.4f}")
    for m, p in sorted(policy.items(), key=lambda kv: -kv[1]):
        print(f"  {m:>10}  {p:.4f}")
    print(f"best move: {max(policy, key=policy.get)}")

    if reference:
        worst = max(abs(wdl[0] - reference["wdl"]["win"]), abs(wdl[1] - reference["wdl"]["draw"]),
                    abs(wdl[2] - reference["wdl"]["loss"]))
        for p in reference["policy"]:
            worst = max(worst, abs(policy[p["move"]] - p["p"]))
        print(f"max |onnxruntime - burn| = {worst:.2e}")
        if worst > 1e-4:
            sys.exit(1)


if __name__ == "__main__":
    main()
