"""Anchored ratings, the groups a table cannot tell apart, and where settling rounds put their tables."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from tournaments.bench.ratings import fill_store, synthetic_games
from tournaments.cli import main
from tournaments.league.league_file import LeagueFileError, load_league
from tournaments.league.store import LeagueStore
from tournaments.ratings.allocation import information, next_tables
from tournaments.ratings.elo import Anchor, RatingInputError, parse_anchor, rate
from tournaments.ratings.settling import PairState, SettleRule, settlement, tie_games
from tournaments.ratings.tables import ratings_json, ratings_table


def simulated(strengths: dict[str, float], games: int, seed: int = 1) -> list[dict[str, int]]:
    """Two-seat games of bots with these true Elo, pairs drawn at random."""
    rng = random.Random(seed)
    played = []
    for _ in range(games):
        first, second = rng.sample(sorted(strengths), 2)
        expected = 1 / (1 + 10 ** ((strengths[second] - strengths[first]) / 400))
        played.append({first: 1, second: 2} if rng.random() < expected else {first: 2, second: 1})
    return played


COPIES = {"strong-a": 400.0, "strong-b": 400.0, "weak-a": 0.0, "weak-b": 0.0}
NARROW = SettleRule(resolution=20)
"""A resolution that 400 games leave open for copies (the default, 100 Elo, is reached at about 190 games a
pair)."""


@pytest.mark.parametrize(
    ("text", "anchor"),
    [("random=0", Anchor("random", 0.0)), ("x=-50.5", Anchor("x", -50.5)), ("bare", Anchor("bare", 0.0))],
)
def test_an_anchor_is_read_as_name_equals_elo(text, anchor):
    assert parse_anchor(text) == anchor


@pytest.mark.parametrize(("text", "message"), [("=3", "NAME=ELO"), ("a=b", "not a number"), ("a=inf", "finite")])
def test_a_bad_anchor_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_anchor(text)


def test_the_anchored_bot_sits_at_its_elo_with_no_width_and_the_others_move_with_it():
    games = simulated(COPIES, 300)
    plain = rate(games, bootstrap=200)
    anchored = rate(games, bootstrap=200, anchor=Anchor("weak-b", 100))
    by_name = {bot.bot: bot for bot in anchored.bots}
    assert by_name["weak-b"].elo == 100 and by_name["weak-b"].ci95 == (100, 100)
    shift = 100 - next(bot.elo for bot in plain.bots if bot.bot == "weak-b")
    for bot in plain.bots:
        assert by_name[bot.bot].elo == pytest.approx(bot.elo + shift)
        assert by_name[bot.bot].los_next == bot.los_next
        assert by_name[bot.bot].diff_next_ci95 == pytest.approx(bot.diff_next_ci95)
    assert [bot.bot for bot in anchored.bots] == [bot.bot for bot in plain.bots]
    assert "weak-b is fixed at 100 Elo" in ratings_table(anchored)
    assert ratings_json(anchored)["anchor"] == {"bot": "weak-b", "elo": 100}


def test_an_interval_is_the_distance_from_the_anchor():
    games = simulated({"a": 100.0, "b": 0.0}, 200)
    plain = rate(games, bootstrap=300)
    anchored = rate(games, bootstrap=300, anchor=Anchor("b", 0))
    assert plain.bots[0].bot == "a"
    assert anchored.bots[0].ci95 == pytest.approx(plain.bots[0].diff_next_ci95)


def test_only_the_anchors_pool_moves():
    games = [{"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 1, "b": 2}, {"c": 1, "d": 2}, {"c": 2, "d": 1}, {"d": 2, "c": 1}]
    ratings = rate(games, bootstrap=50, anchor=Anchor("b", 500))
    elo = {bot.bot: bot.elo for bot in ratings.bots}
    assert elo["b"] == 500 and elo["a"] > 500
    assert elo["c"] + elo["d"] == pytest.approx(0)


def test_an_anchor_that_never_played_is_refused():
    with pytest.raises(RatingInputError, match="'nobody' played none of these games"):
        rate([{"a": 1, "b": 2}], anchor=Anchor("nobody"))


def test_copies_are_one_group_and_far_apart_bots_are_separated():
    verdict = settlement(rate(simulated(COPIES, 400), bootstrap=300), NARROW)
    assert verdict is not None
    groups = verdict.groups
    assert groups["strong-a"] == groups["strong-b"] == 1 and groups["weak-a"] == groups["weak-b"] == 2
    states = [pair.state for pair in verdict.pairs]
    assert states[1] is PairState.SEPARATED and states[0] is states[2] is PairState.OPEN
    assert not verdict.settled and verdict.more_games is not None and verdict.more_games > 400


def test_a_wide_resolution_settles_what_a_narrow_one_leaves_open():
    ratings = rate(simulated(COPIES, 400), bootstrap=300)
    wide = settlement(ratings, SettleRule(resolution=400))
    assert wide is not None and wide.settled and wide.more_games is None
    assert [pair.state for pair in wide.pairs] == [PairState.WITHIN, PairState.SEPARATED, PairState.WITHIN]
    assert "Settled: every adjacent pair" in ratings_table(ratings, rule=SettleRule(resolution=400))


def test_more_games_settle_a_pair_about_as_the_estimate_says():
    """The estimate of the games needed, from 1/sqrt(games), is the right size: a quarter of them does not
    settle the pair, and a few times as many do."""
    strengths = {"a": 40.0, "b": 0.0}
    first = rate(simulated(strengths, 100), bootstrap=300)
    verdict = settlement(first, NARROW)
    assert verdict is not None and verdict.more_games is not None
    total = 100 + verdict.more_games
    short = settlement(rate(simulated(strengths, 100 + verdict.more_games // 4, seed=2), bootstrap=300), NARROW)
    long = settlement(rate(simulated(strengths, 4 * total, seed=3), bootstrap=300), NARROW)
    assert short is not None and not short.settled
    assert long is not None and long.settled


def test_the_table_text_and_json_name_the_groups_and_what_would_settle_it():
    ratings = rate(simulated(COPIES, 400), bootstrap=300)
    text = ratings_table(ratings, rule=NARROW)
    assert text.splitlines()[0].split()[-1] == "Group"
    assert "Not settled: 2 of 3 adjacent pairs are neither separated (LOS >= 99.95%) nor within +/-20 Elo" in text
    assert "more games like these would settle them" in text
    assert "within +/-100 Elo" in ratings_table(ratings), "the table states the resolution it judged by"
    data = ratings_json(ratings, rule=NARROW)
    assert [entry["group"] for entry in data["ratings"]] == [1, 1, 2, 2]
    assert data["settlement"]["settled"] is False and data["settlement"]["groups"] == 2
    assert [pair["state"] for pair in data["settlement"]["pairs"]] == ["open", "separated", "open"]
    no_bootstrap = rate(simulated(COPIES, 40), bootstrap=0)
    assert ratings_json(no_bootstrap)["ratings"][0]["group"] is None
    assert "Group" not in ratings_table(no_bootstrap)


def test_settling_rounds_go_to_the_open_pairs_only():
    ratings = rate(simulated(COPIES, 400), bootstrap=300)
    verdict = settlement(ratings, NARROW)
    assert verdict is not None
    tables = next_tables(ratings, verdict, players=2, games_per_table=2)
    middle = tuple(sorted((verdict.pairs[1].upper, verdict.pairs[1].lower)))
    assert {("strong-a", "strong-b"), ("weak-a", "weak-b"), middle} <= set(tables)
    pairs = (("strong-a", "strong-b"), ("weak-a", "weak-b"))
    growth = sum(max(1, int(ratings.record(*pair).games / 4 / 2)) for pair in pairs)
    copies = tables.count(("strong-a", "strong-b")) + tables.count(("weak-a", "weak-b"))
    assert copies == growth > 2, "the two open pairs share a quarter more of their games"
    assert tables[-1] == middle, "open pairs first, the separated pair's one table last"
    assert copies > len(tables) / 2, "most of a round goes to the open pairs themselves"
    seatable = next_tables(ratings, verdict, players=2, seatable=["strong-a", "strong-b", "weak-a"])
    assert ("strong-a", "strong-b") in seatable and all("weak-b" not in table for table in seatable)


def test_a_round_goes_to_the_pairs_whose_order_more_games_would_decide():
    """Expected information: the round's size comes from each open pair's quarter more of its games, mostly the
    near tie a-b's (1,500 games shared), but the games go where they change the chance of the right order:
    c-d, 40 Elo apart with few games, gets more of the round than a-b, and many times its own quarter."""
    strengths = {"a": 300.0, "b": 295.0, "c": 0.0, "d": -40.0, "e": -400.0, "f": -700.0}
    played = simulated({"a": 300.0, "b": 295.0}, 1500) + simulated(strengths, 600, seed=2)
    ratings = rate(played, bootstrap=300)
    verdict = settlement(ratings, NARROW)
    assert verdict is not None
    states = {frozenset((pair.upper, pair.lower)): pair.state for pair in verdict.pairs}
    assert states[frozenset("ab")] is states[frozenset("cd")] is PairState.OPEN
    tables = next_tables(ratings, verdict, players=2, games_per_table=2)
    quarter = {pair: int(ratings.record(*pair).games / 4 / 2) for pair in (("a", "b"), ("c", "d"))}
    assert quarter[("a", "b")] > 10 * quarter[("c", "d")]
    assert tables.count(("c", "d")) > max(tables.count(("a", "b")), 5 * quarter[("c", "d")])


def test_a_bigger_table_is_filled_with_the_bots_nearest_the_open_pair():
    strengths = {"a": 600.0, "b": 590.0, "c": 300.0, "d": 0.0, "e": -300.0}
    ratings = rate(simulated(strengths, 600), bootstrap=300)
    verdict = settlement(ratings, NARROW)
    assert verdict is not None
    open_pairs = {(pair.upper, pair.lower) for pair in verdict.open_pairs}
    assert open_pairs and all("e" not in pair for pair in open_pairs)
    tables = next_tables(ratings, verdict, players=3)
    assert ("a", "b", "c") in tables
    assert sum("e" in table for table in tables) == 1, "e's pair is decided: its one guard table"


def test_league_keys_for_settling_and_the_anchor(write_league):
    extra = "until_settled = true\nmax_games = 500\nsettle_los = 0.9\nresolution = 30\n[anchor]\nbeta = 100\n"
    league = load_league(write_league(extra=extra))
    assert league.until_settled and league.max_games == 500
    assert (league.settle_los, league.resolution, league.anchor) == (0.9, 30.0, ("beta", 100.0))
    plain = load_league(write_league(file_name="plain"))
    assert not plain.until_settled and plain.anchor is None and plain.settle_los is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("settle_los = 1.5\n", "settle_los"),
        ("until_settled = 1\n", "true or false"),
        ("resolution = -3\n", "positive"),
        ("[anchor]\nnobody = 0\n", "names no bot"),
        ("[anchor]\nalpha = 0\nbeta = 1\n", "one bot"),
    ],
)
def test_bad_settling_keys_are_refused(write_league, extra, message):
    with pytest.raises(LeagueFileError, match=message):
        load_league(write_league(extra=extra))


def test_rate_and_table_take_the_anchor_and_the_rule(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"ranks": game}) + "\n" for game in simulated(COPIES, 200)))
    runner = CliRunner()
    out = runner.invoke(main, ["tournament", "rate", str(results), "--anchor", "weak-a=0", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert next(entry for entry in data["ratings"] if entry["bot"] == "weak-a")["ci95"] == [0, 0]
    wide = runner.invoke(main, ["tournament", "rate", str(results), "--resolution", "600", "--settle-los", "0.9"])
    assert "Settled" in wide.output and "+/-600 Elo" in wide.output and "LOS >= 99.9%" in wide.output
    bad = runner.invoke(main, ["tournament", "rate", str(results), "--anchor", "a=b"])
    assert bad.exit_code == 2 and "not a number" in bad.output
    missing = runner.invoke(main, ["tournament", "rate", str(results), "--anchor", "nobody=0"])
    assert missing.exit_code == 1 and "played none of these games" in missing.output


def test_report_and_table_of_a_store_anchor_and_group(tmp_path):
    db = tmp_path / "league.sqlite"
    with LeagueStore(db) as store:
        fill_store(store, synthetic_games(300, 4, 2, seed=5))
    runner = CliRunner()
    page = runner.invoke(main, ["tournament", "report", "--db", str(db), "--anchor", "bot00=0", "--bootstrap", "100"])
    assert page.exit_code == 0, page.output
    assert "<th>group</th>" in page.stdout and "bot00 is fixed at 0 Elo" in page.stdout
    assert "Not settled" in page.stdout or "Settled" in page.stdout
    rows = runner.invoke(main, ["tournament", "report", "--db", str(db), "--format", "json", "--anchor", "bot00=0"])
    assert rows.exit_code == 0, rows.output
    assert "bot00" in rows.stdout
    table = runner.invoke(main, ["tournament", "table", "--db", str(db), "--anchor", "bot00=-50", "--json"])
    data = json.loads(table.stdout)
    assert next(entry for entry in data["ratings"] if entry["bot"] == "bot00")["elo"] == -50
    assert all(isinstance(entry["group"], int) for entry in data["ratings"])
    bad = runner.invoke(main, ["tournament", "table", "--db", str(db), "--anchor", "nobody=0"])
    assert bad.exit_code == 1 and "played none of these games" in bad.output


def test_an_open_pair_also_plays_the_bot_just_beyond():
    strengths = {"a": 10.0, "b": 5.0, "c": 0.0, "d": -900.0}
    ratings = rate(simulated(strengths, 400), bootstrap=300)
    verdict = settlement(ratings, NARROW)
    assert verdict is not None
    order = [bot.bot for bot in ratings.bots]
    assert order[-1] == "d" and verdict.pairs[-1].state is PairState.SEPARATED
    assert [pair.state for pair in verdict.pairs[:2]] == [PairState.OPEN, PairState.OPEN]
    tables = next_tables(ratings, verdict, players=2, games_per_table=2)
    first, _, third = order[:3]
    assert tuple(sorted((first, third))) in tables, "the window: the top bot with the third"
    assert tuple(sorted((order[1], "d"))) not in tables, "d is 900 Elo below: its games would tell nothing"


def test_with_an_rng_as_many_tables_again_are_drawn_uniformly_and_reproducibly():
    ratings = rate(simulated(COPIES, 400), bootstrap=300)
    verdict = settlement(ratings)
    assert verdict is not None
    focused = next_tables(ratings, verdict, players=2, games_per_table=2)
    first = next_tables(ratings, verdict, players=2, games_per_table=2, rng=random.Random(5))
    assert first[: len(focused)] == focused and len(first) == 2 * len(focused), "half of the round is uniform"
    assert first == next_tables(ratings, verdict, players=2, games_per_table=2, rng=random.Random(5))


def test_the_uniform_half_of_a_round_does_not_depend_on_the_results():
    """What keeps the intervals honest after settling: tables the results cannot have chosen. Two leagues of
    the same bots with opposite results draw the same uniform tables from the same seed (one a prefix of the
    other's when their rounds differ in size)."""
    strengths = {"a": 300.0, "b": 100.0, "c": 0.0, "d": -100.0, "e": -300.0}
    reversed_strengths = {bot: -elo for bot, elo in strengths.items()}
    draws = []
    for truth in (strengths, reversed_strengths):
        ratings = rate(simulated(truth, 300), bootstrap=200)
        verdict = settlement(ratings, NARROW)
        assert verdict is not None
        focused = next_tables(ratings, verdict, players=2, games_per_table=2)
        draws.append(next_tables(ratings, verdict, players=2, games_per_table=2, rng=random.Random(7))[len(focused) :])
    shorter, longer = sorted(draws, key=len)
    assert shorter and longer[: len(shorter)] == shorter
    assert len(set(longer)) > 3, "drawn from the whole pool, not the open pairs"


def test_the_games_two_equal_bots_need_to_be_known_within_a_resolution():
    assert (tie_games(100), tie_games(50), tie_games(20)) == (186, 742, 4638)
    strengths = {"a": 0.0, "b": 0.0}
    rule = SettleRule(resolution=100)
    verdicts = [settlement(rate(simulated(strengths, tie_games(100), seed), bootstrap=300), rule) for seed in range(5)]
    assert sum(verdict is not None and verdict.settled for verdict in verdicts) >= 4
    early = [settlement(rate(simulated(strengths, 40, seed), bootstrap=300), rule) for seed in range(5)]
    assert not any(verdict is not None and verdict.settled for verdict in early)


def test_a_game_tells_most_about_bots_of_equal_strength():
    assert information(0) == 1 and information(200) == pytest.approx(information(-200))
    assert 0.05 < information(700) < 0.15 < information(300) < 1
