"""The SCOUT search bot: its determinizations agree with what its seat sees, it is deterministic given its seed
(iteration mode), it beats random seats, and in real matches at 100 ms a move it never runs out of time."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from clock_match import MOVE_TIME_MS, TIME_BANK_MS, search_timings_at_100_ms
from policy_duel import play, random_policy

from bots.python import ismcts, scout_heuristic, scout_search
from referee.botspec import resolve_bot
from referee.games import load_game

GAME = load_game("scout")


def random_positions(players: int, seed: int, count: int) -> list[Any]:
    """States along a random game, at decisions of the seat to move."""
    state = GAME.new_game(players, seed=seed)
    chooser = random.Random(seed)
    positions = []
    while not state.is_over():
        seat = chooser.choice(state.to_move())
        if chooser.random() < count / 60:
            positions.append((state.clone(), seat))
        state.apply(seat, chooser.choice(state.legal_actions(seat)))
    return positions


def without_past(observation: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in observation.items() if key not in ("round", "scores", "finished_rounds")}


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_determinization_shows_the_seat_what_it_sees(players: int) -> None:
    """The sampled state gives the searching seat the very observation (but the round's number and the scores,
    which the sample restarts) and the same legal actions; the other hands keep their sizes and seen cards."""
    for state, seat in random_positions(players, seed=players, count=6):
        observation = state.observation(seat)
        determinizer = scout_search.ScoutDeterminizer(observation, state.config)
        for sample_seed in range(3):
            sample = determinizer.sample(random.Random(sample_seed))
            seen = sample.observation(seat)
            if observation["phase"] == "orient":  # the others' hidden orient choices are the sample's to make
                assert seat in seen["to_move"] and set(observation["to_move"]) <= set(seen["to_move"])
                seen["to_move"] = observation["to_move"]
            assert without_past(seen) == without_past(observation)
            assert sample.legal_actions(seat) == state.legal_actions(seat)


def test_the_same_seed_makes_the_same_moves_and_another_seed_may_not() -> None:
    positions = random_positions(4, seed=11, count=8)
    plays = []
    for seed in (5, 5, 6):
        bot = scout_search.ScoutSearchBot(seed, iterations=40)
        plays.append([bot.act(state.observation(seat), state.legal_actions(seat)) for state, seat in positions])
    assert plays[0] == plays[1]
    assert plays[0] != plays[2]


def test_iterations_are_counted_and_the_answer_is_legal() -> None:
    state, seat = random_positions(3, seed=2, count=10)[-1]
    bot = scout_search.ScoutSearchBot(1, iterations=25)
    action = bot.act(state.observation(seat), state.legal_actions(seat))
    assert action in state.legal_actions(seat)
    assert bot.last is not None and (bot.last.iterations == 25 or len(state.legal_actions(seat)) == 1)


def test_a_budget_is_iterations_or_time() -> None:
    with pytest.raises(ValueError, match="not both"):
        ismcts.SearchBudget(iterations=3, seconds=1.0)
    assert ismcts.budget_from_clock(100, 0).seconds == pytest.approx(0.05)
    assert ismcts.budget_from_clock(100, 2000).seconds == pytest.approx(0.05)
    assert ismcts.budget_from_clock(1000, 0).seconds == pytest.approx(0.32)
    assert ismcts.budget_from_clock(1000, 10_000).seconds == pytest.approx(0.52)
    assert ismcts.budget_from_clock(50, 0).seconds == 0.0
    assert ismcts.budget_from_clock(0, 0).seconds == 0.0


def test_a_timed_decision_spends_the_move_share_and_a_fixed_one_its_iterations() -> None:
    timed = [scout_search.bot_from_args(argv) for argv in ([], ["--move-share", "0.5"])]
    fixed = scout_search.bot_from_args(["--move-share", "0.5", "--iterations", "40"])
    for bot in (*timed, fixed):
        bot.on_clock(1000, 0)
    assert [bot.clock.budget.seconds for bot in timed] == pytest.approx([0.3 + ismcts.FIXED_S, 0.5 + ismcts.FIXED_S])
    assert fixed.clock.budget == ismcts.SearchBudget(iterations=40)


def test_a_move_share_outside_0_to_1_is_a_usage_error() -> None:
    for bad in ("0", "1.5", "half"):
        with pytest.raises(SystemExit) as stopped:
            scout_search.bot_from_args(["--move-share", bad])
        assert stopped.value.code == 2


class CountedDeals:
    """A determinizer that counts the deals it draws."""

    def __init__(self, determinizer: ismcts.Determinizer) -> None:
        self.determinizer = determinizer
        self.drawn = 0

    def sample(self, rng: random.Random) -> Any:
        self.drawn += 1
        return self.determinizer.sample(rng)


def a_play_decision(players: int) -> tuple[Any, int]:
    return next((s, t) for s, t in random_positions(players, seed=2, count=10) if s.observation(t)["phase"] == "play")


@pytest.mark.parametrize(("limit", "drawn"), [(1, 1), (5, 5), (ismcts.MAX_DETERMINIZATIONS, 24), (500, 100)])
def test_a_search_draws_a_deal_every_third_iteration_up_to_its_limit(limit: int, drawn: int) -> None:
    state, seat = a_play_decision(3)
    observation = state.observation(seat)
    deals = CountedDeals(scout_search.ScoutDeterminizer(observation, state.config))
    ranked = scout_search.ranked_by_heuristic(observation, state.legal_actions(seat))
    game = scout_search.ScoutSearchGame()
    ismcts.search(game, deals, seat, ranked, ismcts.SearchBudget(300), random.Random(1), determinizations=limit)
    assert deals.drawn == drawn


@pytest.mark.parametrize(
    ("argv", "players", "drawn"),
    [([], 3, 120), ([], 4, ismcts.MAX_DETERMINIZATIONS), (["--determinizations", "40"], 3, 40)],
)
def test_the_bot_shares_as_many_deals_as_it_is_told_else_its_tables(
    argv: list[str], players: int, drawn: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, seat = a_play_decision(players)
    bot = scout_search.bot_from_args([*argv, "--iterations", "400"])
    deals: list[CountedDeals] = []
    plain = bot.determinizer

    def counted(observation: dict[str, Any], randomness: Any) -> ismcts.Determinizer:
        deals.append(CountedDeals(plain(observation, randomness)))
        return deals[-1]

    monkeypatch.setattr(bot, "determinizer", counted)
    bot.on_game_start(SimpleNamespace(config=state.config))
    bot.act(state.observation(seat), state.legal_actions(seat))
    assert [count.drawn for count in deals] == [drawn]


def test_a_count_of_deals_below_1_is_a_usage_error() -> None:
    for bad in ("0", "-3", "many", "2.5"):
        with pytest.raises(SystemExit) as stopped:
            scout_search.bot_from_args(["--determinizations", bad])
        assert stopped.value.code == 2


def test_a_spent_clock_still_answers_with_the_prior_first() -> None:
    state, seat = random_positions(4, seed=3, count=10)[-1]
    bot = scout_search.ScoutSearchBot(1)
    bot.on_clock(0, 0)
    observation, legal = state.observation(seat), state.legal_actions(seat)
    assert bot.act(observation, legal) == scout_search.ranked_by_heuristic(observation, legal)[0] or len(legal) == 1


@pytest.mark.parametrize("players", [3, 4])
def test_it_beats_random_seats(players: int) -> None:
    """Deterministic (fixed seeds, iteration mode): the bot wins most of 6 games against random seats. Random
    seats win about 1 in `players`, so 5 of 6 is far beyond chance; the result cannot vary between runs."""
    wins = 0
    for seed in range(6):
        bot = scout_search.ScoutSearchBot(seed, iterations=20)
        seat = seed % players
        policies = [bot.act if other == seat else random_policy(random.Random(seed)) for other in range(players)]
        wins += play("scout", policies, seed)["ranks"][seat] == 1
    assert wins >= 5


def test_search_resolves_per_game() -> None:
    assert resolve_bot("search", "scout").command[-1] == "bots.python.scout_search"
    assert resolve_bot("scout-search", "scauver").command[-1] == "bots.python.scout_search"


def test_real_matches_at_100_ms_a_move_never_time_out() -> None:
    """Two 4-seat games against random bots at move_time_ms=100 with a 2 s bank: no timeout nor any other
    fault, and decisions were made (the bot aims at 50 ms of it, ismcts.budget_from_clock, the rest a margin for
    a loaded machine)."""
    for timing in search_timings_at_100_ms("scout", "bots.python.scout_search", players=4):
        assert timing.decisions > 20
        assert timing.max_ms < MOVE_TIME_MS + TIME_BANK_MS


def test_the_opponent_model_tells_a_random_seat_from_a_shedding_one() -> None:
    """Seat 1 plays at random, seats 0 and 2 the heuristic; over a game, as seat 0 has seen it, the model plays
    seat 1's rollout moves mostly at random and seat 2's greedily."""
    state = GAME.new_game(3, seed=11)
    model = scout_search.OpponentModel(3)
    chooser = random.Random(11)
    while not state.is_over():
        for seat in state.to_move():
            observation, legal = state.observation(seat), state.legal_actions(seat)
            if seat == 0:
                model.observe(observation)
            action = chooser.choice(legal) if seat == 1 else scout_heuristic.choose(observation, legal)
            state.apply(seat, action)
    assert model.randomness(1) > 0.5
    assert model.randomness(2) < 0.2
    assert scout_search.OpponentModel(3).randomness(1) == 0.0


def test_a_rollout_plays_a_random_seat_at_random_and_a_strong_one_greedily() -> None:
    state = GAME.new_game(3, seed=5)
    for seat in state.to_move():
        state.apply(seat, state.legal_actions(seat)[0])
    mover = state.to_move()[0]
    game = scout_search.ScoutSearchGame([1.0 if seat == mover else 0.0 for seat in range(3)])
    greedy = scout_search.ScoutSearchGame([0.0] * 3)
    random_keys = {game.key(game.rollout_action(state, mover, random.Random(seed))) for seed in range(40)}
    greedy_keys = {greedy.key(greedy.rollout_action(state, mover, random.Random(seed))) for seed in range(40)}
    assert len(random_keys) > 2 * len(greedy_keys)


@pytest.mark.parametrize(
    ("players", "given", "depth"),
    [(3, None, 6), (2, None, 12), (4, None, 12), (5, None, 12), (3, 12, 12), (4, 6, 6)],
)
def test_without_the_value_the_rollout_depth_is_the_given_one_else_the_seat_counts(
    players: int, given: int | None, depth: int
) -> None:
    """Without the value, 3 seats score their playouts after 6 moves, the other tables after 12; --rollout-depth
    wins."""
    bot = scout_search.ScoutSearchBot(1, rollout_depth=given, value=None)
    assert bot.rollout_depth_at(players) == depth and bot.value_at(players) is None


@pytest.mark.parametrize(
    ("players", "given", "depth", "valued"),
    [(3, None, 16, True), (4, None, 16, True), (5, None, 16, True), (2, None, 12, False), (3, 6, 6, True)],
)
def test_with_the_value_tables_of_3_to_5_score_playouts_by_it_after_16_moves(
    players: int, given: int | None, depth: int, valued: bool
) -> None:
    bot = scout_search.ScoutSearchBot(1, rollout_depth=given)
    assert bot.rollout_depth_at(players) == depth and (bot.value_at(players) is not None) == valued


@pytest.mark.parametrize("rollout_depth", [4, scout_search.default_rollout_depth(3), scout_search.ROLLOUT_DEPTH])
def test_a_playout_is_scored_after_its_rollout_depth_within_the_round(rollout_depth: int) -> None:
    state = GAME.new_game(3, seed=5)
    for seat in state.to_move():
        state.apply(seat, state.legal_actions(seat)[0])
    game = scout_search.ScoutSearchGame([0.0] * 3, rollout_depth=rollout_depth)
    assert game.rewards(state, rollout_depth - 1) is None
    rewards = game.rewards(state, rollout_depth)
    assert rewards is not None and sum(rewards) == pytest.approx(0.0)


class TreeMovesCounted(scout_search.ScoutSearchGame):
    """Records, at the start of each rollout, how many moves the iteration made from the searched position."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.start = start
        self.tree_moves: list[int] = []

    def rewards(self, state: Any, depth: int) -> list[float] | None:
        if depth == 0:
            self.tree_moves.append(len(state.observation(0)["history"]) - self.start)
        return super().rewards(state, depth)


