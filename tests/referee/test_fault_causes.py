"""Faults as data: every fault has a cause (with its kind and meaning) and the facts its words are made of; the
words are derived from them, and what a fault means (a late answer, running out of memory) is decided from them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from referee_helpers import TIMEOUT_LIMITS, fixture_bot, match_spec, substitute

from referee import replay
from referee.match import run_match
from referee.records import (
    Fault,
    FaultCause,
    FaultFacts,
    FaultKind,
    MemoryHit,
    Stage,
    crash_cause,
    describe,
)
from tournaments.cli import main

pytestmark = pytest.mark.timeout(120)

OUTPUT = ("Traceback (most recent call last):", "MemoryError")

WORDS: list[tuple[FaultCause, FaultFacts, str]] = [
    (FaultCause.STARTUP_TIMEOUT, FaultFacts(startup_s=10.0), "no hello within the startup limit of 10.0 s"),
    (FaultCause.DECISION_TIMEOUT, FaultFacts(request_id=3, allowed_ms=1000), "no answer to request 3 within 1000 ms"),
    (
        FaultCause.DECISION_TIMEOUT,
        FaultFacts(request_id=7, allowed_ms=1000, other_replies=1, other_id=6),
        "no answer to request 7 within 1000 ms; it replied once with the stale id 6 instead (ids name requests: "
        "answer with 7)",
    ),
    (
        FaultCause.LATE_ANSWER,
        FaultFacts(request_id=9, allowed_ms=1000, answered_ms=1234.4, other_replies=2, other_id=10),
        "request 9 answered after 1,234 ms of a 1,000 ms limit; it replied 2 times, the last with the wrong id 10 "
        "instead (ids name requests: answer with 9)",
    ),
    (
        FaultCause.TIMEOUT_LIMIT,
        FaultFacts(count=2, not_running=True),
        "not running: stopped after 2 timeouts in this match (max_timeouts = 2)",
    ),
    (
        FaultCause.START_FAILED,
        FaultFacts(note="cannot start 'nope': no such executable file"),
        "cannot start 'nope': no such executable file",
    ),
    (
        FaultCause.EXITED,
        FaultFacts(exit_status=1, stage=Stage.GAME, game=3, output=("boom",)),
        "the bot exited with status 1 during game 3; its last output:\n| boom",
    ),
    (
        FaultCause.EXITED,
        FaultFacts(exit_status=0, stage=Stage.BETWEEN_GAMES),
        "the bot exited with status 0 between games",
    ),
    (FaultCause.EXITED, FaultFacts(stage=Stage.GAME, game=0), "the bot exited during game 0"),
    (
        FaultCause.KILLED_BY_SIGNAL,
        FaultFacts(signal=11, stage=Stage.HANDSHAKE),
        "the bot was killed by SIGSEGV (signal 11) during the handshake",
    ),
    (
        FaultCause.MEMORY_LIMIT,
        FaultFacts(signal=9, memory=MemoryHit.KILLED, memory_mb=512, stage=Stage.GAME, game=0),
        "the bot was killed by SIGKILL (signal 9): it hit the memory limit of 512 MiB during game 0",
    ),
    (
        FaultCause.MEMORY_LIMIT,
        FaultFacts(
            exit_status=1, memory=MemoryHit.ALLOCATION_FAILED, memory_mb=512, stage=Stage.GAME, game=2, output=OUTPUT
        ),
        "the bot exited with status 1 during game 2: it hit the memory limit of 512 MiB (an allocation failed); its "
        "last output:\n| Traceback (most recent call last):\n| MemoryError",
    ),
    (
        FaultCause.HELLO_REFUSED,
        FaultFacts(startup_s=10.0, note="unknown token"),
        "hello refused (unknown token); no hello within the startup limit of 10.0 s",
    ),
    (
        FaultCause.HELLO_REFUSED,
        FaultFacts(exit_status=1, stage=Stage.HANDSHAKE, note="unknown token", not_running=True),
        "not running: hello refused (unknown token); the bot exited with status 1 during the handshake",
    ),
    (
        FaultCause.STOLEN_TOKEN,
        FaultFacts(victim="ann"),
        "presented another bot's token (that of ann) in a hello",
    ),
    (FaultCause.PROTOCOL_VIOLATION, FaultFacts(note="not msgpack"), "not msgpack"),
    (FaultCause.MULTIPART_MESSAGE, FaultFacts(count=2), "a message is one frame, not 2"),
    (FaultCause.HELLO_AFTER_HANDSHAKE, FaultFacts(), "hello after the handshake"),
    (FaultCause.STALE_FLOOD, FaultFacts(count=65), "a flood of 65 stale or unsolicited messages"),
    (
        FaultCause.CONNECTION_FLOOD,
        FaultFacts(count=17, most=16),
        "held 17 connections to the referee at once (at most 16): a flood of connections",
    ),
    (FaultCause.ILLEGAL_ACTION, FaultFacts(request_id=4, note="not legal"), "request 4: not legal"),
    (
        FaultCause.NO_ANSWER,
        FaultFacts(request_id=5, allowed_ms=1000, waited_ms=1000),
        "no answer to request 5 within 1000 ms, nor in 1000 ms more: the bot hangs (or thinks far past its time)",
    ),
    (
        FaultCause.CONNECTION_LOST,
        FaultFacts(grace_s=10.0, stage=Stage.GAME, game=1),
        "its connection closed during game 1 and did not come back within the reconnect grace of 10 s",
    ),
]
"""Each cause with facts, and the words the referee wrote for such a fault before causes were data."""


def test_every_cause_has_a_kind_and_a_meaning() -> None:
    for cause in FaultCause:
        assert isinstance(cause.kind, FaultKind) and cause.meaning.strip()
    assert FaultCause.STARTUP_TIMEOUT.kind is FaultKind.TIMEOUT
    assert FaultCause.MEMORY_LIMIT.kind is FaultKind.CRASH
    assert FaultCause.STOLEN_TOKEN.kind is FaultKind.PROTOCOL_ERROR
    assert len({cause.meaning for cause in FaultCause}) == len(FaultCause)


def test_the_words_cover_every_cause() -> None:
    assert {cause for cause, _, _ in WORDS} == set(FaultCause)


@pytest.mark.parametrize(
    ("cause", "facts", "words"), WORDS, ids=[f"{c.value}-{n}" for n, (c, _, _) in enumerate(WORDS)]
)
def test_a_faults_words_are_derived_from_its_cause_and_facts(cause: FaultCause, facts: FaultFacts, words: str) -> None:
    fault = Fault(0, "bot", cause, facts)
    assert fault.detail == describe(cause, facts) == words
    assert fault.kind is cause.kind


@pytest.mark.parametrize(
    ("cause", "facts", "words"), WORDS, ids=[f"{c.value}-{n}" for n, (c, _, _) in enumerate(WORDS)]
)
def test_facts_survive_json(cause: FaultCause, facts: FaultFacts, words: str) -> None:
    stored = json.loads(json.dumps(facts.to_json()))
    assert FaultFacts.from_json(stored) == facts
    assert describe(cause, FaultFacts.from_json(stored)) == words


def test_facts_of_a_later_version_are_read_without_its_new_keys() -> None:
    assert FaultFacts.from_json({"request_id": 3, "allowed_ms": 10, "invented_later": 1}) == FaultFacts(3, 10)
    assert FaultFacts().to_json() == {}


def test_a_crash_cause_comes_from_how_the_process_ended() -> None:
    assert crash_cause(FaultFacts(exit_status=1)) is FaultCause.EXITED
    assert crash_cause(FaultFacts()) is FaultCause.EXITED
    assert crash_cause(FaultFacts(signal=11)) is FaultCause.KILLED_BY_SIGNAL
    assert crash_cause(FaultFacts(signal=9, memory=MemoryHit.KILLED)) is FaultCause.MEMORY_LIMIT
    assert crash_cause(FaultFacts(grace_s=10.0, stage=Stage.GAME)) is FaultCause.CONNECTION_LOST
    assert crash_cause(FaultFacts(exit_status=1, memory=MemoryHit.ALLOCATION_FAILED)) is FaultCause.MEMORY_LIMIT


def test_a_late_answer_turns_its_timeout_into_a_late_answer_with_how_late() -> None:
    spec = match_spec("scout", [fixture_bot("late_once"), "random"], limits=substitute(TIMEOUT_LIMITS), sandbox=False)
    (game,) = run_match(spec).games
    (fault,) = game.faults
    assert fault.cause is FaultCause.LATE_ANSWER and fault.kind is FaultKind.TIMEOUT
    facts = fault.facts
    assert facts.request_id is not None and facts.allowed_ms is not None and facts.answered_ms is not None
    assert facts.answered_ms > facts.allowed_ms
    assert fault.detail.startswith(f"request {facts.request_id} answered after ")


def test_a_slow_bot_and_a_hang_read_apart_when_the_seat_forfeits() -> None:
    """Under the forfeit policy a timed-out bot is never asked again in its game, which ended before its late
    answer came: a bot 150 ms late and one that never answers both read "no answer to request N within 1000
    ms". The end of the game now waits a moment for the answer: late, or none at all."""
    slow = match_spec("scout", [fixture_bot("late_once"), "random"], limits=TIMEOUT_LIMITS, sandbox=False)
    (late,) = run_match(slow).games[0].faults
    assert late.cause is FaultCause.LATE_ANSWER and late.facts.answered_ms is not None
    assert late.facts.allowed_ms is not None and late.facts.answered_ms > late.facts.allowed_ms
    hung = match_spec("scout", [fixture_bot("never_answers"), "random"], limits=TIMEOUT_LIMITS, sandbox=False)
    (silent,) = run_match(hung).games[0].faults
    assert silent.cause is FaultCause.NO_ANSWER and silent.kind is FaultKind.TIMEOUT
    assert silent.facts.waited_ms == 1000 and "the bot hangs" in silent.detail


