"""Text and JSON views of the forecast results: resolved milestones, graded reports
(a ledger's and a score table's), frozen entries, the ledger's rows and its check, and
a comparison of two policies. Pure: each returns a string or a JSON-ready value."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.base.humanize import money, plural
from pcsc.base.stats import rate_text
from pcsc.base.tables import ALL, all_but, table
from pcsc.lang.printer import number as literal_number

if TYPE_CHECKING:
    from pcsc.analysis.rank import Ranked
    from pcsc.forecast.learn import Comparison
    from pcsc.forecast.ledger import Entry, Head, Outcome, Verification
    from pcsc.forecast.resolve import MilestoneResult, RouteOutcome
    from pcsc.forecast.scores_csv import Grading, StratumGrade


def _aligned(rows: Sequence[Sequence[str]], right: set[int] | None = None) -> list[str]:
    """A table without indent; every column left-aligned except ``right``."""
    left = ALL if right is None else all_but(right, len(rows[0]))
    return table(rows, left=left, indent="")


# ---------------------------------------------------------------------- resolve
def resolve_summary(milestones: Sequence[MilestoneResult]) -> dict[str, int]:
    """How many milestones have each status (every status listed)."""
    from pcsc.forecast.resolve import STATUSES

    counts = Counter(m.status for m in milestones)
    return {s: counts.get(s, 0) for s in STATUSES}


def resolve_text(milestones: Sequence[MilestoneResult], labelled: Sequence[RouteOutcome], as_of: dt.date) -> str:
    """The resolved milestones and the route labels, as aligned tables."""
    counts = resolve_summary(milestones)
    lines = [f"resolved as of {as_of}: " + ", ".join(f"{n} {s}" for s, n in counts.items())]
    rows = [
        (
            m.route,
            m.transition,
            "—" if m.due is None else m.due.isoformat(),
            m.status,
            "—" if m.decided_on is None else m.decided_on.isoformat(),
            m.reason,
        )
        for m in milestones
    ]
    lines.extend(_aligned([("route", "transition", "due", "status", "decided", "reason"), *rows]))
    if labelled:
        lines.append("")
        lines.append("route labels:")
        lines.extend(
            _aligned(
                [("route", "label", "date", "bucket")]
                + [(r.route, r.label, r.date.isoformat(), r.bucket or "") for r in labelled]
            )
        )
    return "\n".join(lines) + "\n"


def windows_text(summary: Sequence[dict[str, Any]]) -> str:
    """The milestones read at the policy's fixed windows, one row per window length."""
    from pcsc.forecast.resolve import STATUSES

    if not summary:
        return ""
    rows: list[tuple[str, ...]] = [("window", "routes closed", "open", *STATUSES)]
    for w in summary:
        rows.append((f"{w['days']} days", str(w["closed"]), str(w["open"]), *(str(w["summary"][s]) for s in STATUSES)))
    return "\nat fixed windows (days after as_of; a route's window is open until its date passes):\n" + "\n".join(
        _aligned(rows, set(range(1, len(rows[0]))))
    ) + "\n"


