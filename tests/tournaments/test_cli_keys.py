"""`referee keys new`: CURVE key pairs in zmq.auth's files, never overwritten by accident."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq.auth
from click.testing import CliRunner

from protocol.curve_keys import KeyFileError, allow_list, load_pair, load_public
from tournaments.cli import main


def _new(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["keys", "new", *args])
    return result.exit_code, result.output


def test_a_pair_is_two_files_zmq_auth_reads(tmp_path: Path) -> None:
    code, output = _new("alice", "-o", str(tmp_path / "keys"))
    assert code == 0, output
    public, secret = zmq.auth.load_certificate(tmp_path / "keys" / "alice.key_secret")
    assert secret is not None and len(secret) == 40
    assert zmq.auth.load_certificate(tmp_path / "keys" / "alice.key") == (public, None)
    assert (tmp_path / "keys" / "alice.key_secret").stat().st_mode & 0o077 == 0
    assert load_pair(tmp_path / "keys" / "alice.key_secret").public == public


def test_existing_files_are_kept_unless_forced(tmp_path: Path) -> None:
    assert _new("bob", "-o", str(tmp_path))[0] == 0
    before = load_public(tmp_path / "bob.key")
    code, output = _new("bob", "-o", str(tmp_path))
    assert code == 1 and "already exist" in output and "--force" in output
    assert load_public(tmp_path / "bob.key") == before
    assert _new("bob", "-o", str(tmp_path), "--force")[0] == 0
    assert load_public(tmp_path / "bob.key") != before


@pytest.mark.parametrize("name", ["a/b", "", ".hidden", "x.key"])
def test_names_that_cannot_name_a_seat_are_refused(tmp_path: Path, name: str) -> None:
    code, output = _new(name, "-o", str(tmp_path))
    assert code != 0 and "cannot name a key" in output
    assert list(tmp_path.iterdir()) == []


def test_the_allow_list_names_each_key_by_its_file_and_leaves_the_referee_out(tmp_path: Path) -> None:
    for name in ("referee", "alice", "bob"):
        assert _new(name, "-o", str(tmp_path))[0] == 0
    allowed = allow_list(tmp_path)
    assert sorted(allowed.values()) == ["alice", "bob"]
    assert allowed[load_public(tmp_path / "alice.key")] == "alice"


def test_a_file_that_is_no_key_says_so(tmp_path: Path) -> None:
    (tmp_path / "junk.key").write_text("hello\n")
    with pytest.raises(KeyFileError, match="not a CURVE key file"):
        allow_list(tmp_path)
    with pytest.raises(KeyFileError, match="no key file"):
        load_pair(tmp_path / "missing.key_secret")
    _new("carol", "-o", str(tmp_path / "c"))
    with pytest.raises(KeyFileError, match="holds no secret key"):
        load_pair(tmp_path / "c" / "carol.key")
