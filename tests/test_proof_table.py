"""The shipped table of proven identities (pcsc/analysis/seams/proven.json): every
entry proved again with sympy, the table current, and read without sympy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pcsc.analysis.seams import proven
from pcsc.cli.main import main
from pcsc.tools.proofs import BENCH_CHAIN, entry, example_shapes

ROOT = Path(__file__).resolve().parents[1]
ENTRIES: list[dict[str, Any]] = json.loads(proven.TABLE.read_text(encoding="utf-8"))["entries"]
SMALL = [e for e in ENTRIES if e["n"] < BENCH_CHAIN]
LONG = [e for e in ENTRIES if e["n"] == BENCH_CHAIN]
SAMPLE = [e for e in LONG if e["k"] in (1, BENCH_CHAIN // 2, BENCH_CHAIN - 2)]
# the policy folds, and payoffs with the option to stop, occur among these examples' shapes
DISCOUNTED = "examples/domains/solid_electrolyte.route"
PAYOFFS = "examples/payoffs/school_pilots.route"


def _key(e: dict[str, Any]) -> str:
    return f"{e['fold']}-{e['n']}-{e['k']}"


@pytest.fixture
def no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proven, "_DISABLED", [True])


def test_the_table_names_the_current_sources() -> None:
    # otherwise it is silently unused: run `python -m pcsc.tools.proofs`
    assert json.loads(proven.TABLE.read_text(encoding="utf-8"))["sources"] == proven.sources_digest()
    assert proven.holds("chain", BENCH_CHAIN, 1)


def test_the_table_has_every_fold_and_the_benchmark_chain() -> None:
    # examples/oss/ has payoffs without the option to stop, examples/payoffs/ with it
    assert set(proven.FOLDS) == {e["fold"] for e in ENTRIES}
    assert sorted(e["k"] for e in LONG) == list(range(1, BENCH_CHAIN - 1))
    assert all(e["verified"] is True and e["derivation"]["verified"] == "True" for e in ENTRIES)


@pytest.mark.parametrize("stored", SMALL + SAMPLE, ids=_key)
def test_a_shipped_entry_is_what_sympy_proves_and_prints(stored: dict[str, Any]) -> None:
    assert entry(stored["fold"], stored["n"], stored["k"]) == stored


@pytest.mark.slow
@pytest.mark.parametrize("stored", [e for e in LONG if e not in SAMPLE], ids=_key)
def test_every_long_entry_is_what_sympy_proves_and_prints(stored: dict[str, Any]) -> None:
    assert entry(stored["fold"], stored["n"], stored["k"]) == stored


@pytest.mark.slow
def test_the_table_has_the_shape_of_every_example() -> None:
    assert example_shapes() <= {(e["fold"], e["n"], e["k"]) for e in ENTRIES}


def test_a_stale_table_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proven, "sources_digest", lambda: "edited")
    proven._table.cache_clear()
    try:
        assert not proven.holds("chain", 3, 1) and proven.stored_derivation("chain", 3, 1) is None
    finally:
        proven._table.cache_clear()


def test_a_shape_the_table_lacks_is_proved_with_sympy() -> None:
    from pcsc.analysis.seams.folds import verify_fold_shape
    from pcsc.analysis.seams.payoffs import verify_payoff_shape
    from pcsc.analysis.seams.symbolic import verify_shape

    assert not any(proven.holds(fold, 9, 4) for fold in proven.FOLDS)
    assert verify_shape(9, 4) and verify_fold_shape(9, 4, True) and verify_payoff_shape(9, 4, False)


def _symbolic(capsys: pytest.CaptureFixture[str], fmt: str) -> str:
    capsys.readouterr()
    assert main(["seams", "--symbolic", "--format", fmt, "examples/devtools_api.route", DISCOUNTED, PAYOFFS]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_symbolic_prints_the_same_bytes_from_the_table_as_from_sympy(
    fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PCSC_NO_CACHE", "1")
    from_table = _symbolic(capsys, fmt)
    monkeypatch.setattr(proven, "_DISABLED", [True])
    assert "discounted" in from_table and "payoffs" in from_table and from_table == _symbolic(capsys, fmt)


@pytest.mark.parametrize("flags", [[], ["--symbolic"]])
def test_seams_of_shipped_shapes_imports_no_sympy(flags: list[str]) -> None:
    script = (
        "import sys; from pcsc.cli.main import main; "
        f"code = main(['seams', *{flags!r}, 'examples/devtools_api.route', {DISCOUNTED!r}, {PAYOFFS!r}]); "
        "assert code == 0, code; assert 'sympy' not in sys.modules, 'sympy imported'"
    )
    env = {**os.environ, "PCSC_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
