"""Preregistration (`pcsc prereg`, `pcsc evaluate --prereg`), the scorer's code hash in
grading, and ledgers of schema 1, on the shipped cohort (examples/cohort).

tests/data/ledger/schema1.sqlite was written by pcsc before plans existed (schema 1):
four cohort routes (adaptive_sat_prep, adherence_texts, api_monitoring, cardiac_patch)
frozen with `pcsc freeze --retrospective`, then their pilot outcomes recorded with
`pcsc resolve --as-of 2019-01-01`; its head then was `SCHEMA1_HEAD`.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pcsc.forecast.ledger import ForecastRecord, HeadToken, Ledger, PolicyId
from pcsc.forecast.prereg import PlanError, grade, parse_predicate, read_plan
from tests.conftest import ROOT, run_cli

COHORT = ROOT / "examples" / "cohort"
PILOT = COHORT / "outcomes_pilot.toml"
RESOLVED = "2019-01-01"
SCHEMA1 = ROOT / "tests" / "data" / "ledger" / "schema1.sqlite"
SCHEMA1_HEAD = "4.17:5e3624edb1432cf1f11a4fbab92b2f3c8f07f9dc6eed46aab6f52d87422ab806"

PLAN = """\
[plan]
name = "pilot"

[analysis]
bootstrap = 300
seed = 7
as_of = 2019-01-01

[[prediction]]
id = "P1"
claim = "auc(score) >= 0.6"

[[prediction]]
id = "P2"
claim = "delta_auc(score, flat_product).lo > 0"

[[prediction]]
id = "P3"
claim = "auc(score).hi < 0.5"
"""


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert out, err
    return code, json.loads(out), err


@pytest.fixture
def frozen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The shipped cohort frozen retrospectively, no outcome recorded yet."""
    ledger = tmp_path / "ledger.sqlite"
    assert run_cli(capsys, "freeze", "--retrospective", str(COHORT), "--ledger", str(ledger), "-q")[0] == 0
    return ledger


def write(tmp: Path, text: str, name: str = "plan.toml") -> str:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------------- predicates
def test_predicates_parse_and_bad_ones_are_located() -> None:
    p = parse_predicate("delta_auc(score, blind_llm).lo > 0")
    assert (p.metric, p.args, p.field, p.op, p.threshold) == ("delta_auc", ("score", "blind_llm"), "lo", ">", 0.0)
    assert parse_predicate("auc(score)>=0.6").holds(0.6) and not parse_predicate("auc(score) > 0.6").holds(0.6)
    for text, column, words in [
        ("auc(score) >= ", 15, "expected a number, found the end"),
        ("aux(score) >= 0.6", 1, "unknown metric 'aux'"),
        ("auc(score, flat_npv) >= 0.6", 1, "auc takes 1 argument, not 2"),
        ("lift(score).lo >= 1", 13, "lift has no interval, not 'lo'"),
        ("auc(score) => 0.6", 12, "unexpected '='"),
        ("auc(score) 0.6", 12, "expected a comparison (>= <= == > <), found '0.6'"),
        ("auc(score) >= 0.6 !", 19, "unexpected '!'"),
        ("delta_auc(flat_npv, score) > 0", 11, "its first argument is `score`"),
    ]:
        with pytest.raises(PlanError) as caught:
            parse_predicate(text)
        assert caught.value.column == column and words in caught.value.message, (text, caught.value.message)


def test_a_claim_error_is_located_in_the_plan_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   frozen: Path) -> None:
    bad = PLAN.replace('claim = "auc(score).hi < 0.5"', 'claim = "auc(score).mid < 0.5"')
    with pytest.raises(PlanError) as caught:
        read_plan(bad)
    assert (caught.value.line, caught.value.column) == (19, 21)  # the `mid` of line 19
    code, out, err = run_cli(capsys, "prereg", write(tmp_path, bad), "--ledger", str(frozen))
    assert (code, out) == (1, "")
    assert f"{tmp_path / 'plan.toml'}:19:21: error: auc has the fields lo and hi, not 'mid'" in err
    assert "[PCSC-E762]" in err and "Traceback" not in err


