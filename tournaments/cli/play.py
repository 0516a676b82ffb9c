"""`referee play GAME BOT BOT ...`: one match between bot programs, printed game by game."""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import click
from tabulate import tabulate

from bots.python.policy_bot import check_policy_seats
from protocol.remote_sockets import DEFAULT_RECONNECT_GRACE_S
from protocol.safe_text import one_line
from referee.botspec import HUMAN, remote_seat_names, resolve_bot, unique_names
from referee.deals import DealKey
from referee.games import list_games, load_game
from referee.games.base import MAX_SEED
from referee.isolation.process import BotProcess
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import BotRun, BotSpec, GameRecord, Limits, MatchRecord, MatchSpec, RemoteTiming
from referee.replay import ReplayWriteError
from referee.seating import design_games, first_games
from referee.session import BotTransport
from referee.wire.connection import Transport
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS
from referee.wire.remote_seats import RemoteSeats

from ..pages.writer import PagesRunner, ReplayFormat
from ..rundir import new_run_dir
from .options import (
    echo_json,
    game_label,
    json_option,
    kernel_option,
    limits_options,
    replay_format_option,
    sandbox_option,
    tablefmt_option,
    transport_option,
)
from .output import echo


def _bot_transport(
    specs: tuple[BotSpec, ...],
    transport: Transport,
    listen: str | None,
    keys_dir: Path | None,
    lag_quota: int | None = None,
    grace_s: float | None = None,
) -> Transport | BotTransport:
    """The local transport, or one with remote seats (referee.wire.remote_seats) when a BOT is remote:NAME."""
    remote = remote_seat_names(specs)
    if not remote:
        if listen is not None:
            raise click.UsageError("--listen is for remote:NAME seats, and no BOT is one")
        if lag_quota is not None:
            raise click.UsageError("--lag-quota is for remote:NAME seats, and no BOT is one")
        if grace_s is not None:
            raise click.UsageError("--reconnect-grace is for remote:NAME seats, and no BOT is one")
        return transport
    if listen is None or keys_dir is None:
        raise click.UsageError(f"remote:{remote[0]} needs --listen tcp://HOST:PORT and --keys DIR")
    if transport is not Transport.IPC:
        raise click.UsageError("a match with remote seats runs its local bots on ipc: leave out --transport")
    quota = DEFAULT_LAG_QUOTA_MS if lag_quota is None else lag_quota
    grace = DEFAULT_RECONNECT_GRACE_S if grace_s is None else grace_s
    seats = RemoteSeats.from_folder(listen, keys_dir, remote, quota, grace)
    return BotTransport(Transport.IPC, seats.open_wire, seats.start_bot(BotProcess.start), isolation=Isolation.REMOTE)


