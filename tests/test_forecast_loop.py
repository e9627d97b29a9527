"""The forecasting loop end to end: freeze -> resolve -> evaluate -> policy fit/compare.

Dates are relative to today, because freezing stamps the real time and a forecast may
only be graded on outcomes dated after it was frozen.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from pathlib import Path

import pytest

from pcsc.cli import main
from pcsc.forecast.learn import Comparison, compare, fit, held_out, w_aware_prior
from pcsc.policy.load import PolicyStore
from tests.conftest import SPEC_ROUTE, run_cli

TODAY = dt.datetime.now(dt.UTC).date()
AS_OF = TODAY - dt.timedelta(days=30)
CAPTURED = AS_OF - dt.timedelta(days=10)
FAR = TODAY + dt.timedelta(days=365 * 8)  # the resolution date: every milestone is due


def day(offset: int) -> str:
    return (TODAY + dt.timedelta(days=offset)).isoformat()


def write_routes(tmp: Path) -> list[str]:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    text = text.replace("as_of   2012-06-01", f"as_of   {AS_OF.isoformat()}")
    text = re.sub(r"captured  \d{4}-\d{2}-\d{2}", f"captured  {CAPTURED.isoformat()}", text)
    (tmp / "a.route").write_text(text, encoding="utf-8")
    (tmp / "b.route").write_text(text.replace("route devtools_api", "route rival_api"), encoding="utf-8")
    return [str(tmp / "a.route"), str(tmp / "b.route")]


def outcomes(tmp: Path, first: int = 20) -> str:
    path = tmp / "outcomes.toml"
    path.write_text(f"""
[[observation]]
route = "devtools_api"
date = {day(first)}
developers = 640

[[observation]]
route = "devtools_api"
date = {day(first + 300)}
developers = 5200
paying_teams = 230
arr = 1_300_000

[[observation]]
route = "rival_api"
date = {day(first)}
developers = 40

[[label]]
route = "devtools_api"
date = {day(first + 1000)}
outcome = "+"

