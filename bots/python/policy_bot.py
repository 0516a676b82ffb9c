"""A bot that plays a saved policy, or any `choose(observation, legal_actions)` function, through the SDK.

    python -m bots.python.policy_bot --policy scout-policy.npz        # a linear policy (train_policy.py)
    python -m bots.python.policy_bot --policy my-network.npz          # a network (referee.games.rl.policy_file)
    python -m bots.python.policy_bot --policy my-network.onnx         # the same as ONNX (onnx_policy.py)
    python -m bots.python.policy_bot --choose my_agent.py             # its function `choose`
    python -m bots.python.policy_bot --choose my_agent.py --function act

The referee's `policy:FILE` bot is this program: `policy:scout-policy.npz`, `policy:my_agent.py` or
`policy:my_agent.py:act` (referee/botspec.py). A policy plays greedily (its most probable action); a network
saved by `referee.games.rl.policy_file.save_policy` sees the vector, mask and action features its environment
gave it, rebuilt from the observation with the environment's own encoder and the options in the file; a
function gets the observation and the legal actions exactly as the SDK delivers them and must return one of
the legal actions.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from protocol.errors import RefereeError
from protocol.sdk import run_bot

MODULE = "bots.python.policy_bot"
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Set to 1 (unless set) before numpy loads: its BLAS would start a thread per core for every product, and a bot
shares the machine with the referee and the other seats. A 4-seat SCOUT MLP (1,170-256-256-1) took 150 ms a
decision so on a loaded 2-core machine, 1.8 ms with one thread (onnxruntime runs with one too)."""
Choose = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def one_thread() -> None:
    """Numerical libraries on one thread each (ONE_THREAD), unless the environment says otherwise."""
    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")


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


def network_choose(path: Path) -> Choose:
    """The network in `path` (.npz or .onnx) as a choose function that refuses a table it was not trained for."""
    from referee.games.rl.policy_file import load_network

    try:
        policy = load_network(path)
    except RefereeError as error:
        raise SystemExit(f"policy_bot: {error}") from None
    players = policy.encoder.settings.players

    def choose(observation: dict[str, Any], legal_actions: list[dict[str, Any]]) -> dict[str, Any]:
        if observation["players"] != players:
            raise SystemExit(f"policy_bot: {path} was trained for {players} players, not {observation['players']}")
        return policy.choose(observation, legal_actions)

    return choose


def policy_paths(command: Sequence[str]) -> list[Path]:
    """The policy file a bot's command line runs, if it runs this program with --policy."""
    words = list(command)
    if MODULE not in words or "--policy" not in words[words.index(MODULE) :]:
        return []
    return [Path(words[words.index("--policy") + 1])]


def _is_network(path: Path) -> bool:
    from referee.games.rl.policy_file import is_policy_file

    return path.suffix.lower() == ".onnx" or is_policy_file(path)


def check_policy_file(path: Path, game: str, players: int, options: dict[str, Any] | None = None) -> None:
    """Refuse (PolicyFileError, a BadInput, its `problem` saying what is wrong) a policy file this bot could not
    play at the table: missing; unreadable or no policy; a network (.npz or .onnx) whose layers do not fit its
    encoder, or trained for another game, player count or (when `options` are given) game options; a linear
    policy of the other game. NoOnnxRuntime (an EnvironmentProblem) for an .onnx without the onnx extra."""
    from referee.games.rl.policy_file import PolicyFileError, PolicyProblem, load_network

    if not path.is_file():
        raise PolicyFileError(f"{path}: no such file", PolicyProblem.MISSING)
    if _is_network(path):
        network = load_network(path)
        try:
            network.check_table(game, players, options)
        except PolicyFileError as error:
            raise PolicyFileError(f"{path}: {error}", error.problem) from None
        return
    from bots.python.linear_policy import LinearPolicy

    try:
        linear = LinearPolicy.load(path)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        reason = str(error).removeprefix(f"{path}: ")
        message = f"{path}: neither a network (save_policy, export_onnx) nor a linear policy: {reason}"
        raise PolicyFileError(message, PolicyProblem.NOT_A_POLICY) from None
    if linear.game != game:
        raise PolicyFileError(f"{path}: this linear policy plays {linear.game}, not {game}", PolicyProblem.TABLE)


def check_policy_seats(
    commands: Sequence[Sequence[str]], game: str, players: int, options: dict[str, Any] | None = None
) -> None:
    """Refuse before a match, with check_policy_file, every policy file among the bots' `commands` that its bot
    could not play at this table."""
    for command in commands:
        for path in policy_paths(command):
            check_policy_file(path, game, players, options)


def check_policy_bots(
    bots: Sequence[tuple[str, Sequence[str]]], game: str, players: int, options: dict[str, Any] | None = None
) -> None:
    """check_policy_seats for a league's (name, command) bots, before any game: the error names the bot and
    says what to do, instead of a fault in each of its games."""
    from referee.games.rl.policy_file import PolicyFileError

    for name, command in bots:
        try:
            check_policy_seats([command], game, players, options)
        except PolicyFileError as error:
            raise PolicyFileError(f"bot {name!r}: {error}; {error.problem.remedy}", error.problem) from None


def check_policy_counts(name: str, command: Sequence[str], game: str, counts: Sequence[int], option: str) -> None:
    """check_policy_bots for one bot at each of the player `counts` (a check of a bot at several tables); a
    file made for another count is refused saying to pick its own with `option`."""
    from referee.games.rl.policy_file import PolicyFileError, PolicyProblem

    for count in counts:
        try:
            check_policy_bots([(name, command)], game, count)
        except PolicyFileError as error:
            if error.problem is not PolicyProblem.TABLE:
                raise
            raise PolicyFileError(f"{error} (give {option} with the count it learned)", error.problem) from None


def load_policy(path: Path) -> Choose:
    from bots.python.linear_policy import LinearPolicy

    if _is_network(path):
        return network_choose(path)
    try:
        return LinearPolicy.load(path).greedy
    except (OSError, ValueError, KeyError) as error:
        raise SystemExit(f"policy_bot: {path}: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--policy", type=Path, help="a policy file: .npz of train_policy or save_policy, .onnx of export_onnx"
    )
    source.add_argument("--choose", type=Path, help="a Python file with a choose(observation, legal_actions)")
    parser.add_argument("--function", default="choose", help="the function's name in --choose (default choose)")
    parser.add_argument("--name", help="the name to play under (default: the file's name)")
    options = parser.parse_args(argv)
    path = options.policy or options.choose
    if options.policy:
        one_thread()
    choose = load_policy(path) if options.policy else load_choose(path, options.function)
    return int(run_bot(choose, name=options.name or path.stem, version="1"))


if __name__ == "__main__":
    raise SystemExit(main())
