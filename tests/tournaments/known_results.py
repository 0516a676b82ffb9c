"""Two-seat results of four bots with a known maximum-likelihood Elo (A 137.18, B 22.79, C -39.44, D -120.52),
shared by the rating tests and the `tournament rate` tests so that both check the same answer."""

KNOWN_RESULTS: dict[tuple[str, str], tuple[int, int, int]] = {
    ("A", "B"): (7, 2, 3),
    ("A", "C"): (8, 1, 3),
    ("A", "D"): (9, 2, 1),
    ("B", "C"): (6, 2, 4),
    ("B", "D"): (7, 3, 2),
    ("C", "D"): (5, 4, 3),
}
"""(first, second) -> (wins, draws, losses) of first against second."""
