"""`referee bench ...`: the benchmarks that check the speed targets."""

from __future__ import annotations

import click
from tabulate import tabulate

from referee.games import list_games

from ..bench.engine import bench_engine, bench_search
from ..bench.instructions import count_instructions
from ..bench.protocol import bench_protocol, bench_reuse, reuse_tables
from ..bench.rl import bench_rl
from ..league.placement import CpuSet, kept_on, usable_cpus
from .bench_isolation import isolation_bench
from .bench_ladder import ladder_bench
from .bench_league import league_bench
from .bench_ratings import ratings_bench
from .bench_settle import settle_bench
from .options import echo_json, json_option, sandbox_option, tablefmt_option
from .output import echo

_bench_seed = click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the deals and choices (reproducible by default)."
)
_seats = "Seats at the table."


_one_core = click.option(
    "--one-core",
    is_flag=True,
    help="Keep every process of the run on one CPU, as the workers of `referee tournament run` keep their matches "
    "when there are as many workers as cores  [default: where the system puts them].",
)


def _placement(one_core: bool) -> CpuSet | None:
    return frozenset(usable_cpus()[:1]) if one_core else None


@click.group()
def bench() -> None:
    """Benchmarks: engine speed, learning environments, protocol overhead, league throughput, a served ladder."""


@bench.command()
@click.argument("game", type=click.Choice(list_games()))
@click.option("--players", "-p", type=int, default=4, show_default=True, help=_seats)
@click.option("--seconds", type=float, default=3.0, show_default=True, help="Play whole games for at least this long.")
@click.option(
    "--instructions",
    is_flag=True,
    help="Count CPU instructions per game and per decision under valgrind instead of timing (needs valgrind).",
)
@click.option(
    "--games",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Games to count with --instructions.",
)
@_bench_seed
@json_option
def engine(game: str, players: int, seconds: float, instructions: bool, games: int, seed: int, as_json: bool) -> None:
    """Random self-play of GAME in this process (legal actions listed in full at every decision, read-only).

    Prints decisions/s, rounds/s and games/s on one core; then what a search bot needs (a third of --seconds
    each): clones/s of positions from such games, and playouts/s (a clone played at random to its round's end).

    With --instructions, the same random play (--games games from --seed) runs under valgrind's cachegrind,
    once with the games and once without, in fresh interpreters: the difference is the instructions of the
    games alone, which do not depend on the machine's load (a run takes about a second per game).
    """
    if instructions:
        _engine_instructions(game, players, games, seed, as_json)
        return
    result = bench_engine(game, players, seconds, seed)
    search = bench_search(game, players, seconds / 3, seed)
    figures = {
        "game": result.game,
        "players": result.players,
        "games": result.games,
        "decisions": result.decisions,
        "seconds": round(result.seconds, 3),
        "decisions_per_s": round(result.decisions_per_second),
        "rounds_per_s": round(result.rounds_per_second, 1),
        "games_per_s": round(result.games_per_second, 1),
        "clones_per_s": round(search.clones_per_second),
        "playouts_per_s": round(search.playouts_per_second, 1),
        "playout_decisions": round(search.playout_decisions / search.playouts, 1),
    }
    if as_json:
        echo_json(figures)
        return
    echo(
        f"{game}, {players} players: {figures['decisions_per_s']:,} decisions/s, "
        f"{figures['rounds_per_s']:,} rounds/s, {figures['games_per_s']:,} games/s "
        f"({result.games} games, {result.decisions:,} decisions in {result.seconds:.2f} s)"
    )
    echo(
        f"  search: {figures['clones_per_s']:,} clones/s, {figures['playouts_per_s']:,} playouts/s "
        f"(random to the round's end, {figures['playout_decisions']} decisions each)"
    )


def _engine_instructions(game: str, players: int, games: int, seed: int, as_json: bool) -> None:
    result = count_instructions(game, players, games, seed)
    played = result.played
    figures = {
        "game": game,
        "players": players,
        "games": played.games,
        "rounds": played.rounds,
        "decisions": played.decisions,
        "seed": seed,
        "instructions": result.instructions,
        "instructions_per_game": round(result.per_game),
        "instructions_per_decision": round(result.per_decision),
        "baseline_instructions": result.baseline_instructions,
    }
    if as_json:
        echo_json(figures)
        return
    echo(
        f"{game}, {players} players: {result.per_game / 1e6:,.2f} M instructions per game, "
        f"{result.per_decision:,.0f} per decision ({played.games} games from seed {seed}, "
        f"{played.decisions:,} decisions; interpreter start and imports, {result.baseline_instructions / 1e6:,.0f} M, "
        "left out)"
    )


