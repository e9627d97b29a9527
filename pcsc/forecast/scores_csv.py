"""External score tables (docs/forecast.md): read a CSV of cases, grade every scorer in it.

A score table has a case id column, an outcome column, and one column per scorer: every
other column whose values are numbers. Columns with no number in them (a category, a
predicted bucket, a flag) are ignored, and listed as ignored. The outcome labels are
mapped to positive and negative by two label sets (``S+,+`` and ``-`` for the RouteCast
table); rows whose outcome is in neither set are left out of the grading, and listed.
Each scorer gets its AUC with a company-bootstrap CI and its top-quartile lift; each
pair of scorers its ΔAUC with a paired bootstrap. All scorers share the same resamples
(one seed), so the intervals of one table are comparable with each other.

This module reads one file and computes; printing is the command's job
(`pcsc evaluate --scores`, whose text view is `pcsc.forecast.views.grading_text`).
Problems with the file are `ScoreTableError`s, located at the file and, when known, the
line (the command reports them as PCSC-E731 diagnostics).
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import itertools
import math
import re
from collections.abc import Sequence
from pathlib import Path

import attrs

from pcsc.base.files import Unreadable, decode, read_bytes
from pcsc.base.humanize import plural
from pcsc.diagnostics.messages import (
    E731_CANNOT_READ,
    E731_CASE_TWICE,
    E731_COVARIATE_IS_ROLE,
    E731_EMPTY,
    E731_EMPTY_ID,
    E731_FIELD_COUNT,
    E731_HEADER_TWICE,
    E731_NO_CASE_OF_KIND,
    E731_NO_COLUMN,
    E731_NO_SCORER,
    E731_NO_SUCH_FILE,
    E731_NOT_A_NUMBER,
    E731_NOT_CSV,
    phrase,
)
from pcsc.forecast import covariates as cov
from pcsc.forecast import metrics
from pcsc.forecast.covariates import Adjusted, Covariate
from pcsc.forecast.metrics import BootstrapCI

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class ScoreTableError(Exception):
    """A score table that cannot be graded: ``message``, about ``path`` (at ``line``, when
    known). ``str(exc)`` is the one-line form, `FILE[:LINE]: error: message`."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: error: {message}")
        self.path = path
        self.message = message
        self.line = line


@attrs.frozen
class LeftOut:
    id: str
    outcome: str
    line: int


@attrs.frozen
class Scorer:
    name: str
    scores: tuple[float, ...]


@attrs.frozen
class ScoreTable:
    path: str
    sha256: str
    id_column: str
    outcome_column: str
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    ids: tuple[str, ...]
    labels: tuple[int, ...]  # 1 positive, 0 negative
    scorers: tuple[Scorer, ...]
    ignored_columns: tuple[str, ...]
    left_out: tuple[LeftOut, ...]
    strata_column: str | None = None
    strata: tuple[str, ...] = ()  # per graded case, its value in `strata_column`
    covariates: tuple[Covariate, ...] = ()

    @property
    def positives(self) -> int:
        return sum(self.labels)


@attrs.frozen
class ScorerGrade:
    name: str
    n: int
    positives: int
    auc: BootstrapCI
    lift_top_quartile: float | None  # None under 4 cases


@attrs.frozen
class PairedGrade:
    a: str
    b: str
    delta_auc: BootstrapCI  # AUC(a) − AUC(b)


@attrs.frozen
class StratumGrade:
    """The AUC of every scorer within one stratum (None without both classes)."""

    value: str
    n: int
    positives: int
    auc: tuple[tuple[str, float | None], ...]  # (scorer, AUC)


@attrs.frozen
class CovariateGrade:
    """A covariate graded as a baseline: its AUC and lift, and each scorer's ΔAUC over it
    (``versus``: a is the scorer, b the covariate) on the same resamples; the scorers'
    AUC within each of its values (when it has at most `covariates.MAX_LEVELS`), and
    the scorers whose AUC it matches or beats on its own."""

    covariate: Covariate
    auc: BootstrapCI
    lift_top_quartile: float | None
    versus: tuple[PairedGrade, ...]
    strata: tuple[StratumGrade, ...]
    matched: tuple[str, ...]


#: When a challenger replaces the incumbent (`pcsc evaluate --scores --incumbent COL`).
PROMOTION_RULE = ("a challenger replaces the incumbent only when the lower bound of the paired ΔAUC interval, "
                  "AUC(challenger) − AUC(incumbent), is above 0; an undefined interval keeps the incumbent")