[[label]]
route = "rival_api"
date = {day(first + 1000)}
outcome = "-"
""", encoding="utf-8")
    return str(path)


@pytest.fixture
def loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    ledger = tmp_path / "ledger.sqlite"
    code, _, err = run_cli(capsys, "freeze", *write_routes(tmp_path), "--ledger", str(ledger))
    assert code == 0, err
    return ledger


def test_resolve_stores_outcomes_once_and_resolves_every_status(
    loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = outcomes(tmp_path)
    code, out, err = run_cli(capsys, "resolve", path, "--ledger", str(loop), "--as-of", FAR.isoformat(),
                             "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["stored"] == 5
    status = {(m["route"], m["transition"]): m["status"] for m in doc["milestones"]}
    assert status[("devtools_api", "launch")] == "positive"
    assert status[("devtools_api", "monetize")] == "positive"
    assert status[("rival_api", "launch")] == "negative"
    assert status[("rival_api", "monetize")] == "censored"
    code, out, _ = run_cli(capsys, "resolve", path, "--ledger", str(loop), "--as-of", FAR.isoformat(),
                           "--format", "json")
    assert code == 0 and json.loads(out)["stored"] == 0  # nothing is stored twice
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(loop))
    assert code == 0 and "intact" in out


def test_evaluate_grades_the_frozen_forecasts(loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(loop), "--as-of", FAR.isoformat())
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(loop), "--as-of", FAR.isoformat(),
                             "--bootstrap", "500", "--seed", "7", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    names = [s["name"] for s in doc["scorers"]]
    # the logistic and boosted baselines are not fitted on two routes
    assert names == ["score", "criteria_score", "flat_product", "flat_npv", "unweighted", "evidence_compliance"]
    for s in doc["scorers"]:
        assert set(s) >= {"name", "n", "positives", "auc", "ci", "lift_top_quartile", "B", "seed"}
        assert (s["n"], s["positives"], s["B"], s["seed"]) == (2, 1, 500, 7)
        assert s["lift_top_quartile"] is None  # ⌊2/4⌋ = 0 cases: not defined
    assert doc["paired"][0]["a"] == "score" and doc["paired"][0]["b"] == "criteria_score"
    cal = doc["calibration"]
    assert cal["n"] == 3 and cal["bins"] == 10  # launch+, monetize+, rival launch-
    # Brier by hand from the compiled p of the three resolved transitions (outcomes 1, 1, 0)
    from pcsc.compiler.session import Session

    session = Session()
    route = session.load_routes(tmp_path / "a.route")[0]
    compiled = session.compile_route(route)
    assert compiled is not None
    p = {t.name: t.p for t in compiled.numbers.transitions}
    expected = ((1 - p["launch"]) ** 2 + (1 - p["monetize"]) ** 2 + (0 - p["launch"]) ** 2) / 3
    assert cal["brier"]["estimate"] == pytest.approx(expected, rel=1e-12)


def test_evaluate_refuses_a_forecast_frozen_after_its_outcome(
    loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    early = outcomes(tmp_path, first=-20)  # observations and labels dated before the freeze
    code, _, err = run_cli(capsys, "resolve", early, "--ledger", str(loop), "--as-of", FAR.isoformat())
    assert code == 0, err
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(loop), "--as-of", FAR.isoformat())
    assert code == 1
    assert "Traceback" not in err
    frozen = re.search(r"forecast frozen (\S+Z)", err)
    assert frozen and frozen.group(1).startswith(TODAY.isoformat()[:4])
    assert f"(decided {day(-20)})" in err  # both times are named


def test_evaluate_refuses_options_of_the_score_table_mode(loop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for extra, flag in ((["--plot", "x.png"], "--plot"), (["--id", "x"], "--id"), (["--positive", "+"], "--positive")):
        code, out, err = run_cli(capsys, "evaluate", "--ledger", str(loop), *extra)
        assert (code, out) == (2, "") and f"{flag} does not apply without --scores" in err


def test_ledger_errors_are_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.sqlite"
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(missing))
    assert (code, out) == (1, "")
    assert err == f"{missing}: error: no ledger at {missing} (`pcsc freeze` creates one) [PCSC-E711]\n"
    code, out, err = run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(missing), "--format", "json")
    doc = json.loads(out)
    assert (code, err, doc["ok"]) == (1, "", False) and doc["schema"]["kind"] == "resolve"
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E711"] and len(doc["errors"]) == 1


def test_nothing_to_grade_and_the_envelope(loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "evaluate", "--ledger", str(loop))
    assert code == 1 and err.startswith(f"{loop}: error: nothing to grade") and err.endswith("[PCSC-E742]\n")
    path = outcomes(tmp_path)
    code, out, _ = run_cli(capsys, "resolve", path, "--ledger", str(loop), "--as-of", FAR.isoformat(),
                           "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["errors"] == [] and doc["warnings"] == []
    assert [i["path"] for i in doc["inputs"]] == [path]
    report = tmp_path / "shown.txt"
    code, out, _ = run_cli(capsys, "ledger", "show", "--ledger", str(loop), "-o", str(report))
    assert (code, out) == (0, "") and report.read_text(encoding="utf-8").startswith(f"{loop}: 2 forecasts")


def test_policy_fit_is_a_beta_binomial_update_and_compare_decides(
    loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(loop), "--as-of", FAR.isoformat())
    target = tmp_path / "policies" / "venture" / "1.0.1.toml"
    code, _, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.1",
                           "--ledger", str(loop), "--as-of", FAR.isoformat(), "--holdout", "0", "-o", str(target))
    assert code == 0, err
    doc = tomllib.loads(target.read_text(encoding="utf-8"))
    assert doc["policy"]["extends"] == "venture@1.0.0"
    # the prior that best explains the outcomes after each transition's frozen W (Beta penalty of strength 20)
    from pcsc.compiler.session import Session

    session = Session()
    compiled = session.compile_route(session.load_routes(tmp_path / "a.route")[0])
    assert compiled is not None
    W = {t.name: t.reweight.W for t in compiled.numbers.transitions}
    # first-users: prior 0.45; launch resolved 1 positive of 2 routes (pooled: (20·0.45 + 1)/22)
    first_users = doc["priors"]["devtools/first-users"]
    assert first_users["p"] == pytest.approx(w_aware_prior([W["launch"]] * 2, [True, False], 0.45, 20), abs=1e-6)
    assert W["launch"] != 1 and first_users["p"] != pytest.approx((20 * 0.45 + 1) / (20 + 2), abs=1e-6)
    assert "pooled estimate 0.454545" in first_users["source"]
    # first-revenue: devtools monetize positive; rival's monetize is censored and carries nothing
    assert doc["priors"]["devtools/first-revenue"]["p"] == pytest.approx(
        w_aware_prior([W["monetize"]], [True], 0.30, 20), abs=1e-6)
    assert "devtools/scale" not in doc["priors"]  # nothing resolved: unchanged, not written
    code, out, _ = run_cli(capsys, "policy", "check", str(target))
    assert code == 0 and "venture@1.0.1" in out
    code, out, err = run_cli(capsys, "policy", "compare", "venture@1.0.0", "venture@1.0.1", "--policy-path",
                             str(tmp_path / "policies"), "--ledger", str(loop), "--as-of", FAR.isoformat(),
                             "--holdout", "1", "--min-cases", "2", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["cases"] == {"held_out": 2, "training": 0, "labelled": 2, "minimum": 2}
    assert result["transitions"] == 3 and result["brier_new"] < result["brier_old"] and result["promote"] is True


def test_fit_and_compare_never_share_routes() -> None:
    names = [f"route_{i}" for i in range(200)]
    held = [n for n in names if held_out(n, 0.3)]
    assert 0.2 < len(held) / len(names) < 0.4
    assert held == [n for n in names if held_out(n, 0.3)]  # deterministic


class _R:
    def __init__(self, route: str, transition: str, status: str) -> None:
        self.route, self.transition, self.status = route, transition, status


def _packet(route: str, cls: str, W: float = 1.0) -> dict[str, object]:
    return {"route": route, "value": 1e6, "transitions": [{"name": "t", "class": cls, "W": W, "c": 1000.0, "p": 0.5}]}


def test_fit_ignores_held_out_routes_and_unresolved_milestones() -> None:
    policy = PolicyStore().load_ref("venture@1.0.0").policy
    train = [n for n in (f"r{i}" for i in range(50)) if not held_out(n, 0.5)][:3]
    test = [n for n in (f"r{i}" for i in range(50)) if held_out(n, 0.5)][:3]
    packets = [_packet(r, "devtools/scale") for r in train + test]
    results = [_R(r, "t", "positive") for r in train + test] + [_R(train[0], "t", "unresolved")]
    fits = {f.ref_class: f for f in fit(policy, packets, results, strength=10, holdout=0.5)}
    assert (fits["devtools/scale"].n, fits["devtools/scale"].k) == (3, 3)
    assert fits["devtools/scale"].new_p == pytest.approx((10 * 0.10 + 3) / 13)


def test_compare_keeps_the_old_policy_when_brier_does_not_improve() -> None:
    store = PolicyStore()
    old = store.load_ref("venture@1.0.0").policy
    routes = [n for n in (f"r{i}" for i in range(50)) if held_out(n, 0.5)][:4]
    packets = [_packet(r, "devtools/scale") for r in routes]
    results = [_R(r, "t", "negative") for r in routes]
    result: Comparison = compare(old, old, packets, results, {}, 0.5)
    assert result.promote is False and "does not improve" in result.reason
    assert result.brier_old == pytest.approx(0.10**2)


def test_an_internal_error_is_reported_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pcsc.cli.commands.check

    def boom(ctx: object, args: object) -> int:
        raise RuntimeError("kaput")

    monkeypatch.setattr(pcsc.cli.commands.check, "run", boom)
    monkeypatch.delenv("PCSC_DEBUG", raising=False)
    code = main(["check", str(SPEC_ROUTE)])
    err = capsys.readouterr().err
    assert code == 70
    assert "internal error: RuntimeError: kaput" in err and "Traceback" not in err


def test_evaluate_warns_when_it_pools_forecasts_of_several_policies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One AUC over routes compiled under different policies ranks numbers of different
    rules together: evaluate says so (PCSC-W751), as `pcsc rank` does; one policy: no warning."""
    a, b = write_routes(tmp_path)
    ledger = tmp_path / "ledger.sqlite"
    assert run_cli(capsys, "freeze", a, b, "--ledger", str(ledger))[0] == 0
    run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(ledger), "--as-of", FAR.isoformat())
    argv = ("evaluate", "--ledger", str(ledger), "--as-of", FAR.isoformat(), "--bootstrap", "200")
    code, _, err = run_cli(capsys, *argv)
    assert code == 0 and "PCSC-W751" not in err

    other = tmp_path / "other"
    other.mkdir()
    a, b = write_routes(other)
    Path(b).write_text(Path(b).read_text(encoding="utf-8").replace('"venture@1.0.0"', '"venture@1.1.0"'), "utf-8")
    pooled = other / "ledger.sqlite"
    assert run_cli(capsys, "freeze", a, b, "--ledger", str(pooled))[0] == 0
    run_cli(capsys, "resolve", outcomes(other), "--ledger", str(pooled), "--as-of", FAR.isoformat())
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(pooled), *argv[3:])
    assert code == 0 and "AUC" in out  # still graded: a warning, as rank's
    [warning] = [line for line in err.splitlines() if "PCSC-W751" in line]
    assert warning.startswith(f"{pooled}: warning: forecasts graded together use 2 policies: venture@1.0.0 (sha256 ")
    assert "venture@1.1.0 (sha256 " in warning and "(devtools_api)" in warning and "(rival_api)" in warning
    code, out, _ = run_cli(capsys, "evaluate", "--ledger", str(pooled), *argv[3:], "--format", "json")
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["PCSC-W751"]
