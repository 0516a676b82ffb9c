"""Running an attack fixture bot (tests/fixtures/bots/attack_*.py) against a victim, and the facts its test
checks: what the attacker reported, the real deal, the processes it left.

Every attacker gets ATTACK_NONCE (a fresh random marker) in its environment; its processes inherit it, so
`marked_processes` finds every one of them afterwards, in whatever namespace, session or uid they run.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee_helpers import FIXTURE_BOTS, alive, match_spec

from referee import replay
from referee.games import load_game
from referee.match import run_match
from referee.records import BotSpec, GameRecord, Limits, MatchRecord

GAME = "scout"
ATTACK_LIMITS = Limits(move_time_ms=2000, startup_time_s=30.0, time_bank_ms=10_000, log_cap_bytes=1024 * 1024)
"""Generous clocks: an attack costs its bot time (the unsandboxed memory scan ~0.1 s here), and no legal bot
may time out under load."""
SECRET_PREFIX = "attack-secret-"
VICTIM = "attack_victim"


def new_secret() -> str:
    """A marked secret the attack bots search for (attack-secret- and 32 hex digits)."""
    return SECRET_PREFIX + secrets.token_hex(16)


@dataclass(frozen=True)
class AttackRun:
    record: MatchRecord
    attacker_log: str
    victim_log: str
    nonce: str
    declared: Mapping[str, str]
    """The environment declared for the attacker."""
    survivors: list[int]
    """The attacker's processes alive when the match was over (killed since)."""

    def reports(self, attack: str) -> list[dict[str, Any]]:
        """The attacker's `ATTACK <attack> <json>` lines, decoded."""
        return self.parse(self.attacker_log, attack)

    @staticmethod
    def parse(log: str, attack: str) -> list[dict[str, Any]]:
        """The `ATTACK <attack> <json>` lines of a bot's log, decoded."""
        prefix = f"ATTACK {attack} "
        return [json.loads(line[len(prefix) :]) for line in log.splitlines() if line.startswith(prefix)]


def bot_spec(name: str, env: Mapping[str, str], program_dir: Path) -> BotSpec:
    """The fixture bot `name` in `program_dir`, with `env` declared for it."""
    return BotSpec(name, (sys.executable, str(program_dir / f"{name}.py")), env=tuple(sorted(env.items())))


def victim_spec(program_dir: Path = FIXTURE_BOTS) -> BotSpec:
    return BotSpec(VICTIM, (sys.executable, str(program_dir / f"{VICTIM}.py")))


def run_attack(
    attacker: str,
    tmp_path: Path,
    *,
    sandbox: bool,
    env: Mapping[str, str],
    victim: BotSpec | None = None,
    program_dir: Path = FIXTURE_BOTS,
    limits: Limits = ATTACK_LIMITS,
    while_alive: Callable[[list[int]], None] | None = None,
) -> AttackRun:
    """Play a SCOUT match of `attacker` (seated first, its program in `program_dir`) against `victim`
    (attack_victim by default), two games, with or without the sandbox; then call `while_alive` with the
    attacker's processes still alive (those with its nonce, and those of the uid it reported if that is not
    the referee's), kill them, and collect the logs. The attacker is told the referee's pid
    (ATTACK_REFEREE_PID) and its nonce (ATTACK_NONCE) besides `env`."""
    nonce = secrets.token_hex(16)
    declared = {"ATTACK_NONCE": nonce, "ATTACK_REFEREE_PID": str(os.getpid()), **env}
    attacking = bot_spec(attacker, declared, program_dir)
    spec = match_spec(
        GAME,
        [attacking, victim or victim_spec()],
        games=2,
        seed=7,
        limits=limits,
        log_dir=str(tmp_path / "logs"),
        replay_dir=str(tmp_path / "replays"),
        sandbox=sandbox,
    )
    survivors: list[int] = []
    try:
        record = run_match(spec)
        ended = boot_ticks()
        logs = [_read_log(record, index) for index in (0, 1)]
        uids = {claim["uid"] for claim in AttackRun.parse(logs[0], "identity")} - {os.geteuid()}
        survivors = marked_processes(nonce) + [pid for uid in uids for pid in processes_of(uid, ended)]
        if while_alive is not None:
            while_alive(survivors)
    finally:
        kill_all([*marked_processes(nonce), *survivors])
    if sandbox:
        assert all(game.sandboxed for game in record.games), "the match did not run sandboxed"
    return AttackRun(record, logs[0], logs[1], nonce, declared, sorted(set(survivors)))


def _read_log(record: MatchRecord, index: int) -> str:
    path = Path(str(record.bots[index].log_path))
    return path.read_text(errors="replace") if path.exists() else ""


