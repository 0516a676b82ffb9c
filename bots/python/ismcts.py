"""Information-set Monte Carlo tree search (single observer), shared by the search bots of every game.

One tree per decision, from the searching seat's point of view. Each iteration takes a determinization (a full
game state consistent with everything the seat has seen, built by the game's `Determinizer` through the
engines' public interface), clones it, walks down the tree (at most `tree_depth` moves) choosing among the
actions legal in that state by UCB with availability counts, adds one child, plays a short rollout with a cheap
policy and backs up each seat's reward to the edges that seat chose.

Where actions are many (a SCOUT hand offers dozens of Scouts and Scout & Shows), progressive widening keeps a
node to its first k actions in the order of a prior (the root: the game's heuristic ranking; deeper: the
rollout policy's choice first, then others as the node is visited more), k growing with the visits.

Decisions are deterministic given a seed: each one seeds its own generator from (seed, the request's key),
and `SearchBudget.iterations` fixes the amount of work (a time budget makes iteration counts vary).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from referee.games import GameState

Action = dict[str, Any]

EXPLORATION = 0.7
"""The UCB constant, for rewards of about -1 to 1."""

PRIOR_BIAS = 2.0
"""The weight of the progressive bias: an edge's prior (1 / (1 + its rank) at the root, 1 for the rollout
policy's choice inside) over its visits + 1, added to its UCB score."""

WIDENING_BASE = 2
WIDENING_FACTOR = 1.5
"""A node with n visits considers its first WIDENING_BASE + WIDENING_FACTOR * sqrt(n) actions."""

NEW_DETERMINIZATION_EVERY = 3
MAX_DETERMINIZATIONS = 24
"""Building a determinization replays the round; iterations reuse them (each clones one), adding one every
NEW_DETERMINIZATION_EVERY iterations up to MAX_DETERMINIZATIONS (a game's search may ask for another limit)."""


MIN_TRUSTED_ITERATIONS = 16

ITERATION_MARGIN = 2.0
"""A timed search stops when the time spent plus this many mean iterations (prior included) would pass its
budget: on a loaded machine one iteration can take many times its CPU time in wall-clock time."""


@dataclass(frozen=True)
class SearchBudget:
    """Either a fixed number of iterations (reproducible) or a time in seconds (wall clock)."""

    iterations: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        if (self.iterations is None) == (self.seconds is None):
            raise ValueError("a search budget is a number of iterations or a time, not both or neither")


MOVE_TIME_SHARE = 0.3
"""The share of the per-move limit a decision spends: the rest is the margin for a loaded machine. At 40% of a
1 s move, a league on a 2-core machine under heavy CPU pressure (load 6) saw replies take up to 774 ms and one
timeout in about 2,500 decisions."""

BANK_SHARE = 0.02
"""The share of the time bank one decision may add to it."""

FIXED_S = 0.02
"""Added to every decision's share: at short clocks a share alone is a few iterations (at 100 ms a move, 30%
less a margin was 15 ms), while what a reply costs beyond the search does not grow with the clock."""

MIN_RESERVE_S = 0.05
"""What a decision always leaves of its move time, for decoding, encoding and scheduling."""


def budget_from_clock(time_left_ms: int, bank_left_ms: int, move_share: float = MOVE_TIME_SHARE) -> SearchBudget:
    """The thinking time for a request's clock: `move_share` of the move time and a little of the bank, plus a
    fixed part, leaving at least MIN_RESERVE_S of the move time unspent."""
    move_s, bank_s = time_left_ms / 1000, bank_left_ms / 1000
    seconds = min(move_share * move_s + BANK_SHARE * bank_s + FIXED_S, move_s - MIN_RESERVE_S)
    return SearchBudget(seconds=max(seconds, 0.0))


class DecisionClock:
    """The budget of a search bot's next decision: a fixed number of iterations (reproducible), or `move_share` of the
    request's time (budget_from_clock) counted from the request's arrival, which the SDK's `on_clock` hook
    reports just before `act`."""

    def __init__(self, iterations: int | None, move_share: float = MOVE_TIME_SHARE) -> None:
        self.timed = iterations is None
        self.move_share = move_share
        self.budget = SearchBudget(seconds=0.0) if iterations is None else SearchBudget(iterations)
        self.received: float | None = None

    def on_clock(self, time_left_ms: int, bank_left_ms: int) -> None:
        if self.timed:
            self.received = time.perf_counter()
            self.budget = budget_from_clock(time_left_ms, bank_left_ms, self.move_share)

    def started(self) -> float:
        """When this decision's time began: its request's arrival (now, if no clock came), taken once."""
        received, self.received = self.received, None
        return time.perf_counter() if received is None else received


