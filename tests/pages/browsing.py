"""What the browser tests share: which Chromium Playwright drives and how, the two screen sizes, what a person
with the console open would see go wrong on a page, and opening a page until its script says it is drawn.

Playwright drives Debian's /usr/bin/chromium through `executable_path`: its own browser download is not possible
on the machines these tests run on (and is never needed)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from page_figures import FIGURES
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Request, ViewportSize, WebError
from playwright.sync_api import Error as PlaywrightError

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
TIMEOUT_MS = 60_000
"""Generous: only a hung browser takes this long (the machine may be loaded)."""

DESKTOP = ViewportSize(width=1280, height=1000)
PHONE = ViewportSize(width=390, height=844)
at_phone_size = pytest.mark.browser_context_args(viewport=PHONE, is_mobile=True)
"""The test's `page` (and every context it makes) is a phone's screen, 390 x 844, laid out as a phone would."""

READY = "['1', 'error'].includes(document.documentElement?.dataset.ready)"
WAIT = """(ms) => new Promise((resolve) => {
  const until = performance.now() + ms;
  const check = () => {
    let holds = false;
    try { holds = Boolean(EXPRESSION); } catch (error) { holds = false; }
    if (holds || performance.now() > until) resolve(holds); else setTimeout(check, 20);
  };
  check();
})"""
"""Resolves to whether EXPRESSION (spliced into the source) came to hold within `ms`, checking every 20 ms."""


class PageLog:
    """Console errors and uncaught exceptions of every page of a browser context, and every URL they asked for
    (their own files included)."""

    def __init__(self, context: BrowserContext) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        context.on("console", self._console)
        context.on("weberror", self._uncaught)
        context.on("request", self._request)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "assert"):
            self.errors.append(f"{message.text} ({message.location})")

    def _uncaught(self, error: WebError) -> None:
        self.errors.append(str(error.error))

    def _request(self, request: Request) -> None:
        self.requests.append(request.url)


def open_page(page: Page, path: Path, fragment: str = "") -> float:
    """Load the file and wait until its script says it is drawn (or failed); returns the seconds that took."""
    started = time.monotonic()
    page.goto(path.resolve().as_uri() + fragment)
    wait_until(page, READY)
    return time.monotonic() - started


def wait_until(page: Page, expression: str, timeout_ms: float = TIMEOUT_MS) -> None:
    """Wait until the JavaScript `expression` holds on the page (or on the page a click navigates to).

    Not `page.wait_for_function`: it runs the expression through eval(), which the pages' Content-Security-Policy
    refuses. `page.evaluate` reaches the page through DevTools, past the policy; the expression is checked in the
    page every 20 ms, and again on the next document when a navigation replaces this one."""
    deadline = time.monotonic() + timeout_ms / 1000
    while (left := deadline - time.monotonic()) > 0:
        try:
            if page.evaluate(WAIT.replace("EXPRESSION", expression), left * 1000):
                return
        except PlaywrightError:
            page.wait_for_timeout(20)
    raise TimeoutError(f"the page never made {expression!r} true")


def opened(page: Page, path: Path, label: str) -> Page:
    """`open_page`, noting the page's size and draw time for the end of the run; the page must have drawn."""
    seconds = open_page(page, path)
    ready_at = page.evaluate("document.documentElement.dataset.readyAt")
    FIGURES.append(
        f"{label}: {path.stat().st_size / 1000:.0f} kB, drawn {ready_at} ms after navigation started "
        f"({seconds * 1000:.0f} ms as the test saw it)"
    )
    assert page.evaluate("document.documentElement.dataset.ready") == "1"
    return page


def assert_clean(page: Page, log: PageLog) -> None:
    """Nothing went wrong in the console and nothing but files (and data: URLs) was fetched."""
    page.wait_for_timeout(50)
    assert log.errors == [], log.errors
    assert page.url.split("#")[0] in log.requests, ("the log sees the page's own request", log.requests)
    assert {url.split(":", 1)[0] for url in log.requests} <= {"file", "data"}, log.requests
