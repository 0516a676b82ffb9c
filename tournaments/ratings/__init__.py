"""Ratings: what results say about bots. Bradley-Terry Elo with its prior and bootstrap intervals, tallies of
outcomes, results files from elsewhere, the SPRT statistic, and the tables that print them.

Pure computation: may import referee.games (result shapes) and this room, nothing that plays, stores or
prints to a terminal.
"""
