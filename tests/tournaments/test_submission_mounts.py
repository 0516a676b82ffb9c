"""A submission never chooses what its sandbox shows: its command's words (and its build's) are arguments,
never folders shown to it, and a word reaching outside its folder is refused as that submission's fault.

The fixtures try the ways in of issue 29: a bot.toml command `bot.py ../alice ../../teacher` (a classmate's
source, the teacher's grades), `bot.py ../../logs` (the league's own log folder, which stopped the whole
league), a build naming the teacher's script, check-bot's hidden tests. Where the sandbox runs the words,
the same fixture run as an organiser's bot (whose words do show folders: the organiser typed them) reads
what the submission cannot, so each check can fail.

These tests need the sandbox; they fail instead of skipping where REFEREE_REQUIRE_SANDBOX is set (CI).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from sandbox_checks import require_sandbox

from referee.botspec import resolve_bot
from referee.deals import DealKey
from referee.isolation import sandbox
from referee.isolation.process import BotProcess
from referee.match import run_match
from referee.records import BotSpec, MatchSpec
from referee.seating import first_games
from tournaments.classroom.checkbot_run import CheckRequest, check_submission
from tournaments.cli import main
from tournaments.league.builds import build_submission, built_spec
from tournaments.league.folder_words import OutsideFolder, Words, check_words
from tournaments.league.store import LeagueStore
from tournaments.league.submissions import folder_digest, load_submission, runnable_spec

ALICE_SECRET = "alice-secret-5f1c"
TEACHER_SECRET = "teacher-grades-93ab"
HIDDEN_SECRET = "hidden-test-7d20"
SECRETS = (ALICE_SECRET, TEACHER_SECRET, HIDDEN_SECRET)
REFUSED = "reaches outside its folder"

PEEK_BOT = """
import os, random, sys
from protocol.sdk import run_bot

def peek(path):
    try:
        if os.path.isdir(path):
            files = sorted(os.path.join(root, name) for root, _, names in os.walk(path) for name in names)
            return [line for file in files for line in peek(file)] or [f"{path}: an empty folder"]
        with open(path) as handle:
            return [f"{path}: read {handle.read()!r}"]
    except OSError as error:
        return [f"{path}: refused ({error.strerror})"]

for word in sys.argv[1:]:
    for line in peek(word):
        print("PEEK", line, file=sys.stderr, flush=True)
