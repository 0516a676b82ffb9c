"""Playing an SPRT: paired deals between a new bot and a base bot, batch by batch, until the test decides.

Each batch is one match (so the two bot processes serve every game of the batch): `batch_pairs` deals, each
played twice with the seats swapped (referee.seating.rotated_games at two seats). Pairs are counted in order;
once the LLR crosses a bound the test has decided, and any later pairs of the same batch are played but not
counted (a sequential test stops at its crossing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.connection import Transport
from referee.match import run_match
from referee.records import BotSpec, GameRecord, Limits, MatchSpec
from referee.seating import deal_seed, rotated_games

from .ratings import pair_points
from .sprt import Decision, Pentanomial, SprtConfigError, SprtState, SprtTest, evaluate

DEFAULT_BATCH_PAIRS = 10


@dataclass(frozen=True)
class SprtPlan:
    """What to play: two bots of `game` (distinct names), the test, and when to give up."""

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
    sandbox: bool = True

    def __post_init__(self) -> None:
        if self.new.name == self.base.name:
            raise SprtConfigError(f"the two bots need different names, both are {self.new.name!r}")
        if self.max_pairs < 1 or self.batch_pairs < 1:
            raise SprtConfigError("max_pairs and batch_pairs must be at least 1")


@dataclass(frozen=True)
class SprtResult:
    state: SprtState
    games: int
    """Games played, including those after the decision that were not counted."""
    faults: Mapping[str, int]
    """Faults per bot name over all games played."""


def play_sprt(plan: SprtPlan, on_batch: Callable[[SprtResult], None] | None = None) -> SprtResult:
    """Play batches until the test decides or `max_pairs` pairs are counted; `on_batch` sees the progress."""
    tally = _Tally(plan)
    batch = 0
    while tally.state.decision is Decision.CONTINUE and tally.state.pentanomial.pairs < plan.max_pairs:
        pairs = min(plan.batch_pairs, plan.max_pairs - tally.state.pentanomial.pairs)
        run_match(_batch_spec(plan, batch, pairs), tally.add_game, transport=plan.transport)
        batch += 1
        if on_batch is not None:
            on_batch(tally.result())
    return tally.result()


def _batch_spec(plan: SprtPlan, batch: int, pairs: int) -> MatchSpec:
    return MatchSpec(
        match_id=f"sprt-{plan.seed}-{batch}",
        game=plan.game,
        bots=(plan.new, plan.base),
        games=rotated_games(2, 2 * pairs, deal_seed(plan.seed, batch)),
        config=plan.config,
        limits=plan.limits,
        sandbox=plan.sandbox,
    )


class _Tally:
    """Pairs the games of each batch (games 2k and 2k+1 share a deal) and updates the test pair by pair."""

    def __init__(self, plan: SprtPlan) -> None:
        self.plan = plan
        self.state = evaluate(plan.test, Pentanomial())
        self.games = 0
        self.faults: Counter[str] = Counter()
        self.unpaired: dict[int, float] = {}
        """Deal number -> the new bot's points in the first game of that deal's pair."""

    def add_game(self, record: GameRecord) -> None:
        self.games += 1
        self.faults.update(fault.bot for fault in record.faults)
        ranks = dict(zip(record.seats, record.ranks, strict=True))
        points = pair_points(ranks[self.plan.new.name], ranks[self.plan.base.name])
        deal = record.index // 2
        if deal not in self.unpaired:
            self.unpaired[deal] = points
            return
        pair = self.unpaired.pop(deal) + points
        if self.state.decision is Decision.CONTINUE:
            self.state = evaluate(self.plan.test, self.state.pentanomial.add(pair))

    def result(self) -> SprtResult:
        faults = {name: self.faults[name] for name in (self.plan.new.name, self.plan.base.name)}
        return SprtResult(self.state, self.games, faults)
