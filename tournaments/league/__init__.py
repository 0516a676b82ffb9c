"""Leagues: a league file, its schedule, the result store, the executors that play its matches, and the bots'
identities (program digests, submission folders).

May import: referee (one match: MatchSpec in, records out), protocol, and this room. Not ratings/, classroom/,
pages/, bench/ or cli/: results leave this room as stored rows and tallies, and are rated elsewhere.
"""