@pytest.mark.parametrize("tree_depth", [1, 2, None])
def test_the_tree_depth_bounds_the_moves_before_each_rollout(tree_depth: int | None) -> None:
    """Moves counted by the history's growth (a round ended inside the tree restarts the history: negative)."""
    state, seat = next((s, t) for s, t in random_positions(3, seed=1, count=10) if s.observation(t)["phase"] == "play")
    observation = state.observation(seat)
    game = TreeMovesCounted(len(observation["history"]))
    determinizer = scout_search.ScoutDeterminizer(observation, state.config)
    ranked = scout_search.ranked_by_heuristic(observation, state.legal_actions(seat))
    ismcts.search(game, determinizer, seat, ranked, ismcts.SearchBudget(300), random.Random(1), tree_depth=tree_depth)
    if tree_depth is None:
        assert max(game.tree_moves) >= 3
    else:
        assert max(game.tree_moves) == tree_depth


def test_a_scout_beside_a_neighbour_is_one_that_starts_a_match_or_a_run() -> None:
    scouts = [
        {"kind": "scout", "end": end, "flip": flip, "insert": gap, "and_show": False}
        for end in ("left", "right")
        for flip in (False, True)
        for gap in range(4)
    ]
    kept = scout_search.beside_a_neighbour([2, 9, 5], [[6, 1], [7, 10]], scouts)
    placed = {(action["end"], action["flip"], action["insert"]) for action in kept}
    assert placed == {
        ("left", False, 2),  # a 6 before the 5
        ("left", False, 3),  # a 6 after the 5
        ("left", True, 0),  # a 1 before the 2
        ("left", True, 1),  # a 1 after the 2
        ("right", True, 1),  # a 10 before the 9
        ("right", True, 2),  # a 10 after the 9
    }


