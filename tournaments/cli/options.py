"""Option decorators shared by commands, so that every command spells them the same way."""

from __future__ import annotations

import functools
import json
import secrets
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click
import tabulate as tabulate_module

from protocol import limits
from referee.games.base import MAX_SEED
from referee.isolation import sandbox as sandboxing
from referee.records import FaultPolicy, Limits
from referee.wire.connection import Transport

from ..league.league_file import League
from ..pages.writer import ReplayFormat
from ..ratings.elo import DEFAULT_BOOTSTRAP, DEFAULT_PRIOR_DRAWS, Anchor, parse_anchor
from ..ratings.settling import DEFAULT_LEVEL, DEFAULT_MIN_GAMES, DEFAULT_RESOLUTION, SettleRule
from .output import echo

F = TypeVar("F", bound=Callable[..., Any])

TABLE_FORMATS = sorted(tabulate_module.tabulate_formats)


def json_option(function: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of a table.")(function)


def tablefmt_option(function: F) -> F:
    return click.option(
        "--tablefmt",
        type=click.Choice(TABLE_FORMATS),
        default="simple",
        show_default=True,
        help="Table format, passed to tabulate.",
    )(function)


def _seed_or_drawn(context: click.Context, parameter: click.Parameter, seed: int | None) -> int:
    return secrets.randbelow(MAX_SEED) if seed is None else seed


def seed_option(function: F) -> F:
    """--seed, handed to the command as an int: drawn from a secure source when not given (print it, so that
    the run can be repeated)."""
    return click.option(
        "--seed",
        type=click.IntRange(0, MAX_SEED),
        default=None,
        callback=_seed_or_drawn,
        help="Seed of the deals [default: drawn from a secure source and printed].",
    )(function)


def transport_option(function: F) -> F:
    """--transport, handed to the command as a Transport."""
    return click.option(
        "--transport",
        type=click.Choice([t.value for t in Transport]),
        default=Transport.IPC.value,
        show_default=True,
        callback=lambda context, parameter, value: Transport(value),
        help="How bots connect: ipc (local socket file) or tcp (127.0.0.1; sandboxed bots have no network, so "
        "tcp needs --no-sandbox).",
    )(function)


def pin_option(function: F) -> F:
    """--pin/--no-pin, handed to the command as `pinned`."""
    return click.option(
        "--pin/--no-pin",
        "pinned",
        default=True,
        show_default=True,
        help="Keep each local worker, and the bots of its matches, on its own share of the CPUs: matches run "
        "faster and cannot slow each other's clocks. --no-pin lets the system place them.",
    )(function)


def replay_format_option(function: F) -> F:
    """--replay-format, handed to the command as a ReplayFormat."""
    return click.option(
        "--replay-format",
        type=click.Choice([f.value for f in ReplayFormat]),
        default=ReplayFormat.JSON.value,
        show_default=True,
        callback=lambda context, parameter, value: ReplayFormat(value),
        help="What each game's replay is written as: json (the replay), html (a page to step through, which "
        "embeds the replay: `referee replay` reads it too) or both, side by side.",
    )(function)


def game_label(index: int, played: int, total: int) -> str:
    """'game 3 (4 of 6)': games are numbered from 0 everywhere (replays, the store, --json, this)."""
    return f"game {index} ({played} of {total})"


UNSANDBOXED_WARNING = (
    "warning: --no-sandbox: bots run unsandboxed, as your user, with your environment: they can read and change "
    "every file you can, see the other bots' and the referee's processes, and reach the network; their games "
    "are recorded with isolation none"
)


def isolation_warning(sandbox: bool) -> str | None:
    """What a run below full isolation says on stderr at its start (None at full): what is missing, and why."""
    if not sandbox:
        return UNSANDBOXED_WARNING
    found = sandboxing.probe()
    if found.problem is not None:
        return (
            f"warning: the sandbox cannot run here ({found.problem}): bots run unsandboxed and their games are "
            "recorded with isolation none; `referee doctor` says more, --no-sandbox runs without it on purpose"
        )
    if found.isolation is sandboxing.Isolation.PARTIAL:
        missing = "; ".join(found.shortfalls)
        return (
            f"warning: bots run with partial isolation, and their games are recorded so; missing: {missing} "
            "(`referee doctor` says more)"
        )
    return None


def _warn_below_full(context: click.Context, parameter: click.Parameter, sandbox: bool) -> bool:
    warning = isolation_warning(sandbox)
    if warning is not None:
        echo(warning, err=True)
    return sandbox


def sandbox_option(function: F) -> F:
    """--sandbox/--no-sandbox, handed to the command as `sandbox`; says on stderr what is missing whenever bots
    will run below full isolation (no sandbox here, a partial one, or --no-sandbox)."""
    return click.option(
        "--sandbox/--no-sandbox",
        "sandbox",
        default=True,
        show_default=True,
        callback=_warn_below_full,
        help="Run every bot in its own sandbox (bubblewrap: its own uid, no network, a read-only view of the "
        "system and its own folder, limits for all its processes together; see `referee doctor`). Where the "
        "machine gives less (partial isolation) or none, a warning at the start says what is missing. "
        "--no-sandbox runs them as the organiser's user, with a warning.",
    )(function)


def kernel_option(function: F) -> F:
    """--kernel, handed to the command as `kernel`: the kernel isolation level (refused where runsc cannot run)."""
    return click.option(
        "--kernel",
        is_flag=True,
        default=False,
        help="Run every bot under an application kernel of its own (gVisor's runsc): no kernel state shared "
        "between bots or kept from one start to the next. It costs start-up and decision time (docs: the "
        "security model); where runsc cannot run the command is refused (`referee doctor` says why).",
    )(function)


def echo_json(data: Any) -> None:
    echo(json.dumps(data, indent=2, sort_keys=False))


_LIMIT_OPTIONS = (
    click.option(
        "--move-time",
        type=click.IntRange(min=1),
        default=limits.DEFAULT_MOVE_TIME_MS,
        show_default=True,
        metavar="MS",
        help="Time limit of one decision.",
    ),
    click.option(
        "--startup-time",
        type=click.FloatRange(min=0.1),
        default=limits.DEFAULT_STARTUP_TIME_S,
        show_default=True,
        metavar="S",
        help="Time limit of a bot's start and handshake.",
    ),
    click.option(
        "--time-bank",
        type=click.IntRange(min=0),
        default=limits.DEFAULT_TIME_BANK_MS,
        show_default=True,
        metavar="MS",
        help="Extra time per game from which decision overruns are drawn.",
    ),
    click.option(
        "--fault-policy",
        type=click.Choice([policy.value for policy in FaultPolicy]),
        default=FaultPolicy.FORFEIT.value,
        show_default=True,
        help="forfeit: a faulty seat loses the game; substitute: a random action is played instead.",
    ),
    click.option(
        "--fault-budget",
        type=click.IntRange(min=limits.MIN_FAULT_BUDGET),
        default=limits.DEFAULT_FAULT_BUDGET,
        show_default=True,
        help="Faults in a game after which a seat forfeits under --fault-policy substitute.",
    ),
    click.option(
        "--memory",
        "memory_mb",
        type=click.IntRange(min=16),
        default=limits.DEFAULT_MEMORY_MB,
        show_default=True,
        metavar="MB",
        help=limits.MEMORY_LIMIT_MEANING,
    ),
)


def limits_options(function: F) -> F:
    """The referee's limits as options (--move-time, --startup-time, --time-bank, --fault-policy,
    --fault-budget, --memory), handed to the command as one `limits: Limits` argument."""

    @functools.wraps(function)
    def with_limits(*args: Any, **kwargs: Any) -> Any:
        kwargs["limits"] = Limits(
            move_time_ms=kwargs.pop("move_time"),
            startup_time_s=kwargs.pop("startup_time"),
            time_bank_ms=kwargs.pop("time_bank"),
            memory_mb=kwargs.pop("memory_mb"),
            fault_policy=FaultPolicy(kwargs.pop("fault_policy")),
            fault_budget=kwargs.pop("fault_budget"),
        )
        return function(*args, **kwargs)

    decorated: Callable[..., Any] = with_limits
    for option in reversed(_LIMIT_OPTIONS):
        decorated = option(decorated)
    return cast(F, decorated)


bootstrap_option = click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=DEFAULT_BOOTSTRAP,
    show_default=True,
    help="Resamples of whole games for the 95% intervals and LOS (0: none).",
)

