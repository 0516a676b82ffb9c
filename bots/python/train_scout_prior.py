"""Fit the search's root prior over a SCOUT seat's options (bots/python/scout_prior.py) on the search's self-play.

Every seat of a game is the search at `--iterations` a decision (with the prior file given by `--teacher-prior`,
none by default, so that a round of expert iteration is: play with the last prior, fit the next). At every decision
of the play phase with a choice, the root's visits are summed by option (each Show, the plain Scouts, the Scout &
Shows), and the prior is fitted to those shares: a softmax over the options, linear in their features, by
full-batch Adam on the cross-entropy, on all but a held-out tenth of the games. It prints, on those, the mean
share of the visits that went to the prior's first option, beside the share of the heuristic's first.

    python -m bots.python.train_scout_prior --games 100 --iterations 1000 --jobs 2 --out bots/python/scout-prior.npz

The file shipped beside this script (scout-prior.npz) was made by exactly that command (3 seats). `--jobs N` plays
the games in N processes, with the same result (each decision's randomness comes from the game's seed and the
request, never from the order of play).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from bots.python.scout_prior import SCOUT_FEATURES, SHOW_FEATURES, OptionKind, ScoutPrior, options
from bots.python.scout_search import ScoutSearchBot, ranked_by_heuristic
from bots.python.selfplay import map_games
from referee.games import load_game

GAME = load_game("scout")
_OFFSETS = {
    OptionKind.SHOW: 0,
    OptionKind.SCOUT: len(SHOW_FEATURES),
    OptionKind.SCOUT_AND_SHOW: len(SHOW_FEATURES) + len(SCOUT_FEATURES),
}
WIDTH = len(SHOW_FEATURES) + 2 * len(SCOUT_FEATURES)
"""The options' features side by side, each kind in a block of its own: one weight vector holds the three."""


@dataclass(frozen=True)
class Decision:
    """One decision of the search: its options' features (one row each, in their kind's block), the share of
    the root's visits each got, and which option holds the heuristic's first action."""

    rows: np.ndarray
    shares: np.ndarray
    heuristic_first: int


def decision(observation: dict[str, Any], legal: list[dict[str, Any]], visits: dict[Any, int]) -> Decision | None:
    """The Decision of a search's root `visits` (keyed as ScoutSearchGame.key), None without a choice of options."""
    found = options(observation, legal)
    counts = np.array([sum(visits.get(tuple(legal[i].values()), 0) for i in option.actions) for option in found])
    if len(found) < 2 or counts.sum() == 0:
        return None
    rows = np.zeros((len(found), WIDTH))
    for row, option in zip(rows, found, strict=True):
        start = _OFFSETS[option.kind]
        row[start : start + len(option.features)] = option.features
    first = legal.index(ranked_by_heuristic(observation, legal)[0])
    holder = next(index for index, option in enumerate(found) if first in option.actions)
    return Decision(rows, counts / counts.sum(), holder)


def play_game(task: tuple[int, int, int, Path | None]) -> list[Decision]:
    """One self-play game of the search at every seat, each decision with a choice as a Decision."""
    players, seed, iterations, prior = task
    state = GAME.new_game(players, seed=seed)
    bots = [ScoutSearchBot(seed * 7919 + seat, iterations=iterations, prior=prior) for seat in range(players)]
    for seat, bot in enumerate(bots):
        bot.on_game_start(SimpleNamespace(config=state.config, players=players, seat=seat))
    found: list[Decision] = []
    while not state.is_over():
        for mover in state.to_move():
            observation, legal = state.observation(mover), state.legal_actions(mover)
            action = bots[mover].act(observation, legal)
            result = bots[mover].last
            if observation["phase"] == "play" and len(legal) > 1 and result is not None:
                made = decision(observation, legal, result.visits)
                if made is not None:
                    found.append(made)
            state.apply(mover, action)
    return found


