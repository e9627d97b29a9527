"""RouteCast end to end: prospective and retrospective freezing (never pooled), the
ledger exported as a score table with a checksum, the evidence packet, evidence
integrity, leakage controls (blinding, `check --leakage`, strata) and fixed windows."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pcsc.cli import main
from pcsc.forecast import metrics
from pcsc.forecast.ledger import Ledger
from tests.conftest import EXAMPLES, SPEC_ROUTE, run_cli

COHORT = EXAMPLES / "cohort"
PILOT = COHORT / "outcomes_pilot.toml"
RESOLVED = "2019-01-01"  # every pilot label (2018-06-01) is known by then
TODAY = dt.datetime.now(dt.UTC).date()


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(capsys, *argv, "--format", "json")
    assert out, err
    doc: dict[str, Any] = json.loads(out)
    return code, doc


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped cohort frozen retrospectively, its pilot outcomes recorded after."""
    ledger = tmp_path_factory.mktemp("pilot") / "ledger.sqlite"
    assert main(["freeze", "--retrospective", str(COHORT), "--ledger", str(ledger), "-q"]) == 0
    assert main(["resolve", str(PILOT), "--ledger", str(ledger), "--as-of", RESOLVED, "-q"]) == 0
    return ledger


def copy_ledger(src: Path, dst: Path) -> Path:
    with Ledger.open(src, create=False):  # folds the WAL back in
        pass
    target = dst / "ledger.sqlite"
    target.write_bytes(src.read_bytes())
    return target


# ---------------------------------------------------------------------- 1. modes
def test_a_retrospective_pilot_of_the_shipped_cohort_is_graded_and_labelled_retrospective(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Ledger.open(pilot, create=False) as ledger:
        entries = ledger.entries()
        outcomes = ledger.outcomes()
    assert len(entries) == 30
    assert {e.document()["mode"] for e in entries} == {"retrospective"}
    assert all(o.forecast_seq == 30 for o in outcomes), "recorded after the freeze"
    code, doc = run_json(capsys, "evaluate", "--ledger", str(pilot), "--as-of", RESOLVED, "--bootstrap", "200")
    assert code == 0, doc
    assert doc["mode"] == "retrospective"
    assert "recorded in the ledger after it was frozen" in doc["rule"]
    assert doc["routes_labelled"] == 23  # 7 mixed (~) are left out
    assert {s["name"] for s in doc["scorers"]} == {"score", "criteria_score", "flat_product", "flat_npv", "unweighted",
                                                 "evidence_compliance", "logistic", "boosted"}
    assert [w["days"] for w in doc["windows"]] == [30, 90, 180]
    assert all(w["routes"] == 30 for w in doc["windows"])
    code, out, _ = run_cli(capsys, "evaluate", "--ledger", str(pilot), "--as-of", RESOLVED, "--bootstrap", "200")
    assert code == 0
    assert "30 retrospective forecasts" in out
    assert "mode: retrospective" in out
    assert "at fixed windows" in out


def test_a_retrospective_forecast_is_not_graded_on_outcomes_recorded_before_it(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = copy_ledger(pilot, tmp_path)
    route = str(COHORT / "api_monitoring.route")
    assert main(["freeze", "--retrospective", route, "--ledger", str(ledger), "-q"]) == 0  # seq 31, after the outcomes
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(ledger), "--as-of", RESOLVED, "--bootstrap", "50")
    assert code == 1
    assert "PCSC-E741" in err
    assert "route api_monitoring: retrospective forecast frozen" in err and "(seq 31)" in err
    assert "was recorded" in err and "before it (anchored at forecast seq 30)" in err
    assert "graded only on outcomes recorded in the ledger after it was frozen" in err


def test_the_two_modes_never_pool(pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = copy_ledger(pilot, tmp_path)
    assert main(["freeze", str(COHORT / "api_monitoring.route"), "--ledger", str(ledger), "-q"]) == 0
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(ledger), "--as-of", RESOLVED, "--bootstrap", "50")
    assert code == 1
    assert "PCSC-E745" in err
    assert "29 retrospective (frozen" in err and "1 prospective (frozen" in err
    assert "never pooled" in err and "--mode" in err
    # one mode at a time: the retrospective ones grade as before ...
    code, doc = run_json(capsys, "evaluate", "--ledger", str(ledger), "--as-of", RESOLVED, "--bootstrap", "50",
                         "--mode", "retrospective")
    assert code == 0 and doc["mode"] == "retrospective" and len(doc["forecasts"]) == 30
    # ... and a prospective forecast frozen after its outcome is still refused
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(ledger), "--as-of", RESOLVED, "--bootstrap", "50",
                             "--mode", "prospective")
    assert code == 1
    assert "PCSC-E741" in err and "route api_monitoring" in err
    assert "is not before the" in err and "dated after the day it was frozen" in err


