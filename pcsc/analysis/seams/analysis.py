"""The seam table (docs/coverage.md) for one route, and the cohort summary over many.

Two arms per seam:
- the identity arm: Δ_k by the formula and by re-folding the spliced chain with the
  honest route's own p and c, in exact rationals, and the sympy proof for (n, k);
- the pipeline arm: the spliced route printed as `.route` text and compiled again
  through priors, floors (the retargeted predecessor's delta-indexed floor included)
  and coverage, as any input would be.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from pcsc.analysis.seams.folds import fold_seam_identities, verify_fold_shape
from pcsc.analysis.seams.graphs import graph_seam_identities, proof_picks, verify_graph_seam
from pcsc.analysis.seams.identity import SeamIdentity, seam_identities
from pcsc.analysis.seams.payoffs import payoff_seam_identities, verify_payoff_shape
from pcsc.analysis.seams.splice import seam_indices, splice_text
from pcsc.analysis.seams.symbolic import verify_shape
from pcsc.base.humanize import money, probability
from pcsc.compiler.session import Compiled, Session, gate_and_dock
from pcsc.coverage import Decision
from pcsc.diagnostics.messages import E311_IN_SEAMS
from pcsc.score.finite import NotFinite, fits


@attrs.frozen
class Drift:
    """A p or c that moved when a changed route was recompiled."""

    transition: str
    quantity: str  # "p" | "c"
    before: float
    after: float

    def __str__(self) -> str:
        """Exact, for JSON and the API: ``launch.c: 99000.0 -> 613333.3333333333``."""
        return f"{self.transition}.{self.quantity}: {self.before!r} -> {self.after!r}"

    def text(self) -> str:
        """For reading: ``launch.c: 99,000.00 -> 613,333.33``, ``monetize.p: 0.2976 -> 0.4464``."""
        shown = probability if self.quantity == "p" else money
        return f"{self.transition}.{self.quantity}: {shown(self.before)} -> {shown(self.after)}"


def drifts(honest: Compiled, changed: Compiled, costs: bool = True) -> tuple[Drift, ...]:
    """The p (and, with ``costs``, the c) of each transition ``changed`` shares with ``honest``
    that moved, in ``changed``'s order."""
    before = {t.name: t for t in honest.numbers.transitions}
    out = []
    for t in changed.numbers.transitions:
        h = before.get(t.name)
        if h is None:
            continue
        if t.p != h.p:
            out.append(Drift(t.name, "p", h.p, t.p))
        if costs and t.cost.c != h.cost.c:
            out.append(Drift(t.name, "c", h.cost.c, t.cost.c))
    return tuple(out)


@attrs.frozen
class PipelineArm:
    delta: float  # spliced R_0 − honest R_0, both ungated, both through the pipeline
    drifted: tuple[Drift, ...]  # p or c that moved (a drift when any did)
    verdict: str  # the spliced route's verdict under the active coverage mode
    gate: Decision
    dock: Decision
    ungated_score: float
    uncovered: tuple[tuple[str, str], ...]  # (transition, field)
    failed_requires: tuple[str, ...]  # distinct `require` lines that failed


@attrs.frozen
class Seam:
    k: int
    transition: str
    identity: SeamIdentity
    symbolically_verified: bool
    pipeline: PipelineArm | None  # None when the splice did not compile (reported)


@attrs.frozen
class RouteSeams:
    compiled: Compiled
    seams: tuple[Seam, ...]
    honest_gate: Decision
    honest_dock: Decision


def seams_of(c: Compiled, session: Session) -> RouteSeams | None:
    """`analyse`, or None with PCSC-E311 on the route when a number of a seam does not
    fit a float (a cost near 1.8e308 has a threshold −c/(1 − p) beyond it)."""
    try:
        return analyse(c, session)
    except NotFinite as exc:
        session.diags.diag(E311_IN_SEAMS, exc.span or c.route.span, route=c.route.name, overflow=exc.message)
        return None


def _finite(seams: list[Seam]) -> tuple[Seam, ...]:
    """``seams``; NotFinite when an exact number of one does not fit a float."""
    for s in seams:
        i = s.identity
        for name in ("delta_formula", "delta_refold", "reach", "removed_cost", "retained_value", "threshold",
                     "R_next", "local", "removed_payoff"):
            value = getattr(i, name)
            if value is not None:
                fits(value, f"seam {s.k} (`{s.transition}`): {name}")
    return tuple(seams)