# Processes.


def _holds_marker(pid: int, marker: bytes) -> bool:
    for part in ("environ", "cmdline"):
        with contextlib.suppress(OSError):
            if marker in Path(f"/proc/{pid}/{part}").read_bytes():
                return True
    return False


def marked_processes(nonce: str) -> list[int]:
    """Live processes (zombies excluded) whose environment or command line holds `nonce`."""
    marker = nonce.encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid() and _holds_marker(int(entry.name), marker):
            found.append(int(entry.name))
    return [pid for pid in found if alive(pid)]


def boot_ticks() -> int:
    """Now, in the clock ticks since boot that /proc/PID/stat gives a process's start in."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _uid_and_start(pid: int) -> tuple[int, int] | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    uid = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:"))
    return uid, int(stat.rsplit(b")", 1)[1].split()[19])


def processes_of(uid: int, started_before: int) -> list[int]:
    """Live processes of the real `uid` started before the tick `started_before` (a sandboxed bot's uid is
    leased again once it is gone, so a later process of the same uid is another bot's)."""
    pids = [int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()]
    owned = [pid for pid in pids if (owner := _uid_and_start(pid)) and owner[0] == uid and owner[1] < started_before]
    return [pid for pid in owned if alive(pid) and not _another_referees(pid, uid)]


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _another_referees(pid: int, uid: int) -> bool:
    """Whether `pid` is a bot of another referee on the machine that leased `uid` after this match's bot let it
    go (the tests of another checkout, run at the same time): its first ancestor of another uid is a live process
    outside this test's line. A process that outlived its match is an orphan (its first such ancestor is init, or
    a subreaper above this test) or still under this test. Where in doubt, it is this match's."""
    ancestor = _parent(pid)
    while ancestor > 1 and (owner := _uid_and_start(ancestor)) is not None and owner[0] == uid:
        ancestor = _parent(ancestor)
    if ancestor <= 1 or ancestor in _line(os.getpid()) or _uid_and_start(ancestor) is None:
        return False
    return os.getpid() not in _line(ancestor)


def _line(pid: int) -> set[int]:
    """`pid` and its ancestors."""
    found = set()
    while pid > 1 and pid not in found and len(found) < 64:
        found.add(pid)
        pid = _parent(pid)
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# The game's hidden information.


Card = frozenset[int]


def dealt_hands(game: GameRecord) -> list[list[set[Card]]]:
    """The hands as dealt in each round of `game` (per round, per seat), from the engine re-run on the
    replay's seed: what no other seat may learn."""
    assert game.replay_path is not None
    data = replay.load(game.replay_path)
    state = load_game(data["game"]).new_game(data["players"], data["seed"], data["config"])
    rounds = state.dealt["rounds"]  # type: ignore[attr-defined]
    return [[{frozenset(card) for card in hand} for hand in hands] for hands in rounds]


MIN_LEAKED_CARDS = 6
"""A claimed hand is knowledge of a seat's hand if at least this many of its cards are that hand's, and all
of them are: a guess does not get six of eleven cards right."""


def learned_hands(game: GameRecord, attacker_seat: int, claims: Iterable[list[list[int]]]) -> list[list[list[int]]]:
    """The claimed hands that are (part of) a hand another seat was dealt in `game`."""
    dealt = dealt_hands(game)
    learned = []
    for claim in claims:
        cards = {frozenset(card) for card in claim}
        for hands in dealt:
            others = [hand for seat, hand in enumerate(hands) if seat != attacker_seat]
            if len(cards) >= MIN_LEAKED_CARDS and any(cards <= hand for hand in others):
                learned.append(claim)
                break
    return learned


# Kernel keyrings.

_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_GET_PERSISTENT, _KEYCTL_CLEAR = 22, 7
_USER_KEYRING, _PROCESS_KEYRING = -4, -2


def clear_keyrings(uid: int) -> None:
    """Empty the user and persistent keyrings of `uid` (as root: a child becomes `uid` and clears them)."""
    child = os.fork()
    if child == 0:
        status = 1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            keyctl = _KEYCTL[platform.machine()]
            os.setgid(uid)
            os.setuid(uid)
            libc.syscall(keyctl, _KEYCTL_CLEAR, _USER_KEYRING)
            persistent = libc.syscall(keyctl, _KEYCTL_GET_PERSISTENT, -1, _PROCESS_KEYRING)
            if persistent >= 0:
                libc.syscall(keyctl, _KEYCTL_CLEAR, persistent)
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"cannot clear the keyrings of uid {uid}"
