"""The ladder library's answers as JSON: dataclasses as objects, enums as their values, times in ISO 8601,
paths never (a server's folders are none of a client's business)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePath
from typing import Any


def plain(value: Any) -> Any:
    """`value` as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: plain(getattr(value, field.name))
            for field in dataclasses.fields(value)
            if not isinstance(getattr(value, field.name), PurePath)
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items() if not isinstance(item, PurePath)}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(item) for item in value]
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, PurePath):
        return None
    return value
