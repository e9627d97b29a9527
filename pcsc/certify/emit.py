"""Decision certificates: the derivation of every compiled route, for `pcsc verify-cert`.

A certificate records, per route, every number with the rule that produced it and its
operands (`steps`), every coverage decision with each `require` line evaluated and its
operands (`coverage`), and the verdict; and, for the whole run, the hashes of the
route files, the libraries and the policy's canonical document (with the files it
was read from) and the what-if overrides. Paths are relative to the certificate's own
folder (or to the shipped `obligations/` and `policies/`), so the certificate is
byte-identical wherever the same files are compiled. The format is in
docs/decisions.md; `pcsc.certify.check` checks it with its own arithmetic.

Every number is `{"f": float, "q": "num/den"}`: the float the compiler computed and
its exact rational value. Rules the compiler computes exactly and rounds once (sat,
W, the delta floor price) also carry `"exact"`, the unrounded rational. An operand
taken from another step carries `"step"`; one taken from the policy carries
`"policy"`, its key path; one from the route carries `"route"`. What the route's
author wrote is also bound to the statement that writes it (`"written"`: its line,
column, end and text in the route file), which the checker reads there again.


Each route records the fold it was scored under (`fold`: the policy's discount rate and
option to stop); under a `[fold]` the steps carry each transition's discount factor d
(rate, horizon amount and unit), R with d and, with the option to stop, max(0, ·), where
the planner stops and whether it walks each stage; a graph route's blocks carry D too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from pcsc._version import __version__
from pcsc.base import canonical
from pcsc.base.files import Unreadable, read_text
from pcsc.base.resources import data_dir
from pcsc.compiler.session import Compiled
from pcsc.coverage.discharge import _TransitionContext, discharge_route
from pcsc.diagnostics.model import Span
from pcsc.lang.interp import EvalError, Interpreter, truthy
from pcsc.lang.ir import Evidence, Require
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.names import split_policy_ref
from pcsc.lang.ir.visit import walk
from pcsc.lang.ir.vocabulary import REQUIRE_NAMES
from pcsc.policy.load import PolicyStore
from pcsc.policy.model import LoadedPolicy
from pcsc.score.cost import Delta, deltas
from pcsc.score.evidence import admissible, exact_sat
from pcsc.score.fold import chain_fold
from pcsc.score.route import RouteNumbers, gate_names, uncovered_before
from pcsc.score.units import usd_rate

FORMAT = "pcsc-decision-certificate"
VERSION = 8  # 2: gate rules and require lines carry their expression and typed operands; 3: the policy's fold;
# 4: every number the route's author wrote is bound to its place in the route file (`written`);
# 5: each operand taken from a step must name the step its rule reads; the states' field values are bound
# to the route file and the `material` amounts to the library file; 6: a require line's `horizon` and
# duration literals are in days; 7: the decision records where its mode came from (`mode_source`) and the
# policy's mode it was lowered from (`lowered_from`); the coverage rows, the admissible evidence, the steps,
# libraries and routes are recomputed; 8: payoffs along the way on chains and graphs (`v` steps and the rules
# that read them), and a gold registry's findings recorded under `report` too, each derived again


class CertificateError(Exception):
    """The run cannot be certified (e.g. a route read from standard input)."""


def q(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


#: The rules of a policy's own vision formula and of a budget read at the fold's rate.
VISION_RULE = "V = the policy's [vision] value over the vision's fields, a usd field × the rate"
BUDGET_AT_RATE_RULE = "budget = (Σ count × unit cost) × rate"


def num(x: float | int, **where: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"f": float(x), "q": q(Fraction(float(x)))}
    out.update(where)
    return out


def val(v: Any) -> dict[str, Any]:
    """A value that is not a number (a name, a bool, an index, nothing)."""
    return {"v": v}


def _jsonable(v: Any) -> Any:
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float):
        return float(v)
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    return str(v)


# ---------------------------------------------------------------------- files
def _where(path: Path, cert_dir: Path) -> dict[str, str]:
    real = path.resolve()
    for base, name in (("shipped-obligations", "obligations"), ("shipped-policies", "policies")):
        root = data_dir(name).resolve()
        if real.is_relative_to(root):
            return {"base": base, "path": real.relative_to(root).as_posix()}
    if not real.is_relative_to(cert_dir):
        raise CertificateError(f"{path} is outside the certificate's folder {cert_dir}: a certificate names only "
                               "files inside its own folder (or shipped with PCSC); write it in a folder that holds "
                               "the routes, libraries and policies it names")
    return {"base": "certificate", "path": real.relative_to(cert_dir).as_posix()}


def _policy_files(loaded: LoadedPolicy, store: PolicyStore, cert_dir: Path) -> list[dict[str, str]]:
    files = [{"ref": loaded.ref, **_where(Path(loaded.path), cert_dir)}]
    parent = loaded.policy.policy.extends
    seen = {loaded.ref}
    while parent and parent not in seen:
        seen.add(parent)
        parts = split_policy_ref(parent)
        found = store.find(*parts) if parts else None
        if found is None:
            break
        files.append({"ref": parent, **_where(found, cert_dir)})
        parent_loaded = store.load_ref(parent)
        parent = parent_loaded.policy.policy.extends
    return files


P_RULE = "p = clip(p_prior · W, 0, 1)"
P_MAX_RULE = "p = clip(p_prior · W, 0, p_max)"
ISOTONIC_RULE = "p = isotonic map of p_raw: linear between the points (x, y), flat outside, clipped to [0, 1]"
PLATT_RULE = "p = 1 / (1 + exp(−(a + b·logit(p_raw)))), p_raw clipped to [1e-9, 1 − 1e-9]"


# ---------------------------------------------------------------------- one route
def _steps(c: Compiled) -> list[dict[str, Any]]:
    n, r, pol = c.numbers, c.route, c.policy.policy
    rw = pol.reweighting
    steps: list[dict[str, Any]] = []

    def add(symbol: str, rule: str, value: dict[str, Any], **operands: Any) -> None:
        steps.append({"symbol": symbol, "rule": rule, "value": value, "operands": operands})

    def step(symbol: str) -> dict[str, Any]:
        found = next(s for s in steps if s["symbol"] == symbol)
        return {**found["value"], "step": symbol}

    def pkey(*path: str) -> list[str]:
        return list(path)

    v = r.vision
    rate = pol.units.rate("usd")
    if pol.vision.is_default and pol.units.is_default:
        add("V", "V = tam × capture × defensibility", num(n.value),
            tam=num(v.tam, route="vision.tam"), capture=num(v.capture, route="vision.capture"),
            defensibility=num(v.defensibility, route="vision.defensibility"))
    else:  # the policy's formula: the checker reads it, and each field's kind, from the policy document
        add("V", VISION_RULE, num(n.value),
            formula={"v": pol.vision.value, "policy": pkey("vision", "value")},
            fields={name: num(v.get(name), route=f"vision.{name}") for name in pol.vision.fields},
            **({} if pol.units.is_default or rate is None else
               {"rate": num(rate, policy=pkey("units", "rates", "usd"))}))
    by_name = {e.name: e for e in r.evidence}
    for t, tr in zip(n.transitions, r.transitions, strict=True):
        k = t.name
        add(f"{k}.p_prior", "p_prior = priors[class].p", num(t.p_prior),
            prior=num(t.p_prior, policy=pkey("priors", t.ref_class, "p")))
        w = t.reweight
        for side, items, sat_value in (("C", w.supporting, w.sat_c), ("K", w.contradicting, w.sat_k)):
            rows = []
            for name, x in items:
                e = by_name[name]
                tier_weight = pol.evidence.tier_weight.get(str(e.tier), 0.0)
                rows.append({
                    "evidence": name,
                    "weight": num(e.weight, route=f"evidence {name} weight"),
                    "tier": e.tier,
                    "tier_weight": num(tier_weight, policy=pkey("evidence", "tier_weight", str(e.tier))),
                    "x": num(x),
                })
            value = num(sat_value)
            if items:
                sn, sd = exact_sat([x for _, x in items], rw.decay)
                value["exact"] = q(Fraction(sn, sd))
            else:
                value["exact"] = "0/1"
            add(f"{k}.sat({side})", "sat = S/(1+S), S = Σ x_(i)·decay^i over x sorted descending", value,
                items=rows, decay=num(rw.decay, policy=pkey("reweighting", "decay")))
        W = num(w.W)
        if w.supporting or w.contradicting:
            W["exact"] = q(Fraction(1) + Fraction(rw.corroborate_gain) * Fraction(step(f"{k}.sat(C)")["exact"])
                           - Fraction(rw.contradict_gain) * Fraction(step(f"{k}.sat(K)")["exact"]))
        add(f"{k}.W", "W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max)", W,
            evidence=val(bool(w.supporting or w.contradicting)),
            sat_c=step(f"{k}.sat(C)"), sat_k=step(f"{k}.sat(K)"),
            gc=num(rw.corroborate_gain, policy=pkey("reweighting", "corroborate_gain")),
            gk=num(rw.contradict_gain, policy=pkey("reweighting", "contradict_gain")),
            w_min=num(rw.w_min, policy=pkey("reweighting", "w_min")),
            w_max=num(rw.w_max, policy=pkey("reweighting", "w_max")))
        cal = pol.calibration
        # under the default p_max = 1 the rule and its operands are what they were before p_max
        capped = {} if rw.p_max == 1.0 else {"p_max": num(rw.p_max, policy=pkey("reweighting", "p_max"))}
        p_rule = P_RULE if not capped else P_MAX_RULE
        if t.p_raw is None or cal is None:
            add(f"{k}.p", p_rule, num(t.p), p_prior=step(f"{k}.p_prior"), W=step(f"{k}.W"), **capped)
        else:
            add(f"{k}.p_raw", p_rule, num(t.p_raw), p_prior=step(f"{k}.p_prior"), W=step(f"{k}.W"), **capped)
            if cal.isotonic is not None and cal.method == "isotonic":
                add(f"{k}.p", ISOTONIC_RULE, num(t.p), p_raw=step(f"{k}.p_raw"),
                    x={"v": list(cal.isotonic.x), "policy": pkey("calibration", "isotonic", "x")},
                    y={"v": list(cal.isotonic.y), "policy": pkey("calibration", "isotonic", "y")})
            elif cal.platt is not None:
                add(f"{k}.p", PLATT_RULE, num(t.p), p_raw=step(f"{k}.p_raw"),
                    a=num(cal.platt.a, policy=pkey("calibration", "platt", "a")),
                    b=num(cal.platt.b, policy=pkey("calibration", "platt", "b")))
        cost_items = [{"name": i.name, "count": num(i.count, route=f"cost {i.name}"),
                  "unit_cost": num(i.unit_cost, route=f"cost {i.name}")} for i in tr.cost]
        if rate is None or rate == 1.0:
            add(f"{k}.budget", "budget = Σ count × unit cost", num(t.cost.budget), items=cost_items)
        else:
            add(f"{k}.budget", BUDGET_AT_RATE_RULE, num(t.cost.budget), items=cost_items,
                rate=num(rate, policy=pkey("units", "rates", "usd")))
        add(f"{k}.floor_class", "floor_class = priors[class].floor_usd", num(t.cost.floor_class),
            floor=num(t.cost.floor_class, policy=pkey("priors", t.ref_class, "floor_usd")))
        prices = []
        for field, _, price in t.cost.floor_terms:
            d = next(x for x in t.deltas if x.field == field)
            table = pol.floors.table(t.ref_class, field)
            assert table is not None, "a floor term has its table"
            value = num(price)
            value["exact"] = q(_exact_price(table.points, d.magnitude))
            add(f"{k}.price[{field}]", "price = piecewise-linear floor through (0, 0) and the points, of |Δ|", value,
                source=num(d.source), target=num(d.target),
                points={"v": [[float(a), float(b)] for a, b in table.points],
                        "policy": pkey(*pol.floors.key(t.ref_class, field), "points")})
            prices.append(step(f"{k}.price[{field}]"))
        add(f"{k}.floor_delta", "floor_delta = Σ prices", num(t.cost.floor_delta), prices=prices)
        add(f"{k}.c", "c = max(budget, floor_class, floor_delta)", num(t.cost.c),
            budget=step(f"{k}.budget"), floor_class=step(f"{k}.floor_class"),
            floor_delta=step(f"{k}.floor_delta"), bound_by=val(t.cost.bound_by))
        if len(tr.estimates) >= 2:
            add(f"{k}.U", "U = max − min of the estimates", num(t.U),
                estimates=[num(x, route=f"{k} estimates") for x in tr.estimates])
        else:
            add(f"{k}.U", "U = uncertainty.default", num(t.U),
                default=num(t.U, policy=pkey("uncertainty", "default")))
        if not n.fold.is_default:
            h = tr.horizon
            add(f"{k}.d", DISCOUNT_RULE, num(t.d), rate=num(n.fold.discount, policy=pkey("fold", "discount")),
                horizon=val(None) if h is None else num(h[0], route=f"{k} horizon"),
                unit=val(None if h is None else h[1]))
        if t.payoff is not None:  # the payoff of the state the transition reaches, capped, in the fold's unit
            cap = pol.payoffs.max_usd if pol.payoffs is not None else 0.0
            plain = rate is None or rate == 1.0
            rule = PAYOFF_RULE if plain else PAYOFF_RATE_RULE if t.payoff.unit == "usd" else PAYOFF_FOLD_RULE
            add(f"{k}.v", rule, num(t.payoff.credited),
                payoff=num(t.payoff.written, route=f"state {t.payoff.state} payoff"),
                cap=num(cap, policy=pkey("payoffs", "max_usd")), bound_by=val(t.payoff.bound_by),
                **({} if rate is None or plain else {"rate": num(rate, policy=pkey("units", "rates", "usd"))}))
    if r.shape is not None:
        _graph_steps(c, add, step)
    else:
        _chain_steps(c, add, step)
    rows = [{"criterion": name, "weight": num(w, policy=pkey("criteria", name)),
             "score": num(next(x.score for x in r.criteria if x.name == name), route=f"criteria {name}")}
            for name, w, _ in n.criteria_weights]
    add("T", "T = Σ w·clip(s, 0, 100) / Σ w", val(None) if n.criteria_score is None else num(n.criteria_score),
        rows=rows)
    b = pol.buckets
    add("bucket", "bucket = neg if T < neg_below, pos if T ≥ pos_from, else mix", val(n.bucket),
        T=step("T"),
        neg_below=None if b is None else num(b.neg_below, policy=pkey("buckets", "neg_below")),
        pos_from=None if b is None else num(b.pos_from, policy=pkey("buckets", "pos_from")))
    add("eligible", "eligible = every gate passes or does not block", val(n.eligible),
        gates=[{"id": g.id, "kind": g.kind, "passed": g.passed, "blocks": g.blocks,
                "rule": next(x.rule for x in pol.gates if x.id == g.id)} for g in n.gates],
        names=_gate_operands(n, step))
    return steps


def _gate_operands(n: RouteNumbers, step: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """The names a gate rule may read, each tied to where the checker finds it again."""
    names = gate_names(n)
    steps = {"score": "score", "value": "V", "flat_product": "flat_product", "criteria_score": "T"}
    return {name: step(steps[name]) if name in steps and value is not None else enc(value)
            for name, value in names.items()}


def _exact_price(points: Sequence[tuple[float, float]], x: float) -> Fraction:
    xs = [Fraction(0)] + [Fraction(p[0]) for p in points]
    ys = [Fraction(0)] + [Fraction(p[1]) for p in points]
    at = Fraction(x)
    i = next((i for i in range(1, len(xs)) if at <= xs[i]), len(xs) - 1)
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (at - xs[i - 1]) / (xs[i] - xs[i - 1])


def enc(v: Any, **where: Any) -> dict[str, Any]:
    """An operand of an expression, typed: a number ``{f, q}``, a date ``{"date": iso}``,
    a record ``{"record": {...}}``, anything else (text, a bool, nothing, a list of
    names) ``{"v": ...}``."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return num(v, **where)
    if isinstance(v, dt.date):
        return {"date": v.isoformat(), **where}
    if isinstance(v, Mapping):
        return {"record": {str(k): enc(x) for k, x in v.items()}, **where}
    return {"v": _jsonable(v), **where}