@attrs.frozen
class Challenge:
    """One challenger against the incumbent, on the table's paired resamples."""

    challenger: str
    delta_auc: BootstrapCI  # AUC(challenger) − AUC(incumbent)

    @property
    def promote(self) -> bool:
        return self.delta_auc.low is not None and self.delta_auc.low > 0


@attrs.frozen
class Grading:
    table: ScoreTable
    B: int
    seed: int
    scorers: tuple[ScorerGrade, ...]
    paired: tuple[PairedGrade, ...]
    strata: tuple[StratumGrade, ...] = ()
    covariates: tuple[CovariateGrade, ...] = ()
    adjusted: tuple[Adjusted, ...] = ()  # per scorer, the logit on it and every covariate
    incumbent: str | None = None
    challenges: tuple[Challenge, ...] = ()

    @property
    def skipped(self) -> int:
        """Resamples without both classes (the same for every scorer: it depends on the labels only)."""
        return self.scorers[0].auc.skipped


def parse_labels(text: str) -> tuple[str, ...]:
    """``"S+,+"`` → ``("S+", "+")``: comma-separated outcome labels, blanks dropped."""
    return tuple(label.strip() for label in text.split(",") if label.strip())


def check_labels(positive: Sequence[str], negative: Sequence[str]) -> None:
    """ValueError unless both label sets are non-empty and disjoint."""
    if not positive or not negative:
        raise ValueError("both a positive and a negative outcome label are needed")
    both = sorted(set(positive) & set(negative))
    if both:
        raise ValueError(f"outcome label {_names(both)} is both positive and negative")


def _number(text: str) -> float | None:
    """The cell as a finite number, or None (``nan``, ``inf`` and ``1e999`` are not numbers here)."""
    value = float(text) if _NUMBER.fullmatch(text) else math.nan
    return value if math.isfinite(value) else None


def _rows(path: Path, shown: str) -> tuple[str, list[str], list[tuple[int, list[str]]]]:
    """The file's SHA-256, its header and its non-blank rows (with their line numbers), cells stripped."""
    try:
        data = read_bytes(path)
        text = decode(data, shown)
    except Unreadable as exc:
        missing = exc.errno == errno.ENOENT
        problem = phrase(E731_NO_SUCH_FILE) if missing else phrase(E731_CANNOT_READ, reason=exc.reason)
        raise ScoreTableError(shown, problem, exc.line) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ScoreTableError(shown, phrase(E731_EMPTY)) from None
    except csv.Error as exc:
        raise ScoreTableError(shown, phrase(E731_NOT_CSV, reason=exc), 1) from None
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise ScoreTableError(shown, phrase(E731_HEADER_TWICE, names=_names(duplicated)), 1)
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ScoreTableError(shown, phrase(E731_FIELD_COUNT, count=len(row), header=len(header)),
                                      reader.line_num)
            rows.append((reader.line_num, [cell.strip() for cell in row]))
    except csv.Error as exc:
        raise ScoreTableError(shown, phrase(E731_NOT_CSV, reason=exc), reader.line_num) from None
    return hashlib.sha256(data).hexdigest(), header, rows


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def read_score_table(
    path: Path,
    id_column: str,
    outcome_column: str,
    positive: Sequence[str],
    negative: Sequence[str],
    shown: str | None = None,
    strata: str | None = None,
    covariates: Sequence[str] = (),
) -> ScoreTable:
    """Read and check a score table; ``shown`` is the path as messages print it;
    ``strata`` names a column to grade within, ``covariates`` columns graded as
    baselines and adjusted for (neither is a scorer)."""
    shown = str(path) if shown is None else shown
    check_labels(positive, negative)
    sha256, header, rows = _rows(path, shown)
    roles = (("id", id_column), ("outcome", outcome_column)) + ((("strata", strata),) if strata else ())
    roles += tuple(("covariate", c) for c in covariates)
    for role, column in roles:
        if column not in header:
            raise ScoreTableError(shown, phrase(E731_NO_COLUMN, role=role, column=column, columns=_names(header)), 1)
    for column in covariates:
        if column in (id_column, outcome_column):
            role = "id" if column == id_column else "outcome"
            raise ScoreTableError(shown, phrase(E731_COVARIATE_IS_ROLE, column=column, role=role), 1)
    i_id, i_out = header.index(id_column), header.index(outcome_column)
    skip = (i_id, i_out) + ((header.index(strata),) if strata else ())
    skip += tuple(header.index(c) for c in covariates)

    kept: list[tuple[int, list[str]]] = []
    labels: list[int] = []
    left_out: list[LeftOut] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        case = row[i_id]
        if not case:
            raise ScoreTableError(shown, phrase(E731_EMPTY_ID, column=id_column), line)
        if case in seen:
            raise ScoreTableError(shown, phrase(E731_CASE_TWICE, case=case, first=seen[case]), line)
        seen[case] = line
        outcome = row[i_out]
        if outcome in positive or outcome in negative:
            kept.append((line, row))
            labels.append(1 if outcome in positive else 0)
        else:
            left_out.append(LeftOut(case, outcome, line))

    for count, kind, wanted in ((sum(labels), "positive", positive), (len(labels) - sum(labels), "negative", negative)):
        if count == 0:
            raise ScoreTableError(shown, phrase(E731_NO_CASE_OF_KIND, kind=kind, column=outcome_column,
                                                wanted=", ".join(wanted), graded=plural(len(kept), "row"),
                                                left_out=len(left_out)))

    scorers, ignored = _scorers(shown, header, skip, kept)
    if not scorers:
        raise ScoreTableError(shown, phrase(E731_NO_SCORER, id=id_column, outcome=outcome_column))

    return ScoreTable(
        path=shown,
        sha256=sha256,
        id_column=id_column,
        outcome_column=outcome_column,
        positive=tuple(positive),
        negative=tuple(negative),
        ids=tuple(row[i_id] for _, row in kept),
        labels=tuple(labels),
        scorers=tuple(scorers),
        ignored_columns=tuple(ignored),
        left_out=tuple(left_out),
        strata_column=strata,
        strata=tuple(row[skip[2]] for _, row in kept) if strata else (),
        covariates=tuple(_covariate(shown, column, header.index(column), kept) for column in dict.fromkeys(covariates)),
    )