def scout_decisions(seed: int, players: int = 3) -> list[Any]:
    """States of a game played by the heuristic where the seat to move may only scout or show a single."""
    state = GAME.new_game(players, seed=seed)
    found = []
    while not state.is_over():
        for seat in state.to_move():
            legal = state.legal_actions(seat)
            if any(action["kind"] == "scout" for action in legal) and all(
                action["length"] == 1 for action in legal if action["kind"] == "show"
            ):
                found.append(state.clone())
            state.apply(seat, scout_heuristic.choose(state.observation(seat), legal))
    return found


def test_a_rollout_scouts_beside_a_neighbour_when_it_can_and_the_previous_one_anywhere() -> None:
    beside = scout_search.ScoutSearchGame([0.0] * 3)
    anywhere = scout_search.ScoutSearchGame([0.0] * 3, scouts_beside=False)
    placed_beside = placed_anywhere = 0
    for state in scout_decisions(seed=4)[:10]:
        seat = state.to_move()[0]
        view = state.observation(seat)
        tops = [top for top, _ in view["hand"]]
        scouts = [a for a in state.legal_actions(seat) if a["kind"] == "scout" and not a["and_show"]]
        good = [beside.key(action) for action in scout_search.beside_a_neighbour(tops, view["active_set"], scouts)]
        for seed in range(20):
            move = beside.rollout_action(state, seat, random.Random(seed))
            if move["kind"] == "scout":
                assert not good or beside.key(move) in good
                placed_beside += beside.key(move) in good
            move = anywhere.rollout_action(state, seat, random.Random(seed))
            placed_anywhere += move["kind"] == "scout" and anywhere.key(move) in good
    assert placed_beside > 2 * placed_anywhere > 0


