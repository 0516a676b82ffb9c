"""A bot that plays a saved policy, or any `choose(observation, legal_actions)` function, through the SDK.

    python -m bots.python.policy_bot --policy scout-policy.npz        # a linear policy (train_policy.py)
    python -m bots.python.policy_bot --choose my_agent.py             # its function `choose`
    python -m bots.python.policy_bot --choose my_agent.py --function act

The referee's `policy:FILE` bot is this program: `policy:scout-policy.npz`, `policy:my_agent.py` or
`policy:my_agent.py:act` (referee/botspec.py). A policy plays greedily (its most probable action); a
function gets the observation and the legal actions exactly as the SDK delivers them and must return one of
the legal actions.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol.sdk import run_bot

Choose = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def load_choose(path: Path, function: str) -> Choose:
    """The function `function` of the Python file at `path`."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"policy_bot: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    chosen = getattr(module, function, None)
    if not callable(chosen):
        raise SystemExit(f"policy_bot: {path} has no function {function!r}")
    return chosen


def load_policy(path: Path) -> Choose:
    from bots.python.linear_policy import LinearPolicy

    try:
        return LinearPolicy.load(path).greedy
    except (OSError, ValueError, KeyError) as error:
        raise SystemExit(f"policy_bot: {path}: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--policy", type=Path, help="a policy file (.npz) written by train_policy")
    source.add_argument("--choose", type=Path, help="a Python file with a choose(observation, legal_actions)")
    parser.add_argument("--function", default="choose", help="the function's name in --choose (default choose)")
    parser.add_argument("--name", help="the name to play under (default: the file's name)")
    options = parser.parse_args(argv)
    path = options.policy or options.choose
    choose = load_policy(path) if options.policy else load_choose(path, options.function)
    return int(run_bot(choose, name=options.name or path.stem, version="1"))


if __name__ == "__main__":
    raise SystemExit(main())
