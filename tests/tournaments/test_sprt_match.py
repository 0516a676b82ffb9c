import itertools
from collections.abc import Callable, Sequence

import pytest

from referee.botspec import resolve_bot
from referee.records import BotSpec, GameRecord, GameSpec, MatchSpec
from tournaments.league.executors import Executor, GameSink, LocalExecutor
from tournaments.ratings.sprt import Decision, SprtConfigError, SprtTest
from tournaments.sprt_match import SprtPlan, play_sprt

NEW = BotSpec("new", ("new-bot",))
BASE = BotSpec("base", ("base-bot",))

Outcome = Callable[[GameSpec, tuple[str, ...]], tuple[int, int]]


def new_always_wins(game: GameSpec, seats: tuple[str, ...]) -> tuple[int, int]:
    return tuple(1 if name == "new" else 2 for name in seats)  # type: ignore[return-value]


def seat_zero_wins(game: GameSpec, seats: tuple[str, ...]) -> tuple[int, int]:
    """Whoever sits at seat 0 wins: over a pair of one deal (seats swapped) the new bot scores exactly 1."""
    return (1, 2)


class InterleavingExecutor(Executor):
    """Plays every spec of a run here, handing back their games interleaved across the specs, last game of each
    spec first, as parallel workers might; records the waves it was given."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.waves: list[list[MatchSpec]] = []

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        self.waves.append(list(specs))
        per_spec = [[self._record(spec, game) for game in reversed(spec.games)] for spec in specs]
        for records in itertools.zip_longest(*per_spec):
            for record in records:
                if record is not None:
                    on_game(record)

    def _record(self, spec: MatchSpec, game: GameSpec) -> GameRecord:
        seats = tuple(spec.bots[index].name for index in game.seating)
        ranks = self.outcome(game, seats)
        return GameRecord(spec.match_id, game.index, spec.game, game.seed, seats, ranks, (0, 0), (), ())


def plan(**settings: object) -> SprtPlan:
    values = {"game": "scauver", "new": NEW, "base": BASE, "test": SprtTest(elo0=0, elo1=200), "max_pairs": 100}
    return SprtPlan(**{**values, "seed": 4, "batch_pairs": 3, **settings})  # type: ignore[arg-type]


def test_batches_are_paired_deals_and_stop_at_the_decision():
    executor = InterleavingExecutor(new_always_wins)
    progress = []
    result = play_sprt(plan(), executor, on_batch=progress.append)
    assert result.state.decision is Decision.H1
    decided_at = result.state.pentanomial.pairs
    assert result.state.pentanomial.counts == (0, 0, 0, 0, decided_at)
    specs = [spec for wave in executor.waves for spec in wave]
    assert all(len(wave) == 1 for wave in executor.waves)
    assert result.games == 6 * len(specs) >= 2 * decided_at
    assert progress[-1].state.pentanomial.pairs == decided_at and len(progress) == len(specs)
    for spec in specs:
        assert [game.seating for game in spec.games] == [(0, 1), (1, 0)] * 3
        assert [game.seed for game in spec.games][::2] == [game.seed for game in spec.games][1::2]
    assert len({spec.games[0].seed for spec in specs}) == len(specs)


def test_waves_of_concurrent_batches_keep_each_pair_within_its_match():
    """Games of several batches arrive interleaved and out of order; every pair still joins the two seatings
    of one deal of one match: with seat 0 always winning, every pair scores exactly 1 point."""
    executor = InterleavingExecutor(seat_zero_wins)
    result = play_sprt(plan(concurrency=3, max_pairs=20, test=SprtTest(elo0=-5, elo1=5)), executor)
    assert [len(wave) for wave in executor.waves] == [3, 3, 1]
    assert [len(spec.games) for wave in executor.waves for spec in wave] == [6] * 6 + [4]
    assert result.state.pentanomial.counts == (0, 0, 20, 0, 0)
    assert result.games == 40
    assert len({spec.match_id for wave in executor.waves for spec in wave}) == 7


def test_no_new_wave_after_the_decision():
    executor = InterleavingExecutor(new_always_wins)
    result = play_sprt(plan(concurrency=4, batch_pairs=10), executor)
    assert result.state.decision is Decision.H1
    assert len(executor.waves) == 1 and result.games == 4 * 20
    assert result.state.pentanomial.pairs < 40, "pairs after the crossing are played but not counted"


def test_max_pairs_limits_the_last_batch():
    executor = InterleavingExecutor(new_always_wins)
    result = play_sprt(plan(test=SprtTest(elo0=0, elo1=5), max_pairs=7), executor)
    assert result.state.decision is Decision.CONTINUE
    assert [len(spec.games) for wave in executor.waves for spec in wave] == [6, 6, 2]
    assert (result.state.pentanomial.pairs, result.games) == (7, 14)


def test_a_plan_needs_two_names_pairs_and_a_concurrency():
    with pytest.raises(SprtConfigError, match="different names"):
        SprtPlan("scauver", NEW, NEW, SprtTest(), max_pairs=5, seed=0)
    with pytest.raises(SprtConfigError, match="at least 1"):
        SprtPlan("scauver", NEW, BASE, SprtTest(), max_pairs=0, seed=0)
    with pytest.raises(SprtConfigError, match="at least 1"):
        SprtPlan("scauver", NEW, BASE, SprtTest(), max_pairs=5, seed=0, concurrency=0)


@pytest.mark.timeout(120)
def test_batches_run_on_local_workers():
    """The plan's runner crosses to spawned worker processes, which play real matches two at a time."""
    random_bot = resolve_bot("random", "scauver").command
    real = plan(
        new=BotSpec("new", random_bot),
        base=BotSpec("base", random_bot),
        test=SprtTest(elo0=0, elo1=5),
        max_pairs=4,
        batch_pairs=1,
        concurrency=2,
    )
    result = play_sprt(real, LocalExecutor(2, real.runner, pinned=False))
    assert (result.state.pentanomial.pairs, result.games) == (4, 8)
    assert result.faults == {"new": 0, "base": 0}
