"""The forecast commands on the ledger, and their place on the command line:
`rank`, `freeze`, `resolve`, `evaluate`, `ledger verify|show`, `policy fit|compare`.

- `resolve OUTCOMES.toml` stores the file's observations and labels in the ledger
  (append-only; an outcome already stored is not stored twice), then resolves the
  milestones of each route's latest frozen forecast against every stored outcome.
  With `--packets FILE.json` it resolves compile outputs instead and stores nothing.
- `evaluate` grades each route's latest frozen forecast against resolved outcomes. It
  refuses, naming both times, any forecast frozen on or after the date of an outcome
  it would be graded on: a forecast must exist before the world can grade it.
  Route level: the released score and the criteria score T as two scorers (AUC with a
  company bootstrap CI, top-quartile lift, paired ΔAUC); transition level: the frozen
  p against resolved milestones (Brier, ECE, calibration table, CIs by a cluster
  bootstrap over routes). `--scores FILE.csv` grades an external score table instead.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pcsc import __version__

Adder = Callable[[argparse.ArgumentParser], None]


# ---------------------------------------------------------------------- registration
def register(sub: Any, policy_sub: Any, common: Callable[..., None], coverage_option: Adder) -> None:
    """Add the forecast commands to the `pcsc` parser (the callers' helpers add the
    shared options, so every command reads the same `--format`, `--lib-path`, …)."""
    from pcsc.forecast.cmd_evaluate_scores import add_score_arguments

    def ledger_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--ledger", metavar="PATH", help="the ledger (default: .pcsc/ledger.sqlite)")

    def as_of_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--as-of", metavar="DATE", help="the resolution date (YYYY-MM-DD; default: today in UTC)")

    p = sub.add_parser("rank", help="rank competing routes and cohorts: gates first, then the policy's key")
    p.add_argument("files", nargs="+", metavar="FILE")
    common(p, ("text", "json"))
    coverage_option(p)
    p.set_defaults(func=_lazy("pcsc.forecast.cmd_ledger", "run_rank"))

    p = sub.add_parser("freeze", help="compile, rank and store every route's packet in the ledger")
    p.add_argument("files", nargs="+", metavar="FILE")
    ledger_option(p)
    common(p, ("text", "json"))
    coverage_option(p)
    p.set_defaults(func=_lazy("pcsc.forecast.cmd_ledger", "run_freeze"))

    p = sub.add_parser("resolve", help="store outcomes and resolve frozen milestones (docs/outcomes.md)")
    p.add_argument("outcomes", metavar="OUTCOMES.toml", help="observations and labels")
    ledger_option(p)
    p.add_argument("--packets", action="append", metavar="PACKETS.json",
                   help="resolve these compile outputs instead of the ledger's forecasts (stores nothing)")
    p.add_argument("--dry-run", action="store_true", help="resolve without storing the outcomes")
    as_of_option(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run_resolve)

    p = sub.add_parser("evaluate", help="grade frozen forecasts against resolved outcomes, or a score table")
    ledger_option(p)
    as_of_option(p)
    add_score_arguments(p)
    p.add_argument("--bins", type=int, default=10, metavar="N", help="equal-width calibration bins (default: 10)")
    p.add_argument("--plot-dir", metavar="DIR",
                   help="write calibration.png and scores.png there (needs: pip install 'pcsc[plots]')")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run_evaluate)

    led = sub.add_parser("ledger", help="verify or show the ledger")
    lsub = led.add_subparsers(dest="ledger_command", metavar="ACTION", parser_class=type(led))
    for name, func, text in (("verify", "run_ledger_verify", "recompute every hash and the chains"),
                             ("show", "run_ledger_show", "list the entries")):
        q = lsub.add_parser(name, help=text)
        ledger_option(q)
        q.add_argument("--format", choices=("text", "json"), default="text")
        if name == "show":
            q.add_argument("--route", help="only this route")
        q.set_defaults(func=_lazy("pcsc.forecast.cmd_ledger", func))
    led.set_defaults(func=lambda a: _show_help(led))

    q = policy_sub.add_parser("fit", help="propose a new policy version with priors refitted from the ledger")
    q.add_argument("--policy", required=True, metavar="ID@VERSION", help="the policy to refit")
    q.add_argument("--version", required=True, help="the new version, e.g. 1.2.0")
    q.add_argument("--strength", type=float, default=20.0,
                   help="prior strength in pseudo-transitions (default: 20)")
    q.add_argument("--holdout", type=float, default=0.3, help="share of routes held out for compare (default: 0.3)")
    q.add_argument("-o", "--output", metavar="PATH", help="where to write the TOML (default: standard output)")
    ledger_option(q)
    as_of_option(q)
    q.add_argument("--policy-path", action="append", default=[], metavar="DIR")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(func=run_policy_fit)

    q = policy_sub.add_parser("compare", help="score two policies on held-out resolved routes")
    q.add_argument("old", metavar="OLD")
    q.add_argument("new", metavar="NEW")
    q.add_argument("--holdout", type=float, default=0.3, help="the same share `fit` held out (default: 0.3)")
    ledger_option(q)
    as_of_option(q)
    q.add_argument("--policy-path", action="append", default=[], metavar="DIR")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(func=run_policy_compare)


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        import importlib

        result: int = getattr(importlib.import_module(module), name)(args)
        return result

    return run


def _show_help(p: argparse.ArgumentParser) -> int:
    from pcsc.cli import _missing

    return _missing(p)


# ---------------------------------------------------------------------- shared
def _fail(args: argparse.Namespace, errors: Sequence[str], warnings: Sequence[str] = ()) -> int:
    from pcsc.cli import EXIT_INPUT, print_json

    if getattr(args, "format", "text") == "json":
        print_json({"pcsc": __version__, "ok": False, "errors": list(errors), "warnings": list(warnings)})
    for w in warnings:
        sys.stderr.write(f"warning: {w}\n")
    for e in errors:
        sys.stderr.write(f"error: {e}\n")
    return EXIT_INPUT


def _open(args: argparse.Namespace) -> Any:
    from pcsc.forecast.ledger import DEFAULT_PATH, Ledger

    return Ledger.open(Path(args.ledger) if args.ledger else DEFAULT_PATH, create=False)


def latest_forecasts(ledger: Any) -> list[Any]:
    """Each route's latest frozen forecast, in order of first freezing."""
    latest: dict[str, Any] = {}
    for entry in ledger.entries():
        latest[entry.route] = entry
    return list(latest.values())


