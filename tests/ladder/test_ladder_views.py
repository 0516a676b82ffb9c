"""What a student may see of others: a replay they sat in names the other seats as the table does (pseudonyms,
baselines by name; staff see names), and an item that is not theirs answers exactly as one that does not exist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ladder_helpers import Made, bot_folder, claim_match, pass_checks, played, students, worker

from tournaments.ladder import Forbidden, Job, JobResult, Principal, Role

SECRET_OUTPUT = "bob's private stack trace"


def realistic(job: Job, victim: str, thief: str) -> JobResult:
    """The job played, each game with a replay as the referee writes one: seats named by entrant (a version's id
    or a baseline's name), a command and a log link per seat, a fault whose output is bot `victim`'s own and a
    stolen token of `victim`'s presented by `thief`."""
    result = played(job)
    for game in result.data["games"]:
        seats = game["seats"]
        game["replay"] = {
            "game": "scout",
            "seats": [
                {"seat": seat, "bot": name, "command": ["python3", f"/w/builds/{name}/bot.py"], "log": f"{name}.log"}
                for seat, name in enumerate(seats)
            ],
            "faults": [
                {
                    "seat": seats.index(victim),
                    "bot": victim,
                    "kind": "crash",
                    "cause": "exited",
                    "facts": {"exit_status": 1, "output": [SECRET_OUTPUT]},
                    "detail": f"exited; its last output:\n| {SECRET_OUTPUT}",
                },
                {
                    "seat": seats.index(thief),
                    "bot": thief,
                    "kind": "protocol",
                    "cause": "stolen-token",
                    "facts": {"victim": victim},
                    "detail": f"presented another bot's token (that of {victim}) in a hello",
                },
            ],
        }
    return result


def shared_game(made: Made, ann: str, bob: str) -> str:
    """The id of a stored game where the versions `ann` and `bob` both sat (matches without both are played)."""
    for _ in range(30):
        job = claim_match(made)
        names = {entrant["name"] for entrant in job.payload["entrants"]}
        if {ann, bob} <= names:
            made.ladder.report(worker(made), job.id, realistic(job, victim=bob, thief=ann))
            return f"{job.id}:{job.payload['games'][0]['index']}"
        made.ladder.report(worker(made), job.id, played(job))
    raise AssertionError("no match seated both students in 30 jobs")


def hidden_answer(call: Any) -> str:
    with pytest.raises(Forbidden) as raised:
        call()
    return str(raised.value)


def test_a_replay_names_other_seats_as_the_table_does_and_keeps_their_output(made: Made, tmp_path: Path) -> None:
    people = students(made, "ann", "bob")
    ann_v = made.ladder.submit(people["ann"], bot_folder(tmp_path, "a", 0))
    bob_v = made.ladder.submit(people["bob"], bot_folder(tmp_path, "b", 1))
    pass_checks(made)
    game = shared_game(made, ann_v.id, bob_v.id)
    staff = made.ladder.authenticate(made.created.admin_token)
    pseudonyms = {row.name: row.pseudonym for row in made.ladder.roster(staff)}

    seen = made.ladder.replay(people["ann"], game)
    text = json.dumps(seen)
    shown = {seat["bot"] for seat in seen["seats"]}
    assert {"ann", pseudonyms["bob"]} <= shown and shown - {"ann", pseudonyms["bob"]} <= {"heuristic", "random"}
    assert bob_v.id not in text and ann_v.id not in json.dumps(seen["faults"])
    assert '"bob"' not in text and SECRET_OUTPUT not in text, "another seat's name and output stay hidden"
    theirs = next(seat for seat in seen["seats"] if seat["bot"] == pseudonyms["bob"])
    assert theirs["command"] == [] and theirs["log"] is None
    stolen = next(fault for fault in seen["faults"] if fault["cause"] == "stolen-token")
    assert pseudonyms["bob"] in stolen["detail"] and stolen["bot"] == "ann"

    as_bob = made.ladder.replay(people["bob"], game)
    assert SECRET_OUTPUT in json.dumps(as_bob), "a student sees their own bot's output"
    assert pseudonyms["ann"] in {seat["bot"] for seat in as_bob["seats"]}

    as_staff = made.ladder.replay(staff, game)
    assert {"ann", "bob"} <= {seat["bot"] for seat in as_staff["seats"]}
    assert SECRET_OUTPUT in json.dumps(as_staff)


def test_another_students_item_answers_as_a_missing_one(made: Made, tmp_path: Path) -> None:
    people = students(made, "ann", "bob", "cat")
    ann_v = made.ladder.submit(people["ann"], bot_folder(tmp_path, "a", 0))
    bob_v = made.ladder.submit(people["bob"], bot_folder(tmp_path, "b", 1))
    pass_checks(made)
    game = shared_game(made, ann_v.id, bob_v.id)
    ann_seat = next(g.my_seat for g in made.ladder.student_games(people["ann"], "ann") if g.id == game)
    assert ann_seat is not None
    bob, cat = people["bob"], people["cat"]

    missing_version = hidden_answer(lambda: made.ladder.version(bob, "v" + "0" * 15))
    assert hidden_answer(lambda: made.ladder.version(bob, ann_v.id)) == missing_version
    assert ann_v.id not in missing_version
    missing_log = hidden_answer(lambda: made.ladder.game_log(bob, "nogame:0", 0))
    assert hidden_answer(lambda: made.ladder.game_log(bob, game, ann_seat)) == missing_log
    assert hidden_answer(lambda: made.ladder.game_log(bob, game, 99)) == missing_log
    missing_replay = hidden_answer(lambda: made.ladder.replay(cat, "nogame:0"))
    assert hidden_answer(lambda: made.ladder.replay(cat, game)) == missing_replay
    assert hidden_answer(lambda: made.ladder.replay(Principal(Role.WORKER, "workers"), game)) == missing_replay
    assert made.ladder.version(people["ann"], ann_v.id).version.id == ann_v.id
    assert isinstance(made.ladder.game_log(people["ann"], game, ann_seat), bytes)
