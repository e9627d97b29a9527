"""Covariates of a score table (issue 22, item 1): recognition graded as a baseline, the
scorers within its values, the adjusted logit, the warning when a covariate alone
matches a scorer, and the refusals. The RouteCast numbers are checked against values
computed here by other means (pairs counted by hand, a plain-loop bootstrap, a
Newton-Raphson in pure Python), never against the program's own output alone."""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import EXAMPLES, run_cli

TABLE = EXAMPLES / "routecast_table_a1.csv"
ARGS = ("evaluate", "--scores", str(TABLE), "--id", "blind_id", "--outcome", "outcome_bucket",
        "--positive", "S+,+", "--negative", "-")
SEED = 20260710


def graded_rows() -> list[dict[str, str]]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["outcome_bucket"] in ("S+", "+", "-")]


def evaluate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert out, err
    doc: dict[str, Any] = json.loads(out)
    return code, doc


def brute_auc(scores: list[float], labels: list[int], weights: list[int] | None = None) -> float:
    w = weights or [1] * len(scores)
    num = den = 0.0
    for i, (si, yi) in enumerate(zip(scores, labels, strict=True)):
        for j, (sj, yj) in enumerate(zip(scores, labels, strict=True)):
            if yi == 1 and yj == 0:
                pair = w[i] * w[j]
                den += pair
                num += pair * (1.0 if si > sj else 0.5 if si == sj else 0.0)
    return num / den


