"""The server's edges on their own: the one access rule, rate limits, CSRF tokens, the live table's loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from tournaments.ladder import Forbidden, Principal, Role, Unauthorised
from tournaments.server.access import RULES, Action, Scope, decide
from tournaments.server.events import TableWatch, table_event, table_events
from tournaments.server.ratelimit import Rate, RateLimited, RateLimiter
from tournaments.server.sessions import Csrf, CsrfRefused, credentials

ANN = Principal(Role.STUDENT, "ann")
BOB = Principal(Role.STUDENT, "bob")
STAFF = Principal(Role.STAFF, "admin")
WORKER = Principal(Role.WORKER, "workers")
T = TypeVar("T")


def test_a_student_may_see_their_own_page_and_no_one_elses() -> None:
    assert decide(ANN, Action.VIEW_STUDENT, "ann") == ANN
    with pytest.raises(Forbidden):
        decide(BOB, Action.VIEW_STUDENT, "ann")
    with pytest.raises(Forbidden):
        decide(WORKER, Action.VIEW_STUDENT, "ann")
    assert decide(STAFF, Action.VIEW_STUDENT, "ann") == STAFF


def test_a_spectator_sees_only_what_is_public() -> None:
    public = {action for action, rule in RULES.items() if rule.scope is Scope.ANYONE}
    assert public == {Action.HEALTH, Action.LOGIN, Action.VIEW_TABLE}
    for action in set(Action) - public:
        with pytest.raises(Unauthorised):
            decide(None, action, "ann")


def test_only_workers_take_jobs_and_only_students_submit() -> None:
    for action in (Action.CLAIM_JOB, Action.REPORT_JOB):
        assert decide(WORKER, action) == WORKER
        for who in (ANN, STAFF):
            with pytest.raises(Forbidden):
                decide(who, action)
    assert decide(ANN, Action.SUBMIT) == ANN
    for who in (STAFF, WORKER):
        with pytest.raises(Forbidden):
            decide(who, Action.SUBMIT)
    with pytest.raises(Forbidden):
        decide(ANN, Action.FETCH_VERSION)
    with pytest.raises(Forbidden):
        decide(ANN, Action.STAFF)


def test_every_action_has_a_rule() -> None:
    assert set(RULES) == set(Action)


def test_a_rate_limit_allows_its_count_per_window_and_per_key() -> None:
    now = [100.0]
    limiter = RateLimiter("uploads", Rate(3, 60), clock=lambda: now[0])
    for _ in range(3):
        limiter.hit("ann")
    with pytest.raises(RateLimited) as caught:
        limiter.hit("ann")
    assert caught.value.retry_after == 60
    limiter.hit("bob")
    now[0] += 30
    with pytest.raises(RateLimited) as caught:
        limiter.hit("ann")
    assert caught.value.retry_after == 30
    now[0] += 30
    limiter.hit("ann")


def test_a_csrf_token_belongs_to_its_session_and_its_server_run() -> None:
    csrf = Csrf()
    token = csrf.token("crl_a_b")
    csrf.check("crl_a_b", token)
    tampered = token[:-1] + ("1" if token.endswith("0") else "0")
    for session, given in (("crl_other_c", token), ("crl_a_b", None), ("crl_a_b", ""), ("crl_a_b", tampered)):
        with pytest.raises(CsrfRefused):
            csrf.check(session, given)
    with pytest.raises(CsrfRefused):
        Csrf().check("crl_a_b", token)


def test_the_login_form_is_a_double_submit() -> None:
    nonce = Csrf.new_login_nonce()
    Csrf.check_login(nonce, nonce)
    for cookie, given in ((None, nonce), (nonce, None), (nonce, Csrf.new_login_nonce())):
        with pytest.raises(CsrfRefused):
            Csrf.check_login(cookie, given)


def test_credentials_come_from_the_header_before_the_cookie() -> None:
    assert credentials("Bearer abc", "cookie") == credentials("bearer  abc ", None)
    assert credentials("Bearer abc", "cookie").token == "abc"
    assert not credentials("Bearer abc", "cookie").from_cookie
    assert credentials("Basic xyz", None).token == "", "another scheme is a token that fails, not no token"
    assert credentials(None, "cookie").from_cookie
    assert credentials(None, None).token is None


class Counter:
    """A change counter the loop polls (the one method of the ladder that table_events reads)."""

    def __init__(self) -> None:
        self.value = 0
        self.polls = 0

    def changes(self) -> int:
        self.polls += 1
        return self.value


def _in_a_thread_of_its_own(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """asyncio.run in a fresh thread: the test's own thread may already run a loop (Playwright's sync API)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine()).result(timeout=120)


def test_the_live_loop_sends_the_table_at_once_then_only_on_change() -> None:
    counter = Counter()
    tables = []

    def table() -> dict[str, int]:
        tables.append(counter.value)
        return {"changes": counter.value}

    async def run() -> list[str]:
        events: list[str] = []
        left = asyncio.Event()

        async def disconnected() -> bool:
            return left.is_set()

        async def watch() -> None:
            async for event in table_events(TableWatch(counter, poll=0.01), "ann", table, disconnected, keepalive=3600):
                events.append(event)
                if len(events) == 2:
                    left.set()

        task = asyncio.create_task(watch())
        while counter.polls < 5:
            await asyncio.sleep(0.01)
        assert len(events) == 1, "no change, no new event"
        counter.value = 7
        await asyncio.wait_for(task, 60)
        return events

    events = _in_a_thread_of_its_own(run)
    assert events == [table_event({"changes": 0}), table_event({"changes": 7})]
    assert tables == [0, 7], "the table is read only when the counter moved"


def test_an_event_is_one_data_line_whatever_the_names_hold() -> None:
    event = table_event({"rows": [{"name": "a\nb</script>"}]})
    assert event.count("\n") == 3
    assert event.startswith("event: table\ndata: ")
