"""The stability probe behind `pcsc stability` (docs/forecast.md, "Stability"): how much
the ranking and each route's score move when the model-mediated inputs of the routes
are drawn again within stated bounds, as a repeated re-extraction would.

Each draw perturbs every route, then recompiles it through the real pipeline (the
perturbed IR is bound, scored, covered and decided by the session, like any route):

- **estimates**: each estimate of a transition with two or more is drawn uniformly
  within [min, max] of its estimates. Estimates set U (the binding transition) and the
  spread of the value-of-information selector, never p, which is code-owned;
- **evidence weights**: each item's `weight` w is drawn uniformly within
  [max(0, w − h), min(1, w + h)], h the weight spread; it stays in [0, 1], so its
  effective weight stays within its tier's bounds, [0, tier_weight[tier]];
- **classes**: with probability `class_swap`, a transition's reference class is
  replaced by another class of its policy with the same category prefix (the text
  before the first `/`), drawn uniformly; a class without such a sibling is kept. The
  language has no list of alternative classes, so the policy's category is the
  alternative set.

One `random.Random(seed)` draws everything, draw by draw, route by route in input
order, transition by transition, then evidence item by item, so a seed gives the same
report byte for byte.

Rank stability: Kendall's τ-b between the honest ranking and each draw's (what orders
a route is its rank tier, then the keys of the rank's tie-break sequence, the name and
file excepted; routes equal on all of them count as ties), and the
share of the honest top quartile (the first ⌊n/4⌋ routes) still in the draw's top
quartile. Score spread: each route's ungated score R_0 over the draws (min, median,
max) and the share of draws whose score has the honest score's sign.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pcsc.analysis.rank import TIERS, RankKey, rank, sequence_of, tier_of
from pcsc.base.humanize import money, plural
from pcsc.base.stats import median, rate, rate_text
from pcsc.compiler.session import Compiled, Session
from pcsc.lang.ir import Route

DEFAULT_DRAWS = 100
DEFAULT_SEED = 0
DEFAULT_WEIGHT_SPREAD = 0.2
DEFAULT_CLASS_SWAP = 0.1

ESTIMATES_BOUND = "each estimate drawn uniformly within [min, max] of its transition's estimates (two or more)"
CLASSES_BOUND = "another class of the policy with the same category prefix (before the first `/`)"


@attrs.frozen
class Bounds:
    weight_spread: float = DEFAULT_WEIGHT_SPREAD
    class_swap: float = DEFAULT_CLASS_SWAP

    def to_json(self) -> dict[str, Any]:
        return {
            "estimates": ESTIMATES_BOUND,
            "weight_spread": self.weight_spread,
            "weights": f"each evidence weight w drawn uniformly within [max(0, w − {self.weight_spread:g}), "
            f"min(1, w + {self.weight_spread:g})]: its effective weight stays within [0, tier_weight[tier]]",
            "class_swap": self.class_swap,
            "classes": CLASSES_BOUND,
        }


def kendall_tau_b(x: Sequence[Any], y: Sequence[Any]) -> float | None:
    """Kendall's τ-b of the paired values ``x`` and ``y`` (any comparable values; equal
    values are ties): (n_c − n_d) / √((n_0 − n_1)(n_0 − n_2)), counted exactly over every
    pair; None when either side is constant (or fewer than two pairs)."""
    if len(x) != len(y):
        raise ValueError("kendall_tau_b needs two sequences of the same length")
    n = len(x)
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0:
                ties_x += 1
            if dy == 0:
                ties_y += 1
            if dx and dy:
                if dx == dy:
                    concordant += 1
                else:
                    discordant += 1
    n0 = n * (n - 1) // 2
    denominator = (n0 - ties_x) * (n0 - ties_y)
    if denominator == 0:
        return None
    return (concordant - discordant) / math.sqrt(denominator)


def siblings(ref_class: str, classes: Sequence[str]) -> list[str]:
    """The other classes of ``classes`` with the category prefix of ``ref_class``, sorted."""
    if "/" not in ref_class:
        return []
    prefix = ref_class.split("/", 1)[0]
    return sorted(c for c in classes if c != ref_class and "/" in c and c.split("/", 1)[0] == prefix)


@attrs.frozen
class Change:
    """What one draw changed in a route: reclassed transitions (name, from, to)."""

    reclassed: tuple[tuple[str, str, str], ...]


def perturb(route: Route, classes: Sequence[str], rng: random.Random, bounds: Bounds) -> tuple[Route, Change]:
    """One draw of ``route``'s model-mediated inputs (see the module docstring)."""
    transitions = []
    reclassed = []
    for t in route.transitions:
        estimates = t.estimates
        if len(estimates) >= 2:
            lo, hi = min(estimates), max(estimates)
            estimates = tuple(rng.uniform(lo, hi) for _ in estimates)
        ref_class = t.ref_class
        if rng.random() < bounds.class_swap:
            options = siblings(ref_class, classes)
            if options:
                ref_class = rng.choice(options)
                reclassed.append((t.name, t.ref_class, ref_class))
        transitions.append(attrs.evolve(t, estimates=estimates, ref_class=ref_class))
    h = bounds.weight_spread
    evidence = tuple(
        attrs.evolve(e, weight=rng.uniform(max(0.0, e.weight - h), min(1.0, e.weight + h))) for e in route.evidence
    )
    return attrs.evolve(route, transitions=tuple(transitions), evidence=evidence), Change(tuple(reclassed))


