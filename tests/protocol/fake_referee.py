"""A scripted referee for testing bots of any language against the wire contract (protocol/PROTOCOL.md).

It binds a ROUTER, waits for hello, checks the token, and then plays a fixed script: welcome, game_start,
a few requests (each must be answered with the same id and an element of legal_actions), game_over, bye.
Everything the bot sent is kept in `received` for the test to inspect.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack
import zmq

from protocol import limits

TOKEN = "secret-token-1"
WAIT_S = 30.0

REQUESTS: tuple[tuple[dict[str, Any], list[dict[str, Any]]], ...] = (
    ({"hand": [[1, 2], [3, 4]], "round": 1}, [{"kind": "orient", "flip": False}, {"kind": "orient", "flip": True}]),
    (
        {"hand": [[1, 2], [3, 4]], "table": [], "nested": {"a": [1, {"b": "x"}]}},
        [{"kind": "show", "start": 0, "length": 1}, {"kind": "show", "start": 1, "length": 1}],
    ),
    (
        {"hand": ["AS", "7H"], "pot": 3},
        [{"kind": "setup", "left": ["AS"], "right": ["7H"]}, {"kind": "fold"}, {"kind": "bet", "amount": 2}],
    ),
)


class ScriptError(AssertionError):
    """The bot did not follow the contract."""


@dataclass
class FakeReferee:
    endpoint: str
    token: str = TOKEN
    received: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 1000)
        self.socket.bind(self.endpoint)
        self.endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)

    def close(self) -> None:
        self.socket.close()
        self.context.term()

    def environment(self, token: str | None = None) -> dict[str, str]:
        return {
            **os.environ,
            limits.ENV_ENDPOINT: self.endpoint,
            limits.ENV_TOKEN: self.token if token is None else token,
        }

    def send(self, identity: bytes, message: dict[str, Any]) -> None:
        self.socket.send_multipart([identity, msgpack.packb(message, use_bin_type=True)])

    def receive(self) -> tuple[bytes, Any]:
        if not self.socket.poll(int(WAIT_S * 1000)):
            raise ScriptError(f"no message from the bot within {WAIT_S} s")
        identity, frame = self.socket.recv_multipart()
        message = msgpack.unpackb(frame, raw=False)
        self.received.append(message)
        return identity, message

    def handshake(self) -> bytes:
        identity, hello = self.receive()
        if hello.get("type") != "hello" or hello.get("protocol") != limits.PROTOCOL_VERSION:
            raise ScriptError(f"expected hello for protocol {limits.PROTOCOL_VERSION}, got {hello!r}")
        if hello.get("token") != self.token:
            self.send(identity, {"type": "refused", "reason": "wrong token"})
            raise ScriptError("wrong token")
        self.send(identity, self.welcome())
        return identity

    @staticmethod
    def welcome() -> dict[str, Any]:
        return {
            "type": "welcome",
            "protocol": limits.PROTOCOL_VERSION,
            "seat_token_ok": True,
            "limits": {
                "move_time_ms": limits.DEFAULT_MOVE_TIME_MS,
                "time_bank_ms": limits.DEFAULT_TIME_BANK_MS,
                "startup_time_s": limits.DEFAULT_STARTUP_TIME_S,
                "max_message_bytes": limits.MAX_MESSAGE_BYTES,
                "max_depth": limits.MAX_DEPTH,
                "max_container_len": limits.MAX_CONTAINER_LEN,
                "max_string_bytes": limits.MAX_STRING_BYTES,
            },
        }

    def request(self, identity: bytes, request_id: int, observation: dict, legal: list[dict]) -> dict[str, Any]:
        """Send one request; return the action answered, checking the id and legality."""
        self.send(
            identity,
            {
                "type": "request",
                "id": request_id,
                "observation": observation,
                "legal_actions": legal,
                "time_left_ms": limits.DEFAULT_MOVE_TIME_MS,
                "bank_left_ms": limits.DEFAULT_TIME_BANK_MS,
            },
        )
        _, reply = self.receive()
        if reply.get("type") != "action" or reply.get("id") != request_id or set(reply) != {"type", "id", "action"}:
            raise ScriptError(f"expected an action answering request {request_id}, got {reply!r}")
        if reply["action"] not in legal:
            raise ScriptError(f"action {reply['action']!r} is not among {legal!r}")
        return reply["action"]

    def play_script(self, games: int = 2, extra_messages: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
        """Handshake, `games` games of the scripted requests, bye; returns the actions chosen."""
        identity = self.handshake()
        for message in extra_messages:
            self.send(identity, message)
        actions = []
        request_id = 100
        for game_index in range(games):
            self.send(
                identity,
                {
                    "type": "game_start",
                    "game": "scout",
                    "seat": game_index % 3,
                    "players": 3,
                    "config": {},
                    "match_id": "m-1",
                    "game_index": game_index,
                },
            )
            for observation, legal in REQUESTS:
                request_id += 7
                actions.append(self.request(identity, request_id, observation, legal))
            self.send(identity, {"type": "game_over", "result": {"scores": [3, 1, 2], "ranks": [1, 3, 2]}, "seat": 0})
        self.send(identity, {"type": "bye"})
        return actions


def wait_exit(process: subprocess.Popen, timeout_s: float = WAIT_S) -> int:
    """The exit status of `process`, killing it (and failing) if it does not exit in time."""
    deadline = time.monotonic() + timeout_s
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise ScriptError(f"the bot did not exit within {timeout_s} s")
        time.sleep(0.02)
    return process.returncode
