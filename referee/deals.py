"""Deal seeds: each deal of a match or league is dealt from a keyed hash of its number, so that nothing a bot
can see or guess (ids, a small league seed, its own hand) tells it the deal.

    key = DealKey.fresh()              # a secret from `secrets`: keep it where no bot can read it
    key = DealKey.from_seed(7)         # public: anyone who knows 7 can deal every game (tests, `play --seed`)
    seed = key.deal_seed(3)            # the seed the engine deals deal number 3 from
    seed = key.deal_seed(3, "m-1")     # deal number 3 of match m-1: each match of a league has deals of its own

A deal seed is HMAC-SHA256(key, "deal:<number>"), or HMAC-SHA256(key, "deal:<match id>:<number>") for a
match's own deals, cut to the engine's seed range. A league keeps its key in its store
(tournaments.league.store) and deals each match its own deals: a bot that kept a note of a deal past its
process (through a channel the sandbox missed) finds it of no use in any other match. `referee play` draws a
key per run unless given `--seed`. Replays record the deal seeds themselves, which is all a verification needs.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from referee.games.base import MAX_SEED

KEY_BYTES = 32
_PUBLIC_PREFIX = b"card-referee public deal seed:"


@dataclass(frozen=True)
class DealKey:
    secret: bytes = field(repr=False)
    public: bool = False
    """True for a key made from a seed: its deals are as public as the seed."""

    @classmethod
    def fresh(cls) -> DealKey:
        """A new secret key from the operating system's secure source."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def from_seed(cls, seed: int) -> DealKey:
        """The public key of `seed`: reproducible, and known to anyone who knows (or guesses) the seed."""
        return cls(_PUBLIC_PREFIX + str(seed).encode(), public=True)

    def deal_seed(self, deal: int, match_id: str | None = None) -> int:
        """The engine seed of deal number `deal`, of the match `match_id` if given (stable across machines and
        versions of Python)."""
        message = f"deal:{deal}" if match_id is None else f"deal:{match_id}:{deal}"
        digest = hmac.new(self.secret, message.encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big") & MAX_SEED

    def deal_seeds(self, deals: int, match_id: str | None = None) -> tuple[int, ...]:
        """The seeds of deals 0 to `deals` - 1 (of the match `match_id` if given)."""
        return tuple(self.deal_seed(deal, match_id) for deal in range(deals))
