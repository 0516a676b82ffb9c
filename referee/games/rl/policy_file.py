"""A trained network as one .npz file that a `policy:FILE.npz` bot plays with the encoder it was trained on.

The file (numpy's .npz, read with `allow_pickle=False`) holds:

    format      "card-referee-policy/1"
    encoder     JSON: {"game", "players", "observation": "full" | "compact", "action_features": bool,
                "options": the game's resolved options}, the settings of the environment the network learned in
    activation  "relu", "tanh" or "identity": applied after every layer but the last
    W0, b0, W1, b1, ...
                an MLP's layers, float arrays: layer i maps x to x @ Wi + bi (Wi of shape (inputs, outputs))

The network reads what the environment gave (aec.py): without action features, the observation vector
(features.py) in and one score per index of the action space (codec.py) out, illegal indices masked; with
action features, one forward pass per legal action of the vector followed by that action's feature row
(action_features.py), one score out. Either way the legal action with the highest score is played (the
lowest index on a tie, scores equal to rounding counted as tied: best_position). `PolicyEncoder` rebuilds
vector, mask and feature rows from the observation map the referee sends, with the environment's own functions
and the options from the file, which the observation does not carry (Scauver scales chips by them). The same
network exported as ONNX (onnx_policy.py) plays through the same encoder; `load_network` loads either.
"""

from __future__ import annotations

import json
import zipfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from protocol.errors import BadInput

from .. import Action, Observation, load_game
from ..base import GameError
from .action_features import action_feature_width, action_features
from .codec import codec_for, legal_index
from .features import OBSERVATIONS, feature_size, features

FORMAT = "card-referee-policy/1"


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x)


def _identity(x: np.ndarray) -> np.ndarray:
    return x


ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"relu": _relu, "tanh": _tanh, "identity": _identity}
UNREADABLE = (OSError, ValueError, EOFError, zipfile.BadZipFile)
"""What numpy raises for a file that is no .npz (empty, text, a broken zip, a pickle it may not load)."""
Layers = Sequence[tuple[np.ndarray, np.ndarray]]


class PolicyProblem(Enum):
    """What is wrong with a policy file, and what its owner can do about it."""

    MISSING = "missing"
    UNREADABLE = "unreadable"
    NOT_A_POLICY = "not a policy"
    ENCODER = "encoder settings"
    SHAPE = "shape"
    TABLE = "table"
    OPTIONS = "options"

    @property
    def remedy(self) -> str:
        return _REMEDIES[self]


_SAVE = "save the trained network with save_policy (.npz) or export_onnx / stamp_onnx (.onnx)"
_REMEDIES = {
    PolicyProblem.MISSING: "put the file where the bot's command says, or correct the path",
    PolicyProblem.UNREADABLE: f"the file is damaged or of another kind: {_SAVE}",
    PolicyProblem.NOT_A_POLICY: f"{_SAVE}, with the settings of the environment it learned in",
    PolicyProblem.ENCODER: f"{_SAVE}, with EncoderSettings.of_env(env) of the environment it learned in",
    PolicyProblem.SHAPE: f"the network does not fit the environment its settings name: {_SAVE} from that one",
    PolicyProblem.TABLE: "play it at the game and player count it learned, or train one for this table",
    PolicyProblem.OPTIONS: "play it with the game options it learned with, or train one with these",
}


class PolicyFileError(BadInput, ValueError):
    """A file that is no policy of this format, or one trained for another game, table or shape: `problem`
    says which (PolicyProblem, with its remedy)."""

    def __init__(self, message: str, problem: PolicyProblem) -> None:
        super().__init__(message)
        self.problem = problem

    def __reduce__(self) -> tuple[type[PolicyFileError], tuple[str, PolicyProblem]]:
        return type(self), (str(self), self.problem)


