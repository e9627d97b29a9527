"""examples/oss/: three open-source directions under oss-impact@1.0.0, a fold kept in
impact points (hours saved for users). The README's statements hold: each route is
covered and released, each score is the fold by hand of the policy's vision formula,
priors, reweighting and the usd rate, the ranking is decided by the score (not by the
name), every amount is in the fold's unit, each deletion is refused and its identity
holds, and the policy's own tests pass."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pcsc.cli import main
from tests.conftest import ROOT

FOLDER = ROOT / "examples" / "oss"
RATE = 0.01  # oss-impact's [units.rates] usd


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def sat(weights: list[float], decay: float = 0.5) -> float:
    s = sum(w * decay**i for i, w in enumerate(sorted(weights, reverse=True)))
    return s / (1 + s)


def p(prior: float, supports: list[float], contradicts: tuple[float, ...] = ()) -> float:
    w = min(1.5, max(0.3, 1 + 0.5 * sat(supports) - 0.5 * sat(list(contradicts))))
    return min(1.0, prior * w)


def fold(stages: list[tuple[float, float]], value: float) -> float:
    r = value
    for q, c in reversed(stages):
        r = -c + q * r
    return r


# each route by hand from its file: (p, c in points: max(usd × rate, the class floor)) per step, and V
BY_HAND = {
    "schema_linter": ([(p(0.30, [1.0]), max(30_000 * RATE, 200)), (p(0.60, [1.0]), max(120_000 * RATE, 500))],
                      10_000 * 20 * 3),
    "schema_registry": ([(p(0.30, [1.0]), max(40_000 * RATE, 200)), (p(0.30, [0.5]), max(60_000 * RATE, 200)),
                         (p(0.60, [0.5]), max(160_000 * RATE, 500))], 6_000 * 25 * 4),
    "config_formatter": ([(p(0.30, [1.0]), max(15_000 * RATE, 200)), (p(0.30, [1.0], (0.5,)), max(35_000 * RATE, 200)),
                          (p(0.60, [0.5]), max(90_000 * RATE, 500))], 8_000 * 6 * 3),
}


def test_each_direction_is_released_and_scored_in_hours_saved(capsys: pytest.CaptureFixture[str]) -> None:
    for name, (stages, value) in BY_HAND.items():
        code, doc = run(capsys, "compile", str(FOLDER / f"{name}.route"))
        assert code == 0, doc["diagnostics"]
        (route,) = doc["routes"]
        assert route["verdict"] == "released" and route["uncovered"] == []
        assert route["unit"] == "impact_points"
        assert route["value"] == value
        assert [t["p"] for t in route["transitions"]] == pytest.approx([q for q, _ in stages], rel=1e-12)
        assert [t["c"] for t in route["transitions"]] == pytest.approx([c for _, c in stages], rel=1e-12)
        assert route["score"] == pytest.approx(fold(stages, value), rel=1e-12), name


def test_the_ranking_is_decided_by_the_score_not_the_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run(capsys, "rank", str(FOLDER))
    assert code == 0
    ranking = doc["ranking"]
    names = [r["route"] for r in ranking]
    assert names == sorted(BY_HAND, key=lambda n: -fold(*BY_HAND[n]))
    assert names != sorted(names)
    assert [r["decided_by"] for r in ranking] == [None, "score", "score"]
    assert all(r["unit"] == "impact_points" and not r["tied"] for r in ranking)
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    for name, quoted in (("schema_linter", "168k"), ("schema_registry", "54k"), ("config_formatter", "12k")):
        assert round(fold(*BY_HAND[name]) / 1000) == int(quoted[:-1]) and f"about {quoted}" in readme


def test_deleting_a_step_is_refused_and_its_identity_holds(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run(capsys, "seams", str(FOLDER))
    assert code == 0
    seams = {r["route"]: r["seams"] for r in doc["routes"]}
    assert seams["schema_linter"] == []  # two steps: no interior transition
    for name in ("schema_registry", "config_formatter"):
        (s,) = seams[name]
        assert s["identity_holds"] and s["symbolically_verified"] and s["silence_rewarded"]
        assert s["pipeline"]["gate"] == "suspend-and-ask"  # the deletion would raise the score; GATE refuses it


def test_the_policys_tests_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run(capsys, "test", str(ROOT / "policies" / "oss-impact" / "tests"))
    assert code == 0 and doc["ok"] is True and doc["summary"]["cases"] == 4
