"""A bot for any game: it plays a uniformly random legal action."""

import random
from collections.abc import Sequence

from protocol.sdk import run_bot


def choose(observation: dict, legal_actions: Sequence[dict]) -> dict:
    return random.choice(legal_actions)


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="random", version="1"))
