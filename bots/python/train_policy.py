"""Train a linear softmax policy (bots/python/linear_policy.py) by REINFORCE.

Each episode is one game through the PettingZoo environment (referee.games.rl, the `rl` extra): the learner
takes one seat (each seat in turn), the opponents the others (`--opponent`: random, or the game's built-in
heuristic bot played in-process); at the end the learner's weights move along its choices'
log-probability gradients, scaled by its reward minus a running baseline. The reward is the environment's
rank reward, or with `--reward score` its score minus the table's mean over SCORE_SCALE (a signal that
varies against opponents it nearly always ranks below). Every `--report` games it prints how the greedy
policy fares against those opponents in a few evaluation games (in the same reward, unscaled), and keeps in
the file the weights that scored best (the latest of equal scores).

    python -m bots.python.train_policy scout --players 4 --minutes 10 --out scout-policy.npz
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bots.python.linear_policy import LinearPolicy
from referee.games.rl import pettingzoo_env

Chooser = Callable[[dict, list[dict]], dict]


def play_episode(env: object, choosers: dict[str, Chooser]) -> dict[str, float]:
    """One game; each agent's final reward."""
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():  # type: ignore[attr-defined]
        _observation, reward, terminated, truncated, info = env.last(observe=False)  # type: ignore[attr-defined]
        if terminated or truncated:
            rewards[agent] = reward
            env.step(None)  # type: ignore[attr-defined]
            continue
        action = choosers[agent](info["observation"], info["legal_actions"])
        env.step(env.unwrapped.action_index(action))  # type: ignore[attr-defined]
    return rewards


def evaluate(env: object, policy: LinearPolicy, games: int, opponent: Callable[[], Chooser]) -> float:
    """The greedy policy's mean reward against the opponents, over `games` games from every seat."""
    agents = env.possible_agents  # type: ignore[attr-defined]
    total = 0.0
    for game in range(games):
        learner = agents[game % len(agents)]
        choosers: dict[str, Chooser] = {agent: opponent() for agent in agents}
        choosers[learner] = policy.greedy
        env.reset(seed=1_000_000 + game)  # type: ignore[attr-defined]
        total += play_episode(env, choosers)[learner]
    return total / games


def _random(rng: np.random.Generator) -> Chooser:
    return lambda _observation, actions: actions[int(rng.integers(len(actions)))]


OPPONENTS = ("random", "heuristic")
SCORE_SCALE = 20.0
"""Score rewards (points or chips above the table's mean) are divided by this, to the scale of rank rewards."""


def opponents(game: str, kind: str, rng: np.random.Generator) -> Callable[[], Chooser]:
    """A maker of opponent choosers: random ones, or the game's heuristic bot's `choose`."""
    if kind == "random":
        return lambda: _random(rng)
    choose = importlib.import_module(f"bots.python.{game}_heuristic").choose
    return lambda: choose


def train(
    game: str,
    players: int,
    minutes: float,
    out: Path,
    *,
    seed: int = 0,
    learning_rate: float = 0.02,
    report: int = 100,
    evaluation_games: int = 40,
    opponent: str = "random",
    reward: str = "rank",
) -> LinearPolicy:
    reward_kind = reward
    env = pettingzoo_env(game, players=players, reward=reward, action_features=False)
    agents = env.possible_agents
    policy = LinearPolicy.new(game)
    best, best_score = policy.weights.copy(), -np.inf
    rng = np.random.default_rng(seed)
    make_opponent = opponents(game, opponent, rng)
    baseline = 0.0
    deadline = time.monotonic() + 60 * minutes
    episode = 0
    while episode == 0 or time.monotonic() < deadline:
        learner = agents[episode % players]
        gradient = np.zeros_like(policy.weights)
        steps = 0

        def learn(observation: dict, actions: list[dict]) -> dict:
            nonlocal gradient, steps
            probabilities, phi = policy.probabilities(observation, actions)
            index = int(rng.choice(len(actions), p=probabilities))
            gradient += phi[index] - probabilities @ phi
            steps += 1
            return actions[index]

        choosers: dict[str, Chooser] = {agent: make_opponent() for agent in agents}
        choosers[learner] = learn
        env.reset(seed=seed * 1_000_003 + episode)
        reward = play_episode(env, choosers)[learner] / (SCORE_SCALE if reward_kind == "score" else 1.0)
        policy.weights += learning_rate * (reward - baseline) * gradient / max(steps, 1) ** 0.5
        baseline += 0.05 * (reward - baseline)
        episode += 1
        if episode % report == 0 or time.monotonic() >= deadline:
            score = evaluate(env, policy, evaluation_games, make_opponent)
            if score >= best_score:
                best, best_score = policy.weights.copy(), score
                LinearPolicy(game, best).save(out)
            print(
                f"{episode} games: training reward {baseline:+.3f}, greedy policy vs {opponent} {score:+.3f}"
                f" (best {best_score:+.3f})",
                flush=True,
            )
    if best_score == -np.inf:
        LinearPolicy(game, best).save(out)
    return LinearPolicy(game, best)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", choices=("scout", "scauver"))
    parser.add_argument("--players", type=int, default=4, help="seats at the table (default 4)")
    parser.add_argument("--minutes", type=float, default=10.0, help="training time (default 10)")
    parser.add_argument("--out", type=Path, required=True, help="the policy file to write (.npz)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the learner's draws")
    parser.add_argument("--report", type=int, default=100, help="evaluate (and keep the best) every N games")
    parser.add_argument("--opponent", choices=OPPONENTS, default="random", help="who the learner plays against")
    parser.add_argument(
        "--reward",
        choices=("rank", "score"),
        default="rank",
        help="what the learner maximises: its rank against each other seat, or its score minus the table's mean",
    )
    options = parser.parse_args(argv)
    policy = train(
        options.game,
        options.players,
        options.minutes,
        options.out,
        seed=options.seed,
        report=options.report,
        opponent=options.opponent,
        reward=options.reward,
    )
    print(f"wrote {options.out}: weights {np.round(policy.weights, 2).tolist()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
