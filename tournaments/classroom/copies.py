"""Copies among a class's submissions, for a teacher to look at (never a verdict: a flag says what was measured).

    flags = find_copies(league, store)

Three measures, each over pairs of students (bots that are not baselines):
- identical program: the same program digest (tournaments.league.identity, or a folder's digest: every file
  of the two folders the same);
- similar code: winnowed fingerprints (tournaments.classroom.winnow) of the source files of two submission
  folders, fingerprints found in more than a quarter of the class (and in at least COMMON_AT_LEAST folders)
  left out as shared base code; flagged from SIMILAR_SHARE of the smaller one's fingerprints in common and at
  least MIN_SHARED of them (runs of some 40 tokens or more in common);
- same actions: the rules engine replays every game (seed, config, deal and recorded actions) and keys each
  decision a student took itself (not a forfeit's fallback) by what that bot was shown: a canonical hash of
  its observation and its legal actions (position_key). Two students' decisions under one key were taken in
  the very same position from their point of view, whichever match, deal or rotation they came from. Deals
  are each match's own (tournaments.league.schedule), so such positions come from students at one table:
  there every deal is played from every seat, and two copies play the same games seat for seat (at two
  seats, A against B in rotation 0 is B against A in rotation 1), meeting each other's every position; two
  different programs part at their first different choice. In a baselines schedule, students meet only if
  the league sets `peers` (tournaments.league.schedule). Each position counts once per pair (each bot's first
  decision there, replays in store order), and not where both chose the first or the last legal action (which
  any trivial bot picks and two students reach on their own). The number agreed is compared with chance, the
  sum over positions of 1 / (legal actions there): flagged when at least MIN_POSITIONS positions were
  compared, at least AGREE_SHARE agreed, and the agreements exceed chance by Z_FLAG standard deviations
  (binomial, each position its own chance). Two deterministic programs that decide alike are flagged even if
  their code differs: the flag says how often they agreed and how often chance would have. It needs the
  games' replays (the league's replay_dir) and replays every game once: about 1 ms a game (docs/results.md, Grading).
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

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

_CANONICAL = msgspec.json.Encoder(order="sorted")
"""JSON with every object's keys sorted: equal values, equal bytes."""


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
    replays = _replays(path for _, path in sorted(store.replay_paths().items()))
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
class _Decision:
    bot: str
    action: Any
    choices: int
    """How many legal actions there were."""
    trivial: bool
    """Whether the action was the first or the last legal one (what a trivial bot plays)."""


def same_actions(replays: Iterable[Mapping[str, Any]], students: set[str], game: str) -> list[CopyFlag]:
    """Pairs of students who chose alike in the positions both were shown (see the module's docstring)."""
    by_position: dict[bytes, dict[str, _Decision]] = {}
    for replay in replays:
        for key, decision in _decisions(replay, students, game):
            by_position.setdefault(key, {}).setdefault(decision.bot, decision)
    tallies: dict[tuple[str, str], list[float]] = {}
    for decisions in by_position.values():
        for first, second in itertools.combinations(sorted(decisions), 2):
            terms = _compare(decisions[first], decisions[second])
            if terms is not None:
                tally = tallies.setdefault((first, second), [0, 0, 0.0, 0.0])
                for index, term in enumerate(terms):
                    tally[index] += term
    return [flag for pair, tally in sorted(tallies.items()) if (flag := _flag(pair, tally)) is not None]


def position_key(observation: Mapping[str, Any], legal: Iterable[Any]) -> bytes:
    """What a bot was shown before a decision (its observation and its legal actions), hashed canonically:
    equal keys, the same position from the bot's point of view, whichever match, deal or rotation."""
    return hashlib.blake2b(_CANONICAL.encode([observation, list(legal)]), digest_size=16).digest()


def _compare(first: _Decision, second: _Decision) -> tuple[int, int, float, float] | None:
    """(1, agreed, chance's expected agreement, its variance), or None for a trivial choice both made."""
    agreed = first.action == second.action
    if agreed and first.trivial:
        return None
    chance = 1 / max(first.choices, 1)
    return 1, int(agreed), chance, chance * (1 - chance)


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


def _decisions(replay: Mapping[str, Any], students: set[str], game: str) -> list[tuple[bytes, _Decision]]:
    """Each decision a student took itself in the replay (not a forfeit's fallback), keyed by its position;
    the rules engine replays the game. An unreadable replay gives none."""
    try:
        bots = [seat["bot"] for seat in replay["seats"]]
        state = load_game(game).new_game(replay["players"], replay["seed"], replay["config"], deal=replay["deal"])
        found = []
        for entry in replay["actions"]:
            seat, action = entry["seat"], entry["action"]
            if entry["by"] == "bot" and bots[seat] in students:
                legal = state.legal_actions_view(seat)
                key = position_key(state.observation(seat), legal)
                trivial = action in (legal[0], legal[-1])
                found.append((key, _Decision(bots[seat], action, len(legal), trivial)))
            state.apply(seat, action)
    except (GameError, KeyError, TypeError, ValueError, IndexError, msgspec.EncodeError):
        return []
    return found


def _replays(paths: Iterable[str]) -> list[dict[str, Any]]:
    found = []
    for path in paths:
        json_path = Path(path).with_suffix(".json")
        try:
            found.append(load(json_path))
        except (ReplayError, OSError):
            continue
    return found
