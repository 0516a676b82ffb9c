"""The ladder's web server: a thin layer that parses requests, asks the ladder library (tournaments.ladder) and
presents what it answers, as JSON, pages and server-sent events; and the hardened unpacking of uploads.

May import: the ladder library, the pages (replays), classroom, league, ratings and everything below them.
Nothing imports this room but the command line (tournaments/cli) and the ladder's benchmark (its HTTP client).
"""