def test_a_mode_the_ledger_has_no_forecast_of_is_named(pilot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(pilot), "--as-of", RESOLVED, "--mode", "prospective")
    assert code == 1
    assert "PCSC-E742" in err and "no prospective forecast in the ledger" in err


def test_a_freeze_records_its_mode_and_a_retrospective_one_needs_a_past_as_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    code, doc = run_json(capsys, "freeze", str(SPEC_ROUTE), "--ledger", str(ledger))
    assert code == 0 and doc["mode"] == "prospective"
    with Ledger.open(ledger, create=False) as opened:
        assert opened.entries()[0].document()["mode"] == "prospective"
    future = tmp_path / "future.route"
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    future.write_text(text.replace("as_of   2012-06-01", f"as_of   {TODAY + dt.timedelta(days=3)}"), encoding="utf-8")
    code, out, err = run_cli(capsys, "freeze", "--retrospective", str(future), "--ledger", str(tmp_path / "x.sqlite"))
    assert code == 1
    assert "PCSC-E715" in err and "as_of is in the past" in err
    assert not (tmp_path / "x.sqlite").exists()


def test_a_ledger_mode_option_is_refused_with_a_score_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "evaluate", "--scores", "x.csv", "--id", "a", "--outcome", "b",
                           "--mode", "prospective")
    assert code == 2 and "--mode does not apply with --scores" in err


