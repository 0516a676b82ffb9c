from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy
from ladder_helpers import Made

from tournaments.ladder import (
    Forbidden,
    LadderFileError,
    Principal,
    Role,
    Unauthorised,
    init_ladder,
    open_ladder,
    schema,
)


def test_init_prints_tokens_that_authenticate_as_staff_and_worker(made: Made) -> None:
    assert made.ladder.authenticate(made.created.admin_token) == Principal(Role.STAFF, "admin")
    assert made.ladder.authenticate(made.created.worker_token).role is Role.WORKER


def test_a_second_init_in_the_same_folder_is_refused(made: Made) -> None:
    with pytest.raises(LadderFileError, match="holds a ladder already"):
        init_ladder(made.folder, "scout", 3, ["heuristic"])


def test_an_unknown_game_or_player_count_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    with pytest.raises(LadderFileError, match="game"):
        init_ladder(tmp_path / "a", "chess", 3)
    with pytest.raises(LadderFileError, match="players"):
        init_ladder(tmp_path / "b", "scout", 9)
    assert not (tmp_path / "a" / "ladder.toml").exists()


def test_an_invited_student_authenticates_and_reinviting_revokes_the_old_token(made: Made) -> None:
    first = made.ladder.invite(["ann", "bob"])
    assert made.ladder.authenticate(first["ann"]) == Principal(Role.STUDENT, "ann")
    second = made.ladder.invite(["ann"])
    with pytest.raises(Unauthorised):
        made.ladder.authenticate(first["ann"])
    assert made.ladder.authenticate(second["ann"]).name == "ann"
    assert made.ladder.authenticate(first["bob"]).name == "bob"


@pytest.mark.parametrize("token", ["", "nonsense", "crl_abc_def", "crl__x"])
def test_a_malformed_or_unknown_token_is_unauthorised(made: Made, token: str) -> None:
    with pytest.raises(Unauthorised):
        made.ladder.authenticate(token)


def test_a_token_with_a_known_id_but_a_wrong_secret_is_unauthorised(made: Made) -> None:
    token = made.ladder.invite(["ann"])["ann"]
    with pytest.raises(Unauthorised):
        made.ladder.authenticate(token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"))


def test_a_roster_invites_its_names_once_each(made: Made, tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("name,email\nann,a@x\nbob,b@x\nann,a@x\n")
    assert sorted(made.ladder.invite(["cid"], roster)) == ["ann", "bob", "cid"]


def test_only_staff_invite(made: Made) -> None:
    with pytest.raises(Forbidden):
        made.ladder.invite(["eve"], who=Principal(Role.STUDENT, "ann"))


def test_reopening_the_folder_keeps_its_students(made: Made) -> None:
    token = made.ladder.invite(["ann"])["ann"]
    with open_ladder(made.folder, made.db_url) as again:
        assert again.authenticate(token).name == "ann"


def test_a_folder_without_a_ladder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LadderFileError, match="holds no ladder"):
        open_ladder(tmp_path)


def test_a_ladder_made_on_postgresql_is_not_opened_as_an_empty_sqlite_file(made: Made) -> None:
    if made.db_url is None:
        pytest.skip("a SQLite ladder")
    with pytest.raises(LadderFileError, match="--db URL"):
        open_ladder(made.folder)
    assert not (made.folder / "ladder.sqlite").exists()


def test_the_database_keeps_only_argon2id_hashes_of_the_tokens(made: Made) -> None:
    issued = [made.created.admin_token, made.created.worker_token, *made.ladder.invite(["ann", "bob"]).values()]
    stored: list[str] = []
    with made.ladder.engine.connect() as connection:
        for table in schema.metadata.sorted_tables:
            for row in connection.execute(sqlalchemy.select(table)):
                stored += [str(value) for value in row]
        hashes = connection.execute(sqlalchemy.select(schema.tokens.c.hash)).scalars().all()
    secrets = [token.split("_", 2)[2] for token in issued]
    assert all(len(secret) >= 24 for secret in secrets)
    assert not [secret for secret in secrets if any(secret in value for value in stored)]
    assert len(hashes) == len(issued) and all(value.startswith("$argon2id$") for value in hashes)
