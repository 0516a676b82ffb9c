"""Leagues: schedules, executors, the result store, ratings and the `referee` command line."""
