"""OpenSpiel playthrough regression for python_scout and python_scauver, at every table size.

A playthrough (open_spiel.python.algorithms.generate_playthrough, as OpenSpiel keeps one per game) is the
text of one seeded random game: the game's type and sizes, then at each state its strings, information-state
and observation strings and tensors (the seat's own, public and private observers), rewards, returns and
legal actions, and the action taken. The test replays each stored file's actions and compares the whole new
text with the stored one, character for character, as OpenSpiel's playthrough_test does: the adapters
(referee/games/rl/openspiel.py, features.py, codec.py) may change how they compute, never what they output.

When the encoding changes on purpose, remake the files and review their diff:

    .venv/bin/python tests/games/test_rl_playthroughs.py            # rewrite every file from its table's seed
    .venv/bin/python tests/games/test_rl_playthroughs.py --check    # only say which differ (exit 1 if any)

A game's perfect-recall information-state string grows with its length, so the longer tables play part of a
game (SCOUT's last round through `from_round`, Scauver a few rounds through `round_cap`); the round changes
are covered at the tables that play whole games (SCOUT at 2 and 3 seats, Scauver at 2).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

import pyspiel  # noqa: E402
from absl import flags  # noqa: E402
from open_spiel.python.algorithms import generate_playthrough  # noqa: E402

import referee.games.rl.openspiel  # noqa: E402, F401  (registers python_scout and python_scauver)
from referee.games import load_game  # noqa: E402

FOLDER = Path(__file__).resolve().parent / "playthroughs"


@dataclass(frozen=True)
class Table:
    """One stored playthrough: the game string OpenSpiel loads and the seed of its random actions."""

    game: str
    seed: int

    @property
    def path(self) -> Path:
        slug = re.sub(r"[^A-Za-z0-9_=]+", "-", self.game).strip("-")
        return FOLDER / f"{slug}.txt"


TABLES = (
    Table("python_scout(players=2)", 1),
    Table("python_scout(players=2,observation=compact,returns=score)", 1),
    Table("python_scout(players=3)", 1),
    Table("python_scout(players=4,from_round=4)", 2),
    Table("python_scout(players=5,from_round=5)", 1),
    Table("python_scauver(players=2)", 1),
    Table("python_scauver(players=2,observation=compact,returns=score,round_cap=4)", 1),
    Table("python_scauver(players=3,round_cap=3)", 1),
    Table("python_scauver(players=4,round_cap=2)", 1),
)


def _parse_flags() -> None:
    """generate_playthrough reads an absl flag (replay by action ids, its default) that only a parsed flag set
    gives; pytest's command line is not absl's, so the defaults are taken as parsed."""
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


def generate(table: Table) -> str:
    """The playthrough of `table` from its seed."""
    _parse_flags()
    return generate_playthrough.playthrough(table.game, action_sequence=None, seed=table.seed)


def replay(table: Table) -> tuple[str, str]:
    """(stored, regenerated): the stored file and the text the adapters give for its actions now."""
    _parse_flags()
    stored, again = generate_playthrough.replay(str(table.path))
    return stored, again


def first_difference(stored: str, again: str) -> str:
    """Where two playthroughs part, with a few lines before: a whole file is too long for an assertion."""
    old, new = stored.splitlines(), again.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    shown = [f"  {text[:200]}" for text in old[max(0, line - 3) : line]]
    shown += [f"- {old[line][:300]}" if line < len(old) else "- (end of file)"]
    shown += [f"+ {new[line][:300]}" if line < len(new) else "+ (end of text)"]
    return f"line {line + 1} differs:\n" + "\n".join(shown)


@pytest.mark.parametrize("table", TABLES, ids=[table.path.stem for table in TABLES])
def test_the_stored_playthrough_replays_to_the_same_text(table: Table) -> None:
    stored, again = replay(table)
    assert stored == again, f"{table.path.name}: {first_difference(stored, again)}"
    assert "IsTerminal() = True" in stored
    assert re.search(r"^PublicObservationString\(\) = ", stored, re.MULTILINE)
    assert re.search(r"^PrivateObservationString\(0\) = ", stored, re.MULTILINE)


@pytest.mark.parametrize("name", ["scout", "scauver"])
def test_every_table_size_has_a_playthrough(name: str) -> None:
    info = load_game(name).info
    sizes = set()
    for table in TABLES:
        game = pyspiel.load_game(table.game)
        if game.get_type().short_name == f"python_{name}":
            sizes.add(game.num_players())
    assert sizes == set(range(info.min_players, info.max_players + 1))
    assert {path.name for path in FOLDER.glob("*.txt")} == {table.path.name for table in TABLES}


def test_a_changed_output_is_caught(tmp_path: Path) -> None:
    table = TABLES[0]
    stored = table.path.read_text(encoding="utf-8")
    changed = stored.replace("Returns() = [", "Returns() = [1, ", 1)
    assert changed != stored
    (tmp_path / table.path.name).write_text(changed, encoding="utf-8")
    _parse_flags()
    original, again = generate_playthrough.replay(str(tmp_path / table.path.name))
    assert original != again and again == stored
    assert "differs" in first_difference(original, again)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Remake (or --check) the stored OpenSpiel playthroughs.")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if any file differs")
    options = parser.parse_args(argv)
    FOLDER.mkdir(exist_ok=True)
    differ = 0
    for table in TABLES:
        text = replay(table)[1] if options.check and table.path.exists() else generate(table)
        same = table.path.exists() and table.path.read_text(encoding="utf-8") == text
        differ += not same
        if not same and not options.check:
            table.path.write_text(text, encoding="utf-8")
        print(f"{'same' if same else 'differs' if options.check else 'written'}  {table.path.name}")
    return 1 if options.check and differ else 0


if __name__ == "__main__":
    sys.exit(main())
