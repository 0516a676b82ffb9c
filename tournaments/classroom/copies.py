"""Copies among a class's submissions, for a teacher to look into: leads, never verdicts. Each lead says what was
compared and what was found.

    asked = ask_class(league)                 # every student answers the position bank (kept, asked once a program)
    report = copy_report(league)              # CopyReport: the leads, and what was compared
    flags = find_copies(league)               # its leads alone (the grade report's `copies`)

Three measures, each over pairs of students (bots that are not baselines):
- similar code: the winnowed fingerprints (tournaments.classroom.winnow) of every text file of two submission
  folders (tournaments.classroom.base_code: not dependencies, binaries or byte code), once the base code is
  removed: the scaffolds of every language, the tutorial's code and the league's `[copies] base`; and the
  fingerprints found in more than a quarter of the class (and in at least COMMON_AT_LEAST folders), code the
  students share without copying from one another. A lead from SIMILAR_SHARE of the smaller one's remaining
  fingerprints in common and at least MIN_SHARED of them (runs of some 15 tokens or more in common): "shares 212
  of 230 fingerprints after the base code is removed", with the files that hold them;
- identical program: the same program digest (tournaments.league.identity), where the program holds anything but
  base code (two unchanged scaffolds are the same program, and no lead);
- similar choices: every student answers the same bank of positions offline (tournaments.classroom.position_bank,
  asked with `ask_class`, the answers kept in LEAGUE.copies/ beside the league file for each program); a pair is
  a lead when it chose alike, beyond the known strategies, far more often than the class's own answers make
  likely (tournaments.classroom.choices). Whoever they were seated with does not matter.
"""

from __future__ import annotations

import enum
import itertools
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from referee.botspec import GAME_HEURISTIC, resolve_bot
from referee.records import BotSpec

from ..league.builds import BUILD_LOGS, prepare_submission
from ..league.league_file import League, LeagueBot
from ..league.store import LeagueStore
from .base_code import FolderPrints, base_prints, folder_prints
from .choices import is_lead, pair_tallies
from .position_bank import Bank, Position, ask_bank, make_bank

COMMON_AT_LEAST = 4
SIMILAR_SHARE = 0.8
MIN_SHARED = 10
COPIES_FOLDER = ".copies"
"""LEAGUE.copies/ beside the league file: the bank, the students' answers and the logs of their sessions."""


class CopyKind(enum.StrEnum):
    IDENTICAL = "identical program"
    SIMILAR = "similar code"
    CHOICES = "similar choices"


@dataclass(frozen=True)
class CopyFlag:
    kind: CopyKind
    bots: tuple[str, str]
    """In name order."""
    figure: float
    """1 for identical programs; the share of fingerprints in common; the share of counted positions agreed."""
    detail: str
    """What was compared and found, in words."""


@dataclass(frozen=True)
class CopyReport:
    flags: tuple[CopyFlag, ...]
    compared: tuple[str, ...]
    """What was compared, a line for each measure (and for each student, what of its folder)."""


def find_copies(league: League, store: LeagueStore | None = None) -> tuple[CopyFlag, ...]:
    """The leads of `copy_report` (the store is not needed: kept for callers that pass it)."""
    return copy_report(league).flags


def copy_report(league: League) -> CopyReport:
    """Every lead among the league's students (see the module's docstring), from their folders and the answers
    `ask_class` kept; no bot is run."""
    students = [bot for bot in league.bots if not bot.baseline]
    folders = {bot.name: bot.submission.folder for bot in students if bot.submission is not None}
    base = base_prints(league.copies.base)
    prints = {name: folder_prints(folder) for name, folder in folders.items()}
    similar, kept = similar_code(prints, base)
    identical = identical_programs({bot.name: bot.digest for bot in students}, kept)
    same = {flag.bots for flag in identical}
    choices, compared = _choices(league, students)
    base_words = "the scaffolds of every language, the tutorial's code" + "".join(
        f", {path.name}" for path in league.copies.base
    )
    lines = (
        f"code: every text file of {len(prints)} submission folder(s), after removing the base code ({base_words}) "
        "and code shared by more than a quarter of the class",
        *(f"  {name}: {found.summary()}" for name, found in sorted(prints.items())),
        compared,
    )
    flags = (*identical, *(flag for flag in similar if flag.bots not in same), *choices)
    return CopyReport(tuple(flags), lines)