def stored_outcomes(ledger: Any) -> Any:
    from pcsc.forecast.outcomes import outcomes_from_records

    return outcomes_from_records(
        [(o.kind, o.route, dt.date.fromisoformat(o.observed), o.document(), o.source) for o in ledger.outcomes()],
        "ledger",
    )


# ---------------------------------------------------------------------- resolve
def run_resolve(args: argparse.Namespace) -> int:
    if args.packets:
        from pcsc.forecast.cmd_resolve import run_resolve as resolve_files

        return resolve_files(args)
    from pcsc.canonical import dumps, sha256_hex
    from pcsc.cli import EXIT_OK, print_json
    from pcsc.forecast.cmd_resolve import resolution_date, resolve_text
    from pcsc.forecast.ledger import LedgerError, OutcomeKind, OutcomeRecord
    from pcsc.forecast.outcomes import OutcomesError, load_outcomes
    from pcsc.forecast.resolve import PacketError, check_outcomes, frozen_routes, resolve_routes, route_outcomes

    as_of = resolution_date(args.as_of)
    try:
        outcomes = load_outcomes(args.outcomes)
        text = Path(args.outcomes).read_bytes()
    except OutcomesError as exc:
        return _fail(args, [f"{exc.path}: {m}" for m in exc.messages])
    try:
        ledger = _open(args)
    except LedgerError as exc:
        return _fail(args, [str(exc)])
    with ledger:
        forecasts = latest_forecasts(ledger)
        if not forecasts:
            return _fail(args, [f"{ledger.path}: no frozen forecast to resolve (run `pcsc freeze` first)"])
        try:
            routes = frozen_routes([e.document() for e in forecasts], str(ledger.path))
        except PacketError as exc:
            return _fail(args, [f"{exc.path}: {m}" for m in exc.messages])
        findings = check_outcomes(routes, outcomes)
        warnings = [f"{outcomes.path}: {m}" for m in findings.warnings]
        if findings.errors:
            return _fail(args, [f"{outcomes.path}: {m}" for m in findings.errors], warnings)
        source = f"{args.outcomes} sha256 {sha256_hex(text)}"
        known = {(o.kind, o.route, o.observed, o.payload) for o in ledger.outcomes()}
        records = []
        groups: tuple[tuple[OutcomeKind, Sequence[Any]], ...] = (
            ("observation", outcomes.observations), ("label", outcomes.labels))
        for kind, items in groups:
            for item in items:
                key = (kind, item.route, item.date.isoformat(), dumps(item.payload()))
                if key not in known:
                    known.add(key)
                    records.append(OutcomeRecord(item.route, item.date, item.payload(), kind, source))
        stored = [] if args.dry_run else ledger.append_outcomes(records)
        everything = stored_outcomes(ledger) if not args.dry_run else _merged(ledger, outcomes)
        milestones = resolve_routes(routes, everything, as_of)
        labelled = route_outcomes(everything, as_of, {r.route for r in routes})
    if args.format == "json":
        print_json({
            "pcsc": __version__, "ok": True, "as_of": as_of.isoformat(), "ledger": str(ledger.path),
            "stored": len(stored), "already_stored": len(outcomes.observations) + len(outcomes.labels) - len(records),
            "milestones": [m.to_json() for m in milestones], "routes": [r.to_json() for r in labelled],
            "warnings": warnings, "errors": [],
        })
    else:
        for w in warnings:
            sys.stderr.write(f"warning: {w}\n")
        verb = "would store" if args.dry_run else "stored"
        sys.stdout.write(f"{verb} {len(records)} new outcome{'s' if len(records) != 1 else ''} "
                         f"in {ledger.path}\n")
        sys.stdout.write(resolve_text(milestones, labelled, as_of))
    return EXIT_OK