# ---------------------------------------------------------------------- evaluate
def evaluate_text(report: dict[str, Any]) -> str:
    """The text of a ledger's evaluate report (`pcsc.forecast.report.evaluate_report`)."""
    lines = [f"graded as of {report['as_of']}: {plural(len(report['forecasts']), report['mode'] + ' forecast')}, "
             f"{plural(report['routes_labelled'], 'labelled route')}, "
             f"{plural(report['milestones_resolved'], 'resolved milestone')}",
             f"mode: {report['mode']}: {report['rule']}"]
    if report["scorers"]:
        rows: list[tuple[str, ...]] = [("scorer", "n", "positives", "AUC", "95% CI", "lift (top ¼)", "B", "seed")]
        for s in report["scorers"]:
            ci = "—" if s["ci"] is None else f"[{s['ci'][0]:.3f}, {s['ci'][1]:.3f}]"
            lift = "—" if s["lift_top_quartile"] is None else f"{s['lift_top_quartile']:.2f}"
            rows.append((s["name"], str(s["n"]), str(s["positives"]), f"{s['auc']:.3f}", ci, lift, str(s["B"]),
                         str(s["seed"])))
        lines += ["", "route level"] + table(rows)
    for d in report["paired"]:
        ci = "—" if d["ci"] is None else f"[{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}]"
        lines.append(f"  paired ΔAUC {d['a']} − {d['b']}: {d['delta_auc']:+.3f} {ci} (n = {d['n']})")
    for b in report.get("baselines", []) if report["scorers"] else []:
        if not b["fitted"]:
            lines.append(f"  baseline {b['name']}: not fitted ({b['why']})")
    lines += binding_lines(report.get("binding"))
    cal = report["calibration"]
    if cal is not None:
        lines += ["", f"transition level (n = {cal['n']}, {cal['bins']} equal-width bins; CIs: {cal['bootstrap']})"]
        for key in ("brier", "ece"):
            c = cal[key]
            ci = "—" if c.get("ci") is None else f"[{c['ci'][0]:.4f}, {c['ci'][1]:.4f}]"
            lines.append(f"  {key:6s} {c['estimate']:.4f} {ci}")
        rows = [("bin", "n", "mean p", "observed")]
        for b in cal["table"]:
            if b["n"]:
                rows.append((f"[{b['lower']:.1f}, {b['upper']:.1f})", str(b["n"]), f"{b['mean_p']:.3f}",
                             f"{b['observed']:.3f}"))
        lines += table(rows)
    if report["windows"]:
        rows = [("window", "routes", "milestones", "positives", "Brier")]
        for w in report["windows"]:
            brier = "—" if w["brier"] is None else f"{w['brier']:.4f}"
            rows.append((f"{w['days']} days", str(w["routes"]), str(w["milestones"]), str(w["positives"]), brier))
        lines += ["", "at fixed windows (days after as_of; routes whose window has closed)"] + table(rows)
    return "\n".join(lines)


#: how a route where U·D and the selector do not agree is listed (the counts' words)
RELATION_WORDS = {"differ": "differ", "voi-none": "VOI finds none worth learning",
                  "tie": "U·D only the tie rule's pick"}


def binding_lines(b: dict[str, Any] | None) -> list[str]:
    """The binding transition (U·D) beside the value-of-information selector, over the cohort."""
    if b is None or not b["routes"]:
        return []
    with_voi = b["routes"] - b["without_voi"]
    selectors = ("the value-of-information and knowledge-gradient selectors" if "kg_none" in b
                 else "the value-of-information selector")
    lines = ["", f"binding transition: U·D beside {selectors} ({plural(with_voi, 'route')}"
             + (f"; {b['without_voi']} frozen without the selector" if b["without_voi"] else "") + ")",
             f"  agree {b['agree']}, differ {b['differ']}, VOI finds none worth learning {b['voi_none']}"
             + (f", U·D only the tie rule's pick (every U·D is 0) {b['binding_by_tie']}"
                if b.get("binding_by_tie") else "")
             + (f", KG finds no trial worth observing {b['kg_none']}" if "kg_none" in b else "")]
    if b["failed_routes"]:
        n = b["failed_routes"]
        kg = f", by KG {rate_text(b['kg_named_failure'], n)}" if "kg_named_failure" in b else ""
        lines.append(f"  first failed milestone named: by U·D {rate_text(b['binding_named_failure'], n)}, "
                     f"by VOI {rate_text(b['voi_named_failure'], n)}{kg}")
    rows = [("route", "U·D", "VOI", "first failed", "how")]
    rows += [(r["route"], r["binding"] or "—", r["voi"] or "none", r["first_failed"] or "—", RELATION_WORDS[rel])
             for r in b["rows"] for rel in [r.get("relation")] if rel in RELATION_WORDS]
    if len(rows) > 1:
        lines += [f"  the {plural(len(rows) - 1, 'route')} where they do not agree:"]
        lines += table(rows, left=(0, 1, 2, 3, 4), indent="    ")
    return lines


