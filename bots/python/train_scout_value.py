"""Fit the search's value of a SCOUT position (bots/python/scout_value.py) on self-play.

Every seat of a game is played by one teacher: the heuristic (`--teacher heuristic`, fast) or the search itself
(`--teacher search`, at `--iterations` a decision, with the value file given by `--value`, so that a round of
expert iteration is: play with the last value, fit the next). At every decision of the play phase the position is
recorded from every seat's view (`scout_value.seat_features`), and once the round ends, each record is labelled
with the round score its seat ended with. A one-hidden-layer network per table size is then fitted to those
labels (mean squared error, Adam, full batches), on all but a held-out tenth of the games, whose error it prints
beside the error of scoring a position as if the round ended there (what the search did without a value).

    python -m bots.python.train_scout_value --games 1000 --out bots/python/scout-value.npz

The file shipped beside this script (scout-value.npz) was made by exactly that command. `--jobs N` plays the games
in N processes, with the same result (each decision's randomness comes from the game's seed, never from the order
of play). `--keep FILE` starts from FILE's networks and refits only the table sizes of `--players`, so that a round
of expert iteration can be run one table size at a time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bots.python import scout_heuristic
from bots.python.scout_search import ScoutSearchBot
from bots.python.scout_value import FEATURES, ScoutValue, SeatValueNetwork, seat_features
from bots.python.selfplay import map_games
from referee.games import load_game

GAME = load_game("scout")
HIDDEN = 24
FIT_ROWS = 60_000
"""Positions a fit uses at most, drawn at random from the training games: a game's successive positions say
much the same, and the fit's time grows with its rows."""
Chooser = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def play_game(players: int, seed: int, choose: Chooser) -> tuple[list[list[float]], list[float]]:
    """One game's positions (a row per seat per decision of the play phase) and each row's round score."""
    state = GAME.new_game(players, seed=seed)
    rows: list[list[float]] = []
    labels: list[float] = []
    pending: list[tuple[int, list[float]]] = []
    round_number = state.round
    totals = [0] * players
    while not state.is_over():
        movers = state.to_move()
        views = [state.observation(seat) for seat in range(players)]
        if views[0]["phase"] == "play":
            pending += [(seat, seat_features(view)) for seat, view in enumerate(views)]
        for mover in movers:
            state.apply(mover, choose(views[mover], state.legal_actions(mover)))
        if state.is_over() or state.round != round_number:
            after = state.result()["scores"] if state.is_over() else state.observation(0)["scores"]
            scores = [now - before for now, before in zip(after, totals, strict=True)]
            rows += [row for _, row in pending]
            labels += [float(scores[seat]) for seat, _ in pending]
            pending, totals, round_number = [], list(after), state.round
    return rows, labels


