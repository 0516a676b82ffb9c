"""Patches between JSON values (tournaments/pages/delta.py): applying diff(old, new) to old gives new, and the
patches of a game's observations stay small where little changed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tournaments.pages.delta import apply_patch, diff

scalars = st.none() | st.integers(-5, 5) | st.sampled_from(["a", "b", "AS", ""])
"""No booleans among numbers: Python counts False == 0, and observations never turn one into the other."""
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(["x", "y", "z", "~", "*"]), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(values, values)
def test_a_patch_turns_the_old_value_into_the_new(old: Any, new: Any) -> None:
    patch = diff(old, new)
    rebuilt = apply_patch(old, patch)
    assert json.dumps(rebuilt, sort_keys=True) == json.dumps(new, sort_keys=True)
    assert (patch is None) == (json.dumps(old, sort_keys=True) == json.dumps(new, sort_keys=True))


@given(values)
def test_a_patch_survives_json(old: Any) -> None:
    new = {"kept": old, "log": [1, 2, 3]}
    patch = diff({"kept": old, "log": [1, 2]}, new)
    assert apply_patch({"kept": old, "log": [1, 2]}, json.loads(json.dumps(patch))) == new


def test_a_growing_log_and_a_changed_count_cost_only_the_change() -> None:
    before = {"history": [{"seat": 0, "kind": "show"}] * 20, "hand_sizes": [9, 9, 9, 9, 9], "phase": "play"}
    after = {**before, "history": [*before["history"], {"seat": 1, "kind": "scout"}], "hand_sizes": [9, 10, 9, 9, 9]}
    patch = diff(before, after)
    assert patch == {"~": {"history": {"+": [{"seat": 1, "kind": "scout"}]}, "hand_sizes": {"~": {"1": {"*": 10}}}}}


@given(st.lists(st.booleans(), max_size=6), st.lists(st.booleans(), max_size=6))
def test_flags_change_as_flags(old: list[bool], new: list[bool]) -> None:
    assert apply_patch(old, diff(old, new)) == new


def test_removed_keys_and_replaced_types() -> None:
    assert apply_patch({"a": 1, "b": 2}, diff({"a": 1, "b": 2}, {"a": 1})) == {"a": 1}
    assert diff([1, 2], {"a": 1}) == {"*": {"a": 1}}
    assert diff(False, 0) == {"*": 0}