class Game(Protocol):
    """What the search needs of a game, beyond the engine's public interface."""

    def key(self, action: Action) -> Hashable:
        """A hashable key naming `action` (equal actions, equal keys)."""

    def rollout_action(self, state: GameState, seat: int, rng: random.Random) -> Action:
        """The cheap policy's action for `seat` (to move in `state`)."""

    def rewards(self, state: GameState, depth: int) -> list[float] | None:
        """Each seat's reward if the playout stops here after `depth` rollout moves, or None to play on."""


class Determinizer(Protocol):
    def sample(self, rng: random.Random) -> GameState:
        """A state at the searching seat's decision, hidden cards drawn consistently with what it has seen."""


@dataclass
class Edge:
    action: Action
    prior: float = 0.0
    visits: int = 0
    value: float = 0.0
    available: int = 0
    child: Node | None = None


class Node:
    __slots__ = ("edges", "visits")

    def __init__(self) -> None:
        self.edges: dict[Hashable, Edge] = {}
        self.visits = 0


@dataclass(frozen=True)
class SearchResult:
    action: Action
    iterations: int
    visits: dict[Hashable, int]


def search(
    game: Game,
    determinizer: Determinizer,
    seat: int,
    ranked_actions: Sequence[Action],
    budget: SearchBudget,
    rng: random.Random,
    started: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
    tree_depth: int | None = None,
    determinizations: int = MAX_DETERMINIZATIONS,
) -> SearchResult:
    """The most visited root action after the budget; `ranked_actions` are the seat's legal actions, best
    first by a prior (the root widens along that order). A time budget counts from `started` (by `clock`;
    default: now), so that the work before the search (the prior, the determinizer) is counted too. With
    fewer than MIN_TRUSTED_ITERATIONS done, the visit counts say little: the prior's first is played.

    `tree_depth` bounds the moves an iteration takes through the tree before its rollout (None: no bound);
    1 keeps a tree of the root's actions alone, each valued by playouts. `determinizations` bounds the deals the
    iterations share (one more every NEW_DETERMINIZATION_EVERY iterations)."""
    if started is None:
        started = clock()
    root = Node()
    keys = [game.key(action) for action in ranked_actions]
    pool: list[GameState] = []
    iterations = 0
    limit = budget.seconds or 0.0
    while True:
        if budget.iterations is not None:
            if iterations >= budget.iterations:
                break
        else:
            elapsed = clock() - started
            if elapsed + ITERATION_MARGIN * (elapsed / iterations if iterations else 0.0) >= limit:
                break
        if len(pool) < determinizations and len(pool) <= iterations // NEW_DETERMINIZATION_EVERY:
            pool.append(determinizer.sample(rng))
        state = pool[iterations % len(pool)].clone()
        _iterate(game, root, state, seat, ranked_actions, keys, rng, tree_depth)
        iterations += 1
    if not root.edges or iterations < MIN_TRUSTED_ITERATIONS:
        return SearchResult(dict(ranked_actions[0]), iterations, {})
    best = max(keys, key=lambda key: (root.edges[key].visits, root.edges[key].value) if key in root.edges else (-1, 0))
    visits = {key: edge.visits for key, edge in root.edges.items()}
    return SearchResult(dict(root.edges[best].action), iterations, visits)


def _widening(visits: int) -> int:
    return WIDENING_BASE + int(WIDENING_FACTOR * math.sqrt(visits))


def _select(node: Node, candidates: list[tuple[Hashable, Action]]) -> tuple[Hashable, Action, bool]:
    """The candidate to follow: the first not yet tried (expansion), else the best by UCB plus a progressive
    bias towards the prior's choices that fades with visits; True if new."""
    edges = node.edges
    for key, action in candidates:
        if key not in edges:
            return key, action, True
    best_key, best_action, best_score = candidates[0][0], candidates[0][1], -math.inf
    for key, action in candidates:
        edge = edges[key]
        edge.available += 1
        visits = edge.visits
        score = (
            edge.value / visits
            + EXPLORATION * math.sqrt(math.log(edge.available) / visits)
            + PRIOR_BIAS * edge.prior / (visits + 1)
        )
        if score > best_score:
            best_key, best_action, best_score = key, action, score
    return best_key, best_action, False


