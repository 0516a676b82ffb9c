"""A trained network as an ONNX model that a `policy:FILE.onnx` bot plays with the encoder it was trained on.

ONNX is how a network trained in torch (or any framework that exports it) leaves its framework: the bot runs
it with onnxruntime alone, never the learner's stack. Both come from the optional `onnx` extra
(`pip install -e '.[onnx]'`): onnx builds and stamps models, onnxruntime runs them.

The model takes one input, a float matrix of shape (batch, inputs), and gives one output of shape (batch,
outputs), as a policy .npz's network does (policy_file.py says what the rows are): without action features
the observation vector in, one score per action index out; with them the vector followed by one action's
feature row in, one score out. The batch axis may be dynamic (one run scores every legal action) or fixed
at 1 (one run per legal action). The encoder's settings travel in the model's metadata:

    card-referee-policy   "card-referee-policy/1"
    card-referee-encoder  the same JSON as a policy .npz's `encoder` (game, players, observation,
                          action_features, options)

- `export_onnx(path, layers, settings, activation)`: an MLP's (W, b) layers as an ONNX model (their float
  type kept, so float64 weights score exactly as the .npz does);
- `npz_to_onnx(npz, onnx)`: a policy .npz as ONNX;
- `stamp_onnx(path, settings)`: any ONNX model (say torch.onnx.export's) given the encoder's settings;
- `load_onnx_policy(path)`: the model, checked against its encoder's shape, as a policy that chooses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from protocol.errors import EnvironmentProblem

from .policy_file import (
    FORMAT,
    EncodedPolicy,
    EncoderSettings,
    Layers,
    PolicyEncoder,
    PolicyFileError,
    PolicyProblem,
    check_layers,
    load_policy,
)

FORMAT_KEY = "card-referee-policy"
ENCODER_KEY = "card-referee-encoder"
OPSET = 17
IR_VERSION = 8
"""The opset and IR version written: old enough for any onnxruntime of the last years to run."""
ONNX_ACTIVATIONS = {"relu": "Relu", "tanh": "Tanh"}
"""The ONNX operator of each activation of policy_file.ACTIVATIONS ("identity" has none)."""
RUNTIME_ERRORS = (
    "Fail",
    "InvalidArgument",
    "InvalidGraph",
    "InvalidProtobuf",
    "NoSuchFile",
    "NoModel",
    "NotImplemented",
    "RuntimeException",
    "EngineError",
    "EPFail",
)
"""onnxruntime's own exception classes (onnxruntime_pybind11_state), which derive from Exception alone."""
NO_ONNX = "ONNX policies need the onnx extra: pip install -e '.[onnx]' (onnxruntime runs them, onnx writes them)"


class NoOnnxRuntime(EnvironmentProblem, ImportError):
    """onnx or onnxruntime is not installed: an ONNX policy cannot be written or played here."""


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise NoOnnxRuntime(NO_ONNX) from None
    return onnx


def _runtime() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise NoOnnxRuntime(NO_ONNX) from None
    return onnxruntime


