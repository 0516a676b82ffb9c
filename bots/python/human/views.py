"""What every game's view does, a view for games without one, and the helpers the views share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

Action = dict[str, Any]
Observation = dict[str, Any]


class GameView(Protocol):
    def board(self, observation: Observation) -> list[str]:
        """The table as this seat sees it: every seat's public state, then the seat's own cards."""
        ...

    def move(self, action: Action, observation: Observation) -> str:
        """One legal action in words (short: moves are listed in columns)."""
        ...

    def menu(self, actions: Sequence[Action], observation: Observation, width: int) -> list[str]:
        """Every legal action with its number (its place in `actions`, from 1), in `width` characters where it
        can: many moves that differ in one or two choices are shown as a grid of numbers."""
        ...


class RawView:
    """A game without a view of its own: the observation and the actions as JSON."""

    def board(self, observation: Observation) -> list[str]:
        return [f"{key}: {json.dumps(value)}" for key, value in observation.items()]

    def move(self, action: Action, observation: Observation) -> str:
        return json.dumps(action)

    def menu(self, actions: Sequence[Action], observation: Observation, width: int) -> list[str]:
        return numbered(self, actions, observation, width)


def numbered(view: GameView, actions: Sequence[Action], observation: Observation, width: int) -> list[str]:
    """One entry per action, `N) words`, in columns."""
    return columns([f"{number}) {view.move(action, observation)}" for number, action in enumerate(actions, 1)], width)


def grid(columns_header: Sequence[str], rows: Sequence[tuple[str, Sequence[int | None]]]) -> list[str]:
    """Move numbers in a table: a header line of column labels, then per row its label and the number of the
    move in each column (blank where there is none)."""
    label_width = max(len(label) for label, _ in rows)
    cell = max(len(text) for text in [*columns_header, *(str(n) for _, cells in rows for n in cells if n)]) + 1
    lines = [" " * (label_width + 2) + "".join(text.rjust(cell) for text in columns_header)]
    for label, cells in rows:
        numbers = "".join(("" if number is None else str(number)).rjust(cell) for number in cells)
        lines.append("  " + label.ljust(label_width) + numbers)
    return [line.rstrip() for line in lines]


def seat_label(seat: int, you: int) -> str:
    return f"{seat} (you)" if seat == you else str(seat)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], marks: Sequence[str]) -> list[str]:
    """Rows under headers, columns right-aligned but the first; `marks` prefix each row ("> " for a seat to move)."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(text) for text in column) for column in zip(headers, *cells, strict=True)]

    def line(texts: Sequence[str]) -> str:
        aligned = [text.rjust(width) for text, width in zip(texts, widths, strict=True)]
        return "  ".join([texts[0].ljust(widths[0]), *aligned[1:]])

    return ["  " + line(headers), *(mark + line(row) for mark, row in zip(marks, cells, strict=True))]


def columns(entries: Sequence[str], width: int) -> list[str]:
    """The entries in as many columns as fit in `width` characters, numbered down the columns."""
    if not entries:
        return []
    cell = max(len(entry) for entry in entries) + 3
    count = max(1, min(len(entries), (width - 1) // cell))
    rows = -(-len(entries) // count)
    return ["".join(entry.ljust(cell) for entry in entries[row::rows]).rstrip() for row in range(rows)]
