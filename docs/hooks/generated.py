"""An mkdocs hook: the docs' reference tables built from the code, and pages that live elsewhere in the tree.

Two markers, each alone on a line of a page:
- `<!-- generated: NAME -->` becomes the table TABLES[NAME] builds from the code that defines it (a table of
  keys from tournaments/league/keys.py, the fault kinds from referee.records). A new table is one function
  and one entry in TABLES.
- `<!-- include: PATH -->` becomes the text of PATH (relative to the repository's root), so the protocol and
  the rules are read where they live, never copied. Its relative links are rewritten: to the site's page
  for a file the site includes (INCLUDED), else to the repository path as code, since the site has no copy.

An unknown marker stops the build: a page never ships a marker unreplaced.
"""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from referee.records import FaultCause, FaultKind, FaultPolicy
from tournaments.ladder.ladder_file import LADDER_KEYS, OPEN_KEYS
from tournaments.league import keys

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- (generated|include): (\S+) -->$", re.MULTILINE)
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")

INCLUDED = {
    "protocol/PROTOCOL.md": "reference/protocol.md",
    "referee/games/scout.md": "reference/rules-scout.md",
    "referee/games/scauver.md": "reference/rules-scauver.md",
    "bots/README.md": "reference/bots.md",
}
"""Repository file -> the site page that includes it."""


def key_table(entries: Iterable[keys.Key]) -> str:
    rows = [f"| `{key.name}` | {key.type} | {key.default or '-'} | {key.meaning} |" for key in entries]
    return "\n".join(["| key | type | default | meaning |", "| --- | --- | --- | --- |", *rows])


def enum_table(members: type[enum.Enum], header: str, meaning: Callable[[Any], str]) -> str:
    rows = [f"| `{member.value}` | {meaning(member)} |" for member in members]
    return "\n".join([f"| {header} | meaning |", "| --- | --- |", *rows])


def meaning(member: enum.Enum, written: dict[Any, str]) -> str:
    """The member's own `.meaning` where its enum has one, else the text written here for it."""
    return getattr(member, "meaning", None) or written[member]


def fault_kinds() -> str:
    return enum_table(FaultKind, "kind", lambda kind: meaning(kind, FAULT_KIND_MEANINGS))


FAULT_KIND_MEANINGS = {
    FaultKind.TIMEOUT: "No answer within the decision's clock (or the handshake's startup limit).",
    FaultKind.CRASH: "The bot exited or disconnected, before, during or after its handshake.",
    FaultKind.ILLEGAL_ACTION: "An answer that is not one of the request's legal actions.",
    FaultKind.PROTOCOL_ERROR: "Undecodable bytes, a message over a limit, a schema error, a wrong token, a flood.",
}


def fault_causes() -> str:
    rows = [f"| `{cause.value}` | `{cause.kind.value}` | {cause.meaning} |" for cause in FaultCause]
    return "\n".join(["| cause | kind | meaning |", "| --- | --- | --- |", *rows])


def fault_policies() -> str:
    return enum_table(FaultPolicy, "policy", lambda policy: meaning(policy, FAULT_POLICY_MEANINGS))


FAULT_POLICY_MEANINGS = {
    FaultPolicy.FORFEIT: "The first fault forfeits the game; a seeded random policy plays the seat's later decisions.",
    FaultPolicy.SUBSTITUTE: "A random legal action replaces each faulty one; after `fault_budget` faults, a forfeit.",
}

TABLES: dict[str, Callable[[], str]] = {
    "league-file-keys": lambda: key_table(keys.LEAGUE_KEYS),
    "limit-keys": lambda: key_table(keys.LIMIT_KEYS),
    "copies-keys": lambda: key_table(keys.COPIES_KEYS),
    "remote-keys": lambda: key_table(keys.REMOTE_KEYS),
    "bot-keys": lambda: key_table(keys.BOT_KEYS),
    "each-keys": lambda: key_table(keys.EACH_KEYS),
    "bot-toml-keys": lambda: key_table(keys.MANIFEST_KEYS),
    "ladder-keys": lambda: key_table(LADDER_KEYS),
    "open-keys": lambda: key_table(OPEN_KEYS),
    "fault-kinds": fault_kinds,
    "fault-causes": fault_causes,
    "fault-policies": fault_policies,
}


def included(path: str, page_uri: str) -> str:
    """The file at `path` with its relative links pointing into the site or at the repository."""
    text = (ROOT / path).read_text()
    here = posixpath.dirname(path)
    page_dir = posixpath.dirname(page_uri)

    def relink(match: re.Match[str]) -> str:
        label, target = match.groups()
        if re.match(r"^(#|[a-z]+:)", target):
            return match.group(0)
        file, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(here, file))
        if resolved in INCLUDED:
            relative = posixpath.relpath(INCLUDED[resolved], page_dir or ".")
            return f"[{label}]({relative}{'#' + anchor if anchor else ''})"
        if label.strip("`") in (resolved, file, posixpath.basename(resolved)):
            return f"`{resolved}`"
        return f"{label} (`{resolved}`)"

    return LINK.sub(relink, text)


def expand(markdown: str, page_uri: str) -> str:
    def replace(match: re.Match[str]) -> str:
        kind, name = match.groups()
        if kind == "include":
            return included(name, page_uri)
        if name not in TABLES:
            raise ValueError(f"{page_uri}: no generated table {name!r}; the tables are {sorted(TABLES)}")
        return TABLES[name]()

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown, page.file.src_uri)


UNSET_DEFAULT = "<code>Sentinel.UNSET</code>"
"""What mkdocs-click (0.9) prints as the default of an option without one under click 8.3, which marks those with
a sentinel: the table then shows a dash, as for any option without a default."""


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    return html.replace(UNSET_DEFAULT, "-")
