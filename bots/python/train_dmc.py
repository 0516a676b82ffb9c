"""Train a bot by Deep Monte-Carlo (DMC), the learner of RLCard's Dou Dizhu agent and of DouZero.

A network scores each legal action from the seat's observation vector followed by that action's feature row
(the PettingZoo environment's `action_features`, referee/games/rl/action_features.py), and the learner plays
the best-scored action, or a random one with probability EPSILON. When a game ends, every input row the learner
chose in it is paired with the return the learner got, and the network regresses on those pairs (mean squared
error, Adam, minibatches drawn from the most recent BUFFER pairs): it learns the expected return of each action.
The learner takes one seat (each seat in turn), the game's built-in heuristic the others; its return is its rank
reward (the mean over the other seats of +1, 0, -1) plus its score minus the table's mean over SCORE_SCALE, so
that the return still varies while the learner ranks last every game.

Every `--report` minutes, the greedy network (no exploration) plays EVALUATION_GAMES fixed deals against the
heuristic, from every seat, and the curve file gets a line: minutes, games trained, its mean rank reward, and the
share of the heuristic seats it finished above (a tie counts half). The policy file keeps the network that
scored best so far, as `save_policy` writes it, so it plays as `policy:FILE.npz` with the environment's own
encoder. numpy only, one core:

    python -m bots.python.train_dmc scout --players 4 --minutes 30 --out scout-4.npz --curve scout-4.csv
"""

from __future__ import annotations

import argparse
import csv
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from referee.games.rl import pettingzoo_env
from referee.games.rl.policy_file import EncoderSettings, PolicyEncoder, save_policy
from referee.games.rl.rewards import rank_rewards, score_rewards

Chooser = Callable[[dict, list[dict]], dict]

EPSILON = 0.05
SCORE_SCALE = 20.0
BUFFER = 60_000
BATCH = 256
LEARNING_RATE = 3e-4
HIDDEN = (256, 128)
EVALUATION_GAMES = 200
CURVE_FIELDS = ("minutes", "games", "rank_reward", "share_above_heuristic")


@dataclass
class QNetwork:
    """An MLP, relu between layers, one output: the return it expects of an input row; trained with Adam."""

    layers: list[list[np.ndarray]]
    moments: list[list[np.ndarray]] = field(default_factory=list)
    steps: int = 0

    @classmethod
    def new(cls, inputs: int, rng: np.random.Generator) -> QNetwork:
        sizes = (inputs, *HIDDEN, 1)
        layers = [
            [
                rng.normal(0.0, (2.0 / fan_in) ** 0.5, (fan_in, fan_out)).astype(np.float32),
                np.zeros(fan_out, np.float32),
            ]
            for fan_in, fan_out in zip(sizes, sizes[1:], strict=False)
        ]
        moments = [[np.zeros_like(array) for array in layer for _ in range(2)] for layer in layers]
        return cls(layers, moments)

    def __call__(self, inputs: np.ndarray) -> np.ndarray:
        out = inputs
        for number, (weights, bias) in enumerate(self.layers):
            out = out @ weights + bias
            if number < len(self.layers) - 1:
                out = np.maximum(out, 0.0)
        return out[:, 0]

    def fit(self, inputs: np.ndarray, targets: np.ndarray) -> float:
        """One Adam step on the mean squared error of `inputs` against `targets`; that error."""
        activations = [inputs]
        for number, (weights, bias) in enumerate(self.layers):
            out = activations[-1] @ weights + bias
            activations.append(np.maximum(out, 0.0) if number < len(self.layers) - 1 else out)
        error = activations[-1][:, 0] - targets
        gradient = (2.0 / len(targets)) * error[:, None]
        self.steps += 1
        for number in reversed(range(len(self.layers))):
            weights, bias = self.layers[number]
            below = activations[number]
            grads = (below.T @ gradient, gradient.sum(axis=0))
            if number:
                gradient = (gradient @ weights.T) * (below > 0)
            for position, (array, grad) in enumerate(zip((weights, bias), grads, strict=True)):
                first, second = self.moments[number][2 * position], self.moments[number][2 * position + 1]
                first *= 0.9
                first += 0.1 * grad
                second *= 0.999
                second += 0.001 * grad * grad
                corrected = first / (1 - 0.9**self.steps)
                array -= LEARNING_RATE * corrected / (np.sqrt(second / (1 - 0.999**self.steps)) + 1e-8)
        return float(np.mean(error * error))

    def snapshot(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(weights.copy(), bias.copy()) for weights, bias in self.layers]


def _rows(observation: dict, info: dict) -> np.ndarray:
    """The network's input rows of one decision: the observation vector followed by each legal action's row."""
    features = info["action_features"]
    vector = np.broadcast_to(observation["observation"], (len(features), len(observation["observation"])))
    return np.concatenate([vector, features], axis=1)


def learner_return(result: dict, seat: int) -> float:
    return rank_rewards(result["ranks"])[seat] + score_rewards(result["scores"])[seat] / SCORE_SCALE


