"""The OpenSpiel ISMCTS bot (bots/python/openspiel_ismcts.py): the state it searches is its seat's view, its moves
are legal and repeatable given its seed, a timed search stops, and it plays whole games through the referee."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("pyspiel")

from bots.python import openspiel_ismcts  # noqa: E402
from referee.games import load_game  # noqa: E402
from referee.games.rl.codec import codec_for  # noqa: E402
from referee.match import run_match  # noqa: E402
from referee.records import BotSpec, FaultPolicy, GameSpec, Limits, MatchSpec  # noqa: E402
from tournaments.league.identity import program_digest  # noqa: E402
from tournaments.league.league_file import load_league  # noqa: E402

GAME = load_game("scout")
BOT = Path(openspiel_ismcts.__file__)


def positions(players: int, seed: int, count: int) -> list[tuple[Any, int]]:
    """Engine states along a random game (clones), at about `count` decisions, with the seat to choose."""
    state, chooser, found = GAME.new_game(players, seed=seed), random.Random(seed), []
    length = {3: 70, 4: 300, 5: 700}[players]
    while not state.is_over():
        seat = chooser.choice(state.to_move())
        if chooser.random() < count / length:
            found.append((state.clone(), seat))
        state.apply(seat, chooser.choice(state.legal_actions(seat)))
    return found


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_searched_state_shows_the_seat_its_hand_table_and_legal_actions(players: int) -> None:
    codec = codec_for("scout", players, {})
    checks = 0
    for state, seat in positions(players, seed=players, count=8):
        observation = state.observation(seat)
        for draw in range(2):
            root = openspiel_ismcts.root_state(observation, state.config, random.Random(draw))
            assert root.current_player() == seat
            seen = root.observation_of(seat)
            for key in ("hand", "active_set", "active_owner", "hand_sizes", "captured", "chips", "history"):
                assert seen[key] == observation[key], key
            legal = state.legal_actions(seat)
            assert root.legal_actions() == sorted(codec.encode(action, observation) for action in legal)
            checks += 1
    assert checks >= 6


def test_the_same_seed_makes_the_same_legal_moves() -> None:
    found = positions(3, seed=8, count=5)
    plays = []
    for seed in (4, 4):
        bot = openspiel_ismcts.OpenSpielISMCTSBot(seed, simulations=8)
        plays.append([bot.act(state.observation(seat), state.legal_actions(seat)) for state, seat in found])
    assert plays[0] == plays[1]
    for (state, seat), action in zip(found, plays[0], strict=True):
        assert action in state.legal_actions(seat)


def test_a_search_out_of_time_plays_a_legal_action_at_once() -> None:
    state, seat = next(
        (state, seat) for state, seat in positions(3, seed=2, count=6) if len(state.legal_actions(seat)) > 1
    )
    bot = openspiel_ismcts.OpenSpielISMCTSBot(0, simulations=None)
    bot.clock.on_clock(0, 0)
    action = bot.act(state.observation(seat), state.legal_actions(seat))
    assert action in state.legal_actions(seat)
    assert bot.last_simulations == 0


def test_it_plays_whole_games_through_the_referee() -> None:
    bots = (
        BotSpec("openspiel-ismcts", (sys.executable, str(BOT), "--simulations", "3", "--seed", "1")),
        BotSpec("heuristic", (sys.executable, "-m", "bots.python.scout_heuristic")),
        BotSpec("random", (sys.executable, "-m", "bots.python.random_bot")),
    )
    spec = MatchSpec(
        match_id="scout-openspiel-ismcts",
        game="scout",
        bots=bots,
        games=(GameSpec(0, 5, (0, 1, 2)), GameSpec(1, 6, (2, 0, 1))),
        limits=Limits(move_time_ms=20_000, fault_policy=FaultPolicy.FORFEIT),
    )
    record = run_match(spec)
    for game in record.games:
        assert game.faults == ()
        assert len(game.ranks) == 3 and min(game.ranks) == 1


def test_the_ladder_file_enters_this_program_against_the_built_ins() -> None:
    league = load_league(BOT.parents[1] / "ladders" / "scout-3-ismcts.toml")
    by_name = {bot.name: bot for bot in league.bots}
    assert set(by_name) == {"openspiel-ismcts", "search", "heuristic", "random"}
    assert by_name["openspiel-ismcts"].spec.command[-1] == str(BOT)
    assert by_name["openspiel-ismcts"].digest == program_digest((sys.executable, str(BOT)), None)


@pytest.mark.parametrize(("game", "players"), [("scout", 2), ("scauver", 3)])
def test_a_table_it_cannot_search_is_refused_at_the_start(game: str, players: int) -> None:
    info = SimpleNamespace(game=game, players=players, config={})
    with pytest.raises(SystemExit, match="SCOUT at 3 to 5 seats"):
        openspiel_ismcts.OpenSpielISMCTSBot(0, simulations=2).on_game_start(info)
