"""Policy files checked before anything plays: a `policy:FILE` bot whose file it could not play at the table is
refused with one line naming the bot and what to do, instead of a fault in every one of its games.

The check lives here, at the command line, because reading a network needs bots/ and referee.games.rl, which
the league room (tournaments.league) may not import; `referee league run` and `referee check-bot` call it.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots.python.policy_bot import check_policy_bots, check_policy_counts
from referee.botspec import POLICY_PREFIX, resolve_bot

from ..league.league_file import League


def check_league_policies(league: League) -> None:
    """PolicyFileError (a BadInput: `bot 'NAME': FILE: what is wrong; what to do`) for the first bot of `league`
    whose policy file is missing, no policy, or made for another game, table, options or network shape. Bots
    built from a submission are left to their build, which may write the file."""
    bots = [
        (bot.name, bot.spec.command) for bot in league.bots if bot.submission is None or bot.submission.build is None
    ]
    check_policy_bots(bots, league.game, league.players, dict(league.config))


def check_bot_policy(game: str, bot: str, players: Sequence[int]) -> None:
    """For `referee check-bot GAME policy:FILE`: PolicyFileError, before any game, if the file could not be
    played at one of the checked player counts (saying to give --players when it learned another)."""
    if bot.startswith(POLICY_PREFIX):
        spec = resolve_bot(bot, game)
        check_policy_counts(spec.name, spec.command, game, players, "--players")
