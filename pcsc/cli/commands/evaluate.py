"""`pcsc evaluate`: grade each route's latest frozen forecast in the ledger against the
resolved outcomes (`pcsc.forecast.report`), or, with `--scores FILE.csv`, grade an
external score table (`pcsc.forecast.scores_csv`).

Options of one mode are refused in the other (a usage error naming the option and the
mode). numpy is imported only when the command runs, matplotlib only to draw a plot.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import (
    E731_INCUMBENT_NOT_A_SCORER,
    E742_NO_FORECAST_OF_MODE,
    E743_CANNOT_WRITE_PLOT,
    E745_TABLE_MIXES_MODES,
    E761_SCORERS_NOT_POOLED,
    E763_PLAN_AFTER_OUTCOMES,
    W731_COVARIATE_MATCHES,
    W761_SCORERS_POOLED,
    W762_DIFFERS_FROM_PLAN,
    diag,
)
from pcsc.diagnostics.model import Finding, Span

if TYPE_CHECKING:
    from pcsc.forecast.scores_csv import Grading

DEFAULT_POSITIVE = "1"
DEFAULT_NEGATIVE = "0"
DEFAULT_BINS = 10

#: Options that apply to one mode only: (dest, flag).
SCORES_ONLY = (("id", "--id"), ("outcome", "--outcome"), ("positive", "--positive"), ("negative", "--negative"),
               ("plot", "--plot"), ("strata", "--strata"), ("sha256", "--sha256"), ("covariate", "--covariate"),
               ("incumbent", "--incumbent"))
LEDGER_ONLY = (("ledger", "--ledger"), ("as_of", "--as-of"), ("bins", "--bins"), ("plot_dir", "--plot-dir"),
               ("mode", "--mode"), ("pool_scorers", "--pool-scorers"), ("prereg", "--prereg"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """numpy-free: the bootstrap defaults (`metrics.DEFAULT_B`, `DEFAULT_SEED`) are
    resolved when the command runs; the help states them."""
    options.ledger(p)
    options.as_of(p)
    p.add_argument("--scores", metavar="FILE.csv",
                   help="grade an external score table: a case id column, an outcome column, one column per scorer")
    p.add_argument("--id", metavar="COL", help="with --scores: the case id column")
    p.add_argument("--outcome", metavar="COL", help="with --scores: the outcome column")
    p.add_argument("--positive", metavar="LABELS",
                   help=f'with --scores: outcome labels counted positive, comma-separated, e.g. "S+,+" '
                   f"(default: {DEFAULT_POSITIVE})")
    p.add_argument("--negative", metavar="LABELS",
                   help=f'with --scores: outcome labels counted negative, e.g. "-" (default: {DEFAULT_NEGATIVE}); '
                   "rows in neither set are left out")
    p.add_argument("--bootstrap", type=options.whole_number, metavar="B", help="bootstrap resamples (default: 10,000)")
    p.add_argument("--seed", type=options.whole_number, metavar="S",
                   help="bootstrap seed (default: 20260710, the RouteCast paper's)")
    p.add_argument("--plot", metavar="FILE", help="with --scores: also draw the scores by outcome, one panel per "
                   "scorer, as FILE (.png or .svg; needs the extra pcsc[plots])")
    p.add_argument("--bins", type=options.whole_number, metavar="N",
                   help=f"equal-width calibration bins (default: {DEFAULT_BINS}; not with --scores)")
    p.add_argument("--plot-dir", metavar="DIR", help="write calibration.png and scores.png there "
                   "(not with --scores; needs the extra pcsc[plots])")
    p.add_argument("--mode", choices=("prospective", "retrospective"),
                   help="grade only the forecasts frozen in this mode (needed when the ledger holds both; "
                   "the two are never pooled)")
    p.add_argument("--strata", metavar="COL", help="with --scores: also grade within each value of this column "
                   "(e.g. recognition_risk); an empty cell is its own stratum")
    p.add_argument("--covariate", metavar="COL", action="append",
                   help="with --scores: a column graded as a baseline and adjusted for, not a scorer (e.g. "
                   "recognition_risk: yes/no words are coded 1/0); repeat for more")
    p.add_argument("--incumbent", metavar="COL",
                   help="with --scores: the scorer in use; every other scorer challenges it and replaces it only "
                   "when its paired ΔAUC interval lies above 0")
    p.add_argument("--sha256", metavar="FILE.sha256", help="with --scores: check the table against this sidecar "
                   "(sha256sum format; default: FILE.csv.sha256 when it exists beside the table)")
    p.add_argument("--pool-scorers", action="store_true", default=None,
                   help="grade forecasts computed by different scorer code (pcsc version and code hash) as one "
                   "ranking; without it they are refused (PCSC-E761)")
    p.add_argument("--prereg", metavar="NAME",
                   help="grade the predictions of the plan `pcsc prereg` froze under NAME: each MET, NOT MET or "
                   "UNDEFINED (not with --scores)")
    options.formats(p, "text", "json")
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    scores = args.scores is not None
    for dest, flag in LEDGER_ONLY if scores else SCORES_ONLY:
        if getattr(args, dest, None) is not None:
            mode = "with --scores (grading a score table)" if scores else "without --scores (grading the ledger)"
            raise UsageError(f"{flag} does not apply {mode}")
    return _scores(ctx, args) if scores else _ledger(ctx, args)


# ---------------------------------------------------------------------- the ledger
def _ledger(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import bootstrap, ledger_diagnostic, resolution_date
    from pcsc.forecast.ledger import LedgerError
    from pcsc.forecast.prereg import PlanError, prereg_forecasts
    from pcsc.forecast.records import latest_forecasts, recorded_outcomes, stored_outcomes
    from pcsc.forecast.report import (
        GradingError,
        covariate_grading,
        evaluate_report,
        pooled_policies,
        pooled_scorers,
    )
    from pcsc.forecast.views import evaluate_text, prereg_text

    if args.bins is not None and args.bins < 1:
        raise UsageError("--bins must be at least 1")
    if args.plot_dir:
        from pcsc.forecast.plots import require_matplotlib

        require_matplotlib()  # before any work: without the extra, PCSC-E115
    path = ctx.ledger_path()
    given = {"bootstrap": args.bootstrap, "seed": args.seed, "bins": args.bins, "mode": args.mode,
             "as_of": args.as_of}
    try:
        forecasts, outcomes, recorded, plan = ctx.read_ledger(
            lambda ledger: (latest_forecasts(ledger, args.mode), stored_outcomes(ledger), recorded_outcomes(ledger),
                            None if args.prereg is None else prereg_forecasts(ledger, args.prereg))
        )
    except LedgerError as exc:
        return _failed([ledger_diagnostic(path, str(exc))])
    except PlanError as exc:
        return _failed([Finding.of(codes.E762, exc.message, Span.file_only(str(path)))])
    if plan is not None:  # the plan's options, unless given otherwise; its own forecasts
        for key, value in plan.analysis.items():
            if given[key] is None:
                setattr(args, key, value)
        forecasts = plan.forecasts
    bins = DEFAULT_BINS if args.bins is None else args.bins
    as_of = resolution_date(args.as_of)
    B, seed = bootstrap(args)
    if args.mode and not forecasts:
        flag = " --retrospective" if args.mode == "retrospective" else ""
        return _failed([diag(E742_NO_FORECAST_OF_MODE, Span.file_only(str(path)), mode=args.mode, flag=flag)])
    scorers = pooled_scorers(forecasts)
    if scorers is not None and not args.pool_scorers:
        return _failed([diag(E761_SCORERS_NOT_POOLED, Span.file_only(str(path)), groups=scorers)])
    if plan is not None:
        early = plan.known_before(recorded, as_of)
        if early is not None:
            return _failed([diag(E763_PLAN_AFTER_OUTCOMES, Span.file_only(str(path)), name=early["name"],
                                 seq=early["seq"], frozen=early["frozen"], count=early["count"], kind=early["kind"],
                                 route=early["route"], observed=early["observed"], recorded=early["recorded"],
                                 anchor=early["anchor"])])
    try:
        report = evaluate_report(forecasts, outcomes, as_of, B=B, seed=seed, bins=bins, recorded=recorded)
    except GradingError as exc:
        return _failed([ledger_diagnostic(path, m, exc.code) for m in exc.messages])
    plan_warnings: list[Finding] = []
    if plan is not None:
        used = {"bootstrap": B, "seed": seed, "bins": bins, "mode": report["mode"], "as_of": as_of.isoformat()}
        report = {**report, "prereg": plan.graded(report, used)}
        plan_warnings = [diag(W762_DIFFERS_FROM_PLAN, Span.file_only(str(path)), name=plan.name,
                              option=d["option"], planned=d["planned"], used=d["used"])
                         for d in report["prereg"]["deviations"]]
    if args.plot_dir:
        from pcsc.forecast.report import report_plots

        try:
            report_plots(report, Path(args.plot_dir))
        except OSError as exc:
            return _failed([_plot_problem(args.plot_dir, exc)])
    pooled = pooled_policies(forecasts)
    warnings = [] if pooled is None else [ledger_diagnostic(path, pooled, codes.W751)]
    if scorers is not None:
        warnings.append(diag(W761_SCORERS_POOLED, Span.file_only(str(path)), groups=scorers))
    text = evaluate_text(report) + ("" if plan is None else "\n" + prereg_text(report["prereg"]))
    graded, left_out = covariate_grading(report, B, seed)
    if graded is not None:
        from pcsc.forecast import metrics
        from pcsc.forecast.scores_csv import to_json
        from pcsc.forecast.views import covariates_text

        document = to_json(graded)
        report = {**report, "covariates": document["covariates"], "adjusted": document["adjusted"]}
        text += "\n" + covariates_text(graded, metrics.LEVEL, "the labels' covariates, graded against the score "
                                       f"on {len(graded.table.ids)} routes")
        warnings += _rivals(graded, str(path))
    if left_out:
        report = {**report, "covariates_left_out": left_out}
    return Outcome("evaluate", {"ok": True, **report}, text=text, diagnostics=[*warnings, *plan_warnings])


def _failed(diagnostics: list[Finding]) -> Outcome:
    from pcsc.cli.forecasting import messages

    payload = {"ok": False, "errors": messages(diagnostics, "error"), "warnings": messages(diagnostics, "warning")}
    return Outcome("evaluate", payload, diagnostics=diagnostics)


def _plot_problem(target: str, exc: OSError) -> Finding:
    """PCSC-E743 at the plot's path: a file that cannot be written."""
    return diag(E743_CANNOT_WRITE_PLOT, Span.file_only(target), reason=exc.strerror or exc)