def test_undefined_is_neither_met_nor_not_met() -> None:
    report = {"scorers": [{"name": "score", "auc": None, "ci": None, "n": 2, "lift_top_quartile": None}],
              "paired": [], "calibration": None}
    graded = grade([{"id": "P1", "claim": "auc(score) >= 0.6"}, {"id": "P2", "claim": "n(score) >= 2"},
                    {"id": "P3", "claim": "brier() < 0.3"}, {"id": "P4", "claim": "auc(logistic) > 0"}], report)
    assert [(g["verdict"], g["value"]) for g in graded] == [
        ("UNDEFINED", None), ("MET", 2.0), ("UNDEFINED", None), ("UNDEFINED", None)]


# ---------------------------------------------------------------------- the loop
def test_a_plan_frozen_before_its_outcomes_is_graded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     frozen: Path) -> None:
    code, doc, err = run_json(capsys, "prereg", write(tmp_path, PLAN), "--ledger", str(frozen))
    assert code == 0, err
    assert (doc["seq"], len(doc["cohort"]), doc["analysis"]) == (
        31, 30, {"as_of": RESOLVED, "bootstrap": 300, "seed": 7})
    with Ledger.open(frozen, create=False) as ledger:
        (plan,) = ledger.plans("pilot")
        assert len(ledger.entries()) == 30 and plan.kind == "prereg" and ledger.verify().ok
        stored = plan.document()
    assert [f["seq"] for f in stored["cohort"]["forecasts"]] == list(range(1, 31))
    code, out, _ = run_cli(capsys, "ledger", "verify", "--ledger", str(frozen))
    assert code == 0 and "is intact: 30 forecasts and 1 preregistered plan, 0 outcomes" in out
    code, out, _ = run_cli(capsys, "ledger", "show", "--ledger", str(frozen))
    assert code == 0 and "1 preregistered plan\n" in out
    assert re.search(r"^ *31 +\S+ +pilot +30 +3 +[0-9a-f]{16}$", out, re.M), out[-600:]
    code, doc, _ = run_json(capsys, "ledger", "show", "--ledger", str(frozen))
    assert [(p["seq"], p["kind"], p["route"]) for p in doc["plans"]] == [(31, "prereg", "pilot")]
    assert len(doc["entries"]) == 30
    assert stored["scorer"]["policies"] == [{"id": "venture", "version": "1.1.0", "sha256": plan.policy.sha256}]
    assert run_cli(capsys, "resolve", str(PILOT), "--ledger", str(frozen), "--as-of", RESOLVED, "-q")[0] == 0
    code, doc, err = run_json(capsys, "evaluate", "--ledger", str(frozen), "--prereg", "pilot")
    assert code == 0, err
    graded = {p["id"]: p for p in doc["prereg"]["predictions"]}
    score = next(s for s in doc["scorers"] if s["name"] == "score")
    pair = next(p for p in doc["paired"] if p["b"] == "flat_product")
    assert (score["B"], score["seed"], doc["as_of"]) == (300, 7, RESOLVED)  # the plan's options
    assert graded["P1"]["value"] == score["auc"]
    assert graded["P1"]["verdict"] == ("MET" if score["auc"] >= 0.6 else "NOT MET")
    assert graded["P2"]["value"] == pair["ci"][0]
    assert graded["P2"]["verdict"] == ("MET" if pair["ci"][0] > 0 else "NOT MET")
    assert graded["P3"]["value"] == score["ci"][1] and graded["P3"]["verdict"] == "NOT MET"
    assert doc["prereg"]["deviations"] == []
    # an option other than the plan's is reported, beside the grades
    code, doc, err = run_json(capsys, "evaluate", "--ledger", str(frozen), "--prereg", "pilot", "--seed", "8")
    assert code == 0 and doc["prereg"]["deviations"] == [{"option": "seed", "planned": 7, "used": 8}]
    assert [(d["code"], d["message"]) for d in doc["diagnostics"]] == [
        ("PCSC-W762", "seed differs from plan pilot: planned 7, used 8")]
    code, out, _ = run_cli(capsys, "evaluate", "--ledger", str(frozen), "--prereg", "pilot")
    assert code == 0 and "preregistered plan pilot (seq 31" in out
    assert f"  P1  auc(score) >= 0.6  value {score['auc']:.3f}  {graded['P1']['verdict']}" in out
    code, _, err = run_cli(capsys, "evaluate", "--ledger", str(frozen), "--prereg", "nosuch")
    assert code == 1 and "no preregistered plan named 'nosuch' in the ledger; its plans: pilot [PCSC-E762]" in err


