"""Aligned plain-text tables: the one renderer every text view uses."""

from __future__ import annotations

from collections.abc import Container, Sequence

from pcsc.base.escape import escape_controls


def table(rows: Sequence[Sequence[str]], left: Container[int] = (0,), indent: str = "  ") -> list[str]:
    """Aligned columns: the ``left`` columns flush left, the others flush right; control
    characters in a cell are escaped first, so the columns line up as printed."""
    rows = [[escape_controls(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        pairs = enumerate(zip(row, widths, strict=True))
        cells = [cell.ljust(w) if i in left else cell.rjust(w) for i, (cell, w) in pairs]
        out.append(indent + "  ".join(cells).rstrip())
    return out


class _All:
    def __contains__(self, _: object) -> bool:
        return True


ALL: Container[int] = _All()


def all_but(columns: Container[int], width: int) -> list[int]:
    """The column indices of a ``width``-column table that are not in ``columns``."""
    return [i for i in range(width) if i not in columns]
