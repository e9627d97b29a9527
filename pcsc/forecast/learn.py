"""The learning loop (RouteCast §12.2): resolved outcomes propose a new policy version;
it is promoted only when it beats the current one on held-out resolved routes.
Frozen forecasts are never touched: everything here reads packets and writes a new
TOML file.

- **Fit.** Per reference class, the prior that, after each transition's own frozen W,
  best explains the outcomes: p' maximises
  Σ_j [y_j·log q_j + (1 − y_j)·log(1 − q_j)] + s·p·log p' + s·(1 − p)·log(1 − p')
  with q_j = clip(p'·W_j, ε, 1 − ε), over the n resolved (positive or negative) training
  transitions of that class (k of them positive), p the old prior and s = `strength`
  pseudo-transitions (a Beta penalty). With every W = 1 this is the beta-binomial
  update p' = (s·p + k) / (s + n), the *pooled* estimate, which is also reported:
  pooling raw success rates estimates p·mean(W), not p. The maximum is found on a grid
  of 1,000 points of (0, 1), refined by golden-section search. Unresolved and censored
  milestones carry no information and are left out. Classes without resolved
  transitions keep their p.
- **Split.** A route is held out when the first byte of SHA-256(route name) is below
  256·holdout; fit uses the other routes, compare the held-out ones, so the same
  routes are never used for both.
- **Gains and calibration** (`fit_policy`, optional): the reweighting gains refitted with
  the priors from each transition's frozen admitted evidence, and an isotonic or Platt
  map fitted on the training transitions' p (`pcsc.forecast.calibrate`).
- **Compare.** On held-out routes, each transition's p is recomputed under each
  policy from its frozen inputs: W from the packet's admitted evidence under the
  policy's reweighting (the frozen W when the packet lacks its evidence), p =
  clip(p_prior·W, 0, 1), then the policy's calibration map; the route score is
  re-folded with the frozen costs and value. Transition level: Brier and ECE against
  resolved milestones. Route level: AUC against route labels where both classes occur.
  NEW may be promoted when its Brier is lower, its AUC (where defined) not lower, its
  ECE not higher, and no held-out route's GATE verdict changes (the caller recompiles
  the routes from their frozen text and passes the verdicts; a route it could not
  recompile blocks promotion).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

import attrs

from pcsc.base.humanize import plural
from pcsc.forecast.calibrate import Bounds, GainCase, fit_gains, pava, platt_fit, weights_of
from pcsc.policy.model import Calibration, IsotonicMap, LoadedPolicy, PlattMap, Policy
from pcsc.score.calibration import calibrate
from pcsc.score.route import discount_factor, route_fold
from pcsc.score.units import credit_payoff


class Resolved(Protocol):
    @property
    def route(self) -> str: ...
    @property
    def transition(self) -> str: ...
    @property
    def status(self) -> str: ...


def held_out(route: str, holdout: float) -> bool:
    return hashlib.sha256(route.encode("utf-8")).digest()[0] < 256 * holdout


Split = Callable[[str], bool]  # route -> held out (graded by compare, not fitted on)


def hash_split(holdout: float) -> Split:
    """The default split: a route is held out when `held_out` says so."""
    return partial(_held_out_by_name, holdout=holdout)


def _held_out_by_name(route: str, *, holdout: float) -> bool:
    return held_out(route, holdout)


def cutoff_split(frozen_at: Mapping[str, str], cutoff: dt.date) -> Split:
    """A split in time: a route is held out when its forecast was frozen on or after
    ``cutoff`` (``frozen_at``: route -> UTC time, as the ledger stores it); a route whose
    freezing time is unknown is held out, never fitted on."""
    def split(route: str) -> bool:
        when = frozen_at.get(route)
        return when is None or dt.date.fromisoformat(when[:10]) >= cutoff
    return split


@attrs.frozen
class ClassFit:
    ref_class: str
    old_p: float
    new_p: float  # the W-aware estimate
    n: int  # resolved training transitions
    k: int  # of which positive
    pooled_p: float | None = None  # the beta-binomial update of the raw success rate, (s·p + k) / (s + n)


EPS = 1e-9  # a transition's p is kept in [EPS, 1 − EPS] so that every outcome has a finite log-likelihood
GRID = 1000
GOLDEN_TOL = 1e-12


def _log_posterior(p: float, ws: Sequence[float] | Any, ys: Sequence[bool] | Any, p0: float, strength: float) -> float:
    import numpy as np

    q = np.clip(p * np.asarray(ws, dtype=np.float64), EPS, 1 - EPS)
    y = np.asarray(ys, dtype=np.bool_)
    ll = float(np.log(q[y]).sum() + np.log1p(-q[~y]).sum())
    if p0 > 0:
        ll += strength * p0 * math.log(p)
    if p0 < 1:
        ll += strength * (1 - p0) * math.log1p(-p)
    return ll


def w_aware_prior(ws: Sequence[float] | Any, ys: Sequence[bool] | Any, p0: float, strength: float) -> float:
    """The p' in (0, 1) that maximises the penalised likelihood of outcomes ``ys`` when
    each transition succeeds with clip(p'·W, 0, 1) (the module docstring): the best of a
    grid of (0, 1), refined by golden-section search between its neighbours."""
    import numpy as np

    ws, ys = np.asarray(ws, dtype=np.float64), np.asarray(ys, dtype=np.bool_)  # converted once, not per point
    grid = [(i + 0.5) / GRID for i in range(GRID)]
    values = [_log_posterior(p, ws, ys, p0, strength) for p in grid]
    best = max(range(GRID), key=lambda i: values[i])
    lo, hi = (EPS if best == 0 else grid[best - 1]), (1 - EPS if best == GRID - 1 else grid[best + 1])
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = _log_posterior(a, ws, ys, p0, strength), _log_posterior(b, ws, ys, p0, strength)
    while hi - lo > GOLDEN_TOL:
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = _log_posterior(a, ws, ys, p0, strength)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = _log_posterior(b, ws, ys, p0, strength)
    p = (lo + hi) / 2
    return p if _log_posterior(p, ws, ys, p0, strength) >= values[best] else grid[best]


def _outcomes(packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
              keep: Any) -> list[tuple[Mapping[str, Any], Mapping[str, Any], bool]]:
    """(packet, transition, positive) for resolved milestones of routes ``keep`` accepts."""
    by_route = {p["route"]: p for p in packets}
    out = []
    for r in results:
        if r.status not in ("positive", "negative") or r.route not in by_route or not keep(r.route):
            continue
        packet = by_route[r.route]
        t = next((t for t in packet["transitions"] if t["name"] == r.transition), None)
        if t is not None:
            out.append((packet, t, r.status == "positive"))
    return out


def fit(policy: Policy, packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
        strength: float, holdout: float, split: Split | None = None) -> list[ClassFit]:
    """``split`` (the hash split of ``holdout`` by default) says which routes are held out."""
    if strength <= 0:
        raise ValueError("the prior strength must be positive")
    test = split or hash_split(holdout)
    seen: dict[str, tuple[list[float], list[bool]]] = {}
    for _, t, positive in _outcomes(packets, results, lambda r: not test(r)):
        ws, ys = seen.setdefault(t["class"], ([], []))
        ws.append(float(t["W"]))
        ys.append(positive)
    return class_fits(policy, seen, strength)


def evidence_weights(packet: Mapping[str, Any], transition: str,
                     policy: Policy) -> tuple[list[float], list[float]] | None:
    """The effective weights (weight × the policy's tier weight) of the frozen evidence
    items admitted when the packet was frozen that support and that contradict
    ``transition``; None when the packet does not carry its evidence (frozen before
    packets did)."""
    items = packet.get("evidence")
    if not isinstance(items, list):
        return None
    sup: list[float] = []
    con: list[float] = []
    for e in items:
        if not e.get("admitted", False):
            continue
        w = float(e["weight"]) * policy.evidence.tier_weight.get(str(e["tier"]), 0.0)
        if transition in e.get("supports", ()):
            sup.append(w)
        if transition in e.get("contradicts", ()):
            con.append(w)
    return sup, con


def weight_under(packet: Mapping[str, Any], t: Mapping[str, Any], policy: Policy) -> float:
    """A frozen transition's W under ``policy``'s reweighting, from the packet's admitted
    evidence items (as `reweight` computes it, exactly); the frozen W when the packet does
    not carry its evidence."""
    from pcsc.score.evidence import exact_W

    weights = evidence_weights(packet, t["name"], policy)
    if weights is None:
        return float(t["W"])
    sup, con = weights
    if not sup and not con:
        return 1.0
    return exact_W(sup, con, policy.reweighting)


def _gain_cases(rows: Sequence[tuple[Mapping[str, Any], Mapping[str, Any], bool]],
                policy: Policy) -> list[GainCase]:
    from pcsc.score.evidence import sat

    cases = []
    for packet, t, positive in rows:
        weights = evidence_weights(packet, t["name"], policy)
        if weights is None:
            cases.append(GainCase(t["class"], None, None, True, float(t["W"]), positive))
        else:
            sup, con = weights
            cases.append(GainCase(t["class"], sat(sup, policy.reweighting.decay), sat(con, policy.reweighting.decay),
                                  bool(sup or con), float(t["W"]), positive))
    return cases


@attrs.frozen
class CalibrationFit:
    method: str
    x: tuple[float, ...] = ()  # isotonic breakpoints
    y: tuple[float, ...] = ()
    a: float | None = None  # Platt coefficients
    b: float | None = None
    n: int = 0  # training transitions
    ece_before: float | None = None  # on the training transitions, before and after the map
    ece_after: float | None = None

    def as_policy(self) -> Calibration:
        if self.method == "isotonic":
            return Calibration("isotonic", isotonic=IsotonicMap(list(self.x), list(self.y)))
        assert self.a is not None and self.b is not None
        return Calibration("platt", platt=PlattMap(self.a, self.b))


@attrs.frozen
class Fitted:
    """What `fit_policy` found: the priors, and when asked the gains and the map."""

    classes: list[ClassFit]
    gains_old: tuple[float, float]
    gains_new: tuple[float, float] | None  # None unless the gains were fitted
    gain_strength: float | None
    calibration: CalibrationFit | None
    transitions: int  # resolved training transitions


GAIN_ROUNDS = 60


def fit_policy(policy: Policy, packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
               strength: float, holdout: float, *, gains: bool = False, gain_strength: float = 10.0,
               calibration: str | None = None, split: Split | None = None) -> Fitted:
    """The priors (`fit`), and when asked the reweighting gains (priors and gains refitted
    in turn until they settle) and a calibration map fitted on the training transitions'
    p = clip(p'·W', 0, 1) under the new priors and gains, as the new policy computes it."""
    if strength <= 0:
        raise ValueError("the prior strength must be positive")
    if gains and gain_strength <= 0:
        raise ValueError("the gain strength must be positive")
    if calibration not in (None, "isotonic", "platt"):
        raise ValueError(f"unknown calibration method {calibration!r}")
    test = split or hash_split(holdout)
    rows = _outcomes(packets, results, lambda r: not test(r))
    rw = policy.reweighting
    old_gains = (rw.corroborate_gain, rw.contradict_gain)
    new_gains: tuple[float, float] | None = None
    if not gains:
        classes = fit(policy, packets, results, strength, holdout, test)
    else:
        cases = _gain_cases(rows, policy)
        bounds = Bounds(rw.w_min, rw.w_max)
        g = old_gains
        for _ in range(GAIN_ROUNDS):
            ws = weights_of(cases, g[0], g[1], bounds)
            priors = _quick_priors(policy, cases, ws, strength)
            moved = fit_gains(cases, priors, bounds, old_gains, gain_strength, start=g, rounds=2)
            settled = abs(moved[0] - g[0]) < 1e-7 and abs(moved[1] - g[1]) < 1e-7
            g = moved
            if settled:
                break
        new_gains = (round(g[0], 6), round(g[1], 6))
        ws = weights_of(cases, new_gains[0], new_gains[1], bounds)
        classes = _priors_given(policy, cases, ws, strength)
    cal: CalibrationFit | None = None
    if calibration is not None and rows:
        from pcsc.forecast.metrics import ece

        fitted = _evolved(policy, classes, new_gains, None)
        raw = [min(max(fitted.priors[t["class"]].p * weight_under(packet, t, fitted), 0.0), 1.0)
               for packet, t, _ in rows]
        ys = [positive for _, _, positive in rows]
        if calibration == "isotonic":
            xs, vs = pava(raw, ys)
            cal = CalibrationFit("isotonic", tuple(xs), tuple(vs), n=len(rows))
        else:
            a, b = platt_fit(raw, ys)
            cal = CalibrationFit("platt", a=round(a, 9), b=round(b, 9), n=len(rows))
        mapped = [calibrate(p, cal.as_policy()) for p in raw]
        labels = [1 if y else 0 for y in ys]
        cal = attrs.evolve(cal, ece_before=ece(raw, labels).value, ece_after=ece(mapped, labels).value)
    return Fitted(classes, old_gains, new_gains, gain_strength if gains else None, cal, len(rows))


def _posterior_at(p: float, *, ws: Any, ys: Any, p0: float, strength: float) -> float:
    return _log_posterior(p, ws, ys, p0, strength)


def _quick_priors(policy: Policy, cases: Sequence[GainCase], ws: Sequence[float], strength: float) -> dict[str, float]:
    """Each class's W-aware prior by golden-section search alone (the log-posterior is
    unimodal in p), for the rounds in which gains and priors are refitted in turn; the
    priors written are `w_aware_prior`'s, once the gains have settled."""
    import numpy as np

    from pcsc.forecast.calibrate import golden

    out = {ref: prior.p for ref, prior in policy.priors.items()}
    for ref_class, prior in policy.priors.items():
        picked = [(w, c.positive) for c, w in zip(cases, ws, strict=True) if c.ref_class == ref_class]
        if picked:
            w_arr = np.array([w for w, _ in picked], dtype=np.float64)
            y_arr = np.array([y for _, y in picked], dtype=np.bool_)
            posterior = partial(_posterior_at, ws=w_arr, ys=y_arr, p0=prior.p, strength=strength)
            out[ref_class] = golden(posterior, EPS, 1 - EPS, 1e-10)[0]
    return out


def _priors_given(policy: Policy, cases: Sequence[GainCase], ws: Sequence[float], strength: float) -> list[ClassFit]:
    seen: dict[str, tuple[list[float], list[bool]]] = {}
    for c, w in zip(cases, ws, strict=True):
        got = seen.setdefault(c.ref_class, ([], []))
        got[0].append(w)
        got[1].append(c.positive)
    return class_fits(policy, seen, strength)


def _evolved(policy: Policy, classes: Sequence[ClassFit], gains: tuple[float, float] | None,
             calibration: Calibration | None) -> Policy:
    """``policy`` with the fitted priors (rounded as written), gains and map."""
    priors = {f.ref_class: attrs.evolve(policy.priors[f.ref_class], p=round(f.new_p, 6))
              for f in classes if f.n > 0}
    out = attrs.evolve(policy, priors={**policy.priors, **priors}, calibration=calibration or policy.calibration)
    if gains is not None:
        out = attrs.evolve(out, reweighting=attrs.evolve(policy.reweighting, corroborate_gain=gains[0],
                                                         contradict_gain=gains[1]))
    return out


def fitted_policy_document(old: LoadedPolicy, version: str, fits: Sequence[ClassFit], strength: float,
                           ledger: str, when: dt.date, holdout: float = 0.3,
                           fitted: Fitted | None = None) -> dict[str, Any]:
    """The new version as a TOML document: `extends` the old one, overriding only the
    priors that resolved transitions moved (and the gains and calibration map when they
    were fitted), and recording the hold-out split in `[fit]`."""
    priors = {
        f.ref_class: {
            "p": round(f.new_p, 6),
            "source": (f"fitted {when.isoformat()}: the prior that best explains the outcomes after each "
                       f"transition's W, Beta penalty from {old.ref} p={f.old_p} with strength {strength:g}; "
                       f"{f.k} of {plural(f.n, 'resolved transition')} positive ({ledger}); pooled estimate "
                       f"{f.pooled_p:.6f}"),
        }
        for f in fits
        if f.n > 0
    }
    what = "priors" + ("" if fitted is None or fitted.gains_new is None else ", reweighting gains") + (
        "" if fitted is None or fitted.calibration is None else ", calibration map")
    doc: dict[str, Any] = {
        "policy": {
            "id": old.policy.id,
            "version": version,
            "extends": old.ref,
            "coverage": old.policy.policy.coverage,
            "description": f"{what} refitted from {ledger} on {when.isoformat()}",
        }
    }
    if priors:
        doc["priors"] = priors
    record: dict[str, Any] = {"holdout": holdout, "strength": strength}
    if fitted is not None and fitted.gains_new is not None:
        doc["reweighting"] = {"corroborate_gain": fitted.gains_new[0], "contradict_gain": fitted.gains_new[1]}
        record["gain_strength"] = fitted.gain_strength
    cal = None if fitted is None else fitted.calibration
    if cal is not None:
        source = (f"fitted {when.isoformat()} ({cal.method}) on {plural(cal.n, 'resolved training transition')} of "
                  f"{ledger}: training ECE {cal.ece_before:.6f} before the map, {cal.ece_after:.6f} after")
        table: dict[str, Any] = {"method": cal.method, "source": source}
        if cal.method == "isotonic":
            table["isotonic"] = {"x": list(cal.x), "y": list(cal.y)}
        else:
            table["platt"] = {"a": cal.a, "b": cal.b}
        doc["calibration"] = table
        record["calibration"] = cal.method
    doc["fit"] = record
    return doc


@attrs.frozen
class VerdictFlip:
    """A held-out route whose GATE verdict differs between the two policies."""

    route: str
    old: str
    new: str


@attrs.frozen
class Comparison:
    routes: int
    transitions: int
    brier_old: float | None
    brier_new: float | None
    auc_old: float | None
    auc_new: float | None
    promote: bool
    reason: str
    ece_old: float | None = None
    ece_new: float | None = None
    gate_checked: int = 0  # held-out routes recompiled under both policies
    gate_unchecked: tuple[tuple[str, str], ...] = ()  # (route, why it could not be recompiled)
    verdict_changes: tuple[VerdictFlip, ...] = ()
    regressions: tuple[str, ...] = ()  # each reason NEW is not promoted, in words
    cases: int = 0  # held-out routes with a resolved outcome (label or milestone)
    training_cases: int = 0  # the same count on the other side of the split
    labelled: int = 0  # held-out routes with a route label (what the AUC is computed on)
    min_cases: int = 0


class ClassNotInPolicy(Exception):
    """A frozen forecast's reference class that a policy it is re-scored under has no prior for."""

    def __init__(self, ref_class: str, policy: Policy) -> None:
        super().__init__(ref_class)
        self.ref_class = ref_class
        self.policy = f"{policy.policy.id}@{policy.policy.version}"


def rescore(packet: Mapping[str, Any], policy: Policy) -> tuple[list[float], float]:
    """Each transition's p under ``policy`` from its frozen inputs, and the re-folded score:
    p = clip(p_prior·W, 0, 1) with W recomputed from the frozen admitted evidence under the
    policy's reweighting (the frozen W when the packet lacks its evidence), then the
    policy's calibration map, if any. The score is the policy's fold: discounted along the
    frozen horizons and with the option to stop as its `[fold]` says, and the
    series-parallel fold of the frozen `graph` shape for a route that forks and joins.
    ClassNotInPolicy if ``policy`` has no prior for a transition's class."""
    ps = []
    for t in packet["transitions"]:
        prior = policy.priors.get(t["class"])
        if prior is None:
            raise ClassNotInPolicy(t["class"], policy)
        p = min(max(prior.p * weight_under(packet, t, policy), 0.0), 1.0)
        if policy.calibration is not None:
            p = calibrate(p, policy.calibration)
        ps.append(p)
    return ps, refold(packet, ps, policy)


def refold(packet: Mapping[str, Any], ps: Sequence[float], policy: Policy) -> float:
    """R_0 of a frozen packet with these p under ``policy``'s fold (docs/folds.md)."""
    ts = packet["transitions"]
    cs = [float(t["c"]) for t in ts]
    spec = policy.fold
    ds = [discount_factor(spec.discount, None if t.get("horizon") is None
                          else (t["horizon"]["amount"], t["horizon"]["unit"])) for t in ts]
    graph = packet.get("graph")
    if graph is None:  # a chain: the fold reads no names or states
        return route_fold(spec, None, [], [], [], list(ps), cs, ds, float(packet["value"]),
                          packet_payoffs(packet, policy)).score
    from pcsc.lang.ir import Shape
    from pcsc.lang.serialize import converter

    shape: Shape = converter().get_structure_hook(Shape)(graph["shape"], Shape)
    return route_fold(spec, shape, [t["name"] for t in ts], [t["from"] for t in ts], [t["to"] for t in ts],
                      list(ps), cs, ds, float(packet["value"]), packet_payoffs(packet, policy)).score


def packet_payoffs(packet: Mapping[str, Any], policy: Policy) -> list[float] | None:
    """Each transition's payoff as ``policy`` credits it (the written amount, capped by its
    `[payoffs] max_usd`), that of the state it reaches, from a packet's `payoffs`; None when
    the route has none."""
    rows = packet.get("payoffs")
    if rows is None:
        return None
    # a join's once, for every transition into it; `unit` (the fold's own) when not written in usd
    written = {row["state"]: (float(row["written"]), "unit" in row) for row in rows}
    return [credit_payoff(*written[t["to"]], policy)[0] if t["to"] in written else 0.0 for t in packet["transitions"]]


def held_out_routes(packets: Sequence[Mapping[str, Any]], holdout: float, split: Split | None = None) -> list[str]:
    """The routes `compare` grades on, in the order of ``packets``."""
    test = split or hash_split(holdout)
    return [p["route"] for p in packets if test(p["route"])]


MIN_CASES = 10  # held-out cases below which `policy compare` promotes nothing (its --min-cases default)


def _cases(packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved], labels: Mapping[str, bool]) -> int:
    """The routes of ``packets`` with a route label or a resolved milestone: what a metric can grade."""
    names = {p["route"] for p in packets}
    graded = {r.route for r in results if r.status in ("positive", "negative") and r.route in names}
    return len(graded | (names & set(labels)))


