import pytest

from referee.records import BotSpec, GameRecord, MatchRecord, MatchSpec
from tournaments import sprt_match
from tournaments.sprt import Decision, SprtConfigError, SprtTest
from tournaments.sprt_match import SprtPlan, play_sprt

NEW = BotSpec("new", ("new-bot",))
BASE = BotSpec("base", ("base-bot",))


@pytest.fixture
def matches(monkeypatch):
    """run_match replaced by one in which the new bot wins every game; the specs it was given are recorded."""
    played: list[MatchSpec] = []

    def fake_run_match(spec, on_game, transport):
        played.append(spec)
        records = []
        for game in spec.games:
            seats = tuple(spec.bots[index].name for index in game.seating)
            ranks = tuple(1 if name == "new" else 2 for name in seats)
            record = GameRecord(spec.match_id, game.index, spec.game, game.seed, seats, ranks, (0, 0), (), ())
            records.append(record)
            on_game(record)
        return MatchRecord(spec, tuple(records))

    monkeypatch.setattr(sprt_match, "run_match", fake_run_match)
    return played


def test_batches_are_paired_deals_and_stop_at_the_decision(matches):
    plan = SprtPlan("scauver", NEW, BASE, SprtTest(elo0=0, elo1=200), max_pairs=100, seed=4, batch_pairs=3)
    progress = []
    result = play_sprt(plan, on_batch=progress.append)
    assert result.state.decision is Decision.H1
    decided_at = result.state.pentanomial.pairs
    assert result.state.pentanomial.counts == (0, 0, 0, 0, decided_at)
    assert result.games == 6 * len(matches) >= 2 * decided_at
    assert [entry.state.pentanomial.pairs for entry in progress][-1] == decided_at
    for spec in matches:
        assert [game.seating for game in spec.games] == [(0, 1), (1, 0)] * 3
        assert [game.seed for game in spec.games][::2] == [game.seed for game in spec.games][1::2]
    assert len({spec.games[0].seed for spec in matches}) == len(matches)


def test_max_pairs_limits_the_last_batch(matches):
    plan = SprtPlan("scauver", NEW, BASE, SprtTest(elo0=0, elo1=5), max_pairs=7, seed=1, batch_pairs=3)
    result = play_sprt(plan)
    assert result.state.decision is Decision.CONTINUE
    assert [len(spec.games) for spec in matches] == [6, 6, 2]
    assert (result.state.pentanomial.pairs, result.games) == (7, 14)


def test_a_plan_needs_two_names_and_pairs():
    with pytest.raises(SprtConfigError, match="different names"):
        SprtPlan("scauver", NEW, NEW, SprtTest(), max_pairs=5, seed=0)
    with pytest.raises(SprtConfigError, match="at least 1"):
        SprtPlan("scauver", NEW, BASE, SprtTest(), max_pairs=0, seed=0)
