"""Train a small policy-value model with NumPy on tammi's self-play data,
then let it play through the PettingZoo environment.

    tammi train --config configs/tiny.toml --run runs/tiny     # any run directory
    python python/examples/train_numpy.py runs/tiny --steps 300

The model is linear on the encoded planes (a softmax over the legal moves'
policy indices, and a softmax over win/draw/loss), trained by Adam written
out in NumPy on `tammi.load_shards` output: the same inputs, policy
targets, legal masks and results tammi's own trainer uses. It then plays
the black side against a random player through `tammi.pettingzoo.env`.
"""

from __future__ import annotations

import argparse

import numpy as np

import tammi
from tammi.pettingzoo import env


class LinearPolicyValue:
    """Policy logits = x W + b over the policy indices; W/D/L logits = x V + c."""

    def __init__(self, inputs: int, policy: int, rng: np.random.Generator) -> None:
        self.w = rng.normal(0.0, 0.01, (inputs, policy)).astype(np.float32)
        self.b = np.zeros(policy, dtype=np.float32)
        self.v = rng.normal(0.0, 0.01, (inputs, 3)).astype(np.float32)
        self.c = np.zeros(3, dtype=np.float32)
        self.moments = [(np.zeros_like(p), np.zeros_like(p)) for p in self.parameters()]
        self.steps = 0

    def parameters(self) -> list[np.ndarray]:
        return [self.w, self.b, self.v, self.c]

    def adam(self, grads, lr: float, beta1=0.9, beta2=0.999, eps=1e-8) -> None:
        """Adam (Kingma & Ba): a step per parameter scaled by its own
        gradient history, so the policy's 1024 outputs and the value's 3
        learn at one learning rate without either diverging."""
        self.steps += 1
        for param, grad, (m, s) in zip(self.parameters(), grads, self.moments):
            m *= beta1
            m += (1 - beta1) * grad
            s *= beta2
            s += (1 - beta2) * grad * grad
            m_hat = m / (1 - beta1**self.steps)
            s_hat = s / (1 - beta2**self.steps)
            param -= lr * m_hat / (np.sqrt(s_hat) + eps)

    def logits(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x @ self.w + self.b, x @ self.v + self.c

    def step(self, x, policy, mask, has_policy, wdl, lr: float) -> tuple[float, float]:
        """One gradient step; returns the policy and value cross-entropies."""
        p_logits, v_logits = self.logits(x)
        p_logits = np.where(mask, p_logits, -1e9)
        p = softmax(p_logits)
        v = softmax(v_logits)
        n = len(x)
        weight = has_policy[:, None].astype(np.float32)
        policy_loss = -(weight * policy * np.log(p + 1e-9)).sum() / max(1.0, weight.sum())
        value_loss = -(wdl * np.log(v + 1e-9)).sum() / n
        g_policy = weight * (p - policy) * mask / max(1.0, weight.sum())
        g_value = (v - wdl) / n
        grads = (x.T @ g_policy, g_policy.sum(axis=0), x.T @ g_value, g_value.sum(axis=0))
        self.adam(grads, lr)
        return float(policy_loss), float(value_loss)


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def train(run: str, steps: int, batch: int = 256, lr: float = 0.03, seed: int = 1):
    """Trains on the run's shards; returns the model and its losses per step."""
    data = tammi.load_shards(run)
    x = data["inputs"].reshape(len(data["inputs"]), -1)
    rng = np.random.default_rng(seed)
    model = LinearPolicyValue(x.shape[1], data["policy"].shape[1], rng)
    losses = []
    for step in range(steps):
        rows = rng.integers(0, len(x), batch)
        losses.append(
            model.step(
                x[rows],
                data["policy"][rows],
                data["legal_mask"][rows],
                data["full_search"][rows],
                data["wdl"][rows],
                lr,
            )
        )
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}: policy loss {losses[-1][0]:.3f}, value loss {losses[-1][1]:.3f}")
    return model, losses


def play(model: LinearPolicyValue, games: int, seed: int = 1) -> float:
    """The model (black, the most likely legal move) against random moves
    (white); returns its score."""
    rng = np.random.default_rng(seed)
    score = 0.0
    for game in range(games):
        e = env(variant="english", max_plies=300)
        e.reset(seed=seed + game)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, _ = e.last()
            if terminated or truncated:
                if agent == "black":
                    score += (reward + 1) / 2
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if agent == "black":
                logits, _ = model.logits(obs["observation"].reshape(1, -1))
                action = legal[np.argmax(logits[0, legal])]
            else:
                action = rng.choice(legal)
            e.step(int(action))
    return score / games


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a tammi run directory (or shard files' directory)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--games", type=int, default=10)
    args = parser.parse_args(argv)
    model, losses = train(args.run, args.steps)
    print(f"score against random moves over {args.games} games: {play(model, args.games):.2f}")


if __name__ == "__main__":
    main()
