"""The ladder end to end on loopback, with real processes: `referee ladder init` + `invite` + `serve`, students
submitting through `referee submit` and the web form (Playwright driving Debian's chromium), workers joining,
and a server and a worker killed mid-match."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import BOUND_S, LadderSite, get_json, make_ladder, status_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "class"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LadderSite]:
    made = make_ladder(tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_init_invite_serve_answers_health(site: LadderSite) -> None:
    seconds = site.serve(jobs=0)
    assert seconds < BOUND_S
    assert get_json(f"{site.url}/api/health")["status"] == "ok"
    assert status_of(f"{site.url}/api/students/ann/versions", site.students["bob"]) == 403
    assert status_of(f"{site.url}/api/students/ann/versions", "crl_forged_token") == 401
    print(f"/api/health answered {seconds:.1f} s after `referee serve` started")
