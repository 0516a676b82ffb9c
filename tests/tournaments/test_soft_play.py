"""The soft-play check (tournaments/ratings/soft_play.py): on simulated leagues, a pair where one bot throws
its games whenever its partner is at the table is flagged, and honest leagues are flagged at most at the
stated family-wise level; then one small real league with such a pair, through the CLI and every report.

Simulated results are Plackett-Luce rankings (the multi-seat Bradley-Terry model the Elo fit assumes): at
each table the bots are drawn first to last with probability proportional to exp(strength).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import random
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.records import GameRecord, GameSpec, MatchSpec
from tournaments.classroom.grade_formats import soft_play_json
from tournaments.cli import main
from tournaments.league.executors import Executor, GameSink
from tournaments.league.league_file import load_league
from tournaments.league.runner import plan_league, play_league
from tournaments.league.store import LeagueStore
from tournaments.pages.soft_play_section import soft_play_section
from tournaments.ratings.settling import SettleRule
from tournaments.ratings.soft_play import holm, holm_levels, soft_play_check
from tournaments.settle import SettleSettings, Stop, league_soft_play, settle_league

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bots"


def simulated_league(
    seed: int, bots: int = 6, seats: int = 4, games_per_table: int = 4, feeding: tuple[str, str] | None = None
) -> list[dict[str, int]]:
    """Every table of `seats` of `bots` bots, `games_per_table` games each. With `feeding` = (partner, feeder),
    the feeder ranks last in every game its partner sits in (it plays to lose)."""
    rng = random.Random(seed)
    names = [f"b{index}" for index in range(bots)]
    strength = {name: rng.gauss(0.0, 0.8) for name in names}
    games = []
    for table in itertools.combinations(names, seats):
        for _ in range(games_per_table):
            left, order = list(table), []
            while left:
                pick = rng.choices(left, [math.exp(strength[name]) for name in left])[0]
                order.append(pick)
                left.remove(pick)
            if feeding is not None and set(feeding) <= set(table):
                order.remove(feeding[1])
                order.append(feeding[1])
            games.append({name: order.index(name) + 1 for name in table})
    return games


def test_holm_adjusts_step_down() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]


def test_holm_levels_reject_exactly_what_holm_rejects() -> None:
    p_values = [0.01, 0.04, 0.03, 0.005, 0.0125]
    assert holm_levels(p_values, 0.05) == pytest.approx([0.05 / 4, 0.05 / 2, 0.05 / 2, 0.05 / 5, 0.05 / 3])
    rng = random.Random(3)
    for _ in range(200):
        drawn = [rng.random() ** 3 for _ in range(rng.randrange(1, 12))]
        levels = holm_levels(drawn, 0.05)
        assert [p < level for p, level in zip(drawn, levels, strict=True)] == [q < 0.05 for q in holm(drawn)]


def test_each_pair_has_an_effect_with_an_interval_clear_of_zero_exactly_when_flagged() -> None:
    check = soft_play_check(simulated_league(5, feeding=("b0", "b1")), alpha=0.01)
    feeder = next(pair for pair in check.pairs if (pair.bot, pair.partner) == ("b1", "b0"))
    assert feeder.flagged and feeder.effect < -100 and feeder.interval[1] < 0
    assert feeder.effect == pytest.approx(feeder.z * feeder.error)
    for pair in check.pairs:
        low, high = pair.interval
        assert low <= pair.effect <= high
        assert pair.flagged == (low > 0 or high < 0) == (pair.p_adjusted < check.alpha)
    assert not any(pair.flagged for pair in check.pairs if {pair.bot, pair.partner} != {"b0", "b1"})


def test_the_power_figure_is_the_games_at_which_an_effect_shows() -> None:
    """The games a pair needs for an effect of X shrink as X grows (as 1 / X^2), and a league four times as
    large (every table played four times as often) needs the same games of a pair, which it now has."""
    small = soft_play_check(simulated_league(11, games_per_table=4))
    large = soft_play_check(simulated_league(11, games_per_table=16))
    pair = small.pairs[0]
    assert pair.games_for(200) == pytest.approx(pair.games_for(100) / 4)
    assert pair.games_for(100) > pair.games
    assert pair.games_for(pair.detectable()) == pytest.approx(pair.games)
    needed_small, needed_large = small.games_for(), large.games_for()
    assert needed_small is not None and needed_large is not None
    assert 0.6 < needed_large / needed_small < 1.6
    assert "an effect of 100 Elo would need about" in small.power_line()


def test_the_page_and_the_json_show_each_pairs_effect_interval_and_power() -> None:
    check = soft_play_check(simulated_league(5, feeding=("b0", "b1")))
    feeder = check.flagged[0]
    low, high = feeder.interval
    html = soft_play_section(check)
    assert '<tr class="flagged"><td class="bot">b1</td><td class="bot">b0</td>' in html
    assert f"{feeder.effect:+.0f}</td>" in html and f"{low:+.0f} to {high:+.0f}" in html
    assert "<th>games for 100 Elo</th>" in html and "An effect of 100 Elo would need about" in html
    document = soft_play_json(check)
    assert document is not None and document["effect"] == 100.0 and document["games_for_effect"] > 0
    first = document["pairs"][0]
    assert (first["bot"], first["partner"], first["flagged"]) == ("b1", "b0", True)
    assert first["interval"] == [round(low, 1), round(high, 1)] and first["effect"] == round(feeder.effect, 1)
    assert first["games_for_effect"] == round(feeder.games_for(100), 1)


def test_honest_effects_intervals_hold_zero_at_their_level() -> None:
    """Over 100 honest leagues, each pair's uncorrected 95% interval (effect +/- 1.96 errors) holds 0 about 95%
    of the time (the effect over its error is the z of the score test)."""
    held = total = 0
    for seed in range(100):
        for pair in soft_play_check(simulated_league(300 + seed)).pairs:
            total += 1
            held += abs(pair.effect) <= 1.959964 * pair.error
    assert 0.93 < held / total < 0.97


def test_a_feeding_pair_is_flagged_and_stands_out() -> None:
    found = 0
    for seed in range(20):
        check = soft_play_check(simulated_league(100 + seed, feeding=("b0", "b1")), alpha=0.01)
        top = check.pairs[0]
        if top.flagged and {top.bot, top.partner} == {"b0", "b1"}:
            found += 1
            feeder = next(pair for pair in check.pairs if (pair.bot, pair.partner) == ("b1", "b0"))
            assert feeder.flagged and feeder.z < 0 and feeder.excess < 0
    assert found >= 17, f"the feeding pair was the top flag in {found} of 20 leagues"


def test_honest_leagues_are_flagged_at_most_at_the_stated_level() -> None:
    """200 honest leagues at 4 seats: the share with any pair flagged stays within alpha (binomially: at most
    alpha + 3 standard deviations), and the statistic is a standard normal (its spread within 15% of 1)."""
    leagues, alpha = 200, 0.05
    z_scores: list[float] = []
    flagged = 0
    for seed in range(leagues):
        check = soft_play_check(simulated_league(seed), alpha=alpha)
        flagged += bool(check.flagged)
        z_scores += [pair.z for pair in check.pairs]
    bound = leagues * alpha + 3 * math.sqrt(leagues * alpha * (1 - alpha))
    assert flagged <= bound, f"{flagged} of {leagues} honest leagues flagged"
    assert abs(statistics.mean(z_scores)) < 0.05
    assert 0.85 < statistics.pstdev(z_scores) < 1.15


def test_a_bot_last_in_every_game_of_one_full_table_names_no_neighbour() -> None:
    """5 bots at 5 seats, one of them (as random beside search bots) last in all 160 games: every partner sits at
    every one of a bot's tables, so no effect can be told from the bot's own strength. Each pair's error is
    infinite and none is flagged (the ratings' prior, pulling the last bot up, once read as four neighbours
    throwing it by millions of Elo)."""
    rng = random.Random(7)
    names = ["b0", "b1", "b2", "b3"]
    games = []
    for _ in range(160):
        order = rng.sample(names, len(names)) + ["last"]
        games.append({name: order.index(name) + 1 for name in order})
    check = soft_play_check(games)
    assert not check.flagged
    assert all(math.isinf(pair.error) and pair.effect == 0.0 for pair in check.pairs)


def test_two_seat_leagues_keep_the_level() -> None:
    flagged = sum(
        bool(soft_play_check(simulated_league(seed, seats=2, games_per_table=10)).flagged) for seed in range(100)
    )
    assert flagged <= 100 * 0.01 + 3 * math.sqrt(100 * 0.01 * 0.99)


STRENGTH = {"s0": 0.0, "s1": 0.2, "s2": -0.2, "s3": 0.4, "s4": -0.4, "s5": 0.1}


class PlackettLuceExecutor(Executor):
    """Plays here, without bots: each game's order drawn as in simulated_league from STRENGTH, decided by its
    match and index. `feeding` = (partner, feeder, rate): at a table with its partner the feeder throws each game
    (ranks last) with probability `rate`. `crasher`: a bot that crashes in every match, at a game drawn for the
    match, and forfeits that game and the rest of the match (ranks last, its seat marked forfeited)."""

    def __init__(self, feeding: tuple[str, str, float] | None = None, crasher: str | None = None) -> None:
        self.feeding = feeding
        self.crasher = crasher

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        for spec in specs:
            crash_at = random.Random(f"crash/{spec.match_id}").randrange(len(spec.games))
            for position, game in enumerate(spec.games):
                on_game(self._record(spec, game, crashed=position >= crash_at))

    def _record(self, spec: MatchSpec, game: GameSpec, crashed: bool) -> GameRecord:
        rng = random.Random(f"{spec.match_id}/{game.index}")
        seats = tuple(spec.bots[index].name for index in game.seating)
        left, order = list(seats), []
        while left:
            pick = rng.choices(left, [math.exp(STRENGTH[name]) for name in left])[0]
            order.append(pick)
            left.remove(pick)
        if self.feeding is not None:
            partner, feeder, rate = self.feeding
            if {partner, feeder} <= set(seats) and rng.random() < rate:
                order.remove(feeder)
                order.append(feeder)
        forfeited: tuple[bool, ...] = ()
        if self.crasher in seats and crashed:
            order.remove(self.crasher)
            order.append(self.crasher)
            forfeited = tuple(name == self.crasher for name in seats)
        ranks = tuple(order.index(name) + 1 for name in seats)
        return GameRecord(
            spec.match_id, game.index, spec.game, game.seed, seats, ranks, (0,) * len(seats), (), (), None, forfeited
        )


SETTLING = SettleSettings(SettleRule(resolution=200), max_games=3000, bootstrap=100)


def play_and_settle(write_league, seed: int, executor: Executor) -> tuple[list, object, Counter]:
    """A 6-bot, 4-seat league's schedule (360 games), then settling: the pairs flagged after the schedule, the
    settling result and how often each table was played in its rounds."""
    league = load_league(write_league(bots=list(STRENGTH), game="scout", players=4, deals_per_match=6, seed=seed))
    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store, sandbox=False)
        play_league(plan, store, executor)
        before = league_soft_play(store)
        result = settle_league(league, store, executor, SETTLING, scheduled_games=plan.scheduled, sandbox=False)
        rounds = store.settle_rounds()
    return list(before.pairs), result, Counter(entry.table for entries in rounds.values() for entry in entries)


def test_a_pair_feeding_at_40_percent_is_flagged_once_settling_plays_its_tables(write_league) -> None:
    """At the league's size the feeder's effect is suspected (large, clear of zero alone) but not flagged;
    settling plays the pair's tables until it is."""
    before, result, tables = play_and_settle(write_league, 3, PlackettLuceExecutor(feeding=("s0", "s1", 0.4)))
    feeder = next(pair for pair in before if (pair.bot, pair.partner) == ("s1", "s0"))
    assert not any(pair.flagged for pair in before) and feeder.suspected()
    assert result.stop is Stop.SETTLED and result.soft_play is not None
    flagged = [(pair.bot, pair.partner) for pair in result.soft_play.flagged]
    assert flagged == [("s1", "s0")], flagged
    busiest, count = tables.most_common(1)[0]
    assert {"s0", "s1"} <= set(busiest) and count >= 3, tables


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_a_pair_feeding_at_half_its_chances_is_flagged(write_league, seed: int) -> None:
    _, result, _ = play_and_settle(write_league, seed, PlackettLuceExecutor(feeding=("s0", "s1", 0.5)))
    assert result.soft_play is not None
    flagged = result.soft_play.flagged
    assert flagged and (flagged[0].bot, flagged[0].partner) == ("s1", "s0"), "the feeder's effect stands out"
    assert all("s0" in (pair.bot, pair.partner) for pair in flagged), (
        "other flags can only be the partner's: a thrown game helps every bot at the table where the partner is"
    )


