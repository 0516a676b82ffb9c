"""The open division through the server: a student registers a CURVE public key (`referee submit --key`, the
API, the student page), another student can neither see nor replace it, hostile input is a clear 4xx; and on
loopback with real processes a worker started with --listen hosts a match whose remote seat a student plays with
`referee connect`, stored with isolation `remote` on the open table only."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from fastapi.testclient import TestClient
from processes import BOUND_S, LadderSite, eventually, free_port, get_json, make_ladder, referee, start
from served import Served, bearer
from sqlalchemy import select

from protocol.curve_keys import load_public
from tournaments.ladder import Division, init_ladder, open_ladder
from tournaments.ladder.schema import games, seats
from tournaments.server.app import create_app
from tournaments.server.edge import Settings


def open_table(connect: str, server_key: str) -> str:
    return f'\n[open]\nremote = true\nconnect = "{connect}"\nserver_key = "{server_key}"\n'


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[Served]:
    created = init_ladder(tmp_path / "ladder", "scout", 3, ["heuristic", "random"])
    path = created.folder / "ladder.toml"
    path.write_text(path.read_text() + open_table("tcp://127.0.0.1:5600", zmq.curve_keypair()[0].decode()))
    with open_ladder(created.folder) as ladder:
        students = ladder.invite(["ann", "bob"])
        with TestClient(create_app(ladder, Settings(scratch=tmp_path)), base_url="http://127.0.0.1") as client:
            yield Served(ladder, client, created.admin_token, created.worker_token, students)


def new_key() -> str:
    return zmq.curve_keypair()[0].decode()


def test_a_student_registers_sees_and_replaces_their_own_key(opened: Served) -> None:
    ann = bearer(opened.students["ann"])
    assert opened.client.get("/api/key", headers=ann).json()["key"] is None
    first = opened.client.put("/api/key", json={"public_key": new_key()}, headers=ann)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["open"] is True and body["connect"] == "tcp://127.0.0.1:5600"
    assert body["server_key"] == opened.ladder.file.open.server_key
    replaced = opened.client.put("/api/students/ann/key", json={"public_key": new_key()}, headers=ann).json()
    assert replaced["key"]["entrant"] != body["key"]["entrant"]
    assert opened.client.get("/api/students/ann/key", headers=ann).json() == replaced
    assert opened.client.get("/api/students/ann/key", headers=bearer(opened.admin)).json() == replaced
    page = opened.client.get("/students/ann", headers=ann)
    assert html.escape(replaced["key"]["public_key"]) in page.text and html.escape(body["server_key"]) in page.text


def test_another_student_can_neither_see_nor_replace_a_key(opened: Served) -> None:
    ann, bob = bearer(opened.students["ann"]), bearer(opened.students["bob"])
    key = new_key()
    assert opened.client.put("/api/key", json={"public_key": key}, headers=ann).status_code == 200
    for answer in (
        opened.client.get("/api/students/ann/key", headers=bob),
        opened.client.put("/api/students/ann/key", json={"public_key": new_key()}, headers=bob),
        opened.client.get("/students/ann", headers=bob),
        opened.client.put("/api/key", json={"public_key": new_key()}, headers=bearer(opened.worker)),
        opened.client.put("/api/students/ann/key", json={"public_key": new_key()}, headers=bearer(opened.admin)),
    ):
        assert answer.status_code == 403, answer.text
        assert key not in answer.text
    taken = opened.client.put("/api/key", json={"public_key": key}, headers=bob)
    assert (taken.status_code, taken.json()["error"]) == (400, "bad-input")
    assert "ann" not in taken.json()["message"].split()
    assert opened.client.get("/api/students/ann/key").status_code == 401
    assert opened.client.get("/api/key", headers=ann).json()["key"]["public_key"] == key
    assert opened.client.get("/api/key", headers=bob).json()["key"] is None
    assert key not in opened.client.get("/api/table?division=open", headers=bob).text


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"public_key": "not a key"}, 400),
        ({"public_key": "~" * 40}, 400),
        ({"public_key": "x" * 100_000}, 422),
        ({"public_key": 12345}, 422),
        ({"key": new_key()}, 422),
        ([new_key()], 422),
    ],
)
def test_hostile_key_input_is_a_clear_refusal(opened: Served, body: object, status: int) -> None:
    answer = opened.client.put("/api/key", json=body, headers=bearer(opened.students["ann"]))
    assert answer.status_code == status, answer.text
    assert opened.client.get("/api/key", headers=bearer(opened.students["ann"])).json()["key"] is None


def test_a_body_over_the_cap_is_refused_before_it_is_read(opened: Served) -> None:
    headers = {**bearer(opened.students["ann"]), "Content-Length": str(2**40), "Content-Type": "application/json"}
    answer = opened.client.put("/api/key", content=b"{}", headers=headers)
    assert answer.status_code == 413
    garbage = opened.client.put(
        "/api/key", content=b"\xff\x00{", headers={**bearer(opened.students["ann"]), "Content-Type": "application/json"}
    )
    assert garbage.status_code == 400, garbage.text
    assert opened.client.get("/api/key", headers=bearer(opened.students["ann"])).json()["key"] is None


def test_the_open_table_is_its_own_and_a_bad_division_is_refused(opened: Served) -> None:
    opened.client.put("/api/key", json={"public_key": new_key()}, headers=bearer(opened.students["ann"]))
    table = opened.client.get("/api/table", params={"division": "open"}, headers=bearer(opened.admin)).json()
    assert table["division"] == "open"
    assert {row["name"] for row in table["rows"]} == {"heuristic", "random", "ann"}
    assert "ann" not in {
        row["name"] for row in opened.client.get("/api/table", headers=bearer(opened.admin)).json()["rows"]
    }
    assert opened.client.get("/api/table", params={"division": "secret"}).status_code == 422
    assert opened.client.get("/open").status_code == 200


def test_a_ladder_without_the_open_division_refuses_keys(served: Served) -> None:
    answer = served.client.put("/api/key", json={"public_key": new_key()}, headers=bearer(served.students["ann"]))
    assert (answer.status_code, answer.json()["error"]) == (403, "forbidden")
    assert served.client.get("/api/table", params={"division": "open"}).status_code == 403


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LadderSite]:
    made = make_ladder(tmp_path, ("ann",))
    try:
        yield made
    finally:
        made.close()


def test_a_remote_bot_plays_the_open_division_from_referee_connect(site: LadderSite) -> None:
    root = site.root
    referee("keys", "new", "referee", "-o", "worker-keys", cwd=root)
    referee("keys", "new", "ann", "-o", "ann-keys", cwd=root)
    listen = f"tcp://127.0.0.1:{free_port()}"
    server_key = load_public(root / "worker-keys" / "referee.key").decode()
    ladder_file = site.folder / "ladder.toml"
    ladder_file.write_text(ladder_file.read_text() + open_table(listen, server_key))
    site.serve(jobs=0)

    registered = referee(
        "submit", "--key", "ann-keys/ann.key", "--server", site.url, "--token", site.students["ann"], cwd=root
    )
    assert f"referee connect {listen} --key ann-keys/ann.key_secret" in registered.stdout
    assert load_public(root / "ann-keys" / "ladder-server.key").decode() == server_key
    seat = get_json(f"{site.url}/api/key", site.students["ann"])
    entrant = seat["key"]["entrant"]

    student = start(
        "connect",
        listen,
        "--key",
        "ann-keys/ann.key_secret",
        "--server-key",
        "ann-keys/ladder-server.key",
        "--wait",
        str(BOUND_S),
        "--",
        "heuristic",
        cwd=root,
        log=root / "connect.log",
    )
    worker = start(
        "worker",
        "--server",
        site.url,
        "--token",
        site.worker,
        "--listen",
        listen,
        "--keys",
        "worker-keys",
        "--cache",
        str(root / "cache"),
        cwd=root,
        log=root / "worker.log",
    )
    site.workers += [student, worker]

    def played() -> bool:
        assert worker.process.poll() is None, worker.output()
        return student.process.poll() is not None

    eventually(played, "the remote bot's match")
    assert student.process.returncode == 0, student.output()
    assert "connected to the referee" in student.output()
    table = eventually(
        lambda: (answer := get_json(f"{site.url}/api/table?division=open", site.admin))["games"] and answer,
        "the open table's games",
    )
    assert {row["name"] for row in table["rows"]} == {"heuristic", "random", "ann"}
    assert get_json(f"{site.url}/api/table", site.admin)["games"] == 0
    with open_ladder(site.folder) as ladder, ladder.engine.connect() as connection:
        stored = connection.execute(select(games.c.isolation, games.c.division)).all()
        remote_seats = connection.execute(select(seats.c.faults).where(seats.c.entrant == entrant)).scalars().all()
    assert stored and {tuple(row) for row in stored} == {("remote", Division.OPEN.value)}
    assert remote_seats and all(faults == [] for faults in remote_seats), remote_seats
    print(json.dumps(table["rows"]))


def test_the_student_page_registers_a_key_with_its_csrf_token_only(opened: Served) -> None:
    form = opened.client.get("/login")
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert nonce is not None
    opened.client.post("/login", data={"token": opened.students["ann"], "csrf": nonce.group(1)})
    page = opened.client.get("/students/ann")
    csrf = re.search(r'id="register-key">\s*<input type="hidden" name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None, page.text
    key = new_key()
    forged = opened.client.post("/students/ann/key", data={"public_key": key, "csrf": "0" * 64})
    assert forged.status_code == 403
    assert opened.client.get("/students/bob").status_code == 403
    other = opened.client.post("/students/bob/key", data={"public_key": key, "csrf": csrf.group(1)})
    assert other.status_code == 403
    honest = opened.client.post(
        "/students/ann/key", data={"public_key": key, "csrf": csrf.group(1)}, follow_redirects=False
    )
    assert (honest.status_code, honest.headers["location"]) == (303, "/students/ann")
    assert html.escape(key) in opened.client.get("/students/ann").text
    assert opened.ladder.remote_seat(opened.ladder.authenticate(opened.students["bob"]), "bob").key is None


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        (["--keys", "k"], "go with --listen"),
        (["--listen", "tcp://127.0.0.1:5600"], "needs --keys"),
        (["--listen", "ipc:///tmp/x", "--keys", "k"], "tcp://HOST:PORT"),
        (["--listen", "tcp://127.0.0.1:5600", "--keys", "k", "-j", "2"], "one job at a time"),
    ],
)
def test_worker_listen_options_are_checked_before_it_starts(tmp_path: Path, options: list[str], complaint: str) -> None:
    (tmp_path / "k").mkdir()
    referee("keys", "new", "referee", "-o", "k", cwd=tmp_path)
    result = referee(
        "worker", "--server", "http://127.0.0.1:9", "--token", "t", *options, cwd=tmp_path, check=False, timeout=60
    )
    assert result.returncode == 2 and complaint in result.stderr, result.stderr


def test_submit_needs_a_folder_or_a_key(tmp_path: Path) -> None:
    result = referee("submit", "--server", "http://127.0.0.1:9", "--token", "t", cwd=tmp_path, check=False)
    assert result.returncode == 2 and "--key NAME.key" in result.stderr, result.stderr
