"""examples/oss/: three open-source directions under oss-impact@1.1.0, a fold kept in
impact points (hours saved for users). The README's statements hold: each route is
covered and released, each score is the fold by hand of the policy's vision formula,
priors, reweighting and the usd rate, the ranking is decided by the score (not by the
name), every amount is in the fold's unit, each deletion is refused and its identity
holds, and the policy's own tests pass."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
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


def fold(stages: Sequence[tuple[float, float, float]], value: float) -> float:
    """R_i = −c_i + p_i·(v_{i+1} + R_{i+1}), R_n = V: v the payoff of the state a step reaches."""
    r = value
    for q, c, v in reversed(stages):
        r = -c + q * (v + r)
    return r


# each route by hand from its file: (p, c in points: max(usd × rate, the class floor), the
# payoff in points of the state the step reaches, written without a unit) per step, and V
BY_HAND: dict[str, tuple[list[tuple[float, float, float]], float]] = {
    "schema_linter": ([(p(0.30, [1.0]), max(30_000 * RATE, 200), 4_000), (p(0.60, [1.0]), max(120_000 * RATE, 500), 0)],
                      10_000 * 20 * 3),
    "schema_registry": ([(p(0.30, [1.0]), max(40_000 * RATE, 200), 1_000),
                         (p(0.30, [0.5]), max(60_000 * RATE, 200), 8_000),
                         (p(0.60, [0.5]), max(160_000 * RATE, 500), 0)], 6_000 * 25 * 4),
    "config_formatter": ([(p(0.30, [1.0]), max(15_000 * RATE, 200), 800),
                          (p(0.30, [1.0], (0.5,)), max(35_000 * RATE, 200), 4_500),
                          (p(0.60, [0.5]), max(90_000 * RATE, 500), 0)], 8_000 * 6 * 3),
}
PAYOFF_CAP = 2_000_000 * RATE  # oss-impact's [payoffs] max_usd, in points


def test_each_direction_is_released_and_scored_in_hours_saved(capsys: pytest.CaptureFixture[str]) -> None:
    for name, (stages, value) in BY_HAND.items():
        code, doc = run(capsys, "compile", str(FOLDER / f"{name}.route"))
        assert code == 0, doc["diagnostics"]
        (route,) = doc["routes"]
        assert route["verdict"] == "released" and route["uncovered"] == []
        assert route["unit"] == "impact_points"
        assert route["value"] == value
        assert [t["p"] for t in route["transitions"]] == pytest.approx([q for q, _, _ in stages], rel=1e-12)
        assert [t["c"] for t in route["transitions"]] == pytest.approx([c for _, c, _ in stages], rel=1e-12)
        # the payoffs are written in points (no unit): credited at face value, under the cap
        paid = [(x["written"], x["credited"], x.get("unit"), x["covered"]) for x in route["payoffs"]]
        assert paid == [(v, v, "impact_points", True) for _, _, v in stages if v]
        assert all(v <= PAYOFF_CAP for _, _, v in stages)
        assert route["score"] == pytest.approx(fold(stages, value), rel=1e-12), name
        assert route["score"] > fold([(q, c, 0) for q, c, _ in stages], value)  # the value along the way counts


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
    for name, quoted in (("schema_linter", "170k"), ("schema_registry", "56k"), ("config_formatter", "13k")):
        assert round(fold(*BY_HAND[name]) / 1000) == int(quoted[:-1]) and f"about {quoted}" in readme


def test_deleting_a_step_is_refused_and_its_identity_holds(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run(capsys, "seams", str(FOLDER))
    assert code == 0
    seams = {r["route"]: r["seams"] for r in doc["routes"]}
    assert seams["schema_linter"] == []  # two steps: no interior transition
    for name in ("schema_registry", "config_formatter"):
        (s,) = seams[name]
        assert s["identity_holds"] and s["symbolically_verified"] and s["silence_rewarded"]
        # deleting the middle step deletes the payoff of the state it leaves, at its reach
        (q0, _, v0) = BY_HAND[name][0][0]
        assert s["removed_payoff"] == pytest.approx(q0 * v0, rel=1e-12) and v0 > 0
        assert s["pipeline"]["gate"] == "suspend-and-ask"  # the deletion would raise the score; GATE refuses it


def test_the_policys_tests_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run(capsys, "test", str(ROOT / "policies" / "oss-impact" / "tests"))
    assert code == 0 and doc["ok"] is True and doc["summary"]["cases"] == 4


def test_the_readmes_value_along_the_way_is_the_routes_payoffs(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's table names each payoff (state reached by which step, in points) and
    its sentence on the linter's launch is p × v from the compiled route."""
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `"): line.split("|")[3].strip() for line in readme.splitlines()
            if line.startswith("| `")}
    for name in BY_HAND:
        code, doc = run(capsys, "compile", str(FOLDER / f"{name}.route"))
        assert code == 0
        (route,) = doc["routes"]
        steps = {t["name"]: t for t in route["transitions"]}
        written = [(x["transition"], x["written"]) for x in route["payoffs"]]
        stated = [(cell.rsplit(" ", 1)[0], float(cell.rsplit(" ", 1)[1].replace(",", "")))
                  for cell in rows[name].split(", ")]
        # the README names the step by a word of its name (`launch`, `beta`, `integrations`, …)
        assert len(stated) == len(written)
        for (word, amount), (step, v) in zip(stated, written, strict=True):
            assert word in step and amount == v, (name, word, step)
        if name == "schema_linter":
            gain = steps["launch"]["p"] * written[0][1]
            assert f"{steps['launch']['p']} × {written[0][1]:,.0f} = {gain:,.0f} hours" in readme


def test_each_routes_certificate_with_its_points_payoffs_verifies(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    for name in BY_HAND:
        (tmp_path / f"{name}.route").write_text((FOLDER / f"{name}.route").read_text(encoding="utf-8"),
                                                encoding="utf-8")
        cert = tmp_path / f"{name}.cert.json"
        assert main(["compile", str(tmp_path / f"{name}.route"), "--cert", str(cert)]) == 0
        doc = json.loads(cert.read_text(encoding="utf-8"))
        rules = [s["rule"] for s in doc["routes"][0]["steps"] if s["symbol"].endswith(".v")]
        assert rules and all("written in the fold's unit" in r for r in rules)  # the points rule, not the usd one
        capsys.readouterr()
        assert main(["verify-cert", str(cert)]) == 0, capsys.readouterr()
