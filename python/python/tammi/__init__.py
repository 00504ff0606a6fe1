"""tammi for Python: checkers and draughts with exact rules for 20 games,
alpha-beta and MCTS players, matches with honest statistics, and tammi's
self-play training data as NumPy arrays.

    >>> import tammi
    >>> g = tammi.Game("english")
    >>> len(g.legal_moves())
    7
    >>> g.play("11-15")
    Move('11-15')
    >>> tammi.Player("alphabeta:depth=6").best_move(g).text  # doctest: +SKIP
    '23-19'

The classes and functions come from the extension module ``tammi._tammi``
(Rust, the same code as the ``tammi`` command line). The PettingZoo
environment is ``tammi.pettingzoo.env(variant=...)`` and the single-agent
Gymnasium environment ``tammi.gymnasium.TammiEnv``; they import PettingZoo
and Gymnasium only when used.
"""

from ._tammi import (
    Game,
    MatchResult,
    Model,
    Move,
    Player,
    __version__,
    input_shape,
    load_model,
    load_shards,
    perft,
    policy_size,
    variants,
)
from ._tammi import match as match  # noqa: A001 (the CLI's name)

__all__ = [
    "Game",
    "MatchResult",
    "Model",
    "Move",
    "Player",
    "__version__",
    "input_shape",
    "load_model",
    "load_shards",
    "match",
    "perft",
    "policy_size",
    "variants",
]
