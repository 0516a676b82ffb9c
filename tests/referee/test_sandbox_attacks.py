"""Hostile bots against the sandbox: each attack fixture bot (tests/fixtures/bots/attack_*.py) tries one way
to see, change or outlive what it must not, while it plays legal moves against a victim bot.

For each attack the test prepares its targets (secrets in the referee's environment and memory, a store, a
league file, replays, a TCP service, a canary), runs a short SCOUT match and collects the harms it can see as
facts: the attacker's claims checked against the real deal, secrets found in the attacker's log, files
hashed before and after, processes of the attacker alive after the match, the victim's faults. Under the
sandbox every harm must be absent, the referee completes every game, the victim plays every game without a
fault and no process of the attacker is left. Without the sandbox, the attacks that only read (or write only
into the test's own files and into the victim bot) must show each of their harms: that proves the attack and
the check are real, so the sandboxed test can fail.

Three attacks need more than one match of the referee: a bot kept beside its league file, played through
`referee tournament run`; a bot holding more connections than the referee may have open files, against a
`referee play` in a process of its own (an abort must fail that test, not the run); notes left in the kernel
keyrings of a uid for the next bot of that uid, over two matches under two uids of the test's own.

The sandboxed tests skip where the sandbox cannot run, and fail there instead when REFEREE_REQUIRE_SANDBOX is
set (CI).
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import random
import resource
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from attack_helpers import (
    ATTACK_LIMITS,
    GAME,
    VICTIM,
    AttackRun,
    bot_spec,
    clear_keyrings,
    kill_all,
    learned_hands,
    marked_processes,
    new_secret,
    run_attack,
    victim_spec,
)
from click.testing import CliRunner
from referee_helpers import FIXTURE_BOTS
from sandbox_checks import require_sandbox

from referee import replay
from referee.isolation import bot_limits, uids
from referee.isolation.process import BotProcess
from referee.isolation.sandbox import SandboxRequest
from referee.records import BotSpec, FaultKind, Limits
from tournaments.cli import main
from tournaments.league.store import LeagueStore

ALLOWED_ENVIRONMENT = {"REFEREE_ENDPOINT", "REFEREE_TOKEN", "PATH", "HOME", "TMPDIR", "LANG"}
"""What a sandboxed bot's environment may hold besides what is declared for it."""


@dataclass
class Scene:
    """One attack's targets: what the attacker is told (env), the victim, and the facts kept for later."""

    tmp_path: Path
    monkeypatch: pytest.MonkeyPatch
    cleanup: contextlib.ExitStack
    env: dict[str, str] = field(default_factory=dict)
    victim: BotSpec | None = None
    program_dir: Path = FIXTURE_BOTS
    """Where the attacker's program is."""
    limits: Limits = ATTACK_LIMITS
    facts: dict[str, Any] = field(default_factory=dict)

    def folder(self, name: str) -> Path:
        path = self.tmp_path / name
        path.mkdir(parents=True, exist_ok=True)
        return path


class Attack(abc.ABC):
    """One attack: its bot, how to prepare its targets, and the harms it did (each falsy if not done)."""

    bot: str
    unsandboxed = True
    """Safe to run without the sandbox: it reads, or writes only into the test's files and the victim bot."""
    attacker_faults: frozenset[FaultKind] = frozenset()
    """What the attacker may be charged under the sandbox (it plays legally; a limit may kill it)."""

    def prepare(self, scene: Scene, sandbox: bool) -> None:  # noqa: B027 -- most attacks need no hook
        """Set up the targets (scene.cleanup undoes what needs undoing)."""

    @abc.abstractmethod
    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        """Each harm the attack may do, by name, with what shows it was done (falsy if it was not)."""

    def while_alive(self, scene: Scene, survivors: list[int]) -> None:  # noqa: B027 -- most attacks need no hook
        """Runs after the match, before the attacker's surviving processes are killed."""

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:  # noqa: B027 -- most attacks need no hook
        """What must hold besides the absence of harms, under the sandbox."""


def _victim_token_learned(run: AttackRun) -> list[str]:
    """The victim's tokens (one per start, from its log) that the attacker's log holds."""
    tokens = [word.split("=", 1)[1] for word in run.victim_log.split() if word.startswith("token=")]
    assert tokens and all(tokens), f"the victim did not log its token: {run.victim_log[:500]!r}"
    return [token for token in tokens if token in run.attacker_log]


