"""Folder walks that stay inside their folder.

A folder given on the command line stands for the files under it with some suffixes
(`*.route`, `*.obl`, policy test files), recursively, in sorted order. The walk never
leaves the folder: a linked folder is not entered (its files, when it links inside,
are reached by their own path), and a linked file is read only when it resolves
inside the folder; one that leads out of it is refused with PCSC-E408 and not read
(so no diagnostic can show a line of a file the folder only points at). A file named
on the command line is read as named, link or not: that is the user's choice.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pcsc.diagnostics.messages import E408_LINK_OUT_OF_FOLDER, diag
from pcsc.diagnostics.model import Diagnostic, Span


def folder_files(folder: Path, suffixes: Sequence[str]) -> tuple[list[Path], list[Diagnostic]]:
    """The files under ``folder`` whose names end with one of ``suffixes`` (sorted), and
    an error for each such file that is a link leading out of the folder."""
    root = _real(folder)
    found: list[Path] = []
    refused: list[Diagnostic] = []
    for here, _, names in os.walk(folder):  # os.walk does not enter linked folders
        for name in names:
            if not name.endswith(tuple(suffixes)):
                continue
            path = Path(here) / name
            if path.is_symlink():
                real = _real(path)
                if not real.is_relative_to(root):
                    refused.append(outside(path, real, folder))
                    continue
            found.append(path)
    found.sort()
    return found, sorted(refused, key=lambda d: d.span.file)


def _real(path: Path) -> Path:
    """Where ``path`` leads (`Path.resolve` raises on a loop of links; this does not)."""
    return Path(os.path.realpath(path))


def outside(path: Path, real: Path, folder: Path) -> Diagnostic:
    """The error for a link in ``folder`` that leads to ``real``, outside it."""
    return diag(E408_LINK_OUT_OF_FOLDER, Span.file_only(str(path)), path=path, real=real, folder=folder)
