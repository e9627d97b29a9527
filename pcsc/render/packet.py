"""The ranking packet: the JSON payloads of `compile`, `gate` and `seams`.

Keys may be added, never renamed without a major version. Floats are Python's
shortest repr; nothing here depends on the platform.
"""

from __future__ import annotations

from typing import Any

import attrs

from pcsc.analysis.seams.analysis import RouteSeams
from pcsc.analysis.seams.detectors import JUMP_MULTIPLE
from pcsc.analysis.seams.experiment import PAPER, Experiment, Summary, rates, summary_rates, sweep_rates
from pcsc.analysis.seams.identity import fraction_text
from pcsc.base.codehash import scorer_identity
from pcsc.base.stats import rate
from pcsc.compiler.session import Compiled, coverage_mode
from pcsc.coverage import DeltaCoverage, payoff_credits
from pcsc.diagnostics.model import Finding, condense
from pcsc.lang.ir import Shape
from pcsc.lang.printer import expression
from pcsc.policy.model import Found
from pcsc.render.diagnostics import to_json
from pcsc.score.cost import Delta
from pcsc.score.route import RouteNumbers
from pcsc.score.units import unit_key
from pcsc.score.vision import vision_inputs


def _num(x: float) -> float:
    return float(x)


def _value(v: float | bool) -> float | bool:
    return v if isinstance(v, bool) else float(v)


def route_packet(c: Compiled) -> dict[str, Any]:
    n: RouteNumbers = c.numbers
    r = c.route
    binding = n.transitions[n.binding]
    return {
        "route": r.name,
        "title": r.title,
        "file": r.file,
        "as_of": r.as_of.isoformat(),
        "fields": [{"name": f.name, "type": f.type} for f in r.fields],
        "policy": policy_identity(c),
        "scorer": scorer_identity(),
        "policy_found": policy_found(c),
        "libraries": library_uses(c),
        "local_libraries": c.policy.policy.policy.local_libraries,
        "verdict": c.decision.verdict,
        "score": None if c.decision.score is None else _num(c.decision.score),
        "ungated_score": _num(n.score),
        "coverage": coverage_mode(c),
        "value": _num(n.value),
        "flat_product": _num(n.flat_product),
        "criteria_score": None if n.criteria_score is None else _num(n.criteria_score),
        "bucket": n.bucket,
        "eligible": n.eligible,
        "gates": [{"id": g.id, "kind": g.kind, "passed": g.passed} for g in n.gates],
        "binding": {
            "transition": binding.name,
            "U": _num(binding.U),
            "D": _num(binding.D),
            "learning_cost": None if binding.learning_cost is None else _num(binding.learning_cost),
            **({} if n.binding_by_tie is None else {"by_tie": n.binding_by_tie}),
        },
        "voi": voi_entry(n),
        "transitions": [
            {
                "name": t.name,
                "from": t.source,
                "to": t.target,
                "actor": tr.actor,
                "mechanism": tr.mechanism,
                "asset": tr.asset,
                "learning_cost": None if tr.learning_cost is None else _num(tr.learning_cost),
                "class": t.ref_class,
                "p_prior": _num(t.p_prior),
                "W": _num(t.reweight.W),
                "p": _num(t.p),
                "budget": _num(t.cost.budget),
                "floor_class": _num(t.cost.floor_class),
                "floor_delta": _num(t.cost.floor_delta),
                "c": _num(t.cost.c),
                "cost_bound_by": t.cost.bound_by,
                "U": _num(t.U),
                "D": _num(t.D),
                "R_next": _num(t.R_next),
                "due": (tr.due.isoformat() if tr.due else None),
                "horizon": None if tr.horizon is None else {"amount": tr.horizon[0], "unit": tr.horizon[1]},
                "threshold": None if tr.threshold_text is None else expression(tr.threshold_text),
                "kill": None if tr.kill_text is None else expression(tr.kill_text),
                **({} if tr.kill_by is None else {"kill_by": tr.kill_by.isoformat()}),
                "deltas": [_delta(c, t.name, d) for d in t.deltas],
                **({} if t.p_raw is None else {"p_raw": _num(t.p_raw)}),
            }
            for t, tr in zip(n.transitions, r.transitions, strict=True)
        ],
        "uncovered": [_uncovered(u) for u in c.coverage.uncovered] if c.coverage else [],
        **refusal_entry(c),
        "evidence": evidence_items(c),
        "windows": list(c.policy.policy.forecast.windows),
        **fold_entry(n),
        **calibration_entry(c),
        **graph_entry(n),
        **payoffs_entry(c),
        **units_entry(c),
    }


