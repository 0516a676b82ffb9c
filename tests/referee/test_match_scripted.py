"""The match loop on a scripted table (tests/referee/scripted.py): the referee's clocks, stale and late replies,
illegal actions, crashes, simultaneous decisions, the startup limit and freezing, each to the millisecond of the
table's clock and with no process started.

Durations are multiples of 1/8 s, which the clock's floats hold exactly, so every figure below is exact. SCOUT
for two: the first decision of a game is simultaneous (both seats orient their hands), then the seats alternate,
a seat that scouts moving again at once.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from referee_helpers import distinct_deals
from scripted import FREEZER, Answer, Asked, Exit, Script, ScriptedBot, ScriptedTable, Send, Step

from protocol import limits
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import FaultCause, FaultKind, FaultPolicy, GameRecord, Limits, MatchRecord, MatchSpec

CLOCKS = Limits(move_time_ms=1000, time_bank_ms=500, startup_time_s=4.0, log_cap_bytes=64 * 1024)
"""1 s a decision, a bank of 0.5 s a game: a decision may take 1.5 s while the bank is full."""


def on_request(number: int, *steps: Step) -> Script:
    """A script that takes `steps` for the process's request `number` and answers every other one at once."""

    def script(asked: Asked) -> Sequence[Step]:
        return steps if asked.number == number else [Answer()]

    return script


def play(table: ScriptedTable, spec: MatchSpec | None = None) -> MatchRecord:
    return run_match(spec or table.spec("scout", limits=CLOCKS), transport=table.transport(), sandbox_probe=table.probe)


def seat_of(game: GameRecord, bot: str) -> int:
    return game.seats.index(bot)


def banks(table: ScriptedTable, bot: str) -> list[int]:
    (process,) = table.started(bot)
    return [request["bank_left_ms"] for request in process.requests_received()]


# The clocks.


def test_an_overrun_is_drawn_from_the_bank_and_the_next_requests_say_so() -> None:
    table = ScriptedTable([ScriptedBot("slow", on_request(2, Answer(after_ms=1250))), ScriptedBot("quick")])
    (game,) = play(table).games

    assert not game.faults
    assert banks(table, "slow")[:3] == [500, 500, 250]
    assert set(banks(table, "slow")[2:]) == {250}
    assert set(banks(table, "quick")) == {500}
    assert game.timings[seat_of(game, "slow")].max_ms == 1250
    assert game.timings[seat_of(game, "quick")].max_ms == 0


def test_an_answer_at_the_deadline_counts_and_empties_the_bank() -> None:
    """1.5 s is the whole of move time and bank: the answer counts, and the next overrun, of 1/8 s, times out."""
    script = {2: [Answer(after_ms=1500)], 3: [Answer(after_ms=1125)]}
    table = ScriptedTable([ScriptedBot("slow", lambda asked: script.get(asked.number, [Answer()])), ScriptedBot("b")])
    (game,) = play(table).games

    assert banks(table, "slow")[:3] == [500, 500, 0]
    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "slow"), FaultKind.TIMEOUT)
    assert "answered after 1,125 ms of a 1,000 ms limit" in fault.detail
    assert game.forfeited[seat_of(game, "slow")] and game.ranks[seat_of(game, "slow")] == 2


def test_a_silent_bot_times_out_after_its_move_time_and_bank_and_the_game_goes_on() -> None:
    table = ScriptedTable([ScriptedBot("silent", on_request(3)), ScriptedBot("quick")])
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "silent"), FaultKind.TIMEOUT)
    assert "within 1500 ms" in fault.detail
    (silent,) = table.started("silent")
    (quick,) = table.started("quick")
    asked_at = silent.request_times()[2]
    assert min(at for at in quick.request_times() if at > asked_at) == asked_at + 1.5
    assert len(silent.requests_received()) == 3, "a forfeited seat is not asked again"
    assert game.timings[seat_of(game, "quick")].decisions == len(quick.requests_received())


def test_a_timeout_empties_the_bank_for_the_rest_of_the_game() -> None:
    """Under the substitute policy the seat is asked again after its timeout, with no bank left."""
    table = ScriptedTable([ScriptedBot("silent", on_request(2)), ScriptedBot("quick")])
    policy = Limits(move_time_ms=1000, time_bank_ms=500, fault_policy=FaultPolicy.SUBSTITUTE, fault_budget=3)
    (game,) = play(table, table.spec("scout", limits=policy)).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "silent"), FaultKind.TIMEOUT)
    assert banks(table, "silent")[:3] == [500, 500, 0]
    assert set(banks(table, "silent")[2:]) == {0}


