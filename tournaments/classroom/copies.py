"""Copies among a class's submissions, for a teacher to look at (never a verdict: a flag says what was measured).

    flags = find_copies(league, store)

Three measures, each over pairs of students (bots that are not baselines):
- identical program: the same program digest (tournaments.league.identity, or a folder's digest: every file
  of the two folders the same);
- similar code: winnowed fingerprints (tournaments.classroom.winnow) of the source files of two submission
  folders, fingerprints found in more than a quarter of the class (and in at least COMMON_AT_LEAST folders)
  left out as shared base code; flagged from SIMILAR_SHARE of the smaller one's fingerprints in common and at
  least MIN_SHARED of them (runs of some 40 tokens or more in common);
- same actions: on the same deal, from the same seat, against the same opponents, two students' games are the
  same game until one of them chooses differently; every decision before that one (and that one) was taken by
  both in the very same position. Over all such positions (decisions by the bots themselves, not a forfeit's
  fallback; and not those where both chose the first or the last legal action, which any trivial bot picks and
  two students reach on their own), the number agreed is compared with chance, the sum over positions of
  1 / (legal actions there):
  flagged when at least MIN_POSITIONS positions were compared, at least AGREE_SHARE agreed, and the agreements
  exceed chance by Z_FLAG standard deviations (binomial, each position its own chance). Two deterministic
  programs that decide alike are flagged even if their code differs: the flag says how often they agreed and
  how often chance would have. It needs the games' replays (the league's replay_dir).
"""

from __future__ import annotations

import enum
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.games import GameError, load_game
from referee.replay import ReplayError, load

from ..league.league_file import League
from ..league.store import LeagueStore
from ..league.submissions import folder_files
from .winnow import folder_fingerprints, similarity

COMMON_AT_LEAST = 4
SIMILAR_SHARE = 0.8
MIN_SHARED = 10
MIN_POSITIONS = 10
AGREE_SHARE = 0.9
Z_FLAG = 3.0


class CopyKind(enum.StrEnum):
    IDENTICAL = "identical program"
    SIMILAR = "similar code"
    ACTIONS = "same actions"


@dataclass(frozen=True)
class CopyFlag:
    kind: CopyKind
    bots: tuple[str, str]
    """In name order."""
    figure: float
    """1 for identical programs; the share of fingerprints in common; the share of positions agreed."""
    detail: str
    """What was measured, in words."""


def find_copies(league: League, store: LeagueStore) -> tuple[CopyFlag, ...]:
    """Every flag of the league's students (see the module's docstring), identical programs first."""
    students = [bot for bot in league.bots if not bot.baseline]
    identical = identical_programs({bot.name: bot.digest for bot in students})
    folders = {bot.name: bot.submission.folder for bot in students if bot.submission is not None}
    same = {flag.bots for flag in identical}
    similar = [flag for flag in similar_code(folders) if flag.bots not in same]
    replays = _replays(store.replay_paths().values())
    actions = same_actions(replays, {bot.name for bot in students}, league.game)
    return (*identical, *similar, *actions)


def identical_programs(digests: Mapping[str, str]) -> list[CopyFlag]:
    flags = []
    for first, second in itertools.combinations(sorted(digests), 2):
        if digests[first] == digests[second]:
            detail = f"the same program ({digests[first][:19]}...)"
            flags.append(CopyFlag(CopyKind.IDENTICAL, (first, second), 1.0, detail))
    return flags