def _merged(ledger: Any, new: Any) -> Any:
    from pcsc.forecast.outcomes import Outcomes

    old = stored_outcomes(ledger)
    return Outcomes(new.path, (*old.observations, *new.observations), (*old.labels, *new.labels))


# ---------------------------------------------------------------------- evaluate
def run_evaluate(args: argparse.Namespace) -> int:
    if args.scores:
        from pcsc.forecast.cmd_evaluate_scores import run_scores

        return run_scores(args)
    from pcsc.cli import EXIT_OK, UsageError, print_json
    from pcsc.forecast.cmd_resolve import resolution_date
    from pcsc.forecast.ledger import LedgerError

    if args.bins < 1:
        raise UsageError("--bins must be at least 1")
    as_of = resolution_date(args.as_of)
    try:
        ledger = _open(args)
    except LedgerError as exc:
        return _fail(args, [str(exc)])
    with ledger:
        forecasts = latest_forecasts(ledger)
        outcomes = stored_outcomes(ledger)
    try:
        report = grade(forecasts, outcomes, as_of, args)
    except GradingError as exc:
        return _fail(args, exc.messages)
    if args.plot_dir:
        from pcsc.forecast.plots import PlotsUnavailable

        try:
            _plots(report, Path(args.plot_dir))
        except PlotsUnavailable as exc:
            return _fail(args, [str(exc)])
    if args.format == "json":
        print_json(report)
    else:
        sys.stdout.write(evaluate_text(report) + "\n")
    return EXIT_OK


