"""The `pcsc evaluate` report of a ledger: each route's latest frozen forecast graded
against the outcomes resolved as of a date.

Route level: the released score, the criteria score T and the baselines of
`pcsc.forecast.baselines` (Πp, the flat NPV Πp·V − Σc, an out-of-fold logistic
regression) as scorers (AUC with a company bootstrap CI, top-quartile lift), and the
paired ΔAUC of the score against each of the others on the same resamples; transition level: the frozen p
against resolved milestones (Brier, ECE, calibration table, CIs by a cluster bootstrap
over routes). A forecast frozen on or after the date of an outcome it would be graded
on is refused, naming both times: a forecast must exist before the world can grade it.

Two modes, never pooled. A *prospective* forecast (the default) must be frozen before
the dates of its outcomes. A *retrospective* one (`pcsc freeze --retrospective`: its
as_of is in the past) is graded only against outcomes recorded in the ledger after it
was frozen ("frozen before outcome join"): the ledger anchors every outcome at the head
of the forecast chain when it was recorded, so an outcome anchored below the forecast's
seq was known first, and grading on it is refused. Milestones are also graded at the
policy's fixed windows (days after as_of).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.base.humanize import plural
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import (
    E741_LABEL_NOT_AFTER,
    E741_OUTCOME_NOT_AFTER,
    E741_RECORDED_BEFORE,
    E742_NOTHING_TO_GRADE,
    E745_LATEST_MIX_MODES,
    W751_GRADED_TOGETHER,
    phrase,
)
from pcsc.forecast.ledger import Entry
from pcsc.forecast.outcomes import Outcomes
from pcsc.forecast.records import Recorded

if TYPE_CHECKING:
    from pcsc.forecast.resolve import RouteOutcome
    from pcsc.forecast.scores_csv import Grading

PROSPECTIVE_RULE = "a prospective forecast is graded only on outcomes dated after the day it was frozen"
RETROSPECTIVE_RULE = (
    "a retrospective forecast is graded only on outcomes recorded in the ledger after it was frozen "
    "(frozen before outcome join)"
)


class GradingError(Exception):
    """The forecasts cannot be graded. ``code`` is the diagnostic code of ``messages``:
    PCSC-E741 (a forecast frozen on or after its outcome), PCSC-E742 (nothing to grade),
    PCSC-E745 (prospective and retrospective forecasts together)."""

    def __init__(self, code: codes.Code, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.code = code
        self.messages = messages


def mode_of(forecasts: Sequence[Entry]) -> str:
    """The one mode of ``forecasts``; raises `GradingError` (PCSC-E745) when they mix
    prospective and retrospective forecasts, naming the freeze times of each and the rule."""
    from pcsc.forecast.freeze import entry_mode

    by_mode: dict[str, list[Entry]] = {}
    for e in forecasts:
        by_mode.setdefault(entry_mode(e.document()), []).append(e)
    if len(by_mode) < 2:
        return next(iter(by_mode), "prospective")
    parts = []
    for mode in ("prospective", "retrospective"):
        group = by_mode[mode]
        times = sorted(e.frozen_at for e in group)
        span = times[0] if times[0] == times[-1] else f"{times[0]} to {times[-1]}"
        parts.append(f"{len(group)} {mode} (frozen {span}, e.g. route {group[0].route})")
    raise GradingError(codes.E745, [
        phrase(
            E745_LATEST_MIX_MODES,
            first=parts[0],
            second=parts[1],
            prospective=PROSPECTIVE_RULE,
            retrospective=RETROSPECTIVE_RULE,
        )
    ])


def _retrospective_problems(
    forecasts: Sequence[Entry], recorded: Sequence[Recorded], as_of: dt.date, refuser: str = "evaluate"
) -> list[str]:
    """Outcomes a retrospective forecast would read that were recorded before it was frozen."""
    problems = []
    for e in forecasts:
        route_as_of = dt.date.fromisoformat(e.document()["packet"]["as_of"])
        early = [
            o for o in recorded
            if o.route == e.route and o.forecast_seq < e.seq and o.observed <= as_of
            and (o.kind == "label" or o.observed > route_as_of)
        ]
        if early:
            o = early[0]
            more = f" (and {len(early) - 1} more)" if len(early) > 1 else ""
            problems.append(phrase(
                E741_RECORDED_BEFORE,
                route=e.route,
                frozen=e.frozen_at,
                seq=e.seq,
                kind=o.kind,
                observed=o.observed,
                recorded=o.recorded_at,
                anchor=o.forecast_seq,
                more=more,
                rule=RETROSPECTIVE_RULE,
                refuser=refuser,
            ))
    return problems


def _prospective_label_problems(
    forecasts: Sequence[Entry], labelled: Sequence[RouteOutcome], refuser: str = "evaluate"
) -> list[str]:
    """Route labels dated on or before the day a prospective forecast was frozen."""
    frozen_on = {e.route: e.frozen_at for e in forecasts}
    return [
        phrase(
            E741_LABEL_NOT_AFTER, route=o.route, frozen=frozen_on[o.route], date=o.date, rule=PROSPECTIVE_RULE,
            refuser=refuser,
        )
        for o in labelled
        if dt.date.fromisoformat(frozen_on[o.route][:10]) >= o.date
    ]


def label_problems(
    forecasts: Sequence[Entry], labelled: Sequence[RouteOutcome], recorded: Sequence[Recorded], as_of: dt.date,
    refuser: str,
) -> list[str]:
    """Why route labels may not grade ``forecasts`` (all of one mode) under their mode's
    rule: the check `evaluate` makes of route labels, for `pcsc ledger export`, whose
    table carries them. ``labelled``: the routes' labels as of ``as_of``."""
    if mode_of(forecasts) == "retrospective":
        return _retrospective_problems(forecasts, [r for r in recorded if r.kind == "label"], as_of, refuser)
    return _prospective_label_problems(forecasts, labelled, refuser)


