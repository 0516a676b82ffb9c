"""One match: a series of games between the same bot processes, each game played decision by decision over
the protocol, with the referee's clocks, the fault policy and a replay per game.

    record = run_match(spec, on_game=print)

Bot misbehaviour never escapes as an exception: it becomes a Fault in the GameRecord (see referee.faults for
the policy and referee.session for crashed bots). Exceptions that do escape are the caller's errors (an
unknown game, a bad config or seating: MatchSpecError) and they still leave no bot process running.

A bot process never plays a deal twice: the games are played in generations (`generations`: the first game
of every deal, then the second, ...), and every bot gets a fresh process between generations. With the
balanced designs of referee.seating a generation is one rotation of the seats, played with the same
processes however many deals it has.

What a bot is told of the match carries nothing about its deals: `game_start` names the match by a random
id drawn for this run, and numbers the games in the order they are played (MatchSpec.match_id, the store's
and the replays' key, is never sent).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import secrets
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import codec, limits
from protocol.errors import BadInput
from protocol.logs import LogSender
from referee import replay
from referee.faults import FaultBook, SeatStatus, forfeit_ranks, forfeit_scores, sent_text
from referee.games import Game, GameState, IllegalAction, load_game
from referee.games.base import Config
from referee.isolation import gvisor, sandbox
from referee.records import (
    FaultCause,
    FaultFacts,
    GameRecord,
    GameSpec,
    MatchRecord,
    MatchSpec,
    RemoteTiming,
    SeatTiming,
    Stage,
)
from referee.session import BotTransport, Participant, Session
from referee.wire.connection import Incoming, Transport
from referee.wire.lag_quota import LagCredit
from referee.wire.remote import game_lag_quotas
from referee.wire.remote_seats import remote_name

LATE_ANSWER_GRACE_MS = 1000
"""How much longer than its time (at most the move time) a bot that timed out is waited for at the end of its
game, to tell a slow bot (it answers: LATE_ANSWER) from one that hangs (NO_ANSWER). Paid once per such game."""


class MatchSpecError(BadInput, ValueError):
    """A MatchSpec that cannot be played (seating that does not fit the game or the bots)."""


class RequestState(enum.Enum):
    SENT = "sent"
    ANSWERED = "answered"
    TIMED_OUT = "timed_out"
    ILLEGAL = "illegal"
    REJECTED = "rejected"
    """Answered by a protocol violation."""
    ABANDONED = "abandoned"
    """The bot crashed while the request was open."""


@dataclass(eq=False, slots=True)
class Request:
    id: int
    seat: int
    sent_at: float
    deadline: float
    state: RequestState = RequestState.SENT


@dataclass(frozen=True, slots=True)
class BotView:
    """How game_start names a game to the bots: an opaque match id and the game's place in the order of play."""

    match_id: str
    game_index: int


