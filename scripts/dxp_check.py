#!/usr/bin/env python3
"""Drives `tammi dxp --listen` through pydraughts' DXPEngine: one full game of
international draughts, tammi against pydraughts' own (seeded random) move
choice.  Every move tammi sends must be legal on pydraughts' board, and the
result tammi prints must be the one on pydraughts' board.  Exit 0 and a
summary line when the game ends.

usage: dxp_check.py TAMMI [PLAYER_SPEC] [SEED] [white|black] [MAX_PLIES]

pydraughts' DXP client starts the game on its first `play` call and only
sends a move to the engine when it asks for the engine's reply: the last
move of a game won by pydraughts is sent here by its `sender.send_move`, so
tammi sees the end of the game on its own board.
"""
import os
import random
import subprocess
import sys
import threading

import draughts
from draughts.engine import DXPEngine

# The whole check may take this long (pydraughts' client waits for ever for
# an answer that does not come).
DEADLINE_S = 300


def watchdog(proc):
    def expire():
        print(f"FAILED: no end after {DEADLINE_S} s", flush=True)
        proc.kill()
        os._exit(3)

    timer = threading.Timer(DEADLINE_S, expire)
    timer.daemon = True
    timer.start()


def start_tammi(tammi, spec, seed):
    """`tammi dxp --listen 0`: the process, its host and port, and a thread
    collecting the rest of its stderr."""
    proc = subprocess.Popen(
        [tammi, "dxp", "--listen", "0", "--player", spec, "--seed", str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline().strip()
    prefix = "dxp: listening on "
    if not first.startswith(prefix):
        raise SystemExit(f"FAILED: tammi did not listen: {first!r}")
    host, port = first[len(prefix):].rsplit(":", 1)
    log = []
    threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()
    return proc, host, int(port), log


def result_token(board):
    return {draughts.WHITE: "1-0", draughts.BLACK: "0-1"}.get(board.winner(), "1/2-1/2")


def main():
    tammi = sys.argv[1]
    spec = sys.argv[2] if len(sys.argv) > 2 else "alphabeta:depth=2"
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    tammi_side = draughts.BLACK if len(sys.argv) > 4 and sys.argv[4] == "black" else draughts.WHITE
    max_plies = int(sys.argv[5]) if len(sys.argv) > 5 else 400
    rng = random.Random(seed)
    proc, host, port, log = start_tammi(tammi, spec, seed)
    watchdog(proc)
    engine = DXPEngine(None, {"engine-opened": True, "ip": host, "port": port})
    board = draughts.Board(variant="standard")
    tammi_moves = 0
    tammi_captures = 0
    for _ in range(max_plies):
        if board.is_over():
            break
        if board.turn == tammi_side:
            move = engine.play(board).move
            if move is None:
                print(f"FAILED: no move from tammi at ply {len(board.move_stack)}; "
                      f"tammi said: {''.join(log)}")
                return 1
            legal = [m.board_move for m in board.legal_moves()]
            assert move.board_move in legal, (
                f"illegal move {move.board_move} at ply {len(board.move_stack)}; legal {legal}")
            tammi_moves += 1
            tammi_captures += bool(move.captures and move.captures[0] is not None)
        else:
            move = rng.choice(board.legal_moves())
        board.push(move)
    if not board.is_over():
        print(f"FAILED: no result after {max_plies} plies")
        proc.kill()
        return 1
    if board.turn == tammi_side:
        # pydraughts made the last move: tammi has not seen it yet.
        engine.sender.send_move(board.move_stack[-1])
    engine.quit()
    proc.wait(timeout=60)
    out = proc.stdout.read()
    lines = [line for line in out.splitlines() if line.startswith("game 1: ")]
    if proc.returncode != 0 or len(lines) != 1:
        print(f"FAILED: tammi exited with {proc.returncode}: {out}{''.join(log)}")
        return 1
    token = lines[0].split()[2]
    expected = result_token(board)
    # pydraughts' draw rules are not all tammi's: a draw on its board may be
    # a game tammi saw ended by the peer ('*').
    if token != expected and not (expected == "1/2-1/2" and token == "*"):
        print(f"FAILED: tammi says '{lines[0]}', pydraughts' board says {expected}")
        return 1
    side = "white" if tammi_side == draughts.WHITE else "black"
    winner = {draughts.WHITE: "white", draughts.BLACK: "black"}.get(board.winner(), "draw")
    if winner == side:
        winner += " (tammi)"
    elif winner != "draw":
        winner += " (pydraughts)"
    print(f"dxp game replayed by pydraughts: {len(board.move_stack)} plies, tammi {side}, "
          f"{tammi_moves} moves by tammi ({tammi_captures} captures), all legal; "
          f"tammi printed '{lines[0]}'; result: {winner}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
