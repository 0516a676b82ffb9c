"""Fingerprints of source code by winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for
document fingerprinting", SIGMOD 2003: the method of MOSS), to find near-identical submissions.

    fingerprints("def f(x):\n    return x + 1\n", ".py")     -> frozenset of 64-bit hashes

1. Normalise: comments and docstrings removed (# for Python and shells, // and /* */ for C-like languages and
   JavaScript, triple-quoted strings for Python), then the text cut into tokens: every identifier that is not a
   keyword becomes `v`, every number `0`, every string literal `"`; keywords and punctuation stay. Renaming
   variables, reformatting, or rewording comments changes nothing.
2. Hash every K consecutive tokens (K = 8).
3. Winnow: of every W consecutive hashes (W = 8) keep the smallest. Any run of at least
   W + K - 1 = 15 tokens two files share yields at least one common fingerprint, and runs shorter than K tokens
   never do (the noise threshold).

Two submissions' similarity is the share of the smaller one's fingerprints that the other has too
(`similarity`); fingerprints common to much of the class (the SDK's boilerplate, a scaffold) are left out first
by the caller (tournaments.classroom.copies), as MOSS ignores shared base code.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

K = 8
W = 8
SOURCE_SUFFIXES = frozenset(
    {".py", ".c", ".h", ".cc", ".cpp", ".hpp", ".js", ".mjs", ".ts", ".java", ".rs", ".go", ".rb", ".sh", ".lua"}
)
"""Files whose text is compared (others, such as data or build files, are not code a student writes)."""
MAX_SOURCE_BYTES = 1_000_000
"""Larger files are not code a student wrote (generated tables, bundles): left out."""
_HASH_COMMENTS = frozenset({".py", ".sh", ".rb"})
_KEYWORD_TEXT = (
    "and as assert async await break case catch char class const continue def default del do double elif else "
    "enum except extern false finally float fn for from function func go if import in int is lambda let long "
    "match new nil none None not null or pass raise return self short signed sizeof static struct switch this "
    "throw true True False try typedef union unsigned var void volatile while with yield"
)
_KEYWORDS = frozenset(_KEYWORD_TEXT.split())
_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`[^`]*`|\S")
_TRIPLE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_HASH_LINE = re.compile(r"#[^\n]*")
_SLASH = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")


def tokens(text: str, suffix: str) -> list[str]:
    """The normalised tokens of a source file (see the module's docstring)."""
    if suffix == ".py":
        text = _TRIPLE.sub(" ", text)
    text = _HASH_LINE.sub(" ", text) if suffix in _HASH_COMMENTS else _SLASH.sub(" ", text)
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
    kept = set()
    for start in range(len(hashes) - window + 1):
        part = hashes[start : start + window]
        smallest = min(part)
        kept.add(smallest)
    return kept


def fingerprints(text: str, suffix: str) -> frozenset[int]:
    """The winnowed fingerprints of one source file."""
    normal = tokens(text, suffix)
    grams = [" ".join(normal[start : start + K]) for start in range(len(normal) - K + 1)]
    hashes = [int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=8).digest(), "big") for gram in grams]
    return frozenset(winnow(hashes))


def folder_fingerprints(folder: Path, files: Iterable[Path]) -> frozenset[int]:
    """The fingerprints of every source file among `files` (paths in `folder`)."""
    found: set[int] = set()
    for path in files:
        if path.suffix in SOURCE_SUFFIXES and path.is_file() and not path.is_symlink():
            if path.stat().st_size > MAX_SOURCE_BYTES:
                continue
            try:
                found |= fingerprints(path.read_text(encoding="utf-8", errors="replace"), path.suffix)
            except OSError:
                continue
    return frozenset(found)


def similarity(first: frozenset[int], second: frozenset[int]) -> float:
    """The share of the smaller set's fingerprints the other has (0 when either is empty)."""
    smaller = min(len(first), len(second))
    return len(first & second) / smaller if smaller else 0.0