class GameRunner:
    """Plays one game of a match through the session's bots."""

    def __init__(
        self, session: Session, game: Game, config: Config, spec: GameSpec, next_id: int, view: BotView
    ) -> None:
        self.session = session
        self.clock = session.clock
        self.match = session.spec
        self.game = game
        self.config = config
        self.spec = spec
        self.next_id = next_id
        self.view = view
        self.seated: list[Participant] = [session.participants[index] for index in spec.seating]
        self.seat_of = {participant.index: seat for seat, participant in enumerate(self.seated)}
        banks = [self.match.limits.time_bank_ms if p.spec.timed else limits.UNTIMED_BANK_MS for p in self.seated]
        self.seats = [SeatStatus(seat, p.name, banks[seat]) for seat, p in enumerate(self.seated)]
        self.book = FaultBook(self.match.limits.fault_policy, self.match.limits.fault_budget, self.seats, spec.seed)
        self.moves: list[replay.Move] = []
        self.lags = game_lag_quotas(session.wire)
        self.fault_at: list[int] = []
        self.pending: dict[int, Request] = {}
        self.misanswered: dict[int, tuple[int, int]] = {}
        """Open request id -> (replies with another id while it was open, the last such id)."""
        self.timed_out: dict[int, tuple[int, float]] = {}
        """Timed-out request id -> (its fault's index, when it was sent): an answer that comes later in the game
        makes that fault a late answer, with how late it was."""
        keys = game.info.log_keys
        self.log_senders = [LogSender(keys) for _ in self.seated] if keys else None
        self.started = 0.0
        self.state: GameState
        self.awake: Participant | None = None
        """The bot that answered the last open request, not frozen yet: if it is on move again it is not frozen
        and thawed in between; otherwise it is frozen before anyone else is thawed (`_freeze_awake`)."""

    # The game.

    def play(self) -> GameRecord:
        self.state = self.game.new_game(len(self.seated), self.spec.seed, self.config)
        self.started = self.clock()
        self._start()
        while not self.state.is_over():
            self._decide(self.state.to_move())
        self._freeze_awake(())
        self._hear_out()
        return self._finish()

    def _start(self) -> None:
        for seat, participant in enumerate(self.seated):
            if participant.down is not None:
                down = participant.down
                self._fault(seat, down.cause, dataclasses.replace(down.facts, not_running=True))
                continue
            self._charge_thefts(participant)
            message = codec.game_start(
                self.game.name, seat, len(self.seated), self.config, self.view.match_id, self.view.game_index
            )
            self.session.send(participant, codec.encode(message))

    def _decide(self, movers: list[int]) -> None:
        """Ask the seats on move. Where bots are frozen while not on move (Session.freezes), the seats of a
        simultaneous decision are asked one after another, each thawed alone and frozen again before the next:
        no two bots are ever awake together (two colluders thawed at once, each holding its new hand, could pass
        it over any channel the kernel shares), and each seat's clock runs only while it is awake. The engine
        reveals no seat's choice before all have chosen, so the order changes nothing a bot sees."""
        if len(movers) > 1 and self.session.freezes:
            for seat in movers:
                self._ask([seat])
        else:
            self._ask(movers)

    def _ask(self, movers: list[int]) -> None:
        state = self.state
        move_ms = self.match.limits.move_time_ms
        awake = self._freeze_awake(movers)
        for seat in movers:
            participant = self.seated[seat]
            status = self.seats[seat]
            if not self._can_answer(seat):
                self._play_fallback(seat)
                continue
            request_id = self.next_id
            self.next_id += 1
            if participant is not awake:
                self.session.hold(participant, False)
            observation = state.observation(seat)
            log_from = self.log_senders[seat].trim(observation) if self.log_senders else None
            frame = codec.encode_request(
                request_id, observation, state.legal_actions_view(seat), move_ms, status.bank_left_ms, log_from
            )
            sent_at = self.clock()
            self.session.send(participant, frame)
            deadline = sent_at + (move_ms + status.bank_left_ms) / 1000
            if self.lags is not None:
                deadline += self.lags.grant(seat, self.session.bindings.identity(participant.index)) / 1000
            self.pending[participant.index] = Request(request_id, seat, sent_at, deadline)
        while self.pending:
            self._wait_once()

    def _wait_once(self) -> None:
        self._events(min(request.deadline for request in self.pending.values()))
        now = self.clock()
        for request in list(self.pending.values()):
            if request.state is RequestState.SENT and request.deadline <= now:
                self._time_out(request)

    def _events(self, deadline: float) -> None:
        """What happens until `deadline` or the first event: bots' messages, exits and floods, handled."""
        message_ready, exited, floods = self.session.wire.wait(deadline)
        for fd in exited:
            self._on_exit(self.session.process_exited(fd))
        for flood in floods:
            self._on_down(self.session.stop_flooder(flood), RequestState.REJECTED)
        if message_ready:
            for incoming in self.session.wire.receive():
                self._on_message(incoming)

    def _time_out(self, request: Request, answered_at: float | None = None) -> None:
        """A timeout: `answered_at` when the answer came, too late, before the referee had noticed."""
        status = self.seats[request.seat]
        allowed_ms = self.match.limits.move_time_ms + status.bank_left_ms
        status.bank_left_ms = 0
        request.state = RequestState.TIMED_OUT
        other_replies, other_id = self.misanswered.pop(request.id, (None, None))
        facts = FaultFacts(request_id=request.id, allowed_ms=allowed_ms, other_replies=other_replies, other_id=other_id)
        if answered_at is None:
            self.timed_out[request.id] = (len(self.book.faults), request.sent_at)
            self._fault(request.seat, FaultCause.DECISION_TIMEOUT, facts, request)
        else:
            late = dataclasses.replace(facts, answered_ms=(answered_at - request.sent_at) * 1000)
            self._fault(request.seat, FaultCause.LATE_ANSWER, late, request)
        participant = self.seated[request.seat]
        participant.timeouts += 1
        most = self.match.limits.max_timeouts
        if most is not None and participant.timeouts >= most and participant.spec.stopped_on_timeouts:
            self._on_down(self.session.stop_timed_out(participant, most), RequestState.ABANDONED)

    def _on_late_answer(self, frames: list[bytes]) -> None:
        """A message from a bot after its request timed out: if it answers that request, its fault says how
        late (the same game only; a finished game's record is not changed)."""
        if len(frames) != 1:
            return
        try:
            message = codec.decode_bot_message(frames[0])
        except codec.ProtocolViolation:
            return
        if type(message) is codec.ActionReply and message.id in self.timed_out:
            self._answered_late(message.id)

    def _hear_out(self) -> None:
        """Tell a hang from a slow bot before the game ends: a bot that timed out and has not answered since
        (its seat forfeited, or it was not asked again: it was frozen meanwhile) is thawed and given
        LATE_ANSWER_GRACE_MS more. An answer then makes its fault a LATE_ANSWER, saying how late; silence makes
        it NO_ANSWER. A bot that is down keeps its DECISION_TIMEOUT (nobody can tell)."""
        silent = {rid: self.seated[self.book.faults[index].seat] for rid, (index, _) in self.timed_out.items()}
        heard = {participant.index: participant for participant in silent.values() if participant.down is None}
        if not heard:
            return
        waited_ms = min(self.match.limits.move_time_ms, LATE_ANSWER_GRACE_MS)
        for participant in heard.values():
            self.session.hold(participant, False)
        deadline = self.clock() + waited_ms / 1000
        while self.clock() < deadline and any(silent[rid].down is None for rid in self.timed_out):
            self._events(deadline)
        for participant in heard.values():
            if participant.down is None:
                self.session.hold(participant, True)
        for request_id, (index, _) in self.timed_out.items():
            fault = self.book.faults[index]
            if silent[request_id].index in heard and silent[request_id].down is None:
                facts = dataclasses.replace(fault.facts, waited_ms=waited_ms)
                self.book.faults[index] = dataclasses.replace(fault, cause=FaultCause.NO_ANSWER, facts=facts)
        self.timed_out.clear()

    def _answered_late(self, request_id: int) -> None:
        index, sent_at = self.timed_out.pop(request_id)
        fault = self.book.faults[index]
        facts = dataclasses.replace(fault.facts, answered_ms=(self.clock() - sent_at) * 1000)
        self.book.faults[index] = dataclasses.replace(fault, cause=FaultCause.LATE_ANSWER, facts=facts)

    # Events.

    def _on_exit(self, participant: Participant) -> None:
        self.session.mark_crashed(participant, Stage.GAME, self.spec.index)
        self._on_down(participant, RequestState.ABANDONED)

    def _on_down(self, participant: Participant, open_request: RequestState) -> None:
        """A bot just stopped (crashed, or stopped by the referee): its seat's fault is why it is down, and it
        forfeits the game under either policy (no bot is left to ask); its open request, if any, ends in
        `open_request` and is played by the fallback."""
        seat = self.seat_of.get(participant.index)
        down = participant.down
        if seat is None or down is None or self.seats[seat].forfeited:
            return
        request = self.pending.get(participant.index)
        if request is not None:
            request.state = open_request
        self._fault(seat, down.cause, down.facts, request, bot_stopped=True)

    def _on_message(self, incoming: Incoming) -> None:
        participant = self.session.owner(incoming.identity)
        if participant is None:
            thief = self.session.admit(incoming)
            if thief is not None and thief.index in self.seat_of:
                self._charge_thefts(thief)
            return
        seat = self.seat_of[participant.index]
        status = self.seats[seat]
        if status.forfeited:
            status.stale_messages += 1
            if self.timed_out:
                self._on_late_answer(incoming.frames)
            return
        request = self.pending.get(participant.index)
        if len(incoming.frames) != 1:
            self._reject(seat, request, FaultCause.MULTIPART_MESSAGE, FaultFacts(count=len(incoming.frames)))
            return
        try:
            message = codec.decode_bot_message(incoming.frames[0])
        except codec.ProtocolViolation as error:
            self._reject(seat, request, FaultCause.PROTOCOL_VIOLATION, FaultFacts(note=str(error)))
            return
        if type(message) is not codec.ActionReply:
            self._reject(seat, request, FaultCause.HELLO_AFTER_HANDSHAKE, FaultFacts())
        elif request is None or message.id != request.id:
            self._on_stale(seat, status, request, message.id)
        else:
            self._on_action(seat, status, request, message.action)

    def _on_action(self, seat: int, status: SeatStatus, request: Request, action: dict[str, Any]) -> None:
        received = self.clock()
        if received > request.deadline:
            self._time_out(request, received)
            return
        elapsed_ms = (received - request.sent_at) * 1000
        move_ms = self.match.limits.move_time_ms
        lag = None if self.lags is None else self.lags.settle(seat, elapsed_ms, move_ms, status.bank_left_ms)
        if lag is not None and not lag.in_time:
            self._time_out(request, received)
            return
        try:
            self.state.apply(seat, action)
        except IllegalAction as error:
            request.state = RequestState.ILLEGAL
            facts = FaultFacts(request_id=request.id, note=error.reason)
            self._fault(seat, FaultCause.ILLEGAL_ACTION, facts, request, sent=sent_text(action))
            return
        request.state = RequestState.ANSWERED
        self._close(seat)
        overrun = elapsed_ms - move_ms - (0 if lag is None else lag.credit_ms)
        if overrun > 0:
            status.bank_left_ms = max(0, status.bank_left_ms - math.ceil(overrun))
        status.decision_ms.append(elapsed_ms)
        self.moves.append(replay.Move(seat, action, elapsed_ms, True, received, lag))

    def _on_stale(self, seat: int, status: SeatStatus, request: Request | None, reply_id: int) -> None:
        status.stale_messages += 1
        if reply_id in self.timed_out:
            self._answered_late(reply_id)
        if request is not None:
            count, _ = self.misanswered.get(request.id, (0, 0))
            self.misanswered[request.id] = (count + 1, reply_id)
        if status.stale_messages > limits.DEFAULT_STALE_REPLY_LIMIT:
            self._reject(seat, request, FaultCause.STALE_FLOOD, FaultFacts(count=status.stale_messages))

    def _charge_thefts(self, participant: Participant) -> None:
        """Record the hellos with another bot's token the participant sent since its last game as protocol
        errors of its seat (a decision open at the time is rejected); a forfeited seat is not charged again."""
        seat = self.seat_of[participant.index]
        status = self.seats[seat]
        for victim in participant.thefts:
            if status.forfeited:
                status.stale_messages += 1
            else:
                theft = FaultFacts(victim=victim)
                self._reject(seat, self.pending.get(participant.index), FaultCause.STOLEN_TOKEN, theft)
        participant.thefts.clear()

    def _reject(self, seat: int, request: Request | None, cause: FaultCause, facts: FaultFacts) -> None:
        if request is not None:
            request.state = RequestState.REJECTED
        self._fault(seat, cause, facts, request)

    # Faults and fallbacks.

    def _fault(
        self,
        seat: int,
        cause: FaultCause,
        facts: FaultFacts,
        request: Request | None = None,
        bot_stopped: bool = False,
        sent: str | None = None,
    ) -> None:
        """Record the fault (`sent`: the illegal action as sent); a decision left open by it is played by the
        fallback."""
        self.fault_at.append(len(self.moves))
        self.book.record(seat, cause, facts, bot_stopped, sent, len(self.moves))
        if self.log_senders:
            self.log_senders[seat].resend()
        if request is not None:
            self._close(seat)
            self._play_fallback(seat)

    def _close(self, seat: int) -> None:
        """The seat's open request is over: the bot is frozen until its next one (Session.hold), at once while
        other requests are open, else once the next movers are known (`awake`)."""
        participant = self.seated[seat]
        del self.pending[participant.index]
        if self.pending:
            self.session.hold(participant, True)
        else:
            self.awake = participant

    def _freeze_awake(self, movers: Sequence[int]) -> Participant | None:
        """Freeze the awake bot unless it is the one bot on move next and may still answer; returns the bot
        left awake, if any."""
        awake, self.awake = self.awake, None
        if awake is None:
            return None
        if len(movers) == 1 and self.seated[movers[0]] is awake and self._can_answer(movers[0]):
            return awake
        self.session.hold(awake, True)
        return None

    def _can_answer(self, seat: int) -> bool:
        return not self.seats[seat].forfeited and self.seated[seat].down is None

    def _play_fallback(self, seat: int) -> None:
        action = self.book.fallback_action(seat, self.state.legal_actions(seat))
        self.state.apply(seat, action)
        self.moves.append(replay.Move(seat, action, None, False, self.clock()))

    # The end.

    def _finish(self) -> GameRecord:
        result = self.state.result()
        forfeited = self.book.forfeited()
        ranks = forfeit_ranks(result["ranks"], forfeited)
        scores = forfeit_scores(result["scores"], forfeited)
        for seat, participant in enumerate(self.seated):
            if participant.down is None:
                self.session.send(participant, codec.encode(codec.game_over(result, seat)))
        replay_path = self._write_replay(result, forfeited, ranks, scores)
        return GameRecord(
            match_id=self.match.match_id,
            index=self.spec.index,
            game=self.game.name,
            seed=self.spec.seed,
            seats=tuple(status.bot for status in self.seats),
            ranks=tuple(ranks),
            scores=tuple(scores),
            faults=tuple(self.book.faults),
            timings=tuple(_timing(status.decision_ms) for status in self.seats),
            replay_path=replay_path,
            forfeited=tuple(forfeited),
            isolation=self.session.isolation,
            remote=self._remote_timings(),
        )

    def _remote_timings(self) -> tuple[RemoteTiming | None, ...]:
        """Each remote seat's lag figures (RemoteTiming), None for a local seat; empty without a remote seat."""
        if self.lags is None:
            return ()
        lags: dict[int, list[LagCredit]] = {
            seat: [] for seat, p in enumerate(self.seated) if remote_name(p.spec.command)
        }
        for move in self.moves:
            if move.lag is not None and move.seat in lags:
                lags[move.seat].append(move.lag)
        return tuple(
            None if seat not in lags else remote_timing(lags[seat], self.lags.left_ms(seat))
            for seat in range(len(self.seated))
        )

    def _write_replay(
        self, result: dict[str, Any], forfeited: list[bool], ranks: list[int], scores: list[int]
    ) -> str | None:
        if self.match.replay_dir is None:
            return None
        path = Path(self.match.replay_dir) / f"{self.match.match_id}-{self.spec.index:04d}.json"
        replay.write(path, self.replay_data(result, forfeited, ranks, scores))
        return str(path)

    def replay_data(
        self, result: dict[str, Any], forfeited: list[bool], ranks: list[int], scores: list[int]
    ) -> dict[str, Any]:
        limits_in_force = self.match.limits
        seated = enumerate(self.seated)
        return {
            "format": replay.FORMAT,
            "version": replay.VERSION,
            "match_id": self.match.match_id,
            "game_index": self.spec.index,
            "game": self.game.name,
            "players": len(self.seated),
            "seed": self.spec.seed,
            "config": self.config,
            "deal": self.state.dealt,
            "seats": [
                {"seat": seat, "bot": p.name, "command": list(p.spec.command), "log": self._log_link(p)}
                for seat, p in seated
            ],
            "limits": {
                "move_time_ms": limits_in_force.move_time_ms,
                "time_bank_ms": limits_in_force.time_bank_ms,
                "startup_time_s": limits_in_force.startup_time_s,
                "fault_policy": limits_in_force.fault_policy.value,
                "fault_budget": limits_in_force.fault_budget,
            },
            "actions": [move.to_json(self.started) for move in self.moves],
            "faults": [replay.fault_entry(f, at) for f, at in zip(self.book.faults, self.fault_at, strict=True)],
            "result": result,
            "forfeited": forfeited,
            "ranks": ranks,
            "scores": scores,
        }

    def _log_link(self, participant: Participant) -> str | None:
        """Where the bot's log is from the replay's folder (a relative path, so a replay shown to others names
        no folder of the organiser's), or None when the match keeps no logs."""
        if not self.session.keeps_logs or self.match.replay_dir is None:
            return None
        return os.path.relpath(participant.log_path, self.match.replay_dir)