@pytest.mark.parametrize("seed", range(6))
def test_honest_students_next_to_a_crashing_one_are_not_flagged(write_league, seed: int) -> None:
    """s5 crashes in every match and forfeits the rest of it: its games with a forfeit are left out, and no pair
    is flagged, before settling or after it. Counted in: a bot at its tables looks fed (test below)."""
    before, result, _ = play_and_settle(write_league, seed, PlackettLuceExecutor(crasher="s5"))
    assert not any(pair.flagged for pair in before)
    assert result.soft_play is not None and not result.soft_play.flagged
    assert result.games < SETTLING.max_games


def test_counting_a_crashing_bots_forfeits_would_name_its_neighbours(write_league) -> None:
    """Why forfeits are left out: with them, leagues of the test above flag pairs of the crasher and an honest
    bot (the crasher ranks last whatever its neighbours do, so it looks thrown whenever one of them sits)."""
    named = 0
    for seed in range(6):
        path = write_league(f"crash{seed}", bots=list(STRENGTH), game="scout", players=4, deals_per_match=6, seed=seed)
        league = load_league(path)
        with LeagueStore(league.default_db) as store:
            play_league(plan_league(league, store, sandbox=False), store, PlackettLuceExecutor(crasher="s5"))
            counted = soft_play_check([game.ranks for game in store.games()])
        named += any("s5" in (pair.bot, pair.partner) for pair in counted.flagged)
    assert named >= 2