ECE_TOLERANCE = 1e-12  # an ECE counts as worse only beyond float noise (equal rates summed differently)


def compare(old: Policy, new: Policy, packets: Sequence[Mapping[str, Any]], results: Iterable[Resolved],
            labels: Mapping[str, bool], holdout: float,
            verdicts: Mapping[str, tuple[str, str]] | None = None,
            unchecked: Sequence[tuple[str, str]] = (), *, split: Split | None = None,
            min_cases: int = 0) -> Comparison:
    """``verdicts``: each held-out route's GATE verdict under OLD and NEW, recompiled from
    its frozen text by the caller; ``unchecked``: held-out routes that could not be, with
    why; ``split``: which routes are held out (the hash split of ``holdout`` by default).
    NEW is promoted only when its held-out Brier is lower, its route AUC is defined and not
    lower, its ECE not higher, no held-out route's GATE verdict changes, every held-out
    route's verdict was checked, and at least ``min_cases`` held-out routes were graded.
    An undefined metric (one class, no case) is never a pass."""
    from pcsc.forecast.metrics import auc, brier, ece

    is_test = split or hash_split(holdout)
    results = list(results)
    test = [p for p in packets if is_test(p["route"])]
    train = [p for p in packets if not is_test(p["route"])]
    test_cases, train_cases = _cases(test, results, labels), _cases(train, results, labels)
    rows = _outcomes(test, results, lambda r: True)
    ys = [1.0 if positive else 0.0 for _, _, positive in rows]
    p_old, p_new = [], []
    for packet, t, _ in rows:
        index = [x["name"] for x in packet["transitions"]].index(t["name"])
        p_old.append(rescore(packet, old)[0][index])
        p_new.append(rescore(packet, new)[0][index])
    b_old = float(brier(p_old, ys)) if rows else None
    b_new = float(brier(p_new, ys)) if rows else None
    e_old = ece(p_old, ys).value if rows else None
    e_new = ece(p_new, ys).value if rows else None
    labelled = [p for p in test if p["route"] in labels]
    y_route = [1 if labels[p["route"]] else 0 for p in labelled]
    a_old = a_new = None
    if 0 < sum(y_route) < len(y_route):
        a_old = float(auc([rescore(p, old)[1] for p in labelled], y_route))
        a_new = float(auc([rescore(p, new)[1] for p in labelled], y_route))
    flips = tuple(VerdictFlip(route, o, n) for route, (o, n) in sorted((verdicts or {}).items()) if o != n)
    regressions: list[str] = []
    if b_old is None or b_new is None:
        regressions.append("no resolved held-out transition: nothing to compare on")
    elif b_new >= b_old:
        regressions.append(f"held-out Brier does not improve ({b_new:.4f} vs {b_old:.4f})")
    if a_old is None or a_new is None:
        regressions.append(f"held-out route AUC undefined ({plural(len(labelled), 'labelled held-out route')}, "
                           f"{sum(y_route)} positive): an undefined metric is not a pass")
    elif a_new < a_old:
        regressions.append(f"held-out AUC falls ({a_new:.3f} vs {a_old:.3f})")
    if test_cases < min_cases:
        regressions.append(f"{plural(test_cases, 'held-out case')} (routes with a resolved outcome), fewer than "
                           f"the {min_cases} required")
    if e_old is not None and e_new is not None and e_new > e_old + ECE_TOLERANCE:
        regressions.append(f"held-out ECE worsens ({e_new:.4f} vs {e_old:.4f})")
    regressions += [f"GATE verdict of held-out route `{f.route}` changes ({f.old} -> {f.new})" for f in flips]
    regressions += [f"GATE verdict of held-out route `{route}` not checked: {why}" for route, why in unchecked]
    if regressions:
        promote, reason = False, "; ".join(regressions)
    else:
        promote, reason = True, f"held-out Brier improves ({b_new:.4f} vs {b_old:.4f})" + (
            f" and AUC does not fall ({a_new:.3f} vs {a_old:.3f})") + (
            f", ECE does not worsen ({e_new:.4f} vs {e_old:.4f})") + (
            "" if verdicts is None else f", no GATE verdict changes on {plural(len(verdicts), 'held-out route')}")
    return Comparison(len(test), len(rows), b_old, b_new, a_old, a_new, promote, reason, e_old, e_new,
                      0 if verdicts is None else len(verdicts), tuple(unchecked), flips, tuple(regressions),
                      test_cases, train_cases, len(labelled), min_cases)


def class_fits(policy: Policy, seen: Mapping[str, tuple[list[float], list[bool]]], strength: float) -> list[ClassFit]:
    """Per class of ``policy``, the W-aware prior and the pooled estimate from the
    (W, outcome) pairs ``seen`` of its training transitions; a class without any keeps its p."""
    fits = []
    for ref_class, prior in sorted(policy.priors.items()):
        ws, ys = seen.get(ref_class, ([], []))
        n, k = len(ys), sum(ys)
        pooled = (strength * prior.p + k) / (strength + n)
        new_p = w_aware_prior(ws, ys, prior.p, strength) if n else prior.p
        fits.append(ClassFit(ref_class, prior.p, new_p, n, k, pooled))
    return fits
