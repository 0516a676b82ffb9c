"""`referee replay show|verify FILE`: a recorded game for a person, or re-simulated as a check."""

from __future__ import annotations

import click

from referee import replay as replays

from .options import echo_json, json_option


@click.group()
def replay() -> None:
    """Show or verify the replay of one game (written by `referee play --replay-dir`)."""


@replay.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def show(file: str) -> None:
    """Print the game in FILE round by round: hands, actions with times, faults, result."""
    try:
        data = replays.load(file)
        replays.verify(data)
        click.echo(replays.render(data))
    except (replays.ReplayError, replays.ReplayMismatch) as error:
        raise click.ClickException(str(error)) from error


@replay.command()
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@json_option
def verify(files: tuple[str, ...], as_json: bool) -> None:
    """Re-simulate each FILE with the rules engine and check that it ends as recorded (exit 1 if any does not)."""
    outcomes = []
    for file in files:
        try:
            replays.verify(replays.load(file))
            outcomes.append({"file": file, "ok": True, "detail": "re-simulates exactly"})
        except (replays.ReplayError, replays.ReplayMismatch) as error:
            outcomes.append({"file": file, "ok": False, "detail": str(error)})
    if as_json:
        echo_json(outcomes)
    else:
        for outcome in outcomes:
            click.echo(f"{'ok' if outcome['ok'] else 'FAILED'}  {outcome['file']}: {outcome['detail']}")
    failed = sum(not outcome["ok"] for outcome in outcomes)
    if failed:
        raise click.ClickException(f"{failed} of {len(outcomes)} replay(s) do not verify")
