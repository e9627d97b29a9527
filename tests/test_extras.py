"""A missing optional extra: every command that needs one says the same thing the same
way (PCSC-E115 naming the extra and its requirement, exit 1), before it does any work.
The package is made unimportable here by putting None in `sys.modules`."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import pytest

from pcsc.base.extras import EXTRAS
from pcsc.cli import main
from tests.conftest import EXAMPLES, ROOT

A1 = ["--scores", str(EXAMPLES / "routecast_table_a1.csv"), "--id", "blind_id", "--outcome", "outcome_bucket",
      "--positive", "S+,+", "--negative", "-"]


def commands(tmp: Path) -> dict[str, list[list[str]]]:
    """For each extra, the commands that need it."""
    return {
        "report": [["report", "examples/devtools_api.route", "-o", str(tmp / "r.html")]],
        "plots": [["evaluate", *A1, "--plot", str(tmp / "s.png")],
                  ["evaluate", "--ledger", str(tmp / "none.sqlite"), "--plot-dir", str(tmp / "plots")]],
        "lsp": [["lsp"]],
        "sign": [["ledger", "keygen", "-o", str(tmp / "k")]],
        "dask": [["check", "examples/", "--scheduler", "tcp://127.0.0.1:1"]],
        "postgres": [["ledger", "verify", "--ledger", "postgresql://nobody@127.0.0.1:1/none"]],
    }


def test_every_extra_of_the_package_is_known() -> None:
    """The extras pyproject.toml declares (but `test` and `docs`) are the ones `pcsc.base.extras`
    checks, each by a package the extra installs."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    features = {k: v for k, v in declared.items() if k not in ("test", "docs")}
    assert set(EXTRAS) == set(features)
    for extra, (module, _, requirement) in EXTRAS.items():
        assert features[extra] == [requirement], extra  # what the message says to install
        installs = {re.split(r"[\[<>=]", req)[0].lower() for req in features[extra]}
        assert module in installs or {"dask": "dask", "postgres": "psycopg"}.get(extra) in installs, extra


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_a_missing_extra_is_one_diagnostic_naming_it(
    extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(sys.modules, EXTRAS[extra][0], None)  # `import …` now raises ImportError
    for argv in commands(tmp_path)[extra]:
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 1, (argv, err)
        assert out == ""
        [line] = err.splitlines()  # one message, nothing else
        assert line.startswith(f"pcsc[{extra}]: error: ") and line.endswith(
            f"needs {EXTRAS[extra][1]}, which is not installed: python3 -m pip install '{EXTRAS[extra][2]}' "
            f"(the extra pcsc[{extra}]) [PCSC-E115]")
        assert list(tmp_path.iterdir()) == []  # nothing was written: the check comes first
        if extra == "report":  # the example docs/cli.md shows
            assert line in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines()


def test_a_missing_extra_in_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = main(["evaluate", *A1, "--plot", str(tmp_path / "s.png"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and [d["code"] for d in doc["diagnostics"]] == ["PCSC-E115"]
    assert "python3 -m pip install 'matplotlib>=3.7' (the extra pcsc[plots])" in doc["diagnostics"][0]["message"]
