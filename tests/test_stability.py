"""`pcsc stability`: redrawn model-mediated inputs, recompiled; rank and score stability."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pcsc.analysis.stability import Bounds, kendall_tau_b, perturb, siblings
from pcsc.cli import main
from pcsc.compiler.session import Session
from tests.conftest import ROOT, SPEC_ROUTE

EXAMPLES = ROOT / "examples"
ROUTES = [str(SPEC_ROUTE), str(EXAMPLES / "ci_cache.route"), str(EXAMPLES / "log_search.route"),
          str(EXAMPLES / "feature_flags.route")]


def test_kendall_tau_b_by_hand() -> None:
    # pairs of (x, y) = (1,1) (2,3) (2,2) (3,2): concordant (0,1) (0,2) (0,3); discordant (1,3);
    # tied in x (1,2), tied in y (2,3): τ_b = (3 − 1) / √((6 − 1)(6 − 1)) = 0.4
    assert kendall_tau_b([1, 2, 2, 3], [1, 3, 2, 2]) == pytest.approx(0.4, abs=1e-15)
    assert kendall_tau_b([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # no ties: (n_c − n_d) / (n(n−1)/2); y = 3 1 2 has n_c = 1, n_d = 2 against 1 2 3
    assert kendall_tau_b([1, 2, 3], [3, 1, 2]) == pytest.approx(-1 / 3, abs=1e-15)
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None  # a constant side: undefined
    assert kendall_tau_b([(0, 1), (0, 2)], [(1, 0), (0, 5)]) == -1.0  # any comparable values
    with pytest.raises(ValueError):
        kendall_tau_b([1, 2], [1])


def test_siblings_share_the_category_prefix() -> None:
    classes = ["devtools/first-users", "devtools/scale", "saas/scale", "devtoolsx/a", "plain"]
    assert siblings("devtools/first-users", classes) == ["devtools/scale"]
    assert siblings("plain", classes) == []
    assert siblings("saas/scale", classes) == []


def honest_route() -> Any:
    session = Session()
    routes = session.load_paths([str(SPEC_ROUTE)])
    return session.compile_routes(routes)[0]


def test_a_draw_stays_within_its_bounds() -> None:
    c = honest_route()
    classes = sorted(c.policy.policy.priors)
    rng = random.Random(3)
    for _ in range(50):
        route, change = perturb(c.route, classes, rng, Bounds(weight_spread=0.2, class_swap=1.0))
        for old, new in zip(c.route.transitions, route.transitions, strict=True):
            assert len(new.estimates) == len(old.estimates)
            if len(old.estimates) >= 2:
                assert all(min(old.estimates) <= e <= max(old.estimates) for e in new.estimates)
            assert new.ref_class.split("/")[0] == old.ref_class.split("/")[0]
            if siblings(old.ref_class, classes):
                assert new.ref_class != old.ref_class  # class_swap = 1: always swapped
        for old_e, new_e in zip(c.route.evidence, route.evidence, strict=True):
            assert max(0.0, old_e.weight - 0.2) <= new_e.weight <= min(1.0, old_e.weight + 0.2)
        assert len(change.reclassed) == sum(1 for t in c.route.transitions if siblings(t.ref_class, classes))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["stability", *args])
    return code, capsys.readouterr().out


def test_the_same_seed_gives_the_same_bytes_and_another_seed_differs(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*ROUTES, "--draws", "6", "--format", "json"]
    code, first = run(capsys, *argv, "--seed", "11")
    assert code == 0
    _, again = run(capsys, *argv, "--seed", "11")
    _, other = run(capsys, *argv, "--seed", "12")
    assert first == again
    assert first != other
    doc = json.loads(first)
    assert doc["draws"] == doc["draws_used"] == 6 and doc["routes_ranked"] == 5
    tau = doc["kendall_tau_b"]
    assert -1.0 <= tau["min"] <= tau["mean"] <= tau["max"] <= 1.0
    assert doc["top_quartile"]["size"] == 1
    for r in doc["routes"]:
        s = r["score"]
        assert s["min"] <= s["median"] <= s["max"]
        assert 0.0 <= s["same_sign"] <= 1.0
        assert 1 <= r["rank"]["min"] <= r["rank"]["max"] <= 5


def test_estimates_alone_never_move_a_score(capsys: pytest.CaptureFixture[str]) -> None:
    """With weights and classes held, only the estimates are redrawn: they set U and the
    value-of-information spread, never p, so every score and the ranking stay put."""
    code, out = run(capsys, *ROUTES, "--draws", "5", "--weight-spread", "0", "--class-swap", "0", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["kendall_tau_b"] == {"n": 5, "mean": 1.0, "min": 1.0, "max": 1.0}
    for r in doc["routes"]:
        s = r["score"]
        assert s["min"] == s["median"] == s["max"] == s["honest"]
        assert s["same_sign"] == 1.0 and r["rank"]["min"] == r["rank"]["max"] == r["honest_rank"]
        assert r["reclassed_draws"] == 0
    assert any(r["binding_kept"] < 1.0 for r in doc["routes"])  # U moved, so binding can


def test_the_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, *ROUTES, "--draws", "4", "--seed", "2")
    assert code == 0
    assert "stability of 5 routes over 4 of 4 draws (seed 2; ranked by `score`)" in out
    assert "Kendall τ-b with the honest ranking: mean" in out
    assert "top quartile (1 route) kept: mean" in out
    assert "devtools_api" in out


@pytest.mark.parametrize("bad", [["--draws", "0"], ["--class-swap", "1.5"], ["--weight-spread", "-1"],
                                 ["--weight-spread", "nan"]])
def test_bad_options_are_usage_errors(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stability", str(SPEC_ROUTE), *bad]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_nothing_to_probe_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.route"
    broken.write_text("route broken {\n")
    assert main(["stability", str(broken), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["routes"] == [] and doc["routes_ranked"] == 0