def test_a_late_answer_in_the_same_game_says_how_late_it_was() -> None:
    table = ScriptedTable(
        [ScriptedBot("late", on_request(3, Answer(after_ms=1750))), ScriptedBot("steady", lambda asked: [Answer(250)])]
    )
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "late"), FaultKind.TIMEOUT)
    assert "answered after 1,750 ms of a 1,500 ms limit" in fault.detail


def test_a_bot_is_stopped_at_the_matchs_max_timeouts() -> None:
    """A bot that never answers times out once a game (it forfeits) and is stopped at its second timeout: its
    third game is played without it, and it is not started again."""
    table = ScriptedTable([ScriptedBot("silent", lambda asked: []), ScriptedBot("quick")])
    clocks = Limits(move_time_ms=1000, time_bank_ms=0, startup_time_s=4.0, max_timeouts=2)
    record = play(table, distinct_deals(table.spec("scout", games=3, limits=clocks)))

    kinds = [[(fault.seat, fault.kind) for fault in game.faults] for game in record.games]
    assert kinds == [[(seat_of(game, "silent"), FaultKind.TIMEOUT)] for game in record.games]
    assert "not running" in record.games[2].faults[0].detail
    assert len(table.started("silent")) == 1


# Replies that answer nothing.


def test_stale_replies_are_ignored() -> None:
    """A reply naming an earlier request, with an action that would be illegal now, changes nothing."""

    def script(asked: Asked) -> Sequence[Step]:
        stale = Answer(action={"kind": "nonsense"}, id=asked.id - 1)
        return [stale, stale, Answer(after_ms=125)] if asked.number == 2 else [Answer()]

    table = ScriptedTable([ScriptedBot("stale", script), ScriptedBot("quick")])
    (game,) = play(table).games

    assert not game.faults
    assert game.timings[seat_of(game, "stale")].max_ms == 125


def test_stale_replies_are_counted_in_the_timeout_they_did_not_prevent() -> None:
    def script(asked: Asked) -> Sequence[Step]:
        return [Answer(id=asked.id - 1), Answer(id=asked.id - 2)] if asked.number == 3 else [Answer()]

    table = ScriptedTable([ScriptedBot("stale", script), ScriptedBot("quick")])
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "stale"), FaultKind.TIMEOUT)
    assert "2 times, the last with the stale id" in fault.detail


def test_a_flood_of_stale_replies_is_a_protocol_error() -> None:
    flood = [Answer(id=0)] * (limits.DEFAULT_STALE_REPLY_LIMIT + 1)
    table = ScriptedTable([ScriptedBot("flood", on_request(2, *flood)), ScriptedBot("quick")])
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "flood"), FaultKind.PROTOCOL_ERROR)
    assert f"a flood of {limits.DEFAULT_STALE_REPLY_LIMIT + 1} stale" in fault.detail


def test_a_frame_that_is_not_msgpack_is_a_protocol_error_of_its_seat() -> None:
    table = ScriptedTable([ScriptedBot("quick"), ScriptedBot("garbled", on_request(2, Send(0, b"\xc1")))])
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "garbled"), FaultKind.PROTOCOL_ERROR)


# Illegal actions and crashes.


def test_an_illegal_action_is_the_fault_of_the_seat_that_sent_it_in_every_seating() -> None:
    table = ScriptedTable([ScriptedBot("quick"), ScriptedBot("cheat", on_request(3, Answer(action={"kind": "x"})))])
    record = play(table, table.spec("scout", games=2, limits=CLOCKS))

    assert [seat_of(game, "cheat") for game in record.games] == [1, 0]
    for game in record.games:
        cheat = seat_of(game, "cheat")
        (fault,) = game.faults
        assert (fault.seat, fault.kind, fault.sent) == (cheat, FaultKind.ILLEGAL_ACTION, '{"kind":"x"}')
        assert game.forfeited[cheat] and not game.forfeited[1 - cheat] and game.ranks[cheat] == 2


def test_under_substitute_an_illegal_action_is_played_by_the_fallback_until_the_budget() -> None:
    table = ScriptedTable([ScriptedBot("cheat", lambda asked: [Answer(action={"kind": "x"})]), ScriptedBot("b")])
    policy = Limits(move_time_ms=1000, time_bank_ms=500, fault_policy=FaultPolicy.SUBSTITUTE, fault_budget=3)
    (game,) = play(table, table.spec("scout", limits=policy)).games

    cheat = seat_of(game, "cheat")
    assert [(fault.seat, fault.kind) for fault in game.faults] == [(cheat, FaultKind.ILLEGAL_ACTION)] * 3
    assert len(table.started("cheat")[0].requests_received()) == 3
    assert game.forfeited[cheat] and game.ranks[cheat] == 2


