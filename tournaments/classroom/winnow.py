"""Fingerprints of text by winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
fingerprinting", SIGMOD 2003: the method of MOSS), to find near-identical submissions.

    fingerprints("def f(x):\n    return x + 1\n", ".py")     -> frozenset of 64-bit hashes

1. Normalise: comments and docstrings removed (# for Python and shells, // and /* */ for C-like languages and
   JavaScript, triple-quoted strings for Python), then the text cut into tokens: every identifier that is not a
   keyword becomes `v`, every number `0`, every string literal `"`; keywords and punctuation stay. Renaming
   variables, reformatting, or rewording comments changes nothing. A file whose name says no language (a
   `.log`, a `.txt`, no suffix) is read both ways, as code with # comments and as code with // comments: code
   kept in such a file is found whatever its language.
2. Hash every K consecutive tokens (K = 8), leaving out runs that do not look like code: fewer than
   MIN_SYMBOLS of their tokens are code symbols (brackets, operators, `=`, `:`, `;`), as in prose, whose
   normalised words (`v v v , v v`) every README shares.
3. Winnow: of every W consecutive hashes (W = 8) keep the smallest. Any run of at least
   W + K - 1 = 15 tokens two files share yields at least one common fingerprint, and runs shorter than K tokens
   never do (the noise threshold).

Two submissions' similarity is the share of the smaller one's fingerprints that the other has too
(`similarity`); the base code every student was given (the scaffolds, what the teacher names) is removed first
by the caller (tournaments.classroom.copies), as MOSS removes base code.
"""

from __future__ import annotations

import enum
import hashlib
import re

K = 8
W = 8
MIN_SYMBOLS = 2
"""A run of K tokens is fingerprinted only if at least this many of its tokens are code symbols."""


class Comments(enum.Enum):
    HASH = "#"
    SLASH = "//"


_BY_SUFFIX = {
    **dict.fromkeys((".py", ".sh", ".rb", ".pl", ".r", ".toml", ".yaml", ".yml", ".cfg"), (Comments.HASH,)),
    **dict.fromkeys(
        (".c", ".h", ".cc", ".cpp", ".hpp", ".js", ".mjs", ".cjs", ".ts", ".java", ".rs", ".go", ".kt", ".cs"),
        (Comments.SLASH,),
    ),
}
"""The comment syntax of the files whose suffix says their language; any other text is read both ways."""
_KEYWORD_TEXT = (
    "and as assert async await break case catch char class const continue def default del do double elif else "
    "enum except extern false finally float fn for from function func go if import in int is lambda let long "
    "match new nil none None not null or pass raise return self short signed sizeof static struct switch this "
    "throw true True False try typedef union unsigned var void volatile while with yield"
)
_KEYWORDS = frozenset(_KEYWORD_TEXT.split())
_SYMBOLS = frozenset("()[]{}=:;<>+-*/%!&|^~@?")
_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`[^`]*`|\S")
_TRIPLE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_HASH_LINE = re.compile(r"#[^\n]*")
_SLASH = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")


def comment_styles(suffix: str) -> tuple[Comments, ...]:
    """How a file with this suffix is read: its language's comments, or both kinds for a suffix of no language."""
    return _BY_SUFFIX.get(suffix.lower(), (Comments.HASH, Comments.SLASH))


def tokens(text: str, suffix: str, comments: Comments | None = None) -> list[str]:
    """The normalised tokens of a file (see the module's docstring), read with `comments` (default: its
    suffix's first style)."""
    style = comments or comment_styles(suffix)[0]
    text = _HASH_LINE.sub(" ", _TRIPLE.sub(" ", text)) if style is Comments.HASH else _SLASH.sub(" ", text)
    return [_normal(token) for token in _TOKEN.findall(text)]


def _normal(token: str) -> str:
    first = token[0]
    if first.isalpha() or first in "_$":
        return token if token in _KEYWORDS else "v"
    if first.isdigit():
        return "0"
    if first in "\"'`":
        return '"'
    return token


def winnow(hashes: list[int], window: int = W) -> set[int]:
    """The smallest hash of every `window` consecutive ones (all of them when there are fewer)."""
    if len(hashes) <= window:
        return set(hashes)
    return {min(hashes[start : start + window]) for start in range(len(hashes) - window + 1)}


def fingerprints(text: str, suffix: str) -> frozenset[int]:
    """The winnowed fingerprints of one file, read in each of its comment styles."""
    found: set[int] = set()
    for style in comment_styles(suffix):
        normal = tokens(text, suffix, style)
        symbols = [token in _SYMBOLS for token in normal]
        hashes = [
            int.from_bytes(hashlib.blake2b(" ".join(normal[start : start + K]).encode(), digest_size=8).digest(), "big")
            for start in range(len(normal) - K + 1)
            if sum(symbols[start : start + K]) >= MIN_SYMBOLS
        ]
        found |= winnow(hashes)
    return frozenset(found)


def similarity(first: frozenset[int], second: frozenset[int]) -> float:
    """The share of the smaller set's fingerprints the other has (0 when either is empty)."""
    smaller = min(len(first), len(second))
    return len(first & second) / smaller if smaller else 0.0