prior_draws_option = click.option(
    "--prior-draws",
    type=click.FloatRange(min=0),
    default=DEFAULT_PRIOR_DRAWS,
    show_default=True,
    help="BayesElo's prior: virtual draws each bot brings, spread over its opponents in proportion to its games "
    "with each, so that every Elo is finite. 0: plain maximum likelihood, refused where an Elo would be infinite.",
)


def _anchor(context: click.Context, parameter: click.Parameter, value: str | None) -> Anchor | None:
    if value is None:
        return None
    try:
        return parse_anchor(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


anchor_option = click.option(
    "--anchor",
    metavar="BOT=ELO",
    default=None,
    callback=_anchor,
    help="Fix BOT's Elo at ELO (as Ordo's -a/-A), e.g. random=0, instead of the pool's mean at 0: tables of "
    "different runs or classes with the same anchor are on one scale. The anchor's +/- is 0, the others' are "
    "their distance from it. [default: the league file's [anchor], else none]",
)


def settle_rule_options(function: F) -> F:
    """--settle-los, --resolution and --min-games, handed to the command as `settle_los`, `resolution` and
    `min_games` (None when not given, so that a league file's keys can apply); settle_rule() turns them into a
    SettleRule."""
    function = click.option(
        "--min-games",
        type=click.IntRange(min=0),
        default=None,
        metavar="N",
        help=f"A pair of adjacent bots is decided only when both have played N games: the bootstrap of a handful "
        f"is overconfident. [default: the league file's min_games, else {DEFAULT_MIN_GAMES}]",
    )(function)
    function = click.option(
        "--resolution",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="ELO",
        help="Adjacent bots whose 95% interval of the difference lies inside +/- ELO are close enough "
        f"(settled, one group). [default: the league file's resolution, else {DEFAULT_RESOLUTION:g}]",
    )(function)
    return click.option(
        "--settle-los",
        type=click.FloatRange(0.5, 1, min_open=True, max_open=True),
        default=None,
        metavar="LEVEL",
        help=f"The LOS at which adjacent bots are in different groups; settling takes a pair as separated for good "
        f"at 1 - (1 - LEVEL) / 100 (99.95% for 95%), against the luck of repeated looks. [default: the league "
        f"file's settle_los, else {DEFAULT_LEVEL:g}]",
    )(function)


def settle_rule(
    settle_los: float | None, resolution: float | None, min_games: int | None, league: League | None = None
) -> SettleRule:
    """The rule from the options, else the league file's keys, else the defaults."""
    level = settle_los if settle_los is not None else league.settle_los if league is not None else None
    width = resolution if resolution is not None else league.resolution if league is not None else None
    floor = min_games if min_games is not None else league.min_games if league is not None else None
    return SettleRule(
        DEFAULT_LEVEL if level is None else level,
        DEFAULT_RESOLUTION if width is None else width,
        DEFAULT_MIN_GAMES if floor is None else floor,
    )


def league_anchor(anchor: Anchor | None, league: League | None) -> Anchor | None:
    """--anchor, else the league file's [anchor]."""
    if anchor is not None or league is None or league.anchor is None:
        return anchor
    return Anchor(*league.anchor)
