"""Exit codes and the usage error: what every part of the command line may raise or
return, kept apart so that nothing else needs importing to use them."""

from __future__ import annotations

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_REFUSED = 0, 1, 2, 3
EXIT_INTERNAL = 70  # a bug in pcsc (EX_SOFTWARE); never caused by input


class UsageError(Exception):
    """The command line asks for something that cannot be done (exit 2)."""
