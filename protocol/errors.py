"""The root of every error the library raises on purpose, and the three kinds a caller can act on.

Each class the library defines derives from exactly one of these kinds (and, where callers already relied on
it, from the builtin it was before, such as ValueError or OSError). The command line translates a
RefereeError once, at its edge, into a one-line message; anything else is a bug and keeps its traceback.

It lives in `protocol`, the one package that every part of the house and every Python bot imports, and that a
bot may carry alone (a copy of protocol/ is the whole SDK): so it imports nothing, and every room may import it.
"""

from __future__ import annotations


class RefereeError(Exception):
    """Something the library refuses or cannot do, with a message that says what and, where it can, what to do."""


class BadInput(RefereeError):
    """What a person or a file gave is wrong: an option, a league file, a bot spec, a replay, a submission."""


class BotFault(RefereeError):
    """A bot (or what it sent) broke the protocol, the rules or a limit; raised where it is turned into data."""


class EnvironmentProblem(RefereeError):
    """The machine cannot do what was asked: a missing tool, a kernel feature, a full disk, a busy resource."""