run_bot(lambda observation, legal: random.choice(legal), name="peek")
"""
"""Tries to read every file its arguments name (relative to its folder), says what it read on stderr (its
log), then plays random legal actions."""

HONEST_BOT = """
import random
from protocol.sdk import run_bot
run_bot(lambda observation, legal: random.choice(legal), name="honest")
"""

TEACHER_SCRIPT = '#!/bin/sh\ncat "$(dirname "$0")/grades.csv"\n'


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """course/teacher/{grades.csv, build.sh}, course/hidden/tests.txt and the class's folders
    course/submissions/{alice,bob}, readable by other users (bots run under uids of their own)."""
    tmp_path.chmod(0o755)
    teacher = tmp_path / "teacher"
    teacher.mkdir()
    (teacher / "grades.csv").write_text(f"student,grade\nalice,{TEACHER_SECRET}\n")
    (teacher / "build.sh").write_text(TEACHER_SCRIPT)
    (teacher / "build.sh").chmod(0o755)
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "tests.txt").write_text(HIDDEN_SECRET)
    _submission(tmp_path, "alice", HONEST_BOT + f"# {ALICE_SECRET}\n")
    _submission(tmp_path, "bob", PEEK_BOT)
    return tmp_path


def _submission(course: Path, name: str, bot: str, manifest: str | None = None) -> Path:
    folder = course / "submissions" / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(bot)
    if manifest is not None:
        (folder / "bot.toml").write_text(manifest)
    return folder


def _logs(folder: Path) -> str:
    return "\n".join(path.read_text(errors="replace") for path in sorted(folder.rglob("*")) if path.is_file())


# The words are arguments, never mounts.


@pytest.mark.parametrize("submission", [True, False])
def test_a_submission_s_words_show_it_no_other_folder(course: Path, submission: bool) -> None:
    """bob's command names alice's folder and the teacher's, and a link in its folder to the teacher's: as a
    submission (BotSpec.folders, its own folder) it reads none; the same words as an organiser's bot show
    both folders, so the check can fail."""
    require_sandbox()
    bob = course / "submissions" / "bob"
    (bob / "link").symlink_to(course / "teacher")
    words = ("../alice", "../../teacher", "../../teacher/grades.csv", "link")
    spec = BotSpec("bob", (sys.executable, str(bob / "bot.py"), *words), str(bob))
    spec = replace(spec, folders=(str(bob),)) if submission else spec
    logs = course / "logs"
    bots = (spec, resolve_bot("random", "scout"))
    games = first_games(len(bots), 1, DealKey.from_seed(1))
    record = run_match(MatchSpec("words", "scout", bots, games, log_dir=str(logs)))
    output = _logs(logs)
    peeks = [line for line in output.splitlines() if line.startswith("PEEK")]
    assert all(game.sandboxed for game in record.games)
    assert not [fault for game in record.games for fault in game.faults], output
    assert len(peeks) >= len(words), output
    if submission:
        assert not any(secret in output for secret in SECRETS), output
        assert all("refused" in line or "an empty folder" in line for line in peeks), output
    else:
        assert ALICE_SECRET in output and TEACHER_SECRET in output, output


@pytest.mark.parametrize("submission", [True, False])
def test_a_build_s_words_show_it_no_other_folder(course: Path, submission: bool) -> None:
    """A build-shaped sandbox (no socket, its copy writable) running `sh -c ../../teacher/build.sh` from a copy
    two folders below the course: confined to the copy it cannot run the teacher's script; as an organiser's
    program whose words name it, it can, and prints the grades."""
    require_sandbox()
    work = course / "class.builds" / "bob"
    work.mkdir(parents=True)
    work.chmod(0o777)
    own = (str(work),) if submission else None
    request = sandbox.SandboxRequest(None, writable=(str(work),), own=own)
    log = course / "build.log"
    environment = {"PATH": os.environ.get("PATH", os.defpath), "HOME": sandbox.HOME_INSIDE}
    process = BotProcess.start(
        ["sh", "-c", "../../teacher/build.sh"], environment, log, 65536, cwd=str(work), sandbox=request
    )
    try:
        for _ in range(600):
            if process.exited():
                break
            time.sleep(0.1)
        assert process.exited(), "the build did not end"
        status = process.returncode
    finally:
        process.kill()
    output = log.read_text()
    if submission:
        assert status != 0 and TEACHER_SECRET not in output, output
    else:
        assert status == 0 and TEACHER_SECRET in output, output


# A word reaching outside is refused, as that submission's fault.


@pytest.mark.parametrize(
    "words",
    [
        ["bot.py", "../alice"],
        ["bot.py", "../../teacher"],
        ["bot.py", "--data=../alice/bot.py"],
        ["bot.py", "sub/../../alice"],
        ["../alice/bot.py"],
        ["python3", "/etc/../home/teacher"],
        ["bot.py", "link"],
    ],
)
def test_words_that_reach_outside_a_submission_are_refused(course: Path, words: list[str]) -> None:
    bob = course / "submissions" / "bob"
    (bob / "link").symlink_to(course / "teacher")
    with pytest.raises(OutsideFolder, match=REFUSED):
        check_words(words, bob, Words.COMMAND)


@pytest.mark.parametrize(
    "words",
    [
        ["bot.py", "data/book.txt", "--depth=3", "-v"],
        ["python3", "bot.py", "/tmp/scratch", "/usr/share/dict/words", "/dev/null"],
        ["./bot", "sub/../bot.py"],
    ],
)
def test_words_that_stay_in_a_submission_are_arguments(course: Path, words: list[str]) -> None:
    check_words(words, course / "submissions" / "bob", Words.COMMAND)


def test_a_program_on_the_organiser_s_path_is_an_interpreter_or_the_system_s(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool in the organiser's own bin folder would show its installation: refused; an interpreter there
    (a virtual environment's python3) is the bot's runtime."""
    tools = course / "teacher" / "bin"
    tools.mkdir()
    for name in ("grade-tool", "python3"):
        (tools / name).write_text("#!/bin/sh\n")
        (tools / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    bob = course / "submissions" / "bob"
    with pytest.raises(OutsideFolder, match=r"its command's program 'grade-tool' is found outside its folder"):
        check_words(["grade-tool", "bot.py"], bob, Words.COMMAND)
    with pytest.raises(OutsideFolder) as refused:
        check_words(["grade-tool"], bob, Words.COMMAND)
    assert str(tools) not in str(refused.value)
    check_words(["python3", "bot.py"], bob, Words.COMMAND)
    check_words(["sh", "bot.sh"], bob, Words.COMMAND)


def test_a_bot_toml_reaching_outside_is_that_submission_s_clear_fault(course: Path) -> None:
    bob = course / "submissions" / "bob"
    (bob / "bot.toml").write_text('command = "bot.py ../alice ../../teacher"\n')
    submission = load_submission(bob)
    with pytest.raises(OutsideFolder, match=rf"bob: its command's word '\.\./alice' {REFUSED}: .*relative to"):
        runnable_spec(submission, "scout")


def test_a_build_reaching_outside_is_not_run(course: Path) -> None:
    """The build names the teacher's script: it is refused before it runs, and the bot says why."""
    bob = _submission(course, "carol", HONEST_BOT, 'build = "../../teacher/build.sh"\n')
    submission = load_submission(bob)
    work, log = course / "class.builds" / "carol", course / "logs" / "carol.log"
    outcome = build_submission(submission, folder_digest(bob), work, log)
    assert not outcome.ok and REFUSED in outcome.detail and "'../../teacher/build.sh'" in outcome.detail
    assert TEACHER_SECRET not in log.read_text() and not work.exists()
    spec = built_spec(submission, outcome, "scout")
    assert spec.folders == (str(work),) and REFUSED in spec.command[-1]


# One student's words never stop a league, nor reach check-bot's results.

LEAGUE = """game = "scout"
players = 2
seed = 1
deals_per_match = 1
log_dir = "logs"
[[bots]]
name = "random"
command = "random"
baseline = true
[[bots]]
each = "submissions/*"
"""


def test_one_student_s_words_fault_that_student_alone(course: Path) -> None:
    """bob's bot.toml names the league's log folder (which stopped the whole league), carol's a classmate's
    folder and the teacher's, dave's build the teacher's script: each of their games records their fault,
    saying why; the league ends with status 0 and alice's games against random are played without a fault."""
    require_sandbox()
    (course / "submissions" / "bob" / "bot.toml").write_text('command = "bot.py ../../logs"\n')
    _submission(course, "carol", PEEK_BOT, 'command = "bot.py ../alice ../../teacher"\n')
    _submission(course, "dave", HONEST_BOT, 'build = "../../teacher/build.sh"\ncommand = "bot.py"\n')
    league = course / "class.toml"
    league.write_text(LEAGUE)
    result = CliRunner().invoke(main, ["tournament", "run", "-j", "1", "--sandbox", str(league)])
    assert result.exit_code == 0, result.output
    store = LeagueStore(course / "class.sqlite", create=False)
    try:
        games, faults = store.games(), store.fault_list()
    finally:
        store.close()
    refused = {"bob", "carol", "dave"}
    assert games and {fault.bot for fault in faults} == refused, faults
    for fault in faults:
        assert REFUSED in fault.detail, fault
    faulted = {(fault.match_id, fault.index) for fault in faults}
    tables = {(game.match_id, game.index): set(game.ranks) for game in games}
    clean = [key for key, bots in tables.items() if not bots & refused]
    assert clean and not set(clean) & faulted
    assert all(key in faulted for key, bots in tables.items() if bots & refused)
    output = _logs(course / "logs")
    assert "PEEK" not in output and not any(secret in output for secret in SECRETS), output


def test_check_bot_gives_a_student_reaching_outside_a_clear_failure(course: Path) -> None:
    """The grader's hidden tests sit two folders above the submission: a bot.toml naming them fails the check
    with the reason, and nothing of the hidden file reaches the Gradescope results."""
    require_sandbox()
    bob = course / "submissions" / "bob"
    (bob / "bot.toml").write_text('command = "bot.py ../../hidden/tests.txt"\n')
    outcome = check_submission(CheckRequest("scout", str(bob), players=(2,), games=1, run_dir=course / "run"))
    assert outcome.report is None and outcome.problem is not None and REFUSED in outcome.problem
    results = json.dumps(outcome.gradescope())
    assert REFUSED in results and HIDDEN_SECRET not in results
    assert HIDDEN_SECRET not in _logs(course / "run")
