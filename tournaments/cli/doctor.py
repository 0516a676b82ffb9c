"""`referee doctor`: what isolation this machine gives bots, and why any part of the sandbox is missing."""

from __future__ import annotations

import click

from referee.isolation import gvisor
from referee.isolation import sandbox as sandboxing

from .options import echo_json, json_option
from .output import echo


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Report what isolation bots get on this machine: bubblewrap, the sandbox's namespaces, a uid of each
    bot's own, limits for a bot as a whole (cgroup v2, cgroup v1, or per-process rlimits only) and its CPUs,
    each with the reason when it is missing (bwrap not installed, user namespaces off, not root, cgroups not
    writable...), and whether the kernel level (a gVisor kernel per bot, `--kernel`) runs: runsc's version and
    platform, or why not.

    Exit status 0 when the full sandbox works, 1 otherwise (bots then run with less isolation, or unsandboxed:
    the games are recorded so, and the league table says how many), with what would give the missing parts:
    most laptops lack only what takes root (a uid per bot, cgroup limits), which is fine for trying your own
    bots; grade other people's code where `referee doctor` exits 0.
    """
    found = sandboxing.probe()
    checks = sandboxing.report(found)
    full = found.isolation is sandboxing.Isolation.FULL
    kernel = gvisor.probe()
    kernel_check = gvisor.report(kernel)
    checks = [*checks, kernel_check]
    if as_json:
        echo_json(
            {
                "isolation": found.isolation.value,
                "full": full,
                "whole_bot_limits": found.whole_bot_limits if found.usable else None,
                "checks": [
                    {"name": check.name, "ok": check.ok, "required": check.required, "detail": check.detail}
                    for check in checks
                ],
                "to_get_more": sandboxing.how_to_get_more(checks),
                "kernel": {
                    "ok": kernel.usable,
                    "runsc": kernel.runsc,
                    "version": kernel.version,
                    "platform": gvisor.PLATFORM,
                    "detail": kernel_check.detail,
                },
            }
        )
    else:
        for check in checks:
            mark = "ok" if check.ok else ("MISSING" if check.required else "absent")
            echo(f"{mark:<8} {check.name}: {check.detail}")
        echo(f"isolation: {found.isolation.value}")
        advice = sandboxing.how_to_get_more(checks)
        if advice:
            echo("to get the full sandbox:")
            echo("\n".join(f"  {line}" for line in advice))
        if not kernel.usable:
            echo(f"to get a kernel per bot (--kernel): {gvisor.INSTALL}")
        if not full:
            echo(
                "without it bots run with less isolation (fine for your own bots; grade other people's code on a "
                "machine where `referee doctor` exits 0)"
            )
    if not full:
        raise SystemExit(1)
