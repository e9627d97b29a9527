"""Grading metrics (docs/forecast.md) against slow, obviously correct references.

AUC is checked against the pairwise comparison of every positive with every negative,
in exact fractions; lift against a sort in pure Python; the vectorized bootstrap
against a loop that draws one resample at a time from the same generator and grades
it pairwise: the resampled statistics and the intervals must be identical. Then the
hand-made calibration cases, the RouteCast Table A1 grading (its AUCs computed here,
pairwise, from the CSV), the command's JSON and its errors, and the plots.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.base.extras import ExtraMissing
from pcsc.cli import main as pcsc_main
from pcsc.cli.commands.evaluate import add_arguments
from pcsc.diagnostics.exits import EXIT_USAGE
from pcsc.forecast import metrics, plots
from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

TABLE_A1 = EXAMPLES / "routecast_table_a1.csv"
A1_ARGS = ["--id", "blind_id", "--outcome", "outcome_bucket", "--positive", "S+,+", "--negative", "-"]


# ---------------------------------------------------------------------- references
def exact_auc(scores: Sequence[float], labels: Sequence[int]) -> Fraction:
    """Every (positive, negative) pair: 1 when the positive scores higher, ½ when tied."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(Fraction(1) if p > q else Fraction(1, 2) if p == q else Fraction(0) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def pairwise_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    return float(exact_auc(scores, labels))


def slow_lift(scores: Sequence[float], labels: Sequence[int]) -> float:
    k = len(scores) // 4
    top = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    return float(Fraction(sum(labels[i] for i in top), k) / Fraction(sum(labels), len(labels)))


def slow_resamples(n: int, B: int, seed: int, clusters: Sequence[str] | None = None) -> list[list[int]]:
    """One resample at a time: draw K units as floor(u · K), then take their cases."""
    units = sorted(set(clusters)) if clusters is not None else list(range(n))
    members = {u: [i for i in range(n) if (clusters[i] if clusters is not None else i) == u] for u in units}
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(B):
        picks = [int(u * len(units)) for u in rng.random(len(units))]
        out.append([i for p in picks for i in members[units[p]]])
    return out


def slow_auc_samples(
    scores: Sequence[float], labels: Sequence[int], resamples: list[list[int]], other: Sequence[float] | None = None
) -> list[float]:
    """Each resample's AUC (or, given ``other``, AUC − AUC(other)), exactly rounded; NaN without both classes."""
    out = []
    for cases in resamples:
        ys = [labels[i] for i in cases]
        if not 0 < sum(ys) < len(ys):
            out.append(float("nan"))
            continue
        value = exact_auc([scores[i] for i in cases], ys)
        if other is not None:
            value -= exact_auc([other[i] for i in cases], ys)
        out.append(float(value))
    return out


def random_case(seed: int, n: int, distinct: int) -> tuple[list[float], list[int]]:
    """Scores from few distinct values (so many ties), labels with both classes."""
    rng = np.random.default_rng(seed)
    scores = [float(x) for x in rng.integers(0, distinct, n)]
    labels = [int(x) for x in rng.random(n) < 0.35]
    labels[0], labels[1] = 1, 0
    return scores, labels


def same(a: Sequence[float], b: Sequence[float]) -> bool:
    """Identical, NaN for NaN."""
    return len(a) == len(b) and all((x == y) or (x != x and y != y) for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------- AUC and lift
case_lists = st.integers(2, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.5, -3.0, 7.25]), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


@settings(max_examples=200, deadline=None)
@given(case_lists)
def test_auc_is_the_pairwise_comparison_ties_one_half(case: tuple[list[float], list[int]]) -> None:
    scores, labels = case
    if 0 < sum(labels) < len(labels):
        assert metrics.auc(scores, labels) == pairwise_auc(scores, labels)
    else:
        with pytest.raises(ValueError, match="needs both classes"):
            metrics.auc(scores, labels)