def _referenced(e: ex.Expr) -> tuple[set[str], set[str]]:
    """The names and the functions an expression uses."""
    names, calls = set(), set()
    for sub in walk(e):
        if isinstance(sub, ex.Name):
            names.add(sub.name)
        elif isinstance(sub, ex.Call):
            calls.add(sub.func)
    return names, calls


def _evidence_item(e: Evidence) -> dict[str, Any]:
    return {"name": e.name, "tier": num(e.tier), "weight": num(e.weight), "source": e.source,
            "captured": None if e.captured is None else e.captured.isoformat(), "excerpt": e.excerpt}


def _require(req: Require, it: Interpreter, ctx: _TransitionContext, scoped: Sequence[Delta]) -> dict[str, Any]:
    """A require line evaluated, with what the checker needs to evaluate it again: the
    expression's text and the value of every name it uses (``operands``), the changes
    ``delta`` stands for, and the admissible supporting evidence `evidence` and
    `grounded` read."""
    try:
        result = truthy(it.eval(req.expr))
        error = None
    except EvalError as err:
        result, error = False, err.message
    names, calls = _referenced(req.expr)
    t = ctx.t.name
    operands: dict[str, Any] = {}
    for name in sorted(names & set(REQUIRE_NAMES) - {"delta"}):
        value = it.names[name]
        if name == "budget" and usd_rate(ctx.policy) != 1.0:  # a require line reads the authored usd
            operands[name] = num(value, usd_of=f"{t}.budget")
        elif name == "budget":
            operands[name] = num(value, step=f"{t}.budget")
        elif name in ("horizon", "learning_cost") and value is not None:
            operands[name] = num(value, route=f"{t} {name}")
        else:
            operands[name] = enc(value)
    if "measured" in calls:  # the bounds are read from the threshold's text
        operands["threshold"] = enc(ctx.t.threshold_text)
    out: dict[str, Any] = {"result": result, "expr": req.text.removeprefix("require").strip(), "operands": operands}
    if "delta" in names:
        out["delta"] = [{"field": d.field, "source": _jsonable(d.source), "target": _jsonable(d.target)}
                        for d in scoped]
    if calls & {"evidence", "grounded"}:
        out["evidence"] = [_evidence_item(e) for e in ctx.supporting]
    if error is not None:
        out["error"] = error
    return out


