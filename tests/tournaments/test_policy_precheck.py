"""A league (and check-bot) refuses a `policy:FILE` bot whose file it could not play, before any game: one line
naming the bot, what is wrong (PolicyProblem) and what to do, instead of a fault in every one of its games.

One fixture file broken each way: missing, not a policy, damaged ONNX, another game, another table size, other
game options, a network that does not fit its own encoder, a linear policy of the other game. A good file of
each format passes the same check and the league plans its games.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bots.python.linear_policy import FEATURES, LinearPolicy
from bots.python.policy_bot import check_policy_bots
from tournaments.cli import main
from tournaments.cli.policy_check import check_league_policies
from tournaments.league.league_file import load_league

pytest.importorskip("pettingzoo")
from referee.games.rl.policy_file import (  # noqa: E402
    EncoderSettings,
    PolicyEncoder,
    PolicyFileError,
    PolicyProblem,
    save_policy,
)

SCOUT_2 = EncoderSettings("scout", 2, "compact", True)


def layers(settings: EncoderSettings, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    inputs, outputs = PolicyEncoder(settings).network_shape
    rng = np.random.default_rng(seed)
    return [
        (rng.normal(size=(inputs, 8)), rng.normal(size=8)),
        (rng.normal(size=(8, outputs)), rng.normal(size=outputs)),
    ]


def network(settings: EncoderSettings) -> Callable[[Path], None]:
    return lambda path: save_policy(path, layers(settings), settings)


def misfit(path: Path) -> None:
    """A policy .npz whose encoder settings (scout at 3) do not fit its layers (made for scout at 2)."""
    save_policy(path, layers(SCOUT_2), SCOUT_2)
    arrays = dict(np.load(path))
    arrays["encoder"] = np.array(EncoderSettings("scout", 3, "compact", True).to_json())
    with open(path, "wb") as out:
        np.savez(out, **arrays)


def linear_scauver(path: Path) -> None:
    LinearPolicy("scauver", np.zeros(len(FEATURES["scauver"]))).save(path)


BROKEN: dict[str, tuple[str, Callable[[Path], None], PolicyProblem, str]] = {
    "not-a-policy": (
        "net.npz",
        lambda path: path.write_bytes(b"just text"),
        PolicyProblem.NOT_A_POLICY,
        "nor a linear",
    ),
    "another-game": ("net.npz", network(EncoderSettings("scauver", 2)), PolicyProblem.TABLE, "not scout at 2"),
    "another-table": ("net.npz", network(EncoderSettings("scout", 4)), PolicyProblem.TABLE, "scout at 4 players"),
    "other-options": (
        "net.npz",
        network(EncoderSettings("scout", 2, options={"first_player": 1})),
        PolicyProblem.OPTIONS,
        "trained with first_player=1, not first_player=0",
    ),
    "misfit": ("net.npz", misfit, PolicyProblem.SHAPE, "does not fit its encoder"),
    "linear-of-scauver": ("lin.npz", linear_scauver, PolicyProblem.TABLE, "linear policy plays scauver"),
}
REMEDY_WORDS = {problem: problem.remedy for problem in PolicyProblem}


def league(folder: Path, policy: str) -> Path:
    path = folder / "league.toml"
    path.write_text(
        'game = "scout"\nplayers = 2\nseed = 1\ndeals_per_match = 1\n'
        f'[[bots]]\nname = "mine"\ncommand = "policy:{policy}"\n[[bots]]\nname = "random"\ncommand = "random"\n'
    )
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("way", sorted(BROKEN))
def test_a_league_refuses_a_broken_policy_file_before_any_game(way: str, tmp_path: Path) -> None:
    name, make, problem, detail = BROKEN[way]
    make(tmp_path / name)
    path = league(tmp_path, name)
    with pytest.raises(PolicyFileError, match=detail) as refused:
        check_league_policies(load_league(path))
    assert refused.value.problem is problem
    message = str(refused.value)
    assert message.startswith(f"bot 'mine': {tmp_path / name}: ") and message.endswith(problem.remedy)
    done = run("tournament", "run", str(path), "--no-sandbox")
    assert done.exit_code == 1, done.output
    assert f"bot 'mine': {tmp_path / name}: " in done.output and problem.remedy in done.output
    errors = [line for line in done.output.splitlines() if not line.startswith("warning: --no-sandbox")]
    assert len(errors) == 1 and errors[0].startswith("Error: bot 'mine': "), done.output
    assert not list(tmp_path.glob("*.db*")), "the store was opened before the check"
    assert run("tournament", "run", str(path), "--dry-run").exit_code == 1


def test_a_file_missing_when_the_league_runs_is_refused(tmp_path: Path) -> None:
    network(SCOUT_2)(tmp_path / "net.npz")
    loaded = load_league(league(tmp_path, "net.npz"))
    check_league_policies(loaded)
    (tmp_path / "net.npz").unlink()
    with pytest.raises(PolicyFileError, match="no such file") as refused:
        check_league_policies(loaded)
    assert refused.value.problem is PolicyProblem.MISSING
    assert str(refused.value).endswith(PolicyProblem.MISSING.remedy)
    again = pickle.loads(pickle.dumps(refused.value))
    assert again.problem is PolicyProblem.MISSING and str(again) == str(refused.value)


def test_a_damaged_onnx_file_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    (tmp_path / "net.onnx").write_bytes(b"\x08\x07garbage")
    with pytest.raises(PolicyFileError, match="not a readable ONNX model") as refused:
        check_league_policies(load_league(league(tmp_path, "net.onnx")))
    assert refused.value.problem is PolicyProblem.UNREADABLE


def test_good_files_of_each_format_pass_and_the_league_plans_its_games(tmp_path: Path) -> None:
    network(SCOUT_2)(tmp_path / "net.npz")
    LinearPolicy("scout", np.ones(len(FEATURES["scout"]))).save(tmp_path / "lin.npz")
    formats = ["net.npz", "lin.npz"]
    if _has_onnx():
        from referee.games.rl.onnx_policy import npz_to_onnx

        npz_to_onnx(tmp_path / "net.npz", tmp_path / "net.onnx")
        formats.append("net.onnx")
    for name in formats:
        path = league(tmp_path, name)
        check_league_policies(load_league(path))
        done = run("tournament", "run", str(path), "--dry-run")
        assert done.exit_code == 0, done.output
    check_policy_bots([("random", ("python", "-m", "bots.python.random_bot"))], "scout", 2)


def _has_onnx() -> bool:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def test_check_bot_refuses_a_network_for_another_table_and_says_which_option_to_give(tmp_path: Path) -> None:
    network(SCOUT_2)(tmp_path / "net.npz")
    bot = f"policy:{tmp_path / 'net.npz'}"
    done = run("check-bot", "scout", bot, "--no-sandbox", "--games", "1", "--run-dir", str(tmp_path / "run"))
    assert done.exit_code == 1, done.output
    assert "trained for scout at 2 players, not scout at 3" in done.output
    assert "give --players with the count it learned" in done.output
    assert not (tmp_path / "run").exists(), "games were played before the check"
    done = run("check-bot", "scout", bot, "--players", "2", "--no-sandbox", "--games", "2", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout[done.stdout.index("{") :])["conforms"]