def analyse(c: Compiled, session: Session) -> RouteSeams:
    """The seams of ``c``; NotFinite when one of their numbers does not fit a float."""
    honest_gate, honest_dock, _ = gate_and_dock(c, "analysis")  # also when coverage is off
    seams = [Seam(k, name, identity, verified, _pipeline_arm(c, k, session))
             for k, name, identity, verified in identities(c)]
    return RouteSeams(c, _finite(seams), honest_gate, honest_dock)


def identities(c: Compiled) -> list[tuple[int, str, SeamIdentity, bool]]:
    """(k, the transition deleted, its identity checked in exact rationals, whether its
    shape's identity is proved symbolically) for each seam of ``c``, by the route's fold
    (without the splice's pipeline arm: `analyse` adds it)."""
    route, n = c.route, c.numbers
    ps = [t.p for t in n.transitions]
    cs = [t.cost.c for t in n.transitions]
    out: list[tuple[int, str, SeamIdentity, bool]] = []
    ks = list(seam_indices(route)) if len(route.transitions) >= 3 else []
    spec = n.fold
    if route.shape is not None:  # a graph route (pcsc/analysis/seams/graphs.py)
        fold = "default" if spec.is_default else "abandonment" if spec.abandonment else "discounted"
        ids = graph_seam_identities(
            route.shape, [t.name for t in n.transitions], [t.source for t in n.transitions],
            [t.target for t in n.transitions], ps, cs, [t.d for t in n.transitions], n.value, ks, spec.abandonment,
            n.payoffs,
        )
        for k, identity in zip(ks, ids, strict=True):
            name = route.transitions[k].name
            picks, case = proof_picks(route.shape, [t.name for t in n.transitions], [t.d for t in n.transitions], k)
            verified = verify_graph_seam(route.shape, name, fold, picks, case, paid=n.payoffs is not None)
            out.append((k, name, identity, verified))
        return out
    ws = n.payoffs
    if ws is not None:  # payoffs along the way (pcsc/analysis/seams/payoffs.py)
        identities = payoff_seam_identities(ps, cs, [t.d for t in n.transitions], ws, n.value, ks, spec.abandonment)
        for k, identity in zip(ks, identities, strict=True):
            out.append((k, route.transitions[k].name, identity, verify_payoff_shape(len(ps), k, spec.abandonment)))
        return out
    if spec.is_default:  # the paper's fold and its identity
        identities = seam_identities(ps, cs, n.value, ks)
    else:  # the policy's fold and its own identity (pcsc/analysis/seams/folds.py)
        identities = fold_seam_identities(ps, cs, [t.d for t in n.transitions], n.value, ks, spec.abandonment)
    for k, identity in zip(ks, identities, strict=True):
        verified = verify_shape(len(ps), k) if spec.is_default else verify_fold_shape(len(ps), k, spec.abandonment)
        out.append((k, route.transitions[k].name, identity, verified))
    return out


def _pipeline_arm(c: Compiled, k: int, session: Session) -> PipelineArm | None:
    route = c.route
    child = session.for_variants_of(route)
    shown = f"{route.file}#{route.name}/seam-{k}"
    spliced = child.routes_from_text(splice_text(route, k), shown, Path(route.file).parent)
    compiled = child.compile_route(spliced[0]) if len(spliced) == 1 else None
    if compiled is None:
        session.diags.extend(child.diags)
        return None
    gate, dock, coverage = gate_and_dock(compiled, "analysis")
    failed = sorted({f.require for u in coverage.uncovered for a in u.tried if a.claimed for f in a.failed})
    return PipelineArm(
        delta=compiled.numbers.score - c.numbers.score,
        drifted=drifts(c, compiled),
        verdict=compiled.decision.verdict,
        gate=gate,
        dock=dock,
        ungated_score=compiled.numbers.score,
        uncovered=tuple((u.transition, u.delta.field) for u in coverage.uncovered),
        failed_requires=tuple(failed),
    )