def _coverage(c: Compiled) -> list[dict[str, Any]]:
    r, pol = c.route, c.policy.policy
    decls = {f.name: f for f in r.fields}
    rows: list[dict[str, Any]] = []
    for t in r.transitions:
        ds = deltas(r, t)
        ctx = _TransitionContext(r, t, ds, pol)
        for d in ds:
            decl = decls[d.field]
            rule: dict[str, Any] | None
            if decl.type == "bool":
                rule = {"bool": True}
            elif decl.material is None:
                rule = None
            else:
                rule = {"amount": num(decl.material.amount), "relative": decl.material.relative}
            row: dict[str, Any] = {
                "transition": t.name, "field": d.field, "source": _jsonable(d.source),
                "target": _jsonable(d.target), "material_rule": rule, "material": d.material,
                "covered": None, "by": None, "obligations": [],
            }
            if d.material and c.coverage is not None:
                cov = next(x for x in c.coverage.for_transition(t.name) if x.delta.field == d.field)
                row["covered"], row["by"] = cov.covered, cov.by
                for o in r.obligations:
                    if d.field not in o.covers:
                        continue
                    scoped = [x for x in ds if x.material and x.field in o.covers]
                    it = ctx.interpreter(scoped)
                    row["obligations"].append({
                        "obligation": o.name, "claimed": o.name in t.discharges,
                        "covers": list(o.covers),
                        "requires": [{"require": req.text, "line": req.span.line, **_require(req, it, ctx, scoped)}
                                     for req in o.requires],
                    })
            rows.append(row)
    return rows