@bench.command()
@click.option("--game", type=click.Choice(list_games()), default="scout", show_default=True)
@click.option("--players", "-p", type=int, default=4, show_default=True, help=_seats)
@click.option("--games", type=click.IntRange(min=2), default=20, show_default=True, help="Games per referee run.")
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Interleaved raw/referee runs; the medians are reported.",
)
@_bench_seed
@_one_core
@sandbox_option
@click.option(
    "--ponder",
    is_flag=True,
    default=False,
    help="Let the referee's bots run while not on move, as a league with ponder = true does "
    "[default: sandboxed bots are frozen between their decisions, which the figures then include].",
)
@json_option
def protocol(
    game: str,
    players: int,
    games: int,
    repeats: int,
    seed: int,
    one_core: bool,
    sandbox: bool,
    ponder: bool,
    as_json: bool,
) -> None:
    """Referee per-decision round trip vs a raw ZeroMQ round trip of the same requests.

    raw: ROUTER -> echo DEALER in another process -> ROUTER, with the bytes of real requests of GAME.
    referee: a match of SDK random bots, wall time per decision (observation, legal actions, encode, send,
    the bot's decode/choice/encode, receive, validate, apply). Both are sampled per round trip; the ratio is
    of the medians (means, which carry the machine's other load, are printed too). Target for SCOUT: <= 1.5.
    floor: the same SDK random bots answering the requests of the same games prepared in advance, from a bare
    ROUTER loop: the bots' own work with no referee work (the referee's own cost is referee - floor).
    With --one-core both run on one CPU: each hand-over then stays on the core, so both get faster. The
    referee's bots run in the sandbox unless --no-sandbox; the raw and prepared peers never do. Sandboxed bots
    are frozen while not on move unless --ponder; then each run also plays its matches pondering, and the
    difference is printed as the cost of freezing, per decision and per game.
    """
    with kept_on(_placement(one_core)):
        result = bench_protocol(game, players, games, seed, repeats, sandbox, ponder)
    figures = {
        "game": game,
        "players": players,
        "one_core": one_core,
        "sandbox": sandbox,
        "ponder": ponder,
        "request_bytes": round(result.request_bytes),
        "raw_round_trip_us": round(result.raw.median_us, 1),
        "referee_decision_us": round(result.referee.median_us, 1),
        "ratio": round(result.ratio, 2),
        "raw_round_trip_mean_us": round(result.raw.mean_us, 1),
        "referee_decision_mean_us": round(result.referee.mean_us, 1),
        "mean_ratio": round(result.mean_ratio, 2),
        "prepared_round_trip_us": round(result.prepared.median_us, 1),
        "prepared_ratio": round(result.prepared_ratio, 2),
        "decisions": result.decisions,
        "engine_us": round(result.work.engine_us, 1),
        "encode_us": round(result.work.encode_us, 1),
        "bot_decode_us": round(result.work.bot_decode_us, 1),
        "own_us": round(result.own_us, 1),
        "decisions_per_game": round(result.decisions_per_game, 1),
    }
    if result.pondering is not None and result.freezing_us is not None:
        figures["pondering_decision_us"] = round(result.pondering.median_us, 1)
        figures["freezing_us"] = round(result.freezing_us, 1)
    if as_json:
        echo_json(figures)
        return
    echo(
        f"{game}, {players} players, requests of {figures['request_bytes']} bytes on average"
        f" ({result.decisions} decisions{', on one core' if one_core else ''}"
        f"{', bots sandboxed' if sandbox else ', bots unsandboxed'}{', pondering' if ponder else ''}):\n"
        f"                          median       mean\n"
        f"  raw ZeroMQ round trip   {result.raw.median_us:>6.1f} us  {result.raw.mean_us:>6.1f} us\n"
        f"  referee per decision    {result.referee.median_us:>6.1f} us  {result.referee.mean_us:>6.1f} us\n"
        f"  ratio                   {result.ratio:>6.2f}     {result.mean_ratio:>6.2f}\n"
        f"floor: the same SDK bots answering requests prepared in advance (no referee work)\n"
        f"  prepared round trip     {result.prepared.median_us:>6.1f} us  {result.prepared.mean_us:>6.1f} us\n"
        f"  ratio to raw            {result.prepared_ratio:>6.2f}\n"
        f"work the raw round trip does not do, per decision (in-process CPU):\n"
        f"  engine (legal actions, observation, apply)  {figures['engine_us']:>7.1f} us\n"
        f"  referee encoding the request                {figures['encode_us']:>7.1f} us\n"
        f"  bot decoding the request                    {figures['bot_decode_us']:>7.1f} us\n"
        f"the referee's own cost (referee - prepared)   {result.own_us:>7.1f} us per decision"
    )
    if result.pondering is not None and result.freezing_us is not None:
        per_game_ms = result.freezing_us * result.decisions_per_game / 1000
        echo(
            f"freezing (referee frozen - pondering)        {result.freezing_us:>7.1f} us per decision, "
            f"{per_game_ms:.2f} ms per game of {result.decisions_per_game:.0f} decisions "
            f"(pondering: {result.pondering.median_us:.1f} us per decision)"
        )


