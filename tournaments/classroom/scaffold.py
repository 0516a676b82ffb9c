"""New bots from templates: a small, commented bot in Python, C or JavaScript with its build files and a README,
which passes `referee check-bot` as it is written.

    scaffold = new_bot(Path("mybot"), Language.C, game="scout")
    scaffold.build          # ("make", "-C", "mybot"): what to run before playing it (None: nothing)
    scaffold.bot            # "mybot/bot": the BOT to give `referee play` or `referee check-bot`

The templates are package data (tournaments/classroom/templates/LANG/*.tmpl); `{{NAME}}`, `{{GAME}}`, `{{GAMES}}` and
`{{NOTES}}` (the game's notes, in the language's comments) are filled in. The folder and its files are made
readable (and the programs runnable) by every user, whatever the umask: the referee may run bots as another
user in a sandbox.
"""

from __future__ import annotations

import enum
import re
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from protocol.errors import BadInput, EnvironmentProblem
from referee.games import list_games

TEMPLATE_SUFFIX = ".tmpl"
DEFAULT_GAME = "scout"
"""The game a scaffold's commands name when it was made for any game."""

_FOLDER_MODE = 0o755
_FILE_MODE = 0o644
_PROGRAM_MODE = 0o755
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

NOTES = {
    "scout": (
        'SCOUT, 2 to 5 players. Actions: {"kind": "orient", "flip": bool} once per round (keep or turn the hand);',
        '{"kind": "show", "start": i, "length": k} shows hand[i:i+k]; {"kind": "scout", "end": "left"|"right",',
        '"flip": bool, "insert": p, "and_show": bool} takes the card at that end of the active set (left is',
        "active_set[0]) into the hand at position p. The observation has the seat's hand, the active_set and its",
        "active_owner, per seat hand_sizes, captured, chips and scores, and this round's history.",
        "A first idea: prefer the Show of the most cards. Rules: referee/games/scout.md; formats and the questions",
        "authors ask: protocol/PROTOCOL.md, section 8.",
    ),
    "scauver": (
        "Scauver, 2 to 4 players. Action kinds: setup (three hand cards to the flanks), check, bet, call, raise,",
        "fold, place (a card to a flank), final (the last two cards), vanguards (the showdown link) or no_link.",
        "The observation has the seat's hand, every seat's fields and chips, the pot, the pending bet and the",
        "phase. A first idea: fold weak fields early. Rules: referee/games/scauver.md; formats:",
        "protocol/PROTOCOL.md, section 8.",
    ),
    "": (
        "Any game of the referee: it learns which from game_start. Actions are maps with a kind; every",
        "element of legal_actions is legal as it is. The games' formats: protocol/PROTOCOL.md, section 8.",
    ),
}


class Language(enum.StrEnum):
    PYTHON = "python"
    C = "c"
    JS = "js"


_COMMENT = {Language.PYTHON: "# ", Language.C: " * ", Language.JS: "// "}
_PROGRAMS = {Language.PYTHON: ("bot.py",), Language.C: (), Language.JS: ()}


class ScaffoldError(BadInput, ValueError):
    """A bot that cannot be made there or so (a folder in use, an unknown game, a name unfit for a bot)."""


class ScaffoldWriteError(EnvironmentProblem, OSError):
    """The bot's folder could not be listed, made or written (no permission, a full disk); the message is the
    system's, naming the path."""


@dataclass(frozen=True)
class Scaffold:
    directory: Path
    language: Language
    name: str
    game: str
    files: tuple[Path, ...]
    bot: str
    """The BOT argument that runs it (`referee play GAME BOT ...`)."""
    build: tuple[str, ...] | None
    """The command that builds it, or None if it runs as written."""


def bot_name(directory: Path, name: str | None = None) -> str:
    """The bot's name: `name`, or the folder's; ScaffoldError unless it is a short word (letters, digits,
    '.', '_', '-')."""
    chosen = name if name is not None else directory.resolve().name
    if not _NAME.fullmatch(chosen):
        raise ScaffoldError(
            f"{chosen!r} cannot name a bot: use up to 64 letters, digits, '.', '_' or '-' (give --name)"
        )
    return chosen


def _notes(language: Language, game: str) -> str:
    prefix = _COMMENT[language]
    return "\n".join(f"{prefix}{line}".rstrip() for line in NOTES[game])


def _check(directory: Path, game: str) -> None:
    if game and game not in list_games():
        raise ScaffoldError(f"no game {game!r}: the games are {', '.join(list_games())}")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ScaffoldError(f"{str(directory)!r} is not an empty folder: give a new one")


def _run_command(language: Language, directory: Path) -> tuple[str, tuple[str, ...] | None]:
    if language is Language.PYTHON:
        return str(directory / "bot.py"), None
    if language is Language.C:
        return str(directory / "bot"), ("make", "-C", str(directory))
    return shlex.join(["node", str(directory / "bot.js")]), (
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(directory),
    )


def new_bot(directory: Path, language: Language, game: str = "", name: str | None = None) -> Scaffold:
    """Write a new bot into `directory` (made if missing; it must be empty), for `game` or, with "", any game.
    ScaffoldError if it cannot be made there or so, ScaffoldWriteError if the folder cannot be written."""
    try:
        return _write_bot(directory, language, game, name)
    except OSError as error:
        raise ScaffoldWriteError(str(error)) from error


def _write_bot(directory: Path, language: Language, game: str, name: str | None) -> Scaffold:
    _check(directory, game)
    bot = bot_name(directory, name)
    values = {
        "{{NAME}}": bot,
        "{{GAME}}": game or DEFAULT_GAME,
        "{{GAMES}}": game or "any game of the card referee",
        "{{NOTES}}": _notes(language, game),
    }
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(_FOLDER_MODE)
    written = []
    templates = resources.files("tournaments.classroom").joinpath("templates", language.value)
    for template in sorted(templates.iterdir(), key=lambda item: item.name):
        if not template.name.endswith(TEMPLATE_SUFFIX):
            continue
        text = template.read_text(encoding="utf-8")
        for token, value in values.items():
            text = text.replace(token, value)
        target = directory / template.name.removesuffix(TEMPLATE_SUFFIX)
        target.write_text(text, encoding="utf-8")
        target.chmod(_PROGRAM_MODE if target.name in _PROGRAMS[language] else _FILE_MODE)
        written.append(target)
    command, build = _run_command(language, directory)
    return Scaffold(directory, language, bot, game, tuple(written), command, build)
