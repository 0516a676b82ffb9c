"""Bots written in Python with the SDK in `protocol.sdk`; each module runs as `python -m bots.python.NAME`."""