def order_value(c: Compiled, key: RankKey) -> tuple[Any, ...]:
    """What ranks a route, larger first: its rank tier, then, for each key of the tie-break
    sequence, whether it has a value and the value (`pcsc.analysis.rank`; the name, which
    only makes the order total, is left out); equal tuples are tied."""
    values = [(v is not None, 0.0 if v is None else v) for _, v in sequence_of(c, key)]
    return (-TIERS.index(tier_of(c)), *values)


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


@attrs.frozen
class RouteStability:
    route: str
    file: str
    honest_rank: int
    honest_score: float
    scores: tuple[float, ...]  # the ungated R_0 of each used draw
    ranks: tuple[int, ...]
    binding_kept: int
    voi_kept: int
    verdict_kept: int
    reclassed: int  # draws in which at least one of its transitions changed class

    def to_json(self) -> dict[str, Any]:
        n = len(self.scores)
        same = sum(1 for s in self.scores if _sign(s) == _sign(self.honest_score))
        return {
            "route": self.route,
            "file": self.file,
            "honest_rank": self.honest_rank,
            "rank": {"min": min(self.ranks), "max": max(self.ranks)} if n else None,
            "score": {
                "honest": self.honest_score,
                "min": min(self.scores) if n else None,
                "median": median(self.scores) if n else None,
                "max": max(self.scores) if n else None,
                "same_sign": same / n if n else None,
            },
            "binding_kept": self.binding_kept / n if n else None,
            "voi_kept": self.voi_kept / n if n else None,
            "verdict_kept": self.verdict_kept / n if n else None,
            # the same shares as counts over the draws, with their Wilson 95% intervals
            "rates": {
                "same_sign": rate(same, n),
                "binding_kept": rate(self.binding_kept, n),
                "voi_kept": rate(self.voi_kept, n),
                "verdict_kept": rate(self.verdict_kept, n),
            },
            "reclassed_draws": self.reclassed,
        }


@attrs.frozen
class StabilityReport:
    draws: int
    seed: int
    bounds: Bounds
    key: RankKey
    taus: tuple[float | None, ...]  # one per used draw
    top_quartile: int  # ⌊n/4⌋
    kept: tuple[float, ...]  # share of the honest top quartile kept, per used draw
    routes: tuple[RouteStability, ...]
    failed: tuple[tuple[int, str], ...]  # (draw, why) of the draws left out

    def to_json(self) -> dict[str, Any]:
        taus = [t for t in self.taus if t is not None]
        return {
            "draws": self.draws,
            "seed": self.seed,
            "bounds": self.bounds.to_json(),
            "key": self.key,
            "routes_ranked": len(self.routes),
            "draws_used": len(self.taus),
            "failed_draws": [{"draw": d, "why": why} for d, why in self.failed],
            "kendall_tau_b": _summary(taus),
            "top_quartile": {"size": self.top_quartile, **(_summary(list(self.kept)) if self.top_quartile else
                                                            _summary([]))},
            "routes": [r.to_json() for r in self.routes],
        }


def _summary(xs: Sequence[float]) -> dict[str, Any]:
    if not xs:
        return {"n": 0, "mean": None, "min": None, "max": None}
    return {"n": len(xs), "mean": sum(xs) / len(xs), "min": min(xs), "max": max(xs)}


def _compile_quietly(session: Session, route: Route) -> tuple[Compiled | None, str | None]:
    """Compile a perturbed route; its diagnostics are dropped (they repeat the honest
    route's), its first error is returned."""
    before = len(session.diags)
    compiled = session.compile_route(route)
    new = session.diags.items[before:]
    del session.diags.items[before:]
    errors = [f"{d.code} {d.message}" for d in new if d.severity == "error"]
    if compiled is None or errors:
        return None, errors[0] if errors else "the perturbed route did not compile"
    return compiled, None