def test_a_crash_mid_game_is_its_seats_fault_with_its_last_output_and_the_bot_is_restarted() -> None:
    crash = Exit(after_ms=250, status=3, output="Traceback (most recent call last):\nValueError: boom\n")

    def script(asked: Asked) -> Sequence[Step]:
        return [crash] if (asked.start, asked.number) == (1, 4) else [Answer()]

    table = ScriptedTable([ScriptedBot("crasher", script), ScriptedBot("quick")])
    record = play(table, distinct_deals(table.spec("scout", games=2, limits=CLOCKS)))

    first, second = record.games
    (fault,) = first.faults
    assert (fault.seat, fault.kind) == (seat_of(first, "crasher"), FaultKind.CRASH)
    assert "exited with status 3" in fault.detail and "| ValueError: boom" in fault.detail
    assert first.forfeited[seat_of(first, "crasher")]
    assert len(table.started("crasher")) == 2 and len(table.started("quick")) == 1
    assert not second.faults, "the restarted bot plays the next game"


# Simultaneous decisions.


def test_in_a_simultaneous_decision_each_seat_has_its_own_clock() -> None:
    table = ScriptedTable(
        [
            ScriptedBot("slow", on_request(1, Answer(after_ms=1250))),
            ScriptedBot("quick", on_request(1, Answer(after_ms=250))),
        ]
    )
    (game,) = play(table).games

    (slow,), (quick,) = table.started("slow"), table.started("quick")
    assert slow.request_times()[0] == quick.request_times()[0], "both seats are asked before either answers"
    assert not game.faults
    assert (banks(table, "slow")[1], banks(table, "quick")[1]) == (250, 500)
    assert game.timings[seat_of(game, "slow")].max_ms == 1250
    assert game.timings[seat_of(game, "quick")].max_ms == 250


def test_a_seat_that_times_out_in_a_simultaneous_decision_leaves_the_others_answer_standing() -> None:
    table = ScriptedTable([ScriptedBot("silent", on_request(1)), ScriptedBot("quick", on_request(1, Answer(250)))])
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "silent"), FaultKind.TIMEOUT)
    (quick,) = table.started("quick")
    first, second = quick.request_times()[:2]
    assert second == first + 1.5, "the next decision waits for the silent seat's clock"
    assert game.timings[seat_of(game, "quick")].decisions == len(quick.requests_received())


def test_with_bots_frozen_a_simultaneous_decision_thaws_one_seat_at_a_time_each_on_its_own_clock() -> None:
    """Each seat of the orientation decision is asked once the seat before it has answered, its clock running
    from its own request; the startup, the game and the bye never have two bots awake together."""
    table = ScriptedTable(
        [
            ScriptedBot("slow", on_request(1, Answer(after_ms=1250))),
            ScriptedBot("quick", on_request(1, Answer(after_ms=250))),
        ],
        probe=FREEZER,
    )
    (game,) = play(table).games

    (slow,), (quick,) = table.started("slow"), table.started("quick")
    first, second = sorted([(slow.request_times()[0], "slow"), (quick.request_times()[0], "quick")])
    took = {"slow": 1.25, "quick": 0.25}
    assert second[0] == first[0] + took[first[1]], "the second seat is asked once the first has answered"
    assert not game.faults
    assert (banks(table, "slow")[1], banks(table, "quick")[1]) == (250, 500)
    assert game.timings[seat_of(game, "slow")].max_ms == 1250
    assert game.timings[seat_of(game, "quick")].max_ms == 250
    assert not table.together, table.together


def test_without_freezing_bots_start_together_and_the_table_says_so() -> None:
    """The check above can fail: unfrozen bots (no sandbox) start and decide together."""
    table = ScriptedTable([ScriptedBot("a"), ScriptedBot("b")])
    play(table)
    assert ("a", "b") in table.together


# The handshake and freezing.


def test_a_bot_without_hello_is_down_after_the_startup_limit_for_every_game() -> None:
    table = ScriptedTable([ScriptedBot("mute", hello_after_ms=None), ScriptedBot("quick")])
    record = play(table, table.spec("scout", games=2, limits=CLOCKS))

    for game in record.games:
        (fault,) = game.faults
        assert (fault.seat, fault.kind) == (seat_of(game, "mute"), FaultKind.TIMEOUT)
        assert "not running" in fault.detail
    (quick, _) = table.started("quick")
    assert quick.received_at[quick.received.index(next(m for m in quick.received if m["type"] == "game_start"))] == (
        1024.0 + CLOCKS.startup_time_s
    )


