"""Fair play within a match: the balanced seating is what the referee plays, and no bot process sees a deal
twice, so a bot that remembers the hands it held learns nothing about its opponents' hands.

The fixture bot hand_memory remembers every hand it is dealt (in memory, and in files under $TMPDIR and
$HOME) and claims its opponents hold every remembered hand that shares no card with its own. Its claims are
checked against the real deal (re-dealt by the engine from the game's seed): the ones from memory are never
right, since a process lives for one rotation, in which every deal is new. The ones from files depend on a
fresh tmp and HOME at every start, which the sandbox gives: they are checked for games played sandboxed.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import shlex
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from referee_helpers import FIXTURE_BOTS, fixture_bot, match_spec
from sandbox_checks import require_sandbox

from referee.deals import DealKey
from referee.games import load_game
from referee.match import run_match
from referee.records import GameRecord, MatchRecord
from referee.seating import design_deals, design_games
from tournaments.league.league_file import load_league
from tournaments.league.schedule import league_schedule
from tournaments.league.schedule import match_spec as league_match_spec


def dealt_hands(game: str, players: int, seed: int, config: dict[str, Any] | None = None) -> list[list[Any]]:
    """Every seat's hand as dealt (what it holds at its first request)."""
    state = load_game(game).new_game(players, seed, config or {})
    return [state.observation(seat)["hand"] for seat in range(players)]


def bot_lines(record: MatchRecord, tag: str) -> list[tuple[int, dict[str, Any]]]:
    """(bot index, the JSON after `tag`) for every line of the bots' logs that starts with `tag`."""
    lines = []
    for bot, run in enumerate(record.bots):
        text = Path(str(run.log_path)).read_text()
        lines += [(bot, json.loads(line[len(tag) + 1 :])) for line in text.splitlines() if line.startswith(tag)]
    return lines


def sandboxed(game: GameRecord) -> bool:
    """Whether the game was played in the sandbox (GameRecord.sandboxed, where the referee has one)."""
    return bool(getattr(game, "sandboxed", False))


