"""A check job: check-bot on one version (tournaments.classroom.checkbot_run.check_submission: built in the
sandbox, in a copy, then its games), as plain data for the student: the verdict, check-bot's JSON report (with
`text`, its lines as `referee check-bot` prints them, for the version's page) and the build's log, with the
machine's paths redacted."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tournaments.classroom.checkbot_report import report_json, report_text, verdict_line
from tournaments.classroom.checkbot_run import CheckRequest, check_submission
from tournaments.classroom.checkbot_submission import BUILD_LOG

from .limits import capped_text


def run_check(payload: dict[str, Any], folder: Path, *, sandbox: bool, allow_partial: bool) -> dict[str, Any]:
    """Check the version in `folder` for the ladder's game and player count."""
    with tempfile.TemporaryDirectory(prefix="ladder-check-") as run:
        request = CheckRequest(
            payload["game"],
            str(folder),
            players=(int(payload["players"]),),
            run_dir=Path(run),
            sandbox=sandbox,
            allow_partial=allow_partial,
            kernel=bool(payload.get("kernel", False)),
        )
        outcome = check_submission(request)
        shown = _Shown(outcome.redactor.text, payload["digest"], payload["version"])
        log = Path(run) / BUILD_LOG
        build_log = shown.text(capped_text(log)) if log.is_file() else None
        if outcome.report is None:
            problem = shown.text(outcome.problem or "the bot cannot be run")
            return {"passed": False, "verdict": problem, "report": None, "build_log": build_log}
        return {
            "passed": outcome.report.verdict.conforms,
            "verdict": shown.text(verdict_line(outcome.report)),
            "report": shown.value({**report_json(outcome.report), "text": report_text(outcome.report)}),
            "build_log": build_log,
        }


class _Shown:
    """The redactor's text, with the store's folder name (the content hash) shown as the version's id."""

    def __init__(self, redact: Callable[[str], str], digest: str, version: str) -> None:
        self.redact, self.digest, self.version = redact, digest, version

    def text(self, text: str) -> str:
        return self.redact(text).replace(self.digest, self.version)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value
