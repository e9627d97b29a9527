"""Preregistration (`pcsc prereg`, `pcsc evaluate --prereg NAME`): predictions written
down, and frozen in the ledger, before the outcomes that grade them.

A *plan* names its predictions as predicates over the metrics `pcsc evaluate` computes,
its cohort (the routes, and the very forecasts it grades: their ledger seqs and hashes),
the scorer (the forecasts' policies and the hash of the code that computed them) and the
analysis options (bootstrap resamples, seed, bins, mode, resolution date). It is frozen
as an entry of kind ``prereg`` in the forecast chain, so every outcome recorded after it
anchors at or above its seq: a plan frozen after any of its outcomes is refused.

A predicate is ``METRIC(ARGS)[.FIELD] OP NUMBER``:

- ``auc(S)``, ``lift(S)`` (top-quartile lift), ``n(S)`` of a scorer S that `evaluate`
  grades (``score``, ``criteria_score``, ``flat_product``, ``flat_npv``, ``logistic``);
- ``delta_auc(score, B)``, the paired ΔAUC of the score against scorer B;
- ``brier()``, ``ece()``: transition-level calibration;
- ``.lo`` and ``.hi`` name the bounds of the 95% bootstrap interval (AUC, ΔAUC, Brier,
  ECE), the estimate otherwise; OP is one of ``>= > <= < ==``.

A prediction is MET when the predicate holds, NOT MET when it does not, and UNDEFINED
when the metric is (one class, too few cases, no interval): never a pass.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pcsc.forecast.ledger import Entry
from pcsc.forecast.records import Recorded

PLAN_FORMAT = "pcsc-prereg"
PLAN_VERSION = 1
METRICS = {  # name -> (arguments, fields beside the estimate)
    "auc": (1, ("lo", "hi")),
    "lift": (1, ()),
    "n": (1, ()),
    "delta_auc": (2, ("lo", "hi")),
    "brier": (0, ("lo", "hi")),
    "ece": (0, ("lo", "hi")),
}
OPERATORS = (">=", "<=", "==", ">", "<")
ANALYSIS = ("bootstrap", "seed", "bins", "mode", "as_of")  # the options a plan fixes
MET, NOT_MET, UNDEFINED = "MET", "NOT MET", "UNDEFINED"


class PlanError(Exception):
    """A plan that cannot be used; ``line`` and ``column`` locate it in the plan file
    (1-based, 0 when unknown)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@attrs.frozen
class Predicate:
    metric: str
    args: tuple[str, ...]
    field: str  # "estimate", "lo" or "hi"
    op: str
    threshold: float

    def holds(self, value: float) -> bool:
        return {">=": value >= self.threshold, "<=": value <= self.threshold, "==": value == self.threshold,
                ">": value > self.threshold, "<": value < self.threshold}[self.op]


_TOKEN = re.compile(r"\s*(?:(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<op>>=|<=|==|>|<)|(?P<punct>[(),.]))")