def test_a_plan_frozen_after_an_outcome_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   frozen: Path) -> None:
    assert run_cli(capsys, "resolve", str(PILOT), "--ledger", str(frozen), "--as-of", RESOLVED, "-q")[0] == 0
    code, out, err = run_cli(capsys, "prereg", write(tmp_path, PLAN), "--ledger", str(frozen))
    assert (code, out) == (1, "") and "115 outcomes of the cohort already recorded" in err and "[PCSC-E763]" in err
    with Ledger.open(frozen, create=False) as ledger:
        assert ledger.plans() == []  # nothing frozen
        # written past the command (as another tool could): the ledger takes it, evaluate refuses to grade it
        latest = ledger.entries()
        payload = {"format": "pcsc-prereg", "version": 1, "name": "late", "predictions": [
            {"id": "P1", "claim": "auc(score) >= 0.6"}], "analysis": {},
            "cohort": {"routes": [e.route for e in latest], "forecasts": [
                {"route": e.route, "seq": e.seq, "entry_sha256": e.entry_sha256} for e in latest]},
            "scorer": {"policies": [], "forecast_code": [], "frozen_by": {}}, "source": {"path": "", "sha256": ""}}
        ledger.append_plan(ForecastRecord("late", "late.toml", PolicyId("venture", "1.0.0", "x"), payload), inputs=[])
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(frozen), "--as-of", RESOLVED, "--prereg", "late")
    assert (code, out) == (1, "")
    assert "plan late (seq 31," in err and "was frozen after 115 of its outcomes" in err
    assert "(at forecast seq 30)" in err and "[PCSC-E763]" in err
    # the same cohort without the plan is graded, as an unregistered analysis
    assert run_cli(capsys, "evaluate", "--ledger", str(frozen), "--as-of", RESOLVED, "--bootstrap", "50")[0] == 0


def test_a_cohort_of_one_class_grades_undefined(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                frozen: Path) -> None:
    plan = PLAN.replace('name = "pilot"', 'name = "two"\ncohort = ["adaptive_sat_prep", "api_monitoring"]')
    assert run_cli(capsys, "prereg", write(tmp_path, plan), "--ledger", str(frozen), "-q")[0] == 0
    assert run_cli(capsys, "resolve", str(PILOT), "--ledger", str(frozen), "--as-of", RESOLVED, "-q")[0] == 0
    code, doc, err = run_json(capsys, "evaluate", "--ledger", str(frozen), "--prereg", "two")
    assert code == 0, err
    assert [c["route"] for c in doc["cases"]] == ["adaptive_sat_prep", "api_monitoring"]  # both positive
    assert [p["verdict"] for p in doc["prereg"]["predictions"]] == ["UNDEFINED"] * 3


# ---------------------------------------------------------------------- the scorer's code
def test_forecasts_of_different_scorer_code_are_not_pooled(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           frozen: Path) -> None:
    """One route frozen again by 'another pcsc' (its packet names other code): refused,
    naming both; --pool-scorers grades them with a warning."""
    with Ledger.open(frozen, create=False) as ledger:
        entry = ledger.entries("adaptive_sat_prep")[0]
        doc = entry.document()
        doc["packet"]["scorer"]["code_sha256"] = "0" * 64
        ledger.append_forecasts([ForecastRecord(entry.route, entry.file, entry.policy, doc)], inputs=entry.inputs)
    assert run_cli(capsys, "resolve", str(PILOT), "--ledger", str(frozen), "--as-of", RESOLVED, "-q")[0] == 0
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(frozen), "--as-of", RESOLVED)
    assert (code, out) == (1, "") and "[PCSC-E761]" in err
    assert "pcsc 0.1.0 code sha256 000000000000: 1 route (adaptive_sat_prep)" in err
    assert "29 routes" in err
    code, doc, err = run_json(capsys, "evaluate", "--ledger", str(frozen), "--as-of", RESOLVED, "--pool-scorers",
                              "--bootstrap", "50")
    assert code == 0 and doc["routes_labelled"] == 23
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-W761"]


