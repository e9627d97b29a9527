"""The optional extras (`pcsc[NAME]` in pyproject.toml): the one place that imports one
and says what to install when it is missing: the extra's own requirement, which pip
installs whatever way PCSC itself was installed (PCSC is on no package index).

A feature that needs an extra calls `require` before it starts; a missing package is
`ExtraMissing`, which the command line reports as PCSC-E115 (exit 1) with the same
message for every extra. Nothing here imports the packages until it is asked to.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: extra -> (the module it installs, imported to check it; its name for people; the
#: extra's requirement, as pyproject.toml declares it: a test keeps them equal)
EXTRAS: dict[str, tuple[str, str, str]] = {
    "report": ("jinja2", "Jinja2", "jinja2>=3.1"),
    "plots": ("matplotlib", "matplotlib", "matplotlib>=3.7"),
    "lsp": ("pygls", "pygls", "pygls>=2"),
    "sign": ("cryptography", "cryptography", "cryptography>=42"),
    "dask": ("distributed", "Dask (distributed)", "dask[distributed]>=2024.1"),
    "postgres": ("psycopg", "psycopg 3", "psycopg[binary]>=3.1"),
}


class ExtraMissing(Exception):
    """A feature needs an optional extra that is not installed."""

    def __init__(self, extra: str, feature: str) -> None:
        self.extra, self.feature = extra, feature
        _, package, requirement = EXTRAS[extra]
        super().__init__(f"{feature} needs {package}, which is not installed: "
                         f"python3 -m pip install '{requirement}' (the extra pcsc[{extra}])")


def require(extra: str, feature: str) -> ModuleType:
    """The extra's package, imported; `ExtraMissing` naming the extra when it cannot be.
    ``feature`` says who needs it: `pcsc report`, `--plot`, `a postgresql:// ledger`."""
    try:
        return importlib.import_module(EXTRAS[extra][0])
    except ImportError:
        raise ExtraMissing(extra, feature) from None