def play(
    env: object, seed: int, learner: str, network: QNetwork, heuristic: Chooser, explore: np.random.Generator | None
) -> tuple[list[np.ndarray], dict]:
    """One game with the network at `learner`'s seat (exploring with `explore`, greedy without): the input row
    of each of its choices, and the game's result."""
    chosen: list[np.ndarray] = []
    result: dict = {}
    env.reset(seed=seed)  # type: ignore[attr-defined]
    for agent in env.agent_iter():  # type: ignore[attr-defined]
        observation, _reward, terminated, truncated, info = env.last()  # type: ignore[attr-defined]
        if terminated or truncated:
            result = info.get("result", result)
            env.step(None)  # type: ignore[attr-defined]
            continue
        if agent != learner:
            env.step(env.unwrapped.action_index(heuristic(info["observation"], info["legal_actions"])))  # type: ignore[attr-defined]
            continue
        rows = _rows(observation, info)
        if explore is not None and explore.random() < EPSILON:
            choice = int(explore.integers(len(rows)))
        else:
            choice = int(np.argmax(network(rows)))
        chosen.append(rows[choice])
        env.step(int(info["action_indices"][choice]))  # type: ignore[attr-defined]
    return chosen, result


def evaluate(env: object, network: QNetwork, heuristic: Chooser, games: int) -> tuple[float, float]:
    """(mean rank reward, share of the heuristic seats finished above, ties half) of the greedy network over
    `games` fixed deals, from every seat in turn."""
    agents = env.possible_agents  # type: ignore[attr-defined]
    rewards, above = [], []
    for game in range(games):
        seat = game % len(agents)
        _, result = play(env, 10_000_000 + game, agents[seat], network, heuristic, None)
        ranks = result["ranks"]
        rewards.append(rank_rewards(ranks)[seat])
        above += [
            (ranks[seat] < rank) + 0.5 * (ranks[seat] == rank) for other, rank in enumerate(ranks) if other != seat
        ]
    return float(np.mean(rewards)), float(np.mean(above))


def train(
    game: str,
    players: int,
    minutes: float,
    out: Path,
    curve: Path | None = None,
    *,
    seed: int = 0,
    report_minutes: float = 2.0,
    evaluation_games: int = EVALUATION_GAMES,
) -> list[dict[str, float]]:
    """Train for `minutes` (at least one game), evaluating every `report_minutes` and at the end; the curve."""
    env = pettingzoo_env(game, players=players, observation="compact", action_features=True)
    settings = EncoderSettings.of_env(env.unwrapped)
    heuristic: Chooser = importlib.import_module(f"bots.python.{game}_heuristic").choose
    rng = np.random.default_rng(seed)
    inputs, _ = PolicyEncoder(settings).network_shape
    network = QNetwork.new(inputs, rng)
    rows = np.zeros((BUFFER, inputs), np.float32)
    targets = np.zeros(BUFFER, np.float32)
    stored = 0
    points: list[dict[str, float]] = []
    best = -np.inf
    started = time.monotonic()
    next_report = 0.0
    games = 0
    while True:
        elapsed = (time.monotonic() - started) / 60
        if elapsed >= next_report or elapsed >= minutes:
            reward, share = evaluate(env, network, heuristic, evaluation_games)
            points.append(
                {"minutes": round(elapsed, 2), "games": games, "rank_reward": reward, "share_above_heuristic": share}
            )
            if reward >= best:
                best = reward
                save_policy(out, network.snapshot(), settings, "relu")
            print(
                f"{elapsed:6.1f} min {games:7d} games: rank reward {reward:+.3f}, above the heuristic {share:.3f}",
                flush=True,
            )
            if curve is not None:
                write_curve(curve, points)
            next_report += report_minutes
            if elapsed >= minutes and games:
                return points
        seat = games % players
        chosen, result = play(env, seed * 1_000_003 + games, env.possible_agents[seat], network, heuristic, rng)
        games += 1
        value = learner_return(result, seat)
        for row in chosen:
            rows[stored % BUFFER], targets[stored % BUFFER] = row, value
            stored += 1
        filled = min(stored, BUFFER)
        for _ in range(max(1, len(chosen) // 32)):
            batch = rng.integers(filled, size=min(BATCH, filled))
            network.fit(rows[batch], targets[batch])


def write_curve(path: Path, points: list[dict[str, float]]) -> None:
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=CURVE_FIELDS)
        writer.writeheader()
        writer.writerows(points)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", choices=("scout", "scauver"))
    parser.add_argument("--players", type=int, default=4, help="seats at the table (default 4)")
    parser.add_argument("--minutes", type=float, default=30.0, help="training time (default 30)")
    parser.add_argument("--out", type=Path, required=True, help="the policy file to write (.npz)")
    parser.add_argument("--curve", type=Path, help="a CSV file for the learning curve")
    parser.add_argument("--report", type=float, default=2.0, help="evaluate (and keep the best) every N minutes")
    parser.add_argument("--evaluation-games", type=int, default=EVALUATION_GAMES, help="deals per evaluation")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the learner's draws")
    options = parser.parse_args(argv)
    train(
        options.game,
        options.players,
        options.minutes,
        options.out,
        options.curve,
        seed=options.seed,
        report_minutes=options.report,
        evaluation_games=options.evaluation_games,
    )
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