def _covariate(shown: str, column: str, j: int, kept: list[tuple[int, list[str]]]) -> Covariate:
    cells = [row[j] for _, row in kept]
    try:
        return cov.code_cells(column, cells, [_number(c) for c in cells])
    except cov.CovariateError as exc:
        line = None if exc.row is None else kept[exc.row][0]
        raise ScoreTableError(shown, exc.message, line) from None


def _scorers(
    shown: str, header: list[str], skip: tuple[int, ...], kept: list[tuple[int, list[str]]]
) -> tuple[list[Scorer], list[str]]:
    """The scorer columns (any number among the graded rows makes one; then every graded row needs one)
    and the ignored columns (no number at all), in header order; ``skip`` starts with the id column."""
    scorers: list[Scorer] = []
    ignored: list[str] = []
    for j, column in enumerate(header):
        if j in skip:
            continue
        values = [_number(row[j]) for _, row in kept]
        if all(v is None for v in values):
            ignored.append(column)
            continue
        for (line, row), v in zip(kept, values, strict=True):
            if v is None:
                shown_value = f"`{row[j]}`" if row[j] else "empty"
                case = row[skip[0]]
                raise ScoreTableError(shown, phrase(E731_NOT_A_NUMBER, case=case, column=column, value=shown_value),
                                      line)
        scorers.append(Scorer(column, tuple(v for v in values if v is not None)))
    return scorers, ignored


def grade(table: ScoreTable, B: int = metrics.DEFAULT_B, seed: int = metrics.DEFAULT_SEED,
          incumbent: str | None = None) -> Grading:
    """AUC, bootstrap CI and lift per scorer; paired ΔAUC for every pair, in column order;
    with ``incumbent`` (a scorer's name), every other scorer challenges it."""
    y = table.labels
    n = len(y)
    # every scorer and covariate on the same resamples, drawn once (equal to one bootstrap per column and pair)
    columns = [s.scores for s in table.scorers] + [c.values for c in table.covariates]
    aucs, all_deltas = metrics.bootstrap_many(columns, y, B, seed)
    delta_of = dict(zip(itertools.combinations(range(len(columns)), 2), all_deltas, strict=True))
    k = len(table.scorers)
    deltas = [delta_of[pair] for pair in itertools.combinations(range(k), 2)]
    graded = tuple(
        ScorerGrade(
            name=s.name,
            n=n,
            positives=table.positives,
            auc=ci,
            lift_top_quartile=metrics.lift_top_quartile(s.scores, y) if n >= 4 else None,
        )
        for s, ci in zip(table.scorers, aucs[:k], strict=True)
    )
    paired = tuple(
        PairedGrade(a.name, b.name, ci)
        for (a, b), ci in zip(itertools.combinations(table.scorers, 2), deltas, strict=True)
    )
    baselines = tuple(
        CovariateGrade(
            covariate=c,
            auc=aucs[k + i],
            lift_top_quartile=metrics.lift_top_quartile(c.values, y) if n >= 4 else None,
            versus=tuple(PairedGrade(s.name, c.name, delta_of[(j, k + i)]) for j, s in enumerate(table.scorers)),
            strata=_strata(table, [f"{v:g}" for v in c.values]) if len(c.levels) <= cov.MAX_LEVELS else (),
            matched=tuple(s.name for s in graded if aucs[k + i].estimate >= s.auc.estimate),
        )
        for i, c in enumerate(table.covariates)
    )
    adjusted = tuple(cov.adjusted(s.name, s.scores, table.covariates, y, B, seed) for s in table.scorers
                     ) if table.covariates else ()
    strata = _strata(table, table.strata) if table.strata_column is not None else ()
    challenges: tuple[Challenge, ...] = ()
    if incumbent is not None:
        held = next(s for s in table.scorers if s.name == incumbent)
        # the same resamples as every other interval of the table (one seed, the same cases)
        challenges = tuple(Challenge(s.name, metrics.paired_delta_auc(s.scores, held.scores, y, B, seed))
                           for s in table.scorers if s is not held)
    return Grading(table, B, seed, graded, paired, strata, baselines, adjusted, incumbent, challenges)


