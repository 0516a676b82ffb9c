"""`referee tournament sprt GAME NEW_BOT BASE_BOT`: is the new bot at least some Elo better? Paired deals until
a sequential test decides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from referee.botspec import resolve_bot, unique_names
from referee.games import list_games, load_game
from referee.records import BotSpec, Limits
from referee.wire.connection import Transport
from referee.wire.lag_quota import DEFAULT_LAG_QUOTA_MS
from referee.wire.remote_seats import RemoteSeats, remote_name

from ..league.executors import LocalExecutor, default_concurrency
from ..league.remote import RemoteMatchRunner
from ..ratings.sprt import Decision, SprtState, SprtTest
from ..sprt_match import DEFAULT_BATCH_PAIRS, SprtPlan, SprtResult, play_sprt
from .options import echo_json, json_option, limits_options, pin_option, sandbox_option, seed_option, transport_option
from .output import echo

_VERDICTS = {
    Decision.H1: "H1 accepted: {new} is better than {base} by more than {elo0:g} Elo",
    Decision.H0: "H0 accepted: {new} is not {elo1:g} Elo better than {base}",
    Decision.CONTINUE: "no decision after {pairs} pairs (--max-pairs reached)",
}


@click.command(name="sprt")
@click.argument("game", type=click.Choice(list_games()))
@click.argument("new_bot")
@click.argument("base_bot")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="Elo gain of H0.")
@click.option("--elo1", type=float, default=10.0, show_default=True, help="Elo gain of H1.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--beta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option(
    "--max-pairs", type=click.IntRange(min=1), default=20_000, show_default=True, help="Give up after this many pairs."
)
@click.option(
    "--batch",
    "batch_pairs",
    type=click.IntRange(min=1),
    default=DEFAULT_BATCH_PAIRS,
    show_default=True,
    help="Pairs per match (the bot processes are started once per batch).",
)
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Batches played at once by local worker processes (both games of a pair are always in one batch)  "
    "[default: the number of cores]",
)
@pin_option
@seed_option
@limits_options
@transport_option
@click.option(
    "--listen",
    metavar="tcp://HOST:PORT",
    default=None,
    help="Where a remote:NAME bot connects (with `referee connect`), over CURVE; needs --keys.",
)
@click.option(
    "--keys",
    "keys_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The keys folder of a remote seat: referee.key_secret and NAME.key (as for `referee play`).",
)
@click.option(
    "--lag-quota",
    type=click.IntRange(min=0),
    metavar="MS",
    default=DEFAULT_LAG_QUOTA_MS,
    show_default=True,
    help="A remote seat's network allowance per game (as for `referee play`).",
)
@sandbox_option
@json_option
def sprt_command(
    game: str,
    new_bot: str,
    base_bot: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_pairs: int,
    batch_pairs: int,
    concurrency: int | None,
    pinned: bool,
    seed: int,
    limits: Limits,
    transport: Transport,
    listen: str | None,
    keys_dir: Path | None,
    lag_quota: int,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Test whether NEW_BOT is stronger than BASE_BOT at two-seat GAME, as chess engine testers do.

    Plays deals in pairs (the same deal twice, seats swapped) and runs fishtest's pentanomial GSPRT of
    H0: Elo gain = elo0 against H1: Elo gain = elo1 (logistic Elo), stopping when the log-likelihood ratio
    leaves (log(beta/(1-alpha)), log((1-beta)/alpha)). The LLR is printed after every batch. Batches run on
    -j local workers at once; a test that would decide without data (alpha + beta >= 1, or bounds so wide
    that one pair decides) is refused. Either bot may be remote:NAME, played from another machine through
    `referee connect` (--listen, --keys, as for `referee play`); its batches are then played one at a time.
    """
    info = load_game(game).info
    if not info.min_players <= 2 <= info.max_players:
        raise click.UsageError(f"{game} is not played by two seats ({info.min_players} to {info.max_players})")
    new, base = unique_names([resolve_bot(new_bot, game), resolve_bot(base_bot, game)])
    remote = _remote_runner((new, base), transport, listen, keys_dir, lag_quota)
    plan = SprtPlan(
        game=game,
        new=new,
        base=base,
        test=SprtTest(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta),
        max_pairs=max_pairs,
        seed=seed,
        batch_pairs=batch_pairs,
        limits=limits,
        transport=transport,
        concurrency=concurrency or (1 if remote else default_concurrency()),
        sandbox=sandbox,
        remote=remote,
    )
    if plan.concurrency > default_concurrency():
        echo(
            f"warning: --concurrency {plan.concurrency} is more than the {default_concurrency()} cores here; bots may "
            "miss their time limits",
            err=True,
        )
    executor = LocalExecutor(plan.concurrency, plan.runner, pinned=pinned)
    test = plan.test
    echo(
        f"SPRT {game}: {new.name} vs {base.name}, H0 elo {elo0:g} / H1 elo {elo1:g}, alpha {alpha:g}, beta {beta:g}; "
        f"bounds ({test.lower_bound:.3f}, {test.upper_bound:.3f}); seed {plan.seed}; {plan.concurrency} at once",
        err=as_json,
    )
    progress: list[SprtResult] = []

    def on_batch(result: SprtResult) -> None:
        progress[:] = [result]
        echo(_progress_line(result.state), err=as_json)

    try:
        result = play_sprt(plan, executor, on_batch)
    except KeyboardInterrupt:
        counted = progress[0].state.pentanomial.pairs if progress else 0
        echo(f"Interrupted before a decision; {counted} pairs counted (see the last LLR line).", err=True)
        raise
    if as_json:
        echo_json(_result_json(plan, result))
        return
    state = result.state
    echo(_VERDICTS[state.decision].format(new=new.name, base=base.name, elo0=elo0, elo1=elo1, pairs=max_pairs))
    faults = ", ".join(f"{name} {count}" for name, count in result.faults.items())
    echo(f"{state.pentanomial.pairs} pairs counted, {result.games} games played; faults: {faults}")


