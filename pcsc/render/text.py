"""Plain-text views of compiled routes (deterministic; colour never changes content)."""

from __future__ import annotations

from pcsc.analysis.seams.analysis import RouteSeams
from pcsc.analysis.seams.detectors import JUMP_MULTIPLE
from pcsc.analysis.seams.experiment import (
    PAPER,
    PAPER_DELETIONS,
    PHASE0_ARMS,
    Experiment,
    PaperFigure,
    Summary,
    phase0_rate_name,
    rates,
    summary_rates,
    sweep_rates,
)
from pcsc.base.humanize import money, number, plural, points, probability, significant
from pcsc.base.modes import lowers
from pcsc.base.stats import rate_text
from pcsc.base.tables import table
from pcsc.compiler.session import Compiled
from pcsc.coverage import payoff_credits
from pcsc.score.route import RouteNumbers


def compile_text(compiled: list[Compiled]) -> str:
    blocks = []
    for c in compiled:
        n, r = c.numbers, c.route
        unit = c.policy.policy.units.label
        b = n.transitions[n.binding]
        T = "—" if n.criteria_score is None else f"{points(n.criteria_score)} ({n.bucket})"
        lines = [
            f"route {r.name}" + (f' "{r.title}"' if r.title else "") + f"  [{r.file}]",
            f"  policy      {c.policy.ref}  sha256 {c.policy.sha256}",
            f"  verdict     {verdict_line(c)}",
            f"  score       {score_line(c)}",
            f"  value       {money(n.value)} {unit}",
            *unit_lines(c),
            f"  criteria T  {T}",
            f"  eligible    {'yes' if n.eligible else 'no'}"
            + "".join(f"; gate {g.id} {'passed' if g.passed else 'FAILED'}" for g in n.gates),
            f"  binding     {b.name}  (U {significant(b.U, 4)}, D {money(b.D)}, learning cost "
            + ("—" if b.learning_cost is None else money(b.learning_cost))
            + ")",
            *tie_lines(n),
            voi_line(n),
            f"  flat Π p    {significant(n.flat_product)}",
            *fold_lines(n),
            *payoff_lines(c),
            "",
        ]
        header = ("transition", "class", "p_prior", "W", "p", "c", "bound by", "U", "D", "R_next")
        rows = [header] + [
            (
                t.name,
                t.ref_class,
                significant(t.p_prior, 4),
                probability(t.reweight.W),
                probability(t.p),
                money(t.cost.c),
                t.cost.bound_by,
                significant(t.U, 4),
                money(t.D),
                money(t.R_next),
            )
            for t in n.transitions
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for row in rows:
            cells = [
                cell.ljust(w) if i < 2 or i == 6 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append("  " + "  ".join(cells).rstrip())
        if c.coverage is not None and c.coverage.uncovered:
            lines.append("")
            lines += uncovered_lines(c)
        if c.coverage is not None and (c.coverage.admission or c.coverage.registry):
            lines.append("")
            lines += refusal_lines(c)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def tie_lines(n: RouteNumbers) -> list[str]:
    """A note under the binding line when every U·D is 0: the binding transition is then
    only the tie rule's pick, not a step that binds (docs/folds.md, "The option to stop")."""
    note = n.tie_note
    return [] if note is None else ["              " + note]


def voi_line(n: RouteNumbers) -> str:
    """The value-of-information selector beside the binding transition (`pcsc.score.voi`)."""
    v = n.voi
    assert v is not None, "score_route computes the selector"
    binding = n.transitions[n.binding].name
    if v.selected is None:
        best = max(v.rows, key=lambda row: row.voi)
        return (f"  learn first none worth learning  (best EVI − learning cost: {best.name} {money(best.voi)}; "
                f"binding says {binding})")
    row = v.rows[v.selected]
    cost = money(row.learning_cost) if row.cost_stated else "0 (none stated)"
    agree = "the binding transition too" if row.name == binding else f"binding says {binding}"
    return f"  learn first {row.name}  (EVI {money(row.evi)}, learning cost {cost}, VOI {money(row.voi)}; {agree})"


def fold_lines(n: RouteNumbers) -> list[str]:
    """The policy's fold, when it is not the paper's (nothing under the default)."""
    if n.fold.is_default:
        return []
    kind = []
    if n.fold.discount > 0:
        kind.append(f"discount {significant(n.fold.discount)}/year, d = "
                    + " ".join(significant(t.d) for t in n.transitions))
    if n.fold.abandonment:
        stops = [t.name for t in n.transitions if t.stops]
        kind.append("option to stop (R_i = max(0, ·))" + (f", stops before {', '.join(stops)}" if stops else ""))
    return ["  fold        " + "; ".join(kind)]


def payoff_lines(c: Compiled) -> list[str]:
    """The payoffs the fold credits along the way (nothing for a route without them)."""
    if c.numbers.payoffs is None:
        return []
    lines = []
    for p in payoff_credits(c.numbers, c.coverage):
        capped = "" if p.bound_by == "route" else f" (written {money(p.written)} {p.unit}; the policy's cap)"
        dock = "" if p.covered else f"; DOCK removes it: {p.reason}"
        lines.append(f"{p.state} {money(p.credited)} {c.policy.policy.units.label} on `{p.transition}`{capped}{dock}")
    return ["  payoffs     " + lines[0], *("              " + x for x in lines[1:])]


def verdict_line(c: Compiled) -> str:
    return f"{c.decision.verdict}  (coverage {mode_text(c)})"


def mode_text(c: Compiled) -> str:
    """The coverage mode, where it came from, and whether it is lower than the policy's:
    `off, from the command line: lowered from the policy's gate`."""
    d, own = c.decision, c.policy.policy.policy.coverage
    where = "configuration file" if d.mode_source == "config" else d.mode_source
    lowered = f": lowered from the policy's {own}" if lowers(d.mode, own) else ""
    return f"{d.mode}, from the {where}{lowered}"


def unit_lines(c: Compiled) -> list[str]:
    """Under a fold kept in another unit than usd: the line that says so, with the rate
    the route's usd amounts were converted at; none under usd."""
    units = c.policy.policy.units
    if units.is_default:
        return []
    rate = units.rate("usd")
    at = f"; the route's usd amounts at 1 usd = {significant(rate)} {units.fold}" if rate is not None else ""
    return [f"  unit        {units.fold} (every amount: c, D, R, value, score{at})"]


def score_line(c: Compiled) -> str:
    d, n = c.decision, c.numbers
    unit = c.policy.policy.units.label
    if d.score is None:
        policy = c.policy.policy
        asks = ["covered"] + (["admitted by its class"] if policy.admission else []) + (
            ["on the route's registry"] if policy.coverage.registry == "required" else [])
        if len(asks) > 1:
            what = ", ".join(asks[:-1]) + " and " + asks[-1]
            return (f"withheld: GATE refuses it until every material change is {what} "
                    f"(ungated R_0 {money(n.score)} {unit})")
        return f"withheld: GATE refuses it until every material change is covered (ungated R_0 {money(n.score)} {unit})"
    if d.docked:
        removed = "value and payoffs" if n.payoffs is not None else "value"
        return (f"{money(d.score)} {unit}   docked: {removed} over the uncovered path removed "
                f"(ungated {money(n.score)} {unit})")
    if c.route.shape is not None:
        return f"{money(d.score)} {unit}   (R of the series-parallel fold: the route forks and joins)"
    return f"{money(d.score)} {unit}   (R_0 of the staged fold)"


def uncovered_lines(c: Compiled) -> list[str]:
    """The undischarged obligations, with the exact `require` lines that failed."""
    assert c.coverage is not None
    lines = ["  uncovered material changes:"]
    for u in c.coverage.uncovered:
        d = u.delta
        lines.append(f"    {u.transition}: {d.field} {number(d.source)} -> {number(d.target)}")
        if not u.tried:
            lines.append(f"      no obligation of the route's libraries covers `{d.field}`")
        for a in u.tried:
            claim = "claimed in `discharges`" if a.claimed else "not listed in `discharges`"
            state = "undischarged" if a.failed else "would hold"
            lines.append(f"      obligation {a.obligation} ({claim}; {state})")
            for f in a.failed:
                lines.append(f"        {f.span.file}:{f.span.line}: {f.require}  — {f.reason}")
    return lines


def gate_text(compiled: list[Compiled]) -> str:
    out = []
    for c in compiled:
        out.append(f"{c.route.name}: {verdict_line(c)}  [{c.route.file}]")
        if c.coverage is not None and c.coverage.uncovered:
            out += uncovered_lines(c)
        if c.coverage is not None and (c.coverage.admission or c.coverage.registry):
            out += refusal_lines(c)
    return "\n".join(out)


def refusal_lines(c: Compiled) -> list[str]:
    """Changes the transitions' classes do not admit, and departures from the route's
    gold registry (refused under `coverage.registry = "required"`, else only counted)."""
    assert c.coverage is not None
    cov, lines = c.coverage, []
    if cov.admission:
        lines.append("  changes their class does not admit:")
        for a in cov.admission:
            what = "the transition" if a.field is None else a.field
            check = "" if a.check == "fields" else f"`{a.check}`: "
            lines.append(f"    {a.transition} ({a.ref_class}, {a.span.file}:{a.span.line}): {what}: {check}{a.reason}")
    if cov.registry:
        effect = "refused" if cov.registry_mode == "required" else "counted, not refused"
        lines.append(f"  departures from the gold registry ({len(cov.registry)}, {effect}):")
        lines += [f"    {f.kind}: {f.message}  ({f.span.file}:{f.span.line})" for f in cov.registry]
    return lines


def seams_text(results: list[RouteSeams]) -> str:
    blocks = []
    for r in results:
        c = r.compiled
        lines = [f"route {c.route.name}  [{c.route.file}]  honest score {money(c.numbers.score)} "
                 f"{c.policy.policy.units.label}, "
                 f"GATE: {r.honest_gate.verdict}", *fold_lines(c.numbers)]
        cases = any(s.identity.case is not None for s in r.seams)
        paid = c.numbers.payoffs is not None
        if not r.seams and c.route.shape is not None:
            lines.append("  no admissible deletion: no transition of this graph route leaves a state with one "
                         "transition in and one out for a state that is neither a join nor the end state")
        elif not r.seams:
            lines.append(f"  no admissible deletion (n = {len(c.route.transitions)}; seams need n >= 3)")
        header = ("k", "deleted", "Δ_k (formula)", "identity", *(("case",) if cases else ()), "sympy", "threshold",
                  "R_k+1", "sign", "removed cost", *(("removed payoff",) if paid else ()), "retained value", "silence",
                  "pipeline Δ", "drift", "verdict")
        rows = [header]
        for s in r.seams:
            i = s.identity
            arm = s.pipeline
            rows.append((
                str(s.k), s.transition, money(float(i.delta_formula)),
                "exact" if i.identity_holds else "FAILS",
                *((i.case or "—",) if cases else ()),
                "verified" if s.symbolically_verified else "FAILS",
                "—" if i.threshold is None else money(float(i.threshold)),
                money(float(i.R_next)),
                {True: "match", False: "MISMATCH", None: "n/a"}[i.sign_matches],
                money(float(i.removed_cost)), *((money(float(i.removed_payoff)),) if paid else ()),
                money(float(i.retained_value)),
                "rewarded" if i.silence_rewarded else "not rewarded",
                "—" if arm is None else money(arm.delta),
                "—" if arm is None else ("; ".join(d.text() for d in arm.drifted) or "none"),
                "did not compile" if arm is None else arm.verdict,
            ))
        if r.seams:
            left: tuple[int, ...] = (1, 3, 4, 7, 10, 12, 13)
            if cases:
                left = tuple(x + (x >= 4) for x in left) + (4,)
            if paid:  # the removed payoff after the removed cost
                left = tuple(x + (x > 8 + cases) for x in left)
            lines += table(rows, left=left)
            for s in r.seams:
                if s.pipeline is not None and s.pipeline.uncovered:
                    where = ", ".join(f"{t}.{f}" for t, f in s.pipeline.uncovered)
                    failed = "; ".join(s.pipeline.failed_requires) or "no listed obligation covers them"
                    lines.append(f"  seam {s.k}: uncovered {where}; failed: {failed}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def summary_text(s: Summary) -> str:
    r = {name: rate_text(k, n) for name, (k, n) in summary_rates(s).items()}
    rows = [
        ("routes", str(s.routes)),
        ("admissible deletions", str(s.deletions)),
        ("identity holds (exact rationals)", r["identity_holds"]),
        ("symbolically verified (sympy)", r["symbolically_verified"]),
        ("sign matches (corollary)", r["sign_matches"]),
        ("routes with a rewarded deletion", r["routes_with_rewarded_deletion"]),
        ("rewarded deletions", r["rewarded_deletions"]),
        ("splices GATE refuses", r["spliced_refused"]),
        ("routes whose every splice GATE refuses", r["routes_all_splices_refused"]),
        ("  routes with no admissible deletion, apart", str(s.routes_without_deletion)),
        ("honest routes GATE suspends", r["honest_suspended"]),
    ]
    return "\n".join(["cohort summary (rates with Wilson 95% intervals, percent)"] + table([("", "")] + rows)[1:])


#: The experiment's rows: measure, the rate's name (pcsc.analysis.seams.experiment.rates).
EXPERIMENT_ROWS = (
    ("identity matches", "identity_matches"),
    ("  of which verified by sympy for the shape", "symbolically_verified"),
    ("sign matches", "sign_matches"),
    ("routes with a score-improving deletion", "routes_with_score_improving_deletion"),
    ("GATE: routes whose every splice is refused", "routes_all_splices_refused"),
    ("GATE: honest routes suspended", "honest_suspended"),
    ("ours, all splices: relative win (splice > honest)", "all_splices_relative_wins"),
    ("ours, all splices: relative win under DOCK", "all_splices_relative_wins_dock"),
    ("ours, all splices: relative win under GATE", "all_splices_relative_wins_gate"),
    ("ours, all splices: fundability (splice > 0 ≥ honest)", "all_splices_fundability"),
    ("ours, all splices: fundability under DOCK", "all_splices_fundability_dock"),
    ("ours: splices beating the honest route, no delta floors", "splices_beating_honest_without_delta_floors"),
    ("ours: splices beating the honest route, delta floors", "splices_beating_honest_with_delta_floors"),
)
#: Phase 0's rows: measure, the measure's name (pcsc.analysis.seams.experiment.PHASE0_MEASURES).
PHASE0_ROWS = (
    ("relative win-by-silence (splice ≥ honest)", "relative_wins"),
    ("relative win-by-silence under DOCK", "relative_wins_dock"),
    ("fundability flips (splice ≥ 0 > honest)", "fundability_flips"),
    ("fundability flips under DOCK", "fundability_flips_dock"),
    ("drift reconciliation: sign flips, zero drift", "sign_flips_zero_drift"),
    ("drift reconciliation: sign flips, with drift", "sign_flips_with_drift"),
    ("ours: sign flips where no p or c moved", "sign_flips_unmoved"),
    ("ours: sign flips where some p or c moved", "sign_flips_moved"),
)
#: The ladder's rows: measure, the rates' name after `ladder_typed_` / `ladder_proxy_`,
#: and the paper's figure (pcsc.analysis.seams.experiment.PAPER) for its unit, if any.
LADDER_ROWS = (
    ("seam detections, every admissible splice", "seam_detections", None),
    ("seam detections, the seeded splice (random arm)", "seeded_seam_detections", "ladder_seeded_seam_detections"),
    ("honest flags, routes", "honest_flags", None),
    ("honest flags, edges (transitions)", "honest_edge_flags", "ladder_honest_edge_flags"),
)


def paper_text(figure: PaperFigure | None) -> str:
    """The paper's figure as a cell: its rate, or its unit where its count is not known to us."""
    if figure is None:
        return "—"
    if figure.k is None:
        return f"{figure.n} {figure.unit}"
    return rate_text(figure.k, figure.n)


def experiment_text(e: Experiment) -> str:
    mine = rates(e)
    s = e.summary
    rows = [
        ("measure", "this cohort", "paper"),
        ("admissible deletions", str(s.deletions), str(PAPER_DELETIONS)),
        ("routes with no admissible deletion (apart)", str(s.routes_without_deletion), "—"),
    ]
    for label, name in EXPERIMENT_ROWS:
        rows.append((label, rate_text(*mine[name]), paper_text(PAPER.get(name))))
    lines = [
        "experiment A and GATE / DOCK (definitions: pcsc/analysis/seams/experiment.py, docs/experiments.md)",
        "rates with Wilson 95% intervals, percent",
    ] + table(rows)
    phase = [("measure", *(f"{arm} arm" for arm in PHASE0_ARMS), "paper (arm not known to us)")]
    for label, measure in PHASE0_ROWS:
        phase.append((label, *(rate_text(*mine[phase0_rate_name(arm, measure)]) for arm in PHASE0_ARMS),
                      paper_text(PAPER.get(f"phase0_{measure}"))))
    lines += ["", f"Phase 0: each arm on its own, one splice per route (random arm seed {e.phase0.seed})"]
    lines += table(phase)
    ladder = [("measure", "typed-state (GATE)", "structural proxy", "paper's unit (counts not known to us)")]
    for label, name, paper in LADDER_ROWS:
        ladder.append((label, rate_text(*mine[f"ladder_typed_{name}"]), rate_text(*mine[f"ladder_proxy_{name}"]),
                       paper_text(PAPER.get(paper)) if paper else "—"))
    lines += ["", f"detection ladder: both detectors on the same splices and routes (proxy multiple {JUMP_MULTIPLE:g})"]
    lines += table(ladder)
    if e.value_sweep:
        sweep = [("V ×", "routes with a score-improving deletion", "score-improving deletions")]
        for row in e.value_sweep:
            r = sweep_rates(row)
            sweep.append((row.multiplier, rate_text(*r["routes_with_score_improving_deletion"]),
                          rate_text(*r["score_improving_deletions"])))
        lines += ["", "ours, value sweep: the terminal value V scaled, the exact identity (nothing recompiled)"]
        lines += table(sweep)
    return "\n".join(lines)


def compile_summary(compiled: list[Compiled], files: int) -> str:
    """One closing line for a compile of several routes: what each verdict counts."""
    counts: dict[str, int] = {}
    for c in compiled:
        counts[c.decision.verdict] = counts.get(c.decision.verdict, 0) + 1
    ineligible = sum(not c.numbers.eligible for c in compiled)
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    return (f"compiled {plural(len(compiled), 'route')} from {plural(files, 'file')}: {verdicts}"
            + (f"; {ineligible} ineligible (a blocking gate failed)" if ineligible else ""))
