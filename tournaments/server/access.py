"""Who may do what: the one rule every endpoint asks (`decide`), written once as data.

Each endpoint names its `Action`; `RULES` says which roles may do it and whether a student may do it only for
themself (OWN: the student named in the request must be the one asking), or only their own items (ITEM: a version,
a log, a replay named by its id; another's and one that does not exist get one answer, 403 with the same body, so ids
cannot be probed). Staff may do every action but the
worker's; a worker only its own jobs and version fetches; a spectator (no token) only what is public. The
ladder library checks again below this (defence in depth): this rule decides what the server even asks it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tournaments.ladder import Forbidden, Item, Principal, Role, Unauthorised, hidden


class Action(enum.StrEnum):
    HEALTH = "health"
    LOGIN = "login"
    VIEW_TABLE = "view-table"
    SUBMIT = "submit"
    VIEW_STUDENT = "view-student"
    """A student's page: versions, check reports, games (and through it, their logs and source)."""
    VIEW_VERSION = "view-version"
    """One version by its id: the ladder checks it is the asker's (or staff), and the server again once it has
    the version's student."""
    READ_LOG = "read-log"
    """One seat's log of a game: the ladder knows whose seat it is and refuses another student's."""
    VIEW_REPLAY = "view-replay"
    REGISTER_KEY = "register-key"
    """Register or replace a student's CURVE public key, their remote bot of the open division."""
    OWN_KEY = "own-key"
    """See or register the asker's own key (/api/key): a student's, never another's by construction."""
    STAFF = "staff"
    CLAIM_JOB = "claim-job"
    REPORT_JOB = "report-job"
    FETCH_VERSION = "fetch-version"


class Scope(enum.Enum):
    ANYONE = "anyone, with or without a token"
    ROLES = "the roles listed"
    OWN = "the roles listed; a student only for themself"
    ITEM = "the roles listed; a student only their own items, another's answered as a missing one"


@dataclass(frozen=True)
class Rule:
    roles: frozenset[Role]
    scope: Scope
    item: Item | None = None


_EVERYONE = frozenset(Role)
_PEOPLE = frozenset({Role.STUDENT, Role.STAFF})
RULES: dict[Action, Rule] = {
    Action.HEALTH: Rule(_EVERYONE, Scope.ANYONE),
    Action.LOGIN: Rule(_EVERYONE, Scope.ANYONE),
    Action.VIEW_TABLE: Rule(_EVERYONE, Scope.ANYONE),
    Action.SUBMIT: Rule(frozenset({Role.STUDENT}), Scope.ROLES),
    Action.VIEW_STUDENT: Rule(_PEOPLE, Scope.OWN),
    Action.VIEW_VERSION: Rule(_PEOPLE, Scope.ITEM, Item.VERSION),
    Action.READ_LOG: Rule(_PEOPLE, Scope.ITEM, Item.LOG),
    Action.VIEW_REPLAY: Rule(_PEOPLE, Scope.ITEM, Item.REPLAY),
    Action.REGISTER_KEY: Rule(frozenset({Role.STUDENT}), Scope.OWN),
    Action.OWN_KEY: Rule(frozenset({Role.STUDENT}), Scope.ROLES),
    Action.STAFF: Rule(frozenset({Role.STAFF}), Scope.ROLES),
    Action.CLAIM_JOB: Rule(frozenset({Role.WORKER}), Scope.ROLES),
    Action.REPORT_JOB: Rule(frozenset({Role.WORKER}), Scope.ROLES),
    Action.FETCH_VERSION: Rule(frozenset({Role.WORKER, Role.STAFF}), Scope.ROLES),
}


def decide(who: Principal | None, action: Action, student: str | None = None) -> Principal | None:
    """`who` if they may do `action` (for `student`, where the action is about one); Unauthorised when a token
    is needed and none was given, Forbidden when the one given does not allow it."""
    rule = RULES[action]
    if rule.scope is Scope.ANYONE:
        return who
    if who is None:
        raise Unauthorised(f"{action.value} needs a token")
    if who.role not in rule.roles:
        raise Forbidden(f"a {who.role.value} may not {action.value}")
    if rule.scope is Scope.OWN and who.role is Role.STUDENT and student != who.name:
        raise Forbidden(f"a student may {action.value} only for themself")
    return who


def decide_item(who: Principal, action: Action, owner: str | None) -> None:
    """Once the ladder has found an item (it checked too): a student who is not its owner gets what a missing
    item gets (403)."""
    rule = RULES[action]
    if rule.scope is Scope.ITEM and rule.item is not None and who.role is Role.STUDENT and owner != who.name:
        raise hidden(rule.item, who)