@pytest.mark.parametrize(("players", "beside"), [(2, False), (3, False), (4, True), (5, False)])
def test_rollouts_scout_beside_a_neighbour_at_4_seats(players: int, beside: bool) -> None:
    assert scout_search.ScoutSearchBot(1).scouts_beside_at(players) is beside
    assert not scout_search.ScoutSearchBot(1, scouts_beside=False).scouts_beside_at(players)


def test_random_scouts_is_the_previous_search() -> None:
    """--random-scouts brings back version 2's rollouts, and they make other playouts."""
    assert scout_search.bot_from_args([]).scouts_beside
    assert not scout_search.bot_from_args(["--random-scouts", "--seed", "3"]).scouts_beside
    state = scout_decisions(seed=6, players=4)[3]
    seat = state.to_move()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    visits = {}
    for beside in (True, False):
        bot = scout_search.ScoutSearchBot(2, iterations=80, scouts_beside=beside)
        bot.act(observation, legal)
        assert bot.last is not None
        visits[beside] = bot.last.visits
    assert visits[True] != visits[False]


def test_in_the_last_round_a_playout_is_scored_by_the_places_it_leaves() -> None:
    """Places settled before the round make the points of the round worth nothing; without a standing a playout
    is scored by its points over the others' mean, as before."""
    state = GAME.new_game(3, seed=5)
    for seat in state.to_move():
        state.apply(seat, state.legal_actions(seat)[0])
    by_points = scout_search.ScoutSearchGame([0.0] * 3, rollout_depth=4).rewards(state, 4)
    assert by_points is not None and sum(by_points) == pytest.approx(0.0)
    settled = scout_search.ScoutSearchGame([0.0] * 3, rollout_depth=4, standing=[200, 0, -200]).rewards(state, 4)
    assert settled == pytest.approx([1.0, 0.0, -1.0], abs=1e-6)
    level = scout_search.ScoutSearchGame([0.0] * 3, rollout_depth=4, standing=[0, 0, 0]).rewards(state, 4)
    assert level is not None and all(-1 < reward < 1 for reward in level)
    assert sorted(range(3), key=level.__getitem__) == sorted(range(3), key=by_points.__getitem__)


