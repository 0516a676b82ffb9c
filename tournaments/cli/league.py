"""`referee tournament run` and `referee tournament table`: play a league into its store, print its table."""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from protocol.safe_text import one_line
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import GameRecord

from ..classroom.grade_formats import soft_play_json
from ..league.executors import (
    DaskExecutor,
    DaskUnavailable,
    Executor,
    ExecutorError,
    LocalExecutor,
    default_concurrency,
    import_distributed,
)
from ..league.league_file import League, LeagueFileError, load_league
from ..league.runner import LeaguePlan, plan_league, play_league
from ..league.store import LeagueStore, StoreError
from ..pages.writer import PagesRunner, ReplayFormat
from ..ratings.elo import DEFAULT_PRIOR_DRAWS, RatingInputError, Ratings, rate_tallies
from ..ratings.soft_play import SoftPlayCheck, soft_play_check
from ..ratings.tables import crosstable, ratings_json, ratings_table
from ..ratings.tallies import GameTallies
from .options import (
    bootstrap_option,
    echo_json,
    json_option,
    pin_option,
    prior_draws_option,
    replay_format_option,
    sandbox_option,
    tablefmt_option,
)
from .output import echo
from .progress import Leaderboard, ProgressLine, format_duration

crosstable_option = click.option(
    "--crosstable", "with_crosstable", is_flag=True, help="Also print the pairwise points of every pair."
)