class GradingError(Exception):
    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def grade(forecasts: Sequence[Any], outcomes: Any, as_of: dt.date, args: argparse.Namespace) -> dict[str, Any]:
    """The evaluate report (DESIGN §10) for the given frozen entries."""
    from pcsc.forecast import metrics
    from pcsc.forecast.resolve import frozen_routes, resolve_routes, route_outcomes

    B = metrics.DEFAULT_B if args.bootstrap is None else args.bootstrap
    seed = metrics.DEFAULT_SEED if args.seed is None else args.seed
    if B < 1:
        from pcsc.cli import UsageError

        raise UsageError("--bootstrap must be at least 1")
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
        raise GradingError(problems)
    if not labelled and not milestones:
        raise GradingError(["nothing to grade: no route label and no resolved milestone yet (see `pcsc resolve`)"])

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
        rep = metrics.calibration_report(p, y, bins=args.bins, B=B, seed=seed, clusters=clusters)
        calibration = {**rep.to_json(), "level": "transition", "bootstrap": "cluster by route", "B": B, "seed": seed}
    return {
        "pcsc": __version__,
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


def evaluate_text(report: dict[str, Any]) -> str:
    from pcsc.render.tables import table

    lines = [f"graded as of {report['as_of']}: {len(report['forecasts'])} frozen forecasts, "
             f"{report['routes_labelled']} labelled routes, {report['milestones_resolved']} resolved milestones"]
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
    return "\n".join(lines)


def _plots(report: dict[str, Any], folder: Path) -> None:
    from pcsc.forecast import plots
    from pcsc.forecast.metrics import CalibrationBin

    plots.require_matplotlib()
    folder.mkdir(parents=True, exist_ok=True)
    cal = report["calibration"]
    if cal is not None:
        bins = [CalibrationBin(b["lower"], b["upper"], b["n"], b["mean_p"], b["observed"]) for b in cal["table"]]
        plots.calibration_plot(bins, folder / "calibration.png", "Calibration of frozen p (transition level)")
    cases = [c for c in report["cases"] if c["score"] is not None]
    if cases:
        plots.score_distribution_plot({"score": [c["score"] for c in cases]},
                                      [int(c["label"] == "positive") for c in cases], folder / "scores.png",
                                      "Frozen scores by route outcome")


# ---------------------------------------------------------------------- the learning loop
def _store(args: argparse.Namespace) -> Any:
    from pcsc.policy.load import PolicyStore

    return PolicyStore([Path(p) for p in args.policy_path])


def _resolved(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[Any], dict[str, bool]]:
    from pcsc.forecast.cmd_resolve import resolution_date
    from pcsc.forecast.resolve import frozen_routes, resolve_routes, route_outcomes

    as_of = resolution_date(args.as_of)
    with _open(args) as ledger:
        forecasts = latest_forecasts(ledger)
        outcomes = stored_outcomes(ledger)
    packets = [e.document()["packet"] for e in forecasts]
    routes = frozen_routes([e.document() for e in forecasts], "ledger")
    milestones = resolve_routes(routes, outcomes, as_of)
    labels = {o.route: o.label == "positive" for o in route_outcomes(outcomes, as_of)
              if o.label in ("positive", "negative")}
    return packets, milestones, labels


def run_policy_fit(args: argparse.Namespace) -> int:
    import tomli_w

    from pcsc.cli import EXIT_OK, print_json
    from pcsc.forecast.cmd_resolve import resolution_date
    from pcsc.forecast.learn import fit, fitted_policy_document
    from pcsc.forecast.ledger import LedgerError
    from pcsc.policy.load import PolicyError

    try:
        old = _store(args).load_ref(args.policy)
        packets, milestones, _ = _resolved(args)
    except PolicyError as exc:
        return _fail(args, [f"{exc.path}: {m}" for m in exc.messages])
    except LedgerError as exc:
        return _fail(args, [str(exc)])
    mine = [p for p in packets if (p["policy"]["id"], p["policy"]["version"]) == (old.policy.id, old.policy.version)]
    fits = fit(old.policy, mine, milestones, args.strength, args.holdout)
    when = resolution_date(args.as_of)
    doc = fitted_policy_document(old, args.version, fits, args.strength, str(args.ledger or ".pcsc/ledger.sqlite"),
                                 when)
    text = tomli_w.dumps(doc)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text, encoding="utf-8")
    moved = [f for f in fits if f.n]
    if args.format == "json":
        print_json({"pcsc": __version__, "policy": old.ref, "new_version": args.version, "strength": args.strength,
                    "holdout": args.holdout, "forecasts": len(mine),
                    "classes": [{"class": f.ref_class, "old_p": f.old_p, "new_p": f.new_p, "n": f.n, "k": f.k}
                                for f in fits],
                    "toml": None if args.output else text})
    else:
        if not args.output:
            sys.stdout.write(text)
        sys.stderr.write(f"fitted {len(moved)} of {len(fits)} reference classes of {old.ref} from "
                         f"{sum(f.n for f in fits)} resolved training transitions"
                         + (f"; wrote {args.output}\n" if args.output else "\n"))
    return EXIT_OK


def run_policy_compare(args: argparse.Namespace) -> int:
    from pcsc.cli import EXIT_OK, print_json
    from pcsc.forecast.learn import compare
    from pcsc.forecast.ledger import LedgerError
    from pcsc.policy.load import PolicyError

    store = _store(args)
    try:
        old, new = (_load_policy(store, x) for x in (args.old, args.new))
        packets, milestones, labels = _resolved(args)
    except PolicyError as exc:
        return _fail(args, [f"{exc.path}: {m}" for m in exc.messages])
    except LedgerError as exc:
        return _fail(args, [str(exc)])
    try:
        result = compare(old.policy, new.policy, packets, milestones, labels, args.holdout)
    except KeyError as exc:
        return _fail(args, [f"reference class {exc} of a frozen forecast is in neither policy"])
    if args.format == "json":
        import attrs

        print_json({"pcsc": __version__, "old": old.ref, "new": new.ref, **attrs.asdict(result)})
    else:
        def show(x: float | None, digits: int) -> str:
            return "—" if x is None else f"{x:.{digits}f}"

        sys.stdout.write(
            f"{old.ref} vs {new.ref} on {result.routes} held-out routes ({result.transitions} resolved transitions)\n"
            f"  Brier  {show(result.brier_old, 4)} -> {show(result.brier_new, 4)}\n"
            f"  AUC    {show(result.auc_old, 3)} -> {show(result.auc_new, 3)}\n"
            f"  {'promote' if result.promote else 'keep'} {new.ref if result.promote else old.ref}: {result.reason}\n"
        )
    return EXIT_OK


def _load_policy(store: Any, target: str) -> Any:
    path = Path(target)
    if target.endswith(".toml") or path.is_file():
        from pcsc.policy.load import PolicyStore

        return PolicyStore([path.parent.parent, *store.search_path]).load_path(path)
    return store.load_ref(target)