def parse_predicate(text: str) -> Predicate:
    """Read ``METRIC(ARGS)[.FIELD] OP NUMBER``; raises `PlanError` whose column is the
    1-based position in ``text`` of what was not understood."""
    tokens: list[tuple[str, str, int]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            column = at + len(text[at:]) - len(text[at:].lstrip()) + 1
            raise PlanError(f"unexpected {text[column - 1]!r} in the predicate {text!r}", column=column)
        kind = next(k for k, v in match.groupdict().items() if v is not None)
        tokens.append((kind, match[kind], match.start(kind) + 1))
        at = match.end()
    tokens.append(("end", "", len(text) + 1))
    position = 0

    def expect(kind: str, value: str | None, what: str) -> tuple[str, str, int]:
        nonlocal position
        token = tokens[position]
        if token[0] != kind or (value is not None and token[1] != value):
            shown = "the end" if token[0] == "end" else repr(token[1])
            raise PlanError(f"expected {what}, found {shown} in the predicate {text!r}", column=token[2])
        position += 1
        return token

    _, metric, metric_at = expect("name", None, "a metric (" + ", ".join(METRICS) + ")")
    if metric not in METRICS:
        raise PlanError(f"unknown metric {metric!r} in the predicate {text!r}: expected one of "
                        + ", ".join(METRICS), column=metric_at)
    arity, fields = METRICS[metric]
    expect("punct", "(", "`(`")
    args: list[str] = []
    arg_at: list[int] = []
    while tokens[position][:2] != ("punct", ")"):
        if args:
            expect("punct", ",", "`,` or `)`")
        _, arg, at_arg = expect("name", None, "a scorer name")
        args.append(arg)
        arg_at.append(at_arg)
    expect("punct", ")", "`)`")
    if len(args) != arity:
        raise PlanError(f"{metric} takes {arity} argument{'s' if arity != 1 else ''}, not {len(args)}, in the "
                        f"predicate {text!r}", column=metric_at)
    if metric == "delta_auc" and args[0] != "score":
        raise PlanError(f"delta_auc compares the score with another scorer: its first argument is `score`, not "
                        f"{args[0]!r}, in the predicate {text!r}", column=arg_at[0])
    field = "estimate"
    if tokens[position][:2] == ("punct", "."):
        position += 1
        _, field, field_at = expect("name", None, "a field (lo or hi)")
        if field not in fields:
            has = f"has the fields {' and '.join(fields)}" if fields else "has no interval"
            raise PlanError(f"{metric} {has}, not {field!r}, in the predicate {text!r}", column=field_at)
    _, op, _ = expect("op", None, "a comparison (" + " ".join(OPERATORS) + ")")
    _, number, _ = expect("number", None, "a number")
    expect("end", None, "the end of the predicate")
    return Predicate(metric, tuple(args), field, op, float(number))


def metric_value(predicate: Predicate, report: Mapping[str, Any]) -> float | None:
    """The value of ``predicate``'s metric in an evaluate report; None when undefined."""
    p = predicate

    def pick(estimate: Any, ci: Any) -> float | None:
        if p.field == "estimate":
            return None if estimate is None else float(estimate)
        if ci is None:
            return None
        return float(ci[0] if p.field == "lo" else ci[1])

    if p.metric in ("auc", "lift", "n"):
        scorer = next((s for s in report.get("scorers", ()) if s["name"] == p.args[0]), None)
        if scorer is None:
            return None
        if p.metric == "auc":
            return pick(scorer["auc"], scorer["ci"])
        value = scorer["lift_top_quartile"] if p.metric == "lift" else scorer["n"]
        return None if value is None else float(value)
    if p.metric == "delta_auc":
        pair = next((d for d in report.get("paired", ()) if (d["a"], d["b"]) == tuple(p.args)), None)
        return None if pair is None else pick(pair["delta_auc"], pair["ci"])
    calibration = report.get("calibration")
    if not calibration:
        return None
    stat = calibration[p.metric]
    return pick(stat["estimate"], stat["ci"])


def grade(predictions: Sequence[Mapping[str, str]], report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each prediction of a plan MET, NOT MET or UNDEFINED on ``report``, with the value."""
    graded = []
    for prediction in predictions:
        predicate = parse_predicate(prediction["claim"])
        value = metric_value(predicate, report)
        verdict = UNDEFINED if value is None else MET if predicate.holds(value) else NOT_MET
        graded.append({"id": prediction["id"], "claim": prediction["claim"], "value": value, "verdict": verdict})
    return graded


# ---------------------------------------------------------------------- the plan file
@attrs.frozen
class PlanFile:
    name: str
    predictions: tuple[dict[str, str], ...]  # {"id", "claim"}
    cohort: tuple[str, ...] | None  # route names; None: every route frozen in the ledger
    analysis: dict[str, Any]  # the options given, by `ANALYSIS` name


def _line_of(text: str, needle: str) -> tuple[int, int]:
    """The 1-based line and column where ``needle`` first appears in ``text``; (0, 0) if not."""
    at = text.find(needle)
    if at < 0:
        return 0, 0
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def read_plan(text: str) -> PlanFile:
    """Read a plan file (TOML: `[plan]` name and optional cohort, `[analysis]`, and
    `[[prediction]]` tables with `id` and `claim`); raises a located `PlanError`."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, column = getattr(exc, "lineno", 0), getattr(exc, "colno", 0)
        raise PlanError(f"not TOML: {str(exc).split(' (at ')[0]}", line, column) from None
    plan = doc.get("plan")
    unknown = sorted(set(doc) - {"plan", "analysis", "prediction"})
    if unknown:
        raise PlanError(f"unknown table [{unknown[0]}]: a plan has [plan], [analysis] and [[prediction]]",
                        *_line_of(text, unknown[0]))
    if not isinstance(plan, dict) or not isinstance(plan.get("name"), str) or not plan["name"].strip():
        raise PlanError("a plan needs [plan] with a name, e.g. name = \"pilot-2026\"", *_line_of(text, "[plan]"))
    name = plan["name"]
    cohort = plan.get("cohort")
    if cohort is not None and (not isinstance(cohort, list) or not all(isinstance(r, str) for r in cohort)
                               or not cohort):
        raise PlanError("[plan] cohort is a list of route names", *_line_of(text, "cohort"))
    analysis = doc.get("analysis", {})
    if not isinstance(analysis, dict):
        raise PlanError("[analysis] is a table", *_line_of(text, "analysis"))
    for key, value in analysis.items():
        where = _line_of(text, key)
        if key not in ANALYSIS:
            raise PlanError(f"unknown analysis option {key!r}: expected one of {', '.join(ANALYSIS)}", *where)
        if key in ("bootstrap", "seed", "bins") and (not isinstance(value, int) or isinstance(value, bool)
                                                     or value < (0 if key == "seed" else 1)):
            raise PlanError(f"{key} is a whole number{' of at least 1' if key != 'seed' else ''}, not {value!r}",
                            *where)
        if key == "mode" and value not in ("prospective", "retrospective"):
            raise PlanError(f"mode is prospective or retrospective, not {value!r}", *where)
        if key == "as_of" and (not isinstance(value, dt.date) or isinstance(value, dt.datetime)):
            raise PlanError(f"as_of is a date (YYYY-MM-DD, unquoted), not {value!r}", *where)
    if key_as_of := analysis.get("as_of"):
        analysis = {**analysis, "as_of": key_as_of.isoformat()}
    items = doc.get("prediction")
    if not isinstance(items, list) or not items:
        raise PlanError("a plan needs at least one [[prediction]] with an id and a claim", *_line_of(text, "[plan]"))
    predictions: list[dict[str, str]] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("claim"), str):
            raise PlanError("each [[prediction]] has an id and a claim, both strings",
                            *_line_of(text, "[[prediction]]"))
        if any(p["id"] == item["id"] for p in predictions):
            raise PlanError(f"prediction id {item['id']!r} is used twice", *_line_of(text, item["id"]))
        try:
            parse_predicate(item["claim"])
        except PlanError as exc:
            line, column = _line_of(text, item["claim"])
            raise PlanError(exc.message, line, column + exc.column - 1 if line else 0) from None
        predictions.append({"id": item["id"], "claim": item["claim"]})
    return PlanFile(name, tuple(predictions), None if cohort is None else tuple(cohort), dict(analysis))


# ---------------------------------------------------------------------- frozen plans
def plan_payload(plan: PlanFile, forecasts: Sequence[Entry], source: tuple[str, str],
                 scorer: Mapping[str, str]) -> dict[str, Any]:
    """What the ledger freezes of ``plan``: its predictions, the cohort's forecasts (seq
    and entry hash), the scorer (their policies and code hashes, and the code freezing
    the plan), the analysis options, and the plan file (path, sha256)."""
    from pcsc.forecast.report import scorer_label

    policies = sorted({(e.policy.id, e.policy.version, e.policy.sha256) for e in forecasts})
    return {
        "format": PLAN_FORMAT,
        "version": PLAN_VERSION,
        "name": plan.name,
        "predictions": list(plan.predictions),
        "cohort": {
            "routes": [e.route for e in forecasts],
            "forecasts": [{"route": e.route, "seq": e.seq, "entry_sha256": e.entry_sha256} for e in forecasts],
        },
        "scorer": {
            "policies": [{"id": i, "version": v, "sha256": h} for i, v, h in policies],
            "forecast_code": sorted({scorer_label(e.document()["packet"]) for e in forecasts}),
            "frozen_by": dict(scorer),
        },
        "analysis": dict(sorted(plan.analysis.items())),
        "source": {"path": source[0], "sha256": source[1]},
    }


def known_before(seq: int, frozen_at: str, routes: Sequence[str], recorded: Sequence[Recorded], as_of: dt.date,
                 mode: str) -> list[Recorded]:
    """The outcomes of ``routes`` (dated by ``as_of``) that existed before the plan at
    ledger ``seq``, frozen at ``frozen_at``: recorded before it (anchored below its seq)
    or, for a prospective plan, dated on or before the day it was frozen."""
    frozen_on = dt.date.fromisoformat(frozen_at[:10])
    cohort = set(routes)
    return [o for o in recorded if o.route in cohort and o.observed <= as_of
            and (o.forecast_seq < seq or (mode == "prospective" and o.observed <= frozen_on))]


def deviations(planned: Mapping[str, Any], used: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each analysis option whose value in this run differs from the plan's."""
    return [{"option": key, "planned": planned[key], "used": used.get(key)}
            for key in ANALYSIS if key in planned and used.get(key) != planned[key]]


@attrs.frozen
class FrozenPlan:
    """A plan as the ledger holds it, with the forecasts it registered."""

    entry: Entry
    forecasts: list[Entry]

    @property
    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = self.entry.document()
        return doc

    @property
    def name(self) -> str:
        return self.entry.route

    @property
    def analysis(self) -> dict[str, Any]:
        return dict(self.document["analysis"])

    def known_before(self, recorded: Sequence[Recorded], as_of: dt.date) -> dict[str, Any] | None:
        """The fields of the refusal (PCSC-E763) when an outcome of the cohort existed
        before the plan was frozen; None when every one came after."""
        from pcsc.forecast.freeze import entry_mode

        modes = {entry_mode(e.document()) for e in self.forecasts}
        mode = self.analysis.get("mode") or (modes.pop() if len(modes) == 1 else "prospective")
        early = known_before(self.entry.seq, self.entry.frozen_at, [e.route for e in self.forecasts], recorded,
                             as_of, mode)
        if not early:
            return None
        o = early[0]
        return {"name": self.name, "seq": self.entry.seq, "frozen": self.entry.frozen_at, "count": len(early),
                "kind": o.kind, "route": o.route, "observed": o.observed.isoformat(), "recorded": o.recorded_at,
                "anchor": o.forecast_seq}

    def graded(self, report: Mapping[str, Any], used: Mapping[str, Any]) -> dict[str, Any]:
        """The plan's predictions graded on ``report``, and what differs from the plan:
        the analysis options ``used`` and the code grading it."""
        from pcsc.base.codehash import scorer_sha256

        differ = deviations(self.analysis, used)
        planned_code = self.document["scorer"]["frozen_by"].get("code_sha256")
        if planned_code != scorer_sha256():
            differ.append({"option": "code_sha256", "planned": planned_code, "used": scorer_sha256()})
        return {
            "name": self.name,
            "seq": self.entry.seq,
            "frozen_at": self.entry.frozen_at,
            "predictions": grade(self.document["predictions"], report),
            "deviations": differ,
        }


def prereg_forecasts(ledger: Any, name: str) -> FrozenPlan:
    """The plan ``name`` in ``ledger`` and its registered forecasts; raises `PlanError`
    when there is none or a registered forecast is not in the ledger as registered."""
    plans = ledger.plans(name)
    if not plans:
        known = sorted({p.route for p in ledger.plans()})
        listed = f"its plans: {', '.join(known)}" if known else "it holds none (`pcsc prereg` freezes one)"
        raise PlanError(f"no preregistered plan named {name!r} in the ledger; {listed}")
    entry = plans[0]
    by_seq = {e.seq: e for e in ledger.entries()}
    forecasts = []
    for item in entry.document()["cohort"]["forecasts"]:
        found = by_seq.get(item["seq"])
        if found is None or found.entry_sha256 != item["entry_sha256"] or found.route != item["route"]:
            raise PlanError(f"plan {name!r} registered forecast seq {item['seq']} of route {item['route']}, which "
                            "the ledger does not hold as registered; run `pcsc ledger verify`")
        forecasts.append(found)
    return FrozenPlan(entry, forecasts)
