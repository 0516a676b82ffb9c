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

from referee.match import run_match
from referee.records import GameRecord

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
from ..ratings.elo import DEFAULT_PRIOR_DRAWS, Anchor, RatingInputError, Ratings, rate_tallies
from ..ratings.settling import SettleRule
from ..ratings.tables import crosstable, ratings_json, ratings_table
from ..ratings.tallies import GameTallies
from ..settle import SettleResult, SettleRound, SettleSettings, Stop, settle_league
from .options import (
    anchor_option,
    bootstrap_option,
    echo_json,
    json_option,
    league_anchor,
    pin_option,
    prior_draws_option,
    replay_format_option,
    sandbox_option,
    settle_rule,
    settle_rule_options,
    tablefmt_option,
)
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
@click.option(
    "--until-settled",
    is_flag=True,
    help="After the schedule, keep playing rounds of matches where the table's order is undecided, until every "
    "adjacent pair is separated (--settle-los) or known within --resolution, or --max-games is spent "
    "(README: Settled tables). [default: the league file's until_settled]",
)
@click.option(
    "--max-games",
    type=click.IntRange(min=1),
    default=None,
    help="The settling budget: stop before the stored games (all of them) would pass N. [default: the league "
    "file's max_games, else 10 times the schedule's games]",
)
@settle_rule_options
@anchor_option
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
    until_settled: bool,
    max_games: int | None,
    settle_los: float | None,
    resolution: float | None,
    min_games: int | None,
    anchor: Anchor | None,
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

    With --until-settled (or until_settled = true in the file) the schedule is the floor of games for every bot;
    then each round gives every open adjacent pair of the table matches that add about a quarter to the games
    the two have shared (the pair, and at more seats the bots nearest to it in Elo), every decided pair one, and
    a quarter as many again drawn uniformly (seeded by the league and the round), each a balanced design on new
    deals, until the table is settled or the budget is spent. A rerun resumes a
    stopped round and decides the next from the stored results, so nothing is played twice.
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
    settling = until_settled or any(league.until_settled for _, league in loaded)
    if settling and bootstrap < 1:
        raise click.UsageError("--until-settled judges the table by its bootstrap: give --bootstrap 1 or more")
    if max_games is not None and not settling:
        raise click.UsageError("--max-games is the settling budget: give --until-settled with it")
    for path, league in loaded:
        store_path = Path(db) if db else league.default_db
        rule = settle_rule(settle_los, resolution, min_games, league)
        with _store(store_path) as store:
            plan = _plan(league, store, sandbox)
            _play(plan, store, executor, path, db)
            settled = None
            if until_settled or league.until_settled:
                settings = SettleSettings(rule, max_games or league.max_games, bootstrap)
                settled = _settle(plan, store, executor, settings, sandbox, path, db)
            result = _results(store, league.name, bootstrap, anchor=league_anchor(anchor, league), rule=rule)
        if as_json:
            documents.append(_results_json(result, with_crosstable, settled))
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
@settle_rule_options
@anchor_option
@json_option
@tablefmt_option
def table_command(
    league: str | None,
    db: str | None,
    with_crosstable: bool,
    bootstrap: int,
    prior_draws: float,
    settle_los: float | None,
    resolution: float | None,
    min_games: int | None,
    anchor: Anchor | None,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Print the Elo table of a league's store (give LEAGUE.toml, or --db FILE).

    Columns: Rank, Bot, Elo (Bradley-Terry with BayesElo's prior of virtual draws, mean 0), +/- (95% bootstrap
    interval over games), Games, Score, W/D/L (two seats) or mean rank (more seats), Faults (with the games forfeited in
    parentheses), LOS (likelihood
    of superiority over the next bot), Group (bots the games cannot tell apart: adjacent bots whose LOS is below
    --settle-los are one group, chained), then a line saying whether the table is settled (every adjacent pair
    separated or known within --resolution) and, if not, about how many more games would settle it. The same
    games give the same table as `tournament rate`. Bots no longer in the league file are listed as retired
    under the table.
    """
    if (league is None) == (db is None):
        raise click.UsageError("give either LEAGUE.toml or --db FILE")
    loaded = None if league is None else _load(league)
    store_path = Path(db) if db else loaded.default_db  # type: ignore[union-attr]
    rule = settle_rule(settle_los, resolution, min_games, loaded)
    with _store(store_path, create=False) as store:
        result = _results(
            store, store.league_name() or store_path.stem, bootstrap, prior_draws, league_anchor(anchor, loaded), rule
        )
    if as_json:
        echo_json(_results_json(result, with_crosstable))
    else:
        _print_results(result, with_crosstable, tablefmt)


def _settle(
    plan: LeaguePlan,
    store: LeagueStore,
    executor: Executor,
    settings: SettleSettings,
    sandbox: bool,
    path: str,
    db: str | None,
) -> SettleResult:
    def announce(settle_round: SettleRound) -> None:
        pairs = ", ".join(f"{pair.upper}/{pair.lower}" for pair in settle_round.verdict.open_pairs)
        games = sum(len(match.games) for match in settle_round.matches)
        click.echo(
            f"settling round {settle_round.number}: {len(settle_round.verdict.open_pairs)} open pair(s) ({pairs}); "
            f"{len(settle_round.matches)} match(es), {games} games ({settle_round.stored} stored, budget "
            f"{settle_round.budget})",
            err=True,
        )

    try:
        result = settle_league(
            plan.league, store, executor, settings, scheduled_games=plan.scheduled, sandbox=sandbox, on_round=announce
        )
    except KeyboardInterrupt:
        rule = settings.rule
        resume = shlex.join(
            [
                "referee", "tournament", "run", path, "--until-settled", *(["--db", db] if db else []),
                *(["--max-games", str(settings.max_games)] if settings.max_games else []),
                "--settle-los", f"{rule.level:g}", "--resolution", f"{rule.resolution:g}",
                "--min-games", str(rule.min_games),
            ]
        )
        click.echo(f"Stopped: {store.game_count()} games are stored in {store.path}. Resume with: {resume}", err=True)
        raise
    except (ExecutorError, StoreError) as error:
        raise click.ClickException(f"{error} (the games stored so far are kept; rerun to resume)") from error
    click.echo(_settle_summary(result), err=True)
    return result


def _settle_summary(result: SettleResult) -> str:
    done = f"after {result.rounds} settling round(s), {result.games} games"
    if result.stop is Stop.SETTLED:
        return f"Settled {done}."
    if result.stop is Stop.BUDGET:
        return f"Not settled {done}: the budget of {result.budget} games is spent (raise --max-games to go on)."
    return f"Not settled {done}: no table would help (pools that never met, or open pairs of retired bots)."


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
        click.echo(
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
        click.echo(f"note: {note}", err=True)
    return plan


def _play(plan: LeaguePlan, store: LeagueStore, executor: Executor, path: str, db: str | None) -> None:
    league = plan.league
    click.echo(
        f"{league.name}: {league.game}, {league.players} seats, {len(league.bots)} bots; "
        f"{plan.scheduled} games scheduled, {plan.stored} already in {store.path}",
        err=True,
    )
    if plan.specs and league.log_dir is not None:
        click.echo(f"bot logs in {league.log_dir}/MATCH/BOT.log", err=True)
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
        click.echo(
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
    click.echo(
        f"Played {added} games in {format_duration(elapsed)} ({added / max(elapsed, 1e-9):.2f} games/s)", err=True
    )


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
    rule: SettleRule


def _results(
    store: LeagueStore,
    name: str,
    bootstrap: int,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    anchor: Anchor | None = None,
    rule: SettleRule | None = None,
) -> _LeagueResults:
    tallies = GameTallies.of_counts(store.outcome_counts())
    try:
        ratings = rate_tallies(tallies, bootstrap=bootstrap, prior_draws=prior_draws, anchor=anchor)
    except RatingInputError as error:
        raise click.ClickException(str(error)) from error
    return _LeagueResults(
        name, tallies.games, ratings, dict(store.fault_counts()), dict(store.forfeit_counts()),
        store.retired_bots(),
        store.unsandboxed_game_count(),
        rule or SettleRule(),
    )


def _results_json(
    result: _LeagueResults, with_crosstable: bool, settled: SettleResult | None = None
) -> dict[str, Any]:
    document = {
        "league": result.name,
        "games": result.games,
        "unsandboxed_games": result.unsandboxed,
        **ratings_json(result.ratings, result.faults, with_crosstable, forfeits=result.forfeits, rule=result.rule),
        "retired": result.retired,
    }
    if settled is not None:
        document["settling"] = {
            "stop": settled.stop.value,
            "rounds": settled.rounds,
            "games": settled.games,
            "budget": settled.budget,
        }
    return document


def _print_results(result: _LeagueResults, with_crosstable: bool, tablefmt: str) -> None:
    click.echo(f"{result.name}: {result.games} games")
    click.echo(
        ratings_table(
            result.ratings,
            tablefmt=tablefmt, faults=result.faults, forfeits=result.forfeits,
            unsandboxed=result.unsandboxed, rule=result.rule,
        )
    )
    if result.retired:
        click.echo(f"Retired (no longer in the league file; their games still count): {', '.join(result.retired)}")
    if with_crosstable and result.ratings.bots:
        click.echo()
        click.echo(crosstable(result.ratings, tablefmt=tablefmt))
    click.echo()
