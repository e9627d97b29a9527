"""Inputs that ended in exit 70 (an internal error) and now end in a located
diagnostic or a clean result: huge numbers in the seams and stability arms, `--set`
with non-finite values, non-finite policy values, long names, invalid UTF-8, files
that are not regular files, and integer options in other scripts' digits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pcsc.cli import main
from tests.conftest import SPEC_ROUTE

SPEC = SPEC_ROUTE.read_text(encoding="utf-8")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err, err
    return code, out, err


def route(tmp_path: Path, old: str, new: str, name: str = "r.route") -> Path:
    assert old in SPEC
    path = tmp_path / name
    path.write_text(SPEC.replace(old, new, 1), encoding="utf-8")
    return path


def strict_json(out: str) -> object:
    """The document, parsed as strict JSON would be (no NaN, no Infinity)."""
    def refuse(word: str) -> object:
        raise AssertionError(f"{word} in the JSON output")

    return json.loads(out, parse_constant=refuse)


# ---------------------------------------------------------------------- the seams arm
def test_a_seam_threshold_beyond_the_floats_is_e311(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # −c/(1 − p) of `monetize` with c = 1.5e308 is beyond the largest float
    path = route(tmp_path, "engineers  4 * 150k usd", "engineers  1.5e308 usd")
    code, _, _ = run(capsys, "compile", str(path))
    assert code == 0  # every number of the score is finite: compile releases it
    for extra in ([], ["--format", "json"], ["--jobs", "2"]):
        code, out, err = run(capsys, "seams", str(path), *extra)
        assert code == 1, err
        assert "PCSC-E311" in out + err and "seam 1 (`monetize`): threshold overflows" in out + err
        assert re.search(r"r\.route:\d+:\d+: error", err) or '"line"' in out
        if extra[:1] == ["--format"]:
            strict_json(out)


@pytest.mark.parametrize("where", ["engineers  2 * 45k usd", "company  1 * 60M usd"])
def test_seams_with_a_cost_of_1_5e308_elsewhere_are_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    path = route(tmp_path, where, "engineers  1.5e308 usd")
    code, out, err = run(capsys, "seams", str(path), "--format", "json")
    assert code == 0, err
    seams = strict_json(out)["routes"][0]["seams"]  # type: ignore[index]
    assert seams and all(isinstance(s["threshold"], float) for s in seams)
    code, out, _ = run(capsys, "seams", str(path))
    assert code == 0 and "e+30" in out and len(max(out.splitlines(), key=len)) < 400  # no 309-digit numbers


def test_stability_median_of_two_huge_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = route(tmp_path, "engineers  2 * 45k usd", "engineers  1.5e308 usd")
    code, out, err = run(capsys, "stability", str(path), "--format", "json", "--draws", "4")
    assert code == 0, err
    score = strict_json(out)["routes"][0]["score"]  # type: ignore[index]
    assert score["median"] == pytest.approx(-1.5e308)