MODE_RANK = {"off": 0, "dock": 1, "gate": 2}


def route_certificate(c: Compiled, files: dict[str, str], policy_mode: str) -> dict[str, Any]:
    """One route's certificate; ``policy_mode`` is the coverage mode its policy's files
    set (before any `--set`), so a mode lowered from it is recorded (`lowered_from`)."""
    d = c.decision
    return {
        "route": c.route.name,
        "file": files[c.route.file],
        "policy": c.policy.ref,
        "libraries": [u.name for u in c.libraries],
        "admissible_evidence": [e.name for e in c.route.evidence if admissible(e, c.route.as_of, c.policy.policy)],
        "fold": {"discount": num(c.numbers.fold.discount, policy=["fold", "discount"]),
                 "abandonment": {"v": c.numbers.fold.abandonment, "policy": ["fold", "abandonment"]}},
        "steps": _steps(c),
        "coverage": _coverage(c),
        "decision": {
            "mode": d.mode,
            "mode_source": d.mode_source,
            "lowered_from": policy_mode if MODE_RANK[d.mode] < MODE_RANK[policy_mode] else None,
            "verdict": d.verdict,
            "score": None if d.score is None else num(d.score),
        },
        **_refusals(c),
    }


def _refusals(c: Compiled) -> dict[str, Any]:
    """The claims the route's classes do not admit and its departures from a required
    registry (under `required` or `report`), under a policy that has either (other
    certificates keep their bytes). The checker derives both again; only a required
    registry's count into the verdict."""
    policy, cov = c.policy.policy, c.coverage
    if not policy.admission and policy.coverage.registry == "off":
        return {}
    admission = [] if cov is None else [
        {"transition": a.transition, "class": a.ref_class, "field": a.field, "check": a.check} for a in cov.admission
    ]
    registry = [] if cov is None or cov.registry_mode == "off" else [
        {"kind": f.kind, "state": f.state, "field": f.field} for f in cov.registry
    ]
    return {"refusals": {"not_admitted": admission, "registry": registry}}


Add = Callable[..., None]
StepRef = Callable[[str], dict[str, Any]]


# The policy's fold (`[fold]`): the rules beside the paper's, in the order they are used.
DISCOUNT_RULE = "d = (1 + r)^(−h), h the horizon in years (days / 365.25, months / 12, none: 0)"
FOLD_R = "R_i = −c_i + p_i · d_i · R_{i+1}"
FOLD_R_STOP = "R_i = max(0, −c_i + p_i · d_i · R_{i+1})"
STOPS_RULE = "stops = −c + p · d · R_next < 0 (the planner stops before paying this stage)"
WALKING_RULE = "walking = walking before and not stops (the planner reaches and pays this stage)"
FOLD_REACH = "reach_i = Π_{j<i} p_j · d_j"
D_WALKING = "D_i = reach_i · max(R_{i+1}, 0) while walking, else 0"
FOLD_DOCKED = "docked = R_0 refolded with R_n = 0: R_i = −c_i + p_i · d_i · R_{i+1}"
FOLD_DOCKED_STOP = "docked = R_0 refolded with R_n = 0: R_i = max(0, −c_i + p_i · d_i · R_{i+1})"
SERIES_D = "series: D = Π D_i"
PARALLEL_D = "parallel: D = min D_b (the join waits for the slowest branch)"
FOLD_SERIES_C = "series: C = Σ_i (Π_{j<i} P_j · D_j)·C_i"
FOLD_SPINE = "R = −C + P · D · R(next) (spine)"
FOLD_SPINE_STOP = "R = max(0, −C + P · D · R(next)) (spine)"
FOLD_SERIES_W = "w = w(parent) · Π P · D of the earlier items (series item)"
FOLD_SERIES_X = "x = −C_next + P_next · D_next · x_next (series item)"
FOLD_PARALLEL_X = "x = (Π P of the other branches) · (D / D_b) · x(parent) (parallel branch)"
FOLD_GRAPH_REACH = "reach = (Π P · D of the earlier spine items) · w"
# Payoffs along the way (a chain): v of the state a stage reaches, credited with its success.
PAYOFF_RULE = "v = min(payoff, payoffs.max_usd): the payoff of the state the transition reaches"
PAYOFF_RATE_RULE = "v = min(payoff, payoffs.max_usd) × rate: the payoff of the state the transition reaches"
PAYOFF_FOLD_RULE = ("v = min(payoff, payoffs.max_usd × rate): the payoff of the state the transition reaches, "
                    "written in the fold's unit")
PAYOFF_R = ("R_i = −c_i + p_i · (v_{i+1} + R_{i+1})", "R_i = −c_i + p_i · d_i · (v_{i+1} + R_{i+1})",
            "R_i = max(0, −c_i + p_i · d_i · (v_{i+1} + R_{i+1}))")
PAYOFF_STOPS = "stops = −c + p · d · (v + R_next) < 0 (the planner stops before paying this stage)"
PAYOFF_D = ("D_i = reach_i · max(v_{i+1} + R_{i+1}, 0)",
            "D_i = reach_i · max(v_{i+1} + R_{i+1}, 0) while walking, else 0")
