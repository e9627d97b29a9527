"""`pcsc explain`: every number with its rule, and the coverage decision behind the verdict."""

from __future__ import annotations

import json
from pathlib import Path

from pcsc.cli import main
from tests.conftest import SPEC_ROUTE


def explain(capsys, path: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    assert main(["explain", str(path), "--format", "json"]) == 0
    return {s["symbol"]: s for s in json.loads(capsys.readouterr().out)["explain"]["steps"]}


def test_every_number_of_the_spec_route_is_explained(capsys) -> None:  # type: ignore[no-untyped-def]
    steps = explain(capsys, SPEC_ROUTE)
    for t in ("launch", "monetize", "expand"):
        for quantity in ("p_prior", "W", "p", "budget", "floor_class", "floor_delta", "c", "U", "D"):
            assert f"{t}.{quantity}" in steps
    assert steps["score"]["value"] == steps["R_0"]["value"]
    assert steps["binding"]["value"] == "expand"
    assert steps["launch.developers covered"]["value"] == "adoption"
    assert steps["monetize.arr covered"]["value"] == "monetization"
    assert "launch.arr covered" not in steps  # no change, so nothing to cover
    assert steps["verdict"]["value"] == "released"


def test_an_uncovered_change_names_the_failing_require_lines(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    spliced = tmp_path / "spliced.route"
    assert main(["splice", str(SPEC_ROUTE), "--seam", "1", "-o", str(spliced)]) == 0
    steps = explain(capsys, spliced)
    step = steps["launch.developers covered"]
    assert step["value"] == "no"
    assert any("require measured(delta)" in line for line in step["inputs"]["adoption"])
    assert steps["verdict"]["value"] == "suspend-and-ask"
    assert steps["verdict"]["inputs"]["score"] is None
