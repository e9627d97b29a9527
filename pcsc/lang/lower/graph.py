"""The structure of a route whose transitions fork and join (docs/graphs.md).

Pure functions on (source, target) pairs indexed in source order; the lowerer turns
their answers into diagnostics. A route is a two-terminal series-parallel DAG: one
start state, one end state, and every fork's branches meet again at one join.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence

from pcsc.lang.ir.shape import Edge, Parallel, Series, Shape

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


class _Piece:
    """A block of the reduction: its ends, the index of its first transition, and its
    shape in the making (an edge's index, or the items of a series or the branches of a
    parallel, kept in deques so that joining two blocks moves the smaller)."""

    __slots__ = ("source", "target", "first", "kind", "parts")

    def __init__(self, source: str, target: str, first: int, kind: str, parts: deque[_Piece] | int) -> None:
        self.source, self.target, self.first, self.kind, self.parts = source, target, first, kind, parts

    def children(self, kind: str) -> deque[_Piece]:
        """The parts of this block inside a block of ``kind`` (a series in a series, a
        parallel in a parallel are flattened)."""
        if self.kind == kind:
            assert isinstance(self.parts, deque)
            return self.parts
        return deque((self,))

    def shape(self) -> Shape:
        """The finished shape: a parallel's branches in source order (the branch whose
        first transition is written first comes first)."""
        if isinstance(self.parts, int):
            return Edge(str(self.parts))
        if self.kind == "series":
            return Series(tuple(p.shape() for p in self.parts))
        return Parallel(tuple(p.shape() for p in sorted(self.parts, key=lambda p: p.first)))


def _join(kind: str, a: _Piece, b: _Piece, source: str, target: str) -> _Piece:
    """``a`` then ``b`` in series, or ``a`` beside ``b``, flattened; linear overall: the
    smaller side's parts move into the larger side's deque."""
    left, right = a.children(kind), b.children(kind)
    if len(left) >= len(right):
        left.extend(right)
        parts = left
    else:
        right.extendleft(reversed(left))
        parts = right
    return _Piece(source, target, min(a.first, b.first), kind, parts)


def decompose(pairs: Sequence[Pair], start: str, end: str) -> Shape | list[str]:
    """The series-parallel tree of a DAG from ``start`` to ``end`` (every state on a
    path between them), or the states where the reduction is stuck (the forks and
    joins that do not nest), in topological order.

    Series and parallel reductions until none applies: two blocks with the same ends
    become one parallel block; a state other than the start and the end with one block
    in and one out joins them in series. The reductions are confluent, so the order
    they run in changes nothing, and each runs once per block it removes: linear in the
    transitions (n log n with the moves of `_join`)."""
    alive: dict[int, _Piece] = {}  # by the id of the piece
    between: dict[Pair, int] = {}  # the one block between two states
    into: dict[str, dict[int, None]] = {}
    out: dict[str, dict[int, None]] = {}
    todo: list[str] = []

    def add(piece: _Piece) -> None:
        key = (piece.source, piece.target)
        other = alive.get(between.get(key, -1))
        if other is not None:  # a second block with the same ends: one parallel block
            remove(other)
            piece = _join("parallel", other, piece, *key)
        alive[id(piece)] = piece
        between[key] = id(piece)
        out.setdefault(piece.source, {})[id(piece)] = None
        into.setdefault(piece.target, {})[id(piece)] = None
        todo.extend(key)

    def remove(piece: _Piece) -> None:
        del alive[id(piece)]
        del between[(piece.source, piece.target)]
        del out[piece.source][id(piece)]
        del into[piece.target][id(piece)]

    for i, (s, t) in enumerate(pairs):
        add(_Piece(s, t, i, "edge", i))
    while todo:
        state = todo.pop()
        ins, outs = into.get(state, {}), out.get(state, {})
        if state in (start, end) or len(ins) != 1 or len(outs) != 1:
            continue
        a, b = alive[next(iter(ins))], alive[next(iter(outs))]
        remove(a)
        remove(b)
        add(_join("series", a, b, a.source, b.target))
    pieces = sorted(alive.values(), key=lambda p: p.first)
    if len(pieces) == 1 and pieces[0].source == start and pieces[0].target == end:
        return pieces[0].shape()
    _, order = topological([(p.source, p.target) for p in pieces])
    return [s for s in order if s not in (start, end)]


def rename(shape: Shape, names: Sequence[str]) -> Shape:
    """``shape`` with each edge's index replaced by the transition's name."""
    if isinstance(shape, Edge):
        return Edge(names[int(shape.transition)])
    if isinstance(shape, Series):
        return Series(tuple(rename(s, names) for s in shape.items))
    return Parallel(tuple(rename(b, names) for b in shape.branches))