def payoffs_entry(c: Compiled) -> dict[str, Any]:
    """`payoffs` in the packet of a route whose states carry payoffs (absent otherwise, so
    other packets are unchanged): each payoff as written and credited, and whether DOCK
    credits it (with the reason when it does not)."""
    if c.numbers.payoffs is None:
        return {}
    return {"payoffs": [
        {"state": p.state, "transition": p.transition, "written": _num(p.written), "credited": _num(p.credited),
         "bound_by": p.bound_by, "covered": p.covered, "removed_by_dock": p.reason,
         **({} if p.unit == "usd" else {"unit": p.unit})}
        for p in payoff_credits(c.numbers, c.coverage)
    ]}


def units_entry(c: Compiled) -> dict[str, Any]:
    """Under a policy that keeps its fold in another unit than usd, or computes V by
    another formula: the unit every amount of the route is in (`unit`; absent: usd),
    the rate its usd amounts were read at, and the formula with the values it read."""
    pol = c.policy.policy
    out: dict[str, Any] = {}
    if not pol.units.is_default:
        out["unit"] = pol.units.fold
        out["usd_rate"] = pol.units.rate("usd")
    if not pol.vision.is_default:
        out["vision"] = {"value": pol.vision.value,
                         "inputs": {k: _num(v) for k, v in vision_inputs(c.route.vision, pol).items()}}
    return out


def voi_entry(n: RouteNumbers) -> dict[str, Any]:
    """The value-of-information selector beside the binding transition (`pcsc.score.voi`):
    the transition it selects (None: none worth learning), whether that is the binding
    transition, and each transition's EVI, learning cost and net VOI."""
    v = n.voi
    assert v is not None, "score_route computes the selector"
    selected = None if v.selected is None else v.rows[v.selected].name
    return {
        "selected": selected,
        "binding": n.transitions[n.binding].name,
        "agrees": selected == n.transitions[n.binding].name,
        "now": _num(v.now),
        "transitions": [
            {
                "name": row.name,
                "values": [_num(q) for q in row.values],
                "spread": row.spread,
                "scale": _num(row.scale),
                "evi": _num(row.evi),
                "learning_cost": _num(row.learning_cost),
                "learning_cost_stated": row.cost_stated,
                "voi": _num(row.voi),
            }
            for row in v.rows
        ],
    }


def graph_entry(n: RouteNumbers) -> dict[str, Any]:
    """`graph` in the packet of a route that forks and joins (absent for a chain, so chain
    packets are unchanged): its series-parallel shape, the value R at each state, and
    each transition's reach (docs/graphs.md)."""
    route = n.route
    if route.shape is None:
        return {}
    from pcsc.lang.serialize import converter

    return {
        "graph": {
            "shape": converter().unstructure(route.shape, Shape),
            "states": [{"name": s.name, "R": _num(r)} for s, r in zip(route.states, n.R, strict=True)],
            "reach": {t.name: _num(t.reach) for t in n.transitions},
        }
    }


def evidence_items(c: Compiled) -> list[dict[str, Any]]:
    """Every evidence item as written, with whether it counts toward W and, if not, why."""
    from pcsc.score.evidence import effective_weight, exclusions

    policy = c.policy.policy
    excluded = exclusions(c.route.evidence, c.route.as_of, policy)
    items = []
    for e in c.route.evidence:
        why = excluded.get(e.name)
        direction = ("supports" if e.supports else "") + ("+contradicts" if e.contradicts else "")
        items.append({
            "name": e.name,
            "source": e.source,
            "captured": None if e.captured is None else e.captured.isoformat(),
            "tier": e.tier,
            "weight": _num(e.weight),
            "effective_weight": None if why is not None else _num(effective_weight(e, policy)),
            "direction": direction.removeprefix("+") or "none",
            "supports": list(e.supports),
            "contradicts": list(e.contradicts),
            "excerpt": e.excerpt,
            "unverified": e.unverified,
            "admitted": why is None,
            "excluded": None if why is None else {
                "kind": why.kind, "reason": why.reason, "duplicate_of": why.duplicate_of,
            },
        })
    return items