def grading_text(g: Grading, level: float) -> str:
    """The aligned text report of one graded score table."""
    from pcsc.forecast.scores_csv import PROMOTION_RULE

    t = g.table
    n, pos = len(t.labels), t.positives
    pct = f"{level:.0%} CI"
    lines = [
        f"{t.path}: {plural(n, 'case')} graded, {pos} positive ({', '.join(t.positive)}) and {n - pos} negative "
        f"({', '.join(t.negative)}); case id `{t.id_column}`, outcome `{t.outcome_column}`",
    ]
    if t.left_out:
        cases = ", ".join(f"{x.id} ({x.outcome or 'empty'})" for x in t.left_out)
        lines.append(f"left out: {plural(len(t.left_out), 'row')} "
                     f"whose outcome is neither positive nor negative: {cases}")
    if t.ignored_columns:
        lines.append("ignored columns (no numbers): " + ", ".join(t.ignored_columns))
    lines.append("")
    rows: list[tuple[str, ...]] = [("scorer", "n", "positives", "AUC", pct, "lift top quartile")]
    for s in g.scorers:
        lift = "—" if s.lift_top_quartile is None else f"{s.lift_top_quartile:.2f}"
        rows.append((s.name, str(s.n), str(s.positives), f"{s.auc.estimate:.3f}", _ci(s.auc.ci), lift))
    lines += table(rows, left=(0, 4))
    if g.paired:
        lines += ["", "paired ΔAUC = AUC(a) − AUC(b), on the same resamples"]
        pairs: list[tuple[str, ...]] = [("a", "b", "ΔAUC", pct)]
        pairs += [(p.a, p.b, f"{p.delta_auc.estimate:+.3f}", _ci(p.delta_auc.ci, "+")) for p in g.paired]
        lines += table(pairs, left=(0, 1, 3))
    if g.strata:
        lines += _strata_lines(g, f"stratum of `{t.strata_column}`", g.strata)
    lines += _covariate_lines(g, pct)
    if g.incumbent is not None:
        lines += ["", f"incumbent `{g.incumbent}` and its challengers: {PROMOTION_RULE}"]
        rows_c: list[tuple[str, ...]] = [("challenger", "ΔAUC", pct, "")]
        rows_c += [(c.challenger, f"{c.delta_auc.estimate:+.3f}", _ci(c.delta_auc.ci, "+"),
                    "replaces the incumbent" if c.promote else "keeps the incumbent") for c in g.challenges]
        lines += table(rows_c, left=(0, 2, 3))
    skipped = f"; {g.skipped:,} without both classes skipped" if g.skipped else ""
    lines += ["", f"bootstrap: B = {g.B:,} resamples of the cases, seed {g.seed}, percentile intervals{skipped}",
              f"lift: the share of positives among the top ⌊n/4⌋ = {n // 4} by score (ties in row order), "
              f"over the base rate {pos}/{n}"]
    return "\n".join(lines)


def _ci(ci: list[float] | None, sign: str = "") -> str:
    return "—" if ci is None else f"[{ci[0]:{sign}.3f}, {ci[1]:{sign}.3f}]"


def _strata_lines(g: Grading, what: str, strata: Sequence[StratumGrade]) -> list[str]:
    """Each scorer's AUC within each stratum, then overall."""
    n, pos = len(g.table.labels), g.table.positives
    rows: list[tuple[str, ...]] = [("stratum", "n", "positives", *(s.name for s in g.scorers))]
    for st in strata:
        aucs = tuple("—" if a is None else f"{a:.3f}" for _, a in st.auc)
        rows.append((st.value or "(empty)", str(st.n), str(st.positives), *aucs))
    rows.append(("overall", str(n), str(pos), *(f"{s.auc.estimate:.3f}" for s in g.scorers)))
    return ["", f"within each {what} (AUC; — without both classes)", *table(rows, left=(0,))]


