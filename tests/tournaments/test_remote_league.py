"""Remote seats in league files and SPRT, without the network: the [remote] table and its rules (rated,
share_tables), the scheduler's one-match-at-a-time lane for remote bots, unrated games left out of the ratings,
and the store's schema 7 (its step from schema 6). tests/tournaments/test_remote_league_loopback.py plays them
for real, through `referee connect` on loopback."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_runner import record_for
from remote_fakes import exclusive_runner

from protocol.curve_keys import new_key_pair
from protocol.errors import BadInput
from referee.botspec import resolve_bot
from referee.isolation.sandbox import Isolation
from referee.records import GameRecord, RemoteTiming
from tournaments.cli import main
from tournaments.league.executors import ExecutorError, LocalExecutor
from tournaments.league.league_file import LeagueFileError, load_league
from tournaments.league.remote import RemoteMatchRunner
from tournaments.league.runner import plan_league, play_league, play_specs
from tournaments.league.schedule import league_schedule, league_tables, match_spec
from tournaments.league.store import LeagueStore
from tournaments.league_report import league_report, league_results
from tournaments.pages.report_page import render_report_page
from tournaments.ratings.sprt import SprtConfigError, SprtTest
from tournaments.sprt_match import SprtPlan

LOCAL = ("l1", "l2", "l3", "l4")


def league_toml(
    remote: tuple[str, ...] = ("alice",),
    local: tuple[str, ...] = LOCAL,
    *,
    players: int = 3,
    remote_table: str | None = None,
    **settings: object,
) -> str:
    lines = ['game = "scout"', f"players = {players}", "seed = 5"]
    lines += [f"{key} = {value}" for key, value in settings.items()]
    if remote_table is None:
        remote_table = 'listen = "tcp://127.0.0.1:5555"\nkeys = "keys"'
    if remote_table:
        lines += ["[remote]", remote_table]
    for name in local:
        lines += ["[[bots]]", f'name = "{name}"', 'command = "random"']
    for name in remote:
        lines += ["[[bots]]", f'name = "{name}"', f'command = "remote:{name}"']
    return "\n".join(lines) + "\n"


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    """The organiser's keys folder: the referee's pair and the public keys of alice, bob and carol."""
    folder = tmp_path / "keys"
    new_key_pair("referee", folder)
    for name in ("alice", "bob", "carol"):
        new_key_pair(name, tmp_path / "authors")
        (folder / f"{name}.key").write_bytes((tmp_path / "authors" / f"{name}.key").read_bytes())
    return folder


def write(tmp_path: Path, text: str, name: str = "league") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def test_a_remote_bot_is_seated_by_its_key(keys: Path, tmp_path: Path) -> None:
    league = load_league(
        write(tmp_path, league_toml(remote_table='listen = "tcp://127.0.0.1:5555"\nkeys = "keys"\nlag_quota_ms = 250'))
    )
    assert league.remote is not None and league.remote.keys == keys and league.remote.lag_quota_ms == 250
    assert league.remote.rated and not league.remote.share_tables
    (alice,) = [bot for bot in league.bots if bot.name == "alice"]
    assert alice.spec.command == ("remote:alice",)
    assert alice.digest == "key:" + (keys / "alice.key").read_text().split('public-key = "')[1].split('"')[0]
    assert league.remote_bots == ("alice",)


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        (league_toml(remote_table=""), "bots[4].command", "has no [remote]"),
        (league_toml(remote=()), "remote", "no bot is one"),
        (league_toml(remote_table='listen = "0.0.0.0:5555"\nkeys = "keys"'), "remote.listen", "tcp://HOST:PORT"),
        (league_toml(remote_table='listen = "tcp://127.0.0.1:5555"'), "remote.keys", "is missing"),
        (league_toml(remote_table='listen = "tcp://127.0.0.1:5555"\nkeys = "nowhere"'), "remote.keys", "no key"),
        (league_toml(remote=("dave",)), "bots[4].command", "no public key dave.key"),
        (
            league_toml(remote_table='listen = "tcp://h:1"\nkeys = "keys"\nrated = "no"'),
            "remote.rated",
            "true or false",
        ),
        (
            league_toml(remote_table='listen = "tcp://h:1"\nkeys = "keys"\nshare_tables = 1'),
            "remote.share_tables",
            "true or false",
        ),
        (
            league_toml(remote_table='listen = "tcp://h:1"\nkeys = "keys"\nlag_quota_ms = -1'),
            "remote.lag_quota_ms",
            "at least 0",
        ),
        (
            league_toml(remote_table='listen = "tcp://h:1"\nkeys = "keys"\nport = 1'),
            "remote.port",
            "not a league setting",
        ),
        (league_toml(remote=("alice", "bob"), local=("l1",)), "remote.share_tables", "1 local bot(s)"),
    ],
)
def test_bad_remote_settings_are_clear_errors(keys: Path, tmp_path: Path, text: str, key: str, words: str) -> None:
    with pytest.raises(LeagueFileError, match="key") as refused:
        load_league(write(tmp_path, text))
    assert refused.value.key == key
    assert words in str(refused.value)


def test_one_key_is_one_seat(keys: Path, tmp_path: Path) -> None:
    text = league_toml() + '[[bots]]\nname = "alias"\ncommand = "remote:alice"\n'
    with pytest.raises(LeagueFileError, match="seated twice"):
        load_league(write(tmp_path, text))


def test_a_remote_bot_takes_no_cwd_or_env(keys: Path, tmp_path: Path) -> None:
    text = league_toml() + 'env = { LEVEL = "3" }\n'
    with pytest.raises(LeagueFileError, match="runs on its author's machine") as refused:
        load_league(write(tmp_path, text))
    assert refused.value.key == "bots[4].env"


def remote_count(table: tuple[str, ...], remote: tuple[str, ...]) -> int:
    return sum(name in remote for name in table)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_share_tables_false_never_seats_two_remote_bots_together(keys: Path, tmp_path: Path, players: int) -> None:
    remote = ("alice", "bob", "carol")
    shared = load_league(
        write(
            tmp_path,
            league_toml(
                remote, players=players, remote_table='listen = "tcp://h:1"\nkeys = "keys"\nshare_tables = true'
            ),
            "shared",
        )
    )
    apart = load_league(write(tmp_path, league_toml(remote, players=players), "apart"))
    assert max(remote_count(table, remote) for table in league_tables(shared)) >= 2
    tables = league_tables(apart)
    assert tables and all(remote_count(table, remote) <= 1 for table in tables)
    assert {table for table in league_tables(shared) if remote_count(table, remote) <= 1} == set(tables)
    for name in remote:
        assert any(name in table for table in tables)


def test_two_remote_bots_may_meet_at_two_seats(keys: Path, tmp_path: Path) -> None:
    league = load_league(write(tmp_path, league_toml(("alice", "bob"), players=2)))
    assert ("alice", "bob") in league_tables(league)


def _league_with_lane(keys: Path, tmp_path: Path, rated: bool) -> Path:
    settings = f'listen = "tcp://127.0.0.1:5555"\nkeys = "keys"\nrated = {"true" if rated else "false"}'
    return write(tmp_path, league_toml(("alice", "bob"), ("l1", "l2", "l3"), remote_table=settings), f"rated-{rated}")


@pytest.mark.parametrize("rated", [True, False])
def test_remote_matches_are_played_one_at_a_time_and_rated_as_the_file_says(
    keys: Path, tmp_path: Path, rated: bool
) -> None:
    """Six matches with a remote bot and one without, on three workers: a remote bot is never in two matches at
    once (exclusive_runner raises if it is), its games are recorded with isolation remote, and with rated =
    false they are stored and counted, yet the ratings are those of the local match alone."""
    league = load_league(_league_with_lane(keys, tmp_path, rated))
    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store, sandbox=False)
        assert "6 match(es) with a remote seat are played first, one at a time, on this machine" in plan.notes[-1]
        added = play_league(plan, store, LocalExecutor(3, exclusive_runner, pinned=False))
        assert added == plan.scheduled == store.game_count() == 7 * 6
        counts = store.isolation_counts()
        assert counts == {Isolation.REMOTE: 36, Isolation.FULL: 6}
        results = league_results(store, league, bootstrap=0)
        rated_bots = {rating.bot for rating in results.ratings.bots}
        if rated:
            assert results.unrated == 0 and results.games == 42
            assert rated_bots == {"alice", "bob", "l1", "l2", "l3"}
        else:
            assert results.unrated == 36 and results.games == 6
            assert rated_bots == {"l1", "l2", "l3"}
            assert store.game_count() == 42
        page = render_report_page(league_report(store, bootstrap=0), tmp_path)
        assert "36 game(s) had a remote seat (isolation remote)" in page
        assert ("36 game(s) with a remote seat are unrated" in page) is not rated
    table = CliRunner().invoke(main, ["tournament", "table", str(league.path), "--bootstrap", "0"])
    assert table.exit_code == 0, table.output
    assert "36 game(s) had a remote seat (isolation remote)" in table.output
    assert ("36 game(s) with a remote seat are unrated" in table.output) is not rated


def test_the_lane_is_what_keeps_remote_matches_apart(keys: Path, tmp_path: Path) -> None:
    """The same matches handed to three workers directly (no lane) seat a remote bot in two at once: what the
    test above would catch."""
    league = load_league(_league_with_lane(keys, tmp_path, True))
    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store, sandbox=False)
        remote = [spec for spec in plan.specs if any(bot.name in ("alice", "bob") for bot in spec.bots)]
        with pytest.raises(ExecutorError, match="SeatedTwice|while in another match"):
            LocalExecutor(3, exclusive_runner, pinned=False).run(remote, lambda record: None)


def test_a_league_without_remote_settings_cannot_play_a_remote_match(keys: Path, tmp_path: Path) -> None:
    league = load_league(_league_with_lane(keys, tmp_path, True))
    with LeagueStore(league.default_db) as store:
        plan = plan_league(league, store, sandbox=False)
        with pytest.raises(BadInput, match="no \\[remote\\] table"):
            play_specs(plan.specs, store, LocalExecutor(1, exclusive_runner, pinned=False))
        assert store.game_count() == 0


def test_a_schema_6_store_is_upgraded_and_takes_remote_figures(keys: Path, tmp_path: Path) -> None:
    league = load_league(_league_with_lane(keys, tmp_path, False))
    with LeagueStore(league.default_db) as store:
        schedule = league_schedule(league, store.deal_key())
        store.bind(league)
        store.add_matches(schedule)
        match = next(match for match in schedule if "alice" in match.table)
        spec = match_spec(league, match)
        first, second = (record_for(spec, game) for game in match.games[:2])
        assert store.add_game(first)
    with sqlite3.connect(league.default_db) as db:
        db.execute("DROP TABLE remote_timings")
        db.execute("ALTER TABLE games DROP COLUMN rated")
        db.execute("PRAGMA user_version = 6")
    timing = RemoteTiming(decisions=12, median_lag_ms=3.5, max_lag_ms=9.0, credit_ms=4.0, quota_left_ms=996.0)
    seat = second.seats.index("alice")
    remote = tuple(timing if index == seat else None for index in range(len(second.seats)))
    with LeagueStore(league.default_db) as store:
        assert store.game_count() == 1 and store.unrated_game_count() == 0
        assert store.add_game(remote_record(second, remote), rated=False)
        assert not store.add_game(remote_record(second, remote), rated=False)
        assert store.unrated_game_count() == 1
        assert store.remote_timings() == {(second.match_id, second.index): {seat: timing}}
        totals = store.remote_totals()["alice"]
        assert (totals.games, totals.decisions, totals.credit_ms, totals.least_quota_left_ms) == (1, 12, 4.0, 996.0)
        assert sum(store.outcome_counts().values()) == 1
    with sqlite3.connect(league.default_db) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (7,)


def remote_record(record: GameRecord, remote: tuple[RemoteTiming | None, ...]) -> GameRecord:
    return dataclasses.replace(record, remote=remote, isolation=Isolation.REMOTE)


def test_sprt_with_a_remote_bot_plays_one_batch_at_a_time(keys: Path) -> None:
    new, base = resolve_bot("remote:alice", "scout"), resolve_bot("random", "scout")
    test = SprtTest(elo0=0, elo1=10, alpha=0.05, beta=0.05)
    runner = RemoteMatchRunner("tcp://127.0.0.1:5555", keys, 1000)
    with pytest.raises(SprtConfigError, match="-j 1"):
        SprtPlan("scout", new, base, test, 10, 1, concurrency=2, remote=runner)
    with pytest.raises(SprtConfigError, match="where to listen"):
        SprtPlan("scout", new, base, test, 10, 1)
    assert SprtPlan("scout", new, base, test, 10, 1, remote=runner).runner is runner
    refused = CliRunner().invoke(main, ["tournament", "sprt", "scout", "remote:alice", "random"])
    assert refused.exit_code == 2 and "needs --listen" in refused.output
