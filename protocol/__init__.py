"""Protocol v1 between the referee and bots: limits, message codec and validation, and the Python bot SDK.

Shared by the referee and every Python bot; it imports nothing from `referee` or `tournaments`, so a bot may carry
a copy of protocol/ alone. protocol.errors is the root of every error the library raises.
"""
