"""Lines for the end of the run: where the screenshots are, page sizes and load times (a module of its own, so
that test files import it by a name no other test folder's conftest shadows)."""

FIGURES: list[str] = []
