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
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main
from tournaments.ratings.soft_play import holm, soft_play_check

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


def test_two_seat_leagues_keep_the_level() -> None:
    flagged = sum(
        bool(soft_play_check(simulated_league(seed, seats=2, games_per_table=10)).flagged) for seed in range(100)
    )
    assert flagged <= 100 * 0.01 + 3 * math.sqrt(100 * 0.01 * 0.99)


LEAGUE = """
name = "pact"
game = "scauver"
players = 3
seed = 4
deals_per_match = 6

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