def right_claims(record: MatchRecord, claims: list[tuple[int, dict[str, Any]]], source: str) -> list[Any]:
    """The claimed hands of `source` that some opponent really held in the game of the claim."""
    right = []
    for _, claim in claims:
        game = record.games[claim["game_index"]]
        hands = dealt_hands(game.game, len(game.seats), game.seed, dict(record.spec.config))
        opponents = [hands[seat] for seat in range(len(hands)) if seat != claim["seat"]]
        right += [hand for hand in claim[source] if hand in opponents]
    return right


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_balanced_match_seats_everyone_everywhere_and_never_shows_a_process_a_deal_twice(
    players: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TMPDIR", "HOME"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    logs = tmp_path / "logs"
    spec = match_spec("scout", [fixture_bot("hand_memory")] * players, games=design_games(players), log_dir=str(logs))
    record = run_match(spec)
    names = [bot.name for bot in spec.bots]
    deals = design_deals(players)

    assert all(not game.faults for game in record.games)
    seats = Counter((bot, seat) for game in record.games for seat, bot in enumerate(game.seats))
    assert set(seats) == set(itertools.product(names, range(players))) and set(seats.values()) == {deals}
    followers = Counter(
        (game.seats[seat], game.seats[(seat + 1) % players]) for game in record.games for seat in range(players)
    )
    assert set(followers) == set(itertools.permutations(names, 2)) and len(set(followers.values())) == 1

    seen = bot_lines(record, "SEEN")
    assert len(seen) == players * len(record.games), "every bot told its hand in every game"
    deals_of_process: dict[str, list[int]] = defaultdict(list)
    for bot, entry in seen:
        game = record.games[entry["game_index"]]
        assert game.seats[entry["seat"]] == names[bot]
        assert entry["hand"] == dealt_hands("scout", players, game.seed)[entry["seat"]]
        deals_of_process[entry["process"]].append(game.seed)
    assert all(len(set(seeds)) == len(seeds) for seeds in deals_of_process.values()), "a process saw a deal twice"
    assert len(deals_of_process) == record.bot_starts == players * players, "a process per bot and rotation"
    assert all(len(seeds) == deals for seeds in deals_of_process.values()), "a process serves a whole rotation"
    assert len({entry["match_id"] for _, entry in seen}) == 1 and seen[0][1]["match_id"] != spec.match_id

    claims = bot_lines(record, "CLAIM")
    assert len(claims) == len(seen)
    assert right_claims(record, claims, "memory") == []
    if all(sandboxed(game) for game in record.games):
        assert right_claims(record, claims, "files") == []


def _hand_memory_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hand_memory", FIXTURE_BOTS / "hand_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.syspath_prepend(str(FIXTURE_BOTS))
    try:
        spec.loader.exec_module(module)
    finally:
        monkeypatch.undo()
    return module


@pytest.mark.parametrize(("game", "players"), [("scout", 3), ("scout", 5), ("scauver", 2), ("scauver", 4)])
def test_the_memory_trick_works_where_a_process_sees_a_deal_again(game: str, players: int) -> None:
    """What the referee's fresh processes prevent: a bot that held one seat of a deal and sees the deal again
    from another seat names the first seat's hand among its opponents' (so the claims above could be right)."""
    claims = _hand_memory_module().claims
    first, other = dealt_hands(game, players, 11), dealt_hands(game, players, 12)
    assert first[0] in claims([first[0], other[1]], first[1])
    assert claims([first[1]], first[1]) == []


LEAGUE = """game = "scout"
players = 2
seed = 4
deals_per_match = 1
{bots}
"""


def _league_matches(tmp_path: Path, notes: Path, shared_deals: bool, sandbox: bool) -> list[MatchRecord]:
    """Every match of a league of three hand_memory bots (three tables of two), one after the other, each bot
    keeping its notes in `notes` (its declared TMPDIR and HOME: a folder that outlives its processes where
    it can reach it). `shared_deals` replaces each match's deals by the first match's (as leagues dealt until
    issue 19), to show what per-match deals prevent."""
    command = shlex.join([sys.executable, str(FIXTURE_BOTS / "hand_memory.py")])
    entry = '[[bots]]\nname = "{name}"\ncommand = \'{command}\'\nenv = {{ TMPDIR = "{notes}", HOME = "{notes}" }}\n'
    bots = "".join(entry.format(name=name, command=command, notes=notes) for name in ("a", "b", "c"))
    path = tmp_path / "league.toml"
    path.write_text(LEAGUE.format(bots=bots))
    league = load_league(path)
    schedule = league_schedule(league, DealKey.fresh())
    if shared_deals:
        schedule = [dataclasses.replace(match, games=schedule[0].games) for match in schedule]
    specs = [league_match_spec(league, match) for match in schedule]
    return [
        run_match(dataclasses.replace(spec, sandbox=sandbox, log_dir=str(tmp_path / "logs" / spec.match_id)))
        for spec in specs
    ]


def _carried_claims(records: list[MatchRecord]) -> tuple[list[Any], list[Any]]:
    """(the notes of hands seen in earlier matches that bots found, the claims from them that were right)."""
    earlier: list[Any] = []
    carried, right = [], []
    for record in records:
        seen = [entry["hand"] for _, entry in bot_lines(record, "SEEN")]
        claims = bot_lines(record, "CLAIM")
        for _, claim in claims:
            game = record.games[claim["game_index"]]
            opponents = [hand for seat, hand in enumerate(dealt_hands("scout", 2, game.seed)) if seat != claim["seat"]]
            carried += [hand for hand in claim["noted"] if hand in earlier]
            right += [hand for hand in claim["files"] if hand in earlier and hand in opponents]
        earlier += seen
    return carried, right


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_nothing_a_bot_remembers_helps_it_in_a_later_match(sandbox: bool, tmp_path: Path) -> None:
    """hand_memory bots write every hand they hold into a folder of the organiser's (their declared TMPDIR and
    HOME) and claim their opponents hold the remembered hands that share no card with their own. Under the
    sandbox the folder is out of reach, so no note carries to a later match at all; without it the notes do
    carry, but every match deals its own deals, so no note from an earlier match is ever right. With the deals
    shared between matches, as before, the same notes are right: the check can fail."""
    if sandbox:
        require_sandbox()
    notes = tmp_path / "notes"
    notes.mkdir()
    carried, right = _carried_claims(_league_matches(tmp_path, notes, shared_deals=False, sandbox=sandbox))
    assert right == [], "a note from an earlier match told a bot its opponent's hand"
    if sandbox:
        assert carried == [] and not any(notes.iterdir()), "a sandboxed bot kept a note past its process"
        return
    assert carried, "the notes did not carry between matches unsandboxed: the check proves nothing"
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes").mkdir()
    _, right_when_shared = _carried_claims(_league_matches(shared, shared / "notes", shared_deals=True, sandbox=False))
    assert right_when_shared, "with the same deals at every table the notes should have told the hands"