def loop_bootstrap(n: int, B: int, seed: int) -> list[list[int]]:
    """The documented resamples, one at a time: floor(rng.random(n) * n), as multiplicities."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(B):
        counts = [0] * n
        for u in (rng.random(n) * n).astype(int):
            counts[int(u)] += 1
        out.append(counts)
    return out


def newton_pure(x: list[list[float]], y: list[float], w: list[float]) -> tuple[list[float], list[float]]:
    """Weighted logit by Newton-Raphson in pure Python: the coefficients and their Wald SEs."""
    k = len(x[0])
    beta = [0.0] * k
    for _ in range(100):
        grad = [0.0] * k
        hess = [[0.0] * k for _ in range(k)]
        for xi, yi, wi in zip(x, y, w, strict=True):
            p = 1 / (1 + math.exp(-sum(b * v for b, v in zip(beta, xi, strict=True))))
            for a in range(k):
                grad[a] += wi * (yi - p) * xi[a]
                for b in range(k):
                    hess[a][b] += wi * p * (1 - p) * xi[a] * xi[b]
        step = solve(hess, grad)
        beta = [b + s for b, s in zip(beta, step, strict=True)]
        if max(abs(s) for s in step) < 1e-12:
            break
    inv = [solve(hess, [1.0 if i == j else 0.0 for i in range(k)]) for j in range(k)]
    return beta, [math.sqrt(inv[j][j]) for j in range(k)]


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    k = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(k):
        pivot = max(range(c, k), key=lambda r: abs(m[r][c]))
        m[c], m[pivot] = m[pivot], m[c]
        for r in range(k):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [v - f * u for v, u in zip(m[r], m[c], strict=True)]
    return [m[i][k] / m[i][i] for i in range(k)]


def standardised(values: list[float]) -> list[float]:
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return [(v - mean) / sd for v in values]


# ---------------------------------------------------------------------- the RouteCast numbers
def test_one_command_reproduces_the_recognition_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = evaluate_json(capsys, *ARGS, "--covariate", "recognition_risk")
    assert code == 0, doc
    (flag,) = doc["covariates"]
    assert flag["name"] == "recognition_risk" and flag["levels"] == 2
    assert round(flag["auc"], 3) == 0.767 and [round(v, 3) for v in flag["ci"]] == [0.533, 0.971]
    assert f"{flag['lift_top_quartile']:.2f}" == "2.80"
    score = next(s for s in doc["scorers"] if s["name"] == "routecast_score")
    assert round(score["auc"], 3) == 0.756
    versus = next(p for p in flag["paired"] if p["a"] == "routecast_score")
    assert f"{versus['delta_auc']:+.3f}" == "-0.011"
    assert [f"{v:+.3f}" for v in versus["ci"]] == ["-0.368", "+0.287"]
    model = next(a for a in doc["adjusted"] if a["scorer"] == "routecast_score")
    terms = {t["name"]: t for t in model["terms"]}
    shown = {name: (f"{t['estimate']:.2f}", f"{t['p']:.2f}") for name, t in terms.items()}
    assert shown["routecast_score"] == ("0.31", "0.65") and shown["recognition_risk"] == ("2.23", "0.10")
    assert flag["matches_or_beats"] == ["routecast_score", "blind_llm_mean", "heuristic_score"]
    (warning,) = [d for d in doc["diagnostics"] if d["code"] == "PCSC-W731"]
    assert "`recognition_risk` alone has AUC 0.767" in warning["message"] and "`routecast_score` (0.756)" in warning[
        "message"]


def test_the_flag_auc_and_lift_counted_by_hand() -> None:
    rows = graded_rows()
    y = [int(r["outcome_bucket"] != "-") for r in rows]
    flagged = [r["recognition_risk"] == "yes" for r in rows]
    # 4 flagged positives over 13 unflagged negatives win; flagged-flagged and unflagged-unflagged pairs tie
    wins = sum(1 for f, yi in zip(flagged, y, strict=True) if f and yi) * sum(
        1 for f, yi in zip(flagged, y, strict=True) if not f and not yi)
    ties = sum(1 for a, ya in zip(flagged, y, strict=True) for b, yb in zip(flagged, y, strict=True)
               if ya and not yb and a == b)
    assert (wins, ties) == (52, 34)
    assert (wins + ties / 2) / (6 * 15) == pytest.approx(0.7667, abs=1e-4)
    top = [yi for f, yi in zip(flagged, y, strict=True) if f][:21 // 4]  # the first 5 flagged, in row order
    assert sum(top) / len(top) / (6 / 21) == pytest.approx(2.80)


def test_the_intervals_are_the_documented_bootstrap(capsys: pytest.CaptureFixture[str]) -> None:
    B = 300
    code, doc = evaluate_json(capsys, *ARGS, "--covariate", "recognition_risk", "--bootstrap", str(B))
    assert code == 0
    rows = graded_rows()
    y = [int(r["outcome_bucket"] != "-") for r in rows]
    flag = [1.0 if r["recognition_risk"] == "yes" else 0.0 for r in rows]
    rc = [float(r["routecast_score"]) for r in rows]
    aucs, deltas = [], []
    for w in loop_bootstrap(len(y), B, SEED):
        if 0 < sum(wi * yi for wi, yi in zip(w, y, strict=True)) < sum(w):
            aucs.append(brute_auc(flag, y, w))
            deltas.append(brute_auc(rc, y, w) - brute_auc(flag, y, w))
    (cov,) = doc["covariates"]
    assert cov["ci"] == pytest.approx(list(np.quantile(aucs, [0.025, 0.975])), abs=1e-12)
    versus = next(p for p in cov["paired"] if p["a"] == "routecast_score")
    assert versus["ci"] == pytest.approx(list(np.quantile(deltas, [0.025, 0.975])), abs=1e-12)


def test_the_logit_agrees_with_an_independent_newton_raphson(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = evaluate_json(capsys, *ARGS, "--covariate", "recognition_risk", "--bootstrap", "20")
    assert code == 0
    rows = graded_rows()
    y = [float(r["outcome_bucket"] != "-") for r in rows]
    flag = [1.0 if r["recognition_risk"] == "yes" else 0.0 for r in rows]
    for model in doc["adjusted"]:
        z = standardised([float(r[model["scorer"]]) for r in rows])
        beta, se = newton_pure([[1.0, zi, fi] for zi, fi in zip(z, flag, strict=True)], y, [1.0] * len(y))
        got = {t["name"]: t for t in model["terms"]}
        for name, b, s in zip(("intercept", model["scorer"], "recognition_risk"), beta, se, strict=True):
            assert got[name]["estimate"] == pytest.approx(b, rel=1e-9)
            assert got[name]["se"] == pytest.approx(s, rel=1e-7)
            assert got[name]["p"] == pytest.approx(math.erfc(abs(b / s) / math.sqrt(2)), rel=1e-6)


def write(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_bootstrap_coefficients_are_refits_on_the_same_resamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a table no resample separates, each resample's coefficients are the weighted fit."""
    rng = np.random.default_rng(7)
    n, B = 120, 40
    score = rng.normal(size=n)
    age = rng.normal(40, 10, size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.8 * score + 0.03 * (age - 40))))).astype(int)
    path = write(tmp_path / "t.csv", ["id", "y", "s", "age"],
                 [[f"c{i}", int(y[i]), round(float(score[i]), 6), round(float(age[i]), 6)] for i in range(n)])
    code, doc = evaluate_json(capsys, "evaluate", "--scores", str(path), "--id", "id", "--outcome", "y",
                              "--covariate", "age", "--bootstrap", str(B))
    assert code == 0, doc
    (model,) = doc["adjusted"]
    assert model["bootstrap"]["separated"] == 0 and model["bootstrap"]["skipped"] == 0
    with path.open(newline="") as f:
        table = list(csv.DictReader(f))
    zs = standardised([float(r["s"]) for r in table])
    za = standardised([float(r["age"]) for r in table])
    x = [[1.0, a, b] for a, b in zip(zs, za, strict=True)]
    ys = [float(r["y"]) for r in table]
    fits = [newton_pure(x, ys, [float(c) for c in w])[0] for w in loop_bootstrap(n, B, SEED)]
    for j, term in enumerate(model["terms"]):
        expected = np.quantile([f[j] for f in fits], [0.025, 0.975])
        assert term["ci"] == pytest.approx(list(expected), rel=1e-7)
    assert [t["unit"] for t in model["terms"]] == ["intercept", "per SD", "per SD"]
    assert doc["covariates"][0]["coding"] == "numbers as written"
    assert [s["name"] for s in doc["scorers"]] == ["s"], "a covariate is not a scorer"


