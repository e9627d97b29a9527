"""The fold of a series-parallel route (docs/graphs.md).

A block G from entry s to exit t has a success probability P(G), an expected cost
C(G) paid once s is reached, and a discount D(G) = (1 + r)^(−H), H the horizon of its
slowest path in years. An edge has (p, c, d); a series G1;G2 has P = P1·P2,
D = D1·D2, C = C1 + P1·D1·C2; a parallel block (branches start together at the fork,
run independently, and all must succeed before the join) has P = Π P_b, C = Σ C_b and
D = min D_b (the join waits for the slowest branch). The route's score is
R = −C + P·D·V; for a chain it is the paper's fold.

Top down, every block gets a weight w (the discounted probability that its entry is
reached) and a continuation x (the value of its exit as the block sees it), so that
the score is affine in the block: R = a + w·(−C + P·D·x) holding the rest fixed. An
edge's w is its reach and its x its R_next; ∂R/∂p_e = w_e·d_e·x_e and D_e = w_e·max(0, x_e).
Inside a parallel block, branch b's continuation is x_b = (Π_{b'≠b} P_b')·(D/D_b)·x.

Under `fold.abandonment` the planner may stop at spine states only (the start, the
end, and every state between the items of the top-level series): the spine folds as a
chain of blocks, R_i = max(0, −C_i + P_i·D_i·R_{i+1}); inside a parallel block the
branches are committed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Generic, TypeVar

import attrs

from pcsc.lang.ir.shape import Edge, Series, Shape
from pcsc.score.finite import checked
from pcsc.score.fold import chain_fold

Num = TypeVar("Num", float, Fraction)


@attrs.frozen
class Block(Generic[Num]):
    P: Num
    C: Num
    D: Num


def _finite(x: Num, what: str) -> Num:
    if isinstance(x, float) and not math.isfinite(x):
        checked(x, what)
    return x


def spine(shape: Shape) -> tuple[Shape, ...]:
    """The items of the top-level series (one item when the route is one parallel block)."""
    return shape.items if isinstance(shape, Series) else (shape,)


class GraphFold(Generic[Num]):
    """Block quantities bottom up, then weights and continuations top down."""

    def __init__(
        self,
        shape: Shape,
        edge: Mapping[str, tuple[Num, Num, Num]],  # transition -> (p, c, d)
        value: Num,
        abandonment: bool,
        entry: Callable[[Shape], str],
        exit_of: Callable[[Shape], str],
        pick: Mapping[frozenset[str], str] | None = None,
        payoff: Mapping[str, Num] | None = None,  # state -> its credited payoff (None: no payoffs)
    ) -> None:
        self.shape = shape
        self.payoff: Mapping[str, Num] | None = payoff or None
        self.edge: Mapping[str, tuple[Num, Num, Num]] = edge
        self.value: Num = value
        self.zero: Num = value * 0
        self.one: Num = self.zero + 1
        self.abandonment = abandonment
        self.entry, self.exit_of = entry, exit_of
        self.blocks: dict[int, Block[Num]] = {}
        # the slowest branch of each parallel block (by its edges), named by its first edge;
        # given as `pick`, it resolves each min (the symbolic proof, pcsc.analysis.seams.graphs)
        self.pick = pick
        self.picked: dict[frozenset[str], str] = {}
        # each edge's reach, weight from the entry of its spine item and continuation, and
        # R per state where defined: made by the walk down, on first use (an exact fold
        # that only scores, or refolds a few edges, never pays for every edge)
        self._reach: dict[str, Num] = {}
        self._local: dict[str, Num] = {}
        self._next: dict[str, Num] = {}
        self._R: dict[str, Num] = {}
        self._walked = False
        self.spine_items = spine(shape)
        self.spine_R: list[Num] = []
        self.stops_at: int | None = None  # the spine item before which the planner stops
        self.item_of: dict[str, int] = {}  # transition -> its spine item
        for i, item in enumerate(self.spine_items):
            for name in edges_of(item):
                self.item_of[name] = i
        self.block(shape)
        self.fold_spine()

    def w(self, state: str) -> Num:
        """The payoff credited on reaching ``state`` (0 without one)."""
        return self.zero if self.payoff is None else self.payoff.get(state, self.zero)

    @property
    def spine_W(self) -> list[Num]:
        """The payoff of each spine item's exit state (the last: the end state's, credited beside V)."""
        return [self.w(self.exit_of(item)) for item in self.spine_items]

    def block(self, s: Shape) -> Block[Num]:
        if id(s) in self.blocks:
            return self.blocks[id(s)]
        if isinstance(s, Edge):
            p, c, d = self.edge[s.transition]
            b = Block(p, c, d)
        elif isinstance(s, Series):
            P, C, D, Q = self.one, self.zero, self.one, self.one
            last = len(s.items) - 1
            for i, item in enumerate(s.items):
                x = self.block(item)
                C = _finite(C + Q * x.C, "the expected cost of a series block")
                Q = Q * x.P * x.D
                P, D = P * x.P, D * x.D
                if self.payoff is not None and i < last:  # the payoff of the state after item i, net of the cost
                    C = _finite(C - Q * self.w(self.exit_of(item)), "the expected cost of a series block")
            b = Block(P, C, D)
        else:
            parts = [self.block(br) for br in s.branches]
            P, C = self.one, self.zero
            for x in parts:
                P, C = P * x.P, _finite(C + x.C, "the expected cost of a parallel block")
            key = frozenset(edges_of(s))
            heads = [first_edge(br) for br in s.branches]
            if self.pick is not None:
                slowest = heads.index(self.pick[key])
            elif all(x.D == parts[0].D for x in parts):  # no comparison needed (also on symbols)
                slowest = 0
                self.picked[key] = heads[0]
            else:
                slowest = min(range(len(parts)), key=lambda i: parts[i].D)  # the first of equals
                self.picked[key] = heads[slowest]
            b = Block(P, C, parts[slowest].D)
        self.blocks[id(s)] = b
        return b

    def fold_spine(self) -> None:
        """R at each spine state (the chain fold of the spine's blocks), and where the planner stops."""
        items = self.spine_items
        blocks = [self.blocks[id(item)] for item in items]
        W = self.spine_W if self.payoff is not None else None
        self.spine_R = self._chain(blocks, self.value,
                                   lambda i: f"R at spine state `{self.entry(items[i])}`", self.abandonment, W)
        if self.abandonment:
            for i, b in enumerate(blocks):
                if -b.C + b.P * b.D * self.after(i) < 0:
                    self.stops_at = i
                    break

    def after(self, i: int) -> Num:
        """What spine item i's success brings: its exit's payoff and R there."""
        R = self.spine_R[i + 1]
        return R if self.payoff is None else self.w(self.exit_of(self.spine_items[i])) + R

    def _chain(self, blocks: Sequence[Block[Num]], value: Num, what: Callable[[int], str], stop: bool,
               vs: Sequence[Num] | None = None) -> list[Num]:
        """`chain_fold` of blocks in series, from ``value`` after the last; ``vs[i]`` the
        payoff of the state after block i; ``what(i)`` names the value before block i when
        a float leaves the floats."""
        return chain_fold([b.P for b in blocks], [b.C for b in blocks], value, [b.D for b in blocks],
                          vs=vs, stop=stop, clip=self._stopped, what=what)

    def _stopped(self, r: Num) -> Num:
        """max(0, r) under the option to stop (the fold's own 0 below 0, r itself at 0)."""
        return self.zero if r < 0 else r

    @property
    def reach(self) -> dict[str, Num]:
        return self._walk()._reach

    @property
    def local(self) -> dict[str, Num]:
        """Each edge's weight from the entry of its spine item."""
        return self._walk()._local

    @property
    def next(self) -> dict[str, Num]:
        return self._walk()._next

    @property
    def R(self) -> dict[str, Num]:
        """R per state, where defined."""
        return self._walk()._R

    def _walk(self) -> GraphFold[Num]:
        """Weights and continuations top down, once: linear in the edges."""
        if self._walked:
            return self
        self._walked = True
        items, R = self.spine_items, self.spine_R
        w = self.one
        for i, item in enumerate(items):
            self._R[self.entry(item)] = R[i]
            self.down(item, self.one, self.after(i))
            for name in edges_of(item):
                self._reach[name] = w * self._local[name]
            b = self.blocks[id(item)]
            w = w * b.P * b.D
        self._R[self.exit_of(items[-1])] = R[-1]
        return self

    def down(self, s: Shape, w: Num, x: Num) -> None:
        if isinstance(s, Edge):
            self._local[s.transition] = w
            self._next[s.transition] = x
        elif isinstance(s, Series):
            parts = [self.blocks[id(item)] for item in s.items]
            ws: list[Num] | None = None
            if self.payoff is not None:
                inner = s.items[1:-1]
                ws = [self.w(self.exit_of(it)) for it in inner] + [self.zero]
            after = self._chain(parts[1:], x, lambda i: "a value inside a branch", False, ws)  # R after each item
            for i, item in enumerate(s.items):
                cont = after[i]
                if i < len(parts) - 1:
                    self._R[self.exit_of(item)] = after[i]
                    if self.payoff is not None:  # the item's success also earns its exit's payoff
                        cont = self.w(self.exit_of(item)) + cont
                self.down(item, w, cont)
                w = w * parts[i].P * parts[i].D
        else:
            D = self.blocks[id(s)].D
            parts = [self.blocks[id(br)] for br in s.branches]
            others_of = self._others(self.blocks[id(s)].P, [x.P for x in parts])
            for j, br in enumerate(s.branches):
                others = others_of(j)
                own = parts[j].D
                ratio = self.one if own == D else D / own if own != 0 else self.zero
                self.down(br, w, _finite(others * ratio * x, "a branch's continuation"))

    def _others(self, total: Num, ps: list[Num]) -> Callable[[int], Num]:
        """j -> Π_{k≠j} ps[k], linear in the branches. Exact: the block's P over ps[j]
        (a small divisor; no product of two long rationals). Floats (and symbols): a
        product before j times one after j, no division (a P may be 0)."""
        if isinstance(total, Fraction):
            return lambda j: total / ps[j] if ps[j] != 0 else math.prod(ps[:j] + ps[j + 1 :], start=self.one)
        after = [self.one] * (len(ps) + 1)
        for k in range(len(ps) - 1, -1, -1):
            after[k] = ps[k] * after[k + 1]
        before = [self.one] * len(ps)
        for k in range(1, len(ps)):
            before[k] = before[k - 1] * ps[k - 1]
        return lambda j: before[j] * after[j + 1]

    @property
    def score(self) -> Num:
        return self.spine_R[0]

    def score_with(self, name: str, q: Num) -> Num:
        """The score with transition ``name``'s p set to ``q``, every other number as folded:
        the item of the spine that holds it is affine in that p, with slope
        local·d·R_next (its weight from the item's entry, its discount, its continuation),
        and the spine before it folds again as a chain of blocks (max(0, ·) under the
        option to stop). Without the option to stop this is the score plus
        reach·d·R_next·(q − p). Exact in `Fraction`s: equal to a whole refold."""
        p, _, d = self.edge[name]
        items = self.spine_items
        j = self.item_of[name]
        b = self.blocks[id(items[j])]
        r = -b.C + b.P * b.D * self.after(j) + self.local[name] * d * self.next[name] * (q - p)
        if self.abandonment:
            r = self._stopped(r)
        before = [self.blocks[id(item)] for item in items[:j]]
        W = None if self.payoff is None else self.spine_W[:j]
        return self._chain(before, r, lambda i: f"R at spine state `{self.entry(items[i])}`", self.abandonment, W)[0]

    def walking(self, name: str) -> bool:
        """The planner reaches and pays this transition's spine item (always without abandonment)."""
        return self.stops_at is None or self.item_of[name] < self.stops_at

    def stops(self, name: str, source: str) -> bool:
        """Under abandonment: this transition leaves a spine state whose item is worth less
        than nothing, −C + P·D·R(next) < 0 (as the chain marks each such stage)."""
        if not self.abandonment:
            return False
        i = self.item_of[name]
        b = self.blocks[id(self.spine_items[i])]
        return source == self.entry(self.spine_items[i]) and -b.C + b.P * b.D * self.after(i) < 0


def first_edge(s: Shape) -> str:
    """The transition a block starts with (a branch is named by it)."""
    while not isinstance(s, Edge):
        s = s.items[0] if isinstance(s, Series) else s.branches[0]
    return s.transition


def edges_of(s: Shape) -> list[str]:
    if isinstance(s, Edge):
        return [s.transition]
    parts = s.items if isinstance(s, Series) else s.branches
    return [e for p in parts for e in edges_of(p)]


def ends(
    sources: Mapping[str, str], targets: Mapping[str, str]
) -> tuple[Callable[[Shape], str], Callable[[Shape], str]]:
    """The entry and exit state of a block, given each transition's source and target."""

    def entry(s: Shape) -> str:
        while not isinstance(s, Edge):
            s = s.items[0] if isinstance(s, Series) else s.branches[0]
        return sources[s.transition]

    def exit_of(s: Shape) -> str:
        while not isinstance(s, Edge):
            s = s.items[-1] if isinstance(s, Series) else s.branches[0]
        return targets[s.transition]

    return entry, exit_of


def graph_fold(
    shape: Shape,
    names: Sequence[str],
    sources: Sequence[str],
    targets: Sequence[str],
    ps: Sequence[Num],
    cs: Sequence[Num],
    ds: Sequence[Num],
    value: Num,
    abandonment: bool,
    pick: Mapping[frozenset[str], str] | None = None,
    vs: Sequence[Num] | None = None,
) -> GraphFold[Num]:
    """The fold of a series-parallel route; ``vs[i]``: the payoff of transition i's target
    (None: no payoffs; the transitions into a join carry the join's)."""
    entry, exit_of = ends(dict(zip(names, sources, strict=True)), dict(zip(names, targets, strict=True)))
    edge = {n: (p, c, d) for n, p, c, d in zip(names, ps, cs, ds, strict=True)}
    payoff = None if vs is None else dict(zip(targets, vs, strict=True))
    return GraphFold(shape, edge, value, abandonment, entry, exit_of, pick, payoff)
