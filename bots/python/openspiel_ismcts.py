"""OpenSpiel's information-set MCTS as a SCOUT bot: an external reference for the ladder (bots/README.md).

The search is OpenSpiel's own (open_spiel.python.algorithms.ismcts.ISMCTSBot, after Cowling, Powley and
Whitehouse 2011: one tree over information states, UCT, one node added per simulation, the most visited action),
evaluated by OpenSpiel's RandomRolloutEvaluator (uniformly random play to the game's end, rank returns), on the
python_scout game of referee.games.rl.openspiel; only its stopping rule is ours (a number of simulations or a
time budget). Needs the `rl` extra (`pip install -e '.[rl]'`); plays 3 to 5 seats.

At each decision the seat's view becomes a python_scout state of the rest of the game (parameters `from_round`,
`scores`, `first_player`: a seat is not shown the last moves of a finished round, so its past is the totals):
this round dealt with the seat's own hand as dealt and the other hands drawn consistently with what it has seen
(scout_search.ScoutDeterminizer), then this round's public moves applied; the other seats' hidden orientation
choices, where the seat is choosing its own, at random. Every simulation starts from a state resampled from the
seat's information state (CardState.redealt, drawn by this bot's seeded generator).

    python -m bots.python.openspiel_ismcts [--seed N] [--simulations N] [--uct-c C]

Without --simulations (or ISMCTS_SIMULATIONS) a decision spends the share of its request's time that the search
bots spend (ismcts.budget_from_clock); with too little time for MIN_SIMULATIONS it plays a random legal action.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts as spiel_ismcts
from open_spiel.python.algorithms import mcts

import referee.games.rl.openspiel  # noqa: F401  (registers python_scout)
from bots.python import ismcts
from bots.python.scout_search import ScoutDeterminizer, history_move
from protocol.sdk import run_bot
from referee.games.rl.codec import codec_for
from referee.games.rl.openspiel import CardState
from referee.games.scout import TABLES, card_pair

Action = dict[str, Any]

UCT_C = 2.0
"""OpenSpiel's usual exploration constant for returns in [-1, 1] (its MCTS examples' default)."""

MIN_SIMULATIONS = 2
"""The first simulation only expands the root; OpenSpiel's final policy needs a visited child. A timed search
with no time for that many plays a uniformly random legal action (as the search would know nothing)."""

ENV_SIMULATIONS = "ISMCTS_SIMULATIONS"


class BudgetedISMCTSBot(spiel_ismcts.ISMCTSBot):  # type: ignore[misc]
    """OpenSpiel's ISMCTSBot whose search stops at `max_simulations` or, if `seconds` is set, when two more mean
    simulations would pass that time since `started` (no visited child yet: every legal action alike). The
    rest of run_search is OpenSpiel's."""

    seconds: float | None = None
    started: float = 0.0
    simulations: int = 0

    def run_search(self, state: Any) -> list[tuple[int, float]]:
        self.reset()
        legal = state.legal_actions()
        if len(legal) == 1:
            return [(legal[0], 1.0)]
        self._root_node = self.create_new_node(state)
        self.simulations = 0
        while self.simulations < self._max_simulations and not self._out_of_time():
            self.run_simulation(self.sample_root_state(state))
            self.simulations += 1
        if self._root_node.total_visits <= 0:
            return [(action, 1.0 / len(legal)) for action in legal]
        return self.get_final_policy(state, self._root_node)

    def _out_of_time(self) -> bool:
        if self.seconds is None:
            return False
        spent = time.perf_counter() - self.started
        return spent + ismcts.ITERATION_MARGIN * spent / max(self.simulations, 1) > self.seconds


@lru_cache(maxsize=32)
def remainder_game(players: int, first_player: int, from_round: int, scores: tuple[int, ...]) -> Any:
    params = {
        "players": players,
        "first_player": first_player,
        "from_round": from_round,
        "scores": ",".join(map(str, scores)),
    }
    return pyspiel.load_game("python_scout", params)


def root_state(observation: dict[str, Any], config: dict[str, Any], rng: random.Random) -> CardState:
    """A python_scout state of the rest of the game that the seat of `observation` cannot tell from the game."""
    players, seat = observation["players"], observation["seat"]
    game = remainder_game(players, observation["round_starter"], observation["round"], tuple(observation["scores"]))
    state = game.new_initial_state()
    deck = TABLES[players].deck
    for hand in ScoutDeterminizer(observation, config).dealt(rng):
        for top, bottom in map(card_pair, hand):
            state.apply_action(2 * deck.index((min(top, bottom), max(top, bottom))) + (top > bottom))
    for entry in observation["history"]:
        state.apply_engine_action(history_move(entry)[1])
    while observation["phase"] == "orient" and state.current_player() != seat:
        state.apply_engine_action({"kind": "orient", "flip": bool(rng.getrandbits(1))})
    if state.current_player() != seat:
        raise ValueError(f"seat {seat}'s view does not put it to move (the state has {state.current_player()})")
    return state


class OpenSpielISMCTSBot:
    def __init__(self, seed: int, simulations: int | None, uct_c: float = UCT_C) -> None:
        self.seed = seed
        self.simulations = simulations
        self.uct_c = uct_c
        self.clock = ismcts.DecisionClock(simulations)
        self.config: dict[str, Any] = {}
        self.last_simulations = 0

    def on_game_start(self, info: Any) -> None:
        if info.game != "scout" or not 3 <= info.players <= 5:
            raise SystemExit(f"openspiel_ismcts plays SCOUT at 3 to 5 seats, not {info.game} at {info.players}")
        self.config = dict(info.config)

    def on_clock(self, time_left_ms: int, bank_left_ms: int) -> None:
        self.clock.on_clock(time_left_ms, bank_left_ms)

    def act(self, observation: dict[str, Any], legal_actions: list[Action]) -> Action:
        if len(legal_actions) == 1:
            return legal_actions[0]
        started = self.clock.started()
        rng = ismcts.decision_rng(
            self.seed, observation["seat"], observation["round"], observation["scores"], len(observation["history"])
        )
        state = root_state(observation, self.config, rng)
        bot = self._search_bot(state.get_game(), rng, started)
        index = int(bot.step(state))
        self.last_simulations = bot.simulations
        codec = codec_for("scout", observation["players"], self.config)
        by_index = {codec.encode(action, observation): action for action in legal_actions}
        return by_index[index]

    def _search_bot(self, game: Any, rng: random.Random, started: float) -> BudgetedISMCTSBot:
        numbers = np.random.RandomState(rng.getrandbits(32))
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=numbers)
        limit = self.simulations if self.simulations is not None else 10**9
        bot = BudgetedISMCTSBot(game, evaluator, self.uct_c, limit, random_state=numbers)
        bot.set_resampler(lambda state, player: state.redealt(player, rng))
        if self.simulations is None:
            bot.seconds, bot.started = self.clock.budget.seconds, started
        return bot


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=int(os.environ.get(ismcts.ENV_SEED, "0")))
    simulations = os.environ.get(ENV_SIMULATIONS)
    parser.add_argument("--simulations", type=int, default=int(simulations) if simulations else None)
    parser.add_argument("--uct-c", type=float, default=UCT_C)
    options = parser.parse_args(argv)
    bot = OpenSpielISMCTSBot(options.seed, options.simulations, options.uct_c)
    return int(run_bot(bot, name="openspiel-ismcts", version="1"))


if __name__ == "__main__":
    raise SystemExit(main())
