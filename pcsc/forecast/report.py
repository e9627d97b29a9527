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
from collections.abc import Sequence
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
    extra, logistic = baselines.baseline_columns(packets, y_route, seed)
    columns.update(extra)
    for name, values in columns.items():
        cases = [r for r in y_route if values[r] is not None]
        left_out += [{"route": r, "scorer": name, "why": "no value (score withheld or no criteria)"}
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
                   **{c: columns[c][r] for c in columns}} for r in y_route],
        "baselines": [{"name": "flat_product", "fitted": True, "what": "Πp, the product of the frozen p"},
                      {"name": "flat_npv", "fitted": True, "what": "Πp·V − Σc"},
                      {"name": "criteria_score", "fitted": True, "what": "the criteria score T"},
                      {**logistic.to_json(), "what": "logistic regression on the packet's structured factors, "
                       "out-of-fold predictions (folds grouped by company)"}],
        "binding": baselines.binding_vs_voi(
            packets, [(m.route, m.transition) for m in milestones if m.status == "negative"]),
        "scorers": scorers,
        "paired": paired,
        "calibration": calibration,
        "left_out": left_out,
    }


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
