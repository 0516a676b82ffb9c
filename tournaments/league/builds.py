"""Building a submission (its bot.toml's `build`, tournaments.league.submissions) before it plays.

    outcome = build_submission(submission, digest, work=Path("class.builds/ann"), log=Path("class.logs/builds/ann.log"))
    spec = built_spec(submission, outcome, "scout")      # what runs it: in the copy, or a program saying why not

The build runs in a copy of the submission's folder (WORK, the league's `build_dir`/NAME, default
LEAGUE.builds/ beside the league file), never in the folder itself: the student's folder stays as handed in
(read-only to every bot and build), its digest is never changed by a build product, and the bot then plays
from the copy, shown read-only. The build is `sh -c BUILD` in the sandbox a bot gets (referee.isolation.sandbox:
no network, its own uid and limits, /usr read-only: the system's compilers and node), with the copy as the
one folder of its own it sees, writable (its words are arguments, never folders shown to it, and a build
whose words reach outside the submission's folder is not run: tournaments.league.folder_words),
limits.BUILD_TIME_S to finish and limits.BUILD_MEMORY_MB of memory. Its output goes to its log
(LOG_DIR/builds/NAME.log, kept with the bots' logs). Where bots cannot be sandboxed, or with `--no-sandbox`,
it runs unsandboxed, contained as such bots are.

A build with no network cannot download: dependencies (npm packages, Python wheels) come with the submission,
or are installed on the machine.

A build is done once per program: WORK.json records the digest it built, and a rerun with the same digest
reuses it (a failed one too: the same folder fails the same way). A failed build is the submission's fault:
its bot is `cannot_run` with the reason and the log's last lines, so each of its games records a crash at its
start, forfeited by that bot alone.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path

from protocol import limits
from referee.isolation import sandbox as sandboxing
from referee.isolation.process import BotProcess, BotStartError, last_output_lines
from referee.records import BotSpec

from .folder_words import OutsideFolder, Words, check_text
from .league_file import League, LeagueBot
from .runner import LeaguePlan
from .submissions import IGNORED_NAMES, IGNORED_SUFFIXES, Submission, cannot_run, found_command, submission_spec

BUILD_LOGS = "builds"
"""The folder of the build logs in a league's log folder (LOG_DIR/builds/NAME.log)."""
_POLL_S = 0.05
_TAIL_LINES = 12


@dataclass(frozen=True)
class BuildOutcome:
    bot: str
    ok: bool
    detail: str
    """What happened, in words: for a failed build, why, with the last lines of its output."""
    folder: Path
    """The copy it was built in, where the bot runs."""
    log: Path
    reused: bool = False
    """Built by an earlier run for the same digest."""
    sandboxed: bool = True


def build_submission(
    submission: Submission, digest: str, work: Path, log: Path, *, sandbox: bool = True, time_s: float | None = None
) -> BuildOutcome:
    """Build `submission` (which has a build command) in a fresh copy at `work`, unless WORK.json says the same
    digest was built there. `time_s`: the longest it may take (default limits.BUILD_TIME_S)."""
    if submission.build is None:
        raise ValueError(f"{submission.name} has no build")
    refusal = _refusal(submission.build, submission.folder)
    stamp = work.with_name(work.name + ".json")
    reused = None if refusal is not None else _reused(stamp, digest, submission.build, work, log)
    if reused is not None:
        return reused
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"$ {submission.build}\n", encoding="utf-8")
    jailed = sandbox and sandboxing.probe().usable
    if refusal is not None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"\n== {refusal}\n")
        return BuildOutcome(submission.name, False, refusal, work, log, sandboxed=jailed)
    try:
        _fresh_copy(submission.folder, work)
    except (OSError, shutil.Error) as error:
        ok, detail = False, f"its folder could not be copied to build it ({_first_line(error)})"
    else:
        ok, detail = _run(submission.build, work, log, jailed, time_s or limits.BUILD_TIME_S)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"\n== {detail}\n")
    if not ok:
        tail = "\n".join(last_output_lines(log, count=_TAIL_LINES))
        detail = f"the build failed: {detail}; the last lines of its output:\n{tail}"
    stamp.write_text(json.dumps({"digest": digest, "build": submission.build, "ok": ok, "detail": detail}))
    return BuildOutcome(submission.name, ok, detail, work, log, sandboxed=jailed)


def _refusal(build: str, folder: Path) -> str | None:
    """Why `build` is not run (a word of it reaches outside `folder`), or None."""
    try:
        check_text(build, folder, Words.BUILD)
    except OutsideFolder as refused:
        return f"the build was not run: {refused}"
    return None


def built_spec(submission: Submission, outcome: BuildOutcome, game: str) -> BotSpec:
    """What runs a built submission: its command in the copy, or a program that says why it cannot run."""
    if not outcome.ok:
        reason = cannot_run(f"{submission.name}: {outcome.detail}")
        return BotSpec(submission.name, reason, str(outcome.folder), folders=(str(outcome.folder),))
    return submission_spec(after_build(submission, outcome), game, outcome.folder)


def after_build(submission: Submission, outcome: BuildOutcome) -> Submission:
    """The submission as its build left it: its command, else the one found in the copy it was built in."""
    return replace(submission, command=submission.command or found_command(outcome.folder))


