#!/usr/bin/env python3
"""Drives `tammi hub` through pydraughts' HubEngine: one full game of
international draughts, tammi against pydraughts' own (seeded random) move
choice.  Every move tammi sends must be legal on pydraughts' board (pydraughts
refuses an illegal Hub move).  Exit 0 and a summary line when the game ends.

usage: hub_check.py TAMMI [PLAYER_SPEC] [SEED] [MAX_PLIES]
"""
import random
import sys

import draughts
from draughts.engine import HubEngine, Limit


def main():
    tammi = sys.argv[1]
    spec = sys.argv[2] if len(sys.argv) > 2 else "alphabeta:depth=2"
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    max_plies = int(sys.argv[4]) if len(sys.argv) > 4 else 400
    rng = random.Random(seed)
    engine = HubEngine([tammi, "hub", "--player", spec])
    assert engine.id.get("name") == "tammi", f"hub id: {engine.id}"
    engine.init()
    board = draughts.Board(variant="standard")
    tammi_moves = 0
    tammi_captures = 0
    for _ in range(max_plies):
        if board.is_over():
            break
        if board.turn == draughts.WHITE:
            result = engine.play(board, Limit(movetime=0.05), ponder=False)
            move = result.move
            legal = [m.hub_move for m in board.legal_moves()]
            # Compare as sets of captured squares: pydraughts sorts them.
            assert move.board_move in [m.board_move for m in board.legal_moves()], (
                f"illegal move {move.hub_move} at ply {len(board.move_stack)}; legal {legal}")
            tammi_moves += 1
            tammi_captures += bool(move.captures and move.captures[0] is not None)
        else:
            move = rng.choice(board.legal_moves())
        board.push(move)
    engine.quit()
    engine.p.communicate(timeout=10)
    if not board.is_over():
        print(f"FAILED: no result after {max_plies} plies")
        return 1
    winner = {draughts.WHITE: "white (tammi)", draughts.BLACK: "black (pydraughts)"}.get(
        board.winner(), "draw")
    print(f"hub game replayed by pydraughts: {len(board.move_stack)} plies, "
          f"{tammi_moves} moves by tammi ({tammi_captures} captures), all legal; result: {winner}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