def _bound(x: float | None, side: str) -> str:
    return ("-∞" if side == "low" else "+∞") if x is None else f"{x:+.2f}"


def _p_value(p: float | None) -> str:
    """Two decimals; under 0.005 `<0.01` (0.00 would read as no chance at all)."""
    return "—" if p is None else "<0.01" if p < 0.005 else f"{p:.2f}"


def covariates_text(g: Grading, level: float, what: str) -> str:
    """The covariate sections of ``g`` under a heading, for a report other than a score table's."""
    return "\n".join(["", what, *_covariate_lines(g, f"{level:.0%} CI")])


def _covariate_lines(g: Grading, pct: str) -> list[str]:
    """Each covariate as a baseline, the scorers within its values, and the adjusted models."""
    if not g.covariates:
        return []
    lines = ["", "covariates, each graded alone as a baseline"]
    rows: list[tuple[str, ...]] = [("covariate", "n", "AUC", pct, "lift top quartile", "coding")]
    for c in g.covariates:
        lift = "—" if c.lift_top_quartile is None else f"{c.lift_top_quartile:.2f}"
        rows.append((c.covariate.name, str(len(c.covariate.values)), f"{c.auc.estimate:.3f}",
                     _ci(c.auc.ci), lift, c.covariate.coding))
    lines += table(rows, left=(0, 3, 5))
    lines += ["", "paired ΔAUC = AUC(scorer) − AUC(covariate), on the same resamples"]
    pairs: list[tuple[str, ...]] = [("scorer", "covariate", "ΔAUC", pct, "")]
    pairs += [(p.a, p.b, f"{p.delta_auc.estimate:+.3f}", _ci(p.delta_auc.ci, "+"),
               "covariate matches or beats it" if p.a in c.matched else "")
              for c in g.covariates for p in c.versus]
    lines += table(pairs, left=(0, 1, 3, 4))
    for c in g.covariates:
        if c.strata:
            lines += _strata_lines(g, f"value of covariate `{c.covariate.name}`", c.strata)
    for a in g.adjusted:
        apart = f"; {a.separated:,} of {a.used:,} resamples separate the outcomes" if a.separated else ""
        lines += ["", f"adjusted: logit P(positive) on `{a.scorer}` and the covariates (n = {a.n}{apart})"]
        if not a.converged:
            lines.append(f"  no estimate: {a.why}")
            continue
        terms: list[tuple[str, ...]] = [("term", "unit", "coefficient", pct, "Wald p")]
        for term in a.terms[1:]:
            terms.append((term.name, term.unit, f"{term.estimate:+.2f}",
                          f"[{_bound(term.low, 'low')}, {_bound(term.high, 'high')}]",
                          _p_value(term.p)))
        lines += table(terms, left=(0, 1, 3))
    if any(a.separated for a in g.adjusted):
        lines.append("  ∞: a resample the terms separate has no finite coefficient; its diverging coefficients "
                     "count at ±∞, so more than 2.5% of them on one side leaves that side of the interval open")
    return lines


# ---------------------------------------------------------------------- freeze
def frozen_row(e: Entry, r: Ranked) -> dict[str, Any]:
    """One frozen entry in `pcsc freeze --format json`."""
    return {
        "seq": e.seq,
        "route": e.route,
        "file": e.file,
        "rank": r.rank,
        "verdict": r.compiled.decision.verdict,
        "score": r.compiled.decision.score,
        "payload_sha256": e.payload_sha256,
        "entry_sha256": e.entry_sha256,
    }


