"""Reading the opponents: determinizations weighted by how likely each opponent's moves this round were.

The engine's redeal (`ScoutState.redeal`) draws the cards a seat has not seen uniformly: every hard constraint
already holds in it (the seat's own hand, every card a Show put on the table, a scouted card where it was
inserted until it is shown again, and the moves replay legally). What it ignores is what the moves say: a seat
that scouted instead of beating the Active Set, or turned its hand, or put a scouted 7 between two cards, did
so with some hands far more often than with others.

`ReadingDeterminizer` hands the search each determinization as one of a few fresh candidate deals drawn by the
redeal (the prior), drawn by weight: the likelihood of every opponent's recorded decisions of this round under a
model of play evaluated on that candidate's hands (sampling-importance-resampling, one draw from each set of
candidates). The model of a seat's decision is

    p(action) = r / |legal| + (1 - r) * softmax(value / TEMPERATURE)[action]

with `value` the heuristic's own values (scout_heuristic.play_values) and `r` the share of the seat's
moves the opponent model plays at random (scout_search.OpponentModel, floored at MIN_RANDOMNESS), so a seat
that plays like a random bot says little about its hand.

A sample is drawn from `candidates` redeals (CANDIDATES); a timed search gives reading a share of its time
(scout_search.READING_SHARE), after which its samples are the plain redeal; with a fixed number of iterations
reading has no time limit, so a seeded search is reproducible.
`python -m bots.python.scout_reading` prints how many candidates a second it weighs, against the redeal alone.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from bots.python import scout_heuristic
from referee.games import GameState, load_game

Action = dict[str, Any]
GAME = load_game("scout")


class Redealer(Protocol):
    """What reading needs of the search's determinizer (scout_search.ScoutDeterminizer): the round it rebuilt
    (its config starts a game at the round's starter) and its uniform draw of the unseen cards."""

    players: int
    config: dict[str, Any]
    seat: int
    actions: list[tuple[int, Action]]

    def sample(self, rng: random.Random) -> GameState: ...


TEMPERATURE = 1.0
"""Heuristic points per unit of log-odds: two moves a point apart are e (2.7) times as likely, one apart by
the cost of a Scout (SCOUT_COST + SHED_WEIGHT = 2 points) 7.4 times."""

MIN_RANDOMNESS = 0.1
"""The least share of a seat's moves modelled as random: no seat plays the heuristic exactly, and one move
the heuristic would never make must not rule a hand out."""

EMPTIES_HAND = 50.0
"""The value of a Show that empties the hand (the heuristic's infinity): a seat that could have ended the
round so and did not is all but ruled out, but for its share of random moves."""

CANDIDATES = 3
"""Fresh redeals a sample is drawn from: 1 would be the uniform redeal, many the posterior itself."""


def decision_log_likelihood(values: Sequence[float], chosen: int, randomness: float) -> float:
    """log p(chosen) under the mixture of the softmax over `values` and a uniform choice at `randomness`."""
    top = max(values)
    exps = [math.exp((value - top) / TEMPERATURE) for value in values]
    softmax = exps[chosen] / sum(exps)
    return math.log(randomness / len(values) + (1.0 - randomness) * softmax)


def _index_of(legal: Sequence[Action], action: Action) -> int:
    return next(index for index, candidate in enumerate(legal) if candidate == action)


def round_log_likelihoods(
    state: GameState, moves: Sequence[tuple[int, Action]], searcher: int, randomness: Sequence[float]
) -> list[float]:
    """Each seat's log-likelihood of its `moves` (this round's, from `state`, the round as dealt) under the model,
    `state` played on through them; the searching seat's own entry stays 0 (its hand is its own)."""
    totals = [0.0] * len(randomness)
    for who, action in moves:
        if who != searcher:
            observation = state.observation(who)
            legal = list(state.legal_actions_view(who))
            if len(legal) > 1:
                values = decision_values(observation, legal)
                chance = max(MIN_RANDOMNESS, randomness[who])
                totals[who] += decision_log_likelihood(values, _index_of(legal, action), chance)
        state.apply(who, action)
    return totals


def decision_values(observation: dict[str, Any], legal: Sequence[Action]) -> list[float]:
    """The heuristic's values of `legal` (scout_heuristic.play_values; for an orientation, of the hand it keeps),
    a Show that empties the hand at EMPTIES_HAND."""
    hand = observation["hand"]
    if observation["phase"] == "orient":
        keep = scout_heuristic.hand_value([top for top, _ in hand])
        turn = scout_heuristic.hand_value(scout_heuristic.flipped(hand))
        return [turn if action["flip"] else keep for action in legal]
    tops = bytes(top for top, _ in hand)
    values = scout_heuristic.play_values(tops, observation["active_set"], legal)
    return [min(value, EMPTIES_HAND) for value in values]


class ReadingDeterminizer:
    """Samples states at the decision of `determinizer`'s seat, hands drawn by how well they explain the moves:
    each sample is one of `candidates` fresh redeals, drawn by weight, so the search's determinizations stay as
    many distinct deals as without reading (a pool resampled from a few weighed candidates repeats them).

    `seconds` (None: no limit) bounds the time all samples spend weighing: once it is spent, a sample stops
    weighing more candidates (keeping those it has), and the later ones are the plain redeal."""

    def __init__(
        self,
        determinizer: Redealer,
        randomness: Sequence[float],
        candidates: int = CANDIDATES,
        seconds: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.determinizer = determinizer
        self.randomness = tuple(randomness)
        self.candidates = candidates
        self.seconds = math.inf if seconds is None else seconds
        self.clock = clock
        self.spent = 0.0
        self.drawn = 0
        self.evidence = any(who != determinizer.seat for who, _ in determinizer.actions)

    def sample(self, rng: random.Random) -> GameState:
        """One of `candidates` fresh redeals drawn by weight; the redeal's own draw when there is no move of
        another seat this round to read, or no time left to weigh."""
        if not self.evidence or self.spent >= self.seconds:
            return self.determinizer.sample(rng)
        started = self.clock()
        drawn: list[GameState] = []
        log_weights: list[float] = []
        while len(drawn) < self.candidates and self.spent + self.clock() - started < self.seconds:
            candidate = self.determinizer.sample(rng)
            drawn.append(candidate)
            log_weights.append(sum(self.log_likelihoods(candidate)))
        self.spent += self.clock() - started
        self.drawn += len(drawn)
        if not drawn:
            return self.determinizer.sample(rng)
        top = max(log_weights)
        return rng.choices(drawn, weights=[math.exp(weight - top) for weight in log_weights])[0]

    def log_likelihoods(self, candidate: GameState) -> list[float]:
        """Each seat's log-likelihood of its moves this round, were `candidate`'s hands the true ones."""
        determinizer = self.determinizer
        start = GAME.new_game(determinizer.players, seed=0, config=determinizer.config, deal=candidate.dealt)
        return round_log_likelihoods(start, determinizer.actions, determinizer.seat, self.randomness)


def candidates_per_second(
    players: int, determinizer: Callable[[dict[str, Any], dict[str, Any]], Redealer], games: int = 3, seed: int = 0
) -> tuple[float, float]:
    """Candidates a second, weighed by reading and drawn by the redeal alone (`determinizer`, the search's), over
    the play-phase decisions of `games` games of heuristic seats (CPU time of this process)."""
    weighed = drawn = 0
    reading_s = redeal_s = 0.0
    rng = random.Random(seed)
    for game in range(games):
        state = GAME.new_game(players, seed=seed + game)
        while not state.is_over():
            seat = state.to_move()[0]
            observation, legal = state.observation(seat), state.legal_actions(seat)
            if observation["phase"] == "play":
                plain = determinizer(observation, state.config)
                started = time.process_time()
                ReadingDeterminizer(plain, [0.0] * players, candidates=8).sample(rng)
                reading_s += time.process_time() - started
                weighed += 8
                started = time.process_time()
                for _ in range(8):
                    plain.sample(rng)
                redeal_s += time.process_time() - started
                drawn += 8
            state.apply(seat, scout_heuristic.choose(observation, legal))
    return weighed / reading_s, drawn / redeal_s


if __name__ == "__main__":
    from bots.python.scout_search import ScoutDeterminizer  # which imports this module: not at its top

    for table in (3, 4, 5):
        reading, redeal = candidates_per_second(table, ScoutDeterminizer)
        print(f"{table} seats: {reading:,.0f} weighed candidates/s, {redeal:,.0f} redeals/s (CPU time)")
