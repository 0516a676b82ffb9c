"""Isolation: everything between a bot's command line and its running processes.

The sandbox (bubblewrap, its flags in sandbox.py), the host uid leased to each bot, its cgroup, its seccomp
filter and rlimits, the containment of an unsandboxed bot, the subprocess that runs it and the process table
that finds and kills what it left. Nothing else in the project builds namespaces or sets limits itself.

May import: protocol (the limits), the standard library, and this room. Not the match machinery at the top of
referee/, nor wire/, nor tournaments.
"""
