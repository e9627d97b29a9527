"""The public Python API (`import pcsc`, docs/api.md): its examples run, its results
match the command line's JSON, it is typed for users, and `import pcsc` stays cheap."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pcsc
from pcsc.analysis.seams.splice import splice_text
from pcsc.compiler.session import Session
from tests.conftest import ROOT, SPEC_ROUTE

DOC = ROOT / "docs" / "api.md"
SPLICED = ROOT / "tests" / "data" / "api" / "devtools_api_seam1.route"
SPEC_SCORE = 885626.1726


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def _python(code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=_env(),
                          timeout=300)


def _doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _spliced_text() -> str:
    session = Session()
    (route,) = session.load_routes(SPEC_ROUTE, "examples/devtools_api.route")
    return splice_text(route, 1)


# ---------------------------------------------------------------------- the documentation
def test_the_doc_opens_with_the_three_line_script() -> None:
    first = _doc_blocks()[0].strip().splitlines()
    assert first[:2] == ["import pcsc", 'r = pcsc.compile("examples/")'] and len(first) == 3


@pytest.mark.parametrize("index", range(len(_doc_blocks())))
def test_doc_example_runs(index: int) -> None:
    block = _doc_blocks()[index]
    proc = _python(block)
    assert proc.returncode == 0, f"docs/api.md example {index + 1} failed:\n{block}\n{proc.stderr}"


def test_every_public_name_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in pcsc.__all__ if name != "__version__" and f"`{name}" not in text
               and f"pcsc.{name}" not in text]
    assert missing == []


def test_mypy_strict_on_a_user_script(tmp_path: Path) -> None:
    """A script outside the package, type-checked strictly against the package found
    through PYTHONPATH and its py.typed marker; a wrong use is caught."""
    good = tmp_path / "script.py"
    good.write_text(
        "import pathlib\n\nimport pcsc\n\n"
        'r = pcsc.compile("examples/")\n'
        'route: pcsc.RouteResult = r.route("devtools_api")\n'
        "score: float | None = route.score\n"
        "codes: list[str] = [d.code for d in r.diagnostics]\n"
        "doc: dict[str, object] = r.to_json()\n"
        'c: pcsc.CheckResult = pcsc.check(pathlib.Path("examples"), lib_path=["obligations"])\n'
        'p: pcsc.Policy = pcsc.load_policy("venture@1.0.0")\n'
        's: pcsc.SeamsResult = pcsc.analyse_seams("examples/devtools_api.route", coverage="dock")\n'
        'with pcsc.open_ledger(pathlib.Path("x.sqlite")) as ledger:\n'
        "    entries: tuple[pcsc.LedgerEntry, ...] = ledger.entries()\n"
        "    ok: bool = ledger.verify().ok\n"
        "print(score, codes, c.ok, p.sha256, s.summary.deletions, entries, ok)\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.py"
    bad.write_text('import pcsc\n\nscore: str = pcsc.compile("x").routes[0].score\npcsc.compile("x", coverage="no")\n',
                   encoding="utf-8")

    def mypy(script: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
             script.name],
            capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=600,
        )

    proc = mypy(good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = mypy(bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bad.py:3: error" in proc.stdout and "bad.py:4: error" in proc.stdout


def test_py_typed_is_shipped() -> None:
    assert (ROOT / "pcsc" / "py.typed").is_file()


# ---------------------------------------------------------------------- the package surface
def test_import_pcsc_is_cheap() -> None:
    proc = _python(
        "import json, sys, pcsc; "
        "print(json.dumps([m for m in ('lark', 'sympy', 'numpy', 'rich', 'pcsc.compiler.session', 'pcsc.api.core', "
        "'pcsc.cli') "
        "if m in sys.modules]))"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_sympy_waits_for_a_shape_the_proof_table_lacks() -> None:
    # an example's seams are in the shipped table of proven identities (docs/architecture.md)
    proc = _python(
        "import sys, pcsc; pcsc.compile('examples/devtools_api.route').to_json(); "
        "assert 'sympy' not in sys.modules; pcsc.analyse_seams('examples/devtools_api.route'); "
        "assert 'sympy' not in sys.modules; assert 'pcsc.cli' not in sys.modules; "
        "from pcsc.analysis.seams.symbolic import verify_shape; assert verify_shape(9, 4); "
        "assert 'sympy' in sys.modules"
    )
    assert proc.returncode == 0, proc.stderr


def test_dir_lists_the_public_names() -> None:
    proc = _python("import json, pcsc; print(json.dumps(dir(pcsc)))")
    listed = set(json.loads(proc.stdout))
    assert set(pcsc.__all__) <= listed
    assert {"compile", "check", "analyse_seams", "load_policy", "open_ledger", "Result", "Diagnostic"} <= listed


def test_all_names_resolve_and_others_do_not() -> None:
    for name in pcsc.__all__:
        assert getattr(pcsc, name) is not None
    with pytest.raises(AttributeError):
        pcsc.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    assert isinstance(pcsc.__version__, str)


def test_no_public_name_is_a_submodule() -> None:
    """`import pcsc.x` sets the attribute `pcsc.x` to the module, hiding a function so named
    (so no public name is the name of a package of pcsc: `base`, `lang`, `render`, ...)."""
    submodules = {p.stem for p in (ROOT / "pcsc").iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    assert submodules & set(pcsc.__all__) == set()


def test_the_library_never_imports_the_cli() -> None:
    source = (ROOT / "pcsc" / "api" / "core.py").read_text(encoding="utf-8") + (
        ROOT / "pcsc" / "forecast" / "freeze.py").read_text(encoding="utf-8")
    assert "pcsc.cli" not in source


# ---------------------------------------------------------------------- sources
def test_a_file_a_folder_and_a_pathlike() -> None:
    by_file = pcsc.compile("examples/devtools_api.route")
    by_path = pcsc.compile(SPEC_ROUTE)
    by_folder = pcsc.compile("examples/")
    assert by_file.routes[0].score == by_path.routes[0].score == by_folder.route("devtools_api").score
    assert round(by_file.routes[0].score or 0.0, 4) == SPEC_SCORE
    assert by_file.inputs == (pcsc.Input("examples/devtools_api.route", by_file.inputs[0].sha256),)
    assert by_path.inputs[0].path == str(SPEC_ROUTE)
    assert len(by_folder.routes) > 30 and by_folder.ok
    assert by_folder.inputs == tuple(sorted(by_folder.inputs, key=lambda i: i.path))


def test_route_text() -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    r = pcsc.compile(text)
    assert r.ok and r.routes[0].file == "<string>" and r.inputs[0].path == "<string>"
    assert r.routes[0].score == pcsc.compile(SPEC_ROUTE).routes[0].score
    assert r.to_json()["inputs"][0]["path"] == "<string>"


def test_route_text_with_an_error_points_into_the_string() -> None:
    r = pcsc.compile('route x "t" {\n  as_of 2012-01-01\n  nonsense here\n}\n')
    assert not r.ok and r.exit_code == 1 and r.routes == ()
    assert all(d.file == "<string>" for d in r.diagnostics)


def test_a_missing_path_is_a_diagnostic_not_an_exception() -> None:
    r = pcsc.compile("examples/nope.route")
    (d,) = r.diagnostics
    assert (d.code, d.severity, d.file, d.line) == ("PCSC-E105", "error", "examples/nope.route", 0)
    assert str(d).startswith("examples/nope.route: error: cannot read examples/nope.route")  # no line to point at
    assert "cannot read examples/nope.route" in d.message
    assert r.exit_code == 1 and not r.ok and r.to_json()["routes"] == []
    assert pcsc.compile(Path("examples/nope.route")).diagnostics == r.diagnostics
    # an existing path wins over the text rule; a missing one with `{` is text
    assert pcsc.compile("no{such").diagnostics[0].file == "<string>"


def test_a_folder_without_routes(tmp_path: Path) -> None:
    r = pcsc.compile(tmp_path)
    assert [d.code for d in r.diagnostics] == ["PCSC-E106"] and r.exit_code == 1


def test_several_paths_and_the_search_paths(tmp_path: Path) -> None:
    paths: list[str | os.PathLike[str]] = [SPEC_ROUTE, "examples/log_search.route"]
    r = pcsc.compile(iter(paths), lib_path=ROOT / "obligations",
                     policy_path=[tmp_path])
    assert [x.name for x in r.routes] == ["devtools_api", "log_search"]


def test_programming_errors_raise() -> None:
    with pytest.raises(ValueError, match="coverage"):
        pcsc.compile("examples/", coverage="GATE")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pcsc.compile(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pcsc.compile(b"examples/")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pcsc.compile(["examples/", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        pcsc.check("examples/", lib_path=[1])  # type: ignore[list-item]


# ---------------------------------------------------------------------- results and the JSON contract
def _cli_json(*argv: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-m", "pcsc", *argv], capture_output=True, text=True, cwd=ROOT,
                          env=_env(), timeout=300)
    out: dict[str, object] = json.loads(proc.stdout)
    return out


def test_to_json_is_the_compile_packet_in_the_envelope() -> None:
    r = pcsc.compile("examples/")
    doc = r.to_json()
    assert list(doc)[:3] == ["pcsc", "schema", "inputs"]
    assert doc["pcsc"] == pcsc.__version__ and doc["schema"] == {"kind": "compile", "version": 1}
    cli = _cli_json("compile", "--format", "json", "examples/")
    assert doc == cli
    json.dumps(doc, allow_nan=False)


def test_route_results_read_as_the_packet() -> None:
    r = pcsc.compile("examples/")
    for route, packet in zip(r.routes, r.to_json()["routes"], strict=True):
        assert route.name == packet["route"] and route.file == packet["file"]
        assert route.verdict == packet["verdict"] and route.score == packet["score"]
        assert route.ungated_score == packet["ungated_score"] and route.value == packet["value"]
        assert route.policy.sha256 == packet["policy"]["sha256"]
        assert route.binding.transition == packet["binding"]["transition"]
        assert route.binding.D == packet["binding"]["D"]
        assert route.coverage_mode == packet["coverage"]["mode"]
        assert [g.passed for g in route.gates] == [g["passed"] for g in packet["gates"]]
        for t, pt in zip(route.transitions, packet["transitions"], strict=True):
            assert (t.name, t.source, t.target, t.ref_class) == (pt["name"], pt["from"], pt["to"], pt["class"])
            assert (t.p, t.W, t.c, t.U, t.D, t.R_next, t.cost_bound_by) == (
                pt["p"], pt["W"], pt["c"], pt["U"], pt["D"], pt["R_next"], pt["cost_bound_by"])
            assert [(d.field, d.covered, d.by) for d in t.deltas] == [
                (d["field"], d["covered"], d["by"]) for d in pt["deltas"]]


def test_result_is_frozen_and_comparable() -> None:
    a, b = pcsc.compile(SPEC_ROUTE), pcsc.compile(SPEC_ROUTE)
    assert a == b and hash(a.routes[0]) == hash(b.routes[0])
    with pytest.raises(AttributeError):
        a.routes = ()  # type: ignore[misc]
    with pytest.raises(KeyError):
        a.route("nope")
    assert a.route("devtools_api").transition("expand").cost_bound_by == "budget"


# ---------------------------------------------------------------------- GATE
def test_the_spliced_data_file_is_current() -> None:
    assert SPLICED.read_text(encoding="utf-8") == _spliced_text(), "regenerate with `pcsc splice --seam 1`"


def test_a_gate_refusal() -> None:
    r = pcsc.compile(_spliced_text())
    assert r.ok and r.refused and r.exit_code == 3
    route = r.route("devtools_api")
    assert route.verdict == "suspend-and-ask" and route.refused and route.score is None
    assert route.ungated_score > 0
    assert {(u.transition, u.field) for u in route.uncovered} == {
        ("launch", "developers"), ("launch", "paying_teams"), ("launch", "arr")}
    tried = {a.obligation for u in route.uncovered for a in u.tried}
    assert tried == {"adoption", "monetization"}
    failed = route.uncovered[0].tried[0].failed[0]
    assert failed.require == "require measured(delta)" and failed.line > 0 and failed.file.endswith("venture.obl")
    packet = r.to_json()["routes"][0]
    assert packet["verdict"] == "suspend-and-ask" and len(packet["uncovered"]) == 3
    assert packet["uncovered"][0]["tried"][0]["failed"][0]["line"] == failed.line
    off = pcsc.compile(_spliced_text(), coverage="off")
    assert off.route("devtools_api").verdict == "ungated" and off.exit_code == 0


# ---------------------------------------------------------------------- check and seams
def test_check_matches_the_command() -> None:
    c = pcsc.check("examples/")
    assert c.ok and c.exit_code == 0 and len(c.routes) == len(pcsc.compile("examples/").routes)
    doc = c.to_json()
    assert doc["schema"] == {"kind": "check", "version": 1}
    cli = _cli_json("check", "--format", "json", "examples/")
    assert doc["diagnostics"] == cli["diagnostics"] and doc["inputs"] == cli["inputs"]
    assert not pcsc.check("missing.route").ok


@pytest.mark.parametrize("mode", [None, "gate", "dock", "off"])
def test_check_takes_the_coverage_mode_as_compile_and_the_command_do(mode: pcsc.CoverageSetting) -> None:
    spliced = _spliced_text()
    c = pcsc.check(spliced, coverage=mode)
    r = pcsc.compile(spliced, coverage=mode)
    codes = sorted(d.code for d in c.diagnostics if d.code.endswith("501"))
    expected = {None: "PCSC-E501", "gate": "PCSC-E501", "dock": "PCSC-W501", "off": None}[mode]
    assert codes == ([expected] * 3 if expected else [])
    assert c.ok == (expected != "PCSC-E501")
    assert r.route("devtools_api").verdict == {None: "suspend-and-ask", "gate": "suspend-and-ask",
                                               "dock": "docked", "off": "ungated"}[mode]
    with pytest.raises(ValueError, match="coverage must be"):
        pcsc.check(spliced, coverage="strict")  # type: ignore[arg-type]


def test_seams_match_the_command() -> None:
    s = pcsc.analyse_seams("examples/devtools_api.route", experiment=True)
    doc = s.to_json()
    assert doc["schema"] == {"kind": "seams", "version": 1}
    cli = _cli_json("seams", "--format", "json", "--experiment", "examples/devtools_api.route")
    assert doc == cli
    seam = s.route("devtools_api").seams[0]
    row = doc["routes"][0]["seams"][0]
    assert f"{seam.delta_exact.numerator}/{seam.delta_exact.denominator}" == row["delta_exact"]
    assert seam.pipeline is not None and row["pipeline"] is not None
    assert seam.pipeline.uncovered == tuple(tuple(u.values()) for u in row["pipeline"]["uncovered"])
    assert s.experiment is not None and s.experiment.splices == 1
    assert s.summary.identity_holds == 1 and s.ok and s.exit_code == 0
    doc["routes"].clear()
    assert s.to_json()["routes"], "to_json returns a copy"


# ---------------------------------------------------------------------- policies
def test_load_policy_by_ref_and_by_path() -> None:
    by_ref = pcsc.load_policy("venture@1.0.0")
    by_path = pcsc.load_policy(ROOT / "policies" / "venture" / "1.0.0.toml")
    assert by_ref == by_path and by_ref.ref == "venture@1.0.0"
    cli = _cli_json("policy", "show", "--format", "json", "venture@1.0.0")
    assert by_ref.sha256 == cli["sha256"] and by_ref.document == cli["policy"]


def test_load_policy_errors(tmp_path: Path) -> None:
    broken = tmp_path / "venture" / "9.0.0.toml"
    broken.parent.mkdir()
    broken.write_text('[policy]\nid = "venture"\nversion = "9.0.0"\n[reweighting]\ndecay = "fast"\n', encoding="utf-8")
    with pytest.raises(pcsc.PolicyError) as info:
        pcsc.load_policy("venture@9.0.0", policy_path=tmp_path)
    assert info.value.messages and all(isinstance(m, str) for m in info.value.messages)
    with pytest.raises(pcsc.PolicyError):
        pcsc.load_policy("not a ref")


# ---------------------------------------------------------------------- the ledger
def test_freeze_stores_what_the_command_stores(tmp_path: Path) -> None:
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    with pcsc.open_ledger(tmp_path / "api.sqlite") as ledger:
        frozen = ledger.freeze(pcsc.compile("examples/"), frozen_at=when)
    cli_ledger = tmp_path / "cli.sqlite"
    proc = subprocess.run([sys.executable, "-m", "pcsc", "freeze", "--ledger", str(cli_ledger), "examples/"],
                          capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    with pcsc.open_ledger(cli_ledger, create=False) as ledger:
        by_cli = ledger.entries()
    assert len(frozen) == len(by_cli) > 30
    for a, b in zip(frozen, by_cli, strict=True):
        assert (a.seq, a.route, a.file, a.policy, a.inputs) == (b.seq, b.route, b.file, b.policy, b.inputs)
        assert a.payload == b.payload and a.payload_sha256 == b.payload_sha256
    assert frozen[0].frozen_at == "2026-01-02T03:04:05Z"
    assert frozen[0].prev_sha256 == "0" * 64 and frozen[1].prev_sha256 == frozen[0].entry_sha256


def test_freeze_modes_match_the_command(tmp_path: Path) -> None:
    """`mode="retrospective"` stores what `pcsc freeze --retrospective` stores, and refuses,
    storing nothing, a route whose as_of is not before the freeze date."""
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    with pcsc.open_ledger(tmp_path / "api.sqlite") as ledger:
        frozen = ledger.freeze(pcsc.compile(SPEC_ROUTE), frozen_at=when, mode="retrospective")
        assert [e.mode for e in frozen] == ["retrospective"] and frozen[0].payload["mode"] == "retrospective"
        with pytest.raises(pcsc.LedgerError, match=r"as_of is in the past \(before 2012-06-01\).*devtools_api"):
            ledger.freeze(pcsc.compile(SPEC_ROUTE), frozen_at=dt.datetime(2012, 6, 1, tzinfo=dt.UTC),
                          mode="retrospective")
        with pytest.raises(ValueError, match="mode"):
            ledger.freeze(pcsc.compile(SPEC_ROUTE), mode="backdated")
        # a route of the future is frozen prospectively only (the default mode)
        assert ledger.freeze(pcsc.compile(SPEC_ROUTE), frozen_at=dt.datetime(2012, 6, 1, tzinfo=dt.UTC))[0].mode \
            == "prospective"
        assert len(ledger.entries()) == 2
    cli_ledger = tmp_path / "cli.sqlite"
    proc = subprocess.run([sys.executable, "-m", "pcsc", "freeze", "--retrospective", "--ledger", str(cli_ledger),
                           str(SPEC_ROUTE)], capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    with pcsc.open_ledger(cli_ledger, create=False) as ledger:
        (by_cli,) = ledger.entries()
    assert by_cli.mode == "retrospective" and by_cli.payload == frozen[0].payload
    assert by_cli.payload_sha256 == frozen[0].payload_sha256


def test_ledger_reads_verifies_and_refuses(tmp_path: Path) -> None:
    path = tmp_path / "l" / "ledger.sqlite"
    with pytest.raises(pcsc.LedgerError):
        pcsc.open_ledger(path, create=False)
    with pcsc.open_ledger(path) as ledger:
        assert ledger.path == path
        first = ledger.freeze(pcsc.compile(SPEC_ROUTE))
        second = ledger.freeze(pcsc.compile(_spliced_text()))
        assert second[0].verdict == "suspend-and-ask" and second[0].score is None and second[0].rank == 1
        assert first[0].verdict == "released" and round(first[0].score or 0.0, 4) == SPEC_SCORE
        assert [e.seq for e in ledger.entries("devtools_api")] == [1, 2] and list(ledger) == [*first, *second]
        with pytest.raises(pcsc.LedgerError, match="input has errors"):
            ledger.freeze(pcsc.compile("missing.route"))
        with pytest.raises(pcsc.LedgerError, match="no route"):
            ledger.freeze(pcsc.compile([]))
        check = ledger.verify()
        assert check.ok and check.entries == 2 and check.problems == () and check.entries_head == second[0].entry_sha256
    not_a_ledger = tmp_path / "x.sqlite"
    not_a_ledger.write_text("hello", encoding="utf-8")
    with pytest.raises(pcsc.LedgerError, match="not a PCSC ledger"):
        pcsc.open_ledger(not_a_ledger)
