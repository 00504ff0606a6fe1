"""The PettingZoo AEC environment passes PettingZoo's API test and the
Gymnasium wrapper Gymnasium's environment checker; games played through
them end with the rules' result."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import tammi
from tammi.gymnasium import TammiEnv
from tammi.pettingzoo import env


@pytest.mark.parametrize("variant", ["english", "international", "konane"])
def test_pettingzoo_api(variant):
    api_test(env(variant=variant), num_cycles=300, verbose_progress=False)


def test_a_game_through_the_aec_env_ends_by_the_rules():
    e = env(variant="english", max_plies=1000)
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    rewards = {"black": 0, "white": 0}
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        rewards[agent] += reward
        if terminated or truncated:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
    game = e.unwrapped.game
    assert game.is_over()
    assert rewards["black"] == -rewards["white"]
    assert rewards["black"] == {"black": 1, "white": -1, "draw": 0}[game.result()]
    assert e.unwrapped.render() is None
    ansi = env(variant="english", render_mode="ansi")
    ansi.reset()
    assert isinstance(ansi.render(), str)


def test_gymnasium_env_checker():
    check_env(TammiEnv(variant="english", opponent="random"), skip_render_check=True)
    check_env(TammiEnv(variant="russian", opponent="alphabeta:depth=1", render_mode="ansi"))


def test_gymnasium_episode_against_alpha_beta():
    e = TammiEnv(variant="english", opponent="alphabeta:depth=2", agent_color="white")
    obs, info = e.reset(seed=4)
    assert e.game.ply == 1  # black (the opponent) moved first
    rng = np.random.default_rng(4)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = e.step(action)
        total += reward
        done = terminated or truncated
        assert "illegal_action" not in info
    assert total in (-1.0, 0.0, 1.0)
    # An illegal action loses on the spot.
    _, info = e.reset(seed=5)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, _, info = e.step(illegal)
    assert reward == -1.0 and terminated and info["illegal_action"]
    with pytest.raises(ValueError):
        TammiEnv(opponent="nonsense")
