"""Submission folders: bot.toml (command, transport, build), clashing names, builds in the sandbox, and the
digest of a whole folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.isolation import sandbox
from tournaments.league.builds import build_submission, built_spec, prepare_submission
from tournaments.league.league_file import LeagueFileError, load_league
from tournaments.league.submissions import folder_digest, load_submission, normalised

HEAD = 'game = "scout"\nplayers = 2\nseed = 1\n'
LADDER = (
    '[[bots]]\nname = "random"\ncommand = "random"\nbaseline = true\n'
    '[[bots]]\nname = "heuristic"\ncommand = "heuristic"\nbaseline = true\n'
)
EACH = '[[bots]]\neach = "submissions/*"\n'


def _folders(base: Path, folders: dict[str, dict[str, str]]) -> Path:
    """`base/submissions/NAME/FILE` for each folder's files, and a league beside them; returns the league."""
    for name, files in folders.items():
        folder = base / "submissions" / name
        folder.mkdir(parents=True)
        for file, text in files.items():
            (folder / file).write_text(text)
    league = base / "class.toml"
    league.write_text(HEAD + LADDER + EACH)
    return league


def _run(command: tuple[str, ...], cwd: str | None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60, check=False)


def test_a_stdio_submission_runs_behind_the_bridge(tmp_path: Path) -> None:
    league = load_league(
        _folders(
            tmp_path,
            {
                "sam": {"bot.toml": 'transport = "stdio"\ncommand = "python3 main.py"\nlanguage = "python"\n'},
                "zed": {"bot.py": ""},
            },
        )
    )
    bots = {bot.name: bot for bot in league.bots}
    sam = bots["sam"]
    assert sam.spec.command[:4] == (sys.executable, "-m", "protocol.stdio_bridge", "--")
    assert sam.spec.command[4:] == ("python3", "main.py") and sam.spec.cwd == str(tmp_path / "submissions" / "sam")
    assert sam.command == "stdio:python3 main.py"
    assert bots["zed"].spec.command == (sys.executable, str(tmp_path / "submissions" / "zed" / "bot.py"))


@pytest.mark.parametrize(
    "manifest, says",
    [
        ('transport = "pigeon"\n', 'transport must be "zmq" or "stdio", not \'pigeon\''),
        ("build = 3\n", "build must be a non-empty string"),
        ('run = "x"\n', "'run' is not a key"),
        ("command = \n", "bot.toml is not valid TOML"),
    ],
)
def test_a_bad_manifest_is_that_submission_s_fault(tmp_path: Path, manifest: str, says: str) -> None:
    league = load_league(_folders(tmp_path, {"kim": {"bot.toml": manifest, "bot.py": ""}}))
    (kim,) = [bot for bot in league.bots if bot.name == "kim"]
    ran = _run(kim.spec.command, kim.spec.cwd)
    assert ran.returncode == 1 and says in ran.stderr, ran.stderr


def test_a_folder_named_like_another_bot_is_skipped_and_said(tmp_path: Path) -> None:
    folders = {"Heuristic": {"bot.py": ""}, "ann": {"bot.py": ""}, "Ann_": {"bot.py": ""}, "bo": {"bot.py": ""}}
    league = load_league(_folders(tmp_path, folders))
    assert [bot.name for bot in league.bots] == ["random", "heuristic", "bo"]
    assert league.baselines == ("random", "heuristic")
    assert [bot.baseline for bot in league.bots] == [True, True, False]
    notes = "\n".join(league.skipped)
    assert "submissions/Heuristic' skipped: it is named like the bot 'heuristic' of the league file" in notes
    assert "submissions/ann' skipped: it is named like" in notes and "submissions/Ann_' skipped" in notes
    assert normalised("Ann_ ") == normalised("ann") != normalised("anna")


def test_two_entries_of_one_name_are_still_refused(tmp_path: Path) -> None:
    league = _folders(tmp_path, {"ann": {"bot.py": ""}})
    league.write_text(HEAD + LADDER + '[[bots]]\nname = "random"\ncommand = "random"\n')
    with pytest.raises(LeagueFileError, match="'random' is used twice"):
        load_league(league)


def test_baseline_must_be_a_boolean(tmp_path: Path) -> None:
    league = _folders(tmp_path, {"ann": {"bot.py": ""}})
    league.write_text(HEAD + '[[bots]]\nname = "random"\ncommand = "random"\nbaseline = "yes"\n' + EACH)
    with pytest.raises(LeagueFileError, match=r"key 'bots\[0\].baseline': must be true or false"):
        load_league(league)