def _reports(run: AttackRun, attack: str) -> list[dict[str, Any]]:
    reports = run.reports(attack)
    assert reports, f"the attacker reported nothing; its log: {run.attacker_log[-2000:]!r}"
    return reports


class ProcRead(Attack):
    bot = "attack_proc_read"

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        scene.facts["environment secret"] = new_secret()
        scene.monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", scene.facts["environment secret"])
        scene.facts["memory secret"] = new_secret().encode()

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        learned = []
        for claim in _reports(run, "proc_read"):
            game = run.record.games[claim["game"]]
            learned += learned_hands(game, claim["seat"], (hand["hand"] for hand in claim["hands"]))
        return {
            "hidden cards learned": learned,
            "victim's token learned": _victim_token_learned(run),
            "referee's environment read": scene.facts["environment secret"] in run.attacker_log,
            "referee's memory read": scene.facts["memory secret"].decode() in run.attacker_log,
            "victim's process inspected": f"{VICTIM}.py" in run.attacker_log,
            "host paths of the match's files learned": str(scene.tmp_path) in run.attacker_log,
        }

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:
        inherited = [claim["inherited_fds"] for claim in run.reports("proc_read") if claim["inherited_fds"]]
        assert not inherited, f"the bot was started with files open besides stdin, stdout and stderr: {inherited}"
        commands = [claim["commands"] for claim in run.reports("proc_read")]
        assert commands and "--ro-bind" not in run.attacker_log, f"bwrap's options were readable: {commands}"


class ProcWrite(Attack):
    bot = "attack_proc_write"

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        canary = ("attack-canary-" + os.urandom(16).hex()).encode()
        scene.facts["canary"], scene.facts["canary copy"] = bytearray(canary), bytes(canary)
        if not sandbox:
            scene.env["ATTACK_SPARE_REFEREE"] = "1"

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        victim_faults = [fault for game in run.record.games for fault in game.faults if fault.bot == VICTIM]
        harms: dict[str, object] = {"victim crashed by a write into its code": victim_faults}
        if "ATTACK_SPARE_REFEREE" not in scene.env:
            harms["referee's memory changed"] = scene.facts["canary"] != scene.facts["canary copy"]
        return harms


class Escape(Attack):
    bot = "attack_escape"

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        scene.facts["sabotage"] = scene.folder("later-matches") / "sabotaged"
        scene.env["ATTACK_SABOTAGE_FILE"] = str(scene.facts["sabotage"])

    def while_alive(self, scene: Scene, survivors: list[int]) -> None:
        deadline = time.monotonic() + 20.0
        while survivors and not scene.facts["sabotage"].exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        (escape,) = _reports(run, "escape")
        return {
            "outlived the match": run.survivors,
            "sabotaged a later match": scene.facts["sabotage"].exists(),
            "wrote into its parent's memory": escape["injected"] and escape["outcome"],
        }


class Files(Attack):
    bot = "attack_files"

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        secrets = {name: new_secret() for name in ("league", "store", "replay", "victim")}
        league = scene.folder("league") / "league.toml"
        league.write_text(f'# {secrets["league"]}\ngame = "scout"\nplayers = 2\n')
        store = league.parent / "league.db"
        _store_with_results(store, secrets["store"])
        old_replays = scene.folder("old-replays")
        (old_replays / "old-0000.json").write_text(f'{{"note": "{secrets["replay"]}"}}')
        victim_dir, scene.program_dir = scene.folder("victim"), scene.folder("attacker")
        victim_program = victim_dir / f"{VICTIM}.py"
        victim_program.write_text((FIXTURE_BOTS / f"{VICTIM}.py").read_text() + f"# {secrets['victim']}\n")
        for program in (self.bot, "attack_kit"):
            shutil.copy(FIXTURE_BOTS / f"{program}.py", scene.program_dir)
        scene.victim = victim_spec(victim_dir)
        outside = scene.folder("outside")
        watched = {"league": league.parent, "victim": victim_dir, "own": scene.program_dir}
        scene.facts.update(secrets=secrets, outside=outside, watched=watched)
        scene.facts["before"] = {name: _snapshot(path) for name, path in scene.facts["watched"].items()}
        scene.env.update(
            ATTACK_READ_PATHS=os.pathsep.join(
                map(str, (league, store, old_replays, scene.tmp_path / "logs", victim_program))
            ),
            ATTACK_STORE=str(store),
            ATTACK_VICTIM_PROGRAM=str(victim_program),
            ATTACK_WRITE_DIRS=os.pathsep.join(map(str, (outside, scene.program_dir))),
            ATTACK_REPLAY_DIR=str(scene.tmp_path / "replays"),
        )

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        secrets, log = scene.facts["secrets"], run.attacker_log
        after = {name: _snapshot(path) for name, path in scene.facts["watched"].items()}
        changed = [name for name, snapshot in after.items() if snapshot != scene.facts["before"][name]]
        return {
            "league file read": secrets["league"] in log,
            "store read": secrets["store"] in log,
            "old replays read": secrets["replay"] in log,
            "victim's log read": _victim_token_learned(run),
            "victim's program read": secrets["victim"] in log,
            "store or league file changed": "league" in changed,
            "victim's program changed": "victim" in changed,
            "replays of the match forged": _forged_replays(run),
            "wrote outside its tmp": list(scene.facts["outside"].iterdir()),
            "wrote into its program's folder": "own" in changed,
        }