def teacher(name: str, iterations: int, value: Path | None, seed: int) -> Chooser:
    if name == "heuristic":
        return scout_heuristic.choose
    bot = ScoutSearchBot(seed, iterations=iterations, value=value)

    def choose(observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        if observation["round"] == 1 and observation["phase"] == "orient":
            bot.opponents = None  # a new game: every seat's opponent model starts again
        return bot.act(observation, legal)

    return choose


Game = tuple[list[list[float]], list[float]]
_worker_chooser: Chooser | None = None


def _start_worker(name: str, iterations: int, value: Path | None, seed: int) -> None:
    global _worker_chooser
    _worker_chooser = teacher(name, iterations, value, seed)


def _play_in_worker(task: tuple[int, int]) -> Game:
    assert _worker_chooser is not None
    players, seed = task
    return play_game(players, seed, _worker_chooser)


def play_games(
    players: int, seeds: Sequence[int], teacher_args: tuple[str, int, Path | None, int], jobs: int = 1
) -> list[Game]:
    """`play_game` for every seed, in `jobs` processes (the same games as one), a dot on stderr per tenth."""
    tasks = [(players, seed) for seed in seeds]
    return map_games(_play_in_worker, tasks, jobs, _start_worker, teacher_args)


def fit(rows: np.ndarray, labels: np.ndarray, seed: int, epochs: int = 3000) -> SeatValueNetwork:
    """A one-hidden-layer tanh network by full-batch Adam on the mean squared error (over FIT_ROWS at most)."""
    rng = np.random.default_rng(seed)
    if len(rows) > FIT_ROWS:
        kept = rng.choice(len(rows), FIT_ROWS, replace=False)
        rows, labels = rows[kept], labels[kept]
    mean, scale = rows.mean(axis=0), rows.std(axis=0) + 1e-6
    inputs = (rows - mean) / scale
    params = [
        rng.normal(0, 1 / np.sqrt(len(FEATURES)), (len(FEATURES), HIDDEN)),
        np.zeros(HIDDEN),
        rng.normal(0, 1 / np.sqrt(HIDDEN), HIDDEN),
        np.array(labels.mean()),
    ]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    rate, beta1, beta2 = 0.01, 0.9, 0.999
    for step in range(1, epochs + 1):
        w1, b1, w2, b2 = params
        hidden = np.tanh(inputs @ w1 + b1)
        error = hidden @ w2 + b2 - labels
        back = 2 * error / len(labels)
        grad_hidden = np.outer(back, w2) * (1 - hidden**2)
        grads = [inputs.T @ grad_hidden, grad_hidden.sum(axis=0), hidden.T @ back, np.array(back.sum())]
        for index, grad in enumerate(grads):
            moments[index] = beta1 * moments[index] + (1 - beta1) * grad
            squares[index] = beta2 * squares[index] + (1 - beta2) * grad**2
            corrected = moments[index] / (1 - beta1**step)
            params[index] = params[index] - rate * corrected / (np.sqrt(squares[index] / (1 - beta2**step)) + 1e-8)
    return SeatValueNetwork(mean, scale, *params)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5], help="table sizes to fit")
    parser.add_argument("--games", type=int, default=2000, help="self-play games per table size")
    parser.add_argument("--teacher", choices=("heuristic", "search"), default="heuristic")
    parser.add_argument("--iterations", type=int, default=200, help="the search teacher's iterations a decision")
    parser.add_argument("--value", type=Path, help="the value file the search teacher plays with")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="processes that play the games (the same games)")
    parser.add_argument("--keep", type=Path, help="a value file whose other table sizes the output keeps")
    parser.add_argument("--out", type=Path, required=True)
    options = parser.parse_args(argv)
    if options.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        networks = {} if options.keep is None else dict(ScoutValue.load(options.keep).networks)
    except (OSError, ValueError, KeyError) as error:
        parser.error(f"cannot read the value file {options.keep}: {error}")
    teacher_args = (options.teacher, options.iterations, options.value, options.seed)
    for players in options.players:
        started = time.perf_counter()
        seeds = [options.seed * 1_000_003 + game for game in range(options.games)]
        games = play_games(players, seeds, teacher_args, options.jobs)
        held = max(1, len(games) // 10)
        train_rows = np.array([row for rows, _ in games[held:] for row in rows])
        train_labels = np.array([label for _, labels in games[held:] for label in labels])
        test_rows = np.array([row for rows, _ in games[:held] for row in rows])
        test_labels = np.array([label for _, labels in games[:held] for label in labels])
        network = networks[players] = fit(train_rows, train_labels, options.seed)
        as_if_ended = test_rows[:, 1] + test_rows[:, 2] - test_rows[:, 0]
        print(
            f"{players} seats: {len(train_rows)} positions from {options.games - held} games "
            f"({time.perf_counter() - started:.0f} s); held-out error (RMS points): "
            f"value {np.sqrt(np.mean((network(test_rows) - test_labels) ** 2)):.2f}, "
            f"as if the round ended {np.sqrt(np.mean((as_if_ended - test_labels) ** 2)):.2f}",
            flush=True,
        )
    ScoutValue(networks).save(options.out)
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
