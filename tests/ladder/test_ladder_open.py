"""The open division: a student's CURVE public key is their remote bot, an entrant of a table of its own whose
matches only a worker that hosts remote seats claims; its games never enter the graded table or the marks. The
key is the student's to see and replace; a key the ladder does not take is a BadKey. Migration 0002 upgrades a
ladder database made before it, its games all graded."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from alembic import command
from alembic.config import Config
from ladder_helpers import Made, bot_folder, pass_checks, played, students, worker
from sqlalchemy import inspect, select

from protocol.curve_keys import KeyPair
from tournaments.ladder import (
    BadKey,
    Division,
    Forbidden,
    Job,
    JobKind,
    LadderFileError,
    NotTheHost,
    Principal,
    RemoteHost,
    Role,
    do_job,
    init_ladder,
    open_ladder,
)
from tournaments.ladder.database import MIGRATIONS, open_engine
from tournaments.ladder.ladder_file import parse_ladder_file
from tournaments.ladder.schema import games, remote_keys

SERVER_PUBLIC, SERVER_SECRET = zmq.curve_keypair()
OPEN = f'\n[open]\nremote = true\nconnect = "tcp://127.0.0.1:5600"\nserver_key = "{SERVER_PUBLIC.decode()}"\n'
STAFF = Principal(Role.STAFF, "admin")
MATCH_BOUND = 200


def new_key() -> str:
    return zmq.curve_keypair()[0].decode()


def open_ladder_made(tmp_path: Path, db_url: str | None, text: str = OPEN) -> Iterator[Made]:
    folder = tmp_path / "ladder"
    created = init_ladder(folder, "scout", 3, ["heuristic", "random"], db_url=db_url)
    path = folder / "ladder.toml"
    path.write_text(path.read_text() + text)
    with open_ladder(folder, db_url) as ladder:
        yield Made(folder, created, ladder, db_url)


@pytest.fixture
def opened(tmp_path: Path, db_url: str | None) -> Iterator[Made]:
    yield from open_ladder_made(tmp_path, db_url)


@pytest.mark.parametrize(
    "table",
    [
        "remote = 1",
        'remote = true\nserver_key = "{key}"',
        'remote = true\nconnect = "ladder:5600"\nserver_key = "{key}"',
        'remote = true\nconnect = "tcp://h:1"\nserver_key = "short"',
        'remote = true\nconnect = "tcp://h:1"\nserver_key = "{key}"\nhosts = 2',
    ],
)
def test_a_wrong_open_table_is_refused_naming_its_key(table: str) -> None:
    text = 'game = "scout"\nplayers = 3\nseed = 1\n[open]\n' + table.format(key=SERVER_PUBLIC.decode()) + "\n"
    with pytest.raises(LadderFileError, match="open"):
        parse_ladder_file(text, Path("ladder.toml"))


def test_without_an_open_table_there_is_no_open_division(made: Made) -> None:
    ann = students(made, "ann")["ann"]
    assert not made.ladder.file.open.remote
    with pytest.raises(Forbidden, match="no open division"):
        made.ladder.register_key(ann, new_key())
    with pytest.raises(Forbidden):
        made.ladder.table(None, Division.OPEN)
    assert made.ladder.remote_seat(ann, "ann").open is False


@pytest.mark.parametrize(
    "key", ["", "x" * 39, "x" * 41, "~" * 40, "é" * 40, 40, None, ["a"], "-----BEGIN PUBLIC KEY-----" + "A" * 14]
)
def test_a_malformed_key_is_refused(opened: Made, key: object) -> None:
    ann = students(opened, "ann")["ann"]
    with pytest.raises(BadKey, match="not a CURVE public key"):
        opened.ladder.register_key(ann, key)
    assert opened.ladder.remote_seat(ann, "ann").key is None


def test_a_key_is_one_students_and_never_the_servers(opened: Made) -> None:
    people = students(opened, "quinn", "bob")
    shared = new_key()
    opened.ladder.register_key(people["quinn"], shared)
    with pytest.raises(BadKey, match="cannot be registered") as refused:
        opened.ladder.register_key(people["bob"], shared)
    assert "quinn" not in str(refused.value)
    with pytest.raises(BadKey, match="cannot be registered"):
        opened.ladder.register_key(people["bob"], SERVER_PUBLIC.decode())
    assert opened.ladder.remote_seat(people["bob"], "bob").key is None
    assert opened.ladder.remote_seat(people["quinn"], "quinn").key.public_key == shared  # type: ignore[union-attr]


def test_a_key_is_shown_to_its_student_and_staff_only(opened: Made) -> None:
    people = students(opened, "ann", "bob")
    key = new_key()
    opened.ladder.register_key(people["ann"], f"  {key}\n")
    seat = opened.ladder.remote_seat(people["ann"], "ann")
    assert seat.key is not None and seat.key.public_key == key
    assert (seat.connect, seat.server_key) == ("tcp://127.0.0.1:5600", SERVER_PUBLIC.decode())
    assert opened.ladder.remote_seat(STAFF, "ann").key == seat.key
    for asker in (people["bob"], Principal(Role.WORKER, "workers")):
        with pytest.raises(Forbidden):
            opened.ladder.remote_seat(asker, "ann")
    with pytest.raises(Forbidden):
        opened.ladder.register_key(STAFF, new_key())
    table = opened.ladder.table(people["bob"], Division.OPEN)
    assert key not in repr(table) and "ann" not in [row.name for row in table.rows]


def _open_jobs(made: Made) -> list[Job]:
    """The open matches a host claims, which it takes before any graded job (it then stops at the first)."""
    jobs = []
    while (job := made.ladder.claim(worker(made), "host", hosts_remote=True)) is not None:
        if job.payload["division"] != Division.OPEN.value:
            break
        jobs.append(job)
    return jobs


def test_the_open_division_is_seated_and_claimed_only_by_a_host(opened: Made, tmp_path: Path) -> None:
    people = students(opened, "ann", "bob")
    opened.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(opened)
    key = opened.ladder.register_key(people["ann"], new_key())
    graded = []
    while (job := opened.ladder.claim(worker(opened), "local")) is not None:
        assert job.payload["division"] == Division.GRADED.value
        assert not any(entrant.get("remote") for entrant in job.payload["entrants"])
        graded.append(job)
    assert graded, "the graded division has matches of its own"
    hosted = _open_jobs(opened)
    assert hosted
    for job in hosted:
        assert job.kind is JobKind.MATCH and job.payload["division"] == Division.OPEN.value
        assert job.payload["server_key"] == SERVER_PUBLIC.decode()
        remote = [entrant for entrant in job.payload["entrants"] if entrant.get("remote")]
        assert remote == [
            {"name": key.entrant, "baseline": False, "remote": True, "public_key": key.public_key, "student": "ann"}
        ]
        others = {entrant["name"] for entrant in job.payload["entrants"]} - {key.entrant}
        assert others <= {"heuristic", "random"}


def test_open_games_have_a_table_of_their_own_and_never_change_a_mark(opened: Made, tmp_path: Path) -> None:
    people = students(opened, "ann", "bob")
    opened.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(opened)
    key = opened.ladder.register_key(people["ann"], new_key())
    for job in _open_jobs(opened):
        opened.ladder.report(worker(opened), job.id, played(job, winner=key.entrant))
    graded = opened.ladder.table(STAFF)
    assert graded.games == 0 and key.entrant not in {row.version for row in graded.rows}
    open_table = opened.ladder.table(STAFF, Division.OPEN)
    assert open_table.division is Division.OPEN and open_table.games > 0
    top = open_table.rows[0]
    assert (top.name, top.version, top.games) == ("ann", key.entrant, open_table.games)
    assert opened.ladder.table(people["ann"], Division.OPEN).rows[0].mine
    with opened.ladder.engine.connect() as connection:
        divisions = set(connection.execute(select(games.c.division)).scalars())
    assert divisions == {Division.OPEN.value}
    assert [row.games for row in opened.ladder.marks(STAFF) if row.student == "ann"] in ([], [0])


def test_replacing_a_key_makes_a_new_entrant_and_drops_its_queued_matches(opened: Made) -> None:
    ann = students(opened, "ann")["ann"]
    first = opened.ladder.register_key(ann, new_key())
    assert opened.ladder.register_key(ann, first.public_key) == first
    second = opened.ladder.register_key(ann, new_key())
    assert second.entrant != first.entrant
    seated = {entrant["name"] for job in _open_jobs(opened) for entrant in job.payload["entrants"]}
    assert second.entrant in seated and first.entrant not in seated
    with opened.ladder.engine.connect() as connection:
        assert connection.execute(select(remote_keys.c.entrant)).scalars().all() == [second.entrant]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_remote_seat_nobody_connects_forfeits_with_the_startup_fault(opened: Made) -> None:
    key = opened.ladder.register_key(students(opened, "ann")["ann"], new_key())
    job = _open_jobs(opened)[0]
    host = RemoteHost(f"tcp://127.0.0.1:{_free_port()}", KeyPair(SERVER_PUBLIC, SERVER_SECRET))
    result = do_job(job, opened.ladder.fetch_version, sandbox=False, host=host)
    played_games = result.data["games"]
    assert len(played_games) == len(job.payload["games"])
    for game in played_games:
        seat = game["seats"].index(key.entrant)
        assert game["isolation"] == "remote" and game["forfeited"][seat]
        assert {"seat": seat, "cause": "startup-timeout"} in game["faults"]
        assert not any(fault["seat"] != seat for fault in game["faults"])
    opened.ladder.report(worker(opened), job.id, result)
    rows = opened.ladder.table(STAFF, Division.OPEN).rows
    assert rows[-1].version == key.entrant and rows[-1].games == len(played_games)


def test_a_match_with_remote_seats_is_only_for_the_host_the_students_were_told(opened: Made) -> None:
    opened.ladder.register_key(students(opened, "ann")["ann"], new_key())
    job = _open_jobs(opened)[0]
    with pytest.raises(NotTheHost, match="--listen"):
        do_job(job, opened.ladder.fetch_version, sandbox=False)
    other = KeyPair(*zmq.curve_keypair())
    with pytest.raises(NotTheHost, match="server_key"):
        do_job(job, opened.ladder.fetch_version, sandbox=False, host=RemoteHost("tcp://127.0.0.1:1", other))


def _migrations(connection: object) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def test_migration_0002_upgrades_a_ladder_made_before_it(opened: Made, tmp_path: Path) -> None:
    people = students(opened, "bob")
    opened.ladder.submit(people["bob"], bot_folder(tmp_path / "src", "bob", 1))
    pass_checks(opened)
    for _ in range(2):
        job = opened.ladder.claim(worker(opened), "w")
        assert job is not None
        opened.ladder.report(worker(opened), job.id, played(job, winner="heuristic"))
    before = opened.ladder.table(STAFF)
    url = opened.ladder.engine.url.render_as_string(hide_password=False)
    opened.ladder.close()
    engine = open_engine(url)
    with engine.begin() as connection:
        command.downgrade(_migrations(connection), "0001")
    with engine.connect() as connection:
        assert "remote_keys" not in inspect(connection).get_table_names()
        assert "division" not in {column["name"] for column in inspect(connection).get_columns("games")}
    engine.dispose()
    with open_ladder(opened.folder, opened.db_url) as again:
        assert again.table(STAFF) == before
        with again.engine.connect() as connection:
            assert set(connection.execute(select(games.c.division)).scalars()) == {Division.GRADED.value}
        key = again.register_key(again.authenticate(opened.ladder.invite(["ann"])["ann"]), new_key())
        assert again.remote_seat(STAFF, "ann").key == key