def pooled_policies(forecasts: Sequence[Entry]) -> str | None:
    """The warning (PCSC-W751, as `pcsc rank` gives) when the forecasts graded together
    come from several policies: one AUC, lift and calibration then pool numbers made by
    different rules. None for one policy."""
    from pcsc.analysis.rank import policy_label

    by_policy: dict[str, list[str]] = {}
    for e in forecasts:
        p = e.document()["packet"]["policy"]
        by_policy.setdefault(policy_label(f"{p['id']}@{p['version']}", p["sha256"]), []).append(e.route)
    if len(by_policy) < 2:
        return None
    named = "; ".join(f"{label}: {plural(len(routes), 'route')} ({', '.join(sorted(routes)[:3])}"
                      f"{', …' if len(routes) > 3 else ''})" for label, routes in sorted(by_policy.items()))
    return phrase(W751_GRADED_TOGETHER, count=len(by_policy), policies=named)


#: Why a scorer has no value for a route (the score's words for any scorer not named).
NO_VALUE = {"score": "no value (score withheld or no criteria)",
            "unweighted": "no value (score withheld, or the packet cannot be refolded: a graph route or a "
                          "calibrated p)"}
#: What each fitted baseline is, for the report.
MODEL_WHAT = {"logistic": "logistic regression on the packet's structured factors, out-of-fold predictions "
              "(folds grouped by company)",
              "boosted": "gradient-boosted stumps on the same factors and folds (numpy, no extra)"}


UNRECORDED_SCORER = "unrecorded (frozen before packets named their code)"


def scorer_label(packet: Any) -> str:
    """The code a frozen packet was computed by: its pcsc version and code hash."""
    scorer = packet.get("scorer") if isinstance(packet, dict) else None
    if not isinstance(scorer, dict) or not isinstance(scorer.get("code_sha256"), str):
        return UNRECORDED_SCORER
    return f"pcsc {scorer.get('pcsc')} code sha256 {scorer['code_sha256'][:12]}"


def pooled_scorers(forecasts: Sequence[Entry]) -> str | None:
    """When the forecasts graded together were computed by different code (their packets'
    `scorer`), the groups, each with its routes; None for one."""
    by_scorer: dict[str, list[str]] = {}
    for e in forecasts:
        by_scorer.setdefault(scorer_label(e.document()["packet"]), []).append(e.route)
    if len(by_scorer) < 2:
        return None
    return "; ".join(f"{label}: {plural(len(routes), 'route')} ({', '.join(sorted(routes)[:3])}"
                     f"{', …' if len(routes) > 3 else ''})" for label, routes in sorted(by_scorer.items()))