def probe(honest: Sequence[Compiled], session: Session, key: RankKey, draws: int, seed: int,
          bounds: Bounds) -> StabilityReport:
    """Draw ``draws`` perturbed copies of the compiled routes ``honest`` (ranked together
    by ``key``) and measure how the ranking and the scores move."""
    n = len(honest)
    honest_order = [order_value(c, key) for c in honest]
    position = {id(r.compiled): r.rank for r in rank(honest, key)}
    honest_ranks = [position[id(c)] for c in honest]
    q = n // 4
    top = {i for i, r in enumerate(honest_ranks) if r <= q}
    classes: Mapping[str, list[str]] = {c.policy.sha256: sorted(c.policy.policy.priors) for c in honest}
    rng = random.Random(seed)
    taus: list[float | None] = []
    kept: list[float] = []
    failed: list[tuple[int, str]] = []
    per_route: list[dict[str, Any]] = [
        {"scores": [], "ranks": [], "binding": 0, "voi": 0, "verdict": 0, "reclassed": 0} for _ in honest
    ]
    for d in range(1, draws + 1):
        results: list[Compiled] = []
        changes: list[Change] = []
        why = None
        for c in honest:
            route, change = perturb(c.route, classes[c.policy.sha256], rng, bounds)
            compiled, problem = _compile_quietly(session, route)
            if compiled is None:
                why = why or f"route {c.route.name}: {problem}"
                continue
            results.append(compiled)
            changes.append(change)
        if why is not None:
            failed.append((d, why))
            continue
        order = [order_value(c, key) for c in results]
        taus.append(kendall_tau_b(honest_order, order))
        ranks_now = {id(r.compiled): r.rank for r in rank(results, key)}
        drawn_ranks = [ranks_now[id(c)] for c in results]
        if q:
            kept.append(sum(1 for i in top if drawn_ranks[i] <= q) / q)
        for i, (h, c) in enumerate(zip(honest, results, strict=True)):
            acc = per_route[i]
            acc["scores"].append(c.numbers.score)
            acc["ranks"].append(drawn_ranks[i])
            hn, cn = h.numbers, c.numbers
            acc["binding"] += hn.transitions[hn.binding].name == cn.transitions[cn.binding].name
            assert hn.voi is not None and cn.voi is not None, "score_route computes the selector"
            acc["voi"] += hn.voi.selected == cn.voi.selected
            acc["verdict"] += h.decision.verdict == c.decision.verdict
            acc["reclassed"] += bool(changes[i].reclassed)
    routes = tuple(
        RouteStability(c.route.name, c.route.file, honest_ranks[i], c.numbers.score, tuple(acc["scores"]),
                       tuple(acc["ranks"]), acc["binding"], acc["voi"], acc["verdict"], acc["reclassed"])
        for i, (c, acc) in enumerate(zip(honest, per_route, strict=True))
    )
    return StabilityReport(draws, seed, bounds, key, tuple(taus), q, tuple(kept), routes, tuple(failed))


def stability_text(report: StabilityReport) -> str:
    """The text report: the rank stability, then one row per route in honest rank order."""
    doc = report.to_json()
    tau, top = doc["kendall_tau_b"], doc["top_quartile"]
    lines = [
        f"stability of {plural(doc['routes_ranked'], 'route')} over {doc['draws_used']} of "
        f"{plural(report.draws, 'draw')} "
        f"(seed {report.seed}; ranked by `{report.key}`)",
        f"  perturbed: estimates within their range; evidence weights ±{report.bounds.weight_spread:g} within "
        f"[0, 1]; class swapped within its category with probability {report.bounds.class_swap:g}",
    ]
    if doc["failed_draws"]:
        first = doc["failed_draws"][0]
        lines.append(f"  left out: {plural(len(doc['failed_draws']), 'draw')} that did not compile (first: draw "
                     f"{first['draw']}, {first['why']})")
    if tau["n"]:
        lines.append(f"  Kendall τ-b with the honest ranking: mean {tau['mean']:.3f}, range "
                     f"[{tau['min']:.3f}, {tau['max']:.3f}]")
    else:
        lines.append("  Kendall τ-b with the honest ranking: — (fewer than two distinct routes to order)")
    if top["size"] and top["n"]:
        lines.append(f"  top quartile ({plural(top['size'], 'route')}) kept: mean {top['mean']:.1%}, range "
                     f"[{top['min']:.1%}, {top['max']:.1%}]")
    else:
        lines.append("  top quartile kept: — (fewer than four routes)")
    rows = [("rank", "range", "route", "score", "min", "median", "max", "same sign", "binding kept")]
    for r in sorted(doc["routes"], key=lambda r: r["honest_rank"]):
        s = r["score"]
        if s["min"] is None:
            rows.append((str(r["honest_rank"]), "—", r["route"], money(s["honest"], 0), "—", "—", "—", "—", "—"))
            continue
        rows.append((str(r["honest_rank"]), f"{r['rank']['min']}–{r['rank']['max']}", r["route"], money(s["honest"], 0),
                     money(s["min"], 0), money(s["median"], 0), money(s["max"], 0),
                     rate_text(r["rates"]["same_sign"]["k"], r["rates"]["same_sign"]["n"]),
                     rate_text(r["rates"]["binding_kept"]["k"], r["rates"]["binding_kept"]["n"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines.append("")
    for row in rows:
        cells = [cell.ljust(w) if i == 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths,
                                                                                             strict=True))]
        lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines)

