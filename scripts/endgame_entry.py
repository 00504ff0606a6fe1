#!/usr/bin/env python3
"""Where a match was decided: for each game of the MCTS player, the material
balance when the board first held 6 or fewer pieces (the range of the 6-piece
endgame tables), by the game's result for that player.

    scripts/endgame_entry.py MATCH.pdn [MORE.pdn ...]

Reads the games with pydraughts (as scripts/pdn_check.py does); the MCTS side
is the one whose player name (`Black`/`White` tag) starts with `mcts`.  Men
count 1, kings 1.5.  A loss that entered the 6-piece range level was lost in
the endgame (or from a lost but level position); one that entered it behind
was lost earlier.
"""

import importlib.util
import os
import sys

try:
    from draughts import Board
    from draughts.PDN import PDNReader
except ImportError:
    print("endgame_entry: pydraughts is not installed (pip install pydraughts; the tests'\n"
          "virtualenv has it: ~/.cache/tammi-ci-pyvenv/bin/python scripts/endgame_entry.py ...)",
          file=sys.stderr)
    sys.exit(2)

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("pdn_check", os.path.join(here, "pdn_check.py"))
pdn_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pdn_check)


def material(fen):
    """(black, white) material of a pydraughts FEN such as `B:W21,K22:B1,2`."""
    _, white, black = fen.split(":")

    def side(part):
        items = [x for x in part[1:].split(",") if x]
        kings = sum(1 for x in items if x.startswith("K"))
        return len(items) - kings + 1.5 * kings, len(items)

    return side(black), side(white)


def main():
    for path in sys.argv[1:]:
        rows = {"win": [], "draw": [], "loss": []}
        for game in PDNReader(filename=path).games:
            mcts_black = game.tags.get("Black", "").startswith("mcts")
            board = Board(variant="english")
            entry = None
            for text in game.moves:
                board.push(pdn_check.find_move(board, text))
                (bv, bn), (wv, wn) = material(board.fen)
                if entry is None and bn + wn <= 6:
                    entry = (bv - wv) if mcts_black else (wv - bv)
            result = game.tags.get("Result")
            if result == "1/2-1/2":
                kind = "draw"
            elif (result == "1-0") == mcts_black:
                kind = "win"
            else:
                kind = "loss"
            rows[kind].append(entry)
        print(path)
        for kind, entries in rows.items():
            reached = [e for e in entries if e is not None]
            ahead = sum(1 for e in reached if e > 0.9)
            level = sum(1 for e in reached if abs(e) <= 0.9)
            behind = sum(1 for e in reached if e < -0.9)
            print(
                f"  {kind}: {len(entries)} games; reached 6 pieces in {len(reached)}: "
                f"ahead {ahead}, level {level}, behind {behind}"
            )


if __name__ == "__main__":
    main()
