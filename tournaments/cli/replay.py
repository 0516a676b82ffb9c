"""`referee replay show|verify|html FILE`: a recorded game for a person (as text or as a page), or
re-simulated as a check. FILE is a JSON replay or a replay page (which embeds its replay)."""

from __future__ import annotations

from pathlib import Path

import click

from referee import replay as replays

from ..pages.replay_source import load_replay
from ..pages.text import render_text
from ..pages.writer import page_path, write_replay_page
from .options import echo_json, json_option
from .output import echo

_REPLAY_FILE = click.Path(exists=True, dir_okay=False)


@click.group()
def replay() -> None:
    """Show, verify or render the replay of one game (written by `referee play --replay-dir`)."""


@replay.command()
@click.argument("file", type=_REPLAY_FILE)
def show(file: str) -> None:
    """Print the game in FILE round by round: hands, every action with its cards and time, faults, each round's
    end with its scores (SCOUT) or pot, showdown and chips (Scauver), and the result."""
    data = load_replay(file)
    replays.verify(data)
    echo(render_text(data))


@replay.command()
@click.argument("file", type=_REPLAY_FILE)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), default=None, help="The page to write  [default: FILE.html]"
)
def html(file: str, output: str | None) -> None:
    """Write the game in FILE as one self-contained HTML page (open it in any browser; it loads nothing).

    Step through it decision by decision (buttons, arrow keys, the slider, a round), play it at a chosen speed,
    and switch between the full view and any one seat's view: what that seat's bot was shown. Faults are marked
    on the timeline.
    """
    target = Path(output) if output else page_path(file)
    if target.resolve() == Path(file).resolve():
        raise click.UsageError(f"{file} is the replay itself: give another --output")
    data = load_replay(file)
    replays.verify(data)
    write_replay_page(data, target)
    echo(str(target))


@replay.command()
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=_REPLAY_FILE)
@json_option
def verify(files: tuple[str, ...], as_json: bool) -> None:
    """Re-simulate each FILE with the rules engine and check that it ends as recorded (exit 1 if any does not)."""
    outcomes = []
    for file in files:
        try:
            replays.verify(load_replay(file))
            outcomes.append({"file": file, "ok": True, "detail": "re-simulates exactly"})
        except (replays.ReplayError, replays.ReplayMismatch) as error:
            outcomes.append({"file": file, "ok": False, "detail": str(error)})
    if as_json:
        echo_json(outcomes)
    else:
        for outcome in outcomes:
            echo(f"{'ok' if outcome['ok'] else 'FAILED'}  {outcome['file']}: {outcome['detail']}")
    failed = sum(not outcome["ok"] for outcome in outcomes)
    if failed:
        raise click.ClickException(f"{failed} of {len(outcomes)} replay(s) do not verify")