def freeze_text(path: Path | str, frozen: Sequence[tuple[Entry, Ranked]], mode: str = "prospective") -> str:
    """What one freeze wrote: the transaction, then one row per entry."""
    entries = [e for e, _ in frozen]
    n = len(entries)
    head = (
        f"froze {plural(n, mode + ' forecast')} into {path} at {entries[0].frozen_at} "
        f"(seq {entries[0].seq}–{entries[-1].seq}, one transaction)"
    )
    rows: list[tuple[str, ...]] = [("seq", "rank", "route", "file", "verdict", "entry_sha256")]
    for e, r in frozen:
        rows.append((str(e.seq), str(r.rank), e.route, e.file, r.compiled.decision.verdict, e.entry_sha256))
    return head + "\n" + "\n".join(_aligned(rows, {0, 1}))


# ---------------------------------------------------------------------- ledger verify
RECOMPUTED = ("payload_sha256", "entry_sha256", "prev_sha256 links", "outcome forecast anchors")
NO_HEAD = ("deletion of the newest rows (or a rewrite of the whole chain) cannot be detected without a recorded "
           "head: record one with `pcsc ledger head` (or a signed `pcsc ledger checkpoint`), keep it outside the "
           "ledger, and pass it to `pcsc ledger verify --head` (or `--checkpoint`)")


def verify_json(result: Verification) -> dict[str, Any]:
    """The check of a ledger, for `pcsc ledger verify --format json`: the counts, the
    heads, the problems, and what exactly was checked."""
    first = result.first_bad
    check = result.head_check
    return {
        "ok": result.ok,
        "entries": result.entries,
        "outcomes": result.outcomes,
        "heads": {"entries": result.entries_head, "outcomes": result.outcomes_head},
        "first_bad": None if first is None else {"table": first.table, "seq": first.seq, "problem": first.message},
        "problems": [{"table": p.table, "seq": p.seq, "problem": p.message} for p in result.problems],
        "head": result.head.as_json() if result.ok else None,
        "checked": {
            "rows": {"entries": result.entries, "outcomes": result.outcomes},
            "recomputed": list(RECOMPUTED),
            "guard_triggers": list(result.guards),
            "guard_triggers_compared_by": f"{result.compared_by}; a missing, altered or unknown object is reported",
            "schema_objects": list(result.schema),
            "integrity_check": result.integrity,
            "recorded_head": None if check is None else {
                "token": str(check.token),
                "held": check.ok,
                "appended": {"entries": check.appended_entries, "outcomes": check.appended_outcomes},
            },
        },
        "not_checked": [] if check is not None else [NO_HEAD],
    }


def _entries(result: Verification) -> str:
    """The entries verified: forecasts, and the preregistered plans among them when any."""
    forecasts = plural(result.entries - result.plans, "forecast")
    return forecasts if not result.plans else f"{forecasts} and {plural(result.plans, 'preregistered plan')}"


def verify_text(path: Path, result: Verification) -> str:
    """The summary of an intact ledger: what was checked, the heads, and what was not."""
    check = result.head_check
    lines = [
        f"ok: {path} is intact: {_entries(result)}, {plural(result.outcomes, 'outcome')}",
        f"  head of forecasts {result.entries_head}",
        f"  head of outcomes  {result.outcomes_head}",
        f"  head token        {result.head.token}",
        f"  checked: {plural(result.entries, 'row')} of entries and {plural(result.outcomes, 'row')} of outcomes: "
        "payload hashes, entry hashes, links and outcome anchors recomputed; "
        f"{len(result.schema)} schema objects ({len(result.guards)} guard triggers) compared by {result.compared_by}, "
        "no other present"
        + ("; SQLite integrity check passed" if result.integrity else ""),
    ]
    if check is not None:
        lines.append(f"  recorded head {check.token} holds: nothing at or before it was removed or rewritten; "
                     f"{plural(check.appended_entries, 'forecast')} and {plural(check.appended_outcomes, 'outcome')} "
                     "appended since")
    else:
        lines.append("  not checked: " + NO_HEAD)
    return "\n".join(lines) + "\n"


