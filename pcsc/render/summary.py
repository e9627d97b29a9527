"""The cohort summary at the top of `pcsc report` for several routes: how many routes
each verdict and each bucket has, the released scores' spread, and a histogram of them
laid out for inline SVG (`pcsc.render.report` puts it in the view model, the template
draws it and prints the same numbers as a table).

Every count comes from the compiled routes' decisions (`Compiled.decision`) and numbers
(`Compiled.numbers`); nothing here recomputes a score.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import attrs

from pcsc.base.humanize import compact, money
from pcsc.compiler.session import Compiled

#: The verdicts in the order the summary lists them, with what each means to a reader.
VERDICTS: tuple[tuple[str, str, str], ...] = (
    ("released", "released", "every material change is covered: GATE releases the score"),
    ("suspend-and-ask", "refused", "GATE withholds the score (suspend-and-ask) until every material change is covered"),
    ("docked", "docked", "DOCK releases the score with the value over the uncovered path removed"),
    ("ungated", "ungated", "coverage is off: the score is released unchecked"),
)
#: The buckets of T in order (`pcsc.policy.model.Buckets`); a route without T has none.
BUCKETS: tuple[str, ...] = ("neg", "mix", "pos")

# the histogram's geometry (SVG user units; 1000 wide, scales down with the page)
CHART_W, CHART_H = 1000, 240
PLOT_X, PLOT_TOP, PLOT_BOTTOM = 60.0, 24.0, 190.0
TARGET_BINS = 8
MAX_BAR_W = 160.0


@attrs.frozen
class VerdictCount:
    verdict: str  # as compile prints it: "suspend-and-ask"
    word: str  # as the summary names it: "refused"
    meaning: str
    count: int


@attrs.frozen
class Bin:
    """One bar of the histogram: the released scores in [low, high)."""

    low: float
    high: float
    count: int
    label: str  # "−1M to 0", for the chart
    low_text: str  # the edges in full, for the table
    high_text: str
    x: str  # SVG coordinates
    y: str
    width: str
    height: str
    label_x: str  # the count above the bar
    label_y: str
    negative: bool  # the bin lies below zero (bins never straddle it: 0 is always an edge)


@attrs.frozen
class Summary:
    routes: int
    verdicts: tuple[VerdictCount, ...]
    buckets: tuple[tuple[str, int], ...]  # (bucket, routes); "none" for routes without T
    scored: int  # routes with a released score (released, docked or ungated)
    above_zero: int
    lowest: str
    median: str
    highest: str
    bin_width: str
    bins: tuple[Bin, ...]
    ticks: tuple[tuple[str, str], ...]  # (x, label) at each bin edge
    y_ticks: tuple[tuple[str, str], ...]  # (y, count)
    description: str  # the chart in words, for its <desc>
    unit: str


def _n(x: float) -> str:
    s = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _signed_compact(x: float) -> str:
    return ("−" + compact(-x)) if x < 0 else compact(x)


def bin_width(scores: Sequence[float]) -> float:
    """A round width (1, 2 or 5 × 10^k) that splits the scores' range into about
    `TARGET_BINS` bins."""
    low, high = min(scores), max(scores)
    raw = (high - low) / TARGET_BINS
    if raw <= 0:  # one distinct score: a bin of its own magnitude
        raw = abs(low) or 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def histogram(scores: Sequence[float]) -> list[tuple[float, float, int]]:
    """The scores counted in bins [low, high) of `bin_width`, whose edges are multiples of
    the width (so 0 is an edge), from the lowest score's bin to the highest's."""
    if not scores:
        return []
    width = bin_width(scores)
    first = math.floor(min(scores) / width)
    last = math.floor(max(scores) / width)
    counts = [0] * (last - first + 1)
    for s in scores:
        counts[math.floor(s / width) - first] += 1
    return [((first + i) * width, (first + i + 1) * width, n) for i, n in enumerate(counts)]


def summarise(compiled: Sequence[Compiled], unit: str) -> Summary:
    """The summary of ``compiled`` (any order)."""
    verdicts: list[str] = [c.decision.verdict for c in compiled]
    counts = tuple(
        VerdictCount(v, word, meaning, verdicts.count(v))
        for v, word, meaning in VERDICTS
        if v != "ungated" or "ungated" in verdicts  # coverage off is rare: no row for none
    )
    by_bucket = [c.numbers.bucket for c in compiled]
    buckets = tuple((b, by_bucket.count(b)) for b in BUCKETS)
    if None in by_bucket:
        buckets += (("none", by_bucket.count(None)),)
    scores = sorted(c.decision.score for c in compiled if c.decision.score is not None)
    bins = histogram(scores)
    tallest = max((n for _, _, n in bins), default=0) or 1
    slot = (CHART_W - PLOT_X - 10) / max(len(bins), 1)
    plot_h = PLOT_BOTTOM - PLOT_TOP
    laid = []
    bar = min(slot - 4, MAX_BAR_W)  # a few bins keep narrow bars, centred in their slots
    for i, (low, high, n) in enumerate(bins):
        height = plot_h * n / tallest
        laid.append(Bin(
            low, high, n, f"{_signed_compact(low)} to {_signed_compact(high)}", money(low), money(high),
            x=_n(PLOT_X + (i + 0.5) * slot - bar / 2), y=_n(PLOT_BOTTOM - height), width=_n(bar), height=_n(height),
            label_x=_n(PLOT_X + (i + 0.5) * slot), label_y=_n(PLOT_BOTTOM - height - 5),
            negative=high <= 0,
        ))
    edges = [low for low, _, _ in bins] + [bins[-1][1]] if bins else []
    ticks = tuple((_n(PLOT_X + i * slot), _signed_compact(e)) for i, e in enumerate(edges))
    step = max(1, math.ceil(tallest / 4))
    y_ticks = tuple((_n(PLOT_BOTTOM - plot_h * k / tallest), str(k)) for k in range(0, tallest + 1, step))
    width = bin_width(scores) if scores else 0.0
    description = (
        f"Histogram of the released scores of {len(scores)} of {len(compiled)} routes, in bins of "
        f"{money(width)} {unit}: " + "; ".join(f"{b.label}: {b.count}" for b in laid) + "."
        if scores else f"None of the {len(compiled)} routes has a released score."
    )
    return Summary(
        routes=len(compiled),
        verdicts=counts,
        buckets=buckets,
        scored=len(scores),
        above_zero=sum(1 for s in scores if s > 0),
        lowest=money(scores[0]) if scores else "—",
        median=money(statistics.median(scores)) if scores else "—",
        highest=money(scores[-1]) if scores else "—",
        bin_width=money(width) if scores else "—",
        bins=tuple(laid),
        ticks=ticks,
        y_ticks=y_ticks,
        description=description,
        unit=unit,
    )