def evaluate_report(
    forecasts: Sequence[Entry],
    outcomes: Outcomes,
    as_of: dt.date,
    *,
    B: int,
    seed: int,
    bins: int,
    recorded: Sequence[Recorded] = (),
) -> dict[str, Any]:
    """The evaluate report of ``forecasts`` (each route's latest frozen entry, all of one
    mode) graded against ``outcomes`` as of ``as_of``; ``recorded`` are the outcomes'
    ledger anchors (what a retrospective forecast is checked against). Raises
    ``GradingError``."""
    from pcsc.forecast import baselines, metrics
    from pcsc.forecast.resolve import frozen_routes, resolve_routes, resolve_windows, route_outcomes

    mode = mode_of(forecasts)
    packets = {e.route: e.document()["packet"] for e in forecasts}
    frozen_on = {e.route: e.frozen_at for e in forecasts}
    routes = frozen_routes([e.document() for e in forecasts], "ledger")
    milestones = [m for m in resolve_routes(routes, outcomes, as_of) if m.status in ("positive", "negative")]
    windows = [w for w in resolve_windows(routes, outcomes, as_of) if w.closed]
    labelled = [o for o in route_outcomes(outcomes, as_of, set(packets)) if o.label in ("positive", "negative")]
    problems = []
    if mode == "retrospective":
        problems = _retrospective_problems(forecasts, recorded, as_of)
    else:
        problems += _prospective_label_problems(forecasts, labelled)
        decided_at = [(m.route, m.transition, m.decided_on or m.due) for m in milestones]
        decided_at += [(w.route, f"{m.transition} (at {w.days} days)", m.decided_on or m.due)
                       for w in windows for m in w.milestones if m.status in ("positive", "negative")]
        seen = set()
        for route, transition, decided in decided_at:
            if decided is None or dt.date.fromisoformat(frozen_on[route][:10]) < decided:
                continue
            key = (route, transition.split(" ")[0])
            if key in seen:
                continue
            seen.add(key)
            problems.append(phrase(
                E741_OUTCOME_NOT_AFTER,
                route=route,
                transition=transition,
                frozen=frozen_on[route],
                decided=decided,
                rule=PROSPECTIVE_RULE,
            ))
    if problems:
        raise GradingError(codes.E741, problems)
    if not labelled and not milestones:
        raise GradingError(codes.E742, [phrase(E742_NOTHING_TO_GRADE)])

    scorers, paired, left_out = [], [], []
    y_route = {o.route: o.label == "positive" for o in labelled}
    columns: dict[str, dict[str, Any]] = {
        "score": {r: packets[r]["score"] for r in y_route},
        "criteria_score": {r: packets[r]["criteria_score"] for r in y_route},
    }
    extra, models = baselines.baseline_columns(packets, y_route, seed)
    columns.update(extra)
    for name, values in columns.items():
        cases = [r for r in y_route if values[r] is not None]
        left_out += [{"route": r, "scorer": name, "why": NO_VALUE.get(name, NO_VALUE["score"])}
                     for r in y_route if values[r] is None]
        ys = [int(y_route[r]) for r in cases]
        if cases and 0 < sum(ys) < len(ys):
            xs = [float(values[r]) for r in cases]
            ci = metrics.bootstrap_auc(xs, ys, B=B, seed=seed)
            lift = metrics.lift_top_quartile(xs, ys) if len(xs) >= 4 else None  # top ⌊n/4⌋ needs n ≥ 4
            scorers.append({"name": name, "n": len(cases), "positives": sum(ys), "auc": ci.estimate,
                            "ci": ci.ci, "lift_top_quartile": lift,
                            "B": B, "seed": seed, "skipped_resamples": ci.skipped})
    # paired ΔAUC of the score against every other scorer, all on the same resamples of the
    # same cases: the routes every graded column scores (a column scoring none is left out)
    graded = [c for c in columns if any(v is not None for v in columns[c].values())]
    both = [r for r in y_route if all(columns[c][r] is not None for c in graded)]
    ys_both = [int(y_route[r]) for r in both]
    if "score" in graded and len(graded) > 1 and both and 0 < sum(ys_both) < len(ys_both):
        _, deltas = metrics.bootstrap_many([[float(columns[c][r]) for r in both] for c in graded], ys_both,
                                           B=B, seed=seed)
        for other, d in zip(graded[1:], deltas[: len(graded) - 1], strict=True):  # the pairs (score, other)
            paired.append({"a": "score", "b": other, "delta_auc": d.estimate, "ci": d.ci, "n": len(both),
                           "B": B, "seed": seed, "skipped_resamples": d.skipped})

    calibration: dict[str, Any] | None = None
    if milestones:
        p, y, clusters = [], [], []
        for m in milestones:
            t = next(t for t in packets[m.route]["transitions"] if t["name"] == m.transition)
            p.append(float(t["p"]))
            y.append(int(m.status == "positive"))
            clusters.append(m.route)
        rep = metrics.calibration_report(p, y, bins=bins, B=B, seed=seed, clusters=clusters)
        calibration = {**rep.to_json(), "level": "transition", "bootstrap": "cluster by route", "B": B, "seed": seed}
    by_window = []
    for days in sorted({w.days for w in windows}):
        p_w, y_w = [], []
        for w in windows:
            if w.days != days:
                continue
            for m in w.milestones:
                if m.status in ("positive", "negative"):
                    t = next(t for t in packets[w.route]["transitions"] if t["name"] == m.transition)
                    p_w.append(float(t["p"]))
                    y_w.append(int(m.status == "positive"))
        by_window.append({"days": days, "routes": sum(1 for w in windows if w.days == days), "milestones": len(y_w),
                          "positives": sum(y_w), "brier": metrics.brier(p_w, y_w) if y_w else None})
    return {
        "mode": mode,
        "rule": RETROSPECTIVE_RULE if mode == "retrospective" else PROSPECTIVE_RULE,
        "as_of": as_of.isoformat(),
        "windows": by_window,
        "forecasts": [{"route": e.route, "seq": e.seq, "frozen_at": e.frozen_at} for e in forecasts],
        "routes_labelled": len(labelled),
        "milestones_resolved": len(milestones),
        "cases": [{"route": r, "label": "positive" if y_route[r] else "negative",
                   **{c: columns[c][r] for c in columns}, **_label_covariates(labelled, r)} for r in y_route],
        "baselines": [{"name": "flat_product", "fitted": True, "what": "Πp, the product of the frozen p"},
                      {"name": "flat_npv", "fitted": True, "what": "Πp·V − Σc: the route as one transition "
                       "(the structure ablation)"},
                      {"name": "unweighted", "fitted": True, "what": "the fold with W = 1, every p its prior "
                       "(the reweighting ablation)"},
                      {"name": "evidence_compliance", "fitted": True, "what": "share of transitions with admitted "
                       "supporting evidence and no uncovered material change (the contract baseline)"},
                      {"name": "criteria_score", "fitted": True, "what": "the criteria score T"},
                      *({**m.to_json(), "what": MODEL_WHAT[m.name]} for m in models)],
        "binding": baselines.binding_vs_voi(
            packets, [(m.route, m.transition) for m in milestones if m.status == "negative"]),
        "scorers": scorers,
        "paired": paired,
        "calibration": calibration,
        "left_out": left_out,
    }


