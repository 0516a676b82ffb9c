"""Bot-controlled text made safe for the people who read it: terminals, spreadsheets, and the eye.

Bots choose their hello names, what they print (a crash's fault quotes it), and students choose their
submission folders' names. Any of it may reach an organiser's terminal, a CSV opened in a spreadsheet, or a
table where two names must not look the same. Three tools, each for one of those readers:

- `escape_control`: control characters shown as escapes (``\\x1b``, ``\\u202e``), so no escape sequence
  (OSC 52 clipboard writes, cursor moves, a forged table) and no bidirectional override reaches a terminal.
- `csv_cell`: a cell that a spreadsheet would run as a formula gets a leading single quote (OWASP, "CSV
  Injection").
- `checked_name`, `skeleton`, `lookalikes`: names normalised (NFKC), names with invisible or bidirectional
  controls refused, and names that would look alike (the same after NFKC, casefolding and a map of common
  Latin, Cyrillic and Greek homoglyphs) found, so that two bots cannot both show as "random".

Here in protocol because the referee (hello names) and every room above it (league files, reports, the CLI)
need the same rules.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable

from protocol.errors import BadInput

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls (C0, DEL, C1), format characters (bidirectional controls, zero-width marks), lone surrogates and
the Unicode line and paragraph separators."""

_MULTILINE_KEPT = frozenset("\n\t")

_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _needs_escape(char: str) -> bool:
    return unicodedata.category(char) in _ESCAPED_CATEGORIES


def escape_control(text: str, *, multiline: bool = False) -> str:
    """`text` with every control, format and separator character shown as a backslash escape.

    `multiline`: keep newlines and tabs (quoted output of several lines); otherwise they are escaped too, so
    that a name or a one-line detail stays on its line and in its table cell."""
    if text.isprintable():
        return text
    kept = _MULTILINE_KEPT if multiline else frozenset()
    return "".join(_escape(char) if char not in kept and _needs_escape(char) else char for char in text)


def one_line(text: str) -> str:
    """`text` for one line or table cell: every control escaped, newlines and tabs too."""
    return escape_control(text, multiline=False)


_FORMULA_STARTS = frozenset("=+-@\t\r")


def csv_cell(value: object) -> object:
    """A CSV cell's value, neutralised: a string that starts with = + - @, tab or carriage return (after any
    spaces, which some spreadsheets skip) gets a leading single quote, so it is shown and not evaluated; its
    controls are escaped, newlines and tabs kept. Numbers and other values are returned unchanged."""
    if not isinstance(value, str):
        return value
    shown = escape_control(value, multiline=True)
    return "'" + shown if value.lstrip(" ")[:1] in _FORMULA_STARTS else shown


class UnsafeName(BadInput, ValueError):
    """A name with an invisible or bidirectional control character in it."""


_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180e\u2800\u3164\uffa0"
    + "".join(chr(code) for code in range(0xFE00, 0xFE10))
    + "".join(chr(code) for code in range(0xE0100, 0xE01F0))
)
"""Characters that draw nothing but are not format characters: the combining grapheme joiner, Hangul and
Khmer fillers, the Mongolian vowel separator, the blank Braille pattern, and the variation selectors."""

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def invisible_characters(name: str) -> list[str]:
    """The characters of `name` that a reader would not see or that reorder what they see, as code points (U+200B)."""
    return [
        f"U+{ord(char):04X}"
        for char in name
        if char in _INVISIBLE
        or unicodedata.category(char) in _REFUSED_CATEGORIES
        or (unicodedata.category(char) == "Zs" and char != " ")
    ]


def checked_name(name: str) -> str:
    """`name` normalised to NFKC; UnsafeName if it contains invisible or bidirectional control characters, or
    is empty or only white space."""
    normal = unicodedata.normalize("NFKC", name)
    found = invisible_characters(normal)
    if found:
        raise UnsafeName(
            f"the name '{one_line(name)}' contains invisible or bidirectional control characters "
            f"({', '.join(dict.fromkeys(found))}); use visible characters only"
        )
    if not normal.strip():
        raise UnsafeName(f"the name '{one_line(name)}' is empty or only white space")
    return normal


_HOMOGLYPHS = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
        "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l",
        "ɡ": "g", "ё": "e", "ї": "i", "ь": "b", "п": "n", "г": "r",
        # Greek
        "α": "a", "β": "b", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j", "ω": "w", "ς": "c", "σ": "o",
        # Latin look-alikes among digits and letters
        "0": "o", "1": "l", "|": "l", "ı": "i", "ȷ": "j",
    }
)  # fmt: skip
"""Lower-case homoglyphs of Latin letters (names are casefolded first, which turns the upper-case Cyrillic
and Greek look-alikes of A B E H K M O P T X into the lower-case letters here)."""


def skeleton(name: str) -> str:
    """What `name` looks like: NFKC, casefolded, common homoglyphs mapped to their Latin letters, white space
    dropped (accents are kept: José and Jose are two names). Two names with one skeleton are look-alikes."""
    folded = unicodedata.normalize("NFKC", name).casefold().translate(_HOMOGLYPHS)
    return "".join(char for char in folded if not char.isspace())


def lookalikes(names: Iterable[str]) -> list[tuple[str, ...]]:
    """Groups of two or more distinct names that look alike (one skeleton), each in the order given."""
    groups: defaultdict[str, list[str]] = defaultdict(list)
    for name in names:
        group = groups[skeleton(name)]
        if name not in group:
            group.append(name)
    return [tuple(group) for group in groups.values() if len(group) > 1]
