"""The optional extras (`pip install 'pcsc[NAME]'`): the one place that imports one and
says what to install when it is missing.

A feature that needs an extra calls `require` before it starts; a missing package is
`ExtraMissing`, which the command line reports as PCSC-E115 (exit 1) with the same
message for every extra. Nothing here imports the packages until it is asked to.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: extra -> (the package it installs, imported to check it, and its name for people)
EXTRAS: dict[str, tuple[str, str]] = {
    "report": ("jinja2", "Jinja2"),
    "plots": ("matplotlib", "matplotlib"),
    "lsp": ("pygls", "pygls"),
    "sign": ("cryptography", "cryptography"),
    "dask": ("distributed", "Dask (distributed)"),
    "postgres": ("psycopg", "psycopg 3"),
}


class ExtraMissing(Exception):
    """A feature needs an optional extra that is not installed."""

    def __init__(self, extra: str, feature: str) -> None:
        self.extra, self.feature = extra, feature
        package = EXTRAS[extra][1]
        super().__init__(f"{feature} needs {package}, which is not installed: pip install 'pcsc[{extra}]'")


def require(extra: str, feature: str) -> ModuleType:
    """The extra's package, imported; `ExtraMissing` naming the extra when it cannot be.
    ``feature`` says who needs it: `pcsc report`, `--plot`, `a postgresql:// ledger`."""
    try:
        return importlib.import_module(EXTRAS[extra][0])
    except ImportError:
        raise ExtraMissing(extra, feature) from None
