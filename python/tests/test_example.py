"""The README's example: a NumPy model trained on a tiny run's shards
learns (its losses fall) and plays through the PettingZoo environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import train_numpy  # noqa: E402


def test_the_numpy_example_learns_and_plays(tiny_run, capsys):
    model, losses = train_numpy.train(str(tiny_run), steps=150)
    first = sum(p + v for p, v in losses[:10]) / 10
    last = sum(p + v for p, v in losses[-10:]) / 10
    assert last < first * 0.9, (first, last)
    score = train_numpy.play(model, games=4)
    assert 0.0 <= score <= 1.0
    train_numpy.main([str(tiny_run), "--steps", "20", "--games", "2"])
    assert "score against random moves" in capsys.readouterr().out
