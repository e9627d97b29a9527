"""`pcsc explain`: every number of a route with the rule and the inputs that produced it."""

from __future__ import annotations

from typing import Any

import attrs

from pcsc.base.humanize import number
from pcsc.compiler.session import Compiled
from pcsc.policy.model import Floors
from pcsc.score.calibration import rule as calibration_rule
from pcsc.score.calibration import rule_inputs as calibration_inputs
from pcsc.score.units import usd_rate
from pcsc.score.vision import vision_inputs

# Where a user reads each rule: the pages ship in docs/ beside the README.
RULES = "scoring rules (docs/formulas.md)"
FOLD = "staged fold (docs/formulas.md)"
COVERAGE = "coverage rules (docs/coverage.md)"
GRAPH = "series-parallel fold (docs/graphs.md)"


def num(x: Any) -> str:
    """A number as a person writes it: no float noise (0.64, not 0.6400000000000001),
    whole numbers without a decimal point."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return format(x, ".12g")


@attrs.frozen
class Step:
    symbol: str  # e.g. "launch.p"
    value: Any
    rule: str  # the formula, as docs/formulas.md writes it
    inputs: tuple[tuple[str, Any], ...]
    source: str  # where the rule's numbers come from (policy key, route line)


def graph_steps(c: Compiled) -> list[Step]:
    """The fold of a graph route: P, C, D of every block bottom up, then R at each state."""
    from pcsc.lang.ir import Edge, Parallel, Series, Shape
    from pcsc.score.graph import graph_fold

    n, r = c.numbers, c.route
    assert r.shape is not None
    ts = n.transitions
    g = graph_fold(
        r.shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts],
        [t.p for t in ts], [t.cost.c for t in ts], [t.d for t in ts], n.value, n.fold.abandonment, vs=n.payoffs,
    )
    paid = n.payoffs is not None
    steps: list[Step] = []
    where = f"{GRAPH}" if n.fold.is_default else f"{GRAPH}, policy {c.policy.ref} [fold]"

    def label(s: Shape) -> str:
        if isinstance(s, Edge):
            return s.transition
        if isinstance(s, Parallel):
            return f"[{g.entry(s)} ⇉ {g.exit_of(s)}]"
        return f"[{label(s.items[0])} … {label(s.items[-1])}]"

    def visit(s: Shape) -> None:
        if isinstance(s, Edge):
            return
        parts = s.items if isinstance(s, Series) else s.branches
        for part in parts:
            visit(part)
        b = g.blocks[id(s)]
        names = [label(x) for x in parts]
        if isinstance(s, Series):
            cost = ("C = Σ_i (Π_{j<i} P_j·D_j)·C_i − Σ_{i<last} (Π_{j≤i} P_j·D_j)·v_i (v_i: the payoff of the "
                    "state after item i)") if paid else "C = Σ_i (Π_{j<i} P_j·D_j)·C_i"
            rules = ("P = Π P_i", cost, "D = Π D_i")
            kind = "series"
        else:
            assert isinstance(s, Parallel)
            rules = ("P = Π P_b", "C = Σ C_b (independent branches)", "D = min D_b (the join waits for the slowest)")
            kind = "parallel"
        for sym, value, rule in zip("PCD", (b.P, b.C, b.D), rules, strict=True):
            inputs = tuple((name, getattr(g.blocks[id(x)], sym)) for name, x in zip(names, parts, strict=True))
            if paid and sym == "C" and isinstance(s, Series):
                inputs += tuple((f"v({g.exit_of(x)})", g.w(g.exit_of(x))) for x in parts[:-1])
            steps.append(Step(f"{sym}{label(s)}", value, f"{kind}: {rule}", inputs, where))

    visit(r.shape)
    items = g.spine_items
    rule = "−C_i + P_i·D_i·(v(next) + R(next))" if paid else "−C_i + P_i·D_i·R(next)"
    rule = f"max(0, {rule})" if n.fold.abandonment else rule
    for i in range(len(items) - 1, -1, -1):
        b = g.blocks[id(items[i])]
        name = label(items[i])
        after = g.exit_of(items[i])
        steps.append(
            Step(
                f"R({g.entry(items[i])})", g.spine_R[i], f"spine: R = {rule}",
                ((f"C ({name})", b.C), ("P", b.P), ("D", b.D), (f"R({after})", g.spine_R[i + 1]),
                 *(((f"v({after})", g.w(after)),) if paid else ())),
                where,
            )
        )
    spine_states = {g.entry(x) for x in items} | {g.exit_of(items[-1])}
    into_state = {}
    for t in reversed(ts):  # the first transition into each state
        into_state[t.target] = t
    for st, value in zip(r.states, n.R, strict=True):
        if st.name not in spine_states:
            into = into_state[st.name]
            steps.append(
                Step(
                    f"R({st.name})", value,
                    "inside a parallel block: the value of going on from here in this branch, with the other "
                    "branches' P (x of the transition into it)",
                    ((f"{into.name}.R_next", into.R_next),), where,
                )
            )
    return steps


def derive(c: Compiled) -> list[Step]:
    n, r, pol = c.numbers, c.route, c.policy
    ref = pol.ref
    steps: list[Step] = []
    add = steps.append
    add(vision_step(c))
    steps += evidence_steps(c)
    rw = pol.policy.reweighting
    for i, t in enumerate(n.transitions):
        tr = r.transitions[i]
        k = t.name
        add(
            Step(
                f"{k}.p_prior",
                t.p_prior,
                "p_prior = priors[class].p",
                (("class", t.ref_class),),
                f'policy {ref} priors."{t.ref_class}".p',
            )
        )
        w = t.reweight
        add(
            Step(
                f"{k}.sat(C)",
                w.sat_c,
                "S = Σ x_(i)·decay^i over C sorted descending; sat = S/(1+S)",
                (("C", [f"{name}={num(x)}" for name, x in w.supporting]), ("decay", rw.decay)),
                "effective weight = weight × tier_weight[tier], admissible evidence that supports",
            )
        )
        add(
            Step(
                f"{k}.sat(K)",
                w.sat_k,
                "as sat(C), over the evidence that contradicts",
                (("K", [f"{name}={num(x)}" for name, x in w.contradicting]),),
                "admissible evidence that contradicts",
            )
        )
        if not w.supporting and not w.contradicting:
            add(Step(f"{k}.W", w.W, "W = 1 (no admissible evidence)", (), RULES))
        else:
            add(
                Step(
                    f"{k}.W",
                    w.W,
                    "W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max)",
                    (("gc", rw.corroborate_gain), ("gk", rw.contradict_gain), ("w_min", rw.w_min), ("w_max", rw.w_max)),
                    f"policy {ref} [reweighting]",
                )
            )
        cal = pol.policy.calibration
        p_max = pol.policy.reweighting.p_max
        top, capped = ("1", ()) if p_max == 1.0 else ("p_max", (("p_max", p_max),))
        source = RULES if p_max == 1.0 else f"policy {ref} [reweighting] p_max"
        if t.p_raw is None or cal is None:
            add(Step(f"{k}.p", t.p, f"p = clip(p_prior · W, 0, {top})", (("p_prior", t.p_prior), ("W", w.W), *capped),
                     source))
        else:
            add(Step(f"{k}.p_raw", t.p_raw, f"p_raw = clip(p_prior · W, 0, {top})",
                     (("p_prior", t.p_prior), ("W", w.W), *capped), source))
            add(Step(f"{k}.p", t.p, calibration_rule(cal), calibration_inputs(t.p_raw, cal),
                     f"policy {ref} [calibration] (method {cal.method})"))
        units = pol.policy.units
        items = tuple((item.name, f"{num(item.count)} × {num(item.unit_cost)}") for item in tr.cost)
        if units.is_default:
            add(Step(f"{k}.budget", t.cost.budget, "budget = Σ n·u over cost items", items, f"{r.file}:{tr.span.line}"))
        else:
            add(Step(f"{k}.budget", t.cost.budget, f"budget = Σ n·u over cost items (usd) × rate, in {units.fold}",
                     (*items, ("rate", usd_rate(pol.policy))), f"{r.file}:{tr.span.line}, policy {ref} [units.rates]"))
        add(
            Step(
                f"{k}.floor_class",
                t.cost.floor_class,
                "floor_class = priors[class].floor_usd",
                (("class", t.ref_class),),
                f'policy {ref} priors."{t.ref_class}".floor_usd',
            )
        )
        add(
            Step(
                f"{k}.floor_delta",
                t.cost.floor_delta,
                "floor_delta = Σ price_f(|Δf|) over material fields with a floor table",
                tuple((f, f"|Δ|={num(m)} → {num(price)}") for f, m, price in t.cost.floor_terms),
                f"policy {ref} " + _floor_tables(pol.policy.floors, t.ref_class, [f for f, _, _ in t.cost.floor_terms]),
            )
        )
        add(
            Step(
                f"{k}.c",
                t.cost.c,
                "c = max(budget, floor_class, floor_delta)",
                (
                    ("budget", t.cost.budget),
                    ("floor_class", t.cost.floor_class),
                    ("floor_delta", t.cost.floor_delta),
                    ("bound by", t.cost.bound_by),
                ),
                RULES,
            )
        )
        add(
            Step(
                f"{k}.U",
                t.U,
                "U = max − min of estimates, else uncertainty.default",
                (("estimates", list(tr.estimates)), ("rule", t.U_rule)),
                f"policy {ref} [uncertainty]",
            )
        )
    if r.shape is not None:
        steps += graph_steps(c)
    paid = n.payoffs is not None
    for t in n.transitions:
        if t.payoff is not None:
            written = r.state(t.payoff.state).payoff_span
            cap = pol.policy.payoffs.max_usd if pol.policy.payoffs is not None else 0.0
            if any(u.target == t.target for u in n.transitions[: n.transitions.index(t)]):
                continue  # a join's payoff, once
            own = t.payoff.unit != "usd"  # written in the fold's unit: at face value, the cap converted
            add(Step(f"{t.payoff.state}.payoff", t.payoff.credited,
                     ("v = min(payoff, payoffs.max_usd × rate) (the payoff in the fold's unit), credited " if own
                      else "v = min(payoff, payoffs.max_usd), credited ")
                     + ("once every transition into the state has succeeded (a join: every branch)"
                        if r.shape is not None else "when the transition into the state succeeds"),
                     (("payoff", t.payoff.written), *((("unit", t.payoff.unit),) if own else ()), ("max_usd", cap),
                      ("bound by", t.payoff.bound_by),
                      ("reached by", t.name)),
                     f"{r.file}:{written.line if written else r.span.line}, policy {ref} [payoffs]"))
    for i in range(len(n.R) - 1, -1, -1):
        if r.shape is not None:
            break
        if i == len(n.R) - 1:
            add(Step(f"R_{i}", n.R[i], "R_n = V", (("V", n.value),), FOLD))
        else:
            t = n.transitions[i]
            if n.fold.is_default and not paid:
                add(
                    Step(
                        f"R_{i}",
                        n.R[i],
                        f"R_{i} = −c_{i} + p_{i}·R_{i + 1}",
                        ((f"c_{i} ({t.name})", t.cost.c), (f"p_{i}", t.p), (f"R_{i + 1}", n.R[i + 1])),
                        FOLD,
                    )
                )
                continue
            after = f"(v_{i + 1} + R_{i + 1})" if paid else f"R_{i + 1}"
            rule = f"−c_{i} + p_{i}·d_{i}·{after}" if not n.fold.is_default else f"−c_{i} + p_{i}·{after}"
            rule = f"max(0, {rule})" if n.fold.abandonment else rule
            inputs: tuple[tuple[str, object], ...] = (
                (f"c_{i} ({t.name})", t.cost.c), (f"p_{i}", t.p), (f"R_{i + 1}", n.R[i + 1]),
            )
            if paid:
                inputs += ((f"v_{i + 1} ({t.target})", 0.0 if t.payoff is None else t.payoff.credited),)
            if n.fold.discount > 0:
                inputs += ((f"d_{i} = (1 + {n.fold.discount:g})^(−h_{i})", t.d),)
            if n.fold.abandonment:
                inputs += (("stops here", t.stops),)
            add(Step(f"R_{i}", n.R[i], f"R_{i} = {rule}", inputs,
                     FOLD if n.fold.is_default else f"{FOLD}, policy {ref} [fold]"))
    if r.shape is not None:
        add(Step("score", n.score, f"score = R({r.states[0].name}) = −C + P·D·V of the route", (), GRAPH))
    else:
        add(Step("score", n.score, "score = R_0", (), RULES))
    add(
        Step(
            "flat_product",
            n.flat_product,
            "Π p_i (diagnostic only)",
            tuple((t.name, t.p) for t in n.transitions),
            RULES,
        )
    )
    for t in n.transitions:
        if r.shape is not None:
            add(
                Step(
                    f"{t.name}.D",
                    t.D,
                    "D_e = reach_e · max(x_e, 0) = max(0, ∂R/∂p_e)"
                    + ("" if n.fold.is_default else " / d_e")
                    + (", 0 from the spine item the planner stops at" if n.fold.abandonment else ""),
                    (("reach", t.reach), ("R_next = x_e", t.R_next)),
                    GRAPH,
                )
            )
            continue
        add(
            Step(
                f"{t.name}.D",
                t.D,
                ("D_i = reach_i · max(v_{i+1} + R_{i+1}, 0)" if paid else "D_i = reach_i · max(R_{i+1}, 0)")
                + ", reach_i = Π_{j<i} p_j"
                + ("" if n.fold.is_default else "·d_j")
                + (", 0 from the stage the planner stops at" if n.fold.abandonment else ""),
                (("reach", t.reach), ("R_next", t.R_next),
                 *((("v_next", 0.0 if t.payoff is None else t.payoff.credited),) if paid else ())),
                RULES,
            )
        )
    b = n.transitions[n.binding]
    add(
        Step(
            "binding",
            b.name,
            "argmax_i U_i·D_i (ties: earliest)"
            + ("" if n.binding_by_tie is None else
               "; every U_i·D_i is 0 here ("
               + ("the planner would not start" if n.binding_by_tie == "planner-does-not-start"
                  else "nothing is at stake") + "), so this is only the tie rule's pick: see learn first"),
            tuple((t.name, t.U * t.D) for t in n.transitions),
            RULES,
        )
    )
    steps += voi_steps(c)
    steps += seam_steps(c)
    if n.criteria_score is not None:
        add(
            Step(
                "T",
                n.criteria_score,
                "T = Σ w_i·clip(s_i, 0, 100) / Σ w_i over the criteria present",
                tuple((name, f"w={num(w)} s={num(s)}") for name, w, s in n.criteria_weights),
                f"policy {ref} [criteria]",
            )
        )
        add(
            Step(
                "bucket",
                n.bucket,
                "neg if T < neg_below; pos if T ≥ pos_from; else mix",
                (("T", n.criteria_score),),
                f"policy {ref} [buckets]",
            )
        )
    for g in n.gates:
        gate = next(x for x in pol.policy.gates if x.id == g.id)
        add(
            Step(
                f"gate {g.id}",
                "passed" if g.passed else "failed",
                gate.rule,
                (("kind", g.kind),),
                f"policy {ref} [[gates]]",
            )
        )
    add(Step("eligible", n.eligible, "no failed eligibility gate and no failed blocking risk gate", (), RULES))
    steps += coverage_steps(c)
    return steps


SEAM_RULE = ("Δ_k = (R_0 with e_k deleted) − R_0 = Q_k·[c_k − v_k + (1 − p_k·d_k)·(v_{k+1} + R_{k+1})]: the "
             "removed cost, less the removed payoff of the state e_k leaves, plus the retained value")
SEAM_RULE_STOP = ("Δ_k = (R_0 with e_k deleted) − R_0, the prefix folded to the planner's first stop (the case "
                  "named), the payoff v_k of the state e_k leaves deleted with it")
SEAM_RULE_GRAPH = ("Δ_k = (R_0 with e_k deleted) − R_0, by the series-parallel fold (the case named): the removed "
                   "cost, less the removed payoff of the state e_k leaves, plus the retained value")


def seam_steps(c: Compiled) -> list[Step]:
    """On a route with payoffs along the way, the deletion identity of each seam: Δ_k
    by its formula, checked against a refold in exact rationals, its shape proved
    symbolically (as `pcsc seams` shows it). Routes without payoffs show none here
    (`pcsc seams`)."""
    from pcsc.analysis.seams.analysis import identities

    n = c.numbers
    if n.payoffs is None:
        return []
    graph, stop = c.route.shape is not None, n.fold.abandonment
    rule = SEAM_RULE_GRAPH if graph else SEAM_RULE_STOP if stop else SEAM_RULE
    where = ("deletion identity (docs/graphs.md, Payoffs on a graph)" if graph else
             "deletion identity (docs/formulas.md, Payoffs along the way)")
    out = []
    for k, name, i, verified in identities(c):
        inputs: list[tuple[str, Any]] = [
            ("deleted", name), ("removed cost", float(i.removed_cost)), ("removed payoff", float(i.removed_payoff)),
            ("retained value", float(i.retained_value)), ("refold", float(i.delta_refold)),
            ("exact", i.identity_holds), ("sympy", verified)]
        if i.case is not None:
            inputs.append(("case", i.case))
        out.append(Step(f"seam {k}.Δ", float(i.delta_formula), rule, tuple(inputs), where))
    return out


VOI_RULE = (
    "EVI_i = mean over the values q of max(0, R_0 with p_i = q) − max(0, R_0); the values spread like the "
    "estimates around p_i (fewer than two estimates: p_i ± U/2), scaled by s ≤ 1 to stay in [0, 1]"
)


def voi_steps(c: Compiled) -> list[Step]:
    """The value of learning each p exactly, net of its learning cost, and the selection
    beside the binding transition (docs/formulas.md, "Value of information")."""
    n = c.numbers
    v = n.voi
    assert v is not None, "score_route computes the selector"
    out = []
    for row in v.rows:
        out.append(Step(f"{row.name}.EVI", row.evi, VOI_RULE,
                        (("values", list(row.values)), ("spread", row.spread), ("s", row.scale),
                         ("max(0, R_0)", v.now)), RULES))
        cost = (("learning_cost", row.learning_cost),) if row.cost_stated else (
            ("learning_cost", "none stated: counted as 0"),)
        out.append(Step(f"{row.name}.VOI", row.voi, "VOI_i = EVI_i − learning_cost_i",
                        (("EVI", row.evi), *cost), RULES))
    selected = "none worth learning" if v.selected is None else v.rows[v.selected].name
    out.append(Step("learn first", selected,
                    "argmax_i VOI_i (ties: earliest); none when every VOI_i ≤ 0",
                    (*((row.name, row.voi) for row in v.rows), ("binding", n.transitions[n.binding].name)),
                    RULES))
    return out


EVIDENCE_RULE = (
    "an item counts toward W when it has a capture date on or before as_of, a tier at least the policy's "
    "min_tier, is not unverified, and does not repeat the source or excerpt of an earlier counted item "
    "bearing on a common transition"
)


def evidence_steps(c: Compiled) -> list[Step]:
    """One step per excluded evidence item, with the reason it does not count."""
    from pcsc.score.evidence import exclusions

    r = c.route
    excluded = exclusions(r.evidence, r.as_of, c.policy.policy)
    out = []
    for e in r.evidence:
        why = excluded.get(e.name)
        if why is None:
            continue
        inputs: tuple[tuple[str, Any], ...] = (("reason", why.reason), ("kind", why.kind))
        if why.duplicate_of is not None:
            inputs += (("counted instead", why.duplicate_of),)
        out.append(Step(f"evidence {e.name}", "excluded", EVIDENCE_RULE, inputs, f"{e.span.file}:{e.span.line}"))
    return out


def vision_step(c: Compiled) -> Step:
    """V: the policy's formula (the venture one by default) over the vision's values,
    each as the formula reads it (a usd field in the fold's unit)."""
    r, pol = c.route, c.policy
    v, vp = r.vision, pol.policy.vision
    where = f"{r.file}:{v.span.line} (vision {v.state})"
    if vp.is_default and pol.policy.units.is_default:
        return Step("V", c.numbers.value, "V = tam × capture × defensibility",
                    (("tam", v.tam), ("capture", v.capture), ("defensibility", v.defensibility)), where)
    inputs: list[tuple[str, Any]] = list(vision_inputs(v, pol.policy).items())
    converted = [name for name, kind in vp.fields.items() if kind == "usd"]
    if converted and usd_rate(pol.policy) != 1.0:
        inputs.append(("usd rate", usd_rate(pol.policy)))
    line = f", {vp.file} line {vp.line}" if vp.line and vp.file else f", line {vp.line}" if vp.line else ""
    return Step("V", c.numbers.value, f"V = {vp.value}", tuple(inputs),
                f"{where}; formula: policy {pol.ref} [vision] value{line}")


def coverage_steps(c: Compiled) -> list[Step]:
    """Which obligation covered each material change, or which `require` lines failed;
    then the verdict (docs/coverage.md)."""
    out: list[Step] = []
    d = c.decision
    if c.coverage is not None:
        obligations = {o.name: o for o in c.route.obligations}
        for t, rows in c.coverage.transitions:
            for row in rows:
                if row.covered is None:
                    continue
                delta = row.delta
                change = (("from", delta.source), ("to", delta.target))
                if row.covered and row.by is not None:
                    ob = obligations[row.by]
                    out.append(Step(f"{t}.{delta.field} covered", row.by,
                                    "a material change is covered by an obligation listed in `discharges` that "
                                    "covers the field and whose every `require` line holds",
                                    (*change, ("requires", [r.text for r in ob.requires])),
                                    f"{ob.span.file}:{ob.span.line} (obligation {ob.name})"))
                else:
                    tried = tuple(
                        (a.obligation + ("" if a.claimed else " (not listed)"),
                         [f"{f.require} — {f.reason}" for f in a.failed])
                        for a in row.tried
                    )
                    out.append(Step(f"{t}.{delta.field} covered", "no",
                                    "no listed obligation covering the field holds; every obligation that covers it "
                                    "was tried", (*change, *tried) or change, COVERAGE))
        for a in c.coverage.admission:
            out.append(Step(f"{a.transition}.{a.field or '(transition)'} admitted", "no",
                            "a transition's reference class must admit each change it claims (the policy's "
                            "admission rules)", (("class", a.ref_class), ("check", a.check), ("reason", a.reason)),
                            f"{a.span.file}:{a.span.line}"))
        for f in c.coverage.registry:
            out.append(Step(f"registry {f.kind}", f.state or c.route.name,
                            f"the route against its gold registry (coverage.registry = {c.coverage.registry_mode})",
                            (("finding", f.message),), f"{f.span.file}:{f.span.line}"))
    rule = {
        "gate": "GATE: suspend-and-ask when any material change is uncovered, else released",
        "dock": "DOCK: R_n = 0 when any material change is uncovered (score docked), else released",
        "off": "coverage off: the ungated score",
    }[d.mode]
    policy = c.policy.policy
    if d.mode != "off" and (policy.admission or policy.coverage.registry == "required"):
        rule = rule.replace("is uncovered", "is uncovered or not admitted by its class, or the route departs "
                            "from a required registry")
    out.append(Step("verdict", d.verdict, rule, (("mode", d.mode), ("mode from", d.mode_source), ("score", d.score)),
                    COVERAGE))
    return out


def to_json(c: Compiled) -> dict[str, Any]:
    out = {
        "route": c.route.name,
        "policy": {"id": c.policy.policy.id, "version": c.policy.policy.version, "sha256": c.policy.sha256},
        "steps": [
            {
                "symbol": s.symbol,
                "value": s.value,
                "rule": s.rule,
                "inputs": {k: v for k, v in s.inputs},
                "source": s.source,
            }
            for s in derive(c)
        ],
    }
    if not c.policy.policy.units.is_default:
        out["unit"] = c.policy.policy.units.fold  # absent: usd
    return out


def to_text(c: Compiled) -> str:
    lines = [f"route {c.route.name} under policy {c.policy.ref} (sha256 {c.policy.sha256[:12]}…)", ""]
    units = c.policy.policy.units
    if not units.is_default:
        lines[1:1] = [f"every amount below is in {units.fold}"]
    for s in derive(c):
        value = _fmt(s.value)
        lines.append(f"{s.symbol} = {value}")
        lines.append(f"    rule:   {s.rule}")
        if s.inputs:
            lines.append("    inputs: " + ", ".join(f"{k}={_fmt(v)}" for k, v in s.inputs))
        lines.append(f"    from:   {s.source}")
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, float):
        return number(v)
    return str(v)


def _floor_tables(floors: Floors, ref_class: str, fields: list[str]) -> str:
    """`[floors.delta]`, or the class's own tables where it has them."""
    own = [f for f in fields if floors.key(ref_class, f)[1] == "by_class"]
    if not own:
        return "[floors.delta]"
    shared = [f for f in fields if f not in own]
    tables = ", ".join(f'[floors.by_class."{ref_class}".{f}]' for f in own)
    return tables + (" and [floors.delta]" if shared else "")

