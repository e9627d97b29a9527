"""The `pcsc` command line: one module per command (``pcsc.cli.commands``), a
``Context`` that owns settings, sessions and inputs, and one ``emit`` that turns a
command's ``Outcome`` into text, JSON or SARIF and an exit code.

The library never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcsc.cli.main import main

if TYPE_CHECKING:  # the helpers the not-yet-moved command modules import from here
    from pcsc.cli.legacy import (
        EXIT_INPUT as EXIT_INPUT,
    )
    from pcsc.cli.legacy import (
        EXIT_INTERNAL as EXIT_INTERNAL,
    )
    from pcsc.cli.legacy import (
        EXIT_OK as EXIT_OK,
    )
    from pcsc.cli.legacy import (
        EXIT_REFUSED as EXIT_REFUSED,
    )
    from pcsc.cli.legacy import (
        EXIT_USAGE as EXIT_USAGE,
    )
    from pcsc.cli.legacy import (
        UsageError as UsageError,
    )
    from pcsc.cli.legacy import (
        _load as _load,
    )
    from pcsc.cli.legacy import (
        _policy_arg as _policy_arg,
    )
    from pcsc.cli.legacy import (
        _policy_errors as _policy_errors,
    )
    from pcsc.cli.legacy import (
        _session as _session,
    )
    from pcsc.cli.legacy import (
        emit_diagnostics as emit_diagnostics,
    )
    from pcsc.cli.legacy import (
        print_json as print_json,
    )

__all__ = ["main"]


_LEGACY = {
    "EXIT_OK", "EXIT_INPUT", "EXIT_USAGE", "EXIT_REFUSED", "EXIT_INTERNAL", "UsageError", "print_json",
    "emit_diagnostics", "_load", "_session", "_policy_arg", "_policy_errors",
}


def __getattr__(name: str) -> Any:
    # Commands not yet moved into pcsc.cli.commands still import helpers from here.
    if name not in _LEGACY:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module("pcsc.cli.legacy"), name)