@pytest.mark.parametrize("seed", range(4))
def test_honest_leagues_settle_without_flags(write_league, seed: int) -> None:
    _, result, _ = play_and_settle(write_league, seed, PlackettLuceExecutor())
    assert result.stop is Stop.SETTLED and result.soft_play is not None
    assert not result.soft_play.flagged and not result.soft_play.suspected


LEAGUE = """
name = "pact"
game = "scauver"
players = 3
seed = 4
deals_per_match = 8

[limits]
move_time_ms = 2000

[config]
round_cap = 30

[[bots]]
name = "partner"
command = "{python} {pact} partner"
env = {{ PACT_DIR = "{pact_dir}" }}

[[bots]]
name = "feeder"
command = "{python} {pact} feeder"
env = {{ PACT_DIR = "{pact_dir}" }}

[[bots]]
name = "heuristic-1"
command = "scauver-heuristic"

[[bots]]
name = "heuristic-2"
command = "scauver-heuristic"

[[bots]]
name = "random"
command = "random"
"""


def test_a_real_league_with_a_feeding_pair_is_flagged_in_every_report(tmp_path: Path) -> None:
    """A feeder that folds whenever its partner is at the table (they meet through a shared folder, so the
    league runs unsandboxed): the table, the JSON and CSV grades and the HTML page all show the pair."""
    (tmp_path / "pact").mkdir()
    league = tmp_path / "pact.toml"
    league.write_text(LEAGUE.format(python=sys.executable, pact=FIXTURES / "pact.py", pact_dir=tmp_path / "pact"))
    run = CliRunner().invoke(main, ["tournament", "run", str(league), "-j", "2", "--bootstrap", "0", "--no-sandbox"])
    assert run.exit_code == 0, run.output
    assert "Soft play: " in run.stdout and "feeder ranks worse than its rating predicts when partner sits" in run.stdout
    table = json.loads(CliRunner().invoke(main, ["tournament", "table", str(league), "--json"]).stdout)
    flagged = [pair for pair in table["soft_play"]["pairs"] if pair["flagged"]]
    assert flagged and (flagged[0]["bot"], flagged[0]["partner"]) == ("feeder", "partner"), flagged
    assert flagged[0]["z"] < 0 and flagged[0]["p_holm"] < 0.01
    grades = CliRunner().invoke(main, ["tournament", "report", str(league), "--format", "csv", "--bootstrap", "0"])
    rows = {row["bot"]: row for row in csv.DictReader(io.StringIO(grades.stdout))}
    assert rows["feeder"]["soft_play"].startswith("partner (z -")
    page = tmp_path / "report.html"
    assert (
        CliRunner().invoke(main, ["tournament", "report", str(league), "-o", str(page), "--bootstrap", "0"]).exit_code
        == 0
    )
    html = page.read_text()
    assert (
        'id="soft-play"' in html and "pair(s) flagged" in html and '<tr class="flagged"><td class="bot">feeder' in html
    )
