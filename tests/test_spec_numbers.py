"""The spec route's numbers against docs/formulas.md, computed here by hand.

The hand computation below restates the formulas with the spec's inputs; nothing is
copied from the program's output.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, SPEC_ROUTE


def hand_computation() -> dict[str, object]:
    # evidence: effective weight = weight × tier_weight[tier]; tier 2 → 0.8, tier 3 → 1.0
    def sat(ws: list[float]) -> float:
        s = sum(w * 0.5**i for i, w in enumerate(sorted(ws, reverse=True)))
        return s / (1 + s)

    W_launch = 1 + 0.5 * sat([0.8 * 0.8])
    W_monetize = 1 + 0.5 * sat([0.7 * 0.8]) - 0.5 * sat([0.6 * 1.0])
    W_expand = 1 + 0.5 * sat([0.5 * 0.8])
    p = [0.45 * W_launch, 0.30 * W_monetize, 0.10 * W_expand]

    # cost: budgets beat both floors on every transition of the spec route
    budget = [2 * 45_000 + 6 * 1_500, 4 * 150_000 + 1 * 120_000, 60_000_000]
    floor_class = [50_000, 300_000, 20_000_000]
    # delta-indexed floors, piecewise-linear between breakpoints
    mon_fd = (1e5 + (200 - 100) / 900 * 5e5) + (4e5 + (1.2e6 - 1e6) / 9e6 * 2.6e6)
    exp_fd = (6e5 + (9_800 - 1_000) / 9_000 * 3.4e6) + (3e6 + (98.8e6 - 1e7) / 9e7 * 2.2e7)
    floor_delta = [0.0, mon_fd, exp_fd]
    c = [max(b, f, d) for b, f, d in zip(budget, floor_class, floor_delta, strict=True)]

    V = 10e9 * 0.10 * 0.6
    R3 = V
    R2 = -c[2] + p[2] * R3
    R1 = -c[1] + p[1] * R2
    R0 = -c[0] + p[0] * R1
    D = [max(R1, 0), p[0] * max(R2, 0), p[0] * p[1] * max(R3, 0)]
    T = (2 * 70 + 1 * 60 + 1 * 55) / (2 + 1 + 1)
    return {"p": p, "c": c, "floor_delta": floor_delta, "V": V, "R": [R0, R1, R2, R3], "D": D, "T": T}


@pytest.fixture(scope="module")
def packet() -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "pcsc", "compile", "--format", "json", str(SPEC_ROUTE)],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_score_matches_design(packet: dict) -> None:  # type: ignore[type-arg]
    route = packet["routes"][0]
    hand = hand_computation()
    assert route["score"] == pytest.approx(885_626.17, abs=0.01)
    assert route["score"] == pytest.approx(hand["R"][0], rel=1e-12)  # type: ignore[index]
    assert route["ungated_score"] == route["score"]
    assert route["value"] == pytest.approx(hand["V"])
    assert route["criteria_score"] == pytest.approx(63.75)
    assert route["bucket"] == "pos"
    assert route["binding"]["transition"] == "expand"
    assert route["verdict"] == "released"  # every material change is covered (docs/coverage.md)
    assert route["eligible"] is True


def test_transition_numbers_match_design(packet: dict) -> None:  # type: ignore[type-arg]
    hand = hand_computation()
    ts = packet["routes"][0]["transitions"]
    assert [t["name"] for t in ts] == ["launch", "monetize", "expand"]
    for i, t in enumerate(ts):
        assert t["p"] == pytest.approx(hand["p"][i], rel=1e-12)  # type: ignore[index]
        assert t["c"] == pytest.approx(hand["c"][i], rel=1e-12)  # type: ignore[index]
        assert t["floor_delta"] == pytest.approx(hand["floor_delta"][i], rel=1e-12)  # type: ignore[index]
        assert t["R_next"] == pytest.approx(hand["R"][i + 1], rel=1e-12)  # type: ignore[index]
        assert t["D"] == pytest.approx(hand["D"][i], rel=1e-12)  # type: ignore[index]
        assert t["cost_bound_by"] == "budget"
    assert ts[0]["U"] == pytest.approx(0.15)
    assert ts[1]["floor_delta"] == pytest.approx(613_333.33, abs=0.01)
