"""The parts of the game interface written once in referee/games/base.py and the registry."""

from __future__ import annotations

import pytest

from referee.games import ConfigError, IllegalAction, UnknownGame, list_games, load_game, shared_ranks
from referee.games.base import Option


@pytest.mark.parametrize(
    ("scores", "ranks"),
    [
        ([8, 8, 5], [1, 1, 3]),
        ([1, 2, 3], [3, 2, 1]),
        ([4, 4, 4], [1, 1, 1]),
        ([-2, 7, 7, 0], [4, 1, 1, 3]),
    ],
)
def test_shared_ranks_share_equal_scores(scores: list[int], ranks: list[int]) -> None:
    assert shared_ranks(scores) == ranks


def test_shared_ranks_lower_is_better() -> None:
    assert shared_ranks([3, 1, 1], higher_is_better=False) == [3, 1, 1]


def test_option_checks_type_range_and_choices() -> None:
    option = Option("chips", 100, "starting chips", minimum=1, maximum=1000)
    assert option.check(5) == 5
    with pytest.raises(ConfigError, match="must be int"):
        option.check("5")
    with pytest.raises(ConfigError, match="must be int"):
        option.check(True)
    with pytest.raises(ConfigError, match="at least 1"):
        option.check(0)
    with pytest.raises(ConfigError, match="one of"):
        Option("deck", "face", "deck", choices=("face", "numeric")).check("other")


def test_registry_lists_and_loads_every_game() -> None:
    names = list_games()
    assert names == sorted(names)
    for name in names:
        assert load_game(name).name == name


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(UnknownGame, match="known games"):
        load_game("chess")


@pytest.mark.parametrize("name", list_games())
def test_new_game_rejects_bad_players_seed_and_options(name: str) -> None:
    game = load_game(name)
    with pytest.raises(ConfigError, match="players"):
        game.new_game(game.info.max_players + 1, seed=1)
    with pytest.raises(ConfigError, match="seed"):
        game.new_game(game.info.min_players, seed=-1)
    with pytest.raises(ConfigError, match="no option"):
        game.new_game(game.info.min_players, seed=1, config={"no_such_option": 1})


@pytest.mark.parametrize("name", list_games())
def test_apply_refuses_a_seat_not_to_move_and_a_malformed_action(name: str) -> None:
    state = load_game(name).new_game(load_game(name).info.min_players, seed=3)
    idle = [seat for seat in range(state.players) if seat not in state.to_move()]
    if idle:
        with pytest.raises(IllegalAction, match="not to move"):
            state.apply(idle[0], state.legal_actions(state.to_move()[0])[0])
    seat = state.to_move()[0]
    for junk in (None, [], {"no_kind": 1}, {"kind": 7}):
        with pytest.raises(IllegalAction):
            state.apply(seat, junk)  # type: ignore[arg-type]
    assert state.history == []


@pytest.mark.parametrize("name", list_games())
def test_a_seedless_game_draws_and_keeps_its_seed(name: str) -> None:
    game = load_game(name)
    first, second = game.new_game(game.info.min_players), game.new_game(game.info.min_players)
    assert first.seed != second.seed
    assert game.new_game(game.info.min_players, seed=first.seed).observation(0) == first.observation(0)
