"""Leagues: schedules, executors, the result store, ratings and the `referee` command line.

Rooms, each importing only the ones before it (and referee, protocol):
- league/      league files, schedules, the store, executors, bot identities
- ratings/     Elo fits, intervals, anchors, SPRT, tallies, settled tables and groups, allocation, tables
- at the top:  league_run (a whole run: plan, build, play, settle), league_report (a store's results), export,
               sprt_match, settle (what combines the two), rundir (run folders)
- classroom/   check-bot, grading, autograder formats, scaffolds
- pages/       the HTML pages (replays, reports)
- bench/       the benchmarks
- cli/         the command line, over all of the above
"""