@bench.command()
@click.option("--game", type=click.Choice(list_games()), default=None, help="Only this game (default: every game).")
@click.option("--players", "-p", type=int, default=None, help="Only this many seats (default: every count).")
@click.option("--games", type=click.IntRange(min=1), default=100, show_default=True, help="Games per match.")
@_bench_seed
@_one_core
@sandbox_option
@json_option
@tablefmt_option
def reuse(
    game: str | None,
    players: int | None,
    games: int,
    seed: int,
    one_core: bool,
    sandbox: bool,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Matches of random bots with the processes kept alive vs started anew for every game, for every game and
    player count. Target: >= 10x.

    The speed-up is (start + game) / game, where start is what starting and stopping the bots costs per game:
    it holds where games are short next to a bot's start, and cannot where they are long. The same games are
    also played as leagues play them, duplicate deals with fresh processes for every seat rotation (no
    process sees a deal twice): rotation_cost is how many times slower that is than keeping the processes,
    starts_per_game how many bot processes each game then costs.
    The bots run in the sandbox unless --no-sandbox (start_ms_per_game then includes setting up their
    sandboxes).
    """
    tables = reuse_tables(game, players)
    if not tables:
        subject = f"{game} is" if game else "no game is"
        raise click.ClickException(f"{subject} not played by {players} players")
    rows = []
    for name, count in tables:
        with kept_on(_placement(one_core)):
            result = bench_reuse(name, count, games, seed, sandbox)
        rows.append(
            {
                "game": name,
                "players": count,
                "games": games,
                "decisions_per_game": round(result.decisions_per_game, 1),
                "reused_games_per_s": round(result.reused.games_per_s, 2),
                "rotated_games_per_s": round(result.rotated.games_per_s, 2),
                "restarted_games_per_s": round(result.restarted.games_per_s, 2),
                "rotated_starts_per_game": round(result.rotated.starts_per_game, 3),
                "rotation_cost": round(result.rotation_cost, 2),
                "start_ms_per_game": round(result.start_s * 1000, 1),
                "speedup": round(result.speedup, 1),
            }
        )
    if as_json:
        echo_json(rows)
        return
    placement = (", every process on one core" if one_core else "") + ("" if sandbox else ", bots unsandboxed")
    echo(
        f"{games} games of random bots per match{placement}: games/s with the processes reused (every game a new "
        "deal), restarted for every seat rotation (duplicate deals, as leagues play) and started for every game:"
    )
    headers = {
        "game": "game",
        "players": "seats",
        "games": "games",
        "decisions_per_game": "decisions/game",
        "reused_games_per_s": "reused",
        "rotated_games_per_s": "rotations",
        "restarted_games_per_s": "per game",
        "rotated_starts_per_game": "starts/game",
        "rotation_cost": "rotation cost",
        "start_ms_per_game": "start ms/game",
        "speedup": "speedup",
    }
    echo(tabulate(rows, headers=headers, tablefmt=tablefmt))


bench.add_command(isolation_bench)
bench.add_command(ladder_bench)
bench.add_command(league_bench)
bench.add_command(ratings_bench)
bench.add_command(settle_bench)


@bench.command(name="rl")
@click.argument("game", type=click.Choice(list_games()))
@click.option("--players", "-p", type=int, default=4, show_default=True, help=_seats)
@click.option(
    "--seconds",
    type=float,
    default=3.0,
    show_default=True,
    help="Play whole games through each API for at least this long.",
)
@_bench_seed
@json_option
def rl(game: str, players: int, seconds: float, seed: int, as_json: bool) -> None:
    """Env steps/s of random play through the learning environments (needs the rl extra).

    Plays GAME at random through the engine alone, the PettingZoo environment (observation vector, mask and
    action features built at every step), the OpenSpiel game (chance nodes not counted) and the batched
    environment (8 games a step), each for --seconds, and prints each one's steps/s, the microseconds a step
    took per game (min/median/max over its games) and how many times slower than the engine it is.
    """
    speeds = bench_rl(game, players, seconds, seed)
    engine_speed = speeds[0].steps_per_second
    engine_median = speeds[0].step_us[1]
    rows = [
        {
            "api": speed.api,
            "games": speed.games,
            "steps": speed.steps,
            "steps_per_s": round(speed.steps_per_second),
            "us_per_step": [round(value, 1) for value in speed.step_us],
            "engine_over_api": round(engine_speed / speed.steps_per_second, 2),
            "median_over_engine": round(speed.step_us[1] / engine_median, 2),
        }
        for speed in speeds
    ]
    if as_json:
        echo_json({"game": game, "players": players, "apis": rows})
        return
    echo(f"{game}, {players} players, random play:")
    table = [
        [*(row[key] for key in ("api", "games", "steps", "steps_per_s")), "/".join(f"{us:.1f}" for us in speed.step_us)]
        + [row["engine_over_api"], row["median_over_engine"]]
        for row, speed in zip(rows, speeds, strict=True)
    ]
    headers = ["api", "games", "steps", "steps/s", "us/step min/median/max", "x engine", "x engine (median)"]
    echo(tabulate(table, headers=headers))
