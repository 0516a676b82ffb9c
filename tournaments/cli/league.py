"""`referee tournament run` and `referee tournament table`: play a league into its store, print its table."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from protocol.safe_text import one_line
from referee.isolation.sandbox import Isolation
from referee.match import run_match
from referee.records import FaultCause, GameRecord

from ..classroom.grade_formats import soft_play_json
from ..league.builds import BuildOutcome
from ..league.executors import Executor, LocalExecutor, MatchRunner, default_concurrency
from ..league.league_file import League, load_league
from ..league.planning import MATCH_START_S
from ..league.runner import LeaguePlan
from ..league.store import Forgotten, LeagueStore
from ..league_report import LeagueResults, league_results, remote_notes
from ..league_run import RETRY_FAULTS, RunOptions, RunProgress, Stage, estimate_run, run_league
from ..pages.writer import PagesRunner, ReplayFormat
from ..ratings.elo import Anchor
from ..ratings.tables import crosstable, ratings_json, ratings_table
from ..ratings.tallies import GameTallies
from ..settle import SettleResult, SettleRound, Stop
from .dask_options import check_dask_usage, dask_executor, dask_options
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
from .output import echo
from .policy_check import check_league_policies
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
    help="Play on the Dask cluster of this scheduler (tls://host:8786, with --scheduler-tls) instead of local "
    "processes. Needs the extra card-referee[dask]; every worker needs the project and the bots at the same paths "
    "as here.",
)
@click.option(
    "--replay-changed",
    is_flag=True,
    help="Forget the stored games of every bot whose program (or declared version) changed, saying who, and "
    "play its matches again with the new program. Without it such a bot is held: its games stay as they were "
    "and its missing ones wait, while every other bot's games are played.",
)
@click.option(
    "--retry-faulted",
    "retry_kinds",
    multiple=True,
    type=click.Choice(RETRY_FAULTS),
    metavar="FAULT",
    help="Drop and play again every stored game with a fault of FAULT, a cause ("
    + ", ".join(FaultCause)
    + "; startup-timeout, also called startup, is no hello within the startup limit: a slow or loaded machine "
    "rather than the bot) or a kind (timeout, crash, illegal_action, protocol_error: all its causes). Other "
    "games are kept. Repeat for several.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Play nothing, write nothing: say how many games the run would play and estimate how long they would "
    "take at this --concurrency (from the store's timings if it has games, else from a stated assumption).",
)
@replay_format_option
@sandbox_option
@dask_options
@click.option(
    "--until-settled",
    is_flag=True,
    help="After the schedule, keep playing rounds of matches where the table's order is undecided, until every "
    "adjacent pair is separated (--settle-los) or known within --resolution, or --max-games is spent "
    "(docs/how-to/settle-a-table.md, or the docs site's 'Settle a table' page). [default: the league file's "
    "until_settled]",
)
@click.option(
    "--max-games",
    type=click.IntRange(min=1),
    default=None,
    help="The settling budget: stop before the stored games (all of them) would pass N. [default: the league "
    "file's max_games, else the schedule's games plus, for every adjacent pair, twice the games two equal bots need "
    "to be known within --resolution: 186 at 100 Elo (docs/explanation/ratings.md, or the docs site's 'Ratings')]",
)
@settle_rule_options
@anchor_option
@crosstable_option
@bootstrap_option
@prior_draws_option
@json_option
@tablefmt_option
def run_command(
    leagues: tuple[str, ...],
    concurrency: int | None,
    pinned: bool,
    db: str | None,
    scheduler: str | None,
    replay_changed: bool,
    retry_kinds: tuple[str, ...],
    dry_run: bool,
    replay_format: ReplayFormat,
    sandbox: bool,
    scheduler_tls: Path | None,
    require_isolation: str | None,
    until_settled: bool,
    max_games: int | None,
    settle_los: float | None,
    resolution: float | None,
    min_games: int | None,
    anchor: Anchor | None,
    with_crosstable: bool,
    bootstrap: int,
    prior_draws: float,
    as_json: bool,
    tablefmt: str,
) -> None:
    """Play the league(s) described by LEAGUE.toml into the store and print the Elo table of each.

    The store keeps every game as soon as it ends. Run the same command again to resume: only the missing
    games are played; bots added to the file get only their new matches. A file that changes the game
    options or the limits is refused. A bot whose command or program changed is held (its games kept, its
    missing ones waiting) and named; --replay-changed replays its matches with the new program (as
    `referee tournament forget` then a run would). Submission folders with a build in their bot.toml are
    built first (their output in LOG_DIR/builds/NAME.log). Ctrl-C or SIGTERM stops cleanly within seconds
    (the bots are stopped, finished games are kept; exit 130 or 143). Progress, with the ETA and the current
    leader, goes to stderr. Replays go to the league's replay_dir (--replay-format html writes each game as a
    page to step through there).

    With --until-settled (or until_settled = true in the file) the schedule is the floor of games for every bot;
    then each round gives every open adjacent pair of the table matches that add about a quarter to the games
    the two have shared (the pair, and at more seats the bots nearest to it in Elo), every decided pair one, and
    as many again drawn uniformly (seeded by the league and the round: games the results did not choose, which
    keep the intervals honest), each a balanced design on new
    deals, until the table is settled or the budget is spent. A rerun resumes a
    stopped round and decides the next from the stored results, so nothing is played twice.
    """
    _check_run_usage(leagues, db, scheduler, concurrency)
    check_dask_usage(scheduler, scheduler_tls, require_isolation)
    if dry_run:
        _dry_runs(leagues, db, concurrency or default_concurrency(), replay_changed)
        return
    runner = run_match if replay_format is ReplayFormat.JSON else PagesRunner(replay_format)
    executor = (
        dask_executor(scheduler, scheduler_tls, require_isolation, sandbox, runner)
        if scheduler is not None
        else _executor(concurrency, pinned, runner)
    )
    loaded = [(path, load_league(path)) for path in leagues]
    _check_league_usage(loaded, replay_format, until_settled, bootstrap, max_games)
    for _path, league in loaded:
        check_league_policies(league)
    documents = []
    for path, league in loaded:
        options = RunOptions(
            sandbox=sandbox,
            replay_changed=replay_changed,
            retry_faulted=retry_kinds,
            until_settled=until_settled,
            max_games=max_games,
            rule=settle_rule(settle_los, resolution, min_games, league),
            bootstrap=bootstrap,
            prior_draws=prior_draws,
            anchor=league_anchor(anchor, league),
        )
        with LeagueStore(Path(db) if db else league.default_db) as store:
            printer = RunPrinter(path, db, options, league, given_options(click.get_current_context(), NOT_RESUMED))
            run = run_league(league, store, executor, options, printer)
        if as_json:
            documents.append(results_json(run.results, with_crosstable, run.settled))
        else:
            print_results(run.results, with_crosstable, tablefmt)
    if as_json:
        echo_json(documents[0] if len(documents) == 1 else documents)


def _check_run_usage(leagues: tuple[str, ...], db: str | None, scheduler: str | None, concurrency: int | None) -> None:
    if db is not None and len(leagues) > 1:
        raise click.UsageError("--db names one store: give one LEAGUE.toml with it")
    if scheduler is not None and concurrency is not None:
        raise click.UsageError("--concurrency is for local workers; a Dask cluster runs as many tasks as its workers")


def _check_league_usage(
    loaded: list[tuple[str, League]],
    replay_format: ReplayFormat,
    until_settled: bool,
    bootstrap: int,
    max_games: int | None,
) -> None:
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
    loaded = None if league is None else load_league(league)
    store_path = Path(db) if db else loaded.default_db  # type: ignore[union-attr]
    rule = settle_rule(settle_los, resolution, min_games, loaded)
    with LeagueStore(store_path, create=False) as store:
        result = league_results(
            store,
            loaded,
            name=store.league_name() or store_path.stem,
            bootstrap=bootstrap,
            prior_draws=prior_draws,
            anchor=league_anchor(anchor, loaded),
            rule=rule,
        )
    if as_json:
        echo_json(results_json(result, with_crosstable))
    else:
        print_results(result, with_crosstable, tablefmt)


class RunPrinter(RunProgress):
    """A run's progress on stderr: what it forgot, retried, noted and built, the progress line while it plays, each
    settling round, and on Ctrl-C the command that resumes it."""

    def __init__(
        self, path: str, db: str | None, options: RunOptions, league: League, given: Sequence[str] = ()
    ) -> None:
        self.path = path
        self.db = db
        self.options = options
        self.league = league
        self.given = tuple(given)
        """The options the command was given that a resume repeats (given_options)."""
        self.progress: ProgressLine | None = None

    def replaying(self, bot: str, why: str, forgotten: Forgotten) -> None:
        echo(f"replaying {bot!r}{why}: dropped {forgotten.games} game(s) of {forgotten.matches} match(es)", err=True)

    def retrying(self, kind: str, dropped: int) -> None:
        echo(f"retrying {dropped} game(s) with a {kind} fault", err=True)

    def note(self, text: str) -> None:
        echo(f"note: {text}", err=True)

    def built(self, outcome: BuildOutcome) -> None:
        if outcome.ok:
            said = "built earlier" if outcome.reused else one_line(outcome.detail)
        else:
            said = "its build failed" + (" earlier" if outcome.reused else "") + "; it forfeits its games"
        echo(f"build: {one_line(outcome.bot)}: {said} (log: {outcome.log})", err=True)

    def planned(self, plan: LeaguePlan, store: LeagueStore) -> None:
        league = plan.league
        echo(
            f"{league.name}: {league.game}, {league.players} seats, {len(league.bots)} bots; "
            f"{plan.scheduled} games scheduled, {plan.stored} already in {store.path}",
            err=True,
        )
        if plan.specs and league.log_dir is not None:
            echo(f"bot logs in {league.log_dir}/MATCH/BOT.log", err=True)
        if plan.specs:
            leaderboard = Leaderboard(GameTallies.of_counts(store.outcome_counts()))
            self.progress = ProgressLine(plan.scheduled, plan.stored, leaderboard)
            self.progress.draw(force=True)

    def stored(self, record: GameRecord) -> None:
        if self.progress is not None:
            self.progress.advance(dict(zip(record.seats, record.ranks, strict=True)))

    def play_ended(self) -> None:
        if self.progress is not None:
            self.progress.close()

    def played(self, added: int, seconds: float) -> None:
        echo(f"Played {added} games in {format_duration(seconds)} ({added / max(seconds, 1e-9):.2f} games/s)", err=True)

    def settling_round(self, settle_round: SettleRound) -> None:
        pairs = ", ".join(f"{pair.upper}/{pair.lower}" for pair in settle_round.verdict.open_pairs)
        suspected = ", ".join(f"{pair.bot}/{pair.partner}" for pair in settle_round.suspected)
        games = sum(len(match.games) for match in settle_round.matches)
        echo(
            f"settling round {settle_round.number}: {len(settle_round.verdict.open_pairs)} open pair(s) ({pairs}); "
            + (f"soft play suspected ({suspected}); " if suspected else "")
            + f"{len(settle_round.matches)} match(es), {games} games ({settle_round.stored} stored, budget "
            f"{settle_round.budget})",
            err=True,
        )

    def settled(self, result: SettleResult) -> None:
        echo(_settle_summary(result), err=True)

    def stopped(self, stage: Stage, plan: LeaguePlan, store: LeagueStore) -> None:
        """Say what is stored and the command that resumes the run as it was: its options (the settling ones
        spelled out once settling had begun, as the league file's defaults may change meanwhile)."""
        run = ["referee", "tournament", "run", self.path]
        if stage is Stage.PLAY:
            resume = shlex.join([*run, *self.given])
            stored = f"{store.game_count()} of {plan.scheduled} games are"
        else:
            kept = _without(self.given, SETTLE_WORDS)
            resume = shlex.join([*run, *kept, "--until-settled", *self._settle_options()])
            stored = f"{store.game_count()} games are"
        echo(f"Stopped: {stored} stored in {store.path}. Resume with: {resume}", err=True)

    def _settle_options(self) -> list[str]:
        settings = self.options.settle_settings(self.league)
        rule = settings.rule
        return [
            *(["--db", self.db] if self.db else []),
            *(["--max-games", str(settings.max_games)] if settings.max_games else []),
            "--settle-los",
            f"{rule.level:g}",
            "--resolution",
            f"{rule.resolution:g}",
            "--min-games",
            str(rule.min_games),
        ]


NOT_RESUMED = ("retry_kinds", "dry_run")
"""Options a resume does not repeat: the games --retry-faulted dropped are missing, so the resume plays them; given
again, it would drop those the stopped run played with a fault."""
SETTLE_WORDS = ("--db", "--until-settled", "--max-games", "--settle-los", "--resolution", "--min-games")
"""What a settling resume spells out itself (RunPrinter._settle_options)."""


def given_options(context: click.Context, leave_out: Sequence[str] = ()) -> list[str]:
    """The options given to the command (on its command line or in the environment), as words that give them
    again: each by its longest name, a flag as itself or its --no- form, a repeated option once per value."""
    words: list[str] = []
    for param in context.command.params:
        if not isinstance(param, click.Option) or param.name is None or param.name in leave_out:
            continue
        if context.get_parameter_source(param.name) not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            continue
        value = context.params[param.name]
        name = max(param.opts, key=len)
        if param.is_flag and param.secondary_opts:
            words.append(name if value else max(param.secondary_opts, key=len))
        elif param.is_flag:
            words += [name] if value else []
        elif param.multiple:
            words += [word for item in value for word in (name, str(item))]
        elif value is not None:
            words += [name, str(value)]
    return words


def _without(words: Sequence[str], options: Sequence[str]) -> list[str]:
    """`words` (given_options') without the options named, with their values."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in options:
            skip = word != "--until-settled"
        else:
            kept.append(word)
    return kept


def _settle_summary(result: SettleResult) -> str:
    done = f"after {result.rounds} settling round(s), {result.games} games"
    if result.stop is Stop.SETTLED:
        return f"Settled {done}."
    if result.stop is Stop.BUDGET:
        return f"Not settled {done}: the budget of {result.budget} games is spent (raise --max-games to go on)."
    return f"Not settled {done}: no table would help (pools that never met, or open pairs of retired bots)."


def _executor(concurrency: int | None, pinned: bool, runner: MatchRunner) -> Executor:
    cores = default_concurrency()
    if concurrency is not None and concurrency > cores:
        echo(
            f"warning: --concurrency {concurrency} is more than the {cores} cores here; bots may miss their time "
            "limits",
            err=True,
        )
    return LocalExecutor(concurrency or cores, runner, pinned=pinned)


def _dry_runs(leagues: tuple[str, ...], db: str | None, concurrency: int, replay_changed: bool) -> None:
    for path in leagues:
        league = load_league(path)
        check_league_policies(league)
        _dry_run(league, Path(db) if db else league.default_db, concurrency, replay_changed)


def _dry_run(league: League, store_path: Path, concurrency: int, replay_changed: bool) -> None:
    for note in league.skipped:
        echo(f"note: {note}", err=True)
    estimate = estimate_run(league, store_path, concurrency, replay_changed)
    builds = sum(bot.submission is not None and bot.submission.build is not None for bot in league.bots)
    basis = (
        f"measured: {estimate.decisions_per_game:.0f} decisions per game, {estimate.ms_per_decision:.1f} ms each"
        if estimate.measured
        else f"assumed: {estimate.decisions_per_game:.0f} decisions per game (random play), "
        f"{estimate.ms_per_decision:g} ms each, a quick bot"
    )
    echo(
        f"{league.name}: {len(league.bots)} bots ({len(league.skipped)} folder(s) skipped, {builds} to build); "
        f"{estimate.games} games in {estimate.matches} matches to play, {estimate.stored} stored"
        + (f", {estimate.held} waiting for changed bots" if estimate.held else "")
    )
    if estimate.changed:
        replays = "replayed" if replay_changed else "held (--replay-changed replays them)"
        echo(
            f"changed since their stored games: {', '.join(map(one_line, estimate.changed))}; "
            f"{estimate.changed_games} stored game(s) of their matches {replays}"
        )
    echo(
        f"estimate at -j {concurrency}: {format_duration(estimate.seconds)} ({basis}; {MATCH_START_S:g} s to start "
        f"each match's bots); at worst, every decision at the {league.limits.move_time_ms} ms clock and every bot "
        f"its {league.limits.startup_time_s:g} s start-up, one at a time: "
        f"{format_duration(estimate.worst_seconds)}"
    )


def results_json(result: LeagueResults, with_crosstable: bool, settled: SettleResult | None = None) -> dict[str, Any]:
    document = {
        "league": result.name,
        "games": result.games,
        "unsandboxed_games": result.unsandboxed,
        "isolation_games": dict(result.isolation),
        "unrated_games": result.unrated,
        "remote_seats": {bot: totals.to_json() for bot, totals in result.remote.items()},
        "soft_play": soft_play_json(result.soft_play),
        **ratings_json(result.ratings, result.faults, with_crosstable, forfeits=result.forfeits, rule=result.rule),
        "retired": list(result.retired),
    }
    if settled is not None:
        document["settling"] = {
            "stop": settled.stop.value,
            "rounds": settled.rounds,
            "games": settled.games,
            "budget": settled.budget,
        }
    return document


def print_results(result: LeagueResults, with_crosstable: bool, tablefmt: str) -> None:
    echo(f"{result.name}: {result.games} games" + (f" rated, {result.unrated} unrated" if result.unrated else ""))
    echo(
        ratings_table(
            result.ratings,
            tablefmt=tablefmt,
            faults=result.faults,
            forfeits=result.forfeits,
            unsandboxed=result.unsandboxed,
            rule=result.rule,
        )
    )
    partial = result.isolation[Isolation.PARTIAL.value]
    if partial:
        echo(
            f"{partial} game(s) were played with partial isolation: some bots had no uid, cgroup or seccomp filter "
            "of their own (`referee doctor` says what this machine lacks)."
        )
    for line in remote_notes(result):
        echo(line)
    flagged = result.soft_play.flagged
    echo(
        f"Soft play: {len(flagged)} of {len(result.soft_play.pairs)} pairs flagged (Holm-adjusted p below "
        f"{result.soft_play.alpha:g}; tournaments/ratings/soft_play.py); {result.soft_play.power_line()}"
        + "".join(f"\n  {one_line(pair.summary())}" for pair in flagged)
    )
    if result.retired:
        echo(f"Retired (no longer in the league file; their games still count): {', '.join(result.retired)}")
    if with_crosstable and result.ratings.bots:
        echo()
        echo(crosstable(result.ratings, tablefmt=tablefmt))
    echo()
