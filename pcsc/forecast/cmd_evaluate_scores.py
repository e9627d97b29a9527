"""`pcsc evaluate --scores FILE.csv`: grade an external score table (DESIGN §8, §10).

    pcsc evaluate --scores FILE.csv --id COL --outcome COL --positive "S+,+" --negative "-"
                  [--bootstrap B] [--seed S] [--format text|json]

Text is an aligned table per scorer and per pair of scorers, saying which columns were
ignored and which rows left out; JSON is the §10 document. Exit 0 on success, 1 when
the table cannot be graded (the message names the file, the line and the column),
2 for a usage error. numpy is imported only here, when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from pcsc.forecast.scores_csv import Grading

DEFAULT_POSITIVE = "1"
DEFAULT_NEGATIVE = "0"


def add_score_arguments(p: argparse.ArgumentParser) -> None:
    """The options `run_scores` reads (besides ``--format text|json``). numpy-free: the parser is built
    for every command, so the bootstrap defaults (`metrics.DEFAULT_B`, `DEFAULT_SEED`) are resolved
    when the command runs; the help states them."""
    p.add_argument("--scores", metavar="FILE.csv",
                   help="grade an external score table: a case id column, an outcome column, one column per scorer")
    p.add_argument("--id", metavar="COL", help="with --scores: the case id column")
    p.add_argument("--outcome", metavar="COL", help="with --scores: the outcome column")
    p.add_argument("--positive", metavar="LABELS", default=DEFAULT_POSITIVE,
                   help=f'outcome labels counted positive, comma-separated, e.g. "S+,+" (default: {DEFAULT_POSITIVE})')
    p.add_argument("--negative", metavar="LABELS", default=DEFAULT_NEGATIVE,
                   help=f'outcome labels counted negative, e.g. "-" (default: {DEFAULT_NEGATIVE}); '
                   "rows in neither set are left out")
    p.add_argument("--bootstrap", type=int, metavar="B", help="bootstrap resamples (default: 10,000)")
    p.add_argument("--seed", type=int, metavar="S", help="bootstrap seed (default: 20260710, the RouteCast paper's)")
    p.add_argument("--plot", metavar="FILE", help="also draw the scores by outcome, one panel per scorer, "
                   "as FILE (.png or .svg; needs the plots extra: pip install 'pcsc[plots]')")


def run_scores(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pcsc.cli import EXIT_INPUT, EXIT_OK, UsageError, print_json
    from pcsc.forecast import metrics, scores_csv

    id_column: str | None = getattr(args, "id", None)
    outcome: str | None = getattr(args, "outcome", None)
    if not id_column or not outcome:
        raise UsageError(f"--scores needs {'--id' if not id_column else '--outcome'} COL")
    B = metrics.DEFAULT_B if getattr(args, "bootstrap", None) is None else args.bootstrap
    seed = metrics.DEFAULT_SEED if getattr(args, "seed", None) is None else args.seed
    if B < 1:
        raise UsageError(f"--bootstrap must be at least 1, got {B}")
    if seed < 0:
        raise UsageError(f"--seed must not be negative, got {seed}")
    positive = scores_csv.parse_labels(getattr(args, "positive", None) or DEFAULT_POSITIVE)
    negative = scores_csv.parse_labels(getattr(args, "negative", None) or DEFAULT_NEGATIVE)
    try:
        scores_csv.check_labels(positive, negative)
    except ValueError as exc:
        raise UsageError(f"--positive, --negative: {exc}") from None
    plot = getattr(args, "plot", None)
    if plot:
        _check_plot(Path(plot))
    try:
        table = scores_csv.read_score_table(Path(args.scores), id_column, outcome, positive, negative, args.scores)
    except scores_csv.ScoreTableError as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_INPUT
    grading = scores_csv.grade(table, B, seed)
    if args.format == "json":
        print_json(scores_csv.to_json(grading))
    else:
        sys.stdout.write(grading_text(grading, metrics.LEVEL) + "\n")
    if plot:
        from pcsc.forecast.plots import score_distribution_plot

        score_distribution_plot({s.name: s.scores for s in table.scorers}, table.labels, Path(plot),
                                title=f"{table.path}: scores by outcome")
        sys.stderr.write(f"wrote {plot}\n")
    return EXIT_OK


def _check_plot(path: Path) -> None:
    """A usage error, before any work, when the plot cannot be written: wrong suffix, or no matplotlib."""
    from pcsc.cli import UsageError
    from pcsc.forecast import plots

    if path.suffix.lower() not in plots.FORMATS:
        raise UsageError(f"--plot {path}: a plot is written as .png or .svg")
    try:
        plots.require_matplotlib()
    except plots.PlotsUnavailable as exc:
        raise UsageError(f"--plot: {exc}") from None


def grading_text(g: Grading, level: float) -> str:
    """The aligned text report of one graded table."""
    from pcsc.render.tables import table

    t = g.table
    n, pos = len(t.labels), t.positives
    pct = f"{level:.0%} CI"
    lines = [
        f"{t.path}: {n} cases graded, {pos} positive ({', '.join(t.positive)}) and {n - pos} negative "
        f"({', '.join(t.negative)}); case id `{t.id_column}`, outcome `{t.outcome_column}`",
    ]
    if t.left_out:
        cases = ", ".join(f"{x.id} ({x.outcome or 'empty'})" for x in t.left_out)
        lines.append(f"left out: {len(t.left_out)} row{'s' if len(t.left_out) != 1 else ''} "
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
    skipped = f"; {g.skipped:,} without both classes skipped" if g.skipped else ""
    lines += ["", f"bootstrap: B = {g.B:,} resamples of the cases, seed {g.seed}, percentile intervals{skipped}",
              f"lift: the share of positives among the top ⌊n/4⌋ = {n // 4} by score (ties in row order), "
              f"over the base rate {pos}/{n}"]
    return "\n".join(lines)


def _ci(ci: list[float] | None, sign: str = "") -> str:
    return "—" if ci is None else f"[{ci[0]:{sign}.3f}, {ci[1]:{sign}.3f}]"
