"""Every page of a class's pages (`referee tournament report LEAGUE --format pages -o DIR`) at a phone's 390 px
in headless Chromium (Debian's, driven by Playwright), with the checks of tests/pages/test_class_pages.py: nothing
reaches past the screen or is cut off by its box, every table cell is labelled with its column, and each student's
folder names no classmate and links nowhere outside itself. Run from the worktree:

    .venv/bin/python tests/pages/check_class_pages.py DIR

It prints the number of pages checked and every problem found (none: `problems: none`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browsing import CHROMIUM, CHROMIUM_ARGS, PHONE  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402
from test_class_pages import CUT_OFF, LINKS, UNLABELLED, _stays_inside  # noqa: E402


def problems_of(page: Page, pages: Path, which: str, students: list[str]) -> list[str]:
    page.goto((pages / which).resolve().as_uri())
    page.wait_for_function("document.documentElement.dataset.ready === '1'")
    found = [f"{which}: cut off: {node}" for node in page.evaluate(CUT_OFF)]
    found += [f"{which}: a cell without its column: {cell}" for cell in page.evaluate(UNLABELLED)]
    if which.startswith("students/"):
        student = which.split("/")[1]
        html = page.evaluate("document.documentElement.outerHTML")
        found += [
            f"{which}: names {other}"
            for other in students
            if other != student and re.search(rf"\b{re.escape(other)}\b", html)
        ]
        folder = (pages / which).parent
        found += [
            f"{which}: links outside its folder: {link}"
            for link in page.evaluate(LINKS)
            if link and not _stays_inside(folder, pages / which, unquote(link))
        ]
    return found


def main(pages: Path) -> None:
    students = sorted(path.name for path in (pages / "students").iterdir())
    every = ["leaderboard.html", "teacher.html", *(f"students/{student}/index.html" for student in students)]
    found: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        page = browser.new_context(viewport=PHONE, is_mobile=True).new_page()
        for which in every:
            found += problems_of(page, pages, which, students)
        browser.close()
    print(f"{len(every)} pages at {PHONE['width']} px; problems: {'; '.join(found) or 'none'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
