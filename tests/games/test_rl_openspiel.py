"""referee.games.rl.openspiel against OpenSpiel's own random_sim_test and against the rules engine.

A random game is played through pyspiel; afterwards a shadow engine is dealt the cards the seats were shown
(SCOUT: every hand at the round's first decision; Scauver: those hands, the first dealer and the draws in
the documented chance order) and replays the game: at every decision the player to move and the legal
action indices must be the engine's, and the returns must follow the engine's ranks.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

pyspiel = pytest.importorskip("pyspiel")

import referee.games.rl.openspiel  # noqa: E402, F401  (registers the games)
from referee.games import load_game  # noqa: E402
from referee.games.rl.codec import codec_for  # noqa: E402
from referee.games.rl.rewards import rank_rewards  # noqa: E402
from referee.games.scauver import FACE_DECK  # noqa: E402


@pytest.mark.parametrize(
    ("name", "players", "sims"), [("python_scout", 3, 2), ("python_scout", 5, 1), ("python_scauver", 3, 1)]
)
def test_random_sim_test_passes(name: str, players: int, sims: int) -> None:
    game = pyspiel.load_game(name, {"players": players})
    pyspiel.random_sim_test(game, num_sims=sims, serialize=True, verbose=False)


@pytest.mark.parametrize(
    ("name", "players"), [("python_scout", 2), ("python_scout", 4), ("python_scauver", 2), ("python_scauver", 4)]
)
def test_random_sim_test_passes_at_the_other_player_counts(name: str, players: int) -> None:
    params: dict[str, Any] = {"players": players} | ({"round_cap": 10} if "scauver" in name else {})
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=1, serialize=True, verbose=False)


def play(game: Any, seed: int) -> dict[str, Any]:
    """One random game; what the shadow needs: chance outcomes by round, each round's hands as the seats
    saw them, every decision (player, legal indices, index taken) and the returns."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    chance: list[list[int]] = [[]]
    hands: list[list[Any]] = []
    eliminated: list[list[bool]] = []
    decisions = []
    dealing = True
    while not state.is_terminal():
        if state.is_chance_node():
            if not dealing:
                chance.append([])
                dealing = True
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            assert sum(probabilities) == pytest.approx(1.0)
            outcome = rng.choice(outcomes)
            chance[-1].append(outcome)
            state.apply_action(outcome)
            continue
        if dealing:
            views = [json.loads(state.observation_string(seat)) for seat in range(game.num_players())]
            hands.append([view["hand"] for view in views])
            eliminated.append(views[0].get("eliminated", [False] * game.num_players()))
            dealing = False
        player, legal = state.current_player(), state.legal_actions()
        action = rng.choice(legal)
        decisions.append((player, legal, action))
        state.apply_action(action)
    return {
        "chance": chance,
        "hands": hands,
        "eliminated": eliminated,
        "decisions": decisions,
        "returns": state.returns(),
    }


def scauver_deal(played: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    chance = played["chance"]
    first_dealer = chance[0][0]
    rounds = []
    for number, (hands, out) in enumerate(zip(played["hands"], played["eliminated"], strict=True)):
        outcomes = chance[number][1:] if number == 0 else chance[number]
        active = out.count(False)
        draws = [FACE_DECK[outcome] for outcome in outcomes[5 * active :]]
        used = {card for seat, hand in enumerate(hands) if not out[seat] for card in hand} | set(draws)
        spare = iter(card for card in FACE_DECK if card not in used)
        listed = [hand if not out[seat] else [next(spare) for _ in range(5)] for seat, hand in enumerate(hands)]
        rounds.append({"hands": listed, "draws": draws})
    return first_dealer, {"rounds": rounds}


@pytest.mark.parametrize(
    ("name", "players"),
    [("scout", 2), ("scout", 3), ("scout", 4), ("scout", 5), ("scauver", 2), ("scauver", 3), ("scauver", 4)],
)
def test_the_game_and_the_engine_agree(name: str, players: int) -> None:
    options: dict[str, Any] = {"round_cap": 8} if name == "scauver" else {}
    game = pyspiel.load_game(f"python_{name}", {"players": players, **options})
    rules = load_game(name)
    for seed in range(2):
        played = play(game, seed)
        config = rules.resolve_config(options)
        if name == "scout":
            deal: dict[str, Any] = {"rounds": played["hands"]}
        else:
            config["first_dealer"], deal = scauver_deal(played)
        shadow = rules.new_game(players, 0, config, deal)
        codec = codec_for(name, players, config)
        for player, legal, action in played["decisions"]:
            assert shadow.to_move()[0] == player
            observation = shadow.observation(player)
            table = {codec.encode(option, observation): option for option in shadow.legal_actions(player)}
            assert sorted(table) == legal
            shadow.apply(player, table[action])
        assert shadow.is_over()
        assert played["returns"] == rank_rewards(shadow.result()["ranks"])


def test_information_states_hold_only_what_the_seat_was_shown() -> None:
    game = pyspiel.load_game("python_scout", {"players": 3})
    state = game.new_initial_state()
    rng = random.Random(5)
    while state.is_chance_node():
        state.apply_action(rng.choice(state.legal_actions()))
    hands = [json.loads(state.observation_string(seat))["hand"] for seat in range(3)]
    for seat in range(3):
        info = state.information_state_string(seat)
        assert json.dumps(hands[seat], separators=(",", ":")) in info
        assert all(json.dumps(hands[other], separators=(",", ":")) not in info for other in range(3) if other != seat)
        assert len(state.observation_tensor(seat)) == len(state.information_state_tensor(seat)) > 0
    before = json.loads(state.observation_string(1))
    state.apply_action(state.legal_actions()[1])  # seat 0 rotates its hand: the others must not learn it
    after = json.loads(state.observation_string(1))
    assert after.pop("to_move") == [1, 2] and before.pop("to_move") == [0, 1, 2]
    assert after == before and after["history"] == []


def test_perfect_recall_is_offered_for_the_seats_whole_view_only() -> None:
    game = pyspiel.load_game("python_scout", {"players": 3})
    public = pyspiel.IIGObservationType(
        perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
    )
    with pytest.raises(ValueError, match="whole view"):
        game.make_py_observer(public)
    assert game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True)) is not None