def calibration_entry(c: Compiled) -> dict[str, Any]:
    """`calibration` in a route's packet when its policy calibrates p (absent otherwise, so
    packets without a map are unchanged): the method; each transition's `p` is then the
    calibrated p and `p_raw` the p before the map."""
    cal = c.policy.policy.calibration
    return {} if cal is None else {"calibration": {"method": cal.method}}


def fold_entry(n: RouteNumbers) -> dict[str, Any]:
    """`fold` in a route's packet when its policy's fold is not the paper's (absent under
    the default, so default packets are unchanged): the rate, the option to stop, and
    the discount factor d_i of each transition when the rate is above 0."""
    if n.fold.is_default:
        return {}
    entry: dict[str, Any] = {"discount": _num(n.fold.discount), "abandonment": n.fold.abandonment}
    if n.fold.discount > 0:
        entry["d"] = [_num(t.d) for t in n.transitions]
    if n.fold.abandonment:
        entry["stops"] = [t.name for t in n.transitions if t.stops]
    return {"fold": entry}


def _delta(c: Compiled, transition: str, d: Delta) -> dict[str, Any]:
    row: dict[str, Any] = {"field": d.field, "from": _value(d.source), "to": _value(d.target), "material": d.material}
    if c.coverage is None or not d.material:
        row["covered"], row["by"] = None, None
    else:
        cov = next(x for x in c.coverage.for_transition(transition) if x.delta.field == d.field)
        row["covered"], row["by"] = cov.covered, cov.by
    return row


def refusal_entry(c: Compiled) -> dict[str, Any]:
    """`not_admitted` (changes a transition's class does not admit) and `registry` (the
    route against its gold registry), present only when the policy has admission rules
    or a registry mode, so packets under other policies keep their bytes."""
    policy, cov = c.policy.policy, c.coverage
    out: dict[str, Any] = {}
    if policy.admission:
        out["not_admitted"] = [] if cov is None else [
            {"transition": a.transition, "class": a.ref_class, "field": a.field, "check": a.check,
             "reason": a.reason, "file": a.span.file, "line": a.span.line, "column": a.span.column}
            for a in cov.admission
        ]
    if policy.coverage.registry != "off":
        out["registry"] = {
            "mode": policy.coverage.registry,
            "findings": [] if cov is None else [
                {"kind": f.kind, "state": f.state, "field": f.field, "message": f.message,
                 "file": f.span.file, "line": f.span.line}
                for f in cov.registry
            ],
        }
    return out


def _uncovered(u: DeltaCoverage) -> dict[str, Any]:
    return {
        "transition": u.transition,
        "field": u.delta.field,
        "from": _value(u.delta.source),
        "to": _value(u.delta.target),
        "tried": [
            {
                "obligation": a.obligation,
                "claimed": a.claimed,
                "failed": [
                    {"require": f.require, "line": f.span.line, "file": f.span.file, "reason": f.reason}
                    for f in a.failed
                ],
            }
            for a in u.tried
        ],
    }


def policy_identity(c: Compiled) -> dict[str, str]:
    return {"id": c.policy.policy.id, "version": c.policy.policy.version, "sha256": c.policy.sha256}


def library_uses(c: Compiled) -> list[dict[str, Any]]:
    """The libraries a route used, each with the hash of its file's text and of its
    canonical text, and the pin that admitted it; ``file`` is shown for a library that
    is not shipped, and ``replaces`` marks a local library that the policy's
    `local_libraries = true` let replace a pinned or shipped one."""
    return [
        {
            "name": u.name,
            "version": u.version,
            "sha256": u.sha256,
            "canonical_sha256": u.canonical_sha256,
            "pin": u.pin.as_json(),
            "shipped": u.shipped,
            "file": None if u.shipped else u.file,
            "replaces": u.replaces,
            "found": (u.found or Found("search path", u.file)).as_json(),
        }
        for u in c.libraries
    ]


def policy_found(c: Compiled) -> list[dict[str, str | None]]:
    """Where the route's policy, then each policy it extends, was found: shipped, a
    folder of the command line, a configuration file's `policy_path` (named), …"""
    return [{"policy": ref, **found.as_json()} for ref, found in c.policy.found]