@dataclass(frozen=True)
class EncoderSettings:
    """What the environment's encoder needs beyond the observation: the environment's arguments."""

    game: str
    players: int
    observation: str = "full"
    action_features: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of_env(cls, env: Any) -> EncoderSettings:
        """The settings of a `pettingzoo_env(...)` (aec.CardGameEnv), its options resolved."""
        return cls(
            env.game.name,
            env.players,
            "compact" if env.compact else "full",
            env.with_action_features,
            dict(env.config),
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "game": self.game,
                "players": self.players,
                "observation": self.observation,
                "action_features": self.action_features,
                "options": dict(self.options),
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> EncoderSettings:
        try:
            data = json.loads(text)
            settings = cls(
                str(data["game"]),
                data["players"],
                str(data["observation"]),
                data["action_features"],
                dict(data["options"]),
            )
        except (ValueError, KeyError, TypeError) as error:
            raise PolicyFileError(f"its encoder settings are not readable: {error}", PolicyProblem.ENCODER) from None
        if type(settings.players) is not int or type(settings.action_features) is not bool:
            raise PolicyFileError(
                "its encoder settings need players (an integer) and action_features (true/false)", PolicyProblem.ENCODER
            )
        if settings.observation not in OBSERVATIONS:
            raise PolicyFileError(
                f"its observation is one of {OBSERVATIONS}, not {settings.observation!r}", PolicyProblem.ENCODER
            )
        return settings


@dataclass(frozen=True)
class Encoded:
    """One decision as the environment gave it: `vector` and `mask` as `observe`, `indices` and `features` as
    the infos' "action_indices" and "action_features" (None without action features), and `actions`, the legal
    action of each index."""

    vector: np.ndarray
    mask: np.ndarray
    indices: np.ndarray
    features: np.ndarray | None
    actions: dict[int, Action]


class PolicyEncoder:
    """The environment's encoder for one game, table and option set, fed the referee's observation map."""

    def __init__(self, settings: EncoderSettings) -> None:
        try:
            game = load_game(settings.game)
            info = game.info
            if not info.min_players <= settings.players <= info.max_players:
                raise PolicyFileError(
                    f"{settings.game} has no table of {settings.players} players", PolicyProblem.ENCODER
                )
            self.config = game.resolve_config(settings.options)
        except GameError as error:
            raise PolicyFileError(str(error), PolicyProblem.ENCODER) from None
        self.settings = settings
        self.compact = settings.observation == "compact"
        self.codec = codec_for(settings.game, settings.players, self.config)

    @property
    def vector_size(self) -> int:
        return feature_size(self.settings.game, self.settings.players, self.compact)

    @property
    def network_shape(self) -> tuple[int, int]:
        """(inputs, outputs) of a network trained in this environment."""
        if self.settings.action_features:
            return self.vector_size + action_feature_width(self.settings.game), 1
        return self.vector_size, self.codec.size

    def encode(self, observation: Observation, legal: Sequence[Action]) -> Encoded:
        game = self.settings.game
        table = legal_index(self.codec, legal, observation)
        indices = np.array(sorted(table), np.int64)
        mask = np.zeros(self.codec.size, np.int8)
        mask[indices] = 1
        rows = None
        if self.settings.action_features:
            rows = action_features(game, observation, [table[int(index)] for index in indices], self.config)
        vector = features(game, observation, self.config, self.compact)
        return Encoded(vector, mask, indices, rows, table)


def forward(layers: Layers, activation: str, inputs: np.ndarray) -> np.ndarray:
    """The MLP's output for `inputs` (one row per input)."""
    act = ACTIVATIONS[activation]
    out = inputs
    for number, (weights, bias) in enumerate(layers):
        out = out @ weights + bias
        if number < len(layers) - 1:
            out = act(out)
    return out


TIE_ULPS = 1024
"""Scores this many units in the last place of the best (of its float type, relative to it when above 1) count
as tied with it: two runtimes (numpy, onnxruntime) sum in different orders, and two legal actions with the same
feature row score alike only to rounding."""


def best_position(scores: np.ndarray) -> int:
    """The position of the highest score, the first of those tied with it to rounding (TIE_ULPS)."""
    top = float(scores.max())
    tolerance = TIE_ULPS * float(np.finfo(scores.dtype).eps) * max(1.0, abs(top))
    return int(np.flatnonzero(scores >= top - tolerance)[0])


class EncodedPolicy(ABC):
    """A network behind the environment's encoder: `network` maps a batch of input rows to output rows; the
    rest (scoring the legal actions, choosing, refusing a table it did not learn) is the same for every file
    format (.npz here, .onnx in onnx_policy.py)."""

    encoder: PolicyEncoder

    @abstractmethod
    def network(self, inputs: np.ndarray) -> np.ndarray: ...

    def scores(self, encoded: Encoded) -> np.ndarray:
        """The score of each legal index, in `encoded.indices` order."""
        if encoded.features is not None:
            vectors = np.broadcast_to(encoded.vector, (len(encoded.indices), len(encoded.vector)))
            inputs = np.concatenate([vectors, encoded.features], axis=1)
            return self.network(inputs)[:, 0]
        return self.network(encoded.vector[None, :])[0, encoded.indices]

    def choose(self, observation: Observation, legal: Sequence[Action]) -> Action:
        """The legal action the network scores highest: how a trained policy plays in a league."""
        encoded = self.encoder.encode(observation, legal)
        best = int(encoded.indices[best_position(self.scores(encoded))])
        return encoded.actions[best]

    def check_table(self, game: str, players: int, options: Mapping[str, Any] | None = None) -> None:
        """Refuse to play `game` at `players` seats with `options` unless the network learned exactly that: the
        encoding (Scauver's chip scaling, its bet sizes' indices) depends on the options."""
        settings = self.encoder.settings
        if (settings.game, settings.players) != (game, players):
            raise PolicyFileError(
                f"this policy was trained for {settings.game} at {settings.players} players, not {game} at {players}",
                PolicyProblem.TABLE,
            )
        if options is None:
            return
        try:
            config = load_game(game).resolve_config(options)
        except GameError as error:
            raise PolicyFileError(str(error), PolicyProblem.OPTIONS) from None
        differ = sorted(key for key in config if config[key] != self.encoder.config.get(key))
        if differ:
            trained = ", ".join(f"{key}={self.encoder.config.get(key)!r}" for key in differ)
            asked = ", ".join(f"{key}={config[key]!r}" for key in differ)
            raise PolicyFileError(f"this policy was trained with {trained}, not {asked}", PolicyProblem.OPTIONS)


@dataclass(frozen=True)
class NetworkPolicy(EncodedPolicy):
    """A loaded .npz policy file: its encoder and its MLP."""

    encoder: PolicyEncoder
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    activation: str

    def network(self, inputs: np.ndarray) -> np.ndarray:
        return forward(self.layers, self.activation, inputs)


def check_layers(layers: Layers, activation: str, shape: tuple[int, int]) -> None:
    if activation not in ACTIVATIONS:
        raise PolicyFileError(
            f"its activation is one of {sorted(ACTIVATIONS)}, not {activation!r}", PolicyProblem.SHAPE
        )
    if not layers:
        raise PolicyFileError("it has no layers", PolicyProblem.SHAPE)
    if not all(np.issubdtype(array.dtype, np.floating) for pair in layers for array in pair):
        raise PolicyFileError("its weights are not floating-point arrays", PolicyProblem.SHAPE)
    inputs, outputs = shape
    width = inputs
    for number, (weights, bias) in enumerate(layers):
        if weights.ndim != 2 or bias.shape != (weights.shape[1],) or weights.shape[0] != width:
            source = "the encoder's" if number == 0 else "the previous layer's"
            raise PolicyFileError(
                f"layer {number} has weights {weights.shape} and bias {bias.shape}; "
                f"it should take {source} {width} inputs, with one bias per output",
                PolicyProblem.SHAPE,
            )
        width = weights.shape[1]
    if width != outputs:
        raise PolicyFileError(f"its last layer gives {width} outputs, the encoder needs {outputs}", PolicyProblem.SHAPE)


def save_policy(path: str | Path, layers: Layers, settings: EncoderSettings, activation: str = "relu") -> None:
    """Write the MLP `layers` ((W, b) pairs) and the encoder `settings` to `path` (.npz); checked first."""
    arrays = [(np.asarray(w), np.asarray(b)) for w, b in layers]
    check_layers(arrays, activation, PolicyEncoder(settings).network_shape)
    named: dict[str, np.ndarray] = {"format": np.array(FORMAT), "encoder": np.array(settings.to_json())}
    named["activation"] = np.array(activation)
    named |= {f"W{number}": weights for number, (weights, _bias) in enumerate(arrays)}
    named |= {f"b{number}": bias for number, (_weights, bias) in enumerate(arrays)}
    with open(path, "wb") as out:
        np.savez(out, **named)  # type: ignore[arg-type]


def is_policy_file(path: str | Path) -> bool:
    """Whether `path` is an .npz of this format (rather than, say, bots/python/linear_policy's)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return "format" in data.files
    except UNREADABLE:
        return False


def _read(data: Any) -> NetworkPolicy:
    if "format" not in data.files or str(data["format"]) != FORMAT:
        raise PolicyFileError(f"it is not a policy file ({FORMAT})", PolicyProblem.NOT_A_POLICY)
    settings = EncoderSettings.from_json(str(data["encoder"]))
    activation = str(data["activation"])
    count = sum(1 for name in data.files if name.startswith("W"))
    layers = tuple((data[f"W{i}"], data[f"b{i}"]) for i in range(count))
    encoder = PolicyEncoder(settings)
    try:
        check_layers(layers, activation, encoder.network_shape)
    except PolicyFileError as error:
        raise PolicyFileError(
            f"its network does not fit its encoder ({settings.game}, {settings.players} players, "
            f"{settings.observation} observation, action features {'on' if settings.action_features else 'off'}): "
            f"{error}",
            PolicyProblem.SHAPE,
        ) from None
    return NetworkPolicy(encoder, layers, activation)


def load_policy(path: str | Path) -> NetworkPolicy:
    """The policy in `path`, its layers checked against its encoder's shape; PolicyFileError if it is none."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return _read(data)
    except PolicyFileError as error:
        raise PolicyFileError(f"{path}: {error}", error.problem) from None
    except (*UNREADABLE, KeyError, AttributeError) as error:
        raise PolicyFileError(f"{path}: not a readable policy file: {error}", PolicyProblem.UNREADABLE) from None


def load_network(path: str | Path) -> EncodedPolicy:
    """The network policy in `path`: an ONNX model (.onnx, onnx_policy.py: needs the `onnx` extra) or else a
    policy .npz; PolicyFileError if it is none, or does not fit its encoder."""
    if Path(path).suffix.lower() == ".onnx":
        from .onnx_policy import load_onnx_policy

        return load_onnx_policy(path)
    return load_policy(path)