def test_separation_leaves_the_interval_open_and_is_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every flagged case is positive but one: the resamples that drop it separate the outcomes
    rows = [[f"c{i}", 1, i, "yes"] for i in range(5)] + [["c5", 0, 2, "yes"], ["e0", 1, 7, ""]]
    rows += [[f"d{i}", 0, i, ""] for i in range(13)]
    path = write(tmp_path / "t.csv", ["id", "y", "s", "flag"], rows)
    code, out, err = run_cli(capsys, "evaluate", "--scores", str(path), "--id", "id", "--outcome", "y",
                             "--covariate", "flag", "--bootstrap", "400")
    assert code == 0, err
    code, doc = evaluate_json(capsys, "evaluate", "--scores", str(path), "--id", "id", "--outcome", "y",
                              "--covariate", "flag", "--bootstrap", "400")
    (model,) = doc["adjusted"]
    assert model["converged"]
    flag = model["terms"][2]
    # (19/20)^20 ≈ 36% of resamples leave out c5: the flag's coefficient runs off to +∞ there
    assert flag["diverged"] > 0.25 * 400 and flag["ci"][1] is None and flag["ci"][0] is not None
    assert model["bootstrap"]["separated"] >= flag["diverged"]
    assert "resamples separate the outcomes" in out and "+∞]" in out


