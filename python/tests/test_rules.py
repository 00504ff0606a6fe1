"""The rules through Python: every variant's perft equals the CLI's, legal
moves equal pydraughts' (an independent implementation) on random games,
and the game object plays, undoes, writes FEN and PDN, and encodes."""

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tammi

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import movegen_check  # noqa: E402 (the Rust tests' pydraughts helpers)

from draughts import Board  # noqa: E402


def test_variants_are_the_cli_s():
    names = tammi.variants()
    assert len(names) == 22
    for v in ("english", "international", "russian", "finnish:huffing", "konane", "corner", "one-way"):
        assert v in names


@pytest.mark.parametrize("variant", tammi.variants())
def test_perft_of_every_variant_equals_the_cli(variant, tammi_bin):
    depth = 3
    out = subprocess.run(
        [tammi_bin, "perft", "--variant", variant, "--depth", str(depth), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    cli = [row["nodes"] for row in json.loads(out.stdout)]
    ours = [tammi.perft(d, variant=variant) for d in range(1, depth + 1)]
    assert ours == cli
    assert tammi.Game(variant).perft(depth) == cli[-1]


def tammi_paths(game):
    return {movegen_check.squares(m.text) for m in game.legal_moves()}


@pytest.mark.parametrize("variant", ["english", "russian", "international"])
def test_legal_moves_equal_pydraughts_on_random_games(variant):
    py_variant, _, numbering = movegen_check.VARIANTS[variant]
    number = (
        movegen_check.from_white_side if numbering == movegen_check.WHITE_SIDE else (lambda n: n)
    )
    rng = random.Random(7)
    positions = 0
    while positions < 400:
        board = Board(variant=py_variant)
        for _ in range(150):
            fen = movegen_check.tammi_fen(board.fen) if numbering == movegen_check.WHITE_SIDE else board.fen
            theirs = {tuple(number(n) for n in m.steps_move) for m in board.legal_moves()}
            ours = tammi_paths(tammi.Game(variant, fen=fen))
            assert ours == theirs, fen
            positions += 1
            if not theirs or board.is_over():
                break
            board.push(rng.choice(list(board.legal_moves())))


def test_play_undo_fen_pdn_and_results():
    g = tammi.Game("english")
    assert g.side_to_move == "black"
    assert len(g.legal_moves()) == 7
    m = g.play("11-15")
    assert m.text == "11-15" and m.from_square == 11 and m.to_square == 15
    assert not m.is_capture and m.captured == []
    reply = g.play(g.legal_moves()[0])
    assert g.ply == 2 and [x.text for x in g.moves()] == ["11-15", reply.text]
    fen = g.fen()
    again = tammi.Game("english", fen=fen)
    assert again.fen() == fen
    assert g.undo() == reply
    assert g.ply == 1 and reply in g.legal_moves()
    assert "11-15" in g.pdn([("Event", "pytest")])
    assert '[Event "pytest"]' in g.pdn([("Event", "pytest")])
    assert g.result() is None and not g.is_over()
    # A capture names the square it takes; then the side with no piece loses.
    g = tammi.Game("english", fen="B:W18:B14")
    (capture,) = g.legal_moves()
    assert capture.is_capture and capture.captured == [18] and capture.text == "14x23"
    g.play(capture)
    assert g.is_over() and g.result() == "black" and g.end_reason() == "no-moves"
    assert g.score_for("white") == 0.0
    assert g.legal_moves() == []
    with pytest.raises(ValueError, match="over"):
        g.play("23-26")


def test_draw_state_follows_the_rules():
    g = tammi.Game("english", fen="W:WK1:BK32")
    state = g.draw_state()
    assert state["threefold_repetition"] is True
    assert state["no_progress_plies"] == 0
    for text in ("1-5", "32-27", "5-1", "27-32"):
        g.play(text)
    assert g.draw_state()["repetitions"] == 1
    assert g.draw_state()["no_progress_plies"] == 4


def test_encoding_and_policy_indices_are_inverse():
    for variant in ("english", "international", "finnish:huffing", "konane"):
        g = tammi.Game(variant)
        x = g.encode()
        assert x.dtype == np.float32 and x.shape == tammi.input_shape(variant)
        moves = g.legal_moves()
        idx = g.policy_indices()
        assert idx.shape == (len(moves),)
        assert idx.max() < tammi.policy_size(variant)
        for m, i in zip(moves, idx):
            assert m in g.moves_for_policy_index(int(i))
        mask = g.legal_mask()
        assert mask.sum() == len(set(idx.tolist()))
        assert all(mask[i] for i in idx)
    with pytest.raises(IndexError):
        tammi.Game().moves_for_policy_index(10**6)


def test_bad_input_raises_value_error_with_tammi_s_message():
    with pytest.raises(ValueError, match="variant"):
        tammi.Game("chess")
    with pytest.raises(ValueError):
        tammi.Game("english", fen="W:W99:B1")
    with pytest.raises(ValueError, match="illegal move"):
        tammi.Game().play("11-18")
    with pytest.raises(ValueError, match="malformed"):
        tammi.Game().play("hello")
    with pytest.raises(ValueError):
        tammi.Game().play(tammi.Game("international").legal_moves()[0])
    with pytest.raises(ValueError):
        tammi.perft(3, variant="nope")
