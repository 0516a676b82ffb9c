"""The search's root prior distilled from its own decisions (bots/python/scout_prior.py), its training
(bots/python/train_scout_prior.py) and its use by the search bot at 3 seats."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from bots.python import scout_prior, scout_search, train_scout_prior
from bots.python.scout_prior import SCOUT_FEATURES, SHOW_FEATURES, OptionKind, ScoutPrior
from referee.games import load_game

GAME = load_game("scout")


def play_decisions(players: int, seed: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every decision of the play phase with a choice, along a game of random moves."""
    state = GAME.new_game(players, seed=seed)
    chooser = random.Random(seed)
    found = []
    while not state.is_over():
        for seat in state.to_move():
            observation, legal = state.observation(seat), state.legal_actions(seat)
            if observation["phase"] == "play" and len(legal) > 1:
                found.append((observation, legal))
            state.apply(seat, chooser.choice(legal))
    return found


def with_shows_and_scouts() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return next(
        (observation, legal)
        for observation, legal in play_decisions(3, seed=4)
        if {action["kind"] for action in legal} == {"show", "scout"}
        and any(action.get("and_show") for action in legal)
        and any(action.get("and_show") is False for action in legal)
    )


def preferring(kind: OptionKind) -> ScoutPrior:
    """A prior that puts `kind` first, whatever the features (a bias of 5 on it, 0 on the others)."""
    show, scout, scout_show = np.zeros(len(SHOW_FEATURES)), np.zeros(len(SCOUT_FEATURES)), np.zeros(len(SCOUT_FEATURES))
    (show, scout, scout_show)[kind][0] = 5.0
    return ScoutPrior(show, scout, scout_show)


def test_every_show_is_an_option_and_each_kind_of_scout_one_more() -> None:
    observation, legal = with_shows_and_scouts()
    options = scout_prior.options(observation, legal)
    shows = [index for index, action in enumerate(legal) if action["kind"] == "show"]
    assert [option.actions for option in options if option.kind is OptionKind.SHOW] == [(index,) for index in shows]
    scouts = {option.kind: set(option.actions) for option in options if option.kind is not OptionKind.SHOW}
    assert scouts[OptionKind.SCOUT] == {i for i, a in enumerate(legal) if a.get("and_show") is False}
    assert scouts[OptionKind.SCOUT_AND_SHOW] == {i for i, a in enumerate(legal) if a.get("and_show")}
    assert all(len(option.features) == len(SHOW_FEATURES) for option in options if option.kind is OptionKind.SHOW)


def test_a_shows_features_say_its_length_and_whether_it_leads_or_breaks_a_longer_set() -> None:
    tops = [3, 4, 5, 5, 9]
    features = dict(zip(SHOW_FEATURES, scout_prior.show_features(tops, 0, 2, active_length=0), strict=True))
    assert features["length"] == 2 and features["leads"] == 1 and features["leads_length"] == 2
    assert features["breaks_a_longer_set"] == 1 and features["same_number"] == 0 and features["highest_number"] == 0.4
    pair = dict(zip(SHOW_FEATURES, scout_prior.show_features(tops, 2, 2, active_length=1), strict=True))
    assert pair["same_number"] == 1 and pair["leads"] == 0 and pair["breaks_a_longer_set"] == 0


@pytest.mark.parametrize("kind", list(OptionKind))
def test_the_ranking_puts_the_priors_options_first_then_the_heuristics_order(kind: OptionKind) -> None:
    observation, legal = with_shows_and_scouts()
    by_heuristic = scout_search.ranked_by_heuristic(observation, legal)
    ranked = preferring(kind).ranked(observation, legal, by_heuristic)
    assert sorted(map(id, ranked)) == sorted(map(id, legal))
    first = ranked[0]
    if kind is OptionKind.SHOW:
        assert first is next(action for action in by_heuristic if action["kind"] == "show")
    else:
        wanted = kind is OptionKind.SCOUT_AND_SHOW
        assert first is next(a for a in by_heuristic if a["kind"] == "scout" and a["and_show"] == wanted)
    heads = len(scout_prior.options(observation, legal))
    rest = [action for action in by_heuristic if all(action is not head for head in ranked[:heads])]
    assert ranked[heads:] == rest


def test_an_orientation_keeps_the_heuristics_order() -> None:
    state = GAME.new_game(3, seed=1)
    observation, legal = state.observation(0), state.legal_actions(0)
    by_heuristic = scout_search.ranked_by_heuristic(observation, legal)
    assert preferring(OptionKind.SCOUT).ranked(observation, legal, by_heuristic) == by_heuristic


