"""Ratings: what results say about bots. Bradley-Terry Elo with its prior, bootstrap intervals and anchors,
tallies of outcomes, results files from elsewhere, the SPRT statistic, whether a table is settled (groups) and
where the next games should go, the tables that print them, and students' results against baselines (marks).

Pure computation: may import referee.games (result shapes) and this room, nothing that plays, stores or
prints to a terminal.
"""