def _parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs; a VALUE that parses as JSON is taken as such (numbers, true/false), else as a string."""
    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        try:
            config[key] = json.loads(text)
        except json.JSONDecodeError:
            config[key] = text
    return config


def _game_json(record: GameRecord) -> dict[str, Any]:
    return {
        "index": record.index,
        "seed": record.seed,
        "seats": list(record.seats),
        "ranks": list(record.ranks),
        "scores": list(record.scores),
        "faults": [
            {
                "seat": f.seat,
                "kind": f.kind.value,
                "cause": f.cause.value,
                "detail": f.detail,
                **({"sent": f.sent} if f.sent else {}),
            }
            for f in record.faults
        ],
        "timing": [
            {"decisions": t.decisions, "mean_ms": round(t.mean_ms, 3), "max_ms": round(t.max_ms, 3)}
            for t in record.timings
        ],
        "remote": [None if timing is None else _remote_json(timing) for timing in record.remote],
        "replay": record.replay_path,
        "sandboxed": record.sandboxed,
        "isolation": record.isolation.value,
    }


def _remote_json(timing: RemoteTiming) -> dict[str, Any]:
    """A remote seat's network figures in one game (null for a local seat's)."""
    return {
        "decisions": timing.decisions,
        **{name: round(getattr(timing, name), 3) for name in REMOTE_FIGURES},
    }


REMOTE_FIGURES = ("median_lag_ms", "max_lag_ms", "credit_ms", "quota_left_ms")


def _bot_json(bot: BotRun) -> dict[str, Any]:
    hello = bot.handshake
    return {
        "name": bot.name,
        "log": bot.log_path,
        "hello": None if hello is None else {"name": hello.name, "version": hello.version, "protocol": hello.protocol},
    }


def _balance_note(players: int, games: int) -> str | None:
    """What `games` games at `players` seats leave unbalanced, with the nearest balanced counts; None if nothing."""
    unit = design_games(players)
    if games % unit == 0:
        return None
    lower, higher = games // unit * unit, (games // unit + 1) * unit
    nearest = f"--games {lower} or {higher}" if lower else f"--games {higher}"
    short = []
    if games % players:
        short.append(f"the last deal is not played from every seat ({players} games a deal)")
    if unit > players:
        short.append(f"who plays right after whom is balanced only over multiples of {unit} games")
    return (
        f"note: {games} game(s) at {players} seats are not a balanced match: {'; '.join(short)}. "
        f"For a balanced match use {nearest}"
    )


def _human_terminal(bots: tuple[str, ...]) -> str | None:
    """The terminal a `human` seat is played at: the one standard input is (None without a human seat)."""
    humans = bots.count(HUMAN)
    if not humans:
        return None
    if humans > 1:
        raise click.UsageError(f"one {HUMAN} seat per match: {humans} would share one terminal")
    if not sys.stdin.isatty():
        raise click.UsageError(f"the {HUMAN} seat is played at a terminal: run referee play in one (stdin is not)")
    return os.ttyname(sys.stdin.fileno())


def _print_game(record: GameRecord, played: int, total: int, tablefmt: str) -> None:
    echo(f"{game_label(record.index, played, total)}  deal seed {record.seed}")
    rows = [
        (seat, one_line(bot), rank, score, timing.decisions, f"{timing.mean_ms:.2f}", f"{timing.max_ms:.2f}")
        for seat, (bot, rank, score, timing) in enumerate(
            zip(record.seats, record.ranks, record.scores, record.timings, strict=True)
        )
    ]
    headers = ["seat", "bot", "rank", "score", "decisions", "mean ms", "max ms"]
    echo(tabulate(rows, headers=headers, tablefmt=tablefmt))
    for fault in record.faults:
        detail = fault.detail.replace("\n", "\n      ")
        echo(f"  fault: seat {fault.seat} ({one_line(fault.bot)}) {fault.kind.value}: {detail}")
        if fault.sent:
            echo(f"      it sent: {one_line(fault.sent)}")
    if record.replay_path:
        echo(f"  replay: {record.replay_path}")
    echo()


def _print_summary(record: MatchRecord, tablefmt: str) -> None:
    """Per bot over the whole match: games, wins, mean rank, faults, decision times."""
    rows = []
    for index, bot in enumerate(record.bots):
        seats = [(game, record.seat_of(game, index)) for game in record.games]
        timings = [game.timings[seat] for game, seat in seats]
        decisions = sum(t.decisions for t in timings)
        mean_ms = sum(t.mean_ms * t.decisions for t in timings) / decisions if decisions else 0.0
        rows.append(
            (
                one_line(bot.name),
                len(seats),
                sum(game.ranks[seat] == 1 for game, seat in seats),
                f"{sum(game.ranks[seat] for game, seat in seats) / len(seats):.2f}",
                sum(fault.seat == seat for game, seat in seats for fault in game.faults),
                decisions,
                f"{mean_ms:.2f}",
                f"{max((t.max_ms for t in timings), default=0.0):.2f}",
            )
        )
    headers = ["bot", "games", "wins", "mean rank", "faults", "decisions", "mean ms", "max ms"]
    echo("match")
    echo(tabulate(rows, headers=headers, tablefmt=tablefmt))


@click.command()
@click.argument("game", type=click.Choice(list_games()))
@click.argument("bots", metavar="BOT BOT ...", nargs=-1, required=True)
@click.option(
    "--games",
    "-n",
    "game_count",
    type=click.IntRange(min=1),
    default=None,
    help="Games in the match; a balanced match is a multiple of "
    + ", ".join(f"{design_games(seats)} games at {seats}" for seats in range(2, 6))
    + " seats, and other counts are played with a note  [default: the smallest balanced match]",
)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=None,
    help="Deal from this seed, reproducibly. The seed is public: a bot that knows or guesses it can deal every "
    "game, so never use it where bots compete for real  [default: deal from a secret drawn for this run]",
)
@limits_options
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="A game option (repeatable).")
@click.option("--replay-dir", type=click.Path(file_okay=False), default=None, help="Write a replay of every game here.")
@replay_format_option
@click.option(
    "--log-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the bots' logs (NAME.log each) here [default: a new run folder in the temporary folder, printed].",
)
@transport_option
@click.option(
    "--listen",
    metavar="tcp://HOST:PORT",
    default=None,
    help="Where remote:NAME seats connect (with `referee connect`), over CURVE; needs --keys.",
)
@click.option(
    "--keys",
    "keys_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The keys folder of remote seats: referee.key_secret (this referee's pair, `referee keys new referee`) "
    "and NAME.key, the public key of each author allowed to take the seat remote:NAME.",
)
@click.option(
    "--lag-quota",
    type=click.IntRange(min=0),
    metavar="MS",
    default=None,
    help="Each remote seat's network allowance per game: a decision's clock is extended by the seat's measured "
    "round trip while this lasts, spent on what the extension covered [default: "
    f"{DEFAULT_LAG_QUOTA_MS}; 0: none].",
)
@click.option(
    "--reconnect-grace",
    "reconnect_grace",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    default=None,
    help="How long a remote seat whose connection dropped is kept for `referee connect` to come back and resume; "
    "its move clock runs on meanwhile, and past this its seat has crashed [default: "
    f"{DEFAULT_RECONNECT_GRACE_S:g}; 0: no reconnection].",
)
@sandbox_option
@click.option(
    "--ponder",
    is_flag=True,
    default=False,
    help="Let bots run while they are not on move. By default a sandboxed bot is frozen until it is asked for a "
    "decision, so that no bot takes CPU from the one on move, times it or thinks on its time.",
)
@kernel_option
@json_option
@tablefmt_option
def play(
    game: str,
    bots: tuple[str, ...],
    game_count: int | None,
    seed: int | None,
    limits: Limits,
    options: tuple[str, ...],
    replay_dir: str | None,
    replay_format: ReplayFormat,
    log_dir: str | None,
    transport: Transport,
    listen: str | None,
    keys_dir: Path | None,
    lag_quota: int | None,
    reconnect_grace: float | None,
    sandbox: bool,
    ponder: bool,
    kernel: bool,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Play a match of GAME between the BOTs, one seat each, and print every game.

    A BOT is a built-in name (random, heuristic, scout-heuristic, scauver-heuristic), a path to a program or a
    .py script, a command line in quotes ("node bots/js/random_bot.js"), stdio:BOT for a bot that speaks JSON
    lines on stdin/stdout (protocol/PROTOCOL.md), human: you play that seat in this terminal (your hand, the
    table and the numbered legal moves are shown, you type a move's number; no clock), or remote:NAME: a bot
    played from another machine through `referee connect` with the key NAME (--listen, --keys). A bot plays under the
    name it sends in its hello (repeated names get #1, #2, ...). Its output goes to NAME.log in the log folder.
    Each deal is played once from every seat, in turn orders chosen so that every bot plays right after every
    other equally often (referee/seating.py); the games are played rotation by rotation, with fresh bot
    processes for each rotation, so that no bot process sees a deal twice. Bot faults are reported, not fatal:
    the exit status is 0 whenever the match was played. A faulty seat ranks last in its game; a bot that crashed
    is restarted for the next game, one that never completed its handshake forfeits every game. Ctrl-C or
    SIGTERM stops the bots and exits 130 or 143. Games are numbered from 0, as in their replays.
    """
    info = load_game(game).info
    if not info.min_players <= len(bots) <= info.max_players:
        raise click.UsageError(f"{game} is for {info.min_players} to {info.max_players} players, not {len(bots)} bots")
    if replay_format is not ReplayFormat.JSON and replay_dir is None:
        raise click.UsageError(f"--replay-format {replay_format} writes into --replay-dir: give one")
    terminal = _human_terminal(bots)
    specs = unique_names([resolve_bot(bot, game, named_by_hello=True, terminal=terminal) for bot in bots])
    check_policy_seats([spec.command for spec in specs], game, len(specs), _parse_options(options))
    logs = Path(log_dir) if log_dir else new_run_dir("play", game)
    count = design_games(len(specs)) if game_count is None else game_count
    key = DealKey.fresh() if seed is None else DealKey.from_seed(seed)
    spec = MatchSpec(
        match_id=f"{game}-{secrets.token_hex(6)}",
        game=game,
        bots=specs,
        games=first_games(len(specs), count, key),
        config=_parse_options(options),
        limits=limits,
        replay_dir=replay_dir,
        log_dir=str(logs),
        sandbox=sandbox,
        ponder=ponder,
        kernel=kernel,
    )
    note = _balance_note(len(specs), count)
    if note is not None:
        echo(note, err=True)
    if not as_json:
        deals = "deals from a secret drawn for this run" if seed is None else f"public seed {seed}"
        echo(f"{game}: {len(specs)} bots; {count} game(s), {deals}; bot logs in {logs}\n")

    played: list[GameRecord] = []

    def on_game(record: GameRecord) -> None:
        played.append(record)
        if as_json:
            if count > 1:
                echo(f"{game_label(record.index, len(played), count)} played", err=True)
        else:
            _print_game(record, len(played), count, tablefmt)

    runner = run_match if replay_format is ReplayFormat.JSON else PagesRunner(replay_format)
    try:
        bot_transport = _bot_transport(specs, transport, listen, keys_dir, lag_quota, reconnect_grace)
        record = runner(spec, on_game, transport=bot_transport)
    except ReplayWriteError as error:  # kept: the message adds how far the match got, which only this command knows
        raise click.ClickException(f"{error} (stopped after {len(played)} of {count} game(s))") from error
    except KeyboardInterrupt:
        echo(f"Stopped after {len(played)} of {count} game(s); the bots are stopped.", err=True)
        raise
    if as_json:
        echo_json(
            {
                "game": game,
                "match_id": spec.match_id,
                "seed": seed,
                "bots": [_bot_json(bot) for bot in record.bots],
                "games": [_game_json(g) for g in record.games],
            }
        )
        return
    if count > 1:
        _print_summary(record, tablefmt)
    echo(f"bot logs in {logs}: {', '.join(Path(str(bot.log_path)).name for bot in record.bots)}")
    sys.stdout.flush()