def test_a_hello_after_the_startup_limit_is_too_late() -> None:
    table = ScriptedTable([ScriptedBot("sleepy", hello_after_ms=4125), ScriptedBot("quick")])
    (game,) = play(table).games

    (fault,) = game.faults
    assert (fault.seat, fault.kind) == (seat_of(game, "sleepy"), FaultKind.TIMEOUT)


def test_frozen_bots_are_thawed_for_each_request_except_a_bot_on_move_again() -> None:
    """Every request reaches a thawed bot (the scripted table checks it), and a bot thaws once for each request
    except where it alone is on move right after its own answer closed the decision before, and once more for its
    bye. Every answer takes 1/8 s, so the answers to a simultaneous decision arrive together, in the order of the
    requests (the table's order for steps due at once): the last seat's closes it. The seats of a simultaneous
    decision are asked one at a time (the assertion that they were asked together moved with that)."""
    bots = [ScriptedBot(name, _at_random(name)) for name in ("a", "b", "c")]
    table = ScriptedTable(bots, probe=FREEZER)
    (game,) = play(table, table.spec("scout", limits=CLOCKS)).games

    asked = sorted((at, process.bot.name) for process in table.processes for at in process.request_times())
    decisions: dict[float, list[str]] = {}
    for at, name in asked:
        decisions.setdefault(at, []).append(name)
    movers = list(decisions.values())
    pairs = list(zip(movers, movers[1:], strict=False))
    again = sum(now == before[-1:] for before, now in pairs)
    thaws = sum(not frozen for process in table.processes for frozen in process.holds)
    assert game.isolation is Isolation.PARTIAL and not game.faults
    assert all(len(names) == 1 for names in movers), "a simultaneous decision asks one seat at a time"
    assert any(now == before for before, now in pairs), "a seat is on move again right after its own answer"
    assert thaws == len(asked) - again + len(bots)
    assert not table.together, "no two bots are ever awake together"
    assert all(process.holds[:1] == [True] for process in table.processes), "frozen from their hello"


def test_with_bots_frozen_scauvers_setup_and_vanguards_ask_one_seat_at_a_time() -> None:
    """Scauver's simultaneous decisions (the setup, the vanguards at the showdown) ask their seats one by one
    too: no two requests go out at the same instant, and no two bots are ever awake together."""
    table = ScriptedTable([ScriptedBot(name, _at_random(name)) for name in ("a", "b", "c")], probe=FREEZER)
    (game,) = play(table, table.spec("scauver", limits=CLOCKS)).games

    asked = sorted(at for process in table.processes for at in process.request_times())
    assert not game.faults and len(asked) > 3
    assert len(asked) == len(set(asked)), "two seats were asked at once"
    assert not table.together, table.together


def _at_random(seed: str) -> Script:
    """Answer after 1/8 s, with a legal action drawn from a generator seeded by `seed`."""
    choices = random.Random(seed)
    return lambda asked: [Answer(after_ms=125, action=choices.choice(asked.legal_actions))]


def test_a_silent_bot_and_a_slow_one_read_apart_at_the_end_of_the_game() -> None:
    """Both forfeit at their timeout and are not asked again; the end of the game waits once, a move time
    (1 s), for the open answer: the slow bot's comes 0.25 s after its 1.5 s and is a late answer, the silent
    bot is heard from never and is a hang. Before, both read "no answer to request N within 1500 ms"."""
    table = ScriptedTable([ScriptedBot("slow", on_request(3, Answer(after_ms=1750))), ScriptedBot("quick")])
    (late,) = play(table).games[0].faults
    assert late.cause is FaultCause.LATE_ANSWER and late.facts.answered_ms == 1750
    assert late.detail == f"request {late.facts.request_id} answered after 1,750 ms of a 1,500 ms limit"
    table = ScriptedTable([ScriptedBot("silent", on_request(3)), ScriptedBot("quick")])
    (hang,) = play(table).games[0].faults
    assert hang.cause is FaultCause.NO_ANSWER and hang.facts.waited_ms == 1000
    said = f"no answer to request {hang.facts.request_id} within 1500 ms, nor in 1000 ms more: the bot hangs"
    assert hang.detail.startswith(said)
