"""Playing an SPRT: paired deals between a new bot and a base bot, batch by batch, until the test decides.

Each batch is one match (so the two bot processes serve every game of the batch): `batch_pairs` deals, each played
twice with the seats swapped (the balanced match of referee.seating at two seats; the two bot processes serve the
first game of every deal, fresh ones the second), so both games of a pair are always played by the same match,
wherever the executor runs it. An executor plays `concurrency` batches at once (a wave). Deals come from the public
key of the plan's seed (referee.deals); the test is updated pair by pair as games come back, and a new wave starts
only while it has not decided. Once the LLR crosses a bound the test has decided, and the pairs still being played
in that wave are played but not counted (a sequential test stops at its crossing).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.botspec import is_remote
from referee.deals import DealKey
from referee.match import run_match
from referee.records import BotSpec, GameRecord, Limits, MatchSpec
from referee.seating import balanced_games
from referee.wire.connection import Transport

from .league.executors import Executor, MatchRunner
from .league.remote import RemoteMatchRunner
from .ratings.elo import pair_points
from .ratings.sprt import Decision, Pentanomial, SprtConfigError, SprtState, SprtTest, evaluate

DEFAULT_BATCH_PAIRS = 10


@dataclass(frozen=True)
class SprtPlan:
    """What to play: two bots of `game` (distinct names), the test, when to give up, and how many batches
    to play at once."""

    game: str
    new: BotSpec
    base: BotSpec
    test: SprtTest
    max_pairs: int
    seed: int
    batch_pairs: int = DEFAULT_BATCH_PAIRS
    limits: Limits = Limits()
    config: Mapping[str, Any] = field(default_factory=dict)
    transport: Transport = Transport.IPC
    concurrency: int = 1
    """Batches (matches) played at once: one wave; give the executor as many workers."""
    sandbox: bool = True
    remote: RemoteMatchRunner | None = None
    """Where a remote:NAME bot connects (tournaments.league.remote); needed when one of the two is remote."""

    def __post_init__(self) -> None:
        if self.new.name == self.base.name:
            raise SprtConfigError(f"the two bots need different names, both are {self.new.name!r}")
        if self.max_pairs < 1 or self.batch_pairs < 1 or self.concurrency < 1:
            raise SprtConfigError("max_pairs, batch_pairs and concurrency must be at least 1")
        remote = [bot.name for bot in (self.new, self.base) if is_remote(bot)]
        if remote and self.remote is None:
            raise SprtConfigError(f"remote:{remote[0]} needs where to listen and the keys folder")
        if remote and self.concurrency > 1:
            raise SprtConfigError(
                f"remote:{remote[0]} plays one batch at a time (one listen address, one connection): use -j 1"
            )

    @property
    def runner(self) -> MatchRunner:
        """run_match over the plan's transport, for an executor (picklable, for worker processes); with a remote
        bot, over its remote seats."""
        if self.remote is not None:
            return self.remote
        return functools.partial(run_match, transport=self.transport)


@dataclass(frozen=True)
class SprtResult:
    state: SprtState
    games: int
    """Games played, including those after the decision that were not counted."""
    faults: Mapping[str, int]
    """Faults per bot name over all games played."""


def play_sprt(plan: SprtPlan, executor: Executor, on_batch: Callable[[SprtResult], None] | None = None) -> SprtResult:
    """Play waves of batches on `executor` until the test decides or `max_pairs` pairs are counted; `on_batch`
    sees the progress whenever a batch has come back whole."""
    tally = _Tally(plan, on_batch)
    batch = 0
    while tally.state.decision is Decision.CONTINUE and tally.state.pentanomial.pairs < plan.max_pairs:
        wave: list[MatchSpec] = []
        left = plan.max_pairs - tally.state.pentanomial.pairs
        while len(wave) < plan.concurrency and left > 0:
            pairs = min(plan.batch_pairs, left)
            wave.append(_batch_spec(plan, batch, pairs))
            batch += 1
            left -= pairs
        tally.expect(wave)
        executor.run(wave, tally.add_game)
    return tally.result()


def _batch_spec(plan: SprtPlan, batch: int, pairs: int) -> MatchSpec:
    key = DealKey.from_seed(plan.seed)
    return MatchSpec(
        match_id=f"sprt-{plan.seed}-{batch}",
        game=plan.game,
        bots=(plan.new, plan.base),
        games=balanced_games(2, [key.deal_seed(batch * plan.batch_pairs + pair) for pair in range(pairs)]),
        config=plan.config,
        limits=plan.limits,
        sandbox=plan.sandbox,
    )


class _Tally:
    """Pairs the games of each batch (the two games of a match on the same deal seed) and updates the test
    pair by pair, in the order the pairs complete."""

    def __init__(self, plan: SprtPlan, on_batch: Callable[[SprtResult], None] | None) -> None:
        self.plan = plan
        self.on_batch = on_batch
        self.state = evaluate(plan.test, Pentanomial())
        self.games = 0
        self.faults: Counter[str] = Counter()
        self.unpaired: dict[tuple[str, int], float] = {}
        """(match id, deal seed) -> the new bot's points in the first game of that deal's pair."""
        self.awaited: dict[str, int] = {}
        """Match id -> games of that batch not yet back."""

    def expect(self, specs: list[MatchSpec]) -> None:
        self.awaited.update((spec.match_id, len(spec.games)) for spec in specs)

    def add_game(self, record: GameRecord) -> None:
        self.games += 1
        self.faults.update(fault.bot for fault in record.faults)
        ranks = dict(zip(record.seats, record.ranks, strict=True))
        points = pair_points(ranks[self.plan.new.name], ranks[self.plan.base.name])
        deal = (record.match_id, record.seed)
        first = self.unpaired.pop(deal, None)
        if first is None:
            self.unpaired[deal] = points
        elif self.state.decision is Decision.CONTINUE:
            self.state = evaluate(self.plan.test, self.state.pentanomial.add(first + points))
        self.awaited[record.match_id] -= 1
        if not self.awaited[record.match_id] and self.on_batch is not None:
            self.on_batch(self.result())

    def result(self) -> SprtResult:
        faults = {name: self.faults[name] for name in (self.plan.new.name, self.plan.base.name)}
        return SprtResult(self.state, self.games, faults)
