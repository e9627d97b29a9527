"""Locate the data folders (grammar/, policies/, obligations/); how PCSC reads a text
file (`TEXT_ENCODING`) and shows a path (`display_path`).

In an installed wheel they live inside the package as ``pcsc/_data/<name>``; in a
checkout (or an editable install) they are the top-level folders of the repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # pcsc/, this module being pcsc/base/resources.py
#: How PCSC decodes the files it reads: UTF-8, a leading byte order mark (some editors
#: write one) dropped, so line 1, column 1 is the first character after it.
TEXT_ENCODING = "utf-8-sig"
BOM = "\ufeff"


@cache
def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``grammar``, ``policies`` or ``obligations``)."""
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    checkout = _PACKAGE.parent / name
    # Only a source checkout (pyproject.toml beside the package) may supply the
    # folders; never whatever `grammar/` happens to sit in site-packages.
    if checkout.is_dir() and (_PACKAGE.parent / "pyproject.toml").is_file():
        return checkout
    raise FileNotFoundError(f"pcsc data folder {name!r} not found (broken install?)")


#: The folder paths are shown from, when it is not this process's working folder: a
#: worker's job shows paths as the command that sent it would (`shown_from`).
_SHOWN_FROM: ContextVar[Path | None] = ContextVar("shown_from", default=None)


def display_path(path: Path) -> str:
    """A path as users should see it: relative to the working folder when inside it."""
    base = _SHOWN_FROM.get() or Path.cwd()
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


@contextmanager
def shown_from(folder: Path | None) -> Iterator[None]:
    """Within the block (in this thread), `display_path` shows paths relative to
    ``folder`` instead of the working folder; ``None`` changes nothing."""
    token = _SHOWN_FROM.set(folder)
    try:
        yield
    finally:
        _SHOWN_FROM.reset(token)