class Network(Attack):
    bot = "attack_network"

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        secret = new_secret()
        tcp = socket.create_server(("127.0.0.1", 0))
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        name = f"attack-{os.urandom(8).hex()}"
        abstract.bind("\0" + name)
        abstract.listen()
        accepted: list[str] = []
        for server, kind in ((tcp, "tcp"), (abstract, "abstract unix")):
            scene.cleanup.enter_context(_serving(server, secret, functools.partial(accepted.append, kind)))
        scene.env.update(ATTACK_TCP_PORT=str(tcp.getsockname()[1]), ATTACK_ABSTRACT_SOCKET=name)
        scene.facts.update(secret=secret, accepted=accepted)

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        _reports(run, "network")
        accepted = scene.facts["accepted"]
        return {
            "reached the tcp service": "tcp" in accepted,
            "reached the abstract unix socket": "abstract unix" in accepted,
            "received the secret": scene.facts["secret"] in run.attacker_log,
        }


class Environment(Attack):
    bot = "attack_env"

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        secret = new_secret()
        scene.monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        scene.monkeypatch.setenv("PIP_INDEX_URL", f"https://student:{secret}@pypi.example.org/simple")
        scene.env["BOT_LEVEL"] = "7"
        scene.facts["secret"] = secret

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        undeclared = set()
        for claim in _reports(run, "env"):
            undeclared |= set(claim["environment"]) - ALLOWED_ENVIRONMENT - set(run.declared)
        return {
            "undeclared variables": sorted(undeclared),
            "referee's secret": scene.facts["secret"] in run.attacker_log,
        }

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:
        for claim in run.reports("env"):
            assert claim["environment"]["BOT_LEVEL"] == "7", "a declared variable did not reach the bot"


class Priority(Attack):
    bot = "attack_priority"

    referee_nice = 5
    """The niceness the referee's thread takes as root (so that a bot's nice 0 would be above it too)."""

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        """Give the referee's thread (and so the bots it starts) one CPU, so that widening the affinity shows,
        and as root (who may undo it) a lower priority than it had."""
        previous = os.sched_getaffinity(0)
        scene.cleanup.callback(os.sched_setaffinity, 0, previous)
        os.sched_setaffinity(0, {min(previous)})
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        if os.geteuid() == 0 and nice < self.referee_nice:
            scene.cleanup.callback(os.setpriority, os.PRIO_PROCESS, 0, nice)
            os.setpriority(os.PRIO_PROCESS, 0, self.referee_nice)
        scene.facts.update(affinity={min(previous)}, nice=os.getpriority(os.PRIO_PROCESS, 0))

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        reports = _reports(run, "priority")
        return {
            "raised its priority": [r["nice"] for r in reports if r["nice"] < scene.facts["nice"]],
            "real-time policy": [r["policy"] for r in reports if r["policy"] in (os.SCHED_FIFO, os.SCHED_RR)],
            "widened its affinity": [r["affinity"] for r in reports if set(r["affinity"]) - scene.facts["affinity"]],
        }