def _remote_runner(
    bots: tuple[BotSpec, ...], transport: Transport, listen: str | None, keys_dir: Path | None, lag_quota: int
) -> RemoteMatchRunner | None:
    """The runner of a match with a remote:NAME bot (tournaments.league.remote), None without one."""
    names = [name for bot in bots if (name := remote_name(bot.command)) is not None]
    if not names:
        if listen is not None or keys_dir is not None:
            raise click.UsageError("--listen and --keys are for a remote:NAME bot, and neither bot is one")
        return None
    if listen is None or keys_dir is None:
        raise click.UsageError(f"remote:{names[0]} needs --listen tcp://HOST:PORT and --keys DIR")
    if transport is not Transport.IPC:
        raise click.UsageError("an SPRT with a remote bot runs its local bot on ipc: leave out --transport")
    RemoteSeats.from_folder(listen, keys_dir, names, lag_quota)
    return RemoteMatchRunner(listen, keys_dir, lag_quota)


def _progress_line(state: SprtState) -> str:
    pentanomial = "-".join(str(count) for count in state.pentanomial.counts)
    elo = ""
    if state.elo is not None and state.elo_ci95 is not None:
        low, high = state.elo_ci95
        elo = f"  Elo {state.elo:+.1f} [{low:+.1f}, {high:+.1f}]"
    return (
        f"pairs {state.pentanomial.pairs:5d}  pentanomial {pentanomial}  LLR {state.llr:+.3f} "
        f"({state.test.lower_bound:+.3f}, {state.test.upper_bound:+.3f}){elo}"
    )


def _result_json(plan: SprtPlan, result: SprtResult) -> dict[str, Any]:
    state = result.state
    test = state.test
    return {
        "game": plan.game,
        "new": plan.new.name,
        "base": plan.base.name,
        "seed": plan.seed,
        "elo0": test.elo0,
        "elo1": test.elo1,
        "alpha": test.alpha,
        "beta": test.beta,
        "decision": state.decision.value,
        "llr": round(state.llr, 4),
        "bounds": [round(test.lower_bound, 4), round(test.upper_bound, 4)],
        "pairs": state.pentanomial.pairs,
        "pentanomial": list(state.pentanomial.counts),
        "elo": None if state.elo is None else round(state.elo, 2),
        "elo_ci95": None if state.elo_ci95 is None else [round(value, 2) for value in state.elo_ci95],
        "games": result.games,
        "faults": dict(result.faults),
    }