def test_a_crash_records_how_the_bot_ended_and_its_last_output() -> None:
    spec = match_spec("scout", [fixture_bot("many_lines_then_crash"), "random"], sandbox=False)
    (game,) = run_match(spec).games
    (fault,) = game.faults
    assert fault.cause is FaultCause.EXITED
    assert (fault.facts.exit_status, fault.facts.stage, fault.facts.game) == (3, Stage.GAME, game.index)
    assert fault.facts.output and fault.facts.output[-1] == "line 30"


def test_running_out_of_memory_is_the_memory_limit_cause() -> None:
    limits = substitute(TIMEOUT_LIMITS)
    spec = match_spec("scout", [fixture_bot("memory_hog"), "random"], limits=limits, sandbox=False)
    (game,) = run_match(spec).games
    (fault,) = game.faults
    assert fault.cause is FaultCause.MEMORY_LIMIT and fault.kind is FaultKind.CRASH
    assert fault.facts.memory in (MemoryHit.ALLOCATION_FAILED, MemoryHit.KILLED)
    assert fault.facts.memory_mb == limits.memory_mb
    assert f"it hit the memory limit of {limits.memory_mb} MiB" in fault.detail


def test_a_replay_records_each_faults_cause_and_facts_and_one_without_them_still_verifies(tmp_path: Path) -> None:
    spec = match_spec("scout", [fixture_bot("illegal_action"), "random"], limits=substitute(budget=2), sandbox=False)
    spec = dataclasses.replace(spec, replay_dir=str(tmp_path))
    (game,) = run_match(spec).games
    recorded = replay.load(game.replay_path or "")
    assert [(f["cause"], FaultFacts.from_json(f["facts"]), f["detail"]) for f in recorded["faults"]] == [
        (fault.cause.value, fault.facts, fault.detail) for fault in game.faults
    ]
    assert {fault.cause for fault in game.faults} == {FaultCause.ILLEGAL_ACTION}
    older = tmp_path / "older.json"
    faults = [{key: value for key, value in f.items() if key not in ("cause", "facts")} for f in recorded["faults"]]
    older.write_text(json.dumps({**recorded, "faults": faults}))
    verified = CliRunner().invoke(main, ["replay", "verify", str(older)])
    assert verified.exit_code == 0 and "re-simulates exactly" in verified.output, verified.output