def identical_programs(digests: Mapping[str, str], kept: Mapping[str, frozenset[int]] | None = None) -> list[CopyFlag]:
    """Pairs with the same digest; of submission folders (`kept`: their fingerprints after the base code), only
    those that hold anything but base code."""
    flags = []
    for first, second in itertools.combinations(sorted(digests), 2):
        if digests[first] != digests[second]:
            continue
        if kept is not None and first in kept and not kept[first]:
            continue
        detail = f"the same program ({digests[first][:19]}...), not only base code"
        flags.append(CopyFlag(CopyKind.IDENTICAL, (first, second), 1.0, detail))
    return flags


def similar_code(
    prints: Mapping[str, FolderPrints], base: frozenset[int] = frozenset()
) -> tuple[list[CopyFlag], dict[str, frozenset[int]]]:
    """The leads from code, and each folder's fingerprints once the base code and the class's common code are
    removed."""
    counts = Counter(value for found in prints.values() for value in found.all)
    common = {value for value, count in counts.items() if count > max(COMMON_AT_LEAST - 1, len(prints) // 4)}
    kept = {name: found.all - base - common for name, found in prints.items()}
    flags = []
    for first, second in itertools.combinations(sorted(kept), 2):
        shared = kept[first] & kept[second]
        smaller = min(len(kept[first]), len(kept[second]))
        share = len(shared) / smaller if smaller else 0.0
        if len(shared) >= MIN_SHARED and share >= SIMILAR_SHARE:
            where = "; ".join(f"{name}: {', '.join(prints[name].holding(shared))}" for name in (first, second))
            detail = (
                f"shares {len(shared)} of {smaller} fingerprints after the base code is removed ({share:.0%} of the "
                f"smaller folder's; names, comments and layout aside), in {where}"
            )
            flags.append(CopyFlag(CopyKind.SIMILAR, (first, second), share, detail))
    return flags, kept


# The position bank.


def copies_folder(league: League) -> Path:
    return league.path.with_suffix(COPIES_FOLDER)


def ask_class(
    league: League, *, sandbox: bool = True, on_asked: Callable[[str, int], None] | None = None
) -> dict[str, tuple[int | None, ...]]:
    """Every student's answers to the league's bank: kept ones reused (the same program, the same bank), the
    others asked (tournaments.classroom.position_bank) and kept. `on_asked(student, answered)` hears of each
    student asked."""
    bank = league_bank(league, sandbox=sandbox)
    folder = copies_folder(league)
    answers = {}
    for bot in league.bots:
        if bot.baseline:
            continue
        found = _kept_answers(folder, bot, bank)
        if found is None:
            spec = _runnable(league, bot, sandbox)
            found = ask_bank(spec, bank, league.limits, sandbox=sandbox, log_dir=folder / "logs" / bot.name)
            _keep_answers(folder, bot, bank, found)
            if on_asked is not None:
                on_asked(bot.name, sum(answer is not None for answer in found))
        answers[bot.name] = found
    return answers


def league_bank(league: League, *, sandbox: bool = True) -> Bank:
    """The league's bank: the kept one if made for these settings and baselines, else a new one (kept). Its
    references are the league's baselines, or the game's heuristic in a league without any."""
    references = {bot.name: bot.spec for bot in league.bots if bot.baseline}
    if not references:
        references = {GAME_HEURISTIC: resolve_bot(GAME_HEURISTIC, league.game)}
    seed = league.copies.bank_seed if league.copies.bank_seed is not None else league.seed
    key = [league.game, league.players, dict(league.config), seed, league.copies.bank]
    key += [sorted((bot.name, bot.digest) for bot in league.bots if bot.name in references)]
    path = copies_folder(league) / "bank.json"
    kept = _read_json(path)
    if isinstance(kept, dict) and kept.get("key") == json.loads(json.dumps(key)):
        return _kept_bank(league, kept)
    bank = make_bank(
        league.game,
        league.players,
        league.config,
        seed,
        league.copies.bank,
        references,
        league.limits,
        sandbox=sandbox,
        log_dir=copies_folder(league) / "logs" / "references",
    )
    kept = {"key": key, "config": dict(bank.config), "positions": [asdict(position) for position in bank.positions]}
    _write_json(path, kept)
    return _kept_bank(league, json.loads(json.dumps(kept)))


def _kept_bank(league: League, kept: Mapping[str, Any]) -> Bank:
    """The bank as bank.json keeps it (read back as written, so that its identity is the same either way)."""
    positions = tuple(
        Position(
            position["players"],
            position["seat"],
            position["observation"],
            tuple(position["legal"]),
            position["result"],
            tuple(position["known"]),
        )
        for position in kept["positions"]
    )
    return Bank(league.game, kept["config"], positions)


def _runnable(league: League, bot: LeagueBot, sandbox: bool) -> BotSpec:
    """What runs `bot`: a submission with a build from its built copy (the league's, reused when built)."""
    sub = bot.submission
    if sub is None or sub.build is None or sub.problem is not None:
        return bot.spec
    work = (league.build_dir or league.path.with_suffix(".builds")) / sub.name
    log = (league.log_dir or league.path.with_suffix(".logs")) / BUILD_LOGS / f"{sub.name}.log"
    spec, _ = prepare_submission(sub, bot.digest, league.game, work, log, sandbox=sandbox)
    return spec


def _answers_path(folder: Path, bot: LeagueBot) -> Path:
    return folder / "answers" / f"{bot.name}.json"


def _kept_answers(folder: Path, bot: LeagueBot, bank: Bank) -> tuple[int | None, ...] | None:
    kept = _read_json(_answers_path(folder, bot))
    if not isinstance(kept, dict) or (kept.get("bank"), kept.get("digest")) != (bank.identity, bot.digest):
        return None
    answers = kept.get("answers")
    if not isinstance(answers, list) or len(answers) != len(bank.positions):
        return None
    return tuple(answer if isinstance(answer, int) else None for answer in answers)


def _keep_answers(folder: Path, bot: LeagueBot, bank: Bank, answers: tuple[int | None, ...]) -> None:
    _write_json(_answers_path(folder, bot), {"bank": bank.identity, "digest": bot.digest, "answers": list(answers)})


def _choices(league: League, students: list[LeagueBot]) -> tuple[list[CopyFlag], str]:
    """The leads from the kept answers of the students (none asked yet: none, and the line says so)."""
    folder = copies_folder(league)
    kept = _read_json(folder / "bank.json")
    if not isinstance(kept, dict):
        return [], "choices: not compared (`referee tournament copies` asks every student the position bank)"
    bank = _kept_bank(league, kept)
    answers = {bot.name: found for bot in students if (found := _kept_answers(folder, bot, bank)) is not None}
    missing = sorted(bot.name for bot in students if bot.name not in answers)
    tallies = pair_tallies(bank, answers)
    flags = []
    for tally in tallies:
        if is_lead(tally, len(tallies)):
            detail = (
                f"chose alike in {tally.agreed} of {tally.counted} positions of the bank where either chose what no "
                f"known strategy does (expected from the class's answers: {tally.expected:.1f}; "
                f"p = {tally.p_value:.1g}, {len(tallies)} pairs compared)"
            )
            flags.append(CopyFlag(CopyKind.CHOICES, tally.pair, tally.agreed / tally.counted, detail))
    line = (
        f"choices: {len(answers)} student(s) answered the same {len(bank.positions)} positions; a pair is compared "
        "where either chose what no known strategy (the first or last legal action, the tutorial's, a baseline's) does"
    )
    if missing:
        line += f"; not asked yet (the program changed, or new): {', '.join(missing)}"
    return flags, line


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(value), encoding="utf-8")
    temporary.replace(path)
