"""On a machine where the sandbox cannot run, `referee worker` and `referee serve -j N` refuse to start, in one
line saying why, rather than play students' bots unsandboxed; `referee serve -j 0` (no local workers) still serves.
The machine is made one without bubblewrap by a PATH that does not reach it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from processes import BOUND_S, REFEREE, LadderSite, make_ladder


def without_bwrap(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": str(REFEREE.parent)}
    return subprocess.run(
        [str(REFEREE), *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=BOUND_S
    )


def test_without_the_sandbox_a_worker_and_local_workers_refuse_to_start(tmp_path: Path) -> None:
    site: LadderSite = make_ladder(tmp_path)
    worker = without_bwrap("worker", "--server", "http://127.0.0.1:9", "--token", site.worker, cwd=tmp_path)
    served = without_bwrap("serve", str(site.folder), "--port", "9", "-j", "1", cwd=tmp_path)
    for refused in (worker, served):
        assert refused.returncode == 1, refused.stdout + refused.stderr
        [line] = refused.stderr.strip().splitlines()
        assert "cannot run the sandbox" in line and "bwrap" in line
        assert "Traceback" not in refused.stderr
    assert "-j 0" in served.stderr
