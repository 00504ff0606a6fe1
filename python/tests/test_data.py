"""Training data and models for learning code: the shards of a tiny
`tammi train` run load as arrays whose every row is the position its game's
PDN replays to, and a model evaluates them as the CLI does."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tammi


def pdn_games(path: Path):
    """(start FEN or None, move texts, result token) of each game of a PDN
    file written by tammi (tags, numbered moves, the result)."""
    text = path.read_text()
    for block in re.split(r"\n\s*\n(?=\[)", text.strip()):
        fen = re.search(r'\[FEN "([^"]+)"\]', block)
        result = re.search(r'\[Result "([^"]+)"\]', block).group(1)
        body = re.sub(r"\[[^\]]*\]", " ", block)
        body = re.sub(r"\{[^}]*\}", " ", body)
        tokens = [t for t in body.split() if not re.fullmatch(r"\d+\.(\.\.)?", t)]
        moves = [t for t in tokens if t not in ("1-0", "0-1", "1/2-1/2", "*")]
        yield (fen.group(1) if fen else None), moves, result


def test_shards_load_as_their_games_replay(tiny_run):
    d = tammi.load_shards(tiny_run)
    n = d["inputs"].shape[0]
    assert d["variant"] == "english"
    assert d["inputs"].shape == (n, *tammi.input_shape()) and d["inputs"].dtype == np.float32
    assert d["policy"].shape == d["legal_mask"].shape == (n, tammi.policy_size())
    assert d["wdl"].shape == d["root_wdl"].shape == (n, 3)
    for key in ("played", "full_search", "moves_left", "game", "game_id", "shard"):
        assert d[key].shape == (n,), key
    assert len(d["files"]) >= 2 and all(f.endswith(".bin") for f in d["files"])
    row, games = 0, 0
    for fi, shard in enumerate(d["files"]):
        for fen, moves, result in pdn_games(Path(shard).with_suffix(".pdn")):
            winner = {"1-0": "black", "0-1": "white", "1/2-1/2": None}[result]
            g = tammi.Game("english", fen=fen)
            for text in moves:
                np.testing.assert_array_equal(d["inputs"][row], g.encode())
                np.testing.assert_array_equal(d["legal_mask"][row], g.legal_mask())
                assert d["shard"][row] == fi and d["game"][row] == games
                want = [0, 1, 0] if winner is None else ([1, 0, 0] if winner == g.side_to_move else [0, 0, 1])
                np.testing.assert_array_equal(d["wdl"][row], want)
                if d["full_search"][row]:
                    assert abs(d["policy"][row].sum() - 1) < 1e-4
                    assert not d["policy"][row][~d["legal_mask"][row]].any()
                before = g.copy()
                played = g.play(text)
                assert d["played"][row] == before.policy_indices([played])[0]
                row += 1
            games += 1
    assert row == n and games == d["game"].max() + 1


def test_sparse_and_partial_loads_agree_with_the_dense_one(tiny_run):
    dense = tammi.load_shards(tiny_run)
    sparse = tammi.load_shards(str(tiny_run), sparse=True)
    n = dense["inputs"].shape[0]
    assert sparse["policy_index"].shape[0] == n
    for r in range(0, n, max(1, n // 50)):
        idx = sparse["policy_index"][r]
        p = sparse["policy"][r]
        rebuilt = np.zeros(tammi.policy_size(), dtype=np.float32)
        np.add.at(rebuilt, idx[idx >= 0], p[idx >= 0])
        np.testing.assert_allclose(rebuilt, dense["policy"][r], atol=1e-6)
    part = tammi.load_shards(dense["files"], max_positions=100)
    k = part["inputs"].shape[0]
    assert 100 <= k < n
    np.testing.assert_array_equal(part["inputs"], dense["inputs"][:k])
    rest = tammi.load_shards(dense["files"], skip_positions=k)
    assert k + rest["inputs"].shape[0] == n
    np.testing.assert_array_equal(rest["played"], dense["played"][k:])


def test_a_model_evaluates_as_the_cli_does(tiny_run, tammi_bin):
    model_dir = sorted((tiny_run / "models").iterdir())[-1]
    model = tammi.load_model(model_dir)
    assert model.variant == "english" and model.policy_size == tammi.policy_size()
    g = tammi.Game()
    g.play("11-15")
    out = model.evaluate(g.encode()[None])
    assert out["policy_logits"].shape == (1, tammi.policy_size())
    cli = json.loads(
        subprocess.run(
            [tammi_bin, "infer", "--model", str(model_dir), "--play", "11-15", "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    w = cli["wdl"]
    np.testing.assert_allclose(out["wdl"][0], [w["win"], w["draw"], w["loss"]], atol=1e-5)
    # The policy over the legal moves, as the CLI prints it: a softmax of
    # the logits at the moves' indices.
    moves = g.legal_moves()
    logits = out["policy_logits"][0][g.policy_indices()]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    want = {row["move"]: row["p"] for row in cli["policy"]}
    np.testing.assert_allclose(p, [want[m.text] for m in moves], atol=1e-5)
    batch = tammi.load_shards(tiny_run, max_positions=64)["inputs"]
    many = model.evaluate(batch)
    assert many["wdl"].shape == (batch.shape[0], 3)
    np.testing.assert_allclose(many["wdl"].sum(axis=1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="shape"):
        model.evaluate(np.zeros((2, 3, 3), dtype=np.float32))


def test_damaged_files_raise_os_error_naming_them(tiny_run, tmp_path):
    shard = Path(tammi.load_shards(tiny_run)["files"][0])
    broken = tmp_path / shard.name
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken.write_bytes(bytes(data))
    with pytest.raises(OSError, match=shard.name):
        tammi.load_shards(broken)
    with pytest.raises(OSError):
        tammi.load_shards(tmp_path / "nothing-here")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(OSError, match="no shard files"):
        tammi.load_shards(empty)
    model_dir = sorted((tiny_run / "models").iterdir())[-1]
    damaged = tmp_path / "model"
    shutil.copytree(model_dir, damaged)
    weights = damaged / "weights.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(OSError, match="model"):
        tammi.load_model(damaged)
    with pytest.raises(OSError):
        tammi.load_model(tmp_path / "no-model")
