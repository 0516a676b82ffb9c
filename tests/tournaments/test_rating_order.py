"""The table's order follows the results: an unbeaten bot first, a dominance chain in its order, every Elo finite;
`tournament rate` and `tournament table` agree; the live leader line works on tallies."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.bench.ratings import fill_store, synthetic_games
from tournaments.cli import main
from tournaments.cli.progress import Leaderboard
from tournaments.league.store import LeagueStore
from tournaments.ratings.elo import rate, rate_tallies
from tournaments.ratings.tallies import GameTallies


@st.composite
def leagues_with_an_unbeaten_bot(draw: st.DrawFn) -> list[dict[str, int]]:
    """Round robins (every table of k bots) or gauntlets (U against every table of the others), 2 to 5 seats,
    each table playing its own number of games; U ranks alone first in all of its games, the others anyhow."""
    seats = draw(st.integers(2, 5))
    bots = draw(st.integers(seats, 7))
    others = [f"b{number}" for number in range(bots - 1)]
    if draw(st.booleans()):
        tables = [("U", *table) for table in itertools.combinations(others, seats - 1)]
    else:
        tables = list(itertools.combinations(["U", *others], seats))
    games = []
    for table in tables:
        for _ in range(draw(st.integers(1, 8))):
            rest = draw(st.permutations([bot for bot in table if bot != "U"]))
            ties = draw(st.lists(st.booleans(), min_size=len(rest), max_size=len(rest)))
            order = (["U"] if "U" in table else []) + list(rest)
            games.append(_ranks(order, [False] * (len(order) - len(rest)) + ties))
    return games


def _ranks(order: list[str], tied_with_previous: list[bool]) -> dict[str, int]:
    """Ranks of bots in `order`, each tied with the one before where asked (never with the first)."""
    ranks: dict[str, int] = {}
    for position, bot in enumerate(order):
        tied = position > 1 and tied_with_previous[position]
        ranks[bot] = ranks[order[position - 1]] if tied else position + 1
    return ranks


@settings(max_examples=300, deadline=None)
@given(leagues_with_an_unbeaten_bot())
def test_a_bot_that_wins_every_game_ranks_first(games: list[dict[str, int]]) -> None:
    ratings = rate(games, bootstrap=0)
    assert ratings.bots[0].bot == "U"
    assert ratings.bots[0].elo > ratings.bots[1].elo


def test_the_class_round_robin_of_the_issue_ranks_the_unbeaten_bot_first() -> None:
    """31 bots, 2 games per pair; U wins all 60 (2-0 against the runner-up s00, which loses only those)."""
    others = [f"s{number:02d}" for number in range(30)]
    games = [{"U": 1, bot: 2} for bot in others for _ in range(2)]
    for first, second in itertools.combinations(others, 2):
        games += [{first: 1, second: 2}, {first: 2, second: 1} if second == "s29" else {first: 1, second: 2}]
    ratings = rate(games, bootstrap=100)
    assert [bot.bot for bot in ratings.bots[:2]] == ["U", "s00"]
    assert all(math.isfinite(bot.elo) for bot in ratings.bots)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 5), st.integers(0, 3), st.lists(st.integers(1, 6), min_size=1, max_size=60))
def test_a_dominance_chain_keeps_its_order(seats: int, extra: int, counts: list[int]) -> None:
    """c0 beats c1 beats c2 ... at every table of a round robin, each table playing its own number of games."""
    chain = [f"c{number}" for number in range(seats + extra)]
    tables = list(itertools.combinations(chain, seats))
    games = [
        {bot: rank for rank, bot in enumerate(table, start=1)}
        for table, count in zip(tables, itertools.cycle(counts))
        for _ in range(count)
    ]
    ratings = rate(games, bootstrap=0)
    elo = [bot.elo for bot in ratings.bots]
    assert [bot.bot for bot in ratings.bots] == chain
    assert all(higher > lower for higher, lower in itertools.pairwise(elo))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from("abcdef"), st.integers(1, 3), min_size=2, max_size=5),
        min_size=1,
        max_size=30,
    )
)
def test_every_elo_in_every_table_is_finite(games: list[dict[str, int]]) -> None:
    ratings = rate(games, bootstrap=20)
    for bot in ratings.bots:
        assert math.isfinite(bot.elo)
        assert bot.ci95 is not None and all(math.isfinite(value) for value in bot.ci95)
    lines = [json.dumps({"ranks": game}) for game in games]
    result = CliRunner().invoke(main, ["tournament", "rate", "-", "--bootstrap", "20"], input="\n".join(lines))
    assert result.exit_code == 0, result.output
    numbers = re.findall(r"\S+", result.output.split("\n\n")[0])
    assert not any(word in {"inf", "-inf", "nan", ">=", "<="} for word in numbers)


def _store(path: Path, games: int, bots: int, seats: int) -> LeagueStore:
    store = LeagueStore(path)
    fill_store(store, synthetic_games(games, bots, seats, seed=3))
    return store


def test_the_store_counts_outcomes_as_its_games_say(tmp_path: Path) -> None:
    with _store(tmp_path / "league.sqlite", 400, 5, 3) as store:
        from_rows = GameTallies.of(game.ranks for game in store.games())
        assert store.outcome_counts() == dict(from_rows.outcomes())
        assert sum(store.outcome_counts().values()) == store.game_count() == 400


def test_rate_and_table_agree_on_the_same_games(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    with _store(path, 300, 4, 2) as store:
        lines = [json.dumps({"ranks": game.ranks}) for game in reversed(store.games())]
    runner = CliRunner()
    table = runner.invoke(main, ["tournament", "table", "--db", str(path), "--json", "--bootstrap", "200"])
    rated = runner.invoke(main, ["tournament", "rate", "-", "--json", "--bootstrap", "200"], input="\n".join(lines))
    assert table.exit_code == 0 and rated.exit_code == 0, table.output + rated.output
    from_table, from_file = json.loads(table.output), json.loads(rated.output)
    keys = ("bot", "elo", "ci95", "los_next", "games", "score")
    assert [[entry[key] for key in keys] for entry in from_table["ratings"]] == [
        [entry[key] for key in keys] for entry in from_file["ratings"]
    ]
    assert from_table["games"] == 300


def test_table_without_the_prior_is_plain_maximum_likelihood(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    _store(path, 300, 4, 2).close()
    result = CliRunner().invoke(main, ["tournament", "table", "--db", str(path), "--prior-draws", "0"])
    assert result.exit_code == 0, result.output
    assert "no prior" in result.output


def test_tallies_keep_each_distinct_outcome_once() -> None:
    tallies = GameTallies()
    for _ in range(5000):
        tallies.add({"a": 1, "b": 2})
        tallies.add({"b": 1, "a": 2, "c": 3})
    assert tallies.games == 10000
    assert dict(tallies.outcomes()) == {(("a", 1), ("b", 2)): 5000, (("a", 2), ("b", 1), ("c", 3)): 5000}
    assert tallies.pairs()[("a", "b")].games == 10000


def test_the_leader_line_is_the_table_s_leader_and_follows_new_games() -> None:
    games = list(synthetic_games(500, 5, 3, seed=1))
    leaderboard = Leaderboard(GameTallies.of(games[:100]))
    for game in games[100:]:
        leaderboard.add(game)
    best = rate(games, bootstrap=0).bots[0]
    assert leaderboard.leader(fresh=True) == f"leader {best.bot} {best.elo:+.0f} Elo ({best.games} games)"
    assert rate_tallies(leaderboard.tallies, bootstrap=0) == rate(games, bootstrap=0)
