"""The search's learned value of a SCOUT position (bots/python/scout_value.py) and its training
(bots/python/train_scout_value.py): what it reads, its file, its labels and its fit."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bots.python import scout_search, scout_value, train_scout_value
from bots.python.scout_value import FEATURES, ScoutValue, SeatValueNetwork, seat_features
from referee.games import load_game

GAME = load_game("scout")


def positions(players: int, seed: int) -> list:
    """A state at every decision of the play phase of one random game."""
    state = GAME.new_game(players, seed=seed)
    chooser = random.Random(seed)
    seen = []
    while not state.is_over():
        if state.observation(0)["phase"] == "play":
            seen.append(state.clone())
        for seat in state.to_move():
            state.apply(seat, chooser.choice(state.legal_actions(seat)))
    return seen


def test_the_shipped_value_covers_every_table_and_reads_its_features() -> None:
    value = ScoutValue.load()
    for players in (2, 3, 4, 5):
        assert value.covers(players)
        state = positions(players, seed=players)[5]
        scores = value.seat_scores(state)
        assert len(scores) == players and all(np.isfinite(scores))


def test_a_seats_features_are_what_it_sees() -> None:
    """The features are the seat's observation's: another hand's hidden cards, redealt, change nothing."""
    for state in positions(4, seed=3)[::7]:
        for seat in range(4):
            again = state.redeal(seat, random.Random(seat))
            assert seat_features(again.observation(seat)) == seat_features(state.observation(seat))


def test_features_of_a_hand_that_leaves_in_one_show() -> None:
    observation = positions(3, seed=8)[0].observation(0)
    observation |= {"hand": [[4, 1], [5, 2], [6, 3]], "active_set": [[9, 1]], "active_owner": 1}
    features = dict(zip(FEATURES, seat_features(observation), strict=True))
    assert features["in_hand"] == 3 and features["shows_needed"] == 1 and features["best_set_length"] == 3
    assert features["can_beat_active"] == 1 and features["owns_active"] == 0


def test_a_value_file_round_trips_and_refuses_other_features(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    network = SeatValueNetwork(
        np.zeros(len(FEATURES)),
        np.ones(len(FEATURES)),
        rng.normal(size=(len(FEATURES), 4)),
        np.zeros(4),
        rng.normal(size=4),
        np.array(0.5),
    )
    path = tmp_path / "value.npz"
    ScoutValue({3: network}).save(path)
    loaded = ScoutValue.load(path)
    state = positions(3, seed=4)[3]
    assert loaded.seat_scores(state) == ScoutValue({3: network}).seat_scores(state)
    assert not loaded.covers(4)
    with np.load(path) as data:
        arrays = dict(data)
    np.savez(path, **(arrays | {"features": np.array(FEATURES[:-1])}))
    with pytest.raises(ValueError, match="remake it"):
        ScoutValue.load(path)


def test_each_position_is_labelled_with_its_seats_round_score() -> None:
    """Every row of a seat (rows come a seat at a time, in seat order) is labelled with one of that seat's round
    scores, and every round of the game labels some."""
    players = 3
    choose = train_scout_value.teacher("heuristic", 0, None, 0)
    rows, labels = train_scout_value.play_game(players, seed=5, choose=choose)
    assert len(rows) == len(labels) > 0 and all(len(row) == len(FEATURES) for row in rows)
    state = GAME.new_game(players, seed=5)
    while not state.is_over():
        for seat in state.to_move():
            state.apply(seat, choose(state.observation(seat), state.legal_actions(seat)))
    rounds = [round_["scores"] for round_ in state.observation(0)["finished_rounds"]]
    for seat in range(players):
        assert set(labels[seat::players]) <= {float(scores[seat]) for scores in rounds}
    decisions = {tuple(labels[index : index + players]) for index in range(0, len(labels), players)}
    assert len(decisions) == len(set(map(tuple, rounds)))


def test_the_fit_learns_a_target_it_can_represent() -> None:
    rng = np.random.default_rng(2)
    rows = rng.normal(size=(2000, len(FEATURES)))
    labels = 3.0 * rows[:, 0] - 2.0 * rows[:, 3] + 1.0
    network = train_scout_value.fit(rows, labels, seed=0, epochs=600)
    assert np.sqrt(np.mean((network(rows) - labels) ** 2)) < 0.2 * labels.std()


def test_the_search_with_a_value_is_reproducible_and_legal() -> None:
    state = positions(3, seed=9)[4]
    seat = state.to_move()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    moves = [
        scout_search.ScoutSearchBot(7, iterations=60, value=scout_value.DEFAULT_PATH).act(observation, legal)
        for _ in range(2)
    ]
    assert moves[0] == moves[1] and moves[0] in legal


def test_a_value_file_that_cannot_be_read_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "value.npz"
    broken.write_bytes(b"not a value file")
    for path in (tmp_path / "missing.npz", broken):
        with pytest.raises(SystemExit) as exit_:
            scout_search.main(["--value", str(path)])
        assert exit_.value.code == 2
        assert f"cannot read the value file {path}" in capsys.readouterr().err


def test_the_search_can_teach_the_next_value() -> None:
    """A round of expert iteration: self-play by the search (with the current value) labels positions too."""
    choose = train_scout_value.teacher("search", iterations=5, value=scout_value.DEFAULT_PATH, seed=1)
    rows, labels = train_scout_value.play_game(3, seed=2, choose=choose)
    assert len(rows) == len(labels) > 0
    network = train_scout_value.fit(np.array(rows), np.array(labels), seed=0, epochs=50)
    assert np.isfinite(network(np.array(rows))).all()


def test_games_played_in_processes_are_the_games_played_in_one() -> None:
    teacher_args = ("search", 5, scout_value.DEFAULT_PATH, 3)
    seeds = [11, 12, 13]
    alone = train_scout_value.play_games(3, seeds, teacher_args, jobs=1)
    assert train_scout_value.play_games(3, seeds, teacher_args, jobs=2) == alone


def test_a_round_for_one_table_size_keeps_the_others(tmp_path: Path) -> None:
    out = tmp_path / "value.npz"
    train_scout_value.main(
        ["--players", "3", "--games", "4", "--keep", str(scout_value.DEFAULT_PATH), "--out", str(out)]
    )
    kept, shipped = ScoutValue.load(out), ScoutValue.load()
    assert all(kept.covers(players) for players in (2, 3, 4, 5))
    assert kept.networks[4].w1.tolist() == shipped.networks[4].w1.tolist()
    assert kept.networks[3].w1.tolist() != shipped.networks[3].w1.tolist()


def test_a_value_to_keep_that_cannot_be_read_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        train_scout_value.main(["--keep", str(tmp_path / "missing.npz"), "--out", str(tmp_path / "out.npz")])
    assert exit_.value.code == 2
    assert "cannot read the value file" in capsys.readouterr().err
