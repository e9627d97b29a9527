"""The shipped table of proven deletion identities (proven.json beside this module).

A proof of the deletion identity depends only on its shape: the fold ("chain", the
paper's; "discounted"; "abandonment", the option to stop), the number n of transitions
and the deleted seam k. So a shape proved once is proved for every route, and the table
keeps, per shape, that it holds and the derivation `pcsc seams --symbolic` prints
(sympy's text, stored as sympy printed it). Reading it imports no sympy.

The table is made by `python -m pcsc.tools.proofs` (the shapes of every shipped
example and of the benchmark's 50-transition chain) and checked by
tests/test_proof_table.py, which proves every entry again with sympy. It names a hash
of the proof's sources (`SOURCES`): after an edit to any of them the table is not used
(shapes are proved with sympy, as without it) until it is made again.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("proven.json")
_HERE = Path(__file__).resolve().parent

#: The files a proof or a derivation is computed by (the table's digest)
SOURCES = (_HERE / "symbolic.py", _HERE / "folds.py", _HERE / "payoffs.py", _HERE.parent.parent / "score" / "fold.py")

FOLDS = ("chain", "discounted", "abandonment", "payoffs", "payoffs-abandonment")


def sources_digest() -> str:
    return hashlib.sha256(b"".join(path.read_bytes() for path in SOURCES)).hexdigest()


@cache
def _table() -> dict[tuple[str, int, int], dict[str, Any]]:
    try:
        table = json.loads(TABLE.read_text(encoding="utf-8"))
        if table.get("sources") != sources_digest():
            return {}  # made for other sources: prove again
        return {(e["fold"], int(e["n"]), int(e["k"])): e for e in table["entries"] if e.get("verified") is True}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _entries() -> dict[tuple[str, int, int], dict[str, Any]]:
    return {} if _DISABLED[0] else _table()


def holds(fold: str, n: int, k: int) -> bool:
    """True when the table has the shape proved (False: not in the table, prove it)."""
    if _ASKED is not None:
        _ASKED.add((fold, n, k))
    return (fold, n, k) in _entries()


def stored_derivation(fold: str, n: int, k: int) -> dict[str, Any] | None:
    """The shape's derivation as `pcsc seams --symbolic` shows it, or None."""
    entry = _entries().get((fold, n, k))
    return None if entry is None else json.loads(json.dumps(entry["derivation"]))  # a copy


def disable() -> None:
    """Use no table in this process (the benchmark's "before", the regeneration)."""
    _DISABLED[0] = True


_DISABLED = [False]
_ASKED: set[tuple[str, int, int]] | None = None


def record() -> set[tuple[str, int, int]]:
    """From now on, collect every shape asked for (`python -m pcsc.tools.proofs`)."""
    global _ASKED
    _ASKED = set()
    return _ASKED
