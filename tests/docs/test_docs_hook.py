"""The docs' hook (docs/hooks/generated.py) without mkdocs: a page that includes a file elsewhere in the tree
links into the site where the site has the target and names the repository file where it has not; an
unknown marker stops the build rather than ship a page with it."""

from __future__ import annotations

import importlib.util
import posixpath
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hook_generated", ROOT / "docs" / "hooks" / "generated.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_included_file_links_into_the_site(hook: ModuleType) -> None:
    page = hook.expand("<!-- include: protocol/PROTOCOL.md -->\n", "reference/protocol.md")
    assert "](rules-scout.md#actions)" in page
    assert "`protocol/limits.py`" in page
    files = [target.split("#")[0] for target in re.findall(r"\]\(([^)#:]+(?:#[^)]*)?)\)", page)]
    assert files
    for file in files:
        assert posixpath.normpath(posixpath.join("reference", file)) in hook.INCLUDED.values(), file


def test_every_file_the_site_includes_has_its_page(hook: ModuleType) -> None:
    for source, page in hook.INCLUDED.items():
        assert f"<!-- include: {source} -->" in (ROOT / "docs" / page).read_text(), page


def test_an_unknown_marker_stops_the_build(hook: ModuleType) -> None:
    with pytest.raises(ValueError, match="no generated table 'league-file-keyz'"):
        hook.expand("<!-- generated: league-file-keyz -->\n", "reference/league-file.md")


def test_the_fault_reference_tells_a_hang_from_a_slow_bot(hook: ModuleType) -> None:
    """The faults page's table of causes is made from referee.records.FaultCause, so a cause added there (a bot
    that never answers, beside one that answers late) is documented with its meaning without editing the page."""
    page = hook.expand((ROOT / "docs" / "reference" / "faults.md").read_text(), "reference/faults.md")
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| `")}
    assert "a bot that hangs" in rows["`no-answer`"] and "`timeout`" in rows["`no-answer`"]
    assert "after the decision's time was up" in rows["`late-answer`"]