@pytest.mark.parametrize("players", [3, 4])
def test_only_a_last_round_decision_searches_for_places(players: int) -> None:
    rounds = scout_search.TABLES[players].rounds
    assert scout_search.standing_at({"players": players, "round": rounds, "scores": [1] * players}) == [1] * players
    assert scout_search.standing_at({"players": players, "round": rounds - 1, "scores": [1] * players}) is None


def test_places_is_off_unless_asked_for() -> None:
    assert not scout_search.bot_from_args([]).places
    assert scout_search.bot_from_args(["--places"]).places


def test_a_rollout_plays_the_heuristics_choice_at_its_heuristic_seats_and_greedily_elsewhere() -> None:
    """At a heuristic seat the rollout's move is the heuristic bot's own choice; at the others the greedy policy
    makes other moves (it shows the longest set, a single only half the time)."""
    modelled = scout_search.ScoutSearchGame([0.0] * 3, heuristic_seats=[1, 2])
    greedy = scout_search.ScoutSearchGame([0.0] * 3)
    differ = 0
    for state, seat in random_positions(3, seed=12, count=40):
        legal = state.legal_actions(seat)
        if state.observation(seat)["phase"] != "play":
            continue
        rng = random.Random(seat)
        move = modelled.rollout_action(state, seat, rng)
        if seat == 0:
            assert move == greedy.rollout_action(state, seat, random.Random(seat))
        else:
            assert move == scout_heuristic.choose(state.observation(seat), legal)
            differ += move != greedy.rollout_action(state, seat, random.Random(seat))
    assert differ > 0


@pytest.mark.parametrize(
    ("players", "opponents", "own"), [(2, True, False), (3, True, False), (4, True, False), (5, True, True)]
)
def test_rollouts_play_by_the_heuristic_where_the_table_says(players: int, opponents: bool, own: bool) -> None:
    """The opponents at 2 to 5 seats and the searcher's own seat at 5 by default; --opponents and --own choose
    for each at every table (--opponents greedy is version 5, and at 2 seats version 7; --own greedy at 5 seats
    version 6)."""
    others = [seat for seat in range(players) if seat != 1]

    def told(for_opponents: str, for_own: str) -> list[int]:
        bot = scout_search.bot_from_args(["--opponents", for_opponents, "--own", for_own])
        return bot.heuristic_seats_at(players, 1)

    default = (others if opponents else []) + ([1] if own else [])
    assert scout_search.ScoutSearchBot(1).heuristic_seats_at(players, 1) == sorted(default)
    assert told("greedy", "greedy") == []
    assert told("heuristic", "greedy") == others
    assert told("greedy", "heuristic") == [1]
    assert told("heuristic", "heuristic") == list(range(players))


@pytest.mark.parametrize("option", ["--opponents", "--own"])
def test_an_unknown_rollout_model_is_a_usage_error(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        scout_search.bot_from_args([option, "psychic"])
    assert stopped.value.code == 2
    assert option in capsys.readouterr().err
