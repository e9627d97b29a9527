"""`--set` on `seams`, `gate`, `splice`, `explain` and `redteam` (docs/decisions.md,
"What-if"): each result moves as the override says, the JSON records the overrides as
`compile`'s does, and neither the route file nor the policy file is written."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import pcsc.cli
from pcsc.render import schemas
from tests.conftest import ROOT, SPEC_ROUTE

Run = Callable[..., tuple[int, str, str]]
POLICY_FILE = ROOT / "policies" / "venture" / "1.0.0.toml"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Run]:
    monkeypatch.chdir(ROOT)
    route_before, policy_before = SPEC_ROUTE.read_bytes(), POLICY_FILE.read_bytes()

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    yield call
    # every test: what-if overrides are never written back
    assert SPEC_ROUTE.read_bytes() == route_before
    assert POLICY_FILE.read_bytes() == policy_before


def packet(run: Run, *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run(*argv, "--format", "json")
    assert out, err
    doc = json.loads(out)
    schemas.validate(doc)
    return code, doc


def recorded(doc: dict[str, Any]) -> list[str]:
    return [o["set"] for o in doc.get("overrides", [])]


def test_seams_under_abandonment_reports_the_abandonment_identity_cases(run: Run) -> None:
    _, base = packet(run, "seams", str(SPEC_ROUTE))
    assert "overrides" not in base
    assert all("case" not in s for r in base["routes"] for s in r["seams"])
    code, doc = packet(run, "seams", str(SPEC_ROUTE), "--set", "fold.abandonment=true")
    assert code == 0
    assert recorded(doc) == ["fold.abandonment=true"]
    seams = [s for r in doc["routes"] for s in r["seams"]]
    assert seams and all(s["fold"] == "abandonment" and s["case"] and s["identity_holds"] for s in seams)
    # the route's R_i are clipped at 0 under abandonment: its score is never below 0
    assert all(r["score"] >= 0 for r in doc["routes"])
    code, out, _ = run("seams", str(SPEC_ROUTE), "--set", "fold.abandonment=true")
    assert out.startswith("what-if overrides (never written back): fold.abandonment=true")


def test_seams_experiment_takes_the_fold_too(run: Run) -> None:
    _, base = packet(run, "seams", str(SPEC_ROUTE), "--experiment")
    code, doc = packet(run, "seams", str(SPEC_ROUTE), "--experiment", "--set", "fold.discount=0.08",
                       "--set", "fold.abandonment=true")
    assert code == 0
    assert recorded(doc) == ["fold.discount=0.08", "fold.abandonment=true"]
    assert {s["fold"] for r in doc["routes"] for s in r["seams"]} == {"abandonment"}
    assert doc["experiment"] != base["experiment"]


def test_gate_refuses_under_a_raised_delta_floor(run: Run) -> None:
    code, base = packet(run, "gate", str(SPEC_ROUTE))
    assert code == 0 and base["routes"][0]["verdict"] == "released"
    raised = "floors.delta.arr.points=[[1, 1e9]]"  # any change of arr costs at least 1e9 USD
    code, doc = packet(run, "gate", str(SPEC_ROUTE), "--set", raised)
    assert code == 3
    assert recorded(doc) == [raised]
    assert doc["routes"][0]["verdict"] == "suspend-and-ask"
    fields = {u["field"] for u in doc["routes"][0]["uncovered"]}
    assert "arr" in fields
    # --suggest recompiles each suggestion under the same override: the budget it adds
    # meets the raised floor, which the unchanged policy file would not ask for
    code, doc = packet(run, "gate", str(SPEC_ROUTE), "--suggest", "--set", raised)
    assert code == 3 and recorded(doc) == [raised]
    assert doc["suggestions"], "a refused route gets suggestions"
    assert any("floor_gap" in e for s in doc["suggestions"] for e in s["edits"])


def test_explain_shows_the_overridden_numbers(run: Run) -> None:
    _, base = packet(run, "explain", str(SPEC_ROUTE))
    code, doc = packet(run, "explain", str(SPEC_ROUTE), "--set", "vision.tam=20B")
    assert code == 0 and recorded(doc) == ["vision.tam=20B"]
    value = next(s for s in doc["explain"]["steps"] if s["symbol"] == "V")
    assert value["inputs"]["tam"] == 20e9
    assert value["value"] == 20e9 * value["inputs"]["capture"] * value["inputs"]["defensibility"]
    old = next(s for s in base["explain"]["steps"] if s["symbol"] == "V")
    assert old["inputs"]["tam"] != 20e9
    _, out, _ = run("explain", str(SPEC_ROUTE), "--set", "vision.tam=20B")
    assert out.startswith("what-if overrides (never written back): vision.tam=20B")


def test_redteam_attacks_the_overridden_route(run: Run) -> None:
    _, compiled = packet(run, "compile", str(SPEC_ROUTE), "--set", "vision.tam=20B")
    _, base = packet(run, "redteam", str(SPEC_ROUTE), "--max-edits", "5")
    code, doc = packet(run, "redteam", str(SPEC_ROUTE), "--max-edits", "5", "--set", "vision.tam=20B")
    assert code == 0 and recorded(doc) == ["vision.tam=20B"]
    honest = doc["routes"][0]["honest"]
    assert honest["ungated_score"] == compiled["routes"][0]["score"]
    assert honest["ungated_score"] != base["routes"][0]["honest"]["ungated_score"]


def test_splice_writes_the_route_override_into_the_splice(run: Run, tmp_path: Any) -> None:
    out_file = tmp_path / "spliced.route"
    code, _, err = run("splice", str(SPEC_ROUTE), "--seam", "1", "--set", "vision.tam=20B", "-o", str(out_file))
    assert code == 0, err
    assert "20_000_000_000 usd" in out_file.read_text()
    code, doc = packet(run, "compile", str(out_file))
    assert doc["routes"][0]["value"] == pytest.approx(20e9 * 0.10 * 0.6)
    code, doc = packet(run, "splice", str(SPEC_ROUTE), "--seam", "1", "--set", "vision.tam=20B")
    assert recorded(doc) == ["vision.tam=20B"]


@pytest.mark.parametrize("command", [("seams",), ("gate",), ("explain",), ("redteam", "--max-edits", "2"),
                                     ("splice", "--seam", "1")])
def test_a_bad_override_is_a_diagnostic_not_a_traceback(run: Run, command: tuple[str, ...]) -> None:
    for bad in ("nokey", "fold.nope=1", "route.transitions.nope.cost.x=1"):
        code, out, err = run(command[0], str(SPEC_ROUTE), *command[1:], "--set", bad)
        assert code == 1, (bad, out, err)
        assert "PCSC-E901" in err and "Traceback" not in err


def test_overrides_hold_with_jobs(run: Run) -> None:
    """A worker rebuilds its session from the policy files, which hold no override: with
    `--set`, the work stays in this process and the result is that of one job."""
    argv = ("seams", str(ROOT / "examples" / "cohort"), "--set", "fold.abandonment=true")
    _, one = packet(run, *argv)
    _, two = packet(run, *argv, "--jobs", "2")
    assert two == one
    assert {s["fold"] for r in two["routes"] for s in r["seams"]} == {"abandonment"}


@pytest.mark.parametrize("command", [
    ("compile",), ("seams",), ("gate",), ("gate", "--suggest", "--apply", "1"), ("explain",),
    ("redteam", "--max-edits", "2"), ("splice", "--seam", "1"), ("policy", "diff", "venture@1.0.0", "venture@1.0.0"),
])
def test_the_what_if_line_is_said_once(run: Run, command: tuple[str, ...]) -> None:
    """Once, not on both standard output and standard error: at the head of the report,
    or on standard error where standard output is a route (splice, gate --apply)."""
    override = "floors.delta.arr.points=[[1, 1e9]]" if command[0] == "gate" else "vision.tam=20B"
    argv = [*command, str(SPEC_ROUTE), "--set", override]
    if "--apply" in command:
        argv = ["gate", str(SPEC_ROUTE), "--suggest", "--apply", "1", "--set", override]
    _, out, err = run(*argv)
    assert (out + err).count(override) == 1, (out, err)
    line = next(x for x in (out + err).splitlines() if override in x)
    assert line.startswith("what-if") and "(never written back)" in line
    if command[0] in ("splice",) or "--apply" in command:
        assert line in err.splitlines()
    else:
        assert out.startswith(line)