@click.command(name="run")
@click.argument("leagues", metavar="LEAGUE.toml...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Matches played at once by local worker processes  [default: the number of cores]",
)
@pin_option
@click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Play on the Dask cluster of this scheduler (tcp://host:8786) instead of local processes. Needs the "
    "extra card-referee[dask]; every worker needs the project and the bots at the same paths as here.",
)
@replay_format_option
@sandbox_option
@crosstable_option
@bootstrap_option
@json_option
@tablefmt_option
def run_command(
    leagues: tuple[str, ...],
    concurrency: int | None,
    pinned: bool,
    db: str | None,
    scheduler: str | None,
    replay_format: ReplayFormat,
    sandbox: bool,
    with_crosstable: bool,
    bootstrap: int,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Play the league(s) described by LEAGUE.toml into the store and print the Elo table of each.

    The store keeps every game as soon as it ends. Run the same command again to resume: only the missing
    games are played; bots added to the file get only their new matches. A file that changes the game
    options, the limits, or a stored bot's command or program is refused (`referee tournament forget` drops
    a resubmitted bot's games). Ctrl-C stops cleanly (the bots are stopped, finished games are kept).
    Progress, with the ETA and the current leader, goes to stderr. Replays go to the league's replay_dir
    (--replay-format html writes each game as a page to step through there).
    """
    if db is not None and len(leagues) > 1:
        raise click.UsageError("--db names one store: give one LEAGUE.toml with it")
    if scheduler is not None and concurrency is not None:
        raise click.UsageError("--concurrency is for local workers; a Dask cluster runs as many tasks as its workers")
    executor = _executor(concurrency, scheduler, pinned, replay_format)
    documents = []
    loaded = [(path, _load(path)) for path in leagues]
    for path, league in loaded:
        if replay_format is not ReplayFormat.JSON and league.replay_dir is None:
            raise click.ClickException(
                f"{path}: --replay-format {replay_format} writes into the league's replay_dir; set replay_dir"
            )
    for path, league in loaded:
        store_path = Path(db) if db else league.default_db
        with _store(store_path) as store:
            plan = _plan(league, store, sandbox)
            _play(plan, store, executor, path, db)
            result = _results(store, league.name, bootstrap)
        if as_json:
            documents.append(_results_json(result, with_crosstable))
        else:
            _print_results(result, with_crosstable, tablefmt)
    if as_json:
        echo_json(documents[0] if len(documents) == 1 else documents)


@click.command(name="table")
@click.argument("league", metavar="[LEAGUE.toml]", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--db", type=click.Path(dir_okay=False), help="The result store  [default: LEAGUE.sqlite beside the file]"
)
@crosstable_option
@bootstrap_option
@prior_draws_option
@json_option
@tablefmt_option
def table_command(
    league: str | None,
    db: str | None,
    with_crosstable: bool,
    bootstrap: int,
    prior_draws: float,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Print the Elo table of a league's store (give LEAGUE.toml, or --db FILE).

    Columns: Rank, Bot, Elo (Bradley-Terry with BayesElo's prior of virtual draws, mean 0), +/- (95% bootstrap
    interval over games), Games, Score, W/D/L (two seats) or mean rank (more seats), Faults (with the games forfeited in
    parentheses), LOS (likelihood
    of superiority over the next bot). The same games give the same table as `tournament rate`. Bots no longer in the
    league file are listed as retired under the table.
    """
    if (league is None) == (db is None):
        raise click.UsageError("give either LEAGUE.toml or --db FILE")
    store_path = Path(db) if db else _load(league).default_db  # type: ignore[arg-type]
    with _store(store_path, create=False) as store:
        result = _results(store, store.league_name() or store_path.stem, bootstrap, prior_draws)
    if as_json:
        echo_json(_results_json(result, with_crosstable))
    else:
        _print_results(result, with_crosstable, tablefmt)


def _executor(concurrency: int | None, scheduler: str | None, pinned: bool, replay_format: ReplayFormat) -> Executor:
    runner = run_match if replay_format is ReplayFormat.JSON else PagesRunner(replay_format)
    if scheduler is not None:
        try:
            import_distributed()
        except DaskUnavailable as error:
            raise click.ClickException(str(error)) from error
        return DaskExecutor(scheduler, runner=runner)
    cores = default_concurrency()
    if concurrency is not None and concurrency > cores:
        echo(
            f"warning: --concurrency {concurrency} is more than the {cores} cores here; bots may miss their time "
            "limits",
            err=True,
        )
    return LocalExecutor(concurrency or cores, runner, pinned=pinned)


def _load(path: str) -> League:
    try:
        return load_league(path)
    except LeagueFileError as error:
        raise click.ClickException(str(error)) from error


@contextmanager
def _store(path: Path, create: bool = True) -> Iterator[LeagueStore]:
    try:
        store = LeagueStore(path, create=create)
    except StoreError as error:
        raise click.ClickException(str(error)) from error
    with store:
        yield store


def _plan(league: League, store: LeagueStore, sandbox: bool) -> LeaguePlan:
    try:
        plan = plan_league(league, store, sandbox=sandbox)
    except StoreError as error:
        raise click.ClickException(str(error)) from error
    for note in plan.notes:
        echo(f"note: {note}", err=True)
    return plan


def _play(plan: LeaguePlan, store: LeagueStore, executor: Executor, path: str, db: str | None) -> None:
    league = plan.league
    echo(
        f"{league.name}: {league.game}, {league.players} seats, {len(league.bots)} bots; "
        f"{plan.scheduled} games scheduled, {plan.stored} already in {store.path}",
        err=True,
    )
    if plan.specs and league.log_dir is not None:
        echo(f"bot logs in {league.log_dir}/MATCH/BOT.log", err=True)
    if not plan.specs:
        return
    progress = ProgressLine(plan.scheduled, plan.stored, Leaderboard(GameTallies.of_counts(store.outcome_counts())))
    progress.draw(force=True)
    started = time.monotonic()

    def shown(record: GameRecord) -> None:
        progress.advance(dict(zip(record.seats, record.ranks, strict=True)))

    try:
        added = play_league(plan, store, executor, on_stored=shown)
    except KeyboardInterrupt:
        progress.close()
        resume = shlex.join(["referee", "tournament", "run", path, *(["--db", db] if db else [])])
        echo(
            f"Stopped: {store.game_count()} of {plan.scheduled} games are stored in {store.path}. "
            f"Resume with: {resume}",
            err=True,
        )
        raise
    except (ExecutorError, StoreError) as error:
        progress.close()
        raise click.ClickException(f"{error} (the games stored so far are kept; rerun to resume)") from error
    progress.close()
    elapsed = time.monotonic() - started
    echo(f"Played {added} games in {format_duration(elapsed)} ({added / max(elapsed, 1e-9):.2f} games/s)", err=True)


@dataclass(frozen=True)
class _LeagueResults:
    name: str
    games: int
    ratings: Ratings
    faults: dict[str, int]
    forfeits: dict[str, int]
    retired: list[str]
    """Bots no longer in the league file whose games still count."""
    unsandboxed: int
    """Games played without the sandbox."""
    isolation: dict[str, int]
    """Games played at each isolation level (full, partial, none)."""
    soft_play: SoftPlayCheck


def _results(store: LeagueStore, name: str, bootstrap: int, prior_draws: float = DEFAULT_PRIOR_DRAWS) -> _LeagueResults:
    tallies = GameTallies.of_counts(store.outcome_counts())
    try:
        ratings = rate_tallies(tallies, bootstrap=bootstrap, prior_draws=prior_draws)
    except RatingInputError as error:
        raise click.ClickException(str(error)) from error
    return _LeagueResults(
        name,
        tallies.games,
        ratings,
        dict(store.fault_counts()),
        dict(store.forfeit_counts()),
        store.retired_bots(),
        store.unsandboxed_game_count(),
        {level.value: store.isolation_counts().get(level, 0) for level in Isolation},
        soft_play_check([game.ranks for game in store.games()]),
    )


def _results_json(result: _LeagueResults, with_crosstable: bool) -> dict[str, Any]:
    return {
        "league": result.name,
        "games": result.games,
        "unsandboxed_games": result.unsandboxed,
        "isolation_games": result.isolation,
        "soft_play": soft_play_json(result.soft_play),
        **ratings_json(result.ratings, result.faults, with_crosstable, forfeits=result.forfeits),
        "retired": result.retired,
    }


def _print_results(result: _LeagueResults, with_crosstable: bool, tablefmt: str) -> None:
    echo(f"{result.name}: {result.games} games")
    echo(
        ratings_table(
            result.ratings,
            tablefmt=tablefmt,
            faults=result.faults,
            forfeits=result.forfeits,
            unsandboxed=result.unsandboxed,
        )
    )
    partial = result.isolation[Isolation.PARTIAL.value]
    if partial:
        echo(
            f"{partial} game(s) were played with partial isolation: some bots had no uid, cgroup or seccomp filter "
            "of their own (`referee doctor` says what this machine lacks)."
        )
    flagged = result.soft_play.flagged
    echo(
        f"Soft play: {len(flagged)} of {len(result.soft_play.pairs)} pairs flagged (Holm-adjusted p below "
        f"{result.soft_play.alpha:g}; tournaments/ratings/soft_play.py)"
        + "".join(f"\n  {one_line(pair.summary())}" for pair in flagged)
    )
    if result.retired:
        echo(f"Retired (no longer in the league file; their games still count): {', '.join(result.retired)}")
    if with_crosstable and result.ratings.bots:
        echo()
        echo(crosstable(result.ratings, tablefmt=tablefmt))
    echo()
