"""Hidden information: bots that record every message they receive, over many seeded games of both games.

Each request's observation, with its logs rebuilt from their deltas as a bot does (protocol/logs.py), must be
exactly the engine's observation for that seat at that point of the game (the referee adds nothing), and the
observation and legal actions must hold no secret card of another seat: checked against the full state,
re-simulated from the game's replay. Secret cards: for SCOUT, cards in another hand that were never on the
table this round; for Scauver, every card in another hand, and the cards another seat has set up in its
flanks before the setup is revealed. Records of finished rounds are not searched (a card of a past round may
be dealt again).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from referee_helpers import fixture_bot, match_spec

from protocol.logs import LOG_FROM, LogReceiver
from referee import replay
from referee.games import GameState, load_game
from referee.match import run_match

PAST_ROUNDS = {"finished_rounds", "last_round"}

Request = dict[str, Any]


def _requests_by_game_and_seat(record_dir: Path) -> tuple[dict[tuple[int, int], list[Request]], int]:
    """Every recorded request, its observation's logs rebuilt; and how many requests carried a log delta."""
    requests: dict[tuple[int, int], list[Request]] = defaultdict(list)
    deltas = 0
    for path in record_dir.glob("*.jsonl"):
        game_index = seat = -1
        logs = LogReceiver()
        for line in path.read_text().splitlines():
            message = json.loads(line)
            if message["type"] == "game_start":
                game_index, seat = message["game_index"], message["seat"]
            elif message["type"] == "request":
                logs.restore(message["observation"], message[LOG_FROM])
                deltas += any(message[LOG_FROM].values())
                requests[game_index, seat].append(message)
    return requests, deltas


def _scout_card(value: Any) -> frozenset[int] | None:
    if type(value) is list and len(value) == 2 and all(type(number) is int for number in value):
        return frozenset(value)
    return None


def _secrets(game: str, state: GameState, seat: int) -> set[Any]:
    """The cards of other seats' hands that `seat` must not see now."""
    hidden: set[Any] = set()
    for other in range(state.players):
        if other == seat:
            continue
        observation = state.observation(other)
        if game == "scauver":
            hidden.update(observation["hand"])
            own_view, seat_view = observation["fields"][other], state.observation(seat)["fields"][other]
            for flank in ("left", "right"):
                hidden.update(set(own_view[flank]) - set(seat_view[flank]))
            continue
        public: set[Any] = set()
        for entry in observation["history"]:
            public.update(map(_scout_card, entry.get("cards", [])))
            public.add(_scout_card(entry.get("card")))
        hidden.update(card for card in map(_scout_card, observation["hand"]) if card not in public)
    return hidden


def _leaks(value: Any, hidden: set[Any], game: str) -> list[Any]:
    if game == "scout" and _scout_card(value) in hidden:
        return [value]
    if type(value) is str and value in hidden:
        return [value]
    if type(value) is dict:
        return [leak for key, item in value.items() if key not in PAST_ROUNDS for leak in _leaks(item, hidden, game)]
    if type(value) is list:
        return [leak for item in value for leak in _leaks(item, hidden, game)]
    return []


def _check_game(data: dict[str, Any], requests: dict[tuple[int, int], list[Request]], played: int) -> int:
    """Match each recorded request of the `played`-th game of the match (the bots' game_index counts games in
    the order they are played) with the state it was sent from; return the number checked."""
    game = data["game"]
    state = load_game(game).new_game(data["players"], data["seed"], data["config"])
    queues = {seat: list(requests[played, seat]) for seat in range(data["players"])}
    since_last_move: dict[int, list[tuple[dict[str, Any], set[Any]]]] = defaultdict(list)
    checked = 0
    for move in data["actions"]:
        for seat in state.to_move():
            since_last_move[seat].append((state.observation(seat), _secrets(game, state, seat)))
        seat = move["seat"]
        assert move["by"] == "bot"
        request = queues[seat].pop(0)
        matches = [hidden for observation, hidden in since_last_move.pop(seat) if observation == request["observation"]]
        assert matches, f"seat {seat} got an observation the engine never gave it"
        assert not _leaks(request["observation"], matches[-1], game)
        assert not _leaks(request["legal_actions"], matches[-1], game)
        assert request["legal_actions"] == state.legal_actions(seat)
        state.apply(seat, move["action"])
        checked += 1
    assert not any(queues.values())
    return checked


@pytest.mark.parametrize(
    "game, players, games", [("scout", 4, 8), ("scout", 3, 6), ("scauver", 3, 6), ("scauver", 4, 4)]
)
def test_bots_never_see_another_seats_hidden_cards(
    game: str, players: int, games: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_dir = tmp_path / "records"
    record_dir.mkdir()
    monkeypatch.setenv("RECORD_DIR", str(record_dir))
    spec = match_spec(
        game,
        [fixture_bot("recorder")] * players,
        games=games,
        seed=players * 101,
        replay_dir=str(tmp_path / "replays"),
        sandbox=False,  # the recorders write into the test's folder, which the sandbox would hide from them
    )
    record = run_match(spec)
    assert all(not game_record.faults for game_record in record.games)
    requests, deltas = _requests_by_game_and_seat(record_dir)
    assert deltas, "logs are sent as deltas"
    checked = 0
    for played, game_record in enumerate(record.games):
        data = replay.load(game_record.replay_path)
        replay.verify(data)
        checked += _check_game(data, requests, played)
    assert checked == sum(sum(timing.decisions for timing in g.timings) for g in record.games)


@pytest.mark.parametrize("game", ["scout", "scauver"])
def test_the_leak_detector_finds_another_seats_hand(game: str) -> None:
    state = load_game(game).new_game(3, seed=5)
    assert _leaks(state.observation(1)["hand"], _secrets(game, state, 0), game)
    assert not _leaks(state.observation(0), _secrets(game, state, 0), game)


def test_the_leak_detector_finds_a_setup_not_yet_revealed() -> None:
    state = load_game("scauver").new_game(3, seed=5)
    setup = state.legal_actions(1)[0]
    state.apply(1, setup)
    hidden = _secrets("scauver", state, 0)
    assert set(setup["left"] + setup["right"]) <= hidden
    assert not _leaks(state.observation(0), hidden, "scauver")