# ---------------------------------------------------------------------- ledgers of schema 1
def test_a_schema_1_ledger_verifies_grades_and_is_upgraded_by_its_first_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger_path = tmp_path / "schema1.sqlite"
    shutil.copyfile(SCHEMA1, ledger_path)
    conn = sqlite3.connect(ledger_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    before = conn.execute("SELECT * FROM entries ORDER BY seq").fetchall()
    conn.close()
    code, doc, err = run_json(capsys, "ledger", "verify", "--ledger", str(ledger_path), "--head", SCHEMA1_HEAD)
    assert code == 0 and doc["ok"] is True, err
    # its packets name no code: one group, graded as before
    code, doc, err = run_json(capsys, "evaluate", "--ledger", str(ledger_path), "--as-of", RESOLVED,
                              "--bootstrap", "50")
    assert code == 0 and doc["routes_labelled"] == 4, err
    # a plan of its routes, before outcomes: impossible here (recorded already); a cohort without outcomes is
    # not to be had in this ledger, so its first plan is appended through the library, which upgrades it
    with Ledger.open(ledger_path, create=False) as ledger:
        ledger.append_plan(ForecastRecord("p", "p.toml", PolicyId("venture", "1.0.0", "x"), {"name": "p"}),
                           inputs=[])
        assert ledger.schema_version == 2
        check = ledger.verify(HeadToken.parse(SCHEMA1_HEAD))
        assert check.ok and check.head_check is not None and check.head_check.appended_entries == 1
    conn = sqlite3.connect(ledger_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert conn.execute("SELECT * FROM entries WHERE kind = 'forecast' ORDER BY seq").fetchall() == before
    conn.close()
    assert run_cli(capsys, "ledger", "verify", "--ledger", str(ledger_path))[0] == 0
    # a schema-2 entry kind in a schema-1 ledger is what verify names: the CHECK of schema 1 is compared as is
    shutil.copyfile(SCHEMA1, ledger_path)
    with Ledger.open(ledger_path, create=False) as ledger:
        assert ledger.schema_version == 1 and ledger.verify().ok


# ---------------------------------------------------------------------- blinded resolution
def test_blind_outcomes_grade_nothing_until_the_map_is_joined_and_then_grade_as_entered_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], frozen: Path
) -> None:
    """The cohort blinded (`pcsc blind`); the pilot outcomes entered under the blind ids
    by alice; the map joined by bob: the ledger records who did what when, in that
    order, and the grades are those of the outcomes entered under the routes' names."""
    names = tmp_path / "names.txt"
    names.write_text("sat\napi\n", encoding="utf-8")
    private = tmp_path / "private" / "map.json"
    assert run_cli(capsys, "blind", str(COHORT), "-o", str(tmp_path / "blind"), "--map", str(private),
                   "--names", str(names), "-q")[0] == 0
    routes = json.loads(private.read_text(encoding="utf-8"))["routes"]
    assert sorted(routes.values()) == ["adaptive_sat_prep", "api_monitoring"]
    text = PILOT.read_text(encoding="utf-8")
    for blind_id, route in routes.items():
        text = text.replace(f'route = "{route}"', f'route = "{blind_id}"')
    entered = write(tmp_path, text, "blind_outcomes.toml")
    code, doc, err = run_json(capsys, "resolve", entered, "--blind", "--by", "alice", "--ledger", str(frozen),
                              "--as-of", RESOLVED)
    assert code == 0 and (doc["stored"], doc["waiting"], doc["milestones"]) == (115, 115, []), err
    code, _, err = run_cli(capsys, "evaluate", "--ledger", str(frozen), "--as-of", RESOLVED)
    assert code == 1 and "[PCSC-E742]" in err  # nothing to grade: the blind outcomes are not joined
    code, doc, err = run_json(capsys, "resolve", "--join", str(private), "--by", "bob", "--ledger", str(frozen),
                              "--as-of", RESOLVED)
    assert code == 0 and doc["joined"] == 115, err
    with Ledger.open(frozen, create=False) as ledger:
        stored = ledger.outcomes()
        assert ledger.verify().ok
    blind, joined = stored[:115], stored[115:]
    assert len(joined) == 115 and all("entered by alice" in (o.source or "") for o in blind)
    assert {o.route for o in blind} >= set(routes) and not {o.route for o in joined} & set(routes)
    for first, second in zip(blind, joined, strict=True):
        assert (second.route, second.observed, second.payload) == (routes.get(first.route, first.route),
                                                                   first.observed, first.payload)
        assert second.source is not None and second.source.startswith(f"joined: blind outcome seq {first.seq} ")
        assert second.source.endswith("; joined by bob") and second.recorded_at >= first.recorded_at
    # joining again adds nothing
    code, doc, _ = run_json(capsys, "resolve", "--join", str(private), "--by", "bob", "--ledger", str(frozen))
    assert code == 0 and doc["joined"] == 0
    # the grades are those of the outcomes entered plainly in a ledger of the same forecasts
    plain = tmp_path / "plain.sqlite"
    shutil.copyfile(frozen, plain)
    with Ledger.open(plain, create=False) as ledger:
        assert ledger.verify().ok
    plain_dir = tmp_path / "p"
    plain_dir.mkdir()
    again = plain_dir / "ledger.sqlite"
    assert run_cli(capsys, "freeze", "--retrospective", str(COHORT), "--ledger", str(again), "-q")[0] == 0
    assert run_cli(capsys, "resolve", str(PILOT), "--ledger", str(again), "--as-of", RESOLVED, "-q")[0] == 0
    grades = [run_json(capsys, "evaluate", "--ledger", str(ledger), "--as-of", RESOLVED, "--bootstrap", "100")[1]
              for ledger in (frozen, again)]
    assert grades[0]["scorers"] == grades[1]["scorers"] and grades[0]["routes_labelled"] == 23


