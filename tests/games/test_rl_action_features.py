"""Action features (referee.games.rl.action_features) against the engine's own view of each legal action.

At decisions of seeded random games every legal action is applied to a clone of the engine, and what its
row says (cards shown, captured, left in hand, the scouted number where it lands, the chips put in, the
flanks after, a link's value) must be what the engine's observation shows after it. Then both adapters
must hand out the same rows, aligned with their legal indices.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from referee.games import GameState, load_game
from referee.games.rl.action_features import SCAUVER_COLUMNS, SCOUT_COLUMNS, action_features
from referee.games.rl.codec import hand_cap
from referee.games.scauver import CARD_VALUE
from referee.games.scout import NOTHING, set_strength

OPTIONS: dict[str, dict[str, Any]] = {"scout": {}, "scauver": {"round_cap": 6}}


def named(row: np.ndarray, columns: tuple[str, ...]) -> dict[str, float]:
    return dict(zip(columns, row.tolist(), strict=True))


def brute_longest(tops: list[int]) -> int:
    return max(
        (
            length
            for start in range(len(tops))
            for length in range(1, len(tops) - start + 1)
            if set_strength(tops[start : start + length]) != NOTHING
        ),
        default=0,
    )


def decisions(name: str, players: int, seeds: range, every: int = 1) -> Any:
    """(state, seat) at every `every`-th decision of random games that never fold (so that Scauver's rounds
    reach the final placement and the showdown); the state is then moved on."""
    rules = load_game(name)
    config = rules.resolve_config(OPTIONS[name])
    for seed in seeds:
        rng = random.Random(seed)
        state = rules.new_game(players, seed, config)
        count = 0
        while not state.is_over():
            seat = state.to_move()[0]
            if count % every == 0:
                yield config, state, seat
            legal = state.legal_actions(seat)
            state.apply(seat, rng.choice([action for action in legal if action["kind"] != "fold"] or legal))
            count += 1


def check_scout(row: dict[str, float], action: dict[str, Any], before: dict[str, Any], after: GameState) -> None:
    seat, cap = before["seat"], hand_cap(before["players"])
    kind = action["kind"]
    assert sum(row[key] for key in ("orient", "show", "scout", "scout_and_show")) == 1
    if kind == "orient":
        assert row["orient"] == 1 and row["flip"] == action["flip"]
        return
    seen = after.observation(seat)
    same_round = seen["round"] == before["round"]
    if kind == "show":
        assert row["show"] == 1 and row["cards_shown"] * 10 == pytest.approx(action["length"])
        left = len(before["hand"]) - action["length"]
        assert row["hand_after"] * cap == pytest.approx(left) and row["empties_hand"] == (left == 0)
        assert row["captures"] * 10 == pytest.approx(len(before["active_set"]))
        if same_round:
            tops = [top for top, _ in seen["active_set"]]
            assert len(seen["hand"]) == left
            assert seen["captured"][seat] - before["captured"][seat] == len(before["active_set"])
            assert row["show_number"] * 10 == pytest.approx(min(tops))
            assert row["match"] == (len(tops) > 1 and len(set(tops)) == 1)
            assert row["run"] == (len(tops) > 1 and len(set(tops)) > 1)
            assert row["longest_set_after"] * 10 == pytest.approx(brute_longest([t for t, _ in seen["hand"]]))
        return
    assert row["scout_and_show" if action["and_show"] else "scout"] == 1
    assert row["from_right"] == (action["end"] == "right") and row["flip"] == action["flip"]
    assert row["hand_after"] * cap == pytest.approx(len(before["hand"]) + 1)
    if same_round:
        hand = seen["hand"]
        assert len(hand) == len(before["hand"]) + 1
        assert row["scouted_number"] * 10 == pytest.approx(hand[action["insert"]][0])
        assert row["active_after"] * 10 == pytest.approx(len(seen["active_set"]))
        assert row["longest_set_after"] * 10 == pytest.approx(brute_longest([t for t, _ in hand]))
        neighbours = [hand[i][0] for i in (action["insert"] - 1, action["insert"] + 1) if 0 <= i < len(hand)]
        assert row["joins_match"] == (hand[action["insert"]][0] in neighbours)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_scout_features_are_what_the_engine_does(players: int) -> None:
    checked = set()
    for config, state, seat in decisions("scout", players, range(2)):
        before = state.observation(seat)
        legal = state.legal_actions(seat)
        rows = action_features("scout", before, legal, config)
        assert rows.shape == (len(legal), len(SCOUT_COLUMNS)) and rows.min() >= 0 and rows.max() <= 1
        for action, row in zip(legal, rows, strict=True):
            after = state.clone()
            after.apply(seat, dict(action))
            check_scout(named(row, SCOUT_COLUMNS), action, before, after)
            checked.add(action["kind"] + str(action.get("and_show", "")))
    assert checked >= {"orient", "show", "scoutFalse"} | ({"scoutTrue"} if players > 2 else set())


def field_sums(field: dict[str, list[str]]) -> tuple[int, int]:
    return sum(CARD_VALUE[card] for card in field["left"]), sum(CARD_VALUE[card] for card in field["right"])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_scauver_features_are_what_the_engine_does(players: int) -> None:
    kinds = set()
    for config, state, seat in decisions("scauver", players, range(2), every=2):
        before = state.observation(seat)
        legal = state.legal_actions(seat)
        rows = action_features("scauver", before, legal, config)
        assert rows.shape == (len(legal), len(SCAUVER_COLUMNS)) and rows.min() >= 0 and rows.max() <= 1
        for action, values in zip(legal, rows, strict=True):
            row = named(values, SCAUVER_COLUMNS)
            kind = action["kind"]
            kinds.add(kind)
            assert row[kind] == 1 and sum(values[:10]) == 1
            after = state.clone()
            after.apply(seat, dict(action))
            seen = after.observation(seat)
            if seen["round"] != before["round"]:
                continue
            if kind in ("bet", "raise", "call"):
                paid = seen["put"][seat] - before["put"][seat]
                assert row["chips_in"] * max(before["cap"], 1) == pytest.approx(paid)
            if kind in ("setup", "place", "final"):
                field = seen["fields"][seat]
                left, right = field_sums(field)
                assert row["left_size_after"] * 4 == pytest.approx(len(field["left"]))
                assert row["right_size_after"] * 4 == pytest.approx(len(field["right"]))
                assert row["flank_gap_after"] * 40 == pytest.approx(min(abs(left - right), 40))
            if kind == "vanguards":
                link = sum(CARD_VALUE[card] for card in action["left"])
                assert link == sum(CARD_VALUE[card] for card in action["right"])  # a valid link: equal sums
                assert row["link_value"] * 30 == pytest.approx(link)
    assert kinds >= {"setup", "check", "place", "final", "vanguards"}


@pytest.mark.parametrize(("name", "players"), [("scout", 4), ("scauver", 3)])
def test_both_adapters_hand_out_the_rows_of_their_legal_indices(name: str, players: int) -> None:
    pytest.importorskip("pettingzoo")
    pyspiel = pytest.importorskip("pyspiel")
    import referee.games.rl.openspiel  # noqa: F401
    from referee.games.rl import pettingzoo_env

    env = pettingzoo_env(name, players=players, **OPTIONS[name])
    env.reset(seed=2)
    raw = env.unwrapped
    for _ in range(40):
        agent = env.agent_selection
        if env.terminations[agent]:
            break
        info = env.infos[agent]
        mask = env.observe(agent)["action_mask"]
        assert info["action_indices"].tolist() == np.flatnonzero(mask).tolist()
        for action in info["legal_actions"]:
            at = info["action_indices"].tolist().index(raw.action_index(action))
            expected = action_features(name, info["observation"], [action], raw.config)[0]
            assert np.array_equal(info["action_features"][at], expected)
        env.step(int(info["action_indices"][len(info["action_indices"]) // 2]))
    game = pyspiel.load_game(f"python_{name}", {"players": players, **OPTIONS[name]})
    state = game.new_initial_state()
    rng = random.Random(2)
    config = load_game(name).resolve_config(OPTIONS[name])
    decided = 0
    while decided < 40 and not state.is_terminal():
        if state.is_chance_node():
            assert state.legal_action_features().shape[0] == 0
            state.apply_action(rng.choice([outcome for outcome, _ in state.chance_outcomes()]))
            continue
        player = state.current_player()
        observation = json.loads(state.observation_string(player))
        rows = state.legal_action_features()
        assert rows.shape[0] == len(state.legal_actions())
        for index, row in zip(state.legal_actions(), rows, strict=True):
            action = json.loads(state.action_to_string(player, index))
            assert np.array_equal(row, action_features(name, observation, [action], config)[0])
        state.apply_action(rng.choice(state.legal_actions()))
        decided += 1
    assert decided == 40