@settings(max_examples=200, deadline=None)
@given(case_lists)
def test_lift_is_the_top_quartile_share_over_the_base_rate(case: tuple[list[float], list[int]]) -> None:
    scores, labels = case
    if len(scores) >= 4 and sum(labels):
        assert metrics.lift_top_quartile(scores, labels) == slow_lift(scores, labels)


def test_auc_ties_and_extremes() -> None:
    assert metrics.auc([1, 1, 1, 1], [1, 0, 1, 0]) == 0.5
    assert metrics.auc([3, 2, 1], [1, 0, 0]) == 1.0
    assert metrics.auc([1, 2, 3], [1, 0, 0]) == 0.0
    assert metrics.auc([2, 1, 2, 0], [1, 1, 0, 0]) == 0.625  # (½ + 1 + 0 + 1) / 4


def test_lift_breaks_ties_in_input_order() -> None:
    # eight cases, top ⌊8/4⌋ = 2; four tie at the top: the first two in input order are taken
    scores = [5, 5, 5, 5, 1, 1, 1, 1]
    assert metrics.lift_top_quartile(scores, [0, 1, 1, 0, 0, 0, 0, 0]) == 0.5 / (2 / 8)
    assert metrics.lift_top_quartile(scores, [1, 1, 0, 0, 0, 0, 0, 0]) == 1.0 / (2 / 8)
    assert metrics.lift_top_quartile(scores, [0, 0, 1, 1, 0, 0, 0, 0]) == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: metrics.auc([1, 2, 3], [1, 1, 1]), "no negative case among the 3"),
        (lambda: metrics.auc([1, 2, 3], [0, 0, 0]), "no positive case among the 3"),
        (lambda: metrics.auc([], []), "no positive case"),
        (lambda: metrics.bootstrap_auc([1, 2], [1, 1], B=10, seed=1), "needs both classes"),
        (lambda: metrics.paired_delta_auc([1, 2], [2, 1], [0, 0], B=10, seed=1), "needs both classes"),
        (lambda: metrics.lift_top_quartile([1, 2, 3, 4], [0, 0, 0, 0]), "at least one positive"),
        (lambda: metrics.lift_top_quartile([1, 2, 3], [0, 1, 0]), "at least 4 cases"),
        (lambda: metrics.auc([1, 2], [1, 2]), "1 \\(positive\\) or 0"),
        (lambda: metrics.auc([1, float("nan")], [1, 0]), "finite"),
        (lambda: metrics.brier([0.5, 1.2], [1, 0]), "\\[0, 1\\]"),
    ],
)
def test_clear_errors(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


# ---------------------------------------------------------------------- bootstrap
@pytest.mark.parametrize(("seed", "n", "distinct"), [(1, 12, 4), (2, 25, 6), (3, 9, 3), (4, 30, 30)])
def test_bootstrap_equals_a_loop_over_resamples(
    seed: int, n: int, distinct: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    scores, labels = random_case(seed, n, distinct)
    B = 300
    reference = slow_auc_samples(scores, labels, slow_resamples(n, B, seed))
    assert same(metrics.bootstrap_auc_samples(scores, labels, B, seed).tolist(), reference)
    # blocks of any size draw the same resamples
    monkeypatch.setattr(metrics, "CHUNK_ELEMENTS", 7 * n + 3)
    assert same(metrics.bootstrap_auc_samples(scores, labels, B, seed).tolist(), reference)

    result = metrics.bootstrap_auc(scores, labels, B, seed)
    kept = np.array([x for x in reference if x == x])
    low, high = np.quantile(kept, [0.025, 0.975])
    assert (result.low, result.high) == (low, high)
    assert (result.used, result.skipped) == (len(kept), B - len(kept))
    assert (result.B, result.seed, result.level, result.clusters) == (B, seed, 0.95, None)
    assert result.estimate == pairwise_auc(scores, labels)


def test_bootstrap_counts_resamples_without_both_classes() -> None:
    scores, labels = [1.0, 2.0, 3.0, 4.0], [1, 0, 0, 0]
    samples = slow_auc_samples(scores, labels, slow_resamples(4, 200, 7))
    result = metrics.bootstrap_auc(scores, labels, 200, 7)
    assert result.skipped == sum(1 for x in samples if x != x) > 0  # (3/4)^4 of them lack the positive


def test_cluster_bootstrap_equals_a_loop_over_clusters() -> None:
    scores, labels = random_case(11, 24, 5)
    clusters = [f"route{i % 7}" for i in range(24)]
    B = 200
    reference = slow_auc_samples(scores, labels, slow_resamples(24, B, 5, clusters))
    assert same(metrics.bootstrap_auc_samples(scores, labels, B, 5, clusters).tolist(), reference)
    assert metrics.bootstrap_auc(scores, labels, B, 5, clusters).clusters == 7


def test_paired_delta_uses_the_same_resamples_for_both() -> None:
    a, labels = random_case(21, 20, 5)
    b, _ = random_case(22, 20, 8)
    B = 250
    resamples = slow_resamples(20, B, 9)
    ref = slow_auc_samples(a, labels, resamples, other=b)
    assert same(metrics.paired_delta_auc_samples(a, b, labels, B, 9).tolist(), ref)
    result = metrics.paired_delta_auc(a, b, labels, B, 9)
    assert result.estimate == float(exact_auc(a, labels) - exact_auc(b, labels))
    assert (result.low, result.high) == tuple(np.quantile([x for x in ref if x == x], [0.025, 0.975]))
    assert metrics.paired_delta_auc(a, a, labels, B, 9).ci == [0.0, 0.0]


def test_bootstrap_is_reproducible_and_seed_dependent() -> None:
    scores, labels = random_case(5, 40, 40)
    first = metrics.bootstrap_auc(scores, labels, 500, 123)
    assert metrics.bootstrap_auc(scores, labels, 500, 123) == first
    assert metrics.bootstrap_auc(scores, labels, 500, 124) != first


# ---------------------------------------------------------------------- calibration
P = [0.1, 0.1, 0.9, 0.9, 1.0]
Y = [0, 1, 1, 1, 1]


def test_brier_and_ece_by_hand() -> None:
    assert metrics.brier(P, Y) == pytest.approx((0.01 + 0.81 + 0.01 + 0.01 + 0.0) / 5)
    # bin [0.1, 0.2): 2 forecasts, mean 0.1, observed 1/2; bin [0.9, 1]: 3, mean 2.8/3, observed 1 (p = 1 included)
    result = metrics.ece(P, Y)
    assert (result.value, result.bins) == (pytest.approx(2 / 5 * 0.4 + 3 / 5 * (1 - 2.8 / 3)), 10)
    # one bin: |mean p − observed rate| over everything
    assert metrics.ece(P, Y, bins=1).value == pytest.approx(abs(3.0 / 5 - 4 / 5))
    assert metrics.ece([0.25, 0.75], [0, 1], bins=2) == metrics.Ece(0.25, 2)


def test_calibration_table_by_hand() -> None:
    table = metrics.calibration_table(P, Y, 10)
    assert [(b.lower, b.upper) for b in table] == [(i / 10, (i + 1) / 10) for i in range(10)]
    assert [b.n for b in table] == [0, 2, 0, 0, 0, 0, 0, 0, 0, 3]
    assert (table[1].mean_p, table[1].observed) == (0.1, 0.5)
    assert table[9].mean_p == pytest.approx(2.8 / 3) and table[9].observed == 1.0
    assert table[0].mean_p is None and table[0].observed is None
    assert [b.n for b in metrics.calibration_table([0.0, 0.25, 0.5, 0.75, 1.0], [0] * 5, 4)] == [1, 1, 1, 2]
    json.dumps([b.to_json() for b in table])


def test_brier_and_ece_cluster_bootstrap_equal_a_loop() -> None:
    rng = np.random.default_rng(3)
    p = [float(x) for x in rng.random(30)]
    y = [int(x) for x in rng.random(30) < np.array(p)]
    routes = [f"r{i // 3}" for i in range(30)]
    resamples = slow_resamples(30, 150, 17, routes)

    def slow_ece(cases: list[int]) -> float:
        return sum(abs(sum(p[i] - y[i] for i in cases if min(int(p[i] * 10), 9) == k)) for k in range(10)) / len(cases)

    brier_ref = [sum((p[i] - y[i]) ** 2 for i in cases) / len(cases) for cases in resamples]
    ece_ref = [slow_ece(cases) for cases in resamples]
    report = metrics.calibration_report(p, y, 10, 150, 17, routes)
    for got, ref, estimate in ((report.brier, brier_ref, metrics.brier(p, y)),
                               (report.ece, ece_ref, metrics.ece(p, y).value)):
        assert got.estimate == estimate
        assert (got.low, got.high) == pytest.approx(tuple(np.quantile(ref, [0.025, 0.975])), rel=1e-12)
        assert (got.B, got.seed, got.clusters, got.skipped) == (150, 17, 10, 0)
    assert report.bins == 10 and report.n == 30 and len(report.table) == 10
    json.dumps(report.to_json())


# ---------------------------------------------------------------------- Table A1 and the command
def grade(argv: Sequence[str]) -> tuple[int, str, str]:
    """`pcsc evaluate ARGV…`: exit code, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = pcsc_main(["evaluate", *argv])
    return code, out.getvalue(), err.getvalue()


def test_table_a1_grades_as_the_paper_codes_it() -> None:
    with TABLE_A1.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    kept = [r for r in rows if r["outcome_bucket"] != "~"]
    labels = [1 if r["outcome_bucket"] in ("S+", "+") else 0 for r in kept]
    assert (len(kept), sum(labels)) == (21, 6)

    code, out, err = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--format", "json"])
    assert (code, err) == (0, "")
    doc = json.loads(out)
    names = ["routecast_score", "blind_llm_mean", "heuristic_score"]
    assert [s["name"] for s in doc["scorers"]] == names
    by_hand = {}
    for s in doc["scorers"]:
        scores = [float(r[s["name"]]) for r in kept]
        by_hand[s["name"]] = exact_auc(scores, labels)
        assert (s["n"], s["positives"], s["B"], s["seed"]) == (21, 6, 10_000, 20260710)
        assert s["auc"] == float(by_hand[s["name"]])
        assert s["lift_top_quartile"] == slow_lift(scores, labels)
        assert s["ci"][0] < s["auc"] < s["ci"][1]
    # 68, 61 and 63 of the 6 × 15 = 90 (positive, negative) pairs won, ties counting one half
    assert by_hand == {"routecast_score": Fraction(68, 90), "blind_llm_mean": Fraction(61, 90),
                       "heuristic_score": Fraction(63, 90)}
    assert [(p["a"], p["b"]) for p in doc["paired"]] == list(itertools.combinations(names, 2))
    for p in doc["paired"]:
        assert p["delta_auc"] == float(by_hand[p["a"]] - by_hand[p["b"]])
        assert p["ci"][0] < p["delta_auc"] < p["ci"][1]
    assert [x["id"] for x in doc["left_out"]] == ["BC04", "BC12", "BC15", "BC17", "BC26"]
    assert {x["outcome"] for x in doc["left_out"]} == {"~"}
    assert doc["ignored_columns"] == ["category", "predicted_bucket", "recognition_risk"]
    assert doc["calibration"] is None


def test_json_has_the_design_keys() -> None:
    code, out, _ = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--format", "json", "--bootstrap", "200", "--seed", "3"])
    doc = json.loads(out)
    assert code == 0
    assert {"scorers", "paired", "calibration", "left_out", "ignored_columns"} <= set(doc)
    assert {"name", "n", "positives", "auc", "ci", "lift_top_quartile", "B", "seed"} <= set(doc["scorers"][0])
    assert {"a", "b", "delta_auc", "ci"} <= set(doc["paired"][0])
    assert (doc["scorers"][0]["B"], doc["scorers"][0]["seed"]) == (200, 3)
    assert len(doc["scorers"][0]["ci"]) == 2
    assert out == json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=2) + "\n"  # canonical


def test_text_says_what_was_ignored_and_left_out() -> None:
    code, out, _ = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--bootstrap", "300"])
    assert code == 0
    assert "21 cases graded, 6 positive (S+, +) and 15 negative (-)" in out
    assert "left out: 5 rows" in out and "BC04 (~)" in out
    assert "ignored columns (no numbers): category, predicted_bucket, recognition_risk" in out
    assert "routecast_score  21" in out and "B = 300" in out and "seed 20260710" in out


def test_bootstrap_defaults_are_the_papers_and_the_help_says_so() -> None:
    assert (metrics.DEFAULT_B, metrics.DEFAULT_SEED) == (10_000, 20260710)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert f"{metrics.DEFAULT_B:,}" in parser.format_help() and str(metrics.DEFAULT_SEED) in parser.format_help()


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("id,y,a\n1,1,0.5\n2,0,0.2\n", ["--outcome", "outcome"], "t.csv:1: error: no outcome column `outcome`"),
        ("id,y,a\n1,1,0.5\n2,1,0.2\n3,~,0.1\n", [], "t.csv: error: no negative case: no row has `y` in {0}"),
        ("id,y,a\n1,0,0.5\n2,0,0.2\n", [], "t.csv: error: no positive case"),
        ("id,y,a,b\n1,1,0.5,x\n2,0,0.2,0.3\n", [], "t.csv:2: error: case `1`: scorer column `b` is `x`, not a"),
        ("id,y,a\n1,1,0.5\n2,0,\n", [], "t.csv:3: error: case `2`: scorer column `a` is empty"),
        ("id,y,a\n1,1,0.5\n2,0,inf\n", [], "t.csv:3: error: case `2`: scorer column `a` is `inf`"),
        ("id,y,a\n1,1,0.5\n2,0\n", [], "t.csv:3: error: 2 fields where the header has 3"),
        ("id,y,a\n1,1,0.5\n1,0,0.2\n", [], "t.csv:3: error: case `1` appears twice (first on line 2)"),
        ("id,y,a\n1,1,x\n2,0,y\n", [], "t.csv: error: no scorer"),
        ("", [], "t.csv: error: the file is empty"),
    ],
)
def test_bad_tables_exit_1_with_a_message(tmp_path: Path, text: str, extra: list[str], message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    with contextlib.chdir(tmp_path):
        code, out, err = grade(["--scores", "t.csv", "--id", "id", "--outcome", "y", *extra])
    assert (code, out) == (1, "")
    assert err.startswith(message) and err.endswith(" [PCSC-E731]\n") and err.count("\n") == 1
    assert "Traceback" not in err


def test_missing_file_and_usage_errors(tmp_path: Path) -> None:
    code, _, err = grade(["--scores", str(tmp_path / "none.csv"), "--id", "a", "--outcome", "b"])
    assert code == 1 and err == f"{tmp_path / 'none.csv'}: error: no such file [PCSC-E731]\n"
    for argv, message in (
        (["--outcome", "y"], "--scores needs --id COL"),
        (["--id", "x"], "--scores needs --outcome COL"),
        (["--id", "x", "--outcome", "y", "--bootstrap", "0"], "--bootstrap must be at least 1"),
        (["--id", "x", "--outcome", "y", "--positive", "+", "--negative", "+,-"], "`+` is both positive and negative"),
        (["--id", "x", "--outcome", "y", "--positive", " , "], "both a positive and a negative"),
        (["--id", "x", "--outcome", "y", "--plot", "out.pdf"], ".png or .svg"),
    ):
        code, out, err = grade(["--scores", str(TABLE_A1), *argv])
        assert (code, out) == (EXIT_USAGE, "") and message in err


def test_the_shipped_table_is_the_papers_26_cases() -> None:
    lines = TABLE_A1.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ("blind_id,category,routecast_score,blind_llm_mean,heuristic_score,predicted_bucket,"
                        "outcome_bucket,recognition_risk")
    assert len(lines) == 27
    note = (EXAMPLES / "routecast_table_a1.md").read_text(encoding="utf-8").splitlines()
    assert len(note) == 4 and "21 cases are graded (6 positive, 15 negative)" in note[1]


# ---------------------------------------------------------------------- plots
def test_plots_without_matplotlib_say_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    with pytest.raises(ExtraMissing, match=r"install 'matplotlib>=3.7' \(the extra pcsc\[plots\]\)"):
        plots.calibration_plot(metrics.calibration_table(P, Y), tmp_path / "c.png")
    code, _, err = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--plot", str(tmp_path / "s.png")])
    said = r"plotting needs matplotlib.*install 'matplotlib>=3.7' \(the extra pcsc\[plots\]\) \[PCSC-E115\]"
    assert code == 1 and re.search(said, err)
    assert not (tmp_path / "s.png").exists()


def test_plots_are_written_as_png_and_svg(tmp_path: Path) -> None:
    plots.calibration_plot(metrics.calibration_table(P, Y), tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    code, _, err = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--bootstrap", "50", "--plot", str(tmp_path / "s.svg")])
    assert code == 0 and err == f"wrote {tmp_path / 's.svg'}\n"
    assert b"<svg" in (tmp_path / "s.svg").read_bytes()[:500]
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        plots.calibration_plot(metrics.calibration_table(P, Y), tmp_path / "c.jpg")


def test_text_and_json_import_no_matplotlib_and_the_parser_no_numpy() -> None:
    probe = f"""
import argparse, contextlib, io, sys
from pcsc.cli import main
from pcsc.cli.commands.evaluate import add_arguments
p = argparse.ArgumentParser(); add_arguments(p)
parser_numpy = "numpy" in sys.modules
with contextlib.redirect_stdout(io.StringIO()):
    for fmt in ("text", "json"):
        assert main(["evaluate", "--scores", {str(TABLE_A1)!r}, *{A1_ARGS!r}, "--bootstrap", "20",
                     "--format", fmt]) == 0
print(parser_numpy, "matplotlib" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def test_options_of_the_other_mode_and_a_plot_in_a_missing_folder_are_usage_errors(tmp_path: Path) -> None:
    for extra, flag in ((["--plot-dir", str(tmp_path)], "--plot-dir"), (["--bins", "5"], "--bins"),
                        (["--ledger", str(tmp_path / "l.sqlite")], "--ledger"), (["--as-of", "2020-01-01"], "--as-of")):
        code, out, err = grade(["--scores", str(TABLE_A1), *A1_ARGS, *extra])
        assert (code, out) == (EXIT_USAGE, "")
        assert f"{flag} does not apply with --scores" in err
    code, out, err = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--plot", str(tmp_path / "no" / "s.svg")])
    assert (code, out) == (EXIT_USAGE, "") and f"no such folder {tmp_path / 'no'}" in err


def test_json_is_in_the_envelope_and_lists_the_table(tmp_path: Path) -> None:
    code, out, _ = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--bootstrap", "20", "--format", "json"])
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == {"kind": "evaluate", "version": 1} and doc["diagnostics"] == []
    assert [i["path"] for i in doc["inputs"]] == [str(TABLE_A1)]
    bad = tmp_path / "t.csv"
    bad.write_text("id,y,a\n1,1,0.5\n2,0\n", encoding="utf-8")
    code, out, err = grade(["--scores", str(bad), "--id", "id", "--outcome", "y", "--format", "json"])
    doc = json.loads(out)
    assert (code, err, doc["ok"]) == (1, "", False)
    assert [(d["code"], d["file"], d["line"]) for d in doc["diagnostics"]] == [("PCSC-E731", str(bad), 3)]


def test_o_writes_the_report(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    code, out, _ = grade(["--scores", str(TABLE_A1), *A1_ARGS, "--bootstrap", "20", "-o", str(target)])
    assert (code, out) == (0, "") and "21 cases graded" in target.read_text(encoding="utf-8")
