"""The chain fold, written once (docs/formulas.md, docs/folds.md).

    R_n = V;  R_i = −c_i + p_i·d_i·(v_{i+1} + R_{i+1});  under the option to stop R_i = max(0, that)

with v_{i+1} the payoff of the state e_i reaches (0 without payoffs: the paper's fold).

Every fold of a chain in PCSC is this function: the score (floats), the value of
information and the seams' identities (exact `Fraction`s, or the integers of
`pcsc.analysis.seams.identity`), the proofs (sympy's polynomial rings and expressions),
and the spine and series blocks of the series-parallel fold (`pcsc.score.graph`, which
folds blocks with it). It only adds, negates and multiplies, so it is generic over the
number type; `max(0, ·)` is a ``clip`` the caller may replace (sympy's `Max` for
symbols). Nothing here imports sympy: this is the hot path. The certificate checker
keeps its own fold on purpose (`pcsc.certify.check`), so that a bug here cannot hide
in the check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, Self, TypeVar

from pcsc.base.humanize import significant
from pcsc.score.finite import checked


class Arithmetic(Protocol):
    """What the fold does with its numbers."""

    def __neg__(self) -> Self: ...
    def __add__(self, other: Self, /) -> Self: ...
    def __mul__(self, other: Self, /) -> Self: ...
    def __lt__(self, other: Self, /) -> Any: ...  # only under the option to stop


Num = TypeVar("Num", bound=Arithmetic)  # float, Fraction, a ring's element, a sympy expression


def chain_fold(
    ps: Sequence[Num],
    cs: Sequence[Num],
    value: Num,
    ds: Sequence[Num] | None = None,
    *,
    vs: Sequence[Num] | None = None,
    stop: bool = False,
    clip: Callable[[Num], Num] | None = None,
    what: Callable[[int], str] | None = None,
) -> list[Num]:
    """[R_0, …, R_n] of the fold above; exact when given `Fraction`s.

    ``ds`` None: every d_i is 1 and is not multiplied in (the paper's fold, exactly, on
    any numbers). ``vs``: vs[i] is the payoff of the state e_i reaches, credited with
    e_i's success (None: no payoffs, and none is added). ``stop``: the option to stop,
    R_i = ``clip``(−c_i + p_i·d_i·(v_{i+1} + R_{i+1})), ``clip`` by default max(0, ·)
    with the 0 of ``value``'s type. A float step that leaves the floats raises
    `NotFinite`, naming R_i (``what(i)`` names it instead).
    Prefix folds are this on a slice: R_0 of the first k stages from a value x at k
    is ``chain_fold(ps[:k], cs[:k], x, ...)[0]``."""
    if stop and clip is None:
        zero: Num = value * 0  # type: ignore[operator]  # the 0 of value's type

        def clip(r: Num) -> Num:
            return max(zero, r)

    R = [value] * (len(ps) + 1)
    for i in range(len(ps) - 1, -1, -1):
        q = ps[i] if ds is None else ps[i] * ds[i]
        r = -cs[i] + q * R[i + 1] if vs is None else -cs[i] + q * (vs[i] + R[i + 1])
        if isinstance(r, float) and not math.isfinite(r):
            after = R if vs is None else [R[0], *(v + x for v, x in zip(vs, R[1:], strict=True))]
            _overflow(r, i, ps, cs, ds, after, what)
        R[i] = clip(r) if stop and clip is not None else r
    return R


def _overflow(r: float, i: int, ps: Sequence[Any], cs: Sequence[Any], ds: Sequence[Any] | None,
              R: Sequence[Any], what: Callable[[int], str] | None) -> None:
    """Raise `NotFinite` for the float step R_i = ``r``, naming its numbers."""
    if what is not None:
        checked(r, what(i))
    c, p, after = float(cs[i]), float(ps[i]), float(R[i + 1])
    if ds is None:
        checked(r, f"R_{i} = −c + p·R_{i + 1} = −{significant(c)} + {significant(p)}·{significant(after)}")
    else:
        checked(r, f"R_{i} = −c + p·d·R_{i + 1}", c, p, float(ds[i]), after)


class ChainFold(Generic[Num]):
    """A chain route's fold: R_0 … R_n (``R``) and the score R_0, beside
    `pcsc.score.graph.GraphFold` (both have ``score``)."""

    __slots__ = ("R",)

    def __init__(self, R: list[Num]) -> None:
        self.R = R

    @property
    def score(self) -> Num:
        return self.R[0]
