"""Pseudonyms and the leaderboard's order, from their library calls: a pseudonym depends on the name and the
class secret alone (never the place or the classmates), chosen ones win, collisions are told apart; the
leaderboard orders by the figure it shows, ties by pseudonym."""

from __future__ import annotations

import re
from collections import defaultdict

from tournaments.classroom.grading import BotGrade, GradeReport
from tournaments.classroom.leaderboard import Figure, leaderboard
from tournaments.classroom.pseudonyms import class_pseudonyms, league_secret, pseudonym, pseudonym_beside
from tournaments.ratings.marks import BaselineResult, wilson

SECRET = b"a class secret"
CLASS = [f"student{index:03d}" for index in range(120)]


def test_a_pseudonym_is_words_from_the_name_and_the_secret() -> None:
    spelled = pseudonym("ann", SECRET)
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+ \d\d", spelled)
    assert pseudonym("ann", SECRET) == spelled and pseudonym("ann", SECRET.decode()) == spelled
    assert pseudonym("ann", b"another secret") != spelled
    assert len({pseudonym(name, SECRET) for name in CLASS}) > 110
    assert league_secret(b"deal key") != b"deal key" and league_secret(b"deal key") == league_secret(b"deal key")


def test_classmates_joining_leaving_or_moving_change_no_one_s_pseudonym() -> None:
    everyone = class_pseudonyms(CLASS, SECRET)
    assert len(set(everyone.values())) == len(CLASS)
    assert class_pseudonyms(list(reversed(CLASS)), SECRET) == everyone
    fewer = class_pseudonyms(CLASS[::2], SECRET)
    assert all(everyone[name] == spelled for name, spelled in fewer.items())
    assert all(everyone[name] == pseudonym(name, SECRET) for name in CLASS if "-" not in everyone[name])


def test_chosen_pseudonyms_win_and_collisions_are_told_apart() -> None:
    spelled: defaultdict[str, list[str]] = defaultdict(list)
    index = 0
    while not any(len(names) > 1 for names in spelled.values()):
        spelled[pseudonym(f"s{index}", SECRET)].append(f"s{index}")
        index += 1
    same = next(names for names in spelled.values() if len(names) > 1)
    names = class_pseudonyms([*same, "ann"], SECRET, {"ann": pseudonym(same[0], SECRET)})
    assert names["ann"] == pseudonym(same[0], SECRET)
    assert len(set(names.values())) == 3
    assert all(names[name].startswith(pseudonym(name, SECRET) + "-") for name in same)
    assert class_pseudonyms([same[0]], SECRET) == {same[0]: pseudonym(same[0], SECRET)}


def _grade(bot: str, random: tuple[int, float], elo: float = 0.0) -> BotGrade:
    games, share = random
    return BotGrade(
        place=None,
        bot=bot,
        baseline=False,
        elo=elo,
        elo_low=elo - 50,
        elo_high=elo + 50,
        games=games,
        mean_rank=1.5,
        mean_score=None,
        faults={},
        first_fault=None,
        decisions=0,
        mean_ms=0.0,
        max_ms=0.0,
        logs=(),
        against=(BaselineResult("random", games, share if games else None, 1.5),),
    )


def test_a_class_growing_one_student_at_a_time_keeps_earlier_pseudonyms_distinct() -> None:
    secret = b"ladder"
    first = pseudonym_beside("ann", secret, [])
    assert first == pseudonym("ann", secret)
    clash = pseudonym_beside("bob", secret, [pseudonym("bob", secret)])
    assert clash.startswith(pseudonym("bob", secret) + "-") and clash != pseudonym("bob", secret)
    assert pseudonym_beside("bob", secret, [first]) == pseudonym("bob", secret)


def test_the_leaderboard_orders_by_the_share_it_shows_ties_by_pseudonym() -> None:
    grades = [
        _grade("ann", (100, 0.6), elo=300),
        _grade("bo", (100, 0.8), elo=-100),
        _grade("cy", (100, 0.6), elo=0),
        _grade("di", (0, 0.0)),
    ]
    report = GradeReport("class", "scout", 300, 0, tuple(grades), ("random",))
    names = {"ann": "Zeta", "bo": "Beta", "cy": "Alpha", "di": "Delta"}
    board = leaderboard(report, names)
    assert board.figure is Figure.BASELINE_SHARE
    assert [(row.place, row.pseudonym) for row in board.rows] == [
        (1, "Beta"),
        (2, "Alpha"),
        (2, "Zeta"),
        (None, "Delta"),
    ]
    assert (board.row_of("bo").low, board.row_of("bo").high) == wilson(0.8, 100)
    by_elo = leaderboard(GradeReport("class", "scout", 300, 0, tuple(grades)), names)
    assert by_elo.figure is Figure.ELO
    assert [row.bot for row in by_elo.rows] == ["ann", "cy", "bo", "di"]
    assert (by_elo.rows[0].figure, by_elo.rows[0].low) == (300, 250)