PAYOFF_DOCKED = tuple(f"docked = R_0 refolded with R_n = 0 and each payoff credited while every change up to its "
                      f"state is covered: {rule}" for rule in PAYOFF_R)
# Payoffs on a graph (docs/graphs.md, "Payoffs on a graph"): v_i the payoff of the state item i exits to,
# read from the `v` step of the transition that `exit_of` names (a join's: that of its first branch).
GRAPH_PAYOFF_SERIES_C = ("series: C = Σ_i (Π_{j<i} P_j)·C_i − Σ_{i<n} (Π_{j≤i} P_j)·v_i",
                         "series: C = Σ_i (Π_{j<i} P_j · D_j)·C_i − Σ_{i<n} (Π_{j≤i} P_j · D_j)·v_i")
GRAPH_PAYOFF_SPINE = ("R = −C + P · (v + R(next)) (spine)", "R = −C + P · D · (v + R(next)) (spine)",
                      "R = max(0, −C + P · D · (v + R(next))) (spine)")
GRAPH_PAYOFF_STOPS = "stops = −C + P · D · (v + R(next)) < 0 (the planner stops before paying this spine item)"
GRAPH_PAYOFF_SPINE_X = "x = v + R(exit) (a spine item)"
GRAPH_PAYOFF_SERIES_X = ("x = v + (−C_next + P_next · x_next) (series item)",
                         "x = v + (−C_next + P_next · D_next · x_next) (series item)")
GRAPH_PAYOFF_DOCKED = tuple(
    f"docked = R(start) refolded over the route's blocks with V = 0, each payoff credited while every change on "
    f"every path into its state is covered ({fold})"
    for fold in ("the paper's fold", "discounted", "discounted, with the option to stop"))


def _chain_steps(c: Compiled, add: Add, step: StepRef) -> None:
    """The staged fold, reach, D, binding and the docked score of a chain; under the
    policy's `[fold]`, with each transition's discount d and, with the option to stop,
    max(0, ·), where the planner stops and whether it walks each stage."""
    n = c.numbers
    count = len(n.transitions)
    spec = n.fold
    paper, stop = spec.is_default, spec.abandonment
    kind = 0 if paper else 2 if stop else 1
    add(f"R_{count}", "R_n = V", num(n.R[count]), V=step("V"))
    for i in range(count - 1, -1, -1):
        t = n.transitions[i]
        name = t.name
        if t.payoff is not None:  # a stage that reaches a paying state: v is credited with its success
            ops = {"c": step(f"{name}.c"), "p": step(f"{name}.p"), **({} if paper else {"d": step(f"{name}.d")}),
                   "v": step(f"{name}.v"), "R_next": step(f"R_{i + 1}")}
            add(f"R_{i}", PAYOFF_R[kind], num(n.R[i]), **ops)
            if stop:
                add(f"{name}.stops", PAYOFF_STOPS, val(t.stops), **ops)
            continue
        if paper:
            add(f"R_{i}", "R_i = −c_i + p_i · R_{i+1}", num(n.R[i]),
                c=step(f"{name}.c"), p=step(f"{name}.p"), R_next=step(f"R_{i + 1}"))
            continue
        ops = {"c": step(f"{name}.c"), "p": step(f"{name}.p"), "d": step(f"{name}.d"), "R_next": step(f"R_{i + 1}")}
        add(f"R_{i}", FOLD_R_STOP if stop else FOLD_R, num(n.R[i]), **ops)
        if stop:
            add(f"{name}.stops", STOPS_RULE, val(t.stops), **ops)
    add("score", "score = R_0", num(n.score), R_0=step("R_0"))
    ps = [step(f"{t.name}.p") for t in n.transitions]
    ds = [] if paper else [step(f"{t.name}.d") for t in n.transitions]
    add("flat_product", "flat product = Π p_i", num(n.flat_product), p=ps)
    walking = True
    for i, t in enumerate(n.transitions):
        if paper:
            add(f"{t.name}.reach", "reach_i = Π_{j<i} p_j", num(t.reach), p=ps[:i])
        else:
            add(f"{t.name}.reach", FOLD_REACH, num(t.reach), p=ps[:i], d=ds[:i])
        if stop:
            walking = walking and not t.stops
            before = step(f"{n.transitions[i - 1].name}.walking") if i else val(True)
            add(f"{t.name}.walking", WALKING_RULE, val(walking), before=before, stops=step(f"{t.name}.stops"))
        if t.payoff is not None:
            add(f"{t.name}.D", PAYOFF_D[stop], num(t.D), reach=step(f"{t.name}.reach"), v=step(f"{t.name}.v"),
                R_next=step(f"R_{i + 1}"), **({"walking": step(f"{t.name}.walking")} if stop else {}))
        elif stop:
            add(f"{t.name}.D", D_WALKING, num(t.D), reach=step(f"{t.name}.reach"), R_next=step(f"R_{i + 1}"),
                walking=step(f"{t.name}.walking"))
        else:
            add(f"{t.name}.D", "D_i = reach_i · max(R_{i+1}, 0)", num(t.D),
                reach=step(f"{t.name}.reach"), R_next=step(f"R_{i + 1}"))
    add("binding", "binding = the first i with the largest U_i · D_i", val(n.binding),
        U=[step(f"{t.name}.U") for t in n.transitions], D=[step(f"{t.name}.D") for t in n.transitions])
    cs = [step(f"{t.name}.c") for t in n.transitions]
    if n.payoffs is not None:  # DOCK credits a payoff only over a covered path (as the score pass folds it)
        uncovered = discharge_route(c.route, c.policy.policy).uncovered_transitions
        covered, credited = True, []
        for t in n.transitions:
            covered = covered and t.name not in uncovered
            credited.append(val(covered))
        add("docked_score", PAYOFF_DOCKED[kind], num(c.docked), p=ps, **({} if paper else {"d": ds}), c=cs,
            v=[num(0.0) if t.payoff is None else step(f"{t.name}.v") for t in n.transitions], credited=credited)
    elif paper:
        add("docked_score", "docked = R_0 refolded with R_n = 0", num(c.docked), p=ps, c=cs)
    else:
        add("docked_score", FOLD_DOCKED_STOP if stop else FOLD_DOCKED, num(c.docked), p=ps, d=ds, c=cs)


