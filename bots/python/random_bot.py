"""A bot for any game: it plays a uniformly random legal action.

`--seed S` seeds its choices (any string): the same requests then get the same answers, as check-bot's
opponents need for its games to be reproducible.
"""

import random
import sys
from collections.abc import Sequence

from protocol.sdk import run_bot


def choose(observation: dict, legal_actions: Sequence[dict]) -> dict:
    return random.choice(legal_actions)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--seed"] and len(sys.argv) > 2:
        random.seed(sys.argv[2])
    raise SystemExit(run_bot(choose, name="random", version="1"))
