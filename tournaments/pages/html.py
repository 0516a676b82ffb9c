"""The one template of every page: a self-contained HTML document whose styles, scripts and data are inline.

No page loads anything: no server, no network, no CDN. Assets are files of this package (assets/), read once
and pasted in; data goes into <script type="application/json"> blocks, escaped so that no value can end the
block early.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

from protocol.errors import EnvironmentProblem

ERROR_HOOK = (
    "window.pageErrors=[];"
    "addEventListener('error',function(e){pageErrors.push(String(e.message))});"
    "addEventListener('unhandledrejection',function(e){pageErrors.push(String(e.reason))});"
)
"""Runs first: the page's own scripts show what it caught instead of failing silently."""

POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
"""The page's Content-Security-Policy: the browser itself refuses any load from outside the page."""


class AssetError(EnvironmentProblem, RuntimeError):
    """An asset of this package is missing or cannot be pasted into a page."""


@cache
def asset(name: str) -> str:
    """The text of assets/NAME."""
    try:
        text = (files("tournaments.pages") / "assets" / name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as error:
        raise AssetError(f"the page asset {name!r} is missing from the installation: {error}") from None
    if "</script" in text.lower() or "</style" in text.lower():
        raise AssetError(f"the page asset {name!r} would end its inline block early")
    return text


def json_block(element_id: str, data: Any) -> str:
    """A <script type="application/json"> holding `data`; '<' is escaped so no string can close the block."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def packed_block(element_id: str, data: Any) -> str:
    """`data` as JSON, gzip-compressed and base64-encoded in a <script> block (the page unpacks it with the
    browser's own DecompressionStream): a long game's steps in a fraction of their JSON's size."""
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    packed = base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")
    return f'<script type="application/gzip+base64" id="{element_id}">{packed}</script>'


def document(title: str, styles: Sequence[str], body: str, scripts: Sequence[str], data_blocks: Sequence[str]) -> str:
    """A whole page: `styles` and `scripts` name assets; `body` is HTML; `data_blocks` are json/packed blocks."""
    css = "\n".join(asset(name) for name in styles)
    js = "\n".join(f"<script>\n{asset(name)}\n</script>" for name in scripts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        f"<title>{escape(title)}</title>\n"
        f"<script>{ERROR_HOOK}</script>\n"
        f"<style>\n{css}\n</style>\n</head>\n<body>\n{body}\n" + "\n".join(data_blocks) + f"\n{js}\n</body>\n</html>\n"
    )
