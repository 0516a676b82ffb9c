"""The human seat as an SDK bot: every request becomes a screen and a numbered choice."""

from __future__ import annotations

from typing import Any

from protocol.sdk import GameStart

from .scauver_view import ScauverView
from .scout_view import ScoutView
from .terminal import Terminal
from .views import Action, GameView, Observation, RawView, seat_label

VIEWS: dict[str, GameView] = {"scout": ScoutView(), "scauver": ScauverView()}
TITLES = {"scout": "SCOUT", "scauver": "Scauver"}


class HumanSeat:
    """An SDK bot (act, on_game_start, on_game_over) whose decisions a person makes at `terminal`."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.view: GameView = RawView()
        self.title = ""
        self.decisions = 0
        self.seat = 0
        self.last_game: str | None = None
        """How the previous game ended, kept on the screens of the next (they clear the screen)."""

    def on_game_start(self, info: GameStart) -> None:
        self.view = VIEWS.get(info.game, RawView())
        self.decisions = 0
        self.seat = info.seat
        title = TITLES.get(info.game, info.game)
        self.title = f"{title}, game {info.game_index}: you are seat {info.seat} of {info.players}"
        self.terminal.show([self.title + ". Waiting for the first decision..."], clear=True)

    def act(self, observation: Observation, legal_actions: list[Action]) -> Action:
        self.decisions += 1
        screen = [
            f"{self.title} (your decision {self.decisions})",
            *([f"Last game: {self.last_game}"] if self.last_game else []),
            "",
            *self.view.board(observation),
            "",
            "Your moves:",
            *self.view.menu(legal_actions, observation, self.terminal.width()),
        ]
        self.terminal.show(screen, clear=True)
        prompt = f"Your move, 1 to {len(legal_actions)} (Ctrl-C stops the match): "
        choice = self.terminal.choose(prompt, len(legal_actions))
        chosen = self.view.move(legal_actions[choice], observation)
        self.terminal.show([f"You chose {choice + 1}: {chosen}. Waiting for the other seats..."])
        return legal_actions[choice]

    def on_game_over(self, result: dict[str, Any]) -> None:
        ranks, scores = result["ranks"], result["scores"]
        standings = ", ".join(f"seat {seat_label(seat, self.seat)} {score}" for seat, score in enumerate(scores))
        self.last_game = f"you ranked {ranks[self.seat]} of {len(ranks)}. Scores: {standings}."
        self.terminal.show(["", f"Game over: {self.last_game}"])
