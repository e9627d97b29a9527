"""`require` lines are checked when a library is lowered: a typo is an error at
`pcsc check`, not a silent refusal of every route at gate time."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcsc.compiler.session import Session
from pcsc.diagnostics import Diagnostics
from pcsc.lang.ir.vocabulary import EVIDENCE_NAMES, REQUIRE_FUNCTIONS, REQUIRE_NAMES
from pcsc.lang.lower.library import lower_library
from pcsc.lang.syntax import parse_source
from pcsc.policy.load import PolicyStore
from tests.conftest import ROOT, SPEC_ROUTE, pin_libraries

HEADER = 'library probe version "1"\nfield users count material 10%\n'


def lower(body: str) -> Diagnostics:
    text = HEADER + "obligation o covers users {\n" + body + "\n}\n"
    diags = Diagnostics()
    tree = parse_source(text, "probe.obl", diags)
    assert tree is not None
    lower_library(tree, "probe.obl", text, diags)
    return diags


@pytest.mark.parametrize(
    ("line", "code", "col", "help_text"),
    [
        ("require mechansim", "PCSC-E217", 13, "did you mean `mechanism`?"),
        ("require evidence(teir >= 2) >= 1", "PCSC-E217", 22, "did you mean `tier`?"),
        ("require measure(delta)", "PCSC-E218", 13, "did you mean `measured`?"),
        ("require budget >= flor(delta)", "PCSC-E218", 23, "did you mean `floor`?"),
        ("require tier >= 2", "PCSC-E217", 13, None),  # evidence names only inside evidence(...)
    ],
)
def test_unknown_names_in_require_lines_are_errors(line: str, code: str, col: int, help_text: str | None) -> None:
    diags = lower(f"    {line}")
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [(code, 4, col)]
    if help_text:
        assert diags.items[0].help == help_text


def test_every_documented_name_and_function_is_accepted() -> None:
    lines = [f"    require {n} == {n}" for n in REQUIRE_NAMES]
    lines += [f"    require evidence({n} == {n}) >= 0" for n in EVIDENCE_NAMES]
    lines += ["    require measured(delta)", "    require budget >= floor(delta)", "    require grounded(asset)",
              "    require count(evidence()) >= min(1, 2) + max(0, 1)"]
    assert {f.split("(")[0] for f in REQUIRE_FUNCTIONS} <= {"count", "min", "max", "measured", "floor", "grounded",
                                                            "evidence"}
    assert not lower("\n".join(lines)).items


def test_shipped_libraries_pass_the_check() -> None:
    for path in sorted((ROOT / "obligations").glob("*.obl")):
        text = path.read_text(encoding="utf-8")
        diags = Diagnostics()
        tree = parse_source(text, str(path), diags)
        assert tree is not None and lower_library(tree, str(path), text, diags) is not None, diags.items


def test_a_typo_in_a_library_fails_check_of_a_route_that_uses_it(tmp_path: Path) -> None:
    # under a new name, which its policy pins: a changed copy named `venture` would replace the pinned library (E409)
    obl = (ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8").replace("library venture", "library mine")
    (tmp_path / "mine.obl").write_text(obl.replace("require asset\n", "require aset\n", 1), encoding="utf-8")
    route = tmp_path / "r.route"
    ref = pin_libraries(tmp_path / "policies", [tmp_path / "mine.obl"])  # a route uses only what its policy pins
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("uses    venture", "uses    mine")
    route.write_text(text.replace('"venture@1.0.0"', f'"{ref}"'), encoding="utf-8")
    session = Session(policies=PolicyStore([tmp_path / "policies"]))
    assert session.load_routes(route, str(route)) == []
    codes = [d.code for d in session.diags]
    assert "PCSC-E217" in codes and "PCSC-E404" in codes


def test_the_discharger_binds_exactly_the_vocabulary() -> None:
    session = Session()
    route = session.load_routes(SPEC_ROUTE, str(SPEC_ROUTE))[0]
    compiled = session.compile_route(route)  # the discharger asserts its names equal REQUIRE_NAMES
    assert compiled is not None and compiled.decision.verdict == "released"