def head_text(head: Head) -> str:
    """`pcsc ledger head`: the token alone, one line to paste."""
    return f"{head.token}\n"


# ---------------------------------------------------------------------- ledger show
def entry_json(e: Entry) -> dict[str, Any]:
    """A frozen forecast, every column, its payload parsed."""
    return {
        "seq": e.seq,
        "kind": e.kind,
        "route": e.route,
        "file": e.file,
        "policy": e.policy.as_json(),
        "pcsc": e.pcsc_version,
        "inputs": [{"path": p, "sha256": h} for p, h in e.inputs],
        "frozen_at": e.frozen_at,
        "payload": e.document(),
        "payload_sha256": e.payload_sha256,
        "prev_sha256": e.prev_sha256,
        "entry_sha256": e.entry_sha256,
    }


def outcome_json(o: Outcome) -> dict[str, Any]:
    """A stored outcome, every column, its payload parsed."""
    return {
        "seq": o.seq,
        "kind": o.kind,
        "route": o.route,
        "observed": o.observed,
        "source": o.source,
        "forecast": {"seq": o.forecast_seq, "sha256": o.forecast_sha256},
        "pcsc": o.pcsc_version,
        "recorded_at": o.recorded_at,
        "payload": o.document(),
        "payload_sha256": o.payload_sha256,
        "prev_sha256": o.prev_sha256,
        "entry_sha256": o.entry_sha256,
    }


def _entry_cells(e: Entry) -> tuple[str, ...]:
    doc = e.document()
    packet = doc.get("packet", {}) if isinstance(doc, dict) else {}
    rank_info = doc.get("rank", {}) if isinstance(doc, dict) else {}
    score = packet.get("score")
    rank_cell = f"{rank_info['rank']}/{rank_info['of']}" if "rank" in rank_info and "of" in rank_info else "—"
    return (
        str(e.seq),
        e.frozen_at,
        e.route,
        e.file,
        f"{e.policy.id}@{e.policy.version}",
        str(packet.get("verdict", "—")),
        "—" if not isinstance(score, (int, float)) else money(score),
        rank_cell,
        e.entry_sha256[:16],
    )


def show_text(path: Path, route: str | None, entries: Sequence[Entry], outcomes: Sequence[Outcome],
              plans: Sequence[Entry] = ()) -> str:
    """The frozen forecasts, the stored outcomes and the preregistered plans (when there
    are any), oldest first, one row each."""
    what = f" for route {route}" if route else ""
    out = [f"{path}: {plural(len(entries), 'forecast')}{what}"]
    if entries:
        rows: list[tuple[str, ...]] = [
            ("seq", "frozen_at", "route", "file", "policy", "verdict", "score", "rank", "entry_sha256")
        ]
        out += _aligned(rows + [_entry_cells(e) for e in entries], {0, 6, 7})
    out.append(f"{plural(len(outcomes), 'outcome')}{what}")
    if outcomes:
        orows: list[tuple[str, ...]] = [("seq", "recorded_at", "route", "observed", "kind", "payload", "entry_sha256")]
        orows += [(str(o.seq), o.recorded_at, o.route, o.observed, o.kind, payload_text(o.document()),
                   o.entry_sha256[:16]) for o in outcomes]
        out += _aligned(orows, {0})
    if plans:
        out.append(plural(len(plans), "preregistered plan"))
        prows: list[tuple[str, ...]] = [("seq", "frozen_at", "name", "forecasts", "predictions", "entry_sha256")]
        for e in plans:
            doc = e.document()
            graded = doc.get("cohort", {}).get("forecasts", []) if isinstance(doc, dict) else []
            claims = doc.get("predictions", []) if isinstance(doc, dict) else []
            prows.append((str(e.seq), e.frozen_at, e.route, str(len(graded)), str(len(claims)), e.entry_sha256[:16]))
        out += _aligned(prows, {0, 3, 4})
    return "\n".join(out)


