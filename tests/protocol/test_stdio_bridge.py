"""The stdio transport: the bridge's conversions, and bots without ZeroMQ playing through it (the shell bot in
both games; a bot that prints non-JSON on stdout; one that crashes)."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import pytest

from protocol import codec, limits
from protocol.stdio_bridge import MAX_LINE_BYTES, LineRejected, LineSplitter, frame_of_line, json_line
from referee.botspec import resolve_bot
from referee.deals import DealKey
from referee.match import run_match
from referee.records import FaultKind, Limits, MatchSpec
from referee.seating import first_games

ROOT = Path(__file__).resolve().parents[2]
SHELL_BOT = ROOT / "bots" / "shell" / "random_bot.sh"
FIXTURES = ROOT / "tests" / "fixtures" / "bots"
LIMITS = Limits(move_time_ms=5000, startup_time_s=20.0, log_cap_bytes=64 * 1024)


def _match(game: str, bots: list[str], tmp_path: Path, games: int = 2) -> MatchSpec:
    specs = tuple(resolve_bot(bot, game, named_by_hello=True) for bot in bots)
    return MatchSpec(
        match_id=f"stdio-{game}",
        game=game,
        bots=specs,
        games=first_games(len(specs), games, DealKey.from_seed(3)),
        limits=LIMITS,
        log_dir=str(tmp_path),
    )


def test_a_referee_message_is_one_line_of_compact_json() -> None:
    message = codec.game_start("scout", 1, 3, {"first_player": 0}, "m\n1", 0)
    line = json_line(msgspec.msgpack.decode(codec.encode(message)))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert msgspec.json.decode(line) == message


def test_a_hello_without_a_token_gets_the_bridges() -> None:
    frame = frame_of_line(b'{"type":"hello","protocol":1,"name":"x"}', "secret")
    assert codec.decode_bot_message(frame) == codec.Hello(1, "secret", "x", None)
    own = frame_of_line(b'{"type":"hello","protocol":1,"name":"x","token":"mine"}', "secret")
    assert codec.decode_bot_message(own).token == "mine"


def test_an_action_line_becomes_the_same_msgpack_message() -> None:
    frame = frame_of_line(b'{"type":"action","id":7,"action":{"kind":"scout","flip":true,"insert":0}}', "t")
    assert codec.decode_bot_message(frame) == codec.ActionReply(7, {"kind": "scout", "flip": True, "insert": 0})


@pytest.mark.parametrize(
    "line, reason", [(b"thinking...", "not JSON"), (b'{"id": 99999999999999999999999}', "msgpack")]
)
def test_a_line_that_cannot_be_a_message_is_rejected(line: bytes, reason: str) -> None:
    with pytest.raises(LineRejected, match=reason):
        frame_of_line(line, "t")


def test_json_that_is_no_message_is_still_sent_for_the_referee_to_judge() -> None:
    with pytest.raises(codec.ProtocolViolation):
        codec.decode_bot_message(frame_of_line(b"[1, 2]", "t"))


def test_lines_are_cut_at_newlines_across_chunks() -> None:
    splitter = LineSplitter()
    assert list(splitter.feed(b'{"a":1}\n{"b"')) == [(b'{"a":1}', True)]
    assert list(splitter.feed(b":2}\n\n")) == [(b'{"b":2}', True)]


def test_a_line_past_the_limit_goes_out_raw_once_and_its_rest_is_dropped() -> None:
    splitter = LineSplitter()
    long = b"x" * (MAX_LINE_BYTES + 1)
    assert list(splitter.feed(long)) == [(long, False)]
    assert list(splitter.feed(b"more of it\n{}\n")) == [(b"{}", True)]
    assert MAX_LINE_BYTES > limits.MAX_MESSAGE_BYTES


@pytest.mark.parametrize("game, players", [("scout", 2), ("scout", 3), ("scauver", 2), ("scauver", 3)])
def test_the_shell_bot_plays_both_games_through_the_bridge(game: str, players: int, tmp_path: Path) -> None:
    record = run_match(_match(game, [f"stdio:{SHELL_BOT}", *["random"] * (players - 1)], tmp_path))
    assert record.bots[0].name == "sh-random"
    assert record.bots[0].handshake is not None and record.bots[0].handshake.version == "1"
    for played in record.games:
        assert played.faults == ()
        assert played.timings[played.seats.index("sh-random")].decisions > 0


def test_a_line_that_is_not_json_is_skipped_and_noted_in_the_log(tmp_path: Path) -> None:
    record = run_match(_match("scout", [f"stdio:{sys.executable} {FIXTURES / 'stdio_chatty.py'}", "random"], tmp_path))
    assert all(game.faults == () for game in record.games)
    log = Path(str(record.bots[0].log_path)).read_text()
    assert "did not send a line of the bot's stdout, not JSON" in log and "thinking about request" in log


def test_a_crash_behind_the_bridge_is_a_crash_with_the_bots_output(tmp_path: Path) -> None:
    (game,) = run_match(_match("scout", [f"stdio:{FIXTURES / 'crash_at_start.py'}", "random"], tmp_path, 1)).games
    (fault,) = game.faults
    assert fault.kind is FaultKind.CRASH
    assert "exited with status 1" in fault.detail and "crashing at start, on purpose" in fault.detail
