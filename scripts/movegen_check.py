#!/usr/bin/env python3
"""Compares tammi's legal moves with an independent move generator.

    scripts/movegen_check.py TAMMI VARIANT POSITIONS SEED [PYDRAUGHTS_VARIANT]

Plays random games with pydraughts (`pip install pydraughts`; its own board
and move generator, written apart from tammi) in the pydraughts variant that
plays by VARIANT's rules, and at every position asks the tammi binary at path
TAMMI (`moves --variant VARIANT --fen F --json`) for its legal moves.  The two
sets of moves, each a path of squares (origin, then every landing square),
must be equal.  A capture path names its captured pieces: on each leg the
one enemy piece between two landings.

When a game ends because the side to move has no legal move, pydraughts'
winner must be the side the variant's rules name: the other side in a normal
game, the side to move itself in a give-away game (antidraughts).

PYDRAUGHTS_VARIANT replaces the pydraughts variant (with the same square
numbering), to show that the check fails when the rules differ.

Stops after POSITIONS positions; prints one summary line and exits 1 on the
first disagreement (naming the position), 2 if pydraughts is missing.
"""

import json
import random
import subprocess
import sys

try:
    from draughts import WHITE, Board
except ImportError:
    print("movegen_check: pydraughts is not installed (pip install pydraughts)", file=sys.stderr)
    sys.exit(2)

# tammi variant -> (pydraughts variant, give-away, pydraughts numbers from White's side)
VARIANTS = {
    "international": ("standard", False, False),
    "international-giveaway": ("antidraughts", True, False),
    "russian": ("russian", False, True),
    "brazilian": ("brazilian", False, True),
    "english": ("english", False, False),
}


def from_algebraic(square):
    """`a1` -> tammi's 8x8 number (29): rows from the top, dark squares left to right."""
    col, rank = "abcdefgh".index(square[0]), int(square[1:])
    return (8 - rank) * 4 + col // 2 + 1


def from_white_side(n):
    """pydraughts' internal 8x8 number for Russian and Brazilian (1 = a1, rows
    counted from White's side) -> tammi's number (rows from the top)."""
    row_from_bottom, k = divmod(n - 1, 4)
    return (7 - row_from_bottom) * 4 + k + 1


def tammi_fen(fen):
    """pydraughts' FEN with algebraic squares -> a PDN FEN with numbers."""
    side, *colours = fen.split(":")
    parts = [side]
    for colour in colours:
        items = []
        for item in colour[1:].split(","):
            if not item:
                continue
            king = item.startswith("K")
            square = item[1:] if king else item
            items.append(("K" if king else "") + str(from_algebraic(square)))
        parts.append(colour[0] + ",".join(items))
    return ":".join(parts)


def squares(text):
    """`9-13` -> (9, 13); `14x23x32` -> (14, 23, 32)."""
    return tuple(int(s) for s in text.replace("x", "-").split("-"))


def tammi_moves(tammi, variant, fen):
    out = subprocess.run(
        [tammi, "moves", "--variant", variant, "--fen", fen, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"tammi refused {fen}: {out.stderr.strip()}")
    return {squares(m) for m in json.loads(out.stdout)["moves"]}


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    tammi, variant, limit, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if VARIANTS.get(variant) is None:
        print(f"movegen_check: no pydraughts variant for {variant}", file=sys.stderr)
        sys.exit(2)
    py_variant, giveaway, white_side = VARIANTS[variant]
    if len(sys.argv) == 6:
        py_variant = sys.argv[5]
    number = from_white_side if white_side else (lambda n: n)
    rng = random.Random(seed)
    positions = games = captures = no_move_ends = 0
    while positions < limit:
        board = Board(variant=py_variant)
        games += 1
        for _ in range(200):
            fen = tammi_fen(board.fen) if white_side else board.fen
            theirs = {tuple(number(n) for n in m.steps_move) for m in board.legal_moves()}
            ours = tammi_moves(tammi, variant, fen)
            positions += 1
            if ours != theirs:
                print(
                    f"{variant} {fen}: tammi {sorted(ours)} pydraughts {sorted(theirs)}",
                    file=sys.stderr,
                )
                sys.exit(1)
            if not theirs:
                winner = board.winner()
                # pydraughts encodes colours as WHITE/BLACK constants.
                mover_is_white = board.turn == WHITE
                want_white = mover_is_white if giveaway else not mover_is_white
                if winner is None or (winner == WHITE) != want_white:
                    print(
                        f"{variant} {fen}: no legal move, pydraughts winner {winner}, "
                        f"expected {'white' if want_white else 'black'}",
                        file=sys.stderr,
                    )
                    sys.exit(1)
                no_move_ends += 1
                break
            if board.is_over() or positions >= limit:
                break
            legal = list(board.legal_moves())
            if any(m.captures for m in legal):
                captures += 1
            board.push(rng.choice(legal))
    print(
        f"movegen_check {variant}: {positions} positions of {games} games agree with "
        f"pydraughts ({py_variant}); {captures} with captures, {no_move_ends} games "
        f"ended with no legal move and the winner the rules name"
    )


if __name__ == "__main__":
    main()