def test_blind_resolution_refuses_what_it_cannot_use(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     frozen: Path) -> None:
    code, _, err = run_cli(capsys, "resolve", str(PILOT), "--blind", "--ledger", str(frozen))
    assert code == 2 and "--blind needs --by NAME" in err
    code, _, err = run_cli(capsys, "resolve", str(PILOT), "--join", "map.json", "--by", "bob")
    assert code == 2 and "give no OUTCOMES.toml with it" in err
    bad = write(tmp_path, '{"format": "something else"}', "map.json")
    code, _, err = run_cli(capsys, "resolve", "--join", bad, "--by", "bob", "--ledger", str(frozen))
    assert code == 1 and "not a map of `pcsc blind`" in err and "[PCSC-E764]" in err
    good = write(tmp_path, '{"format": "pcsc-blind-map", "version": 1, "routes": {"route_9": "nosuch"}}', "m.json")
    code, _, err = run_cli(capsys, "resolve", "--join", good, "--by", "bob", "--ledger", str(frozen))
    assert code == 1 and "holds no blind outcome to join" in err
    # a blind id the map joins to no frozen route is an error, and nothing is joined
    entered = write(tmp_path, '[[label]]\nroute = "route_9"\ndate = 2018-06-01\noutcome = "+"\n', "b.toml")
    assert run_cli(capsys, "resolve", entered, "--blind", "--by", "alice", "--ledger", str(frozen))[0] == 0
    code, _, err = run_cli(capsys, "resolve", "--join", good, "--by", "bob", "--ledger", str(frozen))
    assert code == 1 and "the map joins to no frozen route: nosuch" in err and "[PCSC-E764]" in err
    with Ledger.open(frozen, create=False) as ledger:
        assert len(ledger.outcomes()) == 1