def _mlp(layers: Layers, activation: str) -> Any:
    onnx = _onnx()
    helper = onnx.helper
    dtype = np.result_type(*(array for pair in layers for array in pair))
    element = helper.np_dtype_to_tensor_dtype(dtype)
    nodes, weights, current = [], [], "x"
    for number, (weight, bias) in enumerate(layers):
        weights += [
            onnx.numpy_helper.from_array(np.asarray(weight, dtype), f"W{number}"),
            onnx.numpy_helper.from_array(np.asarray(bias, dtype), f"b{number}"),
        ]
        nodes += [
            helper.make_node("MatMul", [current, f"W{number}"], [f"m{number}"]),
            helper.make_node("Add", [f"m{number}", f"b{number}"], [f"a{number}"]),
        ]
        current = f"a{number}"
        if number < len(layers) - 1 and activation in ONNX_ACTIVATIONS:
            nodes.append(helper.make_node(ONNX_ACTIVATIONS[activation], [current], [f"h{number}"]))
            current = f"h{number}"
    nodes.append(helper.make_node("Identity", [current], ["scores"]))
    inputs, outputs = layers[0][0].shape[0], layers[-1][0].shape[1]
    graph = helper.make_graph(
        nodes,
        "card_referee_policy",
        [helper.make_tensor_value_info("x", element, ["batch", inputs])],
        [helper.make_tensor_value_info("scores", element, ["batch", outputs])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="card-referee")
    model.ir_version = IR_VERSION
    return model


def _stamp(model: Any, settings: EncoderSettings) -> None:
    del model.metadata_props[:]
    _onnx().helper.set_model_props(model, {FORMAT_KEY: FORMAT, ENCODER_KEY: settings.to_json()})


def export_onnx(path: str | Path, layers: Layers, settings: EncoderSettings, activation: str = "relu") -> None:
    """Write the MLP `layers` ((W, b) pairs, x @ W + b) with the encoder `settings` to `path` as ONNX; the
    layers are checked against the encoder's shape first, as save_policy does."""
    arrays = [(np.asarray(w), np.asarray(b)) for w, b in layers]
    check_layers(arrays, activation, PolicyEncoder(settings).network_shape)
    model = _mlp(arrays, activation)
    _stamp(model, settings)
    _onnx().checker.check_model(model)
    Path(path).write_bytes(model.SerializeToString())


def npz_to_onnx(npz: str | Path, path: str | Path) -> None:
    """The policy .npz `npz` (policy_file.save_policy's) written to `path` as ONNX, same network and settings."""
    policy = load_policy(npz)
    export_onnx(path, policy.layers, policy.encoder.settings, policy.activation)


def stamp_onnx(path: str | Path, settings: EncoderSettings) -> None:
    """Give the ONNX model at `path` (torch.onnx.export's, say) the encoder `settings` it learned with, in its
    metadata; the model is then checked as `policy:` will load it."""
    onnx = _onnx()
    model = onnx.load(str(path))
    _stamp(model, settings)
    onnx.save(model, str(path))
    load_onnx_policy(path)


@dataclass(frozen=True)
class OnnxPolicy(EncodedPolicy):
    """A loaded ONNX policy: its encoder and an onnxruntime session (one thread: a bot in a league shares the
    machine with the others)."""

    encoder: PolicyEncoder
    session: Any
    input_name: str
    dtype: np.dtype
    row_by_row: bool
    """The model's batch axis is fixed at 1: each legal action's row is scored in a run of its own."""

    def network(self, inputs: np.ndarray) -> np.ndarray:
        rows = np.asarray(inputs, self.dtype)
        if self.row_by_row and len(rows) > 1:
            return np.concatenate([self._run(rows[i : i + 1]) for i in range(len(rows))])
        return self._run(rows)

    def _run(self, rows: np.ndarray) -> np.ndarray:
        return np.asarray(self.session.run(None, {self.input_name: rows})[0])


_TYPES: dict[str, np.dtype] = {"tensor(float)": np.dtype(np.float32), "tensor(double)": np.dtype(np.float64)}


def _session(path: Path) -> Any:
    runtime = _runtime()
    options = runtime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return runtime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except _runtime_errors() as error:
        raise PolicyFileError(f"not a readable ONNX model: {str(error).strip()}", PolicyProblem.UNREADABLE) from None


def _runtime_errors() -> tuple[type[Exception], ...]:
    """What onnxruntime raises for a model it cannot load or run: its own classes (InvalidProtobuf, Fail,
    InvalidArgument, ...), which derive from Exception alone, and the builtins it also uses."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    own = (getattr(state, name, None) for name in RUNTIME_ERRORS)
    return (OSError, RuntimeError, ValueError, *(kind for kind in own if isinstance(kind, type)))


def _settings(session: Any) -> EncoderSettings:
    metadata = session.get_modelmeta().custom_metadata_map
    if metadata.get(FORMAT_KEY) != FORMAT or ENCODER_KEY not in metadata:
        raise PolicyFileError(
            f"it carries no encoder settings ({FORMAT_KEY} and {ENCODER_KEY} in its metadata): give it those it "
            "learned with, referee.games.rl.onnx_policy.stamp_onnx(path, EncoderSettings.of_env(env))",
            PolicyProblem.NOT_A_POLICY,
        )
    return EncoderSettings.from_json(metadata[ENCODER_KEY])


def _checked(session: Any, encoder: PolicyEncoder) -> tuple[str, np.dtype, bool]:
    """The input's name and float type, and whether it takes one row at a time; PolicyFileError unless the
    model takes (batch, inputs) and gives (batch, outputs) of its encoder's shape."""
    inputs, outputs = encoder.network_shape
    given, gives = session.get_inputs(), session.get_outputs()
    if len(given) != 1 or len(gives) != 1:
        raise PolicyFileError(
            f"it has {len(given)} inputs and {len(gives)} outputs, not one of each", PolicyProblem.SHAPE
        )
    shape, kind = list(given[0].shape), given[0].type
    if kind not in _TYPES:
        raise PolicyFileError(f"its input is {kind}, not float or double", PolicyProblem.SHAPE)
    if len(shape) != 2 or (isinstance(shape[1], int) and shape[1] != inputs):
        raise PolicyFileError(f"its input has shape {shape}; the encoder gives (batch, {inputs})", PolicyProblem.SHAPE)
    batch = shape[0]
    if isinstance(batch, int) and batch != 1:
        raise PolicyFileError(
            f"its batch axis is fixed at {batch}: export it with a dynamic batch axis, or 1", PolicyProblem.SHAPE
        )
    dtype = _TYPES[kind]
    try:
        probe = np.asarray(session.run(None, {given[0].name: np.zeros((1, inputs), dtype)})[0])
    except _runtime_errors() as error:
        raise PolicyFileError(
            f"it does not run on the encoder's {inputs} inputs: {str(error).strip()}", PolicyProblem.SHAPE
        ) from None
    if probe.shape != (1, outputs):
        raise PolicyFileError(
            f"it gives outputs of shape {list(probe.shape)} for one row, the encoder needs {outputs}",
            PolicyProblem.SHAPE,
        )
    return given[0].name, dtype, batch == 1


def load_onnx_policy(path: str | Path) -> OnnxPolicy:
    """The ONNX policy in `path`, run once on a row of zeros to check its shapes; PolicyFileError if it is none."""
    path = Path(path)
    try:
        if not path.is_file():
            raise PolicyFileError("no such file", PolicyProblem.MISSING)
        session = _session(path)
        settings = _settings(session)
        encoder = PolicyEncoder(settings)
        try:
            name, dtype, row_by_row = _checked(session, encoder)
        except PolicyFileError as error:
            raise PolicyFileError(
                f"its network does not fit its encoder ({settings.game}, {settings.players} players, "
                f"{settings.observation} observation, action features "
                f"{'on' if settings.action_features else 'off'}): {error}",
                PolicyProblem.SHAPE,
            ) from None
    except PolicyFileError as error:
        raise PolicyFileError(f"{path}: {error}", error.problem) from None
    return OnnxPolicy(encoder, session, name, dtype, row_by_row)