# ---------------------------------------------------------------------- a score table
def _scores(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.cli.forecasting import bootstrap
    from pcsc.forecast import metrics, scores_csv
    from pcsc.forecast.views import grading_text

    id_column: str | None = args.id
    outcome: str | None = args.outcome
    if not id_column or not outcome:
        raise UsageError(f"--scores needs {'--id' if not id_column else '--outcome'} COL")
    B, seed = bootstrap(args)
    positive = scores_csv.parse_labels(args.positive or DEFAULT_POSITIVE)
    negative = scores_csv.parse_labels(args.negative or DEFAULT_NEGATIVE)
    try:
        scores_csv.check_labels(positive, negative)
    except ValueError as exc:
        raise UsageError(f"--positive, --negative: {exc}") from None
    plot = Path(args.plot) if args.plot else None
    if plot is not None:
        _check_plot(plot)
    checksum = _checksum(args)
    if isinstance(checksum, Finding):
        return _failed([checksum])
    try:
        table = scores_csv.read_score_table(Path(args.scores), id_column, outcome, positive, negative, args.scores,
                                            strata=args.strata, covariates=args.covariate or ())
    except scores_csv.ScoreTableError as exc:
        problem = Finding.of(codes.E731, exc.message, Span.file_only(exc.path, exc.line or 0))
        return _failed([problem])
    ctx.note_input(Path(args.scores), args.scores)
    mode = _table_mode(args.scores, table.id_column, table.ids)
    if isinstance(mode, Finding):
        return _failed([mode])
    if args.incumbent is not None and args.incumbent not in {s.name for s in table.scorers}:
        scorers = ", ".join(f"`{s.name}`" for s in table.scorers)
        return _failed([diag(E731_INCUMBENT_NOT_A_SCORER, Span.file_only(args.scores), incumbent=args.incumbent,
                             scorers=scorers)])
    grading = scores_csv.grade(table, B, seed, incumbent=args.incumbent)
    payload = scores_csv.to_json(grading)
    payload.pop("inputs")  # the envelope lists the table
    payload["checksum"] = checksum
    text = grading_text(grading, metrics.LEVEL)
    if mode is not None:
        payload["mode"], payload["rule"] = mode
        first, _, rest = text.partition("\n")
        text = f"{first}\nmode: {mode[0]}: {mode[1]}\n{rest}"
    notes = []
    if plot is not None:
        from pcsc.forecast.plots import score_distribution_plot

        try:
            score_distribution_plot({s.name: s.scores for s in table.scorers}, table.labels, plot,
                                    title=f"{table.path}: scores by outcome")
        except OSError as exc:
            return _failed([_plot_problem(args.plot, exc)])
        notes = [f"wrote {args.plot}"]
    return Outcome("evaluate", {"ok": True, **payload}, text=text, notes=notes,
                   diagnostics=_rivals(grading, grading.table.path))


def _rivals(grading: Grading, where: str) -> list[Finding]:
    """A PCSC-W731 (at ``where``) for each covariate that alone matches or beats a scorer's AUC."""
    aucs = {s.name: s.auc.estimate for s in grading.scorers}
    return [
        diag(W731_COVARIATE_MATCHES, Span.file_only(where), covariate=c.covariate.name,
             covariate_auc=f"{c.auc.estimate:.3f}", scorers=", ".join(f"`{name}` ({aucs[name]:.3f})"
                                                                     for name in c.matched))
        for c in grading.covariates if c.matched
    ]


def _table_mode(path: str, id_column: str, graded: Sequence[str]) -> tuple[str, str] | Finding | None:
    """A table with a `mode` column (as `pcsc ledger export` writes it): the one mode of
    its graded rows and its rule, or a PCSC-E745 diagnostic when they mix the two (the
    two modes are never pooled); None without such a column."""
    import csv
    import io

    from pcsc.base.files import decode, read_bytes
    from pcsc.forecast.report import PROSPECTIVE_RULE, RETROSPECTIVE_RULE

    # read again as the table was (a byte order mark dropped): it was readable a moment ago
    rows = list(csv.reader(io.StringIO(decode(read_bytes(path), path), newline="")))
    header = rows[0] if rows else []
    if "mode" not in header or id_column not in header:
        return None
    i_mode, i_id = header.index("mode"), header.index(id_column)
    wanted = set(graded)
    modes = {row[i_mode] for row in rows[1:] if len(row) == len(header) and row[i_id] in wanted}
    rules = {"prospective": PROSPECTIVE_RULE, "retrospective": RETROSPECTIVE_RULE}
    if len(modes) != 1 or not modes <= set(rules):
        if {"prospective", "retrospective"} <= modes:
            return diag(
                E745_TABLE_MIXES_MODES,
                Span.file_only(path),
                prospective=PROSPECTIVE_RULE,
                retrospective=RETROSPECTIVE_RULE,
            )
        return None
    (mode,) = modes
    return mode, rules[mode]


def _checksum(args: argparse.Namespace) -> dict[str, str] | Finding | None:
    """The table checked against its `sha256sum` sidecar: ``--sha256 FILE``, else
    ``TABLE.sha256`` when it lies beside the table; None when there is none; a PCSC-E732
    diagnostic when it does not match or cannot be read."""
    from pcsc.forecast.export import SidecarError, check_sidecar

    table = Path(args.scores)
    sidecar = Path(args.sha256) if args.sha256 else Path(args.scores + ".sha256")
    if not args.sha256 and not sidecar.is_file():
        return None
    try:
        sha256 = check_sidecar(table, sidecar)
    except SidecarError as exc:
        return Finding.of(codes.E732, str(exc), Span.file_only(args.scores))
    return {"path": str(sidecar), "sha256": sha256}


def _check_plot(path: Path) -> None:
    """A usage error, before any work, when the plot cannot be written (wrong suffix, a
    missing folder); without matplotlib, PCSC-E115."""
    from pcsc.forecast import plots

    if path.suffix.lower() not in plots.FORMATS:
        raise UsageError(f"--plot {path}: a plot is written as .png or .svg")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"--plot {path}: no such folder {folder}")
    plots.require_matplotlib()
