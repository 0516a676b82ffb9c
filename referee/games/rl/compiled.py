"""SCOUT's per-decision arrays in C (_fastscout.c), when the package was built with a C compiler.

The environments read, at every decision, the observation vector and a row of action features per legal
action; in Python these cost about ten times the engine's own step (docs/reference/rl-environments.md gives
the figures). The C extension computes the same numbers (each in double, stored as float32, as numpy's cast
does) from the same observation. It is optional: `pip install` builds it where a compiler is found and goes on
without it otherwise, and then `COMPILED` is False and the environments use the Python of features.py and
action_features.py, which stays the reference (tests/games/test_rl_compiled.py checks both agree at every
decision of many games).
"""

from __future__ import annotations

from types import ModuleType

_fastscout: ModuleType | None
try:
    from . import _fastscout  # type: ignore[attr-defined,no-redef]
except ImportError:  # pragma: no cover - built without a compiler
    _fastscout = None

COMPILED = _fastscout is not None
