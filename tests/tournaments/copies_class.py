"""A class like issue 30's, made on demand for the copies test (tests/tournaments/test_copies_class.py): 26
submissions, most started from `referee new-bot`, written into SUBMISSIONS by `make_class`.

- Python (20): two unchanged scaffolds made under the same name (identical folders), random variations of the
  scaffold, deterministic strategies of their own, a helper module, a README of its own, virtual environments
  holding the same installed package, one over stdio and one started by a shell script;
- two honest students who follow the tutorial's simple strategy (its code, one with a comment and a name changed);
- C (3): the scaffold, built as the docs say (`make -C`, a `bot` ELF and a `bot.o` in the folder; one with
  `build = "make"`), two with choices of their own;
- JS (3): the scaffold with node_modules installed (copied from bots/js, as `npm install` leaves it);
- two pairs of copies: bob is alice renamed and reformatted; dave keeps carol's code in `notes.log`, which his
  scaffold's bot.py executes, with ties broken the other way.

COPIES are the pairs that must be named; every other student is honest.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import tabulate

from tournaments.classroom.scaffold import Language, new_bot

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "tournaments" / "classroom" / "given" / "scout_tutorial.py"
COPIES = {("alice", "bob"), ("carol", "dave")}
_RANDOM_CHOOSE = re.compile(
    r"def choose\(observation: dict, legal_actions: list\[dict\]\) -> dict:.*?return random\.choice\(legal_actions\)\n",
    re.S,
)

RANDOM_SCOUTS = """
def choose(observation, legal_actions):
    scouts = [action for action in legal_actions if action["kind"] == "scout"]
    return random.choice(scouts or legal_actions)
"""

SHORTEST_SHOW = """
def choose(observation, legal_actions):
    shows = [a for a in legal_actions if a["kind"] == "show"]
    if shows:
        shortest = min(a["length"] for a in shows)
        return random.choice([a for a in shows if a["length"] == shortest])
    return random.choice(legal_actions)
"""

WEIGHTED = """
def choose(observation, legal_actions):
    weights = [3 if move["kind"] == "show" else 1 for move in legal_actions]
    return random.choices(legal_actions, weights=weights)[0]
"""

ORIENT_FLIP = """
def choose(observation, legal_actions):
    for action in legal_actions:
        if action["kind"] == "orient" and action["flip"]:
            return action
    return random.choice(legal_actions)
"""

GREEDY_HIGH = """
def value(observation, action):
    hand = observation["hand"]
    if action["kind"] == "show":
        cards = hand[action["start"] : action["start"] + action["length"]]
        return 100 * action["length"] + sum(card[0] for card in cards)
    if action["kind"] == "scout":
        return -action["insert"] - (5 if action["flip"] else 0)
    return 1 if action.get("flip") else 0


def choose(observation, legal_actions):
    return max(legal_actions, key=lambda action: value(observation, action))