def payload_text(doc: Any) -> str:
    """An outcome's payload for reading: `users = 28_750, arr = 900_000`, `label = positive`
    (values as the outcomes file writes them; JSON keeps the payload as stored)."""
    if isinstance(doc, dict):
        items = [*doc.get("fields", {}).items(), *((k, v) for k, v in doc.items() if k != "fields")]
        return ", ".join(f"{k} = {_literal(v)}" for k, v in items)
    return _literal(doc)


def _literal(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return literal_number(float(v))
    if isinstance(v, dict):
        return "{" + payload_text(v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    return str(v)


# ---------------------------------------------------------------------- policy compare
def compare_payload(result: Comparison) -> dict[str, Any]:
    """The JSON of a comparison (without the policies' names and the hold-out share)."""
    return {
        "routes": result.routes,
        "transitions": result.transitions,
        "brier_old": result.brier_old,
        "brier_new": result.brier_new,
        "auc_old": result.auc_old,
        "auc_new": result.auc_new,
        "ece_old": result.ece_old,
        "ece_new": result.ece_new,
        "gate": {
            "checked": result.gate_checked,
            "changed": [{"route": f.route, "old": f.old, "new": f.new} for f in result.verdict_changes],
            "unchecked": [{"route": route, "why": why} for route, why in result.gate_unchecked],
        },
        "cases": {"held_out": result.cases, "training": result.training_cases, "labelled": result.labelled,
                  "minimum": result.min_cases},
        "regressions": list(result.regressions),
        "promote": result.promote,
        "reason": result.reason,
    }


def compare_text(old: str, new: str, result: Comparison, cutoff: str | None = None) -> str:
    """Two policies scored on the same held-out routes, and which one to keep."""

    def show(x: float | None, digits: int) -> str:
        return "—" if x is None else f"{x:.{digits}f}"

    lines = [
        f"{old} vs {new} on {plural(result.routes, 'held-out route')} "
        f"({plural(result.transitions, 'resolved transition')})",
        ("  split  " + (f"frozen before {cutoff} (fit) / on or after it (graded)" if cutoff else "by route name")
         + f": {result.training_cases} training and {result.cases} held-out cases (routes with a resolved "
         f"outcome), at least {result.min_cases} required"),
        f"  Brier  {show(result.brier_old, 4)} -> {show(result.brier_new, 4)}",
        f"  AUC    {show(result.auc_old, 3)} -> {show(result.auc_new, 3)}",
        f"  ECE    {show(result.ece_old, 4)} -> {show(result.ece_new, 4)}",
        f"  GATE   {plural(result.gate_checked, 'held-out route')} recompiled under both, "
        f"{plural(len(result.verdict_changes), 'verdict')} changed, {len(result.gate_unchecked)} not checked",
    ]
    lines += [f"    {f.route}: {f.old} -> {f.new}" for f in result.verdict_changes]
    lines += [f"    {route}: not checked ({why})" for route, why in result.gate_unchecked]
    if result.promote:
        lines.append(f"  promote {new}: {result.reason}")
    else:
        lines.append(f"  keep {old}: not promoted")
        lines += [f"    regression: {r}" for r in result.regressions]
    return "\n".join(lines) + "\n"


def prereg_text(graded: dict[str, Any]) -> str:
    """The predictions of a preregistered plan, each MET, NOT MET or UNDEFINED."""
    lines = [f"preregistered plan {graded['name']} (seq {graded['seq']}, frozen {graded['frozen_at']}):"]
    for p in graded["predictions"]:
        value = "—" if p["value"] is None else f"{p['value']:.3f}"
        lines.append(f"  {p['id']}  {p['claim']}  value {value}  {p['verdict']}")
    lines += [f"  differs from the plan: {d['option']} planned {d['planned']}, used {d['used']}"
              for d in graded["deviations"]]
    return "\n".join(lines) + "\n"
