"""Exported networks (referee/games/rl/policy_file.py) and the `policy:FILE.npz` bot that plays them.

Nothing is trained: a tiny random MLP is saved and loaded. The bot's encoder, fed the observation as it crosses
the wire (msgpack), must give byte for byte the vector, mask and action features the environment gave at the
same decisions; the loaded policy must pick what the in-memory network picks from the environment's arrays; a
file trained for another game or table is refused before a match with a one-line error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from bots.python.policy_bot import check_policy_seats, network_choose
from protocol.errors import BadInput
from referee.games import load_game
from referee.games.rl.policy_file import (
    EncoderSettings,
    NetworkPolicy,
    PolicyEncoder,
    PolicyFileError,
    load_policy,
    save_policy,
)

pytest.importorskip("pettingzoo")
from referee.games.rl import pettingzoo_env  # noqa: E402

BIN = Path(sys.executable).parent
TABLES = [
    ("scout", 2, "full", True, {}),
    ("scout", 3, "compact", False, {}),
    ("scout", 5, "compact", True, {}),
    ("scauver", 2, "compact", True, {"starting_chips": 60, "round_cap": 4}),
    ("scauver", 3, "full", False, {"amphora": 3, "round_cap": 3}),
    ("scauver", 4, "full", True, {"bet_max_amphoras": 3, "round_cap": 3}),
]


def wire(value: Any) -> Any:
    """`value` as a bot receives it: through msgpack, arrays as lists."""
    return msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False)


def random_layers(settings: EncoderSettings, seed: int, hidden: int = 16) -> list[tuple[np.ndarray, np.ndarray]]:
    inputs, outputs = PolicyEncoder(settings).network_shape
    rng = np.random.default_rng(seed)
    sizes = [inputs, hidden, hidden, outputs]
    return [(rng.normal(0, 1, (a, b)), rng.normal(0, 0.1, b)) for a, b in zip(sizes, sizes[1:], strict=False)]


def in_memory_best(layers: list[tuple[np.ndarray, np.ndarray]], observed: dict, info: dict, rows: bool) -> set[int]:
    """The indices the network scores highest from the environment's own arrays, computed here without
    policy_file: one index, unless two legal actions score the same (to rounding: here one row at a time)."""

    def net(x: np.ndarray) -> np.ndarray:
        for number, (weights, bias) in enumerate(layers):
            x = x @ weights + bias
            x = np.maximum(x, 0.0) if number < len(layers) - 1 else x
        return x

    if rows:
        indices = info["action_indices"]
        scores = np.array([net(np.concatenate([observed["observation"], row]))[0] for row in info["action_features"]])
    else:
        indices = np.flatnonzero(observed["action_mask"])
        scores = net(observed["observation"])[indices]
    best = scores.max()
    return {int(index) for index, score in zip(indices, scores, strict=True) if score >= best - 1e-9 * (1 + abs(best))}


def play_env(settings: EncoderSettings, policy: NetworkPolicy, layers: list, seed: int) -> int:
    """Play one seeded game with the network at every seat; check the bot's encoding and choice at every
    decision against the environment's; return the number of decisions."""
    env = pettingzoo_env(
        settings.game,
        settings.players,
        observation=settings.observation,
        action_features=settings.action_features,
        **settings.options,
    )
    env.reset(seed=seed)
    decisions = 0
    for agent in env.agent_iter():
        _obs, _reward, terminated, _truncated, info = env.last()
        if terminated:
            env.step(None)
            continue
        observed = env.observe(agent)
        encoded = policy.encoder.encode(wire(info["observation"]), wire(info["legal_actions"]))
        assert encoded.vector.dtype == observed["observation"].dtype
        assert encoded.vector.tobytes() == observed["observation"].tobytes()
        assert encoded.mask.tobytes() == observed["action_mask"].tobytes()
        if settings.action_features:
            assert encoded.indices.tobytes() == info["action_indices"].tobytes()
            assert encoded.features is not None
            assert encoded.features.tobytes() == info["action_features"].tobytes()
        else:
            assert encoded.features is None
        best = in_memory_best(layers, observed, info, settings.action_features)
        index = env.action_index(policy.choose(wire(info["observation"]), wire(info["legal_actions"])))
        assert index in best
        env.step(index)
        decisions += 1
    return decisions