def compile_packet(compiled: list[Compiled], diagnostics: list[Finding]) -> dict[str, Any]:
    """The payload of `pcsc compile --format json` (the envelope adds pcsc, schema, inputs);
    a diagnostic repeated on its line is given once with its count, as every command does."""
    policies = sorted({(c.policy.policy.id, c.policy.policy.version, c.policy.sha256) for c in compiled})
    policy: dict[str, str] | None = None
    if len(policies) == 1:
        policy = {"id": policies[0][0], "version": policies[0][1], "sha256": policies[0][2]}
    return {
        "policy": policy,
        "diagnostics": [to_json(d) for d in condense(diagnostics)],
        "routes": [route_packet(c) for c in compiled],
    }


def seams_packet(results: list[RouteSeams], summary: Summary, exp: Experiment | None) -> dict[str, Any]:
    """The payload of `pcsc seams --format json`. Exact values are `"numerator/denominator"`."""
    routes = []
    for r in results:
        c = r.compiled
        seams = []
        for s in r.seams:
            i, arm = s.identity, s.pipeline
            seams.append({
                "k": s.k,
                "transition": s.transition,
                "delta": float(i.delta_formula),
                "delta_exact": fraction_text(i.delta_formula),
                "delta_refold": fraction_text(i.delta_refold),
                "identity_holds": i.identity_holds,
                "symbolically_verified": s.symbolically_verified,
                "threshold": None if i.threshold is None else float(i.threshold),
                "R_next": float(i.R_next),
                "sign_matches": i.sign_matches,
                "removed_cost": float(i.removed_cost),
                **({} if c.numbers.payoffs is None else {"removed_payoff": float(i.removed_payoff)}),
                "retained_value": float(i.retained_value),
                "silence_rewarded": i.silence_rewarded,
                **({} if i.fold == "chain" else {"fold": i.fold, "case": i.case}),
                "pipeline": None if arm is None else {
                    "delta": arm.delta,
                    "drift": bool(arm.drifted),
                    "drifted": [str(d) for d in arm.drifted],
                    "verdict": arm.verdict,
                    "gate": arm.gate.verdict,
                    "dock": {"verdict": arm.dock.verdict, "score": arm.dock.score},
                    "ungated_score": arm.ungated_score,
                    "uncovered": [{"transition": t, "field": f} for t, f in arm.uncovered],
                    "failed_requires": list(arm.failed_requires),
                },
            })
        routes.append({
            "route": c.route.name,
            "file": c.route.file,
            **unit_key(c.policy.policy),
            "policy": policy_identity(c),
            "score": c.numbers.score,
            "verdict": c.decision.verdict,
            "seams": seams,
        })
    summary_out: dict[str, Any] = attrs.asdict(summary)
    summary_out["rates"] = {name: rate(k, n) for name, (k, n) in summary_rates(summary).items()}
    out: dict[str, Any] = {"routes": routes, "summary": summary_out}
    if exp is not None:
        p0 = exp.phase0
        out["experiment"] = {
            "modes": [attrs.asdict(m) for m in exp.modes],
            "splices": exp.splices,
            "beats_with_delta_floors": exp.beats_with_floors,
            "beats_without_delta_floors": exp.beats_without_floors,
            "rates": {name: rate(k, n) for name, (k, n) in rates(exp).items()},
            "paper": {name: rate(f.k, f.n) for name, f in PAPER.items() if f.k is not None},
            "paper_units": {name: {"n": f.n, "unit": f.unit} for name, f in PAPER.items()},
            "ladder": {
                **attrs.asdict(exp.ladder),
                "jump_multiple": JUMP_MULTIPLE,
            },
            "value_sweep": [
                {**attrs.asdict(row), "rates": {name: rate(k, n) for name, (k, n) in sweep_rates(row).items()}}
                for row in exp.value_sweep
            ],
            "phase0": {
                "seed": p0.seed,
                "arms": [{**attrs.asdict(a), "sign_flip": a.sign_flip, "zero_drift_flip": a.zero_drift_flip}
                         for a in p0.arms],
                "tallies": [attrs.asdict(t) for t in p0.tallies],
            },
        }
    return out


def gate_packet(compiled: list[Compiled]) -> dict[str, Any]:
    return {
        "routes": [
            {
                "route": c.route.name,
                "file": c.route.file,
                "policy": policy_identity(c),
                "policy_found": policy_found(c),
                "verdict": c.decision.verdict,
                "coverage": coverage_mode(c),
                "uncovered": [_uncovered(u) for u in c.coverage.uncovered] if c.coverage else [],
                **refusal_entry(c),
            }
            for c in compiled
        ],
    }