def _graph_steps(c: Compiled, add: Add, step: StepRef) -> None:
    """The series-parallel fold of a graph route (docs/graphs.md): P (and, under the
    policy's `[fold]`, D) and C of every block bottom up, R along the spine (with the
    option to stop: max(0, ·) and where the planner stops), then each block's weight w
    (from the entry of its spine item) and continuation x top down, reach, D, binding,
    and the spine refolded with V = 0."""
    from pcsc.lang.ir import Edge, Parallel, Series, Shape
    from pcsc.score.graph import graph_fold, spine

    n, r = c.numbers, c.route
    assert r.shape is not None
    ts = n.transitions
    paper, stop = n.fold.is_default, n.fold.abandonment
    dfs = [t.d for t in ts]
    vs = n.payoffs  # None: no payoffs, and every rule is the one without them (the bytes of before)
    kind = 0 if paper else 2 if stop else 1
    g = graph_fold(r.shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts],
                   [t.p for t in ts], [t.cost.c for t in ts], dfs, n.value, stop, vs=vs)
    paid = {t.name for t in ts if t.payoff is not None}
    label: dict[int, str] = {}

    def exit_edge(s: Shape) -> str:
        """The transition `exit_of` follows to a block's exit (a series' last item, a parallel block's first branch)."""
        while not isinstance(s, Edge):
            s = s.items[-1] if isinstance(s, Series) else s.branches[0]
        return s.transition

    def v_of(s: Shape) -> dict[str, Any] | None:
        """The `v` step of the state ``s`` exits to, None when it has no payoff."""
        t = exit_edge(s)
        return step(f"{t}.v") if vs is not None and t in paid else None

    def name_of(s: Shape, path: str) -> None:
        label[id(s)] = s.transition if isinstance(s, Edge) else f"[{path}]"
        if isinstance(s, Series):
            for i, item in enumerate(s.items):
                name_of(item, f"{path}.{i}".lstrip("."))
        elif isinstance(s, Parallel):
            for i, br in enumerate(s.branches):
                name_of(br, f"{path}.{i}".lstrip("."))

    name_of(r.shape, "")

    def P(s: Shape) -> dict[str, Any]:
        return step(f"{label[id(s)]}.p" if isinstance(s, Edge) else f"{label[id(s)]}.P")

    def C(s: Shape) -> dict[str, Any]:
        return step(f"{label[id(s)]}.c" if isinstance(s, Edge) else f"{label[id(s)]}.C")

    def D(s: Shape) -> dict[str, Any]:
        return step(f"{label[id(s)]}.d" if isinstance(s, Edge) else f"{label[id(s)]}.D")

    def up(s: Shape) -> None:
        if isinstance(s, Edge):
            return
        parts = s.items if isinstance(s, Series) else s.branches
        for part in parts:
            up(part)
        b, k = g.blocks[id(s)], label[id(s)]
        kind = "series" if isinstance(s, Series) else "parallel"
        add(f"{k}.P", f"{kind}: P = Π P_i", num(b.P), p=[P(x) for x in parts])
        if not paper:
            add(f"{k}.D", SERIES_D if isinstance(s, Series) else PARALLEL_D, num(b.D), d=[D(x) for x in parts])
        inner = [v_of(x) for x in parts[:-1]] if isinstance(s, Series) else []
        if any(x is not None for x in inner):  # a payoff at a state inside the series, net of its cost
            add(f"{k}.C", GRAPH_PAYOFF_SERIES_C[not paper], num(b.C), p=[P(x) for x in parts],
                **({} if paper else {"d": [D(x) for x in parts]}), c=[C(x) for x in parts],
                v=[num(0.0) if x is None else x for x in inner])
        elif isinstance(s, Series) and paper:
            add(f"{k}.C", "series: C = Σ_i (Π_{j<i} P_j)·C_i", num(b.C), p=[P(x) for x in parts],
                c=[C(x) for x in parts])
        elif isinstance(s, Series):
            add(f"{k}.C", FOLD_SERIES_C, num(b.C), p=[P(x) for x in parts], d=[D(x) for x in parts],
                c=[C(x) for x in parts])
        else:
            add(f"{k}.C", "parallel: C = Σ C_b", num(b.C), c=[C(x) for x in parts])

    def spine_R(prefix: str, R: Sequence[float]) -> None:
        for i in range(len(items) - 1, -1, -1):
            v = v_of(items[i]) if not prefix else None
            if v is not None:  # the spine item's success also earns the payoff of the state it exits to
                ops = {"c": C(items[i]), "p": P(items[i]), **({} if paper else {"d": D(items[i])}), "v": v,
                       "R_next": step(f"R({states[i + 1]})")}
                add(f"R({states[i]})", GRAPH_PAYOFF_SPINE[kind], num(R[i]), **ops)
                if stop:
                    b = g.blocks[id(items[i])]
                    add(f"{label[id(items[i])]}.stops", GRAPH_PAYOFF_STOPS,
                        val(-b.C + b.P * b.D * g.after(i) < 0), **ops)
                continue
            ops = {"c": C(items[i]), "p": P(items[i]), "R_next": step(f"{prefix}R({states[i + 1]})")}
            if paper:
                add(f"{prefix}R({states[i]})", "R = −C + P · R(next) (spine)", num(R[i]), **ops)
                continue
            ops["d"] = D(items[i])
            add(f"{prefix}R({states[i]})", FOLD_SPINE_STOP if stop else FOLD_SPINE, num(R[i]), **ops)
            if stop and not prefix:
                b = g.blocks[id(items[i])]
                stops = -b.C + b.P * b.D * g.after(i) < 0
                add(f"{label[id(items[i])]}.stops", STOPS_RULE, val(stops), **ops)

    up(r.shape)
    items = spine(r.shape)
    states = [g.entry(x) for x in items] + [g.exit_of(items[-1])]
    add(f"R({states[-1]})", "R(end) = V", num(g.spine_R[-1]), V=step("V"))
    spine_R("", g.spine_R)
    add("score", "score = R(start)", num(n.score), R=step(f"R({states[0]})"))
    add("flat_product", "flat product = Π p_i", num(n.flat_product), p=[step(f"{t.name}.p") for t in ts])

    def down(s: Shape, w: float, x: float) -> None:
        """w and x of the children of ``s`` (as `pcsc.score.graph` computes them, float op by op)."""
        k = label[id(s)]
        if isinstance(s, Series):
            later = [g.blocks[id(item)] for item in s.items[1:]]
            ws = None if vs is None else [g.w(g.exit_of(item)) for item in s.items[1:-1]] + [0.0]
            after = chain_fold([b.P for b in later], [b.C for b in later], x, [b.D for b in later], vs=ws)
            if vs is not None:  # an item's success also earns the payoff of the state it exits to
                after = [g.w(g.exit_of(item)) + a if i < len(s.items) - 1 else a
                         for i, (item, a) in enumerate(zip(s.items, after, strict=True))]
            weights = []
            for i, item in enumerate(s.items):
                ki = label[id(item)]
                weights.append(_weight(g, s, i, w))
                if paper:
                    add(f"{ki}.w", "w = w(parent) · Π P of the earlier items (series item)",
                        num(weights[-1]), w=step(f"{k}.w"), p=[P(y) for y in s.items[:i]])
                else:
                    add(f"{ki}.w", FOLD_SERIES_W, num(weights[-1]), w=step(f"{k}.w"),
                        p=[P(y) for y in s.items[:i]], d=[D(y) for y in s.items[:i]])
            for i in range(len(s.items) - 1, -1, -1):
                ki = label[id(s.items[i])]
                if i == len(s.items) - 1:
                    add(f"{ki}.x", "x = x(parent) (the last item of a series)", num(after[i]), x=step(f"{k}.x"))
                elif v_of(s.items[i]) is not None:
                    nxt_item = s.items[i + 1]
                    add(f"{ki}.x", GRAPH_PAYOFF_SERIES_X[not paper], num(after[i]), v=v_of(s.items[i]),
                        c=C(nxt_item), p=P(nxt_item), **({} if paper else {"d": D(nxt_item)}),
                        R_next=step(f"{label[id(nxt_item)]}.x"))
                elif paper:
                    nxt_item = s.items[i + 1]
                    add(f"{ki}.x", "x = −C_next + P_next · x_next (series item)", num(after[i]),
                        c=C(nxt_item), p=P(nxt_item), R_next=step(f"{label[id(nxt_item)]}.x"))
                else:
                    nxt_item = s.items[i + 1]
                    add(f"{ki}.x", FOLD_SERIES_X, num(after[i]), c=C(nxt_item), p=P(nxt_item), d=D(nxt_item),
                        R_next=step(f"{label[id(nxt_item)]}.x"))
            for i, item in enumerate(s.items):
                down(item, weights[i], after[i])
        elif isinstance(s, Parallel):
            xs = []
            joined = g.blocks[id(s)].D
            for j, br in enumerate(s.branches):
                kb = label[id(br)]
                others = 1.0
                for i, y in enumerate(s.branches):
                    if i != j:
                        others = others * g.blocks[id(y)].P
                own = g.blocks[id(br)].D
                ratio = 1.0 if own == joined else joined / own if own != 0 else 0.0
                xs.append(others * ratio * x)
                add(f"{kb}.w", "w = w(parent) (parallel branch)", num(w), w=step(f"{k}.w"))
                others_p = [P(y) for i, y in enumerate(s.branches) if i != j]
                if paper:
                    add(f"{kb}.x", "x = (Π P of the other branches) · x(parent) (parallel branch)", num(xs[-1]),
                        p=others_p, x=step(f"{k}.x"))
                else:
                    add(f"{kb}.x", FOLD_PARALLEL_X, num(xs[-1]), p=others_p, D=D(s), D_b=D(br), x=step(f"{k}.x"))
            for br, xb in zip(s.branches, xs, strict=True):
                down(br, w, xb)

    for i, item in enumerate(items):
        k = label[id(item)]
        add(f"{k}.w", "w = 1 (a spine item)", num(1.0))
        v = v_of(item)
        if v is None:
            add(f"{k}.x", "x = R(exit) (a spine item)", num(g.spine_R[i + 1]), R=step(f"R({states[i + 1]})"))
        else:
            add(f"{k}.x", GRAPH_PAYOFF_SPINE_X, num(g.after(i)), v=v, R=step(f"R({states[i + 1]})"))
        down(item, 1.0, g.after(i))
    if stop:
        for i, item in enumerate(items):
            k = label[id(item)]
            before = step(f"{label[id(items[i - 1])]}.walking") if i else val(True)
            add(f"{k}.walking", WALKING_RULE, val(g.stops_at is None or i < g.stops_at), before=before,
                stops=step(f"{k}.stops"))
    for t in ts:
        i = g.item_of[t.name]
        if paper:
            add(f"{t.name}.reach", "reach = (Π P of the earlier spine items) · w", num(t.reach),
                p=[P(y) for y in items[:i]], w=step(f"{t.name}.w"))
        else:
            add(f"{t.name}.reach", FOLD_GRAPH_REACH, num(t.reach), p=[P(y) for y in items[:i]],
                d=[D(y) for y in items[:i]], w=step(f"{t.name}.w"))
        if stop:
            add(f"{t.name}.D", D_WALKING, num(t.D), reach=step(f"{t.name}.reach"), R_next=step(f"{t.name}.x"),
                walking=step(f"{label[id(items[i])]}.walking"))
        else:
            add(f"{t.name}.D", "D_i = reach_i · max(R_{i+1}, 0)", num(t.D),
                reach=step(f"{t.name}.reach"), R_next=step(f"{t.name}.x"))
    add("binding", "binding = the first i with the largest U_i · D_i", val(n.binding),
        U=[step(f"{t.name}.U") for t in ts], D=[step(f"{t.name}.D") for t in ts])
    if vs is not None:  # DOCK credits a payoff only when every path into its state is covered: one refold
        uncovered = discharge_route(c.route, c.policy.policy).uncovered_transitions
        credited = [val(not before) for before in uncovered_before(ts, uncovered)]
        add("docked_score", GRAPH_PAYOFF_DOCKED[kind], num(c.docked), p=[step(f"{t.name}.p") for t in ts],
            **({} if paper else {"d": [step(f"{t.name}.d") for t in ts]}), c=[step(f"{t.name}.c") for t in ts],
            v=[step(f"{t.name}.v") if t.name in paid else num(0.0) for t in ts], credited=credited)
        return
    docked = graph_fold(r.shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts],
                        [t.p for t in ts], [t.cost.c for t in ts], dfs, 0.0, stop)
    add(f"docked R({states[-1]})", "docked R(end) = 0", num(0.0))
    spine_R("docked ", docked.spine_R)
    add("docked_score", "docked = R(start) refolded with V = 0", num(c.docked),
        R=step(f"docked R({states[0]})"))