def similar_code(folders: Mapping[str, Path]) -> list[CopyFlag]:
    prints = {name: folder_fingerprints(folder, folder_files(folder)) for name, folder in folders.items()}
    counts = Counter(value for found in prints.values() for value in found)
    common = {value for value, count in counts.items() if count > max(COMMON_AT_LEAST - 1, len(prints) // 4)}
    kept = {name: found - common for name, found in prints.items()}
    flags = []
    for first, second in itertools.combinations(sorted(kept), 2):
        shared = len(kept[first] & kept[second])
        share = similarity(kept[first], kept[second])
        if shared >= MIN_SHARED and share >= SIMILAR_SHARE:
            smaller = min(len(kept[first]), len(kept[second]))
            detail = f"{shared} of {smaller} code fingerprints in common ({share:.0%}, comments and names aside)"
            flags.append(CopyFlag(CopyKind.SIMILAR, (first, second), share, detail))
    return flags


@dataclass(frozen=True)
class _Game:
    bot: str
    seat: int
    actions: tuple[tuple[int, str, Any], ...]
    """(seat, by, action) of every action."""
    choices: tuple[int, ...]
    """How many legal actions there were before each action."""
    trivial: tuple[bool, ...]
    """Whether each action was the first or the last legal one (what a trivial bot plays)."""


def same_actions(replays: Iterable[Mapping[str, Any]], students: set[str], game: str) -> list[CopyFlag]:
    by_position: dict[tuple[Any, ...], list[_Game]] = {}
    for replay in replays:
        bots = [seat["bot"] for seat in replay["seats"]]
        for seat, bot in enumerate(bots):
            if bot in students:
                key = (replay["seed"], seat, tuple(other for index, other in enumerate(bots) if index != seat))
                played = _game(replay, bot, seat, game)
                if played is not None:
                    by_position.setdefault(key, []).append(played)
    tallies: dict[tuple[str, str], list[float]] = {}
    for games in by_position.values():
        for first, second in itertools.combinations(sorted(games, key=lambda played: played.bot), 2):
            if first.bot != second.bot:
                tally = tallies.setdefault((first.bot, second.bot), [0, 0, 0.0, 0.0])
                for index, term in enumerate(_compare(first, second)):
                    tally[index] += term
    return [flag for pair, tally in sorted(tallies.items()) if (flag := _flag(pair, tally)) is not None]


def _compare(first: _Game, second: _Game) -> tuple[int, int, float, float]:
    """(positions compared, agreed, chance's expected agreements, its variance) over the common prefix."""
    compared = agreed = 0
    expected = variance = 0.0
    steps = zip(first.actions, second.actions, first.choices, first.trivial, strict=False)
    for mine, theirs, choices, trivial in steps:
        if mine[0] == first.seat and mine[1] == "bot" and theirs[0] == second.seat and theirs[1] == "bot":
            if trivial and mine[2] == theirs[2]:
                continue
            chance = 1 / max(choices, 1)
            compared += 1
            expected += chance
            variance += chance * (1 - chance)
            if mine[2] != theirs[2]:
                break
            agreed += 1
        elif mine != theirs:
            break
    return compared, agreed, expected, variance


def _flag(pair: tuple[str, str], tally: list[float]) -> CopyFlag | None:
    compared, agreed, expected, variance = tally
    if compared < MIN_POSITIONS or agreed < AGREE_SHARE * compared or variance <= 0:
        return None
    z = (agreed - expected) / math.sqrt(variance)
    if z < Z_FLAG:
        return None
    detail = (
        f"chose alike in {int(agreed)} of {int(compared)} identical positions (chance: {expected:.1f}; "
        f"{z:.1f} standard deviations above it)"
    )
    return CopyFlag(CopyKind.ACTIONS, pair, agreed / compared, detail)


def _game(replay: Mapping[str, Any], bot: str, seat: int, game: str) -> _Game | None:
    """The actions of a replay and the number of choices before each (the rules engine replays them)."""
    try:
        state = load_game(game).new_game(replay["players"], replay["seed"], replay["config"])
        actions, choices, trivial = [], [], []
        for entry in replay["actions"]:
            legal = state.legal_actions_view(entry["seat"])
            choices.append(len(legal))
            trivial.append(entry["action"] in (legal[0], legal[-1]))
            actions.append((entry["seat"], entry["by"], entry["action"]))
            state.apply(entry["seat"], entry["action"])
    except (GameError, KeyError, TypeError, ValueError, IndexError):
        return None
    return _Game(bot, seat, tuple(actions), tuple(choices), tuple(trivial))


def _replays(paths: Iterable[str]) -> list[dict[str, Any]]:
    found = []
    for path in paths:
        json_path = Path(path).with_suffix(".json")
        try:
            found.append(load(json_path))
        except (ReplayError, OSError):
            continue
    return found