class Memory(Attack):
    bot = "attack_memory"
    unsandboxed = False
    attacker_faults = frozenset({FaultKind.CRASH})
    memory_mb = 192

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        scene.limits = dataclasses.replace(ATTACK_LIMITS, memory_mb=self.memory_mb)
        scene.env.update(ATTACK_CHILDREN="4", ATTACK_CHILD_MB=str(self.memory_mb // 2))

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        assert run.reports("memory_start"), f"the attack did not start: {run.attacker_log[-2000:]!r}"
        held = [claim["held_mb"] for claim in run.reports("memory")]
        return {"held more than the memory limit across its processes": [mb for mb in held if mb > self.memory_mb]}


class Sockets(Attack):
    """Sockets of other families than AF_UNIX, socket cookies, larger socket buffers (see attack_sockets.py)."""

    bot = "attack_sockets"

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        reports = _reports(run, "sockets")
        return {
            "opened a socket of another family": sorted(
                {name for claim in reports for name, (ok, _) in claim["families"].items() if ok}
            ),
            "read a socket cookie": [claim["game"] for claim in reports if claim["cookie"][0]],
            "read its network namespace's cookie": [claim["game"] for claim in reports if claim["netns_cookie"][0]],
            "raised a socket buffer": [claim["game"] for claim in reports if claim["raised_buffer"][0]],
        }

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:
        for claim in run.reports("sockets"):
            assert claim["unix"][0], f"a unix socket, which every bot needs, failed: {claim['unix']}"
            errors = {outcome for _, outcome in claim["families"].values()}
            assert all("Address family not supported" in error for error in errors), errors


class SocketMemory(Attack):
    """Socket buffers beyond the memory limit, held in children that each open files up to their cap (see
    attack_socket_memory.py)."""

    bot = "attack_socket_memory"
    attacker_faults = frozenset({FaultKind.CRASH})
    memory_mb = 128

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        scene.limits = dataclasses.replace(ATTACK_LIMITS, memory_mb=self.memory_mb)
        scene.env.update(ATTACK_CHILDREN="3", ATTACK_PAIRS="2000")

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        assert run.reports("socket_memory_start"), f"the attack did not start: {run.attacker_log[-2000:]!r}"
        held = [claim["held_mb"] for claim in run.reports("socket_memory")]
        return {"held more socket buffers than its memory limit": [mb for mb in held if mb > self.memory_mb]}

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:
        """No child that answered held more files than its cap (its memory limit may stop it first); a bot that
        did not report was killed at its memory limit, its buffers charged to its memory cgroup."""
        claims = run.reports("socket_memory")
        if not claims:
            crashes = [fault for game in run.record.games for fault in game.faults if fault.bot == self.bot]
            assert any(fault.facts.memory is not None for fault in crashes), crashes
        for claim in claims:
            for child in claim["opened"]:
                if child is not None:
                    assert child["files"] <= bot_limits.open_files_cap(), child


class Processes(Attack):
    bot = "attack_processes"
    unsandboxed = False
    attacker_faults = frozenset({FaultKind.CRASH})
    wanted = 2000

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        scene.env["ATTACK_PROCESSES"] = str(self.wanted)

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        claims = _reports(run, "processes")  # one per start: the attacker is started again for each rotation
        return {"started every process it wanted": any(claim["started"] >= self.wanted for claim in claims)}


class FillTmp(Attack):
    bot = "attack_fill_tmp"
    unsandboxed = False
    fill_mb = 512

    def prepare(self, scene: Scene, sandbox: bool) -> None:
        scene.env["ATTACK_FILL_MB"] = str(self.fill_mb)

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        fills = [fill for claim in _reports(run, "fill_tmp") for fill in claim["fills"]]  # one claim per start
        for fill in fills:
            for path in Path(fill["folder"]).glob(f"fill-{run.nonce}-*"):
                path.unlink(missing_ok=True)
        return {"filled without a limit": [fill for fill in fills if fill["written_mb"] >= self.fill_mb]}

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:
        claims = run.reports("fill_tmp")
        assert claims and all(fill["error"] for claim in claims for fill in claim["fills"]), claims


class Kernel(Attack):
    """Bits passed between two processes through kernel objects every bot reaches (see attack_kernel.py)."""

    bot = "attack_kernel"
    receivers = ("flock", "posix lock", "ofd lock", "mincore", "cachestat", "preadv2 nowait", "inotify")

    def harms(self, scene: Scene, run: AttackRun) -> dict[str, object]:
        reports = _reports(run, "kernel")
        harms: dict[str, object] = {
            f"bits passed through {name}": [
                claim["game"]
                for claim in reports
                if claim["channels"][name]["received"] == claim["channels"][name]["sent"]
            ]
            for name in self.receivers
        }
        harms["refused calls allowed"] = sorted({call for r in reports for call, (ok, _) in r["refused"].items() if ok})
        harms["global counters read live"] = sorted({path for claim in reports for path in claim["live"]})
        return harms

    def check_sandboxed(self, scene: Scene, run: AttackRun) -> None:
        for claim in run.reports("kernel"):
            assert claim["files"] >= 8, claim
            assert all(ok for ok, _ in claim["kept"].values()), f"a call the sandbox must keep failed: {claim['kept']}"


ATTACKS: dict[str, Attack] = {
    attack.bot.removeprefix("attack_"): attack
    for attack in (
        ProcRead(),
        ProcWrite(),
        Escape(),
        Files(),
        Network(),
        Environment(),
        Priority(),
        Memory(),
        Processes(),
        FillTmp(),
        Kernel(),
        Sockets(),
        SocketMemory(),
    )
}


# Helpers of the attacks.


def _store_with_results(path: Path, secret: str) -> None:
    """A league store holding one finished game whose seat names carry `secret`, closed (WAL checkpointed)."""
    LeagueStore(path).close()
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "INSERT INTO matches (match_id, bots, games) VALUES ('m1', ?, 1)", (f'["attack_files", "{secret}"]',)
        )
        db.execute("INSERT INTO games (match_id, game_index, seed, finished_at) VALUES ('m1', 0, 1, 0)")
        db.executemany(
            "INSERT INTO seats (match_id, game_index, seat, bot, rank, score) VALUES ('m1', 0, ?, ?, ?, ?)",
            [(0, "attack_files", 2, 3), (1, secret, 1, 9)],
        )


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder`, by relative path, with the sha256 of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _forged_replays(run: AttackRun) -> list[str]:
    forged = []
    for game in run.record.games:
        assert game.replay_path is not None
        data = replay.load(game.replay_path)
        try:
            replay.verify(data)
        except replay.ReplayMismatch:
            forged.append(game.replay_path)
            continue
        if tuple(data["ranks"]) != game.ranks:
            forged.append(game.replay_path)
    return forged


@contextlib.contextmanager
def _serving(server: socket.socket, secret: str, on_accept: Callable[[], None]) -> Any:
    """Serve `secret` to every connection on `server` in a thread, until the block ends."""
    server.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            on_accept()
            with connection:
                connection.sendall(f"{secret}\n".encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5.0)
        server.close()


# The tests.


def _run(attack: Attack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: bool) -> tuple[Scene, AttackRun]:
    with contextlib.ExitStack() as cleanup:
        scene = Scene(tmp_path, monkeypatch, cleanup)
        attack.prepare(scene, sandbox)
        run = run_attack(
            attack.bot,
            tmp_path,
            sandbox=sandbox,
            env=scene.env,
            victim=scene.victim,
            program_dir=scene.program_dir,
            limits=scene.limits,
            while_alive=lambda survivors: attack.while_alive(scene, survivors),
        )
        harms = attack.harms(scene, run)
    scene.facts["harms"] = harms
    return scene, run


def _check_contained(attack: Attack, run: AttackRun) -> None:
    """The referee played every game; the victim played each one without a fault; the attacker was charged
    only what its attack may cost it; nothing of the attacker is left; every replay verifies."""
    assert len(run.record.games) == len(run.record.spec.games)
    for game in run.record.games:
        victim, attacker = game.seats.index(VICTIM), game.seats.index(attack.bot)
        assert not [fault for fault in game.faults if fault.seat == victim], game.faults
        assert game.timings[victim].decisions > 0
        assert {fault.kind for fault in game.faults if fault.seat == attacker} <= attack.attacker_faults, game.faults
        assert game.replay_path is not None
        replay.verify(replay.load(game.replay_path))
    assert not run.survivors, f"processes of the attacker outlived its match: {run.survivors}"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_sandbox_stops_the_attack(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_sandbox()
    attack = ATTACKS[name]
    scene, run = _run(attack, tmp_path, monkeypatch, sandbox=True)
    _check_contained(attack, run)
    harms = scene.facts["harms"]
    assert not any(harms.values()), {harm: done for harm, done in harms.items() if done}
    attack.check_sandboxed(scene, run)


@pytest.mark.parametrize("name", [name for name, attack in ATTACKS.items() if attack.unsandboxed])
def test_the_attack_works_without_the_sandbox(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each harm the sandboxed test looks for happens without the sandbox: the attack and its check are real."""
    attack = ATTACKS[name]
    scene, run = _run(attack, tmp_path, monkeypatch, sandbox=False)
    harms = scene.facts["harms"]
    assert all(harms.values()), {harm: done for harm, done in harms.items() if not done}
    assert run.record.games and run.record.spec.game == GAME


LEAGUE_BESIDE_ITS_BOT = """# {secret}
game = "scout"
players = 2
seed = 3
deals_per_match = 1
log_dir = "logs"
replay_dir = "replays"

[limits]
move_time_ms = 2000
startup_time_s = 30

[[bots]]
name = "attack_files"
command = "attack_files.py"
env = {{ ATTACK_NONCE = "{nonce}", ATTACK_READ_PATHS = "{folder}", ATTACK_STORE = "{store}" }}

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "random2"
command = "random"
"""


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_a_bot_beside_the_league_file_reaches_neither_it_nor_the_store(sandbox: bool, tmp_path: Path) -> None:
    """An organiser keeps a bot's program in the league's folder (command = "bot.py" beside league.toml): the
    folder the sandbox shows the bot then holds the league file and the store. The bot reads everything in
    that folder and raises its results in the store during the league. Under the sandbox the league file's
    secret must not reach it, nor the store's bytes, its writes to the store fail and the stored results are
    those of the replays, and it reads no other match's logs (the league's whole log folder is hidden, made
    before the first bot starts); with --no-sandbox it reads all of them and its writes succeed (whether they
    change a result depends on whether a game is stored by then), so the checks can fail. Three bots: the
    attacker plays two matches, the second after the first (-j 1), whose logs are there by then."""
    if sandbox:
        require_sandbox()
    folder = tmp_path / "league"
    folder.mkdir()
    for program in ("attack_files", "attack_kit"):
        shutil.copy(FIXTURE_BOTS / f"{program}.py", folder)
    secret, nonce = new_secret(), os.urandom(16).hex()
    league, store = folder / "league.toml", folder / "league.sqlite"
    league.write_text(LEAGUE_BESIDE_ITS_BOT.format(secret=secret, nonce=nonce, folder=folder, store=store))
    command = ["tournament", "run", "-j", "1", "--sandbox" if sandbox else "--no-sandbox", str(league)]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert not marked_processes(nonce), "processes of the attacker outlived the league"
    log_paths = list((folder / "logs").rglob("*.log"))  # a folder per match
    logs = [path.read_text() for path in log_paths]
    claims_by_match = [
        (path.parent, claim) for path in log_paths for claim in AttackRun.parse(path.read_text(), "files")
    ]
    claims = [claim for _, claim in claims_by_match]
    assert len(claims) == 4, logs  # two matches of two games
    read = {path for claim in claims for path, outcome in claim["reads"].items() if outcome.startswith("read")}
    others = [
        path
        for own, claim in claims_by_match
        for path, outcome in claim["reads"].items()
        if outcome.startswith("read") and path.startswith(str(folder / "logs")) and not path.startswith(str(own))
    ]
    with LeagueStore(store, create=False) as stored:
        games = stored.games()
    replays = [replay.load(path) for path in sorted((folder / "replays").glob("*.json"))]
    harms = {
        "read the league file": [log for log in logs if secret in log],
        "read the store": sorted(path for path in read if path.startswith(str(store))),
        "wrote to the store": [claim["writes"]["store"] for claim in claims if claim["writes"]["store"][0]],
        "read other matches' logs": others,
    }
    if sandbox:
        assert not any(harms.values()), {harm: done for harm, done in harms.items() if done}
        assert [dict(game.scores) for game in games] == [_scores_by_bot(data) for data in replays]
    else:
        assert all(harms.values()), {harm: done for harm, done in harms.items() if not done}


def _scores_by_bot(data: dict[str, Any]) -> dict[str, int]:
    return {seat["bot"]: score for seat, score in zip(data["seats"], data["result"]["scores"], strict=True)}


CONNECTION_FLOOD_CAP = 50_000
"""The most connections the flood test asks for: past the referee's open-files limit here (20,000 on the
development machine), without asking a machine with a huge limit for hundreds of thousands of sockets."""


def _flood_size() -> int:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return CONNECTION_FLOOD_CAP if hard == resource.RLIM_INFINITY else min(hard + 1000, CONNECTION_FLOOD_CAP)


def test_a_bot_holding_connections_leaves_the_referee_standing(tmp_path: Path) -> None:
    """A sandboxed bot may run hundreds of processes, each holding its limit of open files: together they hold
    more connections to the referee's socket than the referee may have open files (past its hard limit, up to
    CONNECTION_FLOOD_CAP). The referee, run as `referee play` in a process of its own (so that an abort fails
    this test, not the test run), must complete the match, charge the attacker the flood (it is stopped at
    MAX_CONNECTIONS_PER_BOT, usually before it can report what it held), the victim play every game without a
    fault, and no process of the attacker remain."""
    require_sandbox()
    nonce, wanted = os.urandom(16).hex(), _flood_size()
    attacker = shlex.join([sys.executable, str(FIXTURE_BOTS / "attack_connections.py"), str(wanted), nonce])
    logs = tmp_path / "logs"
    play = ["play", GAME, attacker, str(FIXTURE_BOTS / f"{VICTIM}.py"), "--games", "2", "--seed", "7", "--json"]
    play += ["--move-time", "2000", "--time-bank", "10000", "--startup-time", "30", "--log-dir", str(logs)]
    command = [sys.executable, "-c", "from tournaments.cli import main; main()", *play, "--sandbox"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    survivors = marked_processes(nonce)
    kill_all(survivors)
    assert ran.returncode == 0, f"the referee did not complete the match (exit {ran.returncode}): {ran.stderr[-1500:]}"
    report = json.loads(ran.stdout)
    games, attacker_name = report["games"], report["bots"][0]["name"]
    assert len(games) == 2 and all(game["sandboxed"] for game in games)
    charged = [
        fault["detail"]
        for game in games
        for fault in game["faults"]
        if fault["seat"] == game["seats"].index(attacker_name)
    ]
    assert any("a flood of connections" in detail for detail in charged), (
        charged,
        Path(report["bots"][0]["log"]).read_text()[-1500:],
    )
    for game in games:
        victim = game["seats"].index(report["bots"][1]["name"])
        assert not [fault for fault in game["faults"] if fault["seat"] == victim], game["faults"]
        assert game["timing"][victim]["decisions"] > 0
    assert not survivors, f"processes of the attacker outlived its match: {survivors}"


def test_a_bot_leaves_no_note_for_a_later_bot_of_its_uid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two matches of two attack_keyring bots under a range of exactly two sandbox uids of this test's own, so
    that every bot of the second match runs under a uid a bot of the first had: each bot writes a note marked
    with its process into its uid's kernel keyrings (user and persistent) and reads what it finds there. No
    bot may find a note of another process (a restarted bot would remember the hands of an earlier rotation
    so, and colluding bots would talk across matches). The keyrings of both uids are emptied afterwards."""
    require_sandbox()
    first = random.randrange(2_100_000_000, 2_900_000_000, 2)
    monkeypatch.setenv(uids.UID_RANGE_VARIABLE, f"{first}-{first + 1}")
    note = new_secret()
    writer = bot_spec("attack_keyring", {"ATTACK_NOTE": note}, FIXTURE_BOTS)
    env = {"ATTACK_NOTE": note}
    try:
        runs = [run_attack(writer.name, tmp_path / str(n), sandbox=True, env=env, victim=writer) for n in (1, 2)]
    finally:
        for uid in (first, first + 1):
            clear_keyrings(uid)
    logs = [log for run in runs for log in (run.attacker_log, run.victim_log)]
    claims = [claim for log in logs for claim in AttackRun.parse(log, "keyring")]
    assert {claim["uid"] for claim in claims} == {first, first + 1} and len(claims) == 8, claims
    found = [
        (claim["process"], outcome)
        for claim in claims
        for ok, outcome in claim["found"].values()
        if ok and note in outcome and claim["process"] not in outcome
    ]
    assert not found, f"bots found notes that other processes of their uid left: {found}"
    assert not any(run.survivors for run in runs)


DISK_STATS = str(FIXTURE_BOTS / "attack_disk_stats.py")
SHARED_FOLDERS = ("/usr", "/etc", str(FIXTURE_BOTS))
"""Folders every bot is shown, on the host's disk (where the referee writes every bot's log)."""


def _disk_stats(tmp_path: Path, name: str, *args: str, sandbox: bool, env: dict[str, str] | None = None) -> Any:
    """attack_disk_stats.py run once, as a sandboxed bot or not: its JSON line."""
    log = tmp_path / f"{name}.log"
    process = BotProcess.start(
        [sys.executable, DISK_STATS, *args],
        {"PATH": os.defpath, **(env or {})},
        log,
        1 << 20,
        sandbox=SandboxRequest(None) if sandbox else None,
    )
    deadline = time.monotonic() + 120
    while not process.exited() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()
    return json.loads(log.read_text().splitlines()[-1])


def test_no_sandboxed_bot_reads_a_filesystems_free_space(tmp_path: Path) -> None:
    """statvfs and fstatvfs of the shared folders give the host disk's free blocks and inodes (which a bot's
    printed output moves) to a bot without the sandbox (ustat too, where the filesystem's device is its own);
    in it each of the three is refused, and so in its own /tmp."""
    require_sandbox()
    host = _disk_stats(tmp_path, "host", "statfs", *SHARED_FOLDERS, sandbox=False)
    assert all(found[call][0] > 0 for found in host.values() for call in ("statvfs", "fstatvfs")), host
    sandboxed = _disk_stats(tmp_path, "sandboxed", "statfs", *SHARED_FOLDERS, "/tmp", sandbox=True)
    assert set(sandboxed) == {*SHARED_FOLDERS, "/tmp"}
    assert {value for found in sandboxed.values() for value in found.values()} == {"refused: EPERM"}, sandboxed


def test_a_bots_tmp_inode_numbers_are_its_own(tmp_path: Path) -> None:
    """Files on one tmpfs take its inode numbers in turn: a bot that makes 500 files in a shared one moves the
    next bot's numbers past them (checked without the sandbox, in a folder of the host's /dev/shm). Each
    sandboxed bot's /tmp is a tmpfs of its own, numbered from its start: the bot after one that made 500 files
    gets the first bot's numbers."""
    require_sandbox()
    shared = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    try:
        env = {"TMPDIR": str(shared)}
        before = _disk_stats(tmp_path, "before", "tmp-inodes", "1", sandbox=False, env=env)["tmp_inodes"]
        _disk_stats(tmp_path, "mover", "tmp-inodes", "500", sandbox=False, env=env)
        after = _disk_stats(tmp_path, "after", "tmp-inodes", "1", sandbox=False, env=env)["tmp_inodes"]
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert after[0] >= before[0] + 500
    first = _disk_stats(tmp_path, "first", "tmp-inodes", "1", sandbox=True)["tmp_inodes"]
    mover = _disk_stats(tmp_path, "sender", "tmp-inodes", "500", sandbox=True)["tmp_inodes"]
    receiver = _disk_stats(tmp_path, "receiver", "tmp-inodes", "1", sandbox=True)["tmp_inodes"]
    assert mover[1] >= mover[0] + 499
    assert receiver == first


def test_no_sandboxed_bot_makes_namespaces_or_mounts(tmp_path: Path) -> None:
    """A user namespace of its own would let a bot mount, and mount IDs come from counters of the machine's: a bot
    holding mounts would move the IDs of every sandbox started after it. Without the sandbox (as root) clone
    and clone3 with CLONE_NEWUSER, unshare and a mount in the namespace made all work; in it each is refused,
    while threads and child processes still start."""
    require_sandbox()
    namespaces = str(FIXTURE_BOTS / "attack_namespaces.py")
    runs = {}
    for sandbox in (False, True):
        log = tmp_path / f"namespaces-{sandbox}.log"
        process = BotProcess.start(
            [sys.executable, namespaces],
            {"PATH": os.defpath},
            log,
            1 << 20,
            sandbox=SandboxRequest(None) if sandbox else None,
        )
        deadline = time.monotonic() + 120
        while not process.exited() and time.monotonic() < deadline:
            time.sleep(0.05)
        process.kill()
        runs[sandbox] = json.loads(log.read_text().splitlines()[-1])
    still_runs = {"thread": True, "subprocess": True}
    assert runs[False] == {"clone": "ok", "clone3": "ok", "unshare": "ok", "mount": "ok", "still_runs": still_runs}
    assert runs[True] == {
        "clone": "refused: EPERM",
        "clone3": "refused: ENOSYS",
        "unshare": "refused: EPERM",
        "still_runs": still_runs,
    }
