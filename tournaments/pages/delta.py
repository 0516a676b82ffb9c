"""Patches between JSON values: how a replay page carries every step's observations in little space.

Consecutive observations of a game differ in a few keys (whose turn it is, a pot, a card that moved) and
their logs only grow, so a page stores each observation as the patch from the one before. A patch is a map:

    {"*": value}                     the new value, whole
    {"+": [items]}                   the old list with these items appended
    {"~": {key: patch}, "-": [keys]} a map (or a list of the same length, keyed by index as a string) with
                                     these entries patched and these keys removed

`diff(old, new)` is None when the two are equal. The viewer's script (assets/replay.js, `applyPatch`) and
`apply_patch` here read the same format. Equality is Python's, so inside a list or a map a False that turns into
0 (equal in Python) is no change; observations never do that, their values keep their types (the rules pages,
referee/games/*.md, give them).
"""

from __future__ import annotations

from typing import Any

Patch = dict[str, Any]


def diff(old: Any, new: Any) -> Patch | None:
    """The patch that turns `old` into `new`, or None if they are equal."""
    if old == new and type(old) is type(new):
        return None
    if type(old) is dict and type(new) is dict:
        return _dict_diff(old, new)
    if type(old) is list and type(new) is list:
        return _list_diff(old, new)
    return {"*": new}


def _dict_diff(old: dict[str, Any], new: dict[str, Any]) -> Patch:
    entries: dict[str, Patch] = {}
    for key, value in new.items():
        entry = {"*": value} if key not in old else diff(old[key], value)
        if entry is not None:
            entries[key] = entry
    patch: Patch = {"~": entries} if entries else {}
    removed = [key for key in old if key not in new]
    if removed:
        patch["-"] = removed
    return patch


def _list_diff(old: list[Any], new: list[Any]) -> Patch:
    if len(new) > len(old) and new[: len(old)] == old:
        return {"+": new[len(old) :]}
    if len(new) != len(old):
        return {"*": new}
    changed = {str(index): diff(before, after) for index, (before, after) in enumerate(zip(old, new, strict=True))}
    entries = {index: patch for index, patch in changed.items() if patch is not None}
    if 2 * len(entries) > len(new):
        return {"*": new}
    return {"~": entries}


def apply_patch(old: Any, patch: Patch | None) -> Any:
    """The value `patch` (from `diff(old, new)`) makes of `old`: `new` again. Shares unchanged parts with old."""
    if patch is None:
        return old
    if "*" in patch:
        return patch["*"]
    if "+" in patch:
        return [*old, *patch["+"]]
    if type(old) is list:
        patched = list(old)
        for index, entry in patch.get("~", {}).items():
            patched[int(index)] = apply_patch(old[int(index)], entry)
        return patched
    patched_map = dict(old)
    for key, entry in patch.get("~", {}).items():
        patched_map[key] = apply_patch(old.get(key), entry)
    for key in patch.get("-", ()):
        del patched_map[key]
    return patched_map
