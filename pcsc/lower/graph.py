"""The structure of a route whose transitions fork and join (docs/graphs.md).

Pure functions on (source, target) pairs indexed in source order; the lowerer turns
their answers into diagnostics. A route is a two-terminal series-parallel DAG: one
start state, one end state, and every fork's branches meet again at one join.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import attrs

from pcsc.ir.shape import Edge, Parallel, Series, Shape

Pair = tuple[str, str]


def _degrees(pairs: Sequence[Pair]) -> tuple[dict[str, int], dict[str, list[int]]]:
    """Each state's number of incoming transitions, and the indices of its outgoing ones."""
    indegree: dict[str, int] = {}
    out: dict[str, list[int]] = {}
    for i, (s, t) in enumerate(pairs):
        indegree.setdefault(s, 0)
        indegree[t] = indegree.get(t, 0) + 1
        out.setdefault(s, []).append(i)
    return indegree, out


def find_cycle(pairs: Sequence[Pair]) -> list[int] | None:
    """The indices of the transitions of one cycle (in walking order), or None."""
    indegree, out = _degrees(pairs)
    ready = [s for s, d in indegree.items() if d == 0]
    seen: set[str] = set()
    while ready:
        s = ready.pop()
        seen.add(s)
        for i in out.get(s, []):
            t = pairs[i][1]
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    left = [i for i, (_, t) in enumerate(pairs) if t not in seen]
    if not left:
        return None
    # every state left has a transition in from another state left (else Kahn would
    # have reached it): walk backwards until a state repeats, then read the loop forwards
    into: dict[str, list[int]] = {}
    for i, (_, t) in enumerate(pairs):
        into.setdefault(t, []).append(i)
    state = pairs[left[0]][1]
    walked: list[int] = []
    at: dict[str, int] = {}
    while state not in at:
        at[state] = len(walked)
        back = next(i for i in into[state] if pairs[i][0] not in seen)
        walked.append(back)
        state = pairs[back][0]
    loop = list(reversed(walked[at[state] :]))
    first = loop.index(min(loop))  # from the transition written first
    return loop[first:] + loop[:first]


def reachable(pairs: Sequence[Pair], start: str) -> set[str]:
    out: dict[str, list[str]] = {}
    for s, t in pairs:
        out.setdefault(s, []).append(t)
    seen = {start}
    todo = [start]
    while todo:
        for t in out.get(todo.pop(), []):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def topological(pairs: Sequence[Pair]) -> tuple[list[int], list[str]]:
    """Transition indices and states in topological order, stable by source order: of
    the transitions whose source every earlier transition has completed, the one
    written first comes first; a state comes when its last incoming transition does.
    For a chain this is the chain order."""
    indegree, out = _degrees(pairs)
    states = [s for s, d in indegree.items() if d == 0]
    heap = [i for s in states for i in out.get(s, [])]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        t = pairs[i][1]
        indegree[t] -= 1
        if indegree[t] == 0:
            states.append(t)
            for j in out.get(t, []):
                heapq.heappush(heap, j)
    return order, states


@attrs.frozen
class _Piece:
    source: str
    target: str
    shape: Shape
    first: int  # the smallest transition index inside


def _series(a: _Piece, b: _Piece) -> _Piece:
    items: list[Shape] = []
    for part in (a.shape, b.shape):
        items.extend(part.items if isinstance(part, Series) else (part,))
    return _Piece(a.source, b.target, Series(tuple(items)), min(a.first, b.first))


def _parallel(pieces: list[_Piece]) -> _Piece:
    branches: list[Shape] = []
    for p in pieces:
        branches.extend(p.shape.branches if isinstance(p.shape, Parallel) else (p.shape,))
    branches.sort(key=_min_index)  # source order: the branch written first comes first
    first = min(p.first for p in pieces)
    return _Piece(pieces[0].source, pieces[0].target, Parallel(tuple(branches)), first)


def decompose(pairs: Sequence[Pair], start: str, end: str) -> Shape | list[str]:
    """The series-parallel tree of a DAG from ``start`` to ``end`` (every state on a
    path between them), or the states where the reduction is stuck (the forks and
    joins that do not nest), in topological order."""
    pieces: list[_Piece] = [_Piece(s, t, Edge(str(i)), i) for i, (s, t) in enumerate(pairs)]
    changed = True
    while changed and len(pieces) > 1:
        changed = False
        groups: dict[Pair, list[_Piece]] = {}
        for p in pieces:
            groups.setdefault((p.source, p.target), []).append(p)
        if any(len(g) > 1 for g in groups.values()):
            merged = [g[0] if len(g) == 1 else _parallel(g) for g in groups.values()]
            pieces = sorted(merged, key=lambda p: p.first)
            changed = True
            continue
        into: dict[str, list[_Piece]] = {}
        out: dict[str, list[_Piece]] = {}
        for p in pieces:
            into.setdefault(p.target, []).append(p)
            out.setdefault(p.source, []).append(p)
        for state, ins in into.items():
            outs = out.get(state, [])
            if state in (start, end) or len(ins) != 1 or len(outs) != 1:
                continue
            a, b = ins[0], outs[0]
            joined = _series(a, b)
            pieces = sorted([p for p in pieces if p is not a and p is not b] + [joined], key=lambda p: p.first)
            changed = True
            break
    if len(pieces) == 1 and pieces[0].source == start and pieces[0].target == end:
        return pieces[0].shape
    _, order = topological([(p.source, p.target) for p in pieces])
    return [s for s in order if s not in (start, end)]


def _min_index(shape: Shape) -> int:
    if isinstance(shape, Edge):
        return int(shape.transition)
    parts = shape.items if isinstance(shape, Series) else shape.branches
    return min(_min_index(p) for p in parts)


def rename(shape: Shape, names: Sequence[str]) -> Shape:
    """``shape`` with each edge's index replaced by the transition's name."""
    if isinstance(shape, Edge):
        return Edge(names[int(shape.transition)])
    if isinstance(shape, Series):
        return Series(tuple(rename(s, names) for s in shape.items))
    return Parallel(tuple(rename(b, names) for b in shape.branches))
