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

VARIANT is one of international, international-giveaway, russian, brazilian,
english and turkish.  Turkish draughts is played on all 64 squares; pydraughts
numbers them 1 = a1 ... 8 = h1, 9 = a2 ... 64 = h8 and writes its FEN in
coordinates, which tammi reads as they are, so there the moves are compared
as paths of coordinates (`d4`, `d6`, ...).  pydraughts 0.6.7 has a known bug
in Turkish: a quiet (non-capturing) king move may pass through occupied
squares (its line of squares is not cut at the first piece; e.g. in
`W:WKa1,a4:Bh8` it lists a1-a5 ... a1-a8 over the man on a4).  The checker
leaves out exactly those pydraughts moves (a non-capture with an occupied
square between its origin and destination), plays only the remaining ones,
and prints how many it left out in its summary.  Captures are not filtered.

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

# How pydraughts numbers the squares of a variant's board.
SAME = "same"  # as tammi: dark squares from the top left
WHITE_SIDE = "white-side"  # dark squares from White's side (see from_white_side)
ALL_SQUARES = "all-squares"  # every square, 1 = a1 row by row (see coordinate)

# tammi variant -> (pydraughts variant, give-away, pydraughts numbering)
VARIANTS = {
    "international": ("standard", False, SAME),
    "international-giveaway": ("antidraughts", True, SAME),
    "russian": ("russian", False, WHITE_SIDE),
    "brazilian": ("brazilian", False, WHITE_SIDE),
    "english": ("english", False, SAME),
    "turkish": ("turkish", False, ALL_SQUARES),
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


def coordinate(n):
    """pydraughts' number of a square on a board of 64 (1 = a1, 9 = a2) -> `a1`."""
    return "abcdefgh"[(n - 1) % 8] + str((n - 1) // 8 + 1)


def file_rank(square):
    """`d4` -> (3, 3)."""
    return "abcdefgh".index(square[0]), int(square[1:]) - 1


def passes_a_piece(fen, move):
    """Whether a quiet move of pydraughts' Turkish goes through an occupied
    square (pydraughts 0.6.7's king-move bug); `fen` is the board's own
    (coordinate) FEN.  Such a move must be a king's: men step one square."""
    if move.captures:
        return False
    pieces = {}
    for colour in fen.split(":")[1:]:
        for item in colour[1:].split(","):
            if item:
                pieces[file_rank(item.lstrip("K"))] = item.startswith("K")
    (f0, r0), (f1, r1) = (file_rank(coordinate(n)) for n in move.steps_move)
    df, dr = (f1 > f0) - (f1 < f0), (r1 > r0) - (r1 < r0)
    f, r = f0 + df, r0 + dr
    while (f, r) != (f1, r1):
        if (f, r) in pieces:
            assert pieces[(f0, r0)], f"{fen}: a man moving over {coordinate(8 * r + f + 1)}"
            return True
        f, r = f + df, r + dr
    return False


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
    """`9-13` -> (9, 13); `14x23x32` -> (14, 23, 32); coordinates stay
    names: `d4xd6` -> ("d4", "d6")."""
    parts = text.replace("x", "-").split("-")
    return tuple(p if p[0].isalpha() else int(p) for p in parts)


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
    py_variant, giveaway, numbering = VARIANTS[variant]
    if len(sys.argv) == 6:
        py_variant = sys.argv[5]
    number = {SAME: lambda n: n, WHITE_SIDE: from_white_side, ALL_SQUARES: coordinate}[numbering]
    rng = random.Random(seed)
    positions = games = captures = no_move_ends = left_out = 0
    while positions < limit:
        board = Board(variant=py_variant)
        games += 1
        for _ in range(200):
            fen = tammi_fen(board.fen) if numbering == WHITE_SIDE else board.fen
            listed = list(board.legal_moves())
            legal = listed
            if numbering == ALL_SQUARES:
                legal = [m for m in listed if not passes_a_piece(board.fen, m)]
                left_out += len(listed) - len(legal)
            theirs = {tuple(number(n) for n in m.steps_move) for m in legal}
            ours = tammi_moves(tammi, variant, fen)
            positions += 1
            if ours != theirs:
                print(
                    f"{variant} {fen}: tammi {sorted(ours)} pydraughts {sorted(theirs)}",
                    file=sys.stderr,
                )
                sys.exit(1)
            if not theirs and listed:
                # Only moves through pieces were listed: the side to move has
                # none under the rules, though pydraughts plays on.
                break
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
            if any(m.captures for m in legal):
                captures += 1
            board.push(rng.choice(legal))
    summary = (
        f"movegen_check {variant}: {positions} positions of {games} games agree with "
        f"pydraughts ({py_variant}); {captures} with captures, {no_move_ends} games "
        f"ended with no legal move and the winner the rules name"
    )
    if numbering == ALL_SQUARES:
        summary += f"; {left_out} pydraughts king moves through occupied squares left out"
    print(summary)


if __name__ == "__main__":
    main()
