"""The human seat: a person plays one seat of a match from a terminal, through the protocol like any bot.

    referee play scout human heuristic random

`referee play` starts `python -m bots.python.human --tty TERMINAL` for the seat, TERMINAL being the one it was
run in. Like every bot it runs in its own session with stdin closed and its output in its log; it talks to the
person through the terminal device it opens by path, so it never needs to be the terminal's foreground
process: Ctrl-C goes to `referee play`, which stops the match (and this program with it). The referee gives
the seat no clock (BotSpec.timed).

Each request shows the seat's hand, the table in public view and the legal moves, numbered; the person types
a number. The views of the games (scout_view, scauver_view) only turn observations and actions into lines of
text; any other game is shown as its raw observation and actions.
"""
