"""A bot for any game: it plays a uniformly random legal action."""

import random

from protocol.sdk import run_bot


def choose(observation: dict, legal_actions: list[dict]) -> dict:
    return random.choice(legal_actions)


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="random", version="1"))
