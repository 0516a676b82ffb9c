"""ONNX policies (referee/games/rl/onnx_policy.py): a network exported as ONNX plays as `policy:FILE.onnx` with
the encoder of its environment, choosing what the same network in a policy .npz chooses.

Nothing is trained: tiny random MLPs are saved as .npz and exported; each pair is fed the observations of
seeded random games as a bot receives them (through msgpack) and must choose the same action at every one.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("pettingzoo")

import onnx  # noqa: E402

from referee.games.rl import pettingzoo_env  # noqa: E402
from referee.games.rl.onnx_policy import (  # noqa: E402
    FORMAT_KEY,
    export_onnx,
    load_onnx_policy,
    npz_to_onnx,
    stamp_onnx,
)
from referee.games.rl.policy_file import (  # noqa: E402
    EncoderSettings,
    PolicyEncoder,
    PolicyFileError,
    PolicyProblem,
    load_network,
    load_policy,
    save_policy,
)

BIN = Path(sys.executable).parent
TABLES = [
    ("scout", 2, "full", True, {}),
    ("scout", 4, "compact", False, {}),
    ("scout", 5, "compact", True, {}),
    ("scauver", 2, "compact", False, {"starting_chips": 60, "round_cap": 4}),
    ("scauver", 3, "full", True, {"amphora": 3, "round_cap": 3}),
]


def wire(value: Any) -> Any:
    return msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False)


def random_layers(settings: EncoderSettings, seed: int, dtype: Any = np.float64) -> list[tuple[np.ndarray, np.ndarray]]:
    inputs, outputs = PolicyEncoder(settings).network_shape
    rng = np.random.default_rng(seed)
    sizes = [inputs, 24, 12, outputs]
    return [
        (rng.normal(0, 1, (a, b)).astype(dtype), rng.normal(0, 0.1, b).astype(dtype))
        for a, b in zip(sizes, sizes[1:], strict=False)
    ]


def decisions(settings: EncoderSettings, games: int, seed: int) -> list[tuple[dict, list]]:
    """(observation, legal actions) of every decision of seeded random games, as the bot receives them."""
    env = pettingzoo_env(
        settings.game,
        settings.players,
        observation=settings.observation,
        action_features=settings.action_features,
        **settings.options,
    )
    rng = random.Random(seed)
    found = []
    for game in range(games):
        env.reset(seed=seed + game)
        for agent in env.agent_iter():
            _obs, _reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            found.append((wire(info["observation"]), wire(info["legal_actions"])))
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    return found


@pytest.mark.parametrize(("game", "players", "observation", "rows", "options"), TABLES)
def test_the_onnx_export_chooses_as_the_npz_policy(
    game: str, players: int, observation: str, rows: bool, options: dict, tmp_path: Path
) -> None:
    env = pettingzoo_env(game, players, observation=observation, action_features=rows, **options)
    settings = EncoderSettings.of_env(env)
    save_policy(tmp_path / "net.npz", random_layers(settings, seed=players), settings, activation="tanh")
    npz_to_onnx(tmp_path / "net.npz", tmp_path / "net.onnx")
    numpy_policy, onnx_policy = load_policy(tmp_path / "net.npz"), load_network(tmp_path / "net.onnx")
    assert onnx_policy.encoder.settings == settings and onnx_policy.encoder.config == numpy_policy.encoder.config
    seen = decisions(settings, games=4, seed=11)
    assert len(seen) > 80
    for observation_map, legal in seen:
        encoded = numpy_policy.encoder.encode(observation_map, legal)
        assert np.allclose(onnx_policy.scores(encoded), numpy_policy.scores(encoded), rtol=1e-9, atol=1e-9)
        assert onnx_policy.choose(observation_map, legal) == numpy_policy.choose(observation_map, legal)


def test_float32_weights_stay_float32_and_score_as_numpy(tmp_path: Path) -> None:
    settings = EncoderSettings("scout", 3, "compact", True)
    layers = random_layers(settings, seed=4, dtype=np.float32)
    export_onnx(tmp_path / "net.onnx", layers, settings)
    policy = load_onnx_policy(tmp_path / "net.onnx")
    assert policy.dtype == np.float32 and not policy.row_by_row
    inputs = np.random.default_rng(5).normal(size=(9, layers[0][0].shape[0])).astype(np.float32)
    expected = np.maximum(np.maximum(inputs @ layers[0][0] + layers[0][1], 0) @ layers[1][0] + layers[1][1], 0)
    expected = expected @ layers[2][0] + layers[2][1]
    assert policy.network(inputs).dtype == np.float32
    assert np.allclose(policy.network(inputs), expected, rtol=1e-4, atol=1e-4)


def _unstamped(path: Path, batch: int | None = None) -> Path:
    """The ONNX model at `path` without its encoder settings (as torch.onnx.export writes one), its batch axis
    fixed at `batch` if given."""
    model = onnx.load(str(path))
    del model.metadata_props[:]
    if batch is not None:
        for value in (*model.graph.input, *model.graph.output):
            value.type.tensor_type.shape.dim[0].dim_value = batch
    out = path.with_name(f"bare-{batch}.onnx")
    onnx.save(model, str(out))
    return out


def test_any_onnx_model_is_stamped_with_its_settings_and_a_fixed_batch_of_one_is_scored_row_by_row(
    tmp_path: Path,
) -> None:
    settings = EncoderSettings.of_env(pettingzoo_env("scauver", 2, round_cap=3))
    save_policy(tmp_path / "net.npz", random_layers(settings, seed=8), settings)
    npz_to_onnx(tmp_path / "net.npz", tmp_path / "net.onnx")
    bare = _unstamped(tmp_path / "net.onnx", batch=1)
    with pytest.raises(PolicyFileError, match="carries no encoder settings.*stamp_onnx") as refused:
        load_onnx_policy(bare)
    assert refused.value.problem is PolicyProblem.NOT_A_POLICY
    stamp_onnx(bare, settings)
    policy, numpy_policy = load_onnx_policy(bare), load_policy(tmp_path / "net.npz")
    assert policy.row_by_row and policy.encoder.settings == settings
    for observation_map, legal in decisions(settings, games=1, seed=3):
        assert policy.choose(observation_map, legal) == numpy_policy.choose(observation_map, legal)


def test_a_broken_onnx_file_is_refused_with_its_problem(tmp_path: Path) -> None:
    settings = EncoderSettings("scout", 2, "full", True)
    save_policy(tmp_path / "net.npz", random_layers(settings, seed=1), settings)
    npz_to_onnx(tmp_path / "net.npz", tmp_path / "net.onnx")
    (tmp_path / "text.onnx").write_bytes(b"not a model")
    other = EncoderSettings("scout", 3, "full", True)
    wrong_shape = _unstamped(tmp_path / "net.onnx")
    stamp = onnx.load(str(wrong_shape))
    onnx.helper.set_model_props(stamp, {FORMAT_KEY: "card-referee-policy/1", "card-referee-encoder": other.to_json()})
    onnx.save(stamp, str(tmp_path / "shape.onnx"))
    fixed = _unstamped(tmp_path / "net.onnx", batch=3)
    stamped = onnx.load(str(fixed))
    onnx.helper.set_model_props(
        stamped, {FORMAT_KEY: "card-referee-policy/1", "card-referee-encoder": settings.to_json()}
    )
    onnx.save(stamped, str(tmp_path / "fixed.onnx"))
    cases = {
        "none.onnx": (PolicyProblem.MISSING, "no such file"),
        "text.onnx": (PolicyProblem.UNREADABLE, "not a readable ONNX model"),
        "bare-None.onnx": (PolicyProblem.NOT_A_POLICY, "carries no encoder settings"),
        "shape.onnx": (
            PolicyProblem.SHAPE,
            r"does not fit its encoder \(scout, 3 players.*encoder gives \(batch, 968\)",
        ),
        "fixed.onnx": (PolicyProblem.SHAPE, "batch axis is fixed at 3"),
    }
    for name, (problem, message) in cases.items():
        with pytest.raises(PolicyFileError, match=message) as refused:
            load_onnx_policy(tmp_path / name)
        assert refused.value.problem is problem, name
        assert str(refused.value).startswith(str(tmp_path / name)), name
    with pytest.raises(PolicyFileError, match="trained for scout at 2 players, not scout at 4") as refused:
        load_onnx_policy(tmp_path / "net.onnx").check_table("scout", 4)
    assert refused.value.problem is PolicyProblem.TABLE


def test_referee_play_runs_an_onnx_policy_in_the_sandbox(tmp_path: Path) -> None:
    from sandbox_checks import require_sandbox

    require_sandbox()
    settings = EncoderSettings("scout", 2, "compact", True)
    save_policy(tmp_path / "net.npz", random_layers(settings, seed=5), settings)
    npz_to_onnx(tmp_path / "net.npz", tmp_path / "net.onnx")
    (tmp_path / "net.npz").unlink()
    tmp_path.chmod(0o755)
    (tmp_path / "net.onnx").chmod(0o644)
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(BIN / "referee"), "play", "scout", "policy:net.onnx", "random", "--games", "2", "--seed", "1", "--json"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    match = json.loads(done.stdout)
    assert match["bots"][0]["hello"]["name"] == "net"
    for game in match["games"]:
        assert game["sandboxed"] and game["faults"] == [], game
        assert game["timing"][game["seats"].index("net")]["decisions"] > 5


REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "rl-environments.md"


def test_the_reference_exports_an_onnx_network_that_referee_play_runs(tmp_path: Path) -> None:
    section = REFERENCE.read_text().split("### Export as ONNX", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    command = re.search(r"```sh\n(.*?)\n```", section, re.DOTALL)
    assert code and command
    ran = subprocess.run(
        [sys.executable, "-c", code.group(1)], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert load_onnx_policy(tmp_path / "scout-net.onnx").encoder.settings.observation == "compact"
    words = command.group(1).split()
    assert words[:2] == ["referee", "play"]
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(BIN / "referee"), *words[1:], "--games", "2", "--no-sandbox"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0 and "fault:" not in done.stdout, done.stdout + done.stderr


def test_ties_to_rounding_go_to_the_first_and_real_gaps_do_not() -> None:
    from referee.games.rl.policy_file import best_position

    assert best_position(np.array([0.5, 2.0, 2.0 + 1e-15, 1.0])) == 1
    assert best_position(np.array([0.5, 2.0, 2.0 + 1e-9, 1.0])) == 2
    assert best_position(np.array([1.0, 1.0 + 1e-6], np.float32)) == 0
    assert best_position(np.array([1.0, 1.001], np.float32)) == 1


def test_the_policy_bot_keeps_numerical_libraries_to_one_thread_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    from bots.python import policy_bot

    for name in policy_bot.ONE_THREAD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    policy_bot.one_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == os.environ["MKL_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "2"
