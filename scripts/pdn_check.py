#!/usr/bin/env python3
"""Replays English PDN games written by tammi in an independent reader.

    scripts/pdn_check.py GAMES.pdn [MORE.pdn ...]

Reads every game with pydraughts (`pip install pydraughts`; its own PDN
reader, board and move generator, written apart from tammi), plays each move
on pydraughts' board (every move must be one of its legal moves), and checks
the game's result token against the final position:

- `1-0`: the side that moved first (Black in English checkers) has won: the
  other side has no legal move left (no pieces, or all blocked);
- `0-1`: the same for the side that moved second (White);
- `1/2-1/2`: neither side has won (a draw by repetition, the move rule, the
  ply cap or a table adjudication of a drawn ending).

A game whose `Termination` tag says it was adjudicated (`tables`: the
endgame tables scored the position; `max-plies` or `adjudicated: ...`: the
ply cap) is checked move by move and must not have ended by the rules with
another result; its stated result itself is the adjudicator's.

Prints one line per file and exits 1 if any game fails (naming it), 2 if
pydraughts is missing.
"""

import sys

try:
    from draughts import BLACK, WHITE, Board
    from draughts.PDN import PDNReader
except ImportError:
    print("pdn_check: pydraughts is not installed (pip install pydraughts)", file=sys.stderr)
    sys.exit(2)


def squares(text):
    """`9-13` -> [9, 13]; `14x23x32` -> [14, 23, 32]."""
    return [int(s) for s in text.replace("x", "-").split("-")]


def find_move(board, text):
    """pydraughts' legal move that `text` names: the same squares, or, for a
    capture written `from x to`, the one capture between those squares."""
    want = squares(text)
    legal = list(board.legal_moves())
    exact = [m for m in legal if list(m.steps_move) == want]
    if exact:
        return exact[0]
    ends = [m for m in legal if m.steps_move[0] == want[0] and m.steps_move[-1] == want[-1]]
    if len(want) == 2 and len(ends) == 1:
        return ends[0]
    raise ValueError(
        f"{text} is not a legal move here (legal: {sorted(m.pdn_move for m in legal)})"
    )


def check_game(game):
    fen = game.tags.get("FEN")
    board = Board(variant="english", fen=fen) if fen else Board(variant="english")
    first = board.turn
    second = WHITE if first == BLACK else BLACK
    for ply, text in enumerate(game.moves):
        try:
            board.push(find_move(board, text))
        except ValueError as e:
            return f"ply {ply + 1}: {e}"
    result = game.tags.get("Result", game.game_ending)
    # pydraughts: BLACK or WHITE for a win, 0 or None for no winner.
    winner = (board.winner() or None) if board.is_over() else None
    want = {"1-0": first, "0-1": second, "1/2-1/2": None}.get(result, "unknown")
    if want == "unknown":
        return f"result {result!r} is not a finished game"
    termination = game.tags.get("Termination", "")
    adjudicated = termination in ("tables", "max-plies") or termination.startswith("adjudicated")
    if adjudicated and winner is None:
        return None
    if winner != want:
        names = {BLACK: "Black", WHITE: "White", None: "nobody"}
        return (
            f"stated {result} ({names[want]} wins), but after {len(game.moves)} plies "
            f"pydraughts finds {names[winner]} has won"
        )
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for path in sys.argv[1:]:
        games = PDNReader(filename=path).games
        counts = {"1-0": 0, "0-1": 0, "1/2-1/2": 0}
        for i, game in enumerate(games):
            problem = check_game(game)
            if problem:
                failed += 1
                print(f"{path}: game {i + 1} ({game.tags.get('Round', '?')}): {problem}")
            else:
                result = game.tags.get("Result", game.game_ending)
                counts[result] = counts.get(result, 0) + 1
        print(
            f"{path}: {len(games)} games replayed by pydraughts, "
            f"{counts['1-0']} won by Black (1-0), {counts['0-1']} by White (0-1), "
            f"{counts['1/2-1/2']} drawn; {failed} failed"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