def test_the_digest_covers_every_file_of_the_folder_but_version_control(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.py").write_text("import lib.moves\n")
    (folder / "lib" / "moves.py").write_text("BEST = 1\n")
    first = folder_digest(folder)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert folder_digest(folder) == first
    (folder / "lib" / "moves.py").write_text("BEST = 2\n")
    assert folder_digest(folder) != first
    (folder / "lib" / "moves.py").write_text("BEST = 1\n")
    assert folder_digest(folder) == first
    (folder / "bot.py").chmod(0o755)
    assert folder_digest(folder) != first
    (folder / "bot.py").chmod(0o644)
    assert folder_digest(folder) == first
    # What a bot can run is never left out: byte code Python would import, a log it executes.
    for name in ("__pycache__/moves.cpython-311.pyc", "run.log", "helper.pyc"):
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"\0")
        assert folder_digest(folder) != first, name
        changed = folder_digest(folder)
        path.write_bytes(b"\1")
        assert folder_digest(folder) != changed, name
        path.unlink()
        assert folder_digest(folder) == first, name


C_BOT = "int main(void) { return 0; }\n"


def _built(tmp_path: Path, files: dict[str, str], build: str) -> tuple[Path, Path, Path]:
    folder = tmp_path / "src" / "cat"
    folder.mkdir(parents=True)
    for file, text in {**files, "bot.toml": f'build = "{build}"\ncommand = "./bot"\n'}.items():
        (folder / file).write_text(text)
    return folder, tmp_path / "builds" / "cat", tmp_path / "logs" / "cat.log"


def test_a_build_runs_in_a_copy_and_the_bot_plays_from_it(tmp_path: Path) -> None:
    folder, work, log = _built(tmp_path, {"bot.c": C_BOT}, "cc -o bot bot.c && echo compiled")
    submission = load_submission(folder)
    digest = folder_digest(folder)
    spec, outcome = prepare_submission(submission, digest, "scout", work, log)
    assert outcome is not None and outcome.ok, outcome
    assert not (folder / "bot").exists() and (work / "bot").is_file()
    assert spec.command == (str(work / "bot"),) and spec.cwd == str(work)
    assert folder_digest(folder) == digest
    assert "$ cc -o bot bot.c" in log.read_text() and "compiled" in log.read_text()
    again = build_submission(submission, digest, work, log)
    assert again.reused and again.ok
    assert not build_submission(submission, "tree:other", work, log).reused


def test_a_failed_build_is_the_bot_s_crash_with_its_output(tmp_path: Path) -> None:
    folder, work, log = _built(tmp_path, {"bot.c": "int main(void) { return 0 }\n"}, "cc -o bot bot.c")
    submission = load_submission(folder)
    outcome = build_submission(submission, folder_digest(folder), work, log)
    assert not outcome.ok
    assert "the build failed: 'cc -o bot bot.c' exited with status 1" in outcome.detail
    assert "error: expected" in outcome.detail
    spec = built_spec(submission, outcome, "scout")
    ran = _run(spec.command, spec.cwd)
    assert ran.returncode == 1 and "cat: the build failed" in ran.stderr and "error: expected" in ran.stderr


def test_a_build_that_never_ends_is_stopped(tmp_path: Path) -> None:
    folder, work, log = _built(tmp_path, {}, "sleep 600")
    outcome = build_submission(load_submission(folder), "tree:x", work, log, time_s=0.5)
    assert not outcome.ok and "did not finish within 0.5 s (stopped)" in outcome.detail


@pytest.mark.skipif(not sandbox.probe().usable, reason="bots cannot be sandboxed here")
def test_a_sandboxed_build_writes_only_its_copy_and_has_no_network(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("answers")
    script = (
        f"touch {tmp_path}/escaped; cat {secret}; touch {tmp_path}/src/cat/written;"
        " python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)' || echo no-network;"
        " echo made > made.txt"
    )
    folder, work, log = _built(tmp_path, {"build.sh": script}, "sh build.sh")
    outcome = build_submission(load_submission(folder), "tree:x", work, log)
    text = log.read_text()
    assert outcome.sandboxed and outcome.ok, text
    assert (work / "made.txt").read_text() == "made\n"
    assert not (tmp_path / "escaped").exists() and not (folder / "written").exists()
    assert "answers" not in text and "no-network" in text


def test_special_files_in_a_folder_never_hang_the_class(tmp_path: Path) -> None:
    folder, work, log = _built(tmp_path, {"bot.c": C_BOT}, "cc -o bot bot.c")
    os.mkfifo(folder / "pipe")
    digest = folder_digest(folder)
    assert digest.startswith("tree:")
    outcome = build_submission(load_submission(folder), digest, work, log)
    assert not outcome.ok and "its folder could not be copied to build it" in outcome.detail
    manifest_pipe = tmp_path / "other"
    manifest_pipe.mkdir()
    os.mkfifo(manifest_pipe / "bot.toml")
    assert load_submission(manifest_pipe).problem == "bot.toml is not a file of at most 65536 bytes"


def _running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("sandboxed", [True, False])
def test_nothing_a_build_starts_outlives_it(tmp_path: Path, sandboxed: bool) -> None:
    folder, work, log = _built(tmp_path, {"build.sh": "sleep 6127 &\nsetsid sleep 6127 &\necho left\n"}, "sh build.sh")
    outcome = build_submission(load_submission(folder), "tree:x", work, log, sandbox=sandboxed)
    assert outcome.ok, log.read_text()
    assert _running("6127") == []