def test_a_prior_file_round_trips_and_one_of_other_features_is_refused(tmp_path: Path) -> None:
    prior = preferring(OptionKind.SCOUT)
    prior.save(tmp_path / "prior.npz")
    loaded = ScoutPrior.load(tmp_path / "prior.npz")
    assert all(np.array_equal(getattr(loaded, part), getattr(prior, part)) for part in ("show", "scout", "scout_show"))
    np.savez(tmp_path / "other.npz", show_features=np.array(("bias",)), scout_features=np.array(SCOUT_FEATURES),
             show=np.zeros(1), scout=prior.scout, scout_show=prior.scout_show)  # fmt: skip
    with pytest.raises(ValueError, match="remake it"):
        ScoutPrior.load(tmp_path / "other.npz")


def test_the_shipped_prior_loads() -> None:
    ScoutPrior.load()


def test_a_fit_learns_where_the_visits_go() -> None:
    """Decisions whose visits all went to their longest Shows: the fitted prior ranks one of them first."""
    decisions, seen = [], []
    for observation, legal in play_decisions(3, seed=7) + play_decisions(3, seed=8):
        lengths = [action["length"] for action in legal if action["kind"] == "show"]
        if len(set(lengths)) > 1:
            visits = {tuple(a.values()): 10 for a in legal if a["kind"] == "show" and a["length"] == max(lengths)}
            made = train_scout_prior.decision(observation, legal, visits)
            assert made is not None
            decisions.append(made)
            seen.append((observation, legal, max(lengths)))
    assert len(decisions) >= 20
    prior = train_scout_prior.prior_of(train_scout_prior.fit(decisions))
    firsts = [prior.ranked(o, legal, scout_search.ranked_by_heuristic(o, legal))[0] for o, legal, _ in seen]
    longest = sum(first.get("length") == length for first, (_, _, length) in zip(firsts, seen, strict=True))
    assert longest >= 0.9 * len(seen)


def test_training_writes_a_prior_the_bot_can_use_and_the_same_one_in_two_processes(tmp_path: Path) -> None:
    out = tmp_path / "prior.npz"
    assert train_scout_prior.main(["--games", "3", "--iterations", "20", "--out", str(out)]) == 0
    twice = tmp_path / "two-jobs.npz"
    assert train_scout_prior.main(["--games", "3", "--iterations", "20", "--jobs", "2", "--out", str(twice)]) == 0
    assert out.read_bytes() == twice.read_bytes()
    bot = scout_search.bot_from_args(["--prior", str(out), "--iterations", "20"])
    assert bot.prior is not None and bot.prior_at(3) is bot.prior


@pytest.mark.parametrize(("players", "used"), [(3, True), (4, False), (2, False)])
def test_the_bot_ranks_its_root_by_the_prior_at_3_seats_only(players: int, used: bool, tmp_path: Path) -> None:
    """With no time to search, the bot answers its root's first action: at 3 seats the prior's."""
    preferring(OptionKind.SCOUT).save(tmp_path / "scout-first.npz")
    bot = scout_search.bot_from_args(["--prior", str(tmp_path / "scout-first.npz")])
    scouted = 0
    for observation, legal in play_decisions(players, seed=5)[:20]:
        bot.on_game_start(SimpleNamespace(config={}))
        bot.on_clock(0, 0)
        action = bot.act(observation, legal)
        by_heuristic = scout_search.ranked_by_heuristic(observation, legal)
        plain = [a for a in by_heuristic if a["kind"] == "scout" and not a["and_show"]]
        assert action == (plain[0] if used and plain else by_heuristic[0])
        scouted += bool(plain) and action == plain[0] != by_heuristic[0]
    assert scouted >= 3 if used else scouted == 0


def test_no_prior_keeps_the_heuristics_ranking_and_a_bad_prior_file_is_a_usage_error(tmp_path: Path) -> None:
    assert scout_search.bot_from_args(["--no-prior"]).prior_at(3) is None
    (tmp_path / "bad.npz").write_bytes(b"not a prior")
    for argv in (["--prior", str(tmp_path / "bad.npz")], ["--prior", str(tmp_path / "missing.npz")]):
        with pytest.raises(SystemExit) as stopped:
            scout_search.bot_from_args(argv)
        assert stopped.value.code == 2
