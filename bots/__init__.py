"""Example bots. Each is a program that only ever talks the protocol (see protocol/PROTOCOL.md)."""