# ---------------------------------------------------------------------- 2. export
def test_the_export_is_a_score_table_evaluate_grades_with_its_checksum(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "pilot.csv"
    code, _, err = run_cli(capsys, "ledger", "export", "--ledger", str(pilot), "--as-of", RESOLVED, "-o", str(table))
    assert code == 0, err
    data = table.read_bytes()
    sidecar = (tmp_path / "pilot.csv.sha256").read_text(encoding="utf-8")
    assert sidecar == f"{hashlib.sha256(data).hexdigest()}  pilot.csv\n"
    header = data.decode().splitlines()[0].split(",")
    assert header[:6] == ["route", "file", "mode", "frozen_at", "entry_sha256", "payload_sha256"]
    with Ledger.open(pilot, create=False) as ledger:
        hashes = {e.entry_sha256 for e in ledger.entries()}
    rows = [line.split(",") for line in data.decode().splitlines()[1:]]
    assert len(rows) == 30 and {r[4] for r in rows} == hashes
    # the same ledger gives the same bytes
    again = tmp_path / "again.csv"
    assert main(["ledger", "export", "--ledger", str(pilot), "--as-of", RESOLVED, "-o", str(again), "-q"]) == 0
    assert again.read_bytes() == data

    code, doc = run_json(capsys, "evaluate", "--scores", str(table), "--id", "route", "--outcome", "outcome",
                         "--positive", "positive", "--negative", "negative", "--bootstrap", "200")
    assert code == 0
    assert doc["checksum"] == {"path": str(table) + ".sha256", "sha256": hashlib.sha256(data).hexdigest()}
    _, ledger_doc = run_json(capsys, "evaluate", "--ledger", str(pilot), "--as-of", RESOLVED, "--bootstrap", "200")
    by_name = {s["name"]: s["auc"] for s in doc["scorers"]}
    # the same grades as from the ledger, the flat baselines included (the logistic one is fitted there)
    graded = [s for s in ledger_doc["scorers"] if s["name"] in ("score", "criteria_score", "flat_product", "flat_npv")]
    assert len(graded) == 4
    for s in graded:
        assert by_name[s["name"]] == pytest.approx(s["auc"])

    table.write_bytes(data.replace(b"retrospective", b"prospective", 1))
    code, _, err = run_cli(capsys, "evaluate", "--scores", str(table), "--id", "route", "--outcome", "outcome",
                           "--positive", "positive", "--negative", "negative", "--bootstrap", "50")
    assert code == 1 and "PCSC-E732" in err and "does not match its checksum" in err


def test_a_score_table_with_a_mode_column_states_its_mode_and_never_pools(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "pilot.csv"
    assert main(["ledger", "export", "--ledger", str(pilot), "--as-of", RESOLVED, "-o", str(table), "-q"]) == 0
    base = ("evaluate", "--id", "route", "--outcome", "outcome", "--positive", "positive", "--negative", "negative",
            "--bootstrap", "50")
    code, doc = run_json(capsys, *base, "--scores", str(table))
    assert code == 0 and doc["mode"] == "retrospective" and "frozen before outcome join" in doc["rule"]
    code, out, _ = run_cli(capsys, *base, "--scores", str(table))
    assert out.splitlines()[1].startswith("mode: retrospective: ")
    # two exports put together: one graded prospective row is enough to refuse
    lines = table.read_text(encoding="utf-8").splitlines()
    row = next(line for line in lines if line.startswith("api_monitoring,"))
    assert ",positive," in row or ",negative," in row
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("\n".join([*lines, row.replace("api_monitoring,", "api_again,", 1)
                                 .replace(",retrospective,", ",prospective,")]) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, *base, "--scores", str(mixed))
    assert code == 1 and "PCSC-E745" in err and "mixes prospective and retrospective rows" in err
    # a table without a mode column (Table A1) states none
    code, doc = run_json(capsys, "evaluate", "--scores", str(EXAMPLES / "routecast_table_a1.csv"), "--id",
                         "blind_id", "--outcome", "outcome_bucket", "--positive", "S+,+", "--negative", "-",
                         "--bootstrap", "50")
    assert code == 0 and "mode" not in doc


def test_an_explicit_sidecar_is_checked_and_must_name_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv_path = EXAMPLES / "routecast_table_a1.csv"
    digest = hashlib.sha256(csv_path.read_bytes()).hexdigest()
    good, other = tmp_path / "good.sha256", tmp_path / "other.sha256"
    good.write_text(f"{digest}  routecast_table_a1.csv\n", encoding="utf-8")
    other.write_text(f"{digest}  something_else.csv\n", encoding="utf-8")
    base = ("evaluate", "--scores", str(csv_path), "--id", "blind_id", "--outcome", "outcome_bucket",
            "--positive", "S+,+", "--negative", "-", "--bootstrap", "50")
    code, doc = run_json(capsys, *base, "--sha256", str(good))
    assert code == 0 and doc["checksum"]["sha256"] == digest
    code, _, err = run_cli(capsys, *base, "--sha256", str(other))
    assert code == 1 and "not of routecast_table_a1.csv" in err


def test_the_jsonl_export_carries_the_packets(pilot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "ledger", "export", "--ledger", str(pilot), "--as-of", RESOLVED, "--format", "jsonl")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 30
    assert all(r["packet"]["route"] == r["route"] and r["mode"] == "retrospective" for r in rows)
    assert {r["outcome"] for r in rows} == {"positive", "negative", "mixed"}


def test_the_export_never_pools_modes_nor_carries_a_label_its_rule_refuses(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The exported table is what `evaluate --scores` grades, so it is held to the rules
    `evaluate` applies to the ledger: otherwise export and grade would get round them."""
    (tmp_path / "mixed").mkdir()
    (tmp_path / "refrozen").mkdir()
    mixed = copy_ledger(pilot, tmp_path / "mixed")
    assert main(["freeze", str(COHORT / "api_monitoring.route"), "--ledger", str(mixed), "-q"]) == 0
    table = tmp_path / "mixed.csv"
    code, _, err = run_cli(capsys, "ledger", "export", "--ledger", str(mixed), "--as-of", RESOLVED, "-o", str(table))
    assert code == 1 and "PCSC-E745" in err and "never pooled" in err
    assert not table.exists() and not (tmp_path / "mixed.csv.sha256").exists()
    # one mode at a time: the retrospective forecasts export as before ...
    code, out, err = run_cli(capsys, "ledger", "export", "--ledger", str(mixed), "--as-of", RESOLVED,
                             "--mode", "retrospective")
    assert code == 0, err
    assert len(out.splitlines()) == 31 and ",prospective," not in out
    # ... and the prospective one, frozen after its label's date, is refused with both dates
    code, doc = run_json(capsys, "ledger", "export", "--ledger", str(mixed), "--as-of", RESOLVED,
                         "--mode", "prospective")
    assert code == 1 and doc["ok"] is False
    assert [d["code"] for d in doc["diagnostics"]] == ["PCSC-E741"]
    assert "route api_monitoring: forecast frozen" in doc["error"] and "(dated 2018-06-01)" in doc["error"]

    refrozen = copy_ledger(pilot, tmp_path / "refrozen")
    assert main(["freeze", "--retrospective", str(COHORT / "api_monitoring.route"), "--ledger", str(refrozen),
                 "-q"]) == 0  # seq 31: after the outcomes were recorded
    capsys.readouterr()
    code, out, err = run_cli(capsys, "ledger", "export", "--ledger", str(refrozen), "--as-of", RESOLVED)
    assert code == 1 and out == ""
    assert "PCSC-E741" in err and "route api_monitoring: retrospective forecast frozen" in err
    assert "the label dated 2018-06-01" in err and "(seq 31)" in err
    # with no label known yet (as of before any), there is nothing to refuse
    code, out, err = run_cli(capsys, "ledger", "export", "--ledger", str(refrozen), "--as-of", "2015-01-01")
    assert code == 0, err
    assert len(out.splitlines()) == 31


# ---------------------------------------------------------------------- 3. the evidence packet
def test_the_packet_carries_every_evidence_item_and_each_transitions_actor(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "compile", str(EXAMPLES / "db_gui_subscription.route"))
    packet = doc["routes"][0]
    t = packet["transitions"][0]
    assert {"actor", "mechanism", "asset", "learning_cost"} <= set(t)
    items = {e["name"]: e for e in packet["evidence"]}
    assert {"source", "captured", "tier", "weight", "direction", "admitted", "excluded"} <= set(items["deck_claim"])
    assert items["deck_claim"]["excluded"] == {"kind": "unverified", "reason": "marked unverified",
                                               "duplicate_of": None}
    assert items["switch_survey"]["excluded"]["kind"] == "after-as-of"
    assert all(e["admitted"] == (e["excluded"] is None) for e in items.values())
    assert packet["windows"] == [30, 90, 180]


def test_explain_shows_excluded_evidence_with_its_reason(capsys: pytest.CaptureFixture[str]) -> None:
    route = str(EXAMPLES / "db_gui_subscription.route")
    code, out, err = run_cli(capsys, "explain", route)
    assert "evidence deck_claim = excluded" in out and "reason=marked unverified" in out
    assert "PCSC-W608" in err  # an unverified item excluded gets a note, not silence
    _, doc = run_json(capsys, "explain", route)
    steps = {s["symbol"]: s for s in doc["explain"]["steps"]}
    assert steps["evidence switch_survey"]["inputs"]["reason"] == "captured 2018-01-20, after as_of 2017-03-01"


# ---------------------------------------------------------------------- 4. evidence integrity
def _with_copy(tmp_path: Path, same: str) -> Path:
    """The reference route with a second `pricing_survey` under another name, sharing
    its source (``same="source"``) or its excerpt."""
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    start = text.index("    evidence pricing_survey {")
    block = text[start:text.index("}", start) + 1]
    twin = block.replace("pricing_survey", "survey_again")
    if same == "source":
        twin = re.sub(r'excerpt\s+"[^"]*"', 'excerpt   "Most teams would pay per message."', twin)
    else:
        twin = re.sub(r'source\s+"[^"]*"', 'source    "a second write-up of the same survey"', twin)
    path = tmp_path / f"twin_{same}.route"
    path.write_text(text.replace(block, block + "\n\n" + twin), encoding="utf-8")
    return path


@pytest.mark.parametrize("same", ["source", "excerpt"])
def test_a_duplicated_evidence_item_counts_once_and_warns(
    same: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, original = run_json(capsys, "compile", str(SPEC_ROUTE))
    code, doc = run_json(capsys, "compile", str(_with_copy(tmp_path, same)))
    assert code == 0
    before, after = original["routes"][0], doc["routes"][0]
    assert [t["W"] for t in after["transitions"]] == [t["W"] for t in before["transitions"]]
    assert after["score"] == before["score"]
    twin = next(e for e in after["evidence"] if e["name"] == "survey_again")
    assert twin["admitted"] is False
    assert twin["excluded"] == {"kind": "duplicate", "reason": f"same {same} as `pricing_survey`: counted once",
                                "duplicate_of": "pricing_survey"}
    warnings = [d for d in doc["diagnostics"] if d["code"] == "PCSC-W607"]
    assert len(warnings) == 1
    assert "`survey_again`" in warnings[0]["message"] and "`pricing_survey`" in warnings[0]["message"]


def test_no_shipped_example_repeats_a_source_or_an_excerpt(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", str(EXAMPLES))
    assert code == 0 and "PCSC-W607" not in err


# ---------------------------------------------------------------------- 5. leakage
CUES = {
    '"Developer API for SMS"': '"Smsly: developer API for SMS"',
    '"two founders"': '"two founders, backed by Y Combinator"',
    '"working SMS gateway integration"': '"Smsly gateway integration"',
    '"Signed up 300 developers in the first week of the private beta."':
        '"Signed up 300 developers to the Smsly gateway integration in the first week."',
    '"letter of intent from a regional carrier"': '"letter of intent from Telvora, jane@telvora.com"',
    '"carrier contracts in 20 countries"': '"Telvora carrier contracts in 20 countries"',
    '"We intend to negotiate carrier contracts in 20 countries with the company."':
        '"We intend to negotiate telvora carrier contracts in 20 countries, see https://telvora.example.org/loi."',
}


def test_blinding_masks_the_cues_and_keeps_the_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    for old, new in CUES.items():
        assert old in text
        text = text.replace(old, new)
    routes = tmp_path / "routes"
    routes.mkdir()
    (routes / "smsly.route").write_text("# Smsly, seed round led by Sequoia\n" + text, encoding="utf-8")
    names = tmp_path / "names.txt"
    names.write_text("# companies and people\nSmsly\nTelvora\n", encoding="utf-8")

    code, out, err = run_cli(capsys, "check", str(routes), "--leakage", str(names))
    assert code == 0
    flagged = re.findall(r"identity cue `([^`]*)`", err)
    assert {"Smsly", "Telvora", "jane@telvora.com", "Y Combinator", "Sequoia"} <= set(flagged)
    assert re.search(r"smsly\.route:1:3: warning: identity cue `Smsly`: a name from .*\[PCSC-W702\]", err)

    out_dir, private = tmp_path / "blind", tmp_path / "private" / "map.json"
    code, doc = run_json(capsys, "blind", str(routes), "-o", str(out_dir), "--map", str(private),
                         "--names", str(names))
    assert code == 0 and doc["ok"]
    assert [p.name for p in out_dir.iterdir()] == ["NAME-1.route"]  # the copy's name does not name it either
    blinded = (out_dir / "NAME-1.route").read_text(encoding="utf-8")
    for cue in ("Smsly", "Telvora", "telvora", "jane@", "Y Combinator", "Sequoia", "https://"):
        assert cue not in blinded
    masks = json.loads(private.read_text(encoding="utf-8"))["masks"]
    assert masks["[NAME-1]"] == "Smsly" and "[EMAIL-1]" in masks and "[INVESTOR-1]" in masks
    assert 'policy  "venture@1.0.0"' in blinded and 'class      "devtools/first-users"' in blinded

    code, out, err = run_cli(capsys, "check", str(out_dir), "--leakage", str(names))
    assert "PCSC-W702" not in err
    _, a = run_json(capsys, "compile", str(routes))
    _, b = run_json(capsys, "compile", str(out_dir))
    for key in ("score", "ungated_score", "verdict", "criteria_score"):
        assert a["routes"][0][key] == b["routes"][0][key]
    assert [t["W"] for t in a["routes"][0]["transitions"]] == [t["W"] for t in b["routes"][0]["transitions"]]
    assert a["routes"][0]["verdict"] == "released"  # grounded(asset) still holds on the masked text

    # the same inputs give the same bytes
    again = tmp_path / "again"
    assert main(["blind", str(routes), "-o", str(again), "--map", str(tmp_path / "map2.json"),
                 "--names", str(names), "-q"]) == 0
    assert (again / "NAME-1.route").read_bytes() == blinded.encode()


def test_a_name_in_an_identifier_is_renamed_everywhere_and_only_what_cannot_be_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`_` separates words, so a name inside an identifier is a cue: `check` flags it,
    `blind` renames route, state, transition and evidence names at every reference, and
    warns only at a cue it cannot rename (here a cost item's name)."""
    routes = tmp_path / "routes"
    routes.mkdir()
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("route devtools_api", "route smsly_api")
    for old, new in (("launch", "smsly_launch"), ("wedge", "smsly_wedge"), ("hn_launch", "smsly_hn"),
                     ("hosting    6", "smsly_box  6")):
        text = re.sub(rf"\b{old}\b(?! +55)", new, text)  # `wedge 55` is a criterion
    (routes / "smsly_api.route").write_text(text, encoding="utf-8")
    names = tmp_path / "names.txt"
    names.write_text("Smsly\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(routes), "--leakage", str(names))
    assert code == 0
    assert "identity cue `smsly` in the file name smsly_api.route" in err
    assert re.search(r"smsly_api\.route:2:7: warning: identity cue `smsly`: a name from .*; blind it with `pcsc "
                     r"blind` \(it renames route, state, transition and evidence names\)", err)
    box = next(i for i, t in enumerate(text.splitlines(), 1) if "smsly_box" in t)
    assert re.search(rf"smsly_api\.route:{box}:13: warning: identity cue `smsly`: .*; rename it: `pcsc blind` ren", err)

    out_dir, private = tmp_path / "blind", tmp_path / "map.json"
    code, doc = run_json(capsys, "blind", str(routes), "-o", str(out_dir), "--map", str(private),
                         "--names", str(names))
    assert code == 0 and doc["ok"]
    assert [f["blinded"] for f in doc["files"]] == [str(out_dir / "NAME-1_api.route")]
    assert doc["files"][0]["renamed"] == 4
    blinded = (out_dir / "NAME-1_api.route").read_text(encoding="utf-8")
    assert "route route_1 " in blinded and "transition transition_1: garage -> state_1 {" in blinded
    assert "transition monetize: state_1 -> bridge {" in blinded and "supports  transition_1" in blinded
    assert "evidence evidence_1 {" in blinded and "smsly_box" in blinded
    the_map = json.loads(private.read_text(encoding="utf-8"))
    assert the_map["files"][0]["renamed"] == {"route_1": "smsly_api", "state_1": "smsly_wedge",
                                              "transition_1": "smsly_launch", "evidence_1": "smsly_hn"}
    assert the_map["routes"] == {"route_1": "smsly_api"}
    left = [d for d in doc["diagnostics"] if d["code"] == "PCSC-W702"]
    line = next(i for i, t in enumerate(blinded.splitlines(), 1) if "smsly_box" in t)
    assert [(d["line"], d["message"].split("`")[1]) for d in left] == [(line, "smsly")]
    assert "left in the blinded copy" in left[0]["message"] and "cost items" in left[0]["message"]
    code, out, err = run_cli(capsys, "check", str(out_dir), "--leakage", str(names))
    assert err.count("PCSC-W702") == 1 and "identity cue `smsly`" in err  # the cost item, still there
    _, a = run_json(capsys, "compile", str(routes))
    _, b = run_json(capsys, "compile", str(out_dir))
    assert b["routes"][0]["route"] == "route_1" and a["routes"][0]["route"] == "smsly_api"
    assert [t["name"] for t in b["routes"][0]["transitions"]] == ["transition_1", "monetize", "expand"]
    for key in ("score", "verdict", "criteria_score"):
        assert a["routes"][0][key] == b["routes"][0][key]
    # two files whose names differ only in a masked cue's case would be blinded onto one copy
    (routes / "SMSLY_api.route").write_text(text, encoding="utf-8")
    code, out, err = run_cli(capsys, "blind", str(routes), "-o", str(tmp_path / "b2"),
                             "--map", str(tmp_path / "m2.json"),
                             "--names", str(names))
    assert code == 1 and "PCSC-E105" in err and "would be" in err and "rename one" in err


def test_a_blinded_cohort_compiles_to_the_same_numbers_and_joins_back_through_the_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names that hit route, state, transition and evidence names in most of the cohort:
    every blinded route keeps its score, verdict and each transition's p and c, and the
    map's `routes` joins results keyed by blinded route names back to the outcomes."""
    cohort = EXAMPLES / "cohort"
    names = tmp_path / "names.txt"
    names.write_text("national\npilot\npremium\napi\nsat\n", encoding="utf-8")
    out_dir, private = tmp_path / "blind", tmp_path / "map.json"
    code, doc = run_json(capsys, "blind", str(cohort), "-o", str(out_dir), "--map", str(private),
                         "--names", str(names))
    assert code == 0 and doc["ok"]
    the_map = json.loads(private.read_text(encoding="utf-8"))
    assert sum(len(f["renamed"]) for f in the_map["files"]) > 40 and len(the_map["routes"]) >= 2
    _, a = run_json(capsys, "compile", str(cohort))
    _, b = run_json(capsys, "compile", str(out_dir))
    original = {r["route"]: r for r in a["routes"]}
    assert len(b["routes"]) == len(original) == 30
    for route in b["routes"]:
        name = the_map["routes"].get(route["route"], route["route"])  # the join: blinded -> original
        assert name != route["route"] or not name.startswith("route_")
        before = original.pop(name)
        assert (route["score"], route["verdict"]) == (before["score"], before["verdict"])
        assert [(t["p"], t["c"]) for t in route["transitions"]] == [(t["p"], t["c"]) for t in before["transitions"]]
        blinded_names = [t["name"] for t in route["transitions"]]
        assert len(set(blinded_names)) == len(blinded_names)
    assert not original  # every route joined back exactly once
    outcomes = (cohort / "outcomes_pilot.toml").read_text(encoding="utf-8")
    assert all(f'route = "{old}"' in outcomes for old in the_map["routes"].values())
    # the same inputs give the same bytes, map included
    again, map2 = tmp_path / "again", tmp_path / "map2.json"
    assert main(["blind", str(cohort), "-o", str(again), "--map", str(map2), "--names", str(names), "-q"]) == 0
    assert private.read_bytes() == map2.read_bytes().replace(bytes(again), bytes(out_dir))
    for f in out_dir.iterdir():
        assert (again / f.name).read_bytes() == f.read_bytes()


def test_the_private_map_is_never_written_with_the_copies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "blind", str(SPEC_ROUTE), "-o", str(tmp_path), "--map", str(tmp_path / "map.json"))
    assert code == 2 and "must not be written inside" in err


def test_evaluate_grades_within_each_recognition_risk_stratum(capsys: pytest.CaptureFixture[str]) -> None:
    csv_path = EXAMPLES / "routecast_table_a1.csv"
    base = ("evaluate", "--scores", str(csv_path), "--id", "blind_id", "--outcome", "outcome_bucket",
            "--positive", "S+,+", "--negative", "-", "--bootstrap", "200")
    _, plain = run_json(capsys, *base)
    code, doc = run_json(capsys, *base, "--strata", "recognition_risk")
    assert code == 0
    assert doc["scorers"] == plain["scorers"], "the overall grades do not change"
    strata = doc["strata"]
    assert strata["column"] == "recognition_risk"
    assert [(g["value"], g["n"], g["positives"]) for g in strata["groups"]] == [("", 15, 2), ("yes", 6, 4)]
    rows = [line.split(",") for line in csv_path.read_text(encoding="utf-8").splitlines()[1:]]
    graded = [r for r in rows if r[6] in ("S+", "+", "-")]
    for group in strata["groups"]:
        cases = [r for r in graded if r[7] == group["value"]]
        want = metrics.auc([float(r[2]) for r in cases], [int(r[6] != "-") for r in cases])
        assert group["scorers"][0] == {"name": "routecast_score", "auc": pytest.approx(want)}
    code, out, _ = run_cli(capsys, *base, "--strata", "recognition_risk")
    assert "within each stratum of `recognition_risk`" in out and "overall" in out


# ---------------------------------------------------------------------- 9. windows
def test_resolve_reports_each_fixed_window(pilot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "resolve", str(PILOT), "--ledger", str(pilot), "--as-of", RESOLVED, "--dry-run")
    assert code == 0
    assert [w["days"] for w in doc["windows"]] == [30, 90, 180]
    assert all(w["closed"] == 30 and w["open"] == 0 for w in doc["windows"])
    decided = [w["summary"]["positive"] + w["summary"]["negative"] for w in doc["windows"]]
    assert decided == sorted(decided), "a later window has decided at least as much"
    row = next(w for w in doc["at_windows"] if w["route"] == "api_monitoring" and w["days"] == 90)
    assert row["date"] == "2012-12-09" and row["closed"] is True


def test_a_window_not_yet_reached_is_open(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, packets, _ = run_cli(capsys, "compile", str(COHORT / "api_monitoring.route"), "--format", "json")
    assert code == 0
    path = tmp_path / "api_monitoring.json"
    path.write_text(packets, encoding="utf-8")
    code, doc = run_json(capsys, "resolve", str(PILOT), "--packets", str(path), "--as-of", "2012-10-01")
    assert code == 0
    closed = {w["days"]: w["closed"] for w in doc["at_windows"]}
    assert closed == {30: False, 90: False, 180: False}  # as_of 2012-09-10 + 30 days is after 2012-10-01
    assert doc["windows"][0] == {"days": 30, "closed": 0, "open": 1,
                                 "summary": {"positive": 0, "negative": 0, "unresolved": 0, "censored": 0}}


def test_windows_are_a_policy_key_positive_and_increasing(tmp_path: Path) -> None:
    from pcsc.policy.load import PolicyError, PolicyStore

    source = (Path(__file__).parent.parent / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
    (tmp_path / "good" / "venture").mkdir(parents=True)
    (tmp_path / "bad" / "venture").mkdir(parents=True)
    good = tmp_path / "good" / "venture" / "1.0.0.toml"
    good.write_text(source + "\n[forecast]\nwindows = [14, 60]\n", encoding="utf-8")
    assert PolicyStore().load_path(good).policy.forecast.windows == [14, 60]
    bad = tmp_path / "bad" / "venture" / "1.0.0.toml"
    bad.write_text(source + "\n[forecast]\nwindows = [90, 30]\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="forecast.windows: days after as_of, positive and increasing"):
        PolicyStore().load_path(bad)


def test_renaming_skips_taken_names_and_keeps_kinds_and_obligations_apart() -> None:
    from pcsc.analysis.blind import Blinder

    source = ('route acme_x "t" {\n    state state_1 {}\n    state acme_b {}  # acme\n'
              "    transition acme_b: state_1 -> acme_b { discharges acme_b }\n"
              "    evidence e { supports acme_b, other contradicts acme_b }\n}\n")
    blinder = Blinder(["Acme"])
    text, renamed = blinder.rename_identifiers(source)
    assert renamed == {"route_1": "acme_x", "state_2": "acme_b", "transition_1": "acme_b"}
    assert "state state_2 {}  # acme" in text  # comments are the masking's, not the renaming's
    assert "transition transition_1: state_1 -> state_2 { discharges acme_b }" in text
    assert "supports transition_1, other contradicts transition_1" in text
    # route names are numbered across the run: the next file's route is route_2
    assert blinder.rename_identifiers(source)[1]["route_2"] == "acme_x"