"""

CAUTIOUS = """
def choose(observation, legal_actions):
    scouts = [a for a in legal_actions if a["kind"] == "scout" and not a["and_show"]]
    if scouts:
        middle = len(observation["hand"]) // 2
        return min(scouts, key=lambda a: (abs(a["insert"] - middle), a["end"] != "right", a["flip"]))
    shows = [a for a in legal_actions if a["kind"] == "show"]
    return shows[len(shows) // 2] if shows else legal_actions[-1]
"""

SEEDED = """
def choose(observation, legal_actions):
    return random.Random(repr(sorted(observation.items()))).choice(legal_actions)
"""

ALICE = '''
PREFERENCE = {"show": 2, "scout": 1, "orient": 0}


def spread(cards):
    """How far apart the numbers of a set are."""
    numbers = [card[0] for card in cards]
    return max(numbers) - min(numbers)


def score(observation, action):
    hand = observation["hand"]
    base = PREFERENCE[action["kind"]] * 50
    if action["kind"] == "show":
        cards = hand[action["start"] : action["start"] + action["length"]]
        return base + 7 * action["length"] - spread(cards) + action["start"]
    if action["kind"] == "scout":
        bonus = 9 if action["and_show"] else 0
        side = 3 if action["end"] == "left" else 0
        return base + bonus + side - abs(action["insert"] - 2) - (1 if action["flip"] else 0)
    return base + (1 if action["flip"] else 0)


def choose(observation, legal_actions):
    best = legal_actions[0]
    for action in legal_actions[1:]:
        if score(observation, action) > score(observation, best):
            best = action
    return best
'''

BOB = """
# Weights I tuned myself.
WEIGHT = {"show": 2, "scout": 1, "orient": 0}


def width(group):
    values = [c[0] for c in group]
    return max(values) - min(values)


def evaluate(obs, move):
    cards_in_hand = obs["hand"]
    total = WEIGHT[move["kind"]] * 50
    if move["kind"] == "show":
        chosen = cards_in_hand[move["start"] : move["start"] + move["length"]]
        return total + 7 * move["length"] - width(chosen) + move["start"]
    if move["kind"] == "scout":
        extra = 9 if move["and_show"] else 0
        end_bonus = 3 if move["end"] == "left" else 0
        return total + extra + end_bonus - abs(move["insert"] - 2) - (1 if move["flip"] else 0)
    return total + (1 if move["flip"] else 0)


def choose(obs, moves):
    top = moves[0]
    for move in moves[1:]:
        if evaluate(obs, move) > evaluate(obs, top):
            top = move
    return top
"""

CAROL = '''
SHOW_BASE = 10


def show_rank(observation, move):
    """Longer sets first; among them those that start at an even place."""
    hand = observation["hand"]
    top = max(card[0] for card in hand[move["start"] : move["start"] + move["length"]])
    return SHOW_BASE + move["length"] + (move["start"] % 2 == 0) + top / 100


def scout_rank(observation, move):
    side = 3 if move["end"] == "right" else 2
    return side + (move["insert"] % 3) / 10 + (0.05 if move["and_show"] else 0)


def rank(observation, move):
    if move["kind"] == "show":
        return show_rank(observation, move)
    if move["kind"] == "scout":
        return scout_rank(observation, move)
    return 0


def choose(observation, legal_actions):
    best = max(rank(observation, move) for move in legal_actions)
    ties = [move for move in legal_actions if rank(observation, move) == best]
    return ties[TIE]
'''

STDIO_BOT = '''
"""A SCOUT bot over the stdio transport: JSON lines, the standard library alone."""
import json
import random
import sys

print(json.dumps({"type": "hello", "protocol": 1, "name": "stdio-student"}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "request":
        legal = message["legal_actions"]
        shows = [action for action in legal if action["kind"] == "show"]
        action = random.choice(shows or legal)
        print(json.dumps({"type": "action", "id": message["id"], "action": action}), flush=True)
    elif message["type"] == "bye":
        break
'''

SHELL_PLAY = """
import json, sys, random

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

send({"type": "hello", "protocol": 1, "name": "shell-student"})
while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "bye":
        break
    if kind != "request":
        continue
    options = msg["legal_actions"]
    pick = options[random.randrange(len(options))]
    send({"type": "action", "id": msg["id"], "action": pick})
"""

README = """
# My SCOUT bot

I started from the scaffold and spent the week reading the rules. My idea is to keep the hand short: every card
left at the end of a round costs a point, so I show when I can and scout only when nothing I hold beats the set
on the table. I tried three versions and kept the one that beat random most often in my own small league, which
I ran with the tutorial's commands. Next I would like to count the cards already played.
"""


def python_student(folder: Path, choose: str, name: str | None = None) -> Path:
    new_bot(folder, Language.PYTHON, "scout", name=name)
    bot = folder / "bot.py"
    text = bot.read_text()
    assert _RANDOM_CHOOSE.search(text), "the scaffold's choose changed"
    bot.write_text(_RANDOM_CHOOSE.sub(lambda _: textwrap.dedent(choose).lstrip("\n"), text))
    return folder


def _c_student(folder: Path, choice: str | None, *, build_in_place: bool, objects: bool = False) -> None:
    new_bot(folder, Language.C, "scout")
    if choice is not None:
        source = folder / "bot.c"
        text = source.read_text()
        old = "return &legal->via.array.ptr[(uint32_t)rand() % legal->via.array.size];"
        assert old in text
        source.write_text(text.replace(old, choice))
    if build_in_place:
        subprocess.run(["make", "-s", "-C", str(folder)], check=True, capture_output=True)
        if objects:
            subprocess.run(["cc", "-c", "-o", str(folder / "bot.o"), str(folder / "bot.c"), *_c_flags()], check=True)
    else:
        (folder / "bot.toml").write_text('build = "make"\nlanguage = "c"\n')


def _c_flags() -> list[str]:
    found = subprocess.run(["pkg-config", "--cflags", "libzmq"], capture_output=True, text=True, check=True)
    return found.stdout.split()


def _js_student(folder: Path, choice: str | None) -> None:
    new_bot(folder, Language.JS, "scout")
    if choice is not None:
        source = folder / "bot.js"
        text = source.read_text()
        old = "return legalActions[Math.floor(Math.random() * legalActions.length)];"
        assert old in text
        source.write_text(text.replace(old, choice))
    _linked_copy(ROOT / "bots" / "js" / "node_modules", folder / "node_modules")


def _linked_copy(source: Path, target: Path) -> None:
    """`source` copied as hard links where the file system allows (node_modules is 40 MB), else copied."""
    try:
        shutil.copytree(source, target, copy_function=os.link)
    except OSError:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)


def _virtual_environment(folder: Path) -> None:
    """A virtual environment in the folder with one installed package (the same for every student)."""
    (folder / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11\n")
    packages = folder / "lib" / "python3.11" / "site-packages"
    packages.mkdir(parents=True)
    shutil.copy(tabulate.__file__, packages / "tabulate.py")


def make_class(submissions: Path) -> list[str]:
    """Write the class into `submissions` (made); its students' names."""
    submissions.mkdir(parents=True)
    make = {
        "plain_one": lambda f: new_bot(f, Language.PYTHON, "scout", name="mybot"),
        "plain_two": lambda f: new_bot(f, Language.PYTHON, "scout", name="mybot"),
        "plain_named": lambda f: new_bot(f, Language.PYTHON, "scout"),
        "scouter": lambda f: python_student(f, RANDOM_SCOUTS),
        "short_shows": lambda f: python_student(f, SHORTEST_SHOW),
        "weighted": lambda f: python_student(f, WEIGHTED),
        "flipper": lambda f: python_student(f, ORIENT_FLIP),
        "greedy_high": lambda f: python_student(f, GREEDY_HIGH),
        "cautious": lambda f: python_student(f, CAUTIOUS),
        "hashed": lambda f: python_student(f, SEEDED),
        "alice": lambda f: python_student(f, ALICE),
        "bob": lambda f: python_student(f, BOB),
        "carol": lambda f: python_student(f, CAROL.replace("TIE", "0")),
        "dave": _dave,
        "tutorial_one": lambda f: _tutorial(f, TUTORIAL.read_text()),
        "tutorial_two": lambda f: _tutorial(f, _tutorial_in_own_words()),
        "with_readme": _with_readme,
        "with_venv": _with_venv,
        "stdio": _stdio,
        "shell": _shell,
        "c_plain": lambda f: _c_student(f, None, build_in_place=True),
        "c_half": lambda f: _c_student(
            f,
            "return &legal->via.array.ptr[(uint32_t)rand() % ((legal->via.array.size + 1) / 2)];",
            build_in_place=True,
            objects=True,
        ),
        "c_built": lambda f: _c_student(
            f,
            "return &legal->via.array.ptr[legal->via.array.size / 2"
            " + (uint32_t)rand() % ((legal->via.array.size + 1) / 2)];",
            build_in_place=False,
        ),
        "js_plain": lambda f: _js_student(f, None),
        "js_half": lambda f: _js_student(
            f, "return legalActions[Math.floor(Math.random() * Math.ceil(legalActions.length / 2))];"
        ),
        "js_even": lambda f: _js_student(
            f, "return legalActions[2 * Math.floor(Math.random() * Math.ceil(legalActions.length / 2))];"
        ),
    }
    for name, write in make.items():
        write(submissions / name)
    return sorted(make)


def _dave(folder: Path) -> None:
    new_bot(folder, Language.PYTHON, "scout")
    (folder / "notes.log").write_text("import random\n" + CAROL.replace("TIE", "-1"))
    bot = folder / "bot.py"
    text = bot.read_text().replace(
        "from protocol.sdk import run_bot\n", "from protocol.sdk import run_bot\nimport pathlib\n"
    )
    loader = 'exec(pathlib.Path(__file__).with_name("notes.log").read_text())\n'
    bot.write_text(_RANDOM_CHOOSE.sub(lambda _: loader, text))


def _tutorial(folder: Path, text: str) -> None:
    new_bot(folder, Language.PYTHON, "scout")
    (folder / "bot.py").write_text(text)


def _tutorial_in_own_words() -> str:
    text = TUTORIAL.read_text().replace("legal_actions", "options").replace("mybot", "mine")
    return "# Following the tutorial, section 2.\n" + text


def _with_readme(folder: Path) -> None:
    python_student(folder, WEIGHTED.replace("3 if", "2 if"))
    (folder / "README.md").write_text(README)


def _with_venv(folder: Path) -> None:
    python_student(folder, SHORTEST_SHOW.replace("min(", "max("))
    _virtual_environment(folder / ".venv")


def _stdio(folder: Path) -> None:
    folder.mkdir()
    (folder / "stdio_bot.py").write_text(STDIO_BOT.lstrip())
    (folder / "bot.toml").write_text('command = "python3 stdio_bot.py"\ntransport = "stdio"\n')


def _shell(folder: Path) -> None:
    folder.mkdir()
    (folder / "play.py").write_text(SHELL_PLAY.lstrip())
    script = folder / "bot"
    script.write_text('#!/bin/sh\nexec python3 "$(dirname "$0")/play.py"\n')
    script.chmod(0o755)
    (folder / "bot.toml").write_text('transport = "stdio"\n')
    _virtual_environment(folder / "venv")
