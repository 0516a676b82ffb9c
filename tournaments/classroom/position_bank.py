"""A fixed bank of positions that every submission answers offline, for the behavioural side of the copies
check (tournaments.classroom.choices): every student is asked the very same positions, whoever they were
seated with in the league.

    bank = make_bank("scout", players=2, config={}, seed=7, size=200, references={"heuristic": spec})
    answers = ask_bank(spec, bank, limits, log=Path("class.copies/ann.log"))   # one index per position (or None)

The positions: seeded games of the league's game, players and options, played by random moves in the rules
engine; from each, POSITIONS_PER_GAME decisions with at least two legal actions, each as the seat on move saw
it (its observation and legal actions). A candidate is kept unless every reference agrees there: the league's
baselines (asked as the students are) and the tutorial's strategy (`KnownStrategy`); where they all choose one
action the position says nothing about anyone (candidates are drawn in batches until the bank is full). The
bank keeps, with each position, what each known strategy chose there: agreeing on such a choice is explained
without a copy.

Asking one bot is one match-like session (referee.session: the league's sandbox, limits and start-up, the bot's
log kept): each position is sent as a game of its own, game_start, one request with the whole observation,
game_over with that game's result. A position the bot does not answer in time, or answers with an action that
is not legal, has no answer (None); a bot that crashes is started again, at most MAX_STARTS times in all, and
one that lets MAX_SILENT positions in a row time out is asked no more.
"""

from __future__ import annotations

import enum
import hashlib
import importlib.util
import random
import secrets
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from protocol import codec
from protocol.logs import LogSender
from referee.games import load_game
from referee.games.base import MAX_SEED
from referee.isolation import sandbox as sandboxing
from referee.records import BotSpec, Limits, MatchSpec, Stage
from referee.session import BotTransport, Participant, Session

DEFAULT_BANK = 200
"""Positions in the bank (the league's `[copies] bank`): each student answers them all, one decision each."""
CANDIDATES_PER_POSITION = 2
"""Candidates drawn in a batch for each position wanted (the references' agreements are left out)."""
MAX_BATCHES = 4
"""Batches of candidates drawn at most: where the references agree nearly everywhere the bank may stay smaller."""
POSITIONS_PER_GAME = 4
MAX_STARTS = 3
"""A bot that crashed is started again until it has been started this many times; then it is asked no more."""
MAX_SILENT = 3
"""A bot that let this many positions in a row time out is asked no more (a hung bot costs seconds, not minutes)."""
_DEFAULT_LIMITS = Limits()
_ENCODE = msgspec.json.Encoder(order="sorted")
_DECODE = msgspec.json.Decoder()


class KnownStrategy(enum.StrEnum):
    FIRST = "the first legal action"
    LAST = "the last legal action"
    TUTORIAL = "the tutorial's strategy"


_TUTORIAL = {"scout": "scout_tutorial.py"}
"""Game -> the tutorial's bot (tournaments/classroom/given), whose `choose` is the tutorial's strategy."""


@dataclass(frozen=True)
class Position:
    players: int
    seat: int
    observation: Mapping[str, Any]
    legal: tuple[Any, ...]
    result: Mapping[str, Any]
    """How the game it was taken from ended (told to the bot in game_over)."""
    known: tuple[int, ...] = ()
    """The indexes (into `legal`) that a known strategy or a reference chose here."""


@dataclass(frozen=True)
class Bank:
    game: str
    config: Mapping[str, Any]
    positions: tuple[Position, ...]

    @property
    def identity(self) -> str:
        """A digest of the whole bank: answers are kept for the bank they answer."""
        return "bank:" + hashlib.sha256(_ENCODE.encode([self.game, self.config, self.positions])).hexdigest()[:32]


def candidate_positions(game: str, players: int, config: Mapping[str, Any], seed: int, count: int) -> list[Position]:
    """`count` positions from seeded games of random moves (see the module's docstring)."""
    rules = load_game(game)
    rng = random.Random(f"position bank {game} {players} {seed}")
    found: list[Position] = []
    while len(found) < count:
        state = rules.new_game(players, rng.randrange(MAX_SEED), dict(config))
        decisions = []
        while not state.is_over():
            seat = state.to_move()[0]
            legal = state.legal_actions_view(seat)
            if len(legal) >= 2:
                decisions.append((seat, _copy(state.observation(seat)), tuple(_copy(list(legal)))))
            state.apply(seat, rng.choice(list(legal)))
        result = _copy(state.result())
        for seat, observation, legal in rng.sample(decisions, min(POSITIONS_PER_GAME, len(decisions))):
            found.append(Position(players, seat, observation, legal, result))
    return found[:count]


def _copy(value: Any) -> Any:
    return _DECODE.decode(_ENCODE.encode(value))


def known_choices(game: str, position: Position) -> dict[KnownStrategy, int]:
    """What each known strategy of `game` chooses in `position` (an index into its legal actions)."""
    choices = {KnownStrategy.FIRST: 0, KnownStrategy.LAST: len(position.legal) - 1}
    tutorial = tutorial_strategy(game)
    if tutorial is not None:
        chosen = tutorial(_copy(position.observation), _copy(list(position.legal)))
        if chosen in position.legal:
            choices[KnownStrategy.TUTORIAL] = position.legal.index(chosen)
    return choices


