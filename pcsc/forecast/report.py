"""The `pcsc evaluate` report of a ledger: each route's latest frozen forecast graded
against the outcomes resolved as of a date.

Route level: the released score and the criteria score T as two scorers (AUC with a
company bootstrap CI, top-quartile lift, paired ΔAUC); transition level: the frozen p
against resolved milestones (Brier, ECE, calibration table, CIs by a cluster bootstrap
over routes). A forecast frozen on or after the date of an outcome it would be graded
on is refused, naming both times: a forecast must exist before the world can grade it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcsc.diagnostics import codes
from pcsc.forecast.ledger import Entry
from pcsc.forecast.outcomes import Outcomes


class GradingError(Exception):
    """The forecasts cannot be graded. ``code`` is the diagnostic code of ``messages``:
    PCSC-E741 (a forecast frozen on or after its outcome), PCSC-E742 (nothing to grade)."""

    def __init__(self, code: codes.Code, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.code = code
        self.messages = messages


def evaluate_report(
    forecasts: Sequence[Entry], outcomes: Outcomes, as_of: dt.date, *, B: int, seed: int, bins: int
) -> dict[str, Any]:
    """The evaluate report of ``forecasts`` (each route's latest frozen entry) graded
    against ``outcomes`` as of ``as_of``. Raises ``GradingError``."""
    from pcsc.forecast import metrics
    from pcsc.forecast.resolve import frozen_routes, resolve_routes, route_outcomes

    packets = {e.route: e.document()["packet"] for e in forecasts}
    frozen_on = {e.route: e.frozen_at for e in forecasts}
    routes = frozen_routes([e.document() for e in forecasts], "ledger")
    milestones = [m for m in resolve_routes(routes, outcomes, as_of) if m.status in ("positive", "negative")]
    labelled = [o for o in route_outcomes(outcomes, as_of, set(packets)) if o.label in ("positive", "negative")]
    problems = []
    for o in labelled:
        if dt.date.fromisoformat(frozen_on[o.route][:10]) >= o.date:
            problems.append(f"route {o.route}: forecast frozen {frozen_on[o.route]} is not before the label it "
                            f"would be graded on (dated {o.date}); evaluate refuses it")
    for m in milestones:
        decided = m.decided_on or m.due
        if decided is not None and dt.date.fromisoformat(frozen_on[m.route][:10]) >= decided:
            problems.append(f"route {m.route}, transition {m.transition}: forecast frozen {frozen_on[m.route]} is not "
                            f"before the outcome it would be graded on (decided {decided}); evaluate refuses it")
    if problems:
        raise GradingError(codes.E741, problems)
    if not labelled and not milestones:
        raise GradingError(
            codes.E742, ["nothing to grade: no route label and no resolved milestone yet (see `pcsc resolve`)"]
        )

    scorers, paired, left_out = [], [], []
    y_route = {o.route: o.label == "positive" for o in labelled}
    columns = {
        "score": {r: packets[r]["score"] for r in y_route},
        "criteria_score": {r: packets[r]["criteria_score"] for r in y_route},
    }
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
    both = [r for r in y_route if all(columns[c][r] is not None for c in columns)]
    ys_both = [int(y_route[r]) for r in both]
    if len(scorers) == 2 and both and 0 < sum(ys_both) < len(ys_both):
        d = metrics.paired_delta_auc([float(columns["score"][r]) for r in both],
                                     [float(columns["criteria_score"][r]) for r in both], ys_both, B=B, seed=seed)
        paired.append({"a": "score", "b": "criteria_score", "delta_auc": d.estimate, "ci": d.ci, "n": len(both)})

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
    return {
        "as_of": as_of.isoformat(),
        "forecasts": [{"route": e.route, "seq": e.seq, "frozen_at": e.frozen_at} for e in forecasts],
        "routes_labelled": len(labelled),
        "milestones_resolved": len(milestones),
        "cases": [{"route": r, "label": "positive" if y_route[r] else "negative",
                   "score": columns["score"][r], "criteria_score": columns["criteria_score"][r]} for r in y_route],
        "scorers": scorers,
        "paired": paired,
        "calibration": calibration,
        "left_out": left_out,
    }


def report_plots(report: dict[str, Any], folder: Path) -> list[Path]:
    """Draw calibration.png and scores.png of ``report`` into ``folder`` (created if
    missing); the paths written. Raises ``PlotsUnavailable`` and ``OSError``."""
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