def _strata(table: ScoreTable, values: Sequence[str]) -> tuple[StratumGrade, ...]:
    """Per value of ``values`` (one per graded case; sorted, an empty cell its own stratum), each scorer's AUC."""
    out = []
    for value in sorted(set(values), key=lambda v: (_number(v) is None, _number(v) or 0.0, v)):
        rows = [i for i, v in enumerate(values) if v == value]
        y = [table.labels[i] for i in rows]
        both = 0 < sum(y) < len(y)
        aucs = tuple(
            (s.name, metrics.auc([s.scores[i] for i in rows], y) if both else None) for s in table.scorers
        )
        out.append(StratumGrade(value, len(rows), sum(y), aucs))
    return tuple(out)


def to_json(g: Grading) -> dict[str, object]:
    """The `pcsc evaluate --scores --format json` document (docs/json.md, plus provenance)."""
    t = g.table
    return {
        "inputs": [{"path": t.path, "sha256": t.sha256}],
        "id_column": t.id_column,
        "outcome": {"column": t.outcome_column, "positive": list(t.positive), "negative": list(t.negative)},
        "cases": {"n": len(t.labels), "positives": t.positives, "negatives": len(t.labels) - t.positives},
        "bootstrap": {
            "B": g.B, "seed": g.seed, "level": metrics.LEVEL, "unit": "case", "interval": "percentile",
            "skipped": g.skipped,
        },
        "scorers": [
            {
                "name": s.name, "n": s.n, "positives": s.positives, "auc": s.auc.estimate, "ci": s.auc.ci,
                "lift_top_quartile": s.lift_top_quartile, "B": s.auc.B, "seed": s.auc.seed,
            }
            for s in g.scorers
        ],
        "paired": [
            {"a": p.a, "b": p.b, "delta_auc": p.delta_auc.estimate, "ci": p.delta_auc.ci, "B": p.delta_auc.B,
             "seed": p.delta_auc.seed}
            for p in g.paired
        ],
        "calibration": None,
        "left_out": [{"id": x.id, "outcome": x.outcome, "line": x.line} for x in t.left_out],
        "ignored_columns": list(t.ignored_columns),
        "strata": None if t.strata_column is None else {"column": t.strata_column, "groups": _groups(g.strata)},
        "covariates": [
            {
                "name": c.covariate.name, "coding": c.covariate.coding, "levels": len(c.covariate.levels),
                "auc": c.auc.estimate, "ci": c.auc.ci, "lift_top_quartile": c.lift_top_quartile,
                "B": c.auc.B, "seed": c.auc.seed,
                "paired": [{"a": p.a, "b": p.b, "delta_auc": p.delta_auc.estimate, "ci": p.delta_auc.ci}
                           for p in c.versus],
                "strata": _groups(c.strata) if c.strata else None,
                "matches_or_beats": list(c.matched),
            }
            for c in g.covariates
        ],
        "adjusted": [a.to_json() for a in g.adjusted],
        "incumbent": None if g.incumbent is None else {
            "name": g.incumbent, "rule": PROMOTION_RULE,
            "challengers": [{"name": c.challenger, "delta_auc": c.delta_auc.estimate, "ci": c.delta_auc.ci,
                             "promote": c.promote} for c in g.challenges],
            "promoted": [c.challenger for c in g.challenges if c.promote],
        },
    }


def _groups(strata: Sequence[StratumGrade]) -> list[dict[str, object]]:
    return [{"value": st.value, "n": st.n, "positives": st.positives,
             "scorers": [{"name": name, "auc": auc} for name, auc in st.auc]} for st in strata]