def test_outcomes_the_terms_separate_have_no_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [[f"c{i}", 1, 10 + i, "yes"] for i in range(4)] + [[f"d{i}", 0, i, "no"] for i in range(8)]
    path = write(tmp_path / "t.csv", ["id", "y", "s", "flag"], rows)
    argv = ("evaluate", "--scores", str(path), "--id", "id", "--outcome", "y", "--covariate", "flag",
            "--bootstrap", "50")
    code, doc = evaluate_json(capsys, *argv)
    assert code == 0
    (model,) = doc["adjusted"]
    assert not model["converged"] and all(t["estimate"] is None and t["p"] is None for t in model["terms"])
    assert model["why"].startswith("the terms separate the outcomes")
    code, out, _ = run_cli(capsys, *argv)
    assert "no estimate: the terms separate the outcomes of the graded cases: no finite maximum" in out


def test_a_covariate_below_every_scorer_gives_no_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [[f"c{i}", int(i >= 6), i, "yes" if i % 2 else "no"] for i in range(12)]
    path = write(tmp_path / "t.csv", ["id", "y", "s", "flag"], rows)
    code, doc = evaluate_json(capsys, "evaluate", "--scores", str(path), "--id", "id", "--outcome", "y",
                              "--covariate", "flag", "--bootstrap", "50")
    assert code == 0
    assert doc["covariates"][0]["matches_or_beats"] == []
    assert not [d for d in doc["diagnostics"] if d["code"] == "PCSC-W731"]


def test_without_covariates_the_grades_do_not_move(capsys: pytest.CaptureFixture[str]) -> None:
    _, plain = evaluate_json(capsys, *ARGS, "--bootstrap", "500")
    _, with_cov = evaluate_json(capsys, *ARGS, "--bootstrap", "500", "--covariate", "recognition_risk")
    assert plain["scorers"] == with_cov["scorers"] and plain["paired"] == with_cov["paired"]
    assert plain["covariates"] == [] and plain["adjusted"] == []
    assert "recognition_risk" in plain["ignored_columns"] and "recognition_risk" not in with_cov["ignored_columns"]


def test_the_text_report_shows_the_covariate_sections(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *ARGS, "--covariate", "recognition_risk", "--bootstrap", "200")
    assert code == 0
    assert "covariates, each graded alone as a baseline" in out
    assert "within each value of covariate `recognition_risk`" in out
    assert "adjusted: logit P(positive) on `routecast_score` and the covariates" in out
    assert "PCSC-W731" in err


# ---------------------------------------------------------------------- refusals
@pytest.mark.parametrize(("cells", "wanted"), [
    (["yes", "maybe"], "covariate column `flag` is `maybe`"),
    (["yes", "yes"], "covariate column `flag` has one value"),
])
def test_a_covariate_that_cannot_be_coded_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cells: list[str], wanted: str
) -> None:
    rows = [["a", 1, 0.5, cells[0]], ["b", 0, 0.2, cells[1]], ["c", 1, 0.9, cells[0]]]
    path = write(tmp_path / "t.csv", ["id", "y", "s", "flag"], rows)
    code, out, err = run_cli(capsys, "evaluate", "--scores", str(path), "--id", "id", "--outcome", "y",
                             "--covariate", "flag")
    assert code == 1
    assert "PCSC-E731" in err and wanted in err
    if "maybe" in wanted:
        assert f"{path}:3:" in err, "located at the row"


def test_a_missing_or_misused_covariate_column_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "t.csv", ["id", "y", "s"], [["a", 1, 0.5], ["b", 0, 0.2]])
    base = ("evaluate", "--scores", str(path), "--id", "id", "--outcome", "y")
    code, _, err = run_cli(capsys, *base, "--covariate", "nope")
    assert code == 1 and "no covariate column `nope`" in err and "PCSC-E731" in err
    code, _, err = run_cli(capsys, *base, "--covariate", "y")
    assert code == 1 and "`y` is the outcome column; it cannot be a covariate too" in err
    code, _, err = run_cli(capsys, "evaluate", "--covariate", "flag")
    assert code == 2 and "--covariate does not apply without --scores" in err


