"""A small DevTools-protocol client for headless Chromium, on the standard library alone.

Chromium is started with --remote-debugging-pipe: it reads commands on its fd 3 and writes replies and events
on its fd 4, each a JSON message ending in a NUL byte (bash puts the pipes there: dash's redirections take
single-digit fds only). A Page is one tab: open a file, evaluate JavaScript,
press keys and click as a person would, take a screenshot, and collect what a person would see go wrong (console
errors, uncaught exceptions) and every request that leaves the page.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)
REPLY_TIMEOUT_S = 60.0
"""Generous: only a hung browser takes this long (the machine may be loaded)."""

KEY_CODES = {"ArrowRight": 39, "ArrowLeft": 37, "Home": 36, "End": 35, "PageDown": 34, "PageUp": 33, " ": 32}


class BrowserError(RuntimeError):
    """Chromium did not answer, or answered a command with an error."""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """One headless Chromium with a fresh profile; `close()` stops it (and only it)."""

    def __init__(self, executable: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="referee-chromium-")
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        shell = f'exec "$0" "$@" 3<&{commands_read} 4>&{replies_write}'
        self._log = Path(self._profile.name) / "chromium.log"
        self._process = subprocess.Popen(
            ["bash", "-c", shell, executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            pass_fds=(commands_read, replies_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log.open("wb"),
            start_new_session=True,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise BrowserError(f"Chromium has exited: {self.last_words()}") from None
        while True:
            reply = self._read(REPLY_TIMEOUT_S)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def pump(self, seconds: float) -> None:
        """Collect the events that arrive within `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(self._read(left))
            except TimeoutError:
                return

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._replies], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("no message from Chromium")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed its pipe: {self.last_words()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def last_words(self) -> str:
        status = self._process.poll()
        tail = self._log.read_text(errors="replace").strip().splitlines()[-5:]
        return f"exit status {status}; its last output: " + " | ".join(tail)

    def new_page(self, width: int = 1280, height: int = 1000) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        return page

    def close(self) -> None:
        with contextlib.suppress(BrowserError, TimeoutError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, 9)
            self._process.wait()
        os.close(self._commands)
        os.close(self._replies)
        self._profile.cleanup()


class Page:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session
        self._since = 0
        """Events before this index belong to pages opened earlier in this tab."""

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def _events(self, *methods: str) -> list[dict[str, Any]]:
        events = self.browser.events[self._since :]
        return [e for e in events if e.get("sessionId") == self.session and e.get("method") in methods]

    def open(self, path: Path, fragment: str = "") -> float:
        """Load the file and wait until its script says it is drawn (or failed); returns the seconds that took."""
        url = path.resolve().as_uri() + fragment
        self.browser.pump(0.05)
        self._since = len(self.browser.events)
        started = time.monotonic()
        self.send("Page.navigate", {"url": url})
        address = json.dumps(url.split("#")[0])
        ready = "['1', 'error'].includes(document.documentElement?.dataset.ready)"
        self.wait_for(f"location.href.split('#')[0] === {address} && {ready}")
        return time.monotonic() - started

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} raised: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = REPLY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while not self._holds(expression):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never made {expression!r} true")
            time.sleep(0.02)

    def _holds(self, expression: str) -> bool:
        """Whether `expression` is true now; false while a navigation replaces the document under it."""
        try:
            return bool(self.evaluate(f"Boolean({expression})"))
        except BrowserError:
            return False

    def press(self, key: str) -> None:
        code = KEY_CODES.get(key, ord(key.upper()) if len(key) == 1 else 0)
        common = {"key": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **common, **({"text": key} if len(key) == 1 else {})})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **common})

    def click(self, selector: str) -> None:
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}
            )

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"]))
        return path

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions so far, as a person with the console open would see them."""
        self.browser.pump(0.05)
        found = []
        for event in self._events("Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded"):
            params = event["params"]
            if event["method"] == "Runtime.exceptionThrown":
                found.append(str(params["exceptionDetails"]))
            elif event["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(json.dumps(params["args"]))
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for (its own file included)."""
        return [event["params"]["request"]["url"] for event in self._events("Network.requestWillBeSent")]