def probabilities(weights: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The softmax of each decision's options (decision k's rows start at starts[k])."""
    logits = rows @ weights
    sizes = np.diff(np.append(starts, len(rows)))
    exponents = np.exp(logits - np.repeat(np.maximum.reduceat(logits, starts), sizes))
    return exponents / np.repeat(np.add.reduceat(exponents, starts), sizes)


def stacked(decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.vstack([made.rows for made in decisions])
    shares = np.concatenate([made.shares for made in decisions])
    starts = np.cumsum([0] + [len(made.rows) for made in decisions[:-1]])
    return rows, shares, starts


def fit(decisions: Sequence[Decision], steps: int = 400, rate: float = 0.05, l2: float = 1e-3) -> np.ndarray:
    """The weights (WIDTH) by full-batch Adam on the mean cross-entropy to the visit shares."""
    rows, shares, starts = stacked(decisions)
    weights, moment, square = np.zeros(WIDTH), np.zeros(WIDTH), np.zeros(WIDTH)
    beta1, beta2 = 0.9, 0.999
    for step in range(1, steps + 1):
        grad = rows.T @ (probabilities(weights, rows, starts) - shares) / len(decisions) + l2 * weights
        moment = beta1 * moment + (1 - beta1) * grad
        square = beta2 * square + (1 - beta2) * grad**2
        weights = weights - rate * (moment / (1 - beta1**step)) / (np.sqrt(square / (1 - beta2**step)) + 1e-8)
    return weights


def prior_of(weights: np.ndarray) -> ScoutPrior:
    scout, scout_show = _OFFSETS[OptionKind.SCOUT], _OFFSETS[OptionKind.SCOUT_AND_SHOW]
    return ScoutPrior(weights[:scout], weights[scout:scout_show], weights[scout_show:])


def first_choice_shares(weights: np.ndarray, decisions: Sequence[Decision]) -> tuple[float, float]:
    """The mean visit share of the prior's first option, and of the heuristic's."""
    rows, _, starts = stacked(decisions)
    logits = rows @ weights
    prior = heuristic = 0.0
    for made, start in zip(decisions, starts, strict=True):
        prior += made.shares[int(np.argmax(logits[start : start + len(made.rows)]))]
        heuristic += made.shares[made.heuristic_first]
    return prior / len(decisions), heuristic / len(decisions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4, 5), help="the table size (default 3)")
    parser.add_argument("--games", type=int, default=100, help="self-play games (default 100)")
    parser.add_argument("--iterations", type=int, default=1000, help="the search's iterations a decision")
    parser.add_argument("--teacher-prior", type=Path, help="the prior file the search plays with (default: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="processes that play the games (the same games)")
    parser.add_argument("--out", type=Path, required=True)
    options = parser.parse_args(argv)
    if options.jobs < 1 or options.games < 2 or options.iterations < 1:
        parser.error("--jobs and --iterations must be at least 1, --games at least 2")
    if options.teacher_prior is not None:
        try:
            ScoutPrior.load(options.teacher_prior)
        except (OSError, ValueError, KeyError) as error:
            parser.error(f"cannot read the prior file {options.teacher_prior}: {error}")
    started = time.perf_counter()
    seeds = [options.seed * 1_000_003 + game for game in range(options.games)]
    tasks = [(options.players, seed, options.iterations, options.teacher_prior) for seed in seeds]
    games = map_games(play_game, tasks, options.jobs)
    held = max(1, len(games) // 10)
    train = [made for game in games[held:] for made in game]
    test = [made for game in games[:held] for made in game]
    weights = fit(train)
    prior, heuristic = first_choice_shares(weights, test)
    print(
        f"{options.players} seats: {len(train)} decisions from {len(games) - held} games "
        f"({time.perf_counter() - started:.0f} s); held out ({len(test)} decisions), the visit share of the first "
        f"option: the prior's {prior:.2f}, the heuristic's {heuristic:.2f}",
        flush=True,
    )
    prior_of(weights).save(options.out)
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
