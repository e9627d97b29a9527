"""The series-parallel shape of a route whose transitions fork and join.

Data only: `Edge` names one transition, `Series` runs its items one after another
(the exit state of each is the entry state of the next), `Parallel` runs its
branches side by side from one fork state to one join state. A chain route has no
shape (`Route.shape` is None); a graph route's shape is a `Series` or a `Parallel`
whose edges are every transition once. Series never directly contain a series, and
parallels never directly contain a parallel (lowering flattens them), so the
decomposition of a graph is unique; branches are in source order (the branch whose
earliest transition is written first comes first).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs


@attrs.frozen
class Edge:
    transition: str


@attrs.frozen
class Series:
    items: tuple[Shape, ...]


@attrs.frozen
class Parallel:
    branches: tuple[Shape, ...]


Shape = Edge | Series | Parallel


def edges(shape: Shape) -> Iterator[str]:
    """The transition names of ``shape``, depth first (items and branches in order)."""
    if isinstance(shape, Edge):
        yield shape.transition
    elif isinstance(shape, Series):
        for item in shape.items:
            yield from edges(item)
    else:
        for branch in shape.branches:
            yield from edges(branch)
