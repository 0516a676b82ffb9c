"""Protocol v1 between the referee and bots: limits, message codec and validation, and the Python bot SDK.

Shared by the referee and every Python bot; it imports nothing from `referee` or `tournaments` but the errors'
root, `referee.errors`.
"""