def prepare_submission(
    submission: Submission, digest: str, game: str, work: Path, log: Path, *, sandbox: bool = True
) -> tuple[BotSpec, BuildOutcome | None]:
    """A submission ready to play (check-bot's and the league's way): built first if it has a build."""
    if submission.build is None or submission.problem is not None:
        return submission_spec(submission, game), None
    outcome = build_submission(submission, digest, work, log, sandbox=sandbox)
    return built_spec(submission, outcome, game), outcome


def _reused(stamp: Path, digest: str, build: str, work: Path, log: Path) -> BuildOutcome | None:
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or (recorded.get("digest"), recorded.get("build")) != (digest, build):
        return None
    if not work.is_dir():
        return None
    return BuildOutcome(work.name, bool(recorded.get("ok")), str(recorded.get("detail", "")), work, log, reused=True)


def _fresh_copy(source: Path, work: Path) -> None:
    """`source` copied to `work` (what was there removed), writable by the build's uid; its parent is the
    organiser's alone (mode 0700: no other local user reaches a copy)."""
    work.parent.mkdir(parents=True, exist_ok=True)
    work.parent.chmod(0o700)
    if work.exists():
        shutil.rmtree(work)
    ignored = shutil.ignore_patterns(*IGNORED_NAMES, *(f"*{suffix}" for suffix in IGNORED_SUFFIXES))
    shutil.copytree(source, work, symlinks=True, ignore=ignored)
    for root, folders, files in os.walk(work):
        for name in [*folders, *files]:
            path = Path(root, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IRWXO | stat.S_IRWXG | stat.S_IRWXU)
    work.chmod(0o777)


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:300]


def _build_environment() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": sandboxing.HOME_INSIDE,
        "TMPDIR": sandboxing.TMP_INSIDE,
    }


def _run(build: str, work: Path, log: Path, jailed: bool, time_s: float) -> tuple[bool, str]:
    """(whether it succeeded, what happened) for `sh -c BUILD` in `work`."""
    request = sandboxing.SandboxRequest(None, writable=(str(work),), own=(str(work),)) if jailed else None
    environment = _build_environment() if jailed else {**os.environ, "HOME": str(work)}
    started = time.monotonic()
    try:
        process = BotProcess.start(
            ["sh", "-c", build],
            environment,
            log,
            limits.BUILD_LOG_CAP_BYTES,
            memory_mb=limits.BUILD_MEMORY_MB,
            cpu_seconds=int(time_s) + 1,
            cwd=str(work),
            sandbox=request,
        )
    except (BotStartError, sandboxing.SandboxError) as error:
        return False, f"{build!r} could not start ({error})"
    try:
        while not process.exited() and time.monotonic() - started < time_s:
            time.sleep(_POLL_S)
        finished = process.exited()
        exit_words = process.describe_exit()
        status = process.returncode
    finally:
        process.kill()
    took = time.monotonic() - started
    if not finished:
        return False, f"{build!r} did not finish within {time_s:g} s (stopped)"
    return status == 0, f"{build!r} {exit_words} after {took:.1f} s"


def build_league(
    league: League,
    *,
    sandbox: bool = True,
    on_built: Callable[[BuildOutcome], None] | None = None,
    names: Collection[str] | None = None,
) -> League:
    """The league with every submission that has a build (of `names`; None: all of them) built, or its earlier
    build reused where the copy it ran in is still there (built again where it is gone), each bot then running
    from its copy, or a program that says why its build failed. Until then such a bot is a program saying it is
    not built (tournaments.league.league_file): whatever plays the league's bots (the schedule, settling
    rounds) must play this league's. `on_built` hears of each outcome."""
    built: dict[str, LeagueBot] = {}
    for bot in league.bots:
        sub = bot.submission
        if (names is not None and bot.name not in names) or sub is None or sub.build is None or sub.problem:
            continue
        work = (league.build_dir or league.path.with_suffix(".builds")) / sub.name
        log = (league.log_dir or league.path.with_suffix(".logs")) / BUILD_LOGS / f"{sub.name}.log"
        outcome = build_submission(sub, bot.digest, work, log, sandbox=sandbox)
        if on_built is not None:
            on_built(outcome)
        spec = built_spec(sub, outcome, league.game)
        spec = replace(spec, env=bot.spec.env, stopped_on_timeouts=bot.spec.stopped_on_timeouts)
        built[bot.name] = replace(bot, spec=spec, cwd=spec.cwd)
    if not built:
        return league
    return replace(league, bots=tuple(built.get(bot.name, bot) for bot in league.bots))


def build_plan(
    plan: LeaguePlan,
    *,
    sandbox: bool = True,
    on_built: Callable[[BuildOutcome], None] | None = None,
    every_bot: bool = False,
) -> LeaguePlan:
    """The plan with its league's submissions built (build_league): those seated in its matches, or with
    `every_bot` all of them (settling rounds may seat any bot), and its matches running them from their copies."""
    seated = None if every_bot else {bot.name for spec in plan.specs for bot in spec.bots}
    league = build_league(plan.league, sandbox=sandbox, on_built=on_built, names=seated)
    if league is plan.league:
        return plan
    runs = {bot.name: bot.spec for bot in league.bots}
    specs = tuple(replace(spec, bots=tuple(runs.get(bot.name, bot) for bot in spec.bots)) for spec in plan.specs)
    return replace(plan, league=league, specs=specs)
