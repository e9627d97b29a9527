"""Decision certificates: the derivation of every compiled route, for `pcsc verify-cert`.

A certificate records, per route, every number with the rule that produced it and its
operands (`steps`), every coverage decision with each `require` line evaluated and its
operands (`coverage`), and the verdict; and, for the whole run, the hashes of the
route files, the libraries and the policy's canonical document (with the files it
was read from) and the what-if overrides. Paths are relative to the certificate's own
folder (or to the shipped `obligations/` and `policies/`), so the certificate is
byte-identical wherever the same files are compiled. The format is in
docs/decisions.md; `pcsc.certcheck` checks it with its own arithmetic.

Every number is `{"f": float, "q": "num/den"}`: the float the compiler computed and
its exact rational value. Rules the compiler computes exactly and rounds once (sat,
W, the delta floor price) also carry `"exact"`, the unrounded rational. An operand
taken from another step carries `"step"`; one taken from the policy carries
`"policy"`, its key path; one from the route carries `"route"`.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from pcsc import canonical
from pcsc._version import __version__
from pcsc.coverage.discharge import _TransitionContext, field_bounds
from pcsc.interp import EvalError, Interpreter, truthy
from pcsc.ir import expr as ex
from pcsc.ir.names import split_policy_ref
from pcsc.pipeline import Compiled, docked_score
from pcsc.policy.load import PolicyStore
from pcsc.policy.model import LoadedPolicy
from pcsc.resources import data_dir
from pcsc.score.cost import deltas
from pcsc.score.evidence import admissible, exact_sat

FORMAT = "pcsc-decision-certificate"
VERSION = 1


class CertificateError(Exception):
    """The run cannot be certified (e.g. a route read from standard input)."""


def q(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


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
    return {"base": "certificate", "path": Path(os.path.relpath(real, cert_dir)).as_posix()}


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
    add("V", "V = tam × capture × defensibility", num(n.value),
        tam=num(v.tam, route="vision.tam"), capture=num(v.capture, route="vision.capture"),
        defensibility=num(v.defensibility, route="vision.defensibility"))
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
        if t.p_raw is None or cal is None:
            add(f"{k}.p", "p = clip(p_prior · W, 0, 1)", num(t.p), p_prior=step(f"{k}.p_prior"), W=step(f"{k}.W"))
        else:
            add(f"{k}.p_raw", "p = clip(p_prior · W, 0, 1)", num(t.p_raw), p_prior=step(f"{k}.p_prior"),
                W=step(f"{k}.W"))
            if cal.isotonic is not None and cal.method == "isotonic":
                add(f"{k}.p", ISOTONIC_RULE, num(t.p), p_raw=step(f"{k}.p_raw"),
                    x={"v": list(cal.isotonic.x), "policy": pkey("calibration", "isotonic", "x")},
                    y={"v": list(cal.isotonic.y), "policy": pkey("calibration", "isotonic", "y")})
            elif cal.platt is not None:
                add(f"{k}.p", PLATT_RULE, num(t.p), p_raw=step(f"{k}.p_raw"),
                    a=num(cal.platt.a, policy=pkey("calibration", "platt", "a")),
                    b=num(cal.platt.b, policy=pkey("calibration", "platt", "b")))
        add(f"{k}.budget", "budget = Σ count × unit cost", num(t.cost.budget),
            items=[{"name": i.name, "count": num(i.count, route=f"cost {i.name}"),
                    "unit_cost": num(i.unit_cost, route=f"cost {i.name}")} for i in tr.cost])
        add(f"{k}.floor_class", "floor_class = priors[class].floor_usd", num(t.cost.floor_class),
            floor=num(t.cost.floor_class, policy=pkey("priors", t.ref_class, "floor_usd")))
        prices = []
        for field, _, price in t.cost.floor_terms:
            d = next(x for x in t.deltas if x.field == field)
            table = pol.floors.delta[field]
            value = num(price)
            value["exact"] = q(_exact_price(table.points, d.magnitude))
            add(f"{k}.price[{field}]", "price = piecewise-linear floor through (0, 0) and the points, of |Δ|", value,
                source=num(d.source), target=num(d.target),
                points={"v": [[float(a), float(b)] for a, b in table.points],
                        "policy": pkey("floors", "delta", field, "points")})
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
    count = len(n.transitions)
    add(f"R_{count}", "R_n = V", num(n.R[count]), V=step("V"))
    for i in range(count - 1, -1, -1):
        name = n.transitions[i].name
        add(f"R_{i}", "R_i = −c_i + p_i · R_{i+1}", num(n.R[i]),
            c=step(f"{name}.c"), p=step(f"{name}.p"), R_next=step(f"R_{i + 1}"))
    add("score", "score = R_0", num(n.score), R_0=step("R_0"))
    ps = [step(f"{t.name}.p") for t in n.transitions]
    add("flat_product", "flat product = Π p_i", num(n.flat_product), p=ps)
    for i, t in enumerate(n.transitions):
        add(f"{t.name}.reach", "reach_i = Π_{j<i} p_j", num(t.reach), p=ps[:i])
        add(f"{t.name}.D", "D_i = reach_i · max(R_{i+1}, 0)", num(t.D),
            reach=step(f"{t.name}.reach"), R_next=step(f"R_{i + 1}"))
    add("binding", "binding = the first i with the largest U_i · D_i", val(n.binding),
        U=[step(f"{t.name}.U") for t in n.transitions], D=[step(f"{t.name}.D") for t in n.transitions])
    add("docked_score", "docked = R_0 refolded with R_n = 0", num(docked_score(n)),
        p=ps, c=[step(f"{t.name}.c") for t in n.transitions])
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
                "rule": next(x.rule for x in pol.gates if x.id == g.id)} for g in n.gates])
    return steps


def _exact_price(points: Sequence[tuple[float, float]], x: float) -> Fraction:
    xs = [Fraction(0)] + [Fraction(p[0]) for p in points]
    ys = [Fraction(0)] + [Fraction(p[1]) for p in points]
    at = Fraction(x)
    i = next((i for i in range(1, len(xs)) if at <= xs[i]), len(xs) - 1)
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (at - xs[i - 1]) / (xs[i] - xs[i - 1])


def _require(req_expr: ex.Expr, it: Interpreter, ctx: _TransitionContext, scoped: Sequence[Any]) -> dict[str, Any]:
    """A require line evaluated, with what the checker needs to evaluate it again."""
    try:
        result = truthy(it.eval(req_expr))
    except EvalError as err:
        return {"result": False, "check": {"error": err.message}}
    check: dict[str, Any]
    if isinstance(req_expr, ex.Compare):
        left, right = it.eval(req_expr.left), it.eval(req_expr.right)
        check = {"compare": req_expr.op, "left": _jsonable(left), "right": _jsonable(right)}
    elif isinstance(req_expr, ex.Name):
        check = {"name": req_expr.name, "value": _jsonable(it.eval(req_expr))}
    elif isinstance(req_expr, ex.Call) and req_expr.func == "grounded" and len(req_expr.args) == 1:
        text = it.eval(req_expr.args[0])
        check = {"grounded": _jsonable(text), "excerpts": [e.excerpt for e in ctx.supporting]}
    elif isinstance(req_expr, ex.Call) and req_expr.func == "measured":
        check = {"measured": [
            {"field": d.field, "source": _jsonable(d.source), "target": _jsonable(d.target),
             "bounds": [[op, _jsonable(bound)] for op, bound in field_bounds(ctx.t.threshold, d.field)]}
            for d in scoped
        ]}
    else:
        check = {"recorded": True}
    return {"result": result, "check": check}


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
                        "requires": [{"require": req.text, "line": req.span.line, **_require(req.expr, it, ctx, scoped)}
                                     for req in o.requires],
                    })
            rows.append(row)
    return rows


def route_certificate(c: Compiled, files: dict[str, str]) -> dict[str, Any]:
    d = c.decision
    return {
        "route": c.route.name,
        "file": files[c.route.file],
        "policy": c.policy.ref,
        "libraries": [u.name for u in c.libraries],
        "admissible_evidence": [e.name for e in c.route.evidence if admissible(e, c.route.as_of, c.policy.policy)],
        "steps": _steps(c),
        "coverage": _coverage(c),
        "decision": {
            "mode": d.mode,
            "verdict": d.verdict,
            "score": None if d.score is None else num(d.score),
        },
    }


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
    for c in compiled:
        for u in c.libraries:
            libraries.setdefault(u.name, {"name": u.name, "version": u.version, "sha256": u.sha256,
                                          **_where(Path(u.file) if not u.shipped else
                                                   data_dir("obligations") / f"{u.name}.obl", cert_dir)})
        if c.policy.ref not in policies:
            plain = base_store.load_ref(c.policy.ref)
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
        "routes": [route_certificate(c, files) for c in compiled],
    }
    return {**body, "digest": canonical.hash_json(body)}


def dumps(cert: dict[str, Any]) -> str:
    """The certificate's bytes: canonical JSON (sorted keys, shortest floats), one line."""
    return canonical.dumps(cert) + "\n"