@pytest.mark.parametrize(("game", "players", "observation", "rows", "options"), TABLES)
def test_the_bot_encodes_and_chooses_as_the_environment_and_the_network(
    game: str, players: int, observation: str, rows: bool, options: dict, tmp_path: Path
) -> None:
    env = pettingzoo_env(game, players, observation=observation, action_features=rows, **options)
    settings = EncoderSettings.of_env(env)
    assert settings.options["round_cap" if game == "scauver" else "first_player"] is not None
    layers = random_layers(settings, seed=players)
    save_policy(tmp_path / "net.npz", layers, settings)
    policy = load_policy(tmp_path / "net.npz")
    assert policy.encoder.settings == settings
    assert all(
        np.array_equal(a, b)
        for pair, saved in zip(layers, policy.layers, strict=True)
        for a, b in zip(pair, saved, strict=True)
    )
    assert play_env(settings, policy, layers, seed=7) > 10


def test_scauver_options_change_the_vector_so_the_file_must_carry_them() -> None:
    env = pettingzoo_env("scauver", 2, starting_chips=60)
    env.reset(seed=3)
    observation = env.infos[env.agent_selection]["observation"]
    legal = env.infos[env.agent_selection]["legal_actions"]
    with_options = PolicyEncoder(EncoderSettings.of_env(env)).encode(observation, legal).vector
    without = PolicyEncoder(EncoderSettings("scauver", 2)).encode(observation, legal).vector
    assert with_options.tobytes() == env.observe(env.agent_selection)["observation"].tobytes()
    assert with_options.tobytes() != without.tobytes()


def test_a_mismatched_or_broken_file_is_refused_with_a_bad_input(tmp_path: Path) -> None:
    settings = EncoderSettings("scout", 2, "full", True)
    layers = random_layers(settings, seed=1)
    path = tmp_path / "net.npz"
    save_policy(path, layers, settings)
    with pytest.raises(PolicyFileError, match="trained for scout at 2 players, not scout at 3"):
        load_policy(path).check_table("scout", 3)
    with pytest.raises(PolicyFileError, match="not scauver at 2"):
        load_policy(path).check_table("scauver", 2)
    with pytest.raises(PolicyFileError, match="last layer gives 3 outputs, the encoder needs 1"):
        save_policy(path, [*layers[:-1], (np.zeros((16, 3)), np.zeros(3))], settings)
    wrong_input = EncoderSettings("scout", 3, "full", True)
    np.savez(tmp_path / "shape.npz", **{**dict(np.load(path)), "encoder": np.array(wrong_input.to_json())})
    shape = "does not fit its encoder .scout, 3 players.*should take the encoder's 968 inputs"
    with pytest.raises(PolicyFileError, match=shape):
        load_policy(tmp_path / "shape.npz")
    np.savez(tmp_path / "linear.npz", game=np.array("scout"), weights=np.zeros(12))
    with pytest.raises(PolicyFileError, match="not a policy file"):
        load_policy(tmp_path / "linear.npz")
    for name, content in (("text.npz", b"not numpy"), ("empty.npz", b""), ("broken.npz", b"PK\x03\x04broken")):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(PolicyFileError, match="not a readable policy file"):
            load_policy(tmp_path / name)
    with pytest.raises(PolicyFileError, match="not floating-point"):
        save_policy(path, [(np.ones(w.shape, int), b) for w, b in layers], settings)
    with pytest.raises(BadInput, match="no table of 9 players"):
        save_policy(path, layers, EncoderSettings("scout", 9))
    command = (sys.executable, "-m", "bots.python.policy_bot", "--policy", str(path))
    check_policy_seats([command], "scout", 2, {})
    with pytest.raises(BadInput, match=f"{path}: this policy was trained for scout at 2 players, not scout at 4"):
        check_policy_seats([command], "scout", 4)


