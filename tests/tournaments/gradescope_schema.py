"""A hand-written check of Gradescope's results.json format, as documented at
https://gradescope-autograders.readthedocs.io/en/latest/specs/ ("Output format"): the keys it names, their
types, and the values it allows. `problems(data)` lists what breaks it (empty: the file is valid)."""

from __future__ import annotations

from typing import Any

NUMBER = (int, float)
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
STATUS = {"passed", "failed"}

TOP_LEVEL: dict[str, Any] = {
    "score": NUMBER,
    "execution_time": NUMBER,
    "output": str,
    "output_format": str,
    "test_output_format": str,
    "test_name_format": str,
    "visibility": str,
    "stdout_visibility": str,
    "extra_data": dict,
    "tests": list,
    "leaderboard": list,
}
TEST: dict[str, Any] = {
    "score": NUMBER,
    "max_score": NUMBER,
    "status": str,
    "name": str,
    "name_format": str,
    "number": str,
    "output": str,
    "output_format": str,
    "tags": list,
    "visibility": str,
    "extra_data": dict,
}


def _typed(data: dict[str, Any], allowed: dict[str, Any], where: str) -> list[str]:
    found = [f"{where}: unknown key {key!r}" for key in data if key not in allowed]
    for key, value in data.items():
        expected = allowed.get(key)
        if expected is not None and (not isinstance(value, expected) or isinstance(value, bool)):
            found.append(f"{where}.{key}: {type(value).__name__} is not {expected}")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in VISIBILITY:
            found.append(f"{where}.{key}: {data[key]!r} is not one of {sorted(VISIBILITY)}")
    for key in ("output_format", "test_output_format", "test_name_format", "name_format"):
        if key in data and data[key] not in FORMATS:
            found.append(f"{where}.{key}: {data[key]!r} is not one of {sorted(FORMATS)}")
    return found


def problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["results.json holds an object"]
    found = _typed(data, TOP_LEVEL, "results")
    tests = data.get("tests", [])
    if "score" not in data and not (tests and all(isinstance(t, dict) and "score" in t for t in tests)):
        found.append("results: a score is needed at the top level or on every test")
    for number, test in enumerate(tests if isinstance(tests, list) else []):
        where = f"tests[{number}]"
        if not isinstance(test, dict):
            found.append(f"{where}: a test is an object")
            continue
        found += _typed(test, TEST, where)
        if "status" in test and test["status"] not in STATUS:
            found.append(f"{where}.status: {test['status']!r} is not one of {sorted(STATUS)}")
        scored = isinstance(test.get("score"), NUMBER) and isinstance(test.get("max_score"), NUMBER)
        if scored and not 0 <= test["score"] <= test["max_score"]:
            found.append(f"{where}: score {test['score']} is not within 0..max_score {test['max_score']}")
    return found
