"""Locate the data folders (grammar/, policies/, obligations/).

In an installed wheel they live inside the package as ``pcsc/_data/<name>``; in a
checkout (or an editable install) they are the top-level folders of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``grammar``, ``policies`` or ``obligations``)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"pcsc data folder {name!r} not found (broken install?)")
