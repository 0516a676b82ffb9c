"""Pseudonyms a class's published pages show instead of the students' names: stable, and not from the place.

    pseudonym("ann", secret)                          -> "Amber Heron 17"
    class_pseudonyms(names, secret, chosen)           -> {name: pseudonym} for a whole class

A pseudonym is a keyed hash (HMAC-SHA256) of the student's name under a class secret, spelled as an adjective,
an animal and a number (64 x 64 x 100 = 409,600 of them). It depends on that name and that secret alone: a
classmate who resubmits, joins or leaves, or a place that moves, changes no one's pseudonym, and without the
secret nobody can find a pseudonym's student by hashing the class list. The secret is the league store's own
(the key its deals are drawn from: `league_secret`), so a league keeps its pseudonyms as long as its store; a
roster or the league file's [pseudonyms] names a student's pseudonym outright (`chosen`), and those win.

Two students of a class whose hashes spell the same pseudonym (about 1 in 80 for a class of 100) are told apart
by the next digits of their hashes: only those two change, and only when the second of them arrives.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from collections.abc import Iterable, Mapping

from ..league.store import LeagueStore

ADJECTIVES = (
    "Amber", "Ashen", "Azure", "Bold", "Brave", "Bright", "Brisk", "Calm", "Clever", "Copper", "Coral", "Crimson",
    "Daring", "Dusky", "Eager", "Early", "Fleet", "Gentle", "Gilded", "Glad", "Golden", "Grand", "Green", "Grey",
    "Hardy", "Hazel", "Honest", "Indigo", "Ivory", "Jade", "Jolly", "Keen", "Kind", "Lively", "Lucky", "Lunar",
    "Merry", "Misty", "Noble", "Olive", "Pale", "Plucky", "Proud", "Quick", "Quiet", "Rapid", "Rosy", "Ruby",
    "Rusty", "Sable", "Scarlet", "Silent", "Silver", "Sly", "Smooth", "Snowy", "Solar", "Steady", "Stout", "Swift",
    "Tawny", "Teal", "Velvet", "Wise",
)  # fmt: skip
ANIMALS = (
    "Badger", "Bear", "Beaver", "Bison", "Crane", "Crow", "Deer", "Dolphin", "Eagle", "Falcon", "Ferret", "Finch",
    "Fox", "Gecko", "Goose", "Hare", "Hawk", "Heron", "Ibis", "Jackal", "Jay", "Koala", "Lark", "Lemur", "Lion",
    "Lynx", "Magpie", "Marten", "Mole", "Moose", "Newt", "Otter", "Owl", "Panda", "Panther", "Pelican", "Puffin",
    "Quail", "Rabbit", "Raven", "Robin", "Salmon", "Seal", "Shrike", "Skylark", "Sparrow", "Squirrel", "Stag",
    "Stork", "Swan", "Gull", "Tapir", "Tern", "Tiger", "Toucan", "Trout", "Turtle", "Viper", "Vole", "Walrus",
    "Weasel", "Whale", "Wolf", "Wren",
)  # fmt: skip
NUMBERS = 100
SECRET_LABEL = b"card-referee pseudonyms"


def _digest(name: str, secret: bytes | str) -> bytes:
    key = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(key, name.encode(), hashlib.sha256).digest()


def pseudonym(name: str, secret: bytes | str) -> str:
    """The pseudonym of `name` under `secret` (the same whoever else is in the class)."""
    digest = _digest(name, secret)
    number = int.from_bytes(digest[2:4], "big") % NUMBERS
    return f"{ADJECTIVES[digest[0] % len(ADJECTIVES)]} {ANIMALS[digest[1] % len(ANIMALS)]} {number:02d}"


def class_pseudonyms(
    names: Iterable[str], secret: bytes | str, chosen: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each of `names` -> its pseudonym: the chosen one if `chosen` names one, else `pseudonym(name, secret)`,
    distinct across the class (a hashed one that meets another pseudonym takes its hash's next digits)."""
    chosen = chosen or {}
    names = list(dict.fromkeys(names))
    given = {name: chosen[name] for name in names if chosen.get(name)}
    hashed = {name: pseudonym(name, secret) for name in names if name not in given}
    counts = Counter([*given.values(), *hashed.values()])
    taken = set(given.values())
    for name, spelled in sorted(hashed.items()):
        if counts[spelled] > 1 or spelled in taken:
            hashed[name] = _longer(name, secret)
    return {name: given.get(name) or hashed[name] for name in names}


def pseudonym_beside(name: str, secret: bytes | str, taken: Iterable[str]) -> str:
    """`pseudonym(name, secret)`, or its longer spelling where a classmate already holds it: for a class that grows
    one student at a time (the ladder), whose earlier pseudonyms never change."""
    spelled = pseudonym(name, secret)
    return _longer(name, secret) if spelled in set(taken) else spelled


def _longer(name: str, secret: bytes | str) -> str:
    return f"{pseudonym(name, secret)}-{_digest(name, secret)[4:7].hex()}"


def league_pseudonyms(
    store: LeagueStore, names: Iterable[str], chosen: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`class_pseudonyms` under the league's secret (`league_secret` of its store's deal key)."""
    return class_pseudonyms(names, league_secret(store.deal_key().secret), chosen)


def league_secret(deal_secret: bytes) -> bytes:
    """The class secret derived from a league store's deal key (LeagueStore.deal_key().secret): a key of its own,
    so a published pseudonym tells nothing of the deals."""
    return hmac.new(deal_secret, SECRET_LABEL, hashlib.sha256).digest()