def remote_timing(credits: list[LagCredit], quota_left_ms: float) -> RemoteTiming:
    lags = sorted(credit.lag_ms for credit in credits)
    median = (lags[(len(lags) - 1) // 2] + lags[len(lags) // 2]) / 2 if lags else 0.0
    spent = sum(credit.credit_ms for credit in credits)
    return RemoteTiming(len(credits), median, max(lags, default=0.0), spent, quota_left_ms)


def _timing(decision_ms: list[float]) -> SeatTiming:
    if not decision_ms:
        return SeatTiming(0, 0.0, 0.0)
    return SeatTiming(len(decision_ms), sum(decision_ms) / len(decision_ms), max(decision_ms))


def check_spec(spec: MatchSpec, game: Game) -> None:
    """Raise MatchSpecError unless every game of the spec seats a valid table of the match's bots."""
    info = game.info
    for game_spec in spec.games:
        seating = game_spec.seating
        if not info.min_players <= len(seating) <= info.max_players:
            raise MatchSpecError(
                f"{info.name} is for {info.min_players} to {info.max_players} players, "
                f"game {game_spec.index} seats {len(seating)}"
            )
        if len(set(seating)) != len(seating) or not all(0 <= index < len(spec.bots) for index in seating):
            raise MatchSpecError(f"game {game_spec.index} seats {list(seating)}, not distinct bots of the match")


def generations(games: Sequence[GameSpec]) -> list[list[GameSpec]]:
    """The games in the order they are played: generation k holds the k-th game of every deal (games with
    the same seed are the same deal), each generation in the order given. Bots get fresh processes between
    generations, so no process sees a deal twice."""
    played: dict[int, int] = {}
    order: list[list[GameSpec]] = []
    for spec in games:
        generation = played.get(spec.seed, 0)
        played[spec.seed] = generation + 1
        if generation == len(order):
            order.append([])
        order[generation].append(spec)
    return order


def run_match(
    spec: MatchSpec,
    on_game: Callable[[GameRecord], None] | None = None,
    *,
    transport: Transport | BotTransport = Transport.IPC,
    sandbox_probe: sandbox.SandboxProbe | None = None,
) -> MatchRecord:
    """Start the bots, play every game of `spec` generation by generation (fresh bot processes for each), and
    stop the bots; `on_game` sees each game's record as soon as it is over (to store it, or to show progress).

    `transport` is how the bots are reached: bot processes on this machine over a socket of that kind, or a
    BotTransport already made; `sandbox_probe` what sandbox this machine allows (default: sandbox.probe(), asked
    only when the spec wants the sandbox)."""
    bots = BotTransport.local(transport) if isinstance(transport, Transport) else transport
    if spec.sandbox and bots.kind is not Transport.IPC:
        raise MatchSpecError(
            f"sandboxed bots have no network, so they cannot connect over {bots.kind.value}: use the ipc transport, "
            "or run without the sandbox (--no-sandbox)"
        )
    if spec.kernel:
        _require_kernel(spec)
    game = load_game(spec.game)
    config = game.resolve_config(spec.config)
    check_spec(spec, game)
    found = sandbox_probe
    if found is None:
        found = sandbox.probe() if spec.sandbox else _NO_SANDBOX_ASKED
    with tempfile.TemporaryDirectory(prefix="referee-") as work, Session(spec, Path(work), bots, found) as session:
        records = _play(session, game, config, on_game)
        session.finish()
        bot_runs = session.bot_runs()
    return MatchRecord(spec, tuple(records), bot_runs, session.starts)


def _require_kernel(spec: MatchSpec) -> None:
    """Refuse a match that asks for a kernel per bot where it cannot have one (nothing falls back)."""
    if not spec.sandbox or any(not bot.sandbox for bot in spec.bots):
        raise MatchSpecError("the kernel isolation level runs every bot sandboxed: it cannot go with --no-sandbox")
    gvisor.require()


_NO_SANDBOX_ASKED = sandbox.SandboxProbe("the match runs without the sandbox")
"""What a match that asks for no sandbox is told of the machine: it is not probed (a probe runs bwrap, once per
process, and warns where bwrap cannot run)."""


def _play(
    session: Session, game: Game, config: Config, on_game: Callable[[GameRecord], None] | None
) -> list[GameRecord]:
    session.start()
    records: list[GameRecord] = []
    bots_match_id = secrets.token_hex(8)
    next_id = 1
    for number, generation in enumerate(generations(session.spec.games)):
        if number:
            session.renew()
        for game_spec in generation:
            session.restart_crashed()
            runner = GameRunner(session, game, config, game_spec, next_id, BotView(bots_match_id, len(records)))
            record = runner.play()
            next_id = runner.next_id
            records.append(record)
            if on_game is not None:
                on_game(record)
    return records
