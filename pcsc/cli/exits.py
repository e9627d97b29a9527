"""The usage error: what every part of the command line may raise, kept apart so that
nothing else needs importing to use it (the exit codes are `pcsc.diagnostics.exits`)."""

from __future__ import annotations


class UsageError(Exception):
    """The command line asks for something that cannot be done (exit 2)."""