def _label_covariates(labelled: Sequence[RouteOutcome], route: str) -> dict[str, Any]:
    """``{"covariates": {...}}`` of the route's label when it carries any, else nothing."""
    found = next((o.covariates for o in labelled if o.route == route), ())
    return {"covariates": dict(found)} if found else {}


def covariate_grading(report: Mapping[str, Any], B: int, seed: int) -> tuple[Grading | None, list[dict[str, Any]]]:
    """The covariates the labels carry, graded against the released score as a score
    table's are (`pcsc.forecast.scores_csv.grade`): on the labelled routes with a score
    and every covariate named by any label. The routes left out (and why) come beside;
    None when no label carries a covariate or too few routes remain."""
    from pcsc.forecast import covariates as cov
    from pcsc.forecast import scores_csv

    cases = report["cases"]
    names = sorted({name for case in cases for name in case.get("covariates", {})})
    if not names:
        return None, []
    left_out, kept = [], []
    for case in cases:
        missing = [n for n in names if n not in case.get("covariates", {})]
        if case["score"] is None or missing:
            why = "no score" if case["score"] is None else f"its label has no {', '.join(missing)}"
            left_out.append({"route": case["route"], "why": why})
        else:
            kept.append(case)
    labels = tuple(int(c["label"] == "positive") for c in kept)
    if not 0 < sum(labels) < len(labels):
        return None, [*left_out, {"route": None, "why": "the routes left hold one class: no covariate graded"}]

    def cell(value: Any) -> str:
        return ("yes" if value else "no") if isinstance(value, bool) else str(value)

    try:
        coded = tuple(cov.code_cells(n, [cell(c["covariates"][n]) for c in kept],
                                     [None if isinstance(c["covariates"][n], bool | str) else float(c["covariates"][n])
                                      for c in kept]) for n in names)
    except cov.CovariateError as exc:
        return None, [*left_out, {"route": None, "why": exc.message}]
    table = scores_csv.ScoreTable(
        path="ledger", sha256="", id_column="route", outcome_column="label", positive=("positive",),
        negative=("negative",), ids=tuple(c["route"] for c in kept), labels=labels,
        scorers=(scores_csv.Scorer("score", tuple(float(c["score"]) for c in kept)),), ignored_columns=(),
        left_out=(), covariates=coded,
    )
    return scores_csv.grade(table, B, seed), left_out


def report_plots(report: dict[str, Any], folder: Path) -> list[Path]:
    """Draw calibration.png and scores.png of ``report`` into ``folder`` (created if
    missing); the paths written. Raises ``pcsc.base.extras.ExtraMissing`` and ``OSError``."""
    from pcsc.forecast import plots
    from pcsc.forecast.metrics import CalibrationBin

    plots.require_matplotlib()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    cal = report["calibration"]
    if cal is not None:
        bins = [CalibrationBin(b["lower"], b["upper"], b["n"], b["mean_p"], b["observed"]) for b in cal["table"]]
        written.append(
            plots.calibration_plot(bins, folder / "calibration.png", "Calibration of frozen p (transition level)")
        )
    cases = [c for c in report["cases"] if c["score"] is not None]
    if cases:
        written.append(
            plots.score_distribution_plot({"score": [c["score"] for c in cases]},
                                          [int(c["label"] == "positive") for c in cases], folder / "scores.png",
                                          "Frozen scores by route outcome")
        )
    return written
