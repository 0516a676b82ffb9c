"""A replay read from either of its two forms: the JSON file the referee writes, or a replay page, which embeds
its whole replay (so that `--replay-format html` loses nothing: show, verify and html read the page as well)."""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from pathlib import Path
from typing import Any

from referee import replay as replays

from .replay_page import STEPS_BLOCK

_PACKED = re.compile(rf'<script type="application/gzip\+base64" id="{STEPS_BLOCK}">([A-Za-z0-9+/=\s]*)</script>')


def load_replay(path: Path | str) -> dict[str, Any]:
    """The replay in `path` (a .html replay page or a JSON replay); ReplayError if it holds none."""
    if Path(path).suffix.lower() not in (".html", ".htm"):
        return replays.load(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise replays.ReplayError(f"cannot read replay page {str(path)!r}: {error}") from None
    found = _PACKED.search(text)
    if found is None:
        raise replays.ReplayError(f"{str(path)!r} is not a replay page (it holds no packed replay)")
    try:
        data = json.loads(gzip.decompress(base64.b64decode(found.group(1))))
    except (binascii.Error, OSError, EOFError, ValueError) as error:
        raise replays.ReplayError(f"the replay packed in {str(path)!r} is damaged: {error}") from None
    return replays.checked(data.get("replay") if type(data) is dict else None, str(path))
