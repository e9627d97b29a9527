"""The ranking packet: the JSON contract of DESIGN §10 (`pcsc compile --format json`).

Keys may be added, never renamed without a major version. Floats are Python's
shortest repr; nothing here depends on the platform.
"""

from __future__ import annotations

from typing import Any

from pcsc import __version__
from pcsc.diagnostics.model import Diagnostic
from pcsc.diagnostics.render import to_json
from pcsc.pipeline import Compiled
from pcsc.score.route import RouteNumbers

VERDICT_UNGATED = "ungated"


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
        "policy": policy_identity(c),
        "verdict": VERDICT_UNGATED,
        "score": _num(n.score),
        "ungated_score": _num(n.score),
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
        },
        "transitions": [
            {
                "name": t.name,
                "from": t.source,
                "to": t.target,
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
                "deltas": [
                    {"field": d.field, "from": _value(d.source), "to": _value(d.target), "material": d.material}
                    for d in t.deltas
                ],
            }
            for t, tr in zip(n.transitions, r.transitions, strict=True)
        ],
    }


def policy_identity(c: Compiled) -> dict[str, str]:
    return {"id": c.policy.policy.id, "version": c.policy.policy.version, "sha256": c.policy.sha256}


def compile_packet(
    compiled: list[Compiled], diagnostics: list[Diagnostic], inputs: list[tuple[str, str]]
) -> dict[str, Any]:
    policies = sorted({(c.policy.policy.id, c.policy.policy.version, c.policy.sha256) for c in compiled})
    policy: dict[str, str] | None = None
    if len(policies) == 1:
        policy = {"id": policies[0][0], "version": policies[0][1], "sha256": policies[0][2]}
    return {
        "pcsc": __version__,
        "policy": policy,
        "inputs": [{"path": p, "sha256": h} for p, h in inputs],
        "diagnostics": [to_json(d) for d in diagnostics],
        "routes": [route_packet(c) for c in compiled],
    }
