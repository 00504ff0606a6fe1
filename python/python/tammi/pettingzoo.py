"""A PettingZoo AEC environment for every variant tammi plays.

    >>> from tammi.pettingzoo import env
    >>> e = env(variant="english")
    >>> e.reset(seed=1)
    >>> obs, reward, terminated, truncated, info = e.last()
    >>> obs["observation"].shape, obs["action_mask"].sum()
    ((7, 8, 8), 7)

Agents are ``"black"`` and ``"white"``. An action is a policy index (the
network's move layout, ``tammi.policy_size(variant)`` of them); the
observation is a dict of ``observation`` (``Game.encode()``: the position
seen from the side to move, which is the agent about to act) and
``action_mask`` (``int8``, 1 at the index of every legal move). Several
capture paths with the same origin and destination share an index; the
action plays the first of them in tammi's order. Rewards come from the
result: +1 to the winner, -1 to the loser, 0 for a draw. Games longer than
``max_plies`` are truncated. Under huffing a side may remove a piece and
then move: the same agent acts twice.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ._tammi import Game, input_shape, policy_size

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's usual checks (out-of-bounds and
    illegal actions are errors, order of calls enforced)."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's convention)
    """The environment without wrappers; see the module docstring."""

    metadata = {"render_modes": ["ansi"], "name": "tammi_v0", "is_parallelizable": False}

    def __init__(
        self,
        variant: str = "english",
        render_mode: Optional[str] = None,
        max_plies: int = 400,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' (or None)")
        self.variant = variant
        self.render_mode = render_mode
        self.max_plies = max_plies
        self.game = Game(variant)
        self.possible_agents = ["black", "white"]
        shape = input_shape(variant)
        n = policy_size(variant)
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low=0.0, high=1.0, shape=shape, dtype=np.float32),
                    "action_mask": spaces.Box(low=0, high=1, shape=(n,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        mask = np.zeros(policy_size(self.variant), dtype=np.int8)
        if agent == self.agent_selection and not self.game.is_over():
            mask[self.game.legal_mask()] = 1
        return {"observation": self.game.encode(), "action_mask": mask}

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        self.game = Game(self.variant)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.game.side_to_move

    def step(self, action: Optional[int]) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        moves = self.game.moves_for_policy_index(int(action))
        if not moves:
            raise ValueError(f"action {action} is not a legal move of {agent}")
        self.game.play(moves[0])
        self._cumulative_rewards[agent] = 0
        self.rewards = {a: 0 for a in self.agents}
        if self.game.is_over():
            for a in self.agents:
                score = self.game.score_for(a)
                self.rewards[a] = int(round(2 * score - 1))
                self.terminations[a] = True
        elif self.game.ply >= self.max_plies:
            for a in self.agents:
                self.truncations[a] = True
        if not self.game.is_over():
            self.agent_selection = self.game.side_to_move
        else:
            self.agent_selection = self.possible_agents[
                1 - self.possible_agents.index(agent)
            ]
        self._accumulate_rewards()

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            return None
        return str(self.game)

    def close(self) -> None:
        pass
