"""protocol.safe_text: controls escaped for terminals, CSV cells neutralised, names normalised, refused when
they hide characters, and look-alikes found."""

from __future__ import annotations

import csv
import io

import pytest

from protocol.safe_text import (
    UnsafeName,
    checked_name,
    csv_cell,
    escape_control,
    lookalikes,
    one_line,
    skeleton,
)

ATTACKS = [
    "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",  # OSC 52: set the clipboard
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x9b2K",  # C1 CSI: erase the line
    "\x7f\x00\x08\r",  # DEL, NUL, backspace, carriage return
    "\u202eevil\u202c",  # right-to-left override
    "a\u2028b\u2029c",  # line and paragraph separators
    "zero\u200bwidth\ufeff",
]


@pytest.mark.parametrize("text", ATTACKS)
def test_no_control_survives_escaping(text: str) -> None:
    for multiline in (False, True):
        shown = escape_control(text, multiline=multiline)
        assert all(char.isprintable() for char in shown), repr(shown)
        assert "\\" in shown


def test_escapes_are_readable_and_multiline_output_keeps_its_lines() -> None:
    assert escape_control("a\x1b[31mb\x9bc\u202e") == "a\\x1b[31mb\\x9bc\\u202e"
    assert escape_control("one\n\ttwo\r") == "one\\n\\ttwo\\r"
    assert escape_control("one\n\ttwo\r", multiline=True) == "one\n\ttwo\\r"
    assert one_line("name\nforged") == "name\\nforged"
    assert escape_control("plain café, 東京 ✓") == "plain café, 東京 ✓"


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r", " ="])
def test_formula_cells_get_a_leading_quote(start: str) -> None:
    cell = csv_cell(start + 'HYPERLINK("http://x")')
    assert isinstance(cell, str) and cell.startswith("'")
    buffer = io.StringIO()
    csv.writer(buffer).writerow([cell])
    assert next(csv.reader(io.StringIO(buffer.getvalue())))[0][0] == "'"


def test_other_cells_are_left_alone() -> None:
    assert csv_cell("random") == "random"
    assert csv_cell("a=b") == "a=b"
    assert csv_cell(-3) == -3
    assert csv_cell(2.5) == 2.5
    assert csv_cell(None) is None
    assert csv_cell("bad\x1b[2J") == "bad\\x1b[2J"


def test_names_are_normalised_to_nfkc() -> None:
    assert checked_name("ｒａｎｄｏｍ") == "random"
    assert checked_name("ﬁnal") == "final"
    assert checked_name("José") == "José"


@pytest.mark.parametrize(
    "name", ["ran\u200bdom", "\u202emodnar", "rand\u2066om\u2069", "a\x1bb", "tab\there", "ran\u034fdom", "\u3164", " "]
)
def test_names_hiding_characters_are_refused(name: str) -> None:
    with pytest.raises(UnsafeName, match="name"):
        checked_name(name)


def test_lookalikes_across_scripts_and_case_are_found() -> None:
    cyrillic = "r\u0430ndom"
    greek = "rand\u03bfm"
    assert skeleton(cyrillic) == skeleton("random") == skeleton("RANDOM") == skeleton(greek)
    assert lookalikes(["random", cyrillic, "heuristic", greek, "random"]) == [("random", cyrillic, greek)]
    assert lookalikes(["random", "heuristic", "José", "Jose"]) == []
    assert lookalikes(["b0t", "bot"]) == [("b0t", "bot")]
