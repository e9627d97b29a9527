"""examples/research/: three research directions under their own policy and library.
The README's statements hold: each route is covered and released, each scores 0 under
the option to stop, the ranking is decided by the score without the option to stop
(not by name), the numbers it quotes match a fold computed here from the packet's p, c
and d, the class floor prices curated items, and the policy's own tests pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcsc.cli import main
from tests.conftest import ROOT

FOLDER = ROOT / "examples" / "research"
TESTS = ROOT / "policies" / "research-lab" / "tests"
ROUTES = ("curated_benchmark", "lab_automation", "theory_program")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def packet(capsys: pytest.CaptureFixture[str], name: str, *extra: str) -> dict[str, Any]:
    code, doc = run(capsys, "compile", str(FOLDER / f"{name}.route"), *extra)
    assert code == 0, doc["diagnostics"]
    (route,) = doc["routes"]
    return dict(route)


def played_through(route: dict[str, Any]) -> float:
    """R_0 without the option to stop, folded here: R_n = V, R_i = −c_i + p_i·d_i·R_{i+1}."""
    r = route["value"]
    for t, d in zip(reversed(route["transitions"]), reversed(route["fold"]["d"]), strict=True):
        r = -t["c"] + t["p"] * d * r
    return float(r)


def test_each_direction_is_released_and_not_worth_starting(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ROUTES:
        route = packet(capsys, name)
        assert route["verdict"] == "released" and route["uncovered"] == []
        assert route["score"] == 0 and route["value"] == 1_500_000  # 2.5M × 60% × 1
        assert route["fold"]["abandonment"] is True


def test_the_ranking_is_decided_by_the_score_without_the_option_to_stop(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run(capsys, "rank", str(FOLDER))
    assert code == 0
    ranking = doc["ranking"]
    assert [r["route"] for r in ranking] == ["lab_automation", "theory_program", "curated_benchmark"]
    assert [r["route"] for r in ranking] != sorted(r["route"] for r in ranking)  # not the name order
    assert [r["decided_by"] for r in ranking] == [None, "score_without_stop", "score_without_stop"]
    quoted = {"lab_automation": 65_000, "theory_program": 234_000, "curated_benchmark": 342_000}  # the README's
    for r in ranking:
        unstopped = dict((k["key"], k["value"]) for k in r["sequence"])["score_without_stop"]
        assert unstopped == pytest.approx(played_through(packet(capsys, r["route"])), rel=1e-12)
        assert abs(-unstopped - quoted[r["route"]]) < 1_000
    voi = {r["route"]: dict((k["key"], k["value"]) for k in r["sequence"])["first_test_voi"] for r in ranking}
    assert voi["lab_automation"] == -10_000  # EVI 0, less the pilot's learning cost


def test_lab_automation_s_replication_has_a_positive_continuation(capsys: pytest.CaptureFixture[str]) -> None:
    route = packet(capsys, "lab_automation", "--set", "fold.abandonment=false")
    pilot, replication, grant = route["transitions"]
    assert replication["R_next"] > 0 and -replication["c"] + replication["p"] * route["fold"]["d"][1] * \
        replication["R_next"] > 0
    assert played_through(route) < 0


def test_curated_items_are_priced_by_their_class(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    curate = packet(capsys, "curated_benchmark")["transitions"][0]
    assert curate["floor_delta"] == 300_000  # 20k items × 15 usd, the class's table; the field's says 40,000
    text = (FOLDER / "curated_benchmark.route").read_text(encoding="utf-8")
    assert "curation  1 * 300k usd" in text
    cheap = tmp_path / "curated_benchmark.route"
    cheap.write_text(text.replace("curation  1 * 300k usd", "curation  1 * 100k usd"), encoding="utf-8")
    code, doc = run(capsys, "compile", str(cheap))
    # GATE refuses: floor(delta) reads the class's table, 300,000 > 100,000; the field's
    # table alone (20k × 2 usd = 40,000) would have let the 100k budget cover the change
    assert code == 3
    (uncovered,) = doc["routes"][0]["uncovered"]
    assert (uncovered["transition"], uncovered["field"]) == ("curate", "dataset_items")


def test_the_policy_s_own_tests_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["test", str(TESTS)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 cases in 1 file: 4 passed, 0 failed" in out