def tutorial_strategy(game: str) -> Callable[[Any, Any], Any] | None:
    """The tutorial's `choose` for `game` (None for a game the tutorial does not cover)."""
    name = _TUTORIAL.get(game)
    if name is None:
        return None
    path = resources.files("tournaments.classroom").joinpath("given", name)
    spec = importlib.util.spec_from_file_location(f"_given_{game}", str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.choose  # type: ignore[no-any-return]


def make_bank(
    game: str,
    players: int,
    config: Mapping[str, Any],
    seed: int,
    size: int,
    references: Mapping[str, BotSpec],
    limits: Limits = _DEFAULT_LIMITS,
    *,
    sandbox: bool = True,
    log_dir: Path | None = None,
) -> Bank:
    """The bank: candidates, each reference's answers, the positions where not all of them agree (see above).
    Candidates are drawn in batches until `size` are kept, at most MAX_BATCHES batches."""
    kept: list[Position] = []
    for batch in range(MAX_BATCHES):
        candidates = candidate_positions(game, players, config, seed + batch, size * CANDIDATES_PER_POSITION)
        draft = Bank(game, dict(config), tuple(candidates))
        answers = [ask_bank(spec, draft, limits, sandbox=sandbox, log_dir=log_dir) for spec in references.values()]
        for index, position in enumerate(candidates):
            known = known_choices(game, position)
            chosen = {answer[index] for answer in answers if answer[index] is not None}
            voices = chosen | ({known[KnownStrategy.TUTORIAL]} if KnownStrategy.TUTORIAL in known else set())
            if len(voices) == 1:
                continue
            explained = sorted({choice for choice in chosen if choice is not None} | set(known.values()))
            kept.append(replace(position, known=tuple(explained)))
            if len(kept) == size:
                return Bank(game, dict(config), tuple(kept))
    return Bank(game, dict(config), tuple(kept))


def ask_bank(
    bot: BotSpec, bank: Bank, limits: Limits = _DEFAULT_LIMITS, *, sandbox: bool = True, log_dir: Path | None = None
) -> tuple[int | None, ...]:
    """`bot`'s answer to every position of `bank`: the index of the legal action it chose, or None (see above)."""
    spec = MatchSpec(
        f"bank-{secrets.token_hex(4)}",
        bank.game,
        (bot,),
        (),
        bank.config,
        limits,
        log_dir=None if log_dir is None else str(log_dir),
        sandbox=sandbox,
    )
    probe = sandboxing.probe() if sandbox else sandboxing.SandboxProbe("the bank is asked without the sandbox")
    with (
        tempfile.TemporaryDirectory(prefix="referee-bank-") as work,
        Session(spec, Path(work), BotTransport.local(), probe) as session,
    ):
        session.start()
        asker = _Asker(session, session.participants[0], bank)
        answers = tuple(asker.answer(index, position) for index, position in enumerate(bank.positions))
        session.finish()
    return answers


class _Asker:
    """Sends one bot each position as a game of its own and waits for its answer."""

    def __init__(self, session: Session, bot: Participant, bank: Bank) -> None:
        self.session = session
        self.bot = bot
        self.bank = bank
        self.log_keys = load_game(bank.game).info.log_keys
        self.next_id = 1
        self.match_id = secrets.token_hex(8)
        self.silent = 0
        """Positions in a row that timed out."""

    def answer(self, index: int, position: Position) -> int | None:
        self.session.restart_crashed()
        if self.bot.down is not None or self.bot.starts > MAX_STARTS or self.silent >= MAX_SILENT:
            return None
        limits = self.session.spec.limits
        start = codec.game_start(
            self.bank.game, position.seat, position.players, dict(self.bank.config), self.match_id, index
        )
        self.session.send(self.bot, codec.encode(start))
        observation = _copy(position.observation)
        log_from = LogSender(self.log_keys).trim(observation) if self.log_keys else None
        request_id = self.next_id
        self.next_id += 1
        frame = codec.encode_request(
            request_id, observation, list(position.legal), limits.move_time_ms, limits.time_bank_ms, log_from
        )
        self.session.hold(self.bot, False)
        self.session.send(self.bot, frame)
        deadline = self.session.clock() + (limits.move_time_ms + limits.time_bank_ms) / 1000
        action = self._wait(request_id, deadline, index)
        self.silent = self.silent + 1 if action is None and self.bot.down is None else 0
        self.session.hold(self.bot, True)
        if self.bot.down is None:
            self.session.send(self.bot, codec.encode(codec.game_over(dict(position.result), position.seat)))
        if action is None or action not in position.legal:
            return None
        return position.legal.index(action)

    def _wait(self, request_id: int, deadline: float, index: int) -> Any:
        session = self.session
        while session.clock() < deadline and self.bot.down is None:
            message_ready, exited, floods = session.wire.wait(deadline)
            for fd in exited:
                session.mark_crashed(session.process_exited(fd), Stage.GAME, index)
            for flood in floods:
                session.stop_flooder(flood)
            if not message_ready:
                continue
            for incoming in session.wire.receive():
                if session.owner(incoming.identity) is None:
                    session.admit(incoming)
                    continue
                if len(incoming.frames) != 1:
                    continue
                try:
                    message = codec.decode_bot_message(incoming.frames[0])
                except codec.ProtocolViolation:
                    continue
                if isinstance(message, codec.ActionReply) and message.id == request_id:
                    return message.action
        return None