def test_a_network_is_refused_for_options_it_did_not_learn_with_and_for_a_table_it_meets_in_play(
    tmp_path: Path,
) -> None:
    settings = EncoderSettings.of_env(pettingzoo_env("scauver", 2, starting_chips=60, action_features=False))
    path = tmp_path / "chips.npz"
    save_policy(path, random_layers(settings, seed=2), settings, activation="tanh")
    command = (sys.executable, "-m", "bots.python.policy_bot", "--policy", str(path))
    check_policy_seats([command], "scauver", 2, {"starting_chips": 60})
    with pytest.raises(BadInput, match="trained with starting_chips=60, not starting_chips=100"):
        check_policy_seats([command], "scauver", 2, {})
    choose = network_choose(path)
    rules = load_game("scauver")
    state = rules.new_game(3, 1, None)
    with pytest.raises(SystemExit, match="trained for 2 players, not 3"):
        choose(wire(state.observation(0)), wire(state.legal_actions(0)))


def test_a_linear_policy_file_still_plays_through_the_same_option(tmp_path: Path) -> None:
    from bots.python import policy_bot
    from bots.python.linear_policy import FEATURES, LinearPolicy

    linear = LinearPolicy("scout", np.linspace(-1, 1, len(FEATURES["scout"])))
    linear.save(tmp_path / "linear.npz")
    check_policy_seats(
        [("python", "-m", "bots.python.policy_bot", "--policy", str(tmp_path / "linear.npz"))], "scout", 3
    )
    choose = policy_bot.load_policy(tmp_path / "linear.npz")
    state = load_game("scout").new_game(3, 4, None)
    for _ in range(20):
        if state.is_over():
            break
        seat = state.to_move()[0]
        observation, legal = state.observation(seat), state.legal_actions(seat)
        action = choose(observation, legal)
        assert action == linear.greedy(observation, legal)
        state.apply(seat, action)


def _referee(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(BIN / "referee"), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_referee_play_runs_a_network_policy_and_refuses_one_for_another_table(tmp_path: Path) -> None:
    settings = EncoderSettings("scout", 2, "compact", True)
    save_policy(tmp_path / "net.npz", random_layers(settings, seed=5), settings)
    match = ("play", "scout", "policy:net.npz", "random", "--games", "2", "--seed", "1", "--no-sandbox")
    done = _referee(*match, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fault:" not in done.stdout, done.stdout
    assert re.search(r"^net\s+2\s+\d+\s+\S+\s+0\s+[1-9]", done.stdout, re.MULTILINE), done.stdout
    refused = _referee("play", "scout", "policy:net.npz", "random", "random", "--games", "1", cwd=tmp_path)
    assert refused.returncode == 1
    assert "trained for scout at 2 players, not scout at 3" in refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr


HOW_TO = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "use-the-engines.md"


def test_the_how_to_exports_a_network_that_referee_play_runs(tmp_path: Path) -> None:
    section = HOW_TO.read_text().split("### From a trained network to a bot", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    command = re.search(r"```sh\n(.*?)\n```", section, re.DOTALL)
    assert code and command
    ran = subprocess.run(
        [sys.executable, "-c", code.group(1)], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert load_policy(tmp_path / "scout-net.npz").encoder.settings.observation == "compact"
    words = command.group(1).split()
    assert words[:2] == ["referee", "play"]
    done = _referee(*words[1:], "--games", "2", "--no-sandbox", cwd=tmp_path)
    assert done.returncode == 0 and "fault:" not in done.stdout, done.stdout + done.stderr