# ---------------------------------------------------------------------- incumbent and challengers
def test_no_scorer_of_the_routecast_table_displaces_the_llm_judge(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = evaluate_json(capsys, *ARGS, "--incumbent", "blind_llm_mean", "--bootstrap", "400")
    assert code == 0
    gate = doc["incumbent"]
    assert gate["name"] == "blind_llm_mean" and gate["promoted"] == []
    rows = graded_rows()
    y = [int(r["outcome_bucket"] != "-") for r in rows]
    judge = [float(r["blind_llm_mean"]) for r in rows]
    for c in gate["challengers"]:
        mine = [float(r[c["name"]]) for r in rows]
        assert c["delta_auc"] == pytest.approx(brute_auc(mine, y) - brute_auc(judge, y))
        assert c["ci"][0] <= 0 < c["ci"][1] and c["promote"] is False


def test_a_challenger_whose_interval_clears_zero_replaces_the_incumbent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(3)
    rows = [[f"c{i}", int(i % 2), round(float(rng.random()), 6), i % 2 + round(float(rng.random()) / 10, 6)]
            for i in range(60)]
    path = write(tmp_path / "t.csv", ["id", "y", "coin", "sharp"], rows)
    argv = ("evaluate", "--scores", str(path), "--id", "id", "--outcome", "y", "--bootstrap", "300")
    code, doc = evaluate_json(capsys, *argv, "--incumbent", "coin")
    assert code == 0
    (c,) = doc["incumbent"]["challengers"]
    assert c["name"] == "sharp" and c["ci"][0] > 0 and c["promote"] is True
    assert doc["incumbent"]["promoted"] == ["sharp"]
    code, out, _ = run_cli(capsys, *argv, "--incumbent", "coin")
    assert "replaces the incumbent" in out
    code, doc = evaluate_json(capsys, *argv, "--incumbent", "sharp")
    assert doc["incumbent"]["promoted"] == [], "the weaker scorer does not replace the stronger"


def test_an_incumbent_that_is_no_scorer_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, *ARGS, "--incumbent", "category")
    assert code == 1 and "PCSC-E731" in err and "--incumbent `category` is not a scorer of the table" in err
    code, _, err = run_cli(capsys, "evaluate", "--incumbent", "score")
    assert code == 2 and "--incumbent does not apply without --scores" in err


def test_the_covariate_report_is_byte_identical_run_to_run(capsys: pytest.CaptureFixture[str]) -> None:
    argv = (*ARGS, "--covariate", "recognition_risk", "--incumbent", "blind_llm_mean", "--bootstrap", "500",
            "--format", "json")
    first = run_cli(capsys, *argv)[1]
    assert run_cli(capsys, *argv)[1] == first


def test_collinear_terms_have_no_estimate_and_no_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the scorer is constant: it cannot be told apart from the intercept
    rows = [["a", 1, 1, "yes"], ["b", 0, 1, "no"], ["c", 1, 1, "no"], ["d", 0, 1, "yes"], ["e", 1, 1, "yes"]]
    path = write(tmp_path / "t.csv", ["id", "y", "s", "flag"], rows)
    argv = ("evaluate", "--scores", str(path), "--id", "id", "--outcome", "y", "--covariate", "flag",
            "--bootstrap", "60")
    code, doc = evaluate_json(capsys, *argv)
    assert code == 0
    (model,) = doc["adjusted"]
    assert not model["converged"] and model["why"].startswith("the terms are collinear")
    assert model["bootstrap"]["skipped"] == 60, "every resample has the same constant scorer"
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and "no estimate: the terms are collinear" in out