def _weight(g: Any, s: Any, i: int, w: float) -> float:
    for item in s.items[:i]:
        b = g.blocks[id(item)]
        w = w * b.P * b.D
    return w


# ---------------------------------------------------------------------- the certificate
def build(
    compiled: Sequence[Compiled],
    inputs: Sequence[tuple[str, str]],
    store: PolicyStore,
    cert_path: Path,
    overrides: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The certificate of ``compiled`` (its JSON document, digest included)."""
    cert_dir = cert_path.resolve().parent
    base_store = PolicyStore(list(store.search_path))
    files: dict[str, str] = {}
    input_rows = []
    for shown, sha in inputs:
        if shown.startswith("<"):
            raise CertificateError(f"{shown} is not a file: a certificate names the files it re-checks")
        where = _where(Path(shown), cert_dir)
        files[shown] = where["path"]
        input_rows.append({**where, "sha256": sha})
    libraries: dict[str, dict[str, Any]] = {}
    policies: dict[str, dict[str, Any]] = {}
    modes: dict[str, str] = {}
    for c in compiled:
        for u in c.libraries:
            libraries.setdefault(u.name, {"name": u.name, "version": u.version, "sha256": u.sha256,
                                          "canonical_sha256": u.canonical_sha256, "pin": u.pin.as_json(),
                                          **_where(Path(u.file) if not u.shipped else
                                                   data_dir("obligations") / f"{u.name}.obl", cert_dir)})
        if c.policy.ref not in policies:
            plain = base_store.load_ref(c.policy.ref)
            modes[c.policy.ref] = plain.policy.policy.coverage
            policies[c.policy.ref] = {"ref": c.policy.ref, "sha256": c.policy.sha256,
                                      "file_sha256": plain.sha256,
                                      "files": _policy_files(plain, base_store, cert_dir)}
    body = {
        "certificate": FORMAT,
        "version": VERSION,
        "pcsc": __version__,
        "overrides": [{"path": o["path"], "value": o["value"], "applies_to": o["applies_to"]} for o in overrides],
        "inputs": sorted(input_rows, key=lambda x: (x["base"], x["path"])),
        "libraries": [libraries[k] for k in sorted(libraries)],
        "policies": [policies[k] for k in sorted(policies)],
        "routes": [bind_written(route_certificate(c, files, modes[c.policy.ref]), c, _route_text(c.route.file, inputs))
                   for c in compiled],
    }
    return {**body, "digest": canonical.hash_json(body)}


# ---------------------------------------------------------------------- authored numbers, bound to the file
def _route_text(shown: str, inputs: Sequence[tuple[str, str]]) -> str:
    """The route file's text as it was hashed (UTF-8, line ends read as LF)."""
    try:
        text = read_text(shown)
    except Unreadable as exc:
        raise CertificateError(f"{shown} cannot be read again to bind its numbers: {exc.reason}") from None
    if (shown, canonical.sha256_hex(text)) not in inputs:
        raise CertificateError(f"{shown} changed while it was compiled")
    return text


def written(text: str, span: Span | None) -> dict[str, Any]:
    """Where a statement is written in the route file (1-based line and column, end
    exclusive) and its text there, for the checker to read again."""
    if span is None:
        raise CertificateError("a number the route states has no place in its file")
    lines = text.split("\n")
    if span.line == span.end_line:
        literal = lines[span.line - 1][span.column - 1 : span.end_column - 1]
    else:
        literal = "\n".join([lines[span.line - 1][span.column - 1 :], *lines[span.line : span.end_line - 1],
                             lines[span.end_line - 1][: span.end_column - 1]])
    return {"line": span.line, "column": span.column, "end_line": span.end_line, "end_column": span.end_column,
            "text": literal}


def bind_written(cert: dict[str, Any], c: Compiled, text: str) -> dict[str, Any]:
    """``cert`` (one route's) with every number its author wrote bound to the statement
    that writes it (`written`): the vision's values, each evidence item's tier and
    weight, each cost item, each transition's estimates, each criterion's score, and
    the threshold and kill conditions a `require` line reads."""
    r = c.route
    steps = {s["symbol"]: s for s in cert["steps"]}
    vision = dict(r.vision.item_spans)
    v_ops = steps["V"]["operands"]
    for key, o in (v_ops["fields"] if "fields" in v_ops else v_ops).items():
        o["written"] = written(text, vision.get(key))
    evidence = {e.name: e for e in r.evidence}
    by_name = {t.name: t for t in r.transitions}
    for t in r.transitions:
        for side in ("C", "K"):
            for row in steps[f"{t.name}.sat({side})"]["operands"]["items"]:
                e = evidence[row["evidence"]]
                row["written"] = {"tier": written(text, e.tier_span), "weight": written(text, e.weight_span)}
        for row, item in zip(steps[f"{t.name}.budget"]["operands"]["items"], t.cost, strict=True):
            row["written"] = written(text, item.span)
        ops = steps[f"{t.name}.U"]["operands"]
        ops["written"] = None if t.estimates_span is None else written(text, t.estimates_span)
    criteria = {x.name: x for x in r.criteria}
    for row in steps["T"]["operands"]["rows"]:
        row["written"] = written(text, criteria[row["criterion"]].span)
    states = {s.name: s for s in r.states}
    for row in cert["coverage"]:
        t = by_name[row["transition"]]
        sides: dict[str, Any] = {}
        for side, state in (("source", t.source), ("target", t.target)):
            spans = dict(states[state].value_spans)
            sides[side] = written(text, spans[row["field"]]) if row["field"] in spans else None
        row["written"] = sides
        for o in row["obligations"]:
            for req in o["requires"]:
                for key, expr in (("threshold", t.threshold), ("kill", t.kill)):
                    operand = req["operands"].get(key)
                    if operand is not None and operand.get("v") is not None and expr is not None:
                        operand["written"] = written(text, expr.span)
    return cert


def dumps(cert: dict[str, Any]) -> str:
    """The certificate's bytes: canonical JSON (sorted keys, shortest floats), one line."""
    return canonical.dumps(cert) + "\n"
