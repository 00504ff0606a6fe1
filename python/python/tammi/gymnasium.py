"""A single-agent Gymnasium environment: one side of a game against any
tammi player.

    >>> from tammi.gymnasium import TammiEnv
    >>> e = TammiEnv(variant="english", opponent="alphabeta:depth=2")
    >>> obs, info = e.reset(seed=1)
    >>> obs.shape, info["action_mask"].sum()
    ((7, 8, 8), 7)

The observation is ``Game.encode()`` (the position from the agent's side,
since it is to move), the action a policy index; ``info["action_mask"]``
marks the legal ones. After the agent's move the opponent replies at once.
The reward is +1 for a win, -1 for a loss and 0 otherwise, given when the
game ends; an illegal action loses the game on the spot (reward -1,
``info["illegal_action"]`` set). ``agent_color`` is ``"black"``,
``"white"`` or ``"random"`` (drawn at each reset from the env's seed).
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium
import numpy as np
from gymnasium import spaces

from ._tammi import Game, Player, input_shape, policy_size

__all__ = ["TammiEnv"]


class TammiEnv(gymnasium.Env):
    """See the module docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        variant: str = "english",
        opponent: str = "random",
        agent_color: str = "random",
        render_mode: Optional[str] = None,
        max_plies: int = 400,
    ) -> None:
        if agent_color not in ("black", "white", "random"):
            raise ValueError(f"agent_color {agent_color!r}: black, white or random")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' (or None)")
        self.variant = variant
        self.opponent_spec = opponent
        self.agent_color = agent_color
        self.render_mode = render_mode
        self.max_plies = max_plies
        Player(opponent)  # a bad spec fails here, not at the first reset
        self.observation_space = spaces.Box(
            low=0.0, high=1.0, shape=input_shape(variant), dtype=np.float32
        )
        self.action_space = spaces.Discrete(policy_size(variant))
        self.game = Game(variant)
        self.color = "black"
        self.opponent = Player(opponent)

    def _info(self, **extra: Any) -> dict[str, Any]:
        mask = np.zeros(policy_size(self.variant), dtype=np.int8)
        if not self.game.is_over():
            mask[self.game.legal_mask()] = 1
        return {"action_mask": mask, **extra}

    def _opponent_moves(self) -> None:
        while not self.game.is_over() and self.game.side_to_move != self.color:
            self.game.play(self.opponent.best_move(self.game))

    def _outcome(self) -> tuple[float, bool, bool]:
        if self.game.is_over():
            return 2.0 * self.game.score_for(self.color) - 1.0, True, False
        return 0.0, False, self.game.ply >= self.max_plies

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[dict] = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.game = Game(self.variant)
        if self.agent_color == "random":
            self.color = ("black", "white")[int(self.np_random.integers(2))]
        else:
            self.color = self.agent_color
        self.opponent = Player(self.opponent_spec, seed=int(self.np_random.integers(2**31)))
        self._opponent_moves()
        return self.game.encode(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        moves = self.game.moves_for_policy_index(int(action)) if not self.game.is_over() else []
        if not moves:
            return self.game.encode(), -1.0, True, False, self._info(illegal_action=True)
        self.game.play(moves[0])
        self._opponent_moves()
        reward, terminated, truncated = self._outcome()
        return self.game.encode(), reward, terminated, truncated, self._info()

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            return None
        return str(self.game)
