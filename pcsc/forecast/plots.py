"""Pictures of a grading: the calibration plot and the score-distribution plot.

matplotlib is an optional extra (the extra ``pcsc[plots]``). It is imported only
when a plot is drawn, never by text or JSON output; when it is missing, drawing raises
`pcsc.base.extras.ExtraMissing`, whose message says what to install. The figures are drawn on a
bare `matplotlib.figure.Figure` (no pyplot, no GUI backend, no global state) and written
as PNG or SVG, chosen by the file's suffix; SVG output carries no date, so it is
reproducible.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from pcsc.base.extras import require
from pcsc.forecast.metrics import CalibrationBin

FORMATS = (".png", ".svg")


def _figure_module() -> ModuleType:
    require("plots", "plotting")
    return importlib.import_module("matplotlib.figure")


def require_matplotlib() -> None:
    """Raise `pcsc.base.extras.ExtraMissing` unless plots can be drawn here."""
    _figure_module()


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: a plot is written as .png or .svg, not `{path.suffix or 'no suffix'}`")


def _save(fig: Any, path: Path) -> Path:
    metadata = {"Date": None} if path.suffix.lower() == ".svg" else {"Software": None}
    fig.savefig(path, metadata=metadata)
    return path


def calibration_plot(table: Sequence[CalibrationBin], path: Path, title: str = "Calibration") -> Path:
    """Observed rate against mean forecast per bin, the diagonal for reference, bin counts below.

    ``table`` is `metrics.calibration_table`; empty bins are not drawn.
    """
    _check_suffix(path)
    fig = _figure_module().Figure(figsize=(5.5, 6.0), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    top.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1, label="perfect calibration")
    drawn = [b for b in table if b.n and b.mean_p is not None and b.observed is not None]
    top.plot([b.mean_p for b in drawn], [b.observed for b in drawn], marker="o", color="C0", label="observed")
    top.set(xlim=(0, 1), ylim=(-0.03, 1.03), ylabel="observed rate of positives", title=title)
    top.legend(loc="upper left", frameon=False)
    bottom.bar([b.lower for b in table], [b.n for b in table], width=[b.upper - b.lower for b in table],
               align="edge", color="C0", alpha=0.5, edgecolor="white")
    bottom.set(xlabel=f"forecast probability ({len(table)} equal-width bins)", ylabel="forecasts")
    return _save(fig, path)


def score_distribution_plot(
    scores: Mapping[str, Sequence[float]], labels: Sequence[int], path: Path, title: str = "Scores by outcome"
) -> Path:
    """One panel per scorer: each case's score as a dot, positives and negatives on their own rows.

    Raw scores are not comparable across scorers, so each panel has its own axis.
    """
    _check_suffix(path)
    if not scores:
        raise ValueError("no scorer to plot")
    fig = _figure_module().Figure(figsize=(6.5, 1.0 + 1.4 * len(scores)), layout="constrained")
    axes = fig.subplots(len(scores), 1, squeeze=False)[:, 0]
    for ax, (name, values) in zip(axes, scores.items(), strict=True):
        if len(values) != len(labels):
            raise ValueError(f"scorer {name}: {len(values)} scores for {len(labels)} labels")
        for row, (outcome, colour) in enumerate(((0, "C3"), (1, "C2"))):
            xs = [v for v, y in zip(values, labels, strict=True) if y == outcome]
            ax.scatter(xs, [row] * len(xs), color=colour, alpha=0.6, s=28)
        ax.set(yticks=[0, 1], yticklabels=["negative", "positive"], ylim=(-0.6, 1.6), title=name)
    axes[0].figure.suptitle(title)
    return _save(fig, path)