def _iterate(
    game: Game,
    root: Node,
    state: GameState,
    seat: int,
    ranked: Sequence[Action],
    keys: list[Hashable],
    rng: random.Random,
    tree_depth: int | None,
) -> None:
    path: list[tuple[Edge, int]] = []
    node: Node | None = root
    at_root = True
    while node is not None and not state.is_over():
        movers = state.to_move()
        if at_root:
            for other in movers:
                if other != seat:
                    state.apply(other, game.rollout_action(state, other, rng))
            mover = seat
            allowed = _widening(root.visits)
            candidates = list(zip(keys[:allowed], ranked[:allowed], strict=True))
            priors = [1 / (1 + rank) for rank in range(len(candidates))]
        elif len(movers) > 1:
            break
        else:
            mover = movers[0]
            candidates = _interior_candidates(game, node, state, mover, rng)
            priors = [1.0] + [0.0] * (len(candidates) - 1)
        key, action, is_new = _select(node, candidates)
        edge = node.edges.get(key)
        if edge is None:
            rank = next(index for index, (candidate, _) in enumerate(candidates) if candidate == key)
            edge = node.edges[key] = Edge(action, prior=priors[rank], available=1)
        node.visits += 1
        state.apply(mover, action)
        path.append((edge, mover))
        at_root = False
        if is_new or len(path) == tree_depth:
            break
        if edge.child is None:
            edge.child = Node()
        node = edge.child
    rewards = _rollout(game, state, rng)
    for edge, mover in path:
        edge.visits += 1
        edge.value += rewards[mover]


def _interior_candidates(
    game: Game, node: Node, state: GameState, mover: int, rng: random.Random
) -> list[tuple[Hashable, Action]]:
    """The rollout policy's action, then the node's other known actions still legal here, widened by visits:
    an unvisited action joins (drawn at random) when the node may consider more than it knows."""
    legal = state.legal_actions_view(mover)
    by_key = {game.key(action): action for action in legal}
    first = game.rollout_action(state, mover, rng)
    first_key = game.key(first)
    candidates = [(first_key, first)]
    candidates += [(key, by_key[key]) for key in node.edges if key in by_key and key != first_key]
    if len(candidates) < min(_widening(node.visits), len(by_key)):
        unknown = [key for key in by_key if key not in node.edges and key != first_key]
        if unknown:
            key = unknown[rng.randrange(len(unknown))]
            candidates.append((key, by_key[key]))
    return candidates[: max(1, _widening(node.visits))]


def _rollout(game: Game, state: GameState, rng: random.Random) -> list[float]:
    depth = 0
    while True:
        rewards = game.rewards(state, depth)
        if rewards is not None:
            return rewards
        for mover in state.to_move():
            state.apply(mover, game.rollout_action(state, mover, rng))
        depth += 1


def decision_rng(seed: int, *parts: object) -> random.Random:
    """A generator for one decision, from the bot's seed and what identifies the request."""
    return random.Random(":".join(map(str, (seed, *parts))))


ENV_SEED = "SEARCH_SEED"
ENV_ITERATIONS = "SEARCH_ITERATIONS"


@dataclass(frozen=True)
class BotOptions:
    seed: int
    iterations: int | None
    """None: each decision spends a share of its request's time (budget_from_clock)."""


def bot_options(description: str, argv: Sequence[str] | None = None) -> BotOptions:
    """A search bot's command line: --seed (default $SEARCH_SEED or 0) and --iterations (default
    $SEARCH_ITERATIONS, else timed), so that a league file can set either through a bot's env."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, default=int(os.environ.get(ENV_SEED, "0")))
    iterations = os.environ.get(ENV_ITERATIONS)
    parser.add_argument("--iterations", type=int, default=int(iterations) if iterations else None)
    options = parser.parse_args(argv)
    return BotOptions(options.seed, options.iterations)