def test_a_ledger_export_joined_with_a_covariate_is_graded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pcsc.cli import main

    ledger, cohort = tmp_path / "pilot.sqlite", EXAMPLES / "cohort"
    assert main(["freeze", "--retrospective", str(cohort), "--ledger", str(ledger), "-q"]) == 0
    assert main(["resolve", str(cohort / "outcomes_pilot.toml"), "--ledger", str(ledger), "--as-of", "2019-01-01",
                 "-q"]) == 0
    exported = tmp_path / "pilot.csv"
    assert main(["ledger", "export", "--ledger", str(ledger), "--as-of", "2019-01-01", "-o", str(exported), "-q"]) == 0
    with exported.open(newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    joined = tmp_path / "pilot-with-covariate.csv"
    header = [*table[0].keys(), "devtools"]
    write(joined, header, [[*r.values(), "yes" if "developers" in Path(cohort / Path(r["file"]).name).read_text(
        encoding="utf-8") else "no"] for r in table])
    capsys.readouterr()
    code, doc = evaluate_json(capsys, "evaluate", "--scores", str(joined), "--id", "route", "--outcome", "outcome",
                              "--positive", "positive", "--negative", "negative", "--covariate", "devtools",
                              "--bootstrap", "200")
    assert code == 0, doc
    (cov,) = doc["covariates"]
    assert cov["name"] == "devtools" and "devtools" not in {s["name"] for s in doc["scorers"]}
    assert doc["cases"]["n"] == 23 and {a["scorer"] for a in doc["adjusted"]} >= {"score", "flat_npv"}


def test_labels_in_the_ledger_carry_covariates_graded_against_the_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    from pcsc.cli import main

    cohort = EXAMPLES / "cohort"
    text = (cohort / "outcomes_pilot.toml").read_text(encoding="utf-8")
    flagged: set[str] = set()

    def flag(m: re.Match[str]) -> str:
        route = m.group(1)
        if route < "m":
            flagged.add(route)
        return f'{m.group(0)}\ncovariates = {{ recognition_risk = {"true" if route < "m" else "false"} }}'

    outcomes = tmp_path / "outcomes.toml"
    outcomes.write_text(re.sub(r'\[\[label\]\]\nroute = "([a-z_0-9]+)"\ndate = [0-9-]+\noutcome = "[^"]+"', flag,
                               text), encoding="utf-8")
    assert flagged
    ledger = tmp_path / "pilot.sqlite"
    assert main(["freeze", "--retrospective", str(cohort), "--ledger", str(ledger), "-q"]) == 0
    assert main(["resolve", str(outcomes), "--ledger", str(ledger), "--as-of", "2019-01-01", "-q"]) == 0
    capsys.readouterr()
    argv = ("evaluate", "--ledger", str(ledger), "--as-of", "2019-01-01", "--bootstrap", "300")
    code, doc = evaluate_json(capsys, *argv)
    assert code == 0, doc
    (cov,) = doc["covariates"]
    graded = [c for c in doc["cases"] if c["score"] is not None]
    assert cov["name"] == "recognition_risk" and len(graded) == 23
    y = [int(c["label"] == "positive") for c in graded]
    flags = [float(c["covariates"]["recognition_risk"]) for c in graded]
    assert flags == [1.0 if c["route"] in flagged else 0.0 for c in graded]
    assert cov["auc"] == pytest.approx(brute_auc(flags, y))
    (model,) = doc["adjusted"]
    assert model["scorer"] == "score" and model["n"] == 23
    code, out, _ = run_cli(capsys, *argv)
    assert "the labels' covariates, graded against the score on 23 routes" in out


def test_a_label_covariate_that_is_not_a_value_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pcsc.forecast.outcomes import OutcomesError, outcomes_from_toml

    doc = {"label": [{"route": "r", "date": dt.date(2020, 1, 1), "outcome": "+",
                      "covariates": {"recognition_risk": [1, 2]}}]}
    with pytest.raises(OutcomesError) as caught:
        outcomes_from_toml(doc, "o.toml")
    assert "label[0].covariates.recognition_risk: expected a name and a number" in str(caught.value.messages)
    plain = outcomes_from_toml({"label": [{"route": "r", "date": dt.date(2020, 1, 1),
                                           "outcome": "+"}]}, "o.toml")
    assert plain.labels[0].payload() == {"label": "positive", "bucket": "+"}, "a label without covariates is as before"
