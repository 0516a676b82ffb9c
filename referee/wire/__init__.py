"""The wire: the match's ROUTER socket and what guards it.

The poll loop and the binding of connections to bots by token and by the process that connected
(connection.py), the cap on each bot's connections, the lookup of which process holds a socket (peers.py,
sock_diag.py) and the referee's own open-files limit.

May import: protocol, the standard library, and this room. Not isolation/, not the match machinery at the top of
referee/, nor tournaments.
"""
