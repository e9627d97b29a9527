"""The `pcsc` command line: one module per command (``pcsc.cli.commands``), a
``Context`` that owns settings, sessions and inputs, and one ``emit`` that turns a
command's ``Outcome`` into text, JSON or SARIF and an exit code.

The library never imports this package.
"""

from __future__ import annotations

from pcsc.cli.main import main

__all__ = ["main"]
