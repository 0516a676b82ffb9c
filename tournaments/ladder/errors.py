"""The ladder's errors: one root (LadderError), each also a kind of protocol.errors, so that the CLI prints it as
one line and the server maps it to an HTTP status by its class (Unauthorised 401, Forbidden 403, QuotaExceeded
429, LadderFrozen 409, UnknownItem 404)."""

from __future__ import annotations

from datetime import datetime

from protocol.errors import BadInput, EnvironmentProblem, RefereeError


class LadderError(RefereeError):
    """The root of the ladder's errors (each subclass has its kind)."""


class Unauthorised(LadderError, BadInput):
    """No token, an unknown one, or a revoked one."""


class Forbidden(LadderError, BadInput):
    """A known principal asking for what its role or name does not allow."""


class QuotaExceeded(LadderError, BadInput):
    """A student's submissions in the quota's window are used up; `next_slot` is when the next one opens."""

    def __init__(self, message: str, next_slot: datetime) -> None:
        super().__init__(message)
        self.next_slot = next_slot


class LadderFrozen(LadderError, BadInput):
    """The deadline has passed and the late policy refuses submissions."""


class UnknownItem(LadderError, BadInput):
    """No such student, version, game or job."""


class LadderFileError(LadderError, BadInput):
    """The ladder folder or its ladder file is missing or wrong."""


class DatabaseProblem(LadderError, EnvironmentProblem):
    """The database cannot be opened or migrated (a wrong URL, a server that is down, a driver not installed)."""


class NoSandbox(LadderError, EnvironmentProblem):
    """This machine cannot run the sandbox, so it takes no job: a ladder never runs a student's bot outside it."""


class BadResult(LadderError, BadInput):
    """A worker's report that does not fit its job (games it was not given, seats missing)."""


class BadKey(LadderError, BadInput):
    """A public key the ladder does not take: not a CURVE public key, one registered already by another student
    or the hosting worker's own, or any key where the ladder file has no open division."""
