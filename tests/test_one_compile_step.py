"""Every front end runs the same compile step (`pcsc.compiler.session`'s passes), so the
language server, the command line and the Python API report the same diagnostics and
numbers: on every shipped input (the examples, the test data), on the reference route
under a policy that pins no library, and on the inputs that overflow or break a gate
rule (`tests/test_check_refuses.py`).

The command line shows a diagnostic found at several places of one line once, with the
number of the others (`repeats`); the editor underlines each place. The comparison
folds the editor's the same way.

In process for the bulk (the analysis the server publishes from, with the settings the
server gives a document), and over the protocol, as an editor sees them, for the
overflow case and the diagnostics data.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import pcsc
from pcsc.lsp.analysis import analyse
from tests.conftest import ROOT, SPEC_ROUTE, run_cli
from tests.test_check_refuses import REFUSALS, _setup

SHIPPED = sorted(p for folder in ("examples", "tests/data") for p in (ROOT / folder).rglob("*.route"))
DIAGNOSTICS_DATA = sorted((ROOT / "tests" / "data" / "diagnostics").glob("*.route"))
OVERFLOW = "two costs of 1 * 1.7e308"
SPLICED = ROOT / "tests" / "data" / "api" / "devtools_api_seam1.route"  # seam 1 deleted (`pcsc splice`)

Row = tuple[Any, ...]


def _cli_check(capsys: pytest.CaptureFixture[str], route: Path, *flags: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = run_cli(capsys, "check", str(route), "--format", "json", *flags)
    diagnostics: list[dict[str, Any]] = json.loads(out)["diagnostics"]
    return code, diagnostics


def _folded(rows: list[Row]) -> list[Row]:
    """``rows`` (code, severity, line, column, end line, end column, message, help) in
    source order, those with the same code, message and help on one line as the first
    of them plus the number of the others."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for row in sorted(rows, key=lambda r: (r[2], r[3])):
        key = (row[0], row[6], row[7], row[2])
        if key in out:
            out[key][-1] += 1
        else:
            out[key] = [*row, 0]
    return sorted(tuple(r) for r in out.values())


def _in_document(d: dict[str, Any], shown: str) -> Row:
    """What the language server shows for a `pcsc check` diagnostic in the document
    ``shown``: itself, or, when it is about another file (a library, a policy), the same
    at the document's first character, its message naming that file and line."""
    span = (d["line"], d["column"], d["end_line"], d["end_column"])
    message = d["message"]
    if d["file"] != shown:
        message = d["file"] + (f":{d['line']}" if d["line"] else "") + f": {message}"
        span = (1, 1, 1, 1)
    return d["code"], d["severity"], *span, message, d.get("help"), d.get("repeats", 0)


def _analysed(route: Path, policy_path: tuple[Path, ...] = ()) -> list[Row]:
    """The diagnostics the server publishes for ``route`` opened as it is on disk."""
    from pcsc.lsp.server import Settings

    settings = Settings(policy_path=policy_path).for_folder(route.parent)
    analysis = analyse(route.read_text(encoding="utf-8"), route, lib_path=settings.lib_path,
                       policy_path=settings.policy_path, coverage=settings.coverage,
                       config_coverage=settings.config_coverage)
    return _folded([(d.code, d.severity, d.span.line, d.span.column, d.span.end_line, d.span.end_column, d.message,
                     d.help) for d in analysis.diagnostics])


@pytest.fixture(scope="module")
def no_pin_policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The reference route with its library beside it, under a copy of its policy that
    pins no library (so the shipped library judges it)."""
    folder = tmp_path_factory.mktemp("no-pin")
    shipped = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
    unpinned = re.sub(r"(?ms)^\[libraries\.venture\].*?(?=^\[|\Z)", "", shipped)
    assert "[libraries" not in unpinned and unpinned != shipped
    (folder / "policies" / "venture").mkdir(parents=True)
    (folder / "policies" / "venture" / "1.0.0.toml").write_text(unpinned, encoding="utf-8")
    (folder / "venture.obl").write_text((ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8"))
    (folder / "devtools_api.route").write_text(SPEC_ROUTE.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "spliced.route").write_text(SPLICED.read_text(encoding="utf-8"), encoding="utf-8")
    yield folder


def test_the_inputs_are_many_and_some_report() -> None:
    assert len(SHIPPED) >= 60 and len(DIAGNOSTICS_DATA) >= 5


@pytest.mark.parametrize("route", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_server_and_check_agree_on_every_shipped_input(capsys: pytest.CaptureFixture[str], route: Path) -> None:
    _, cli = _cli_check(capsys, route)
    assert _analysed(route) == sorted(_in_document(d, str(route)) for d in cli)


@pytest.mark.parametrize(("name", "exit_code", "uncovered"), [("devtools_api.route", 0, 0), ("spliced.route", 1, 3)])
def test_and_under_a_policy_that_pins_no_library(capsys: pytest.CaptureFixture[str], no_pin_policy: Path,
                                                 name: str, exit_code: int, uncovered: int) -> None:
    route, policies = no_pin_policy / name, no_pin_policy / "policies"
    code, cli = _cli_check(capsys, route, "--policy-path", str(policies))
    assert code == exit_code and [d["code"] for d in cli].count("PCSC-E501") == uncovered
    assert _analysed(route, (policies,)) == sorted(_in_document(d, str(route)) for d in cli)


@pytest.mark.parametrize("name", REFUSALS)
def test_and_on_what_compile_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    route, policies = _setup(tmp_path, name)
    code, cli = _cli_check(capsys, route, "--policy-path", str(policies))
    assert code == 1 and REFUSALS[name][2] in {d["code"] for d in cli}
    assert _analysed(route, (policies,)) == sorted(_in_document(d, str(route)) for d in cli)


def test_the_architecture_page_lists_the_passes() -> None:
    from pcsc.compiler.session import CHECK_PASSES, COMPILE_PASSES, FILE_PASSES

    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## The pipeline: one compile step\n")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([^`]+)` \| `(\w+)` \|", section, re.M)
    assert CHECK_PASSES[: len(COMPILE_PASSES)] == COMPILE_PASSES
    assert rows == [
        *((p.name, "FILE_PASSES") for p in FILE_PASSES),
        *((p.name, "COMPILE_PASSES") for p in COMPILE_PASSES),
        *((p.name, "CHECK_PASSES") for p in CHECK_PASSES[len(COMPILE_PASSES):]),
    ]


def test_docks_score_is_computed_once_by_the_score_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The splice under DOCK: the score pass computes DOCK's score, and the decision,
    the GATE/DOCK pair of the analyses and the certificate read it from the result."""
    import pcsc.compiler.session as session_module
    from pcsc.certify.emit import route_certificate
    from pcsc.compiler.session import Session, gate_and_dock

    calls: list[float] = []
    real = session_module.docked_score

    def counted(numbers: Any) -> float:
        calls.append(real(numbers))
        return calls[-1]

    monkeypatch.setattr(session_module, "docked_score", counted)
    session = Session(coverage_mode="dock")
    (route,) = session.load_routes(SPLICED)
    c = session.compile_route(route)
    assert c is not None and c.decision.verdict == "docked" and c.decision.score == c.docked
    gate, dock, _ = gate_and_dock(c, "test")
    certificate = route_certificate(c, {route.file: "spliced.route"}, "gate")
    assert dock.score == c.docked and gate.score is None
    [step] = [s for s in certificate["steps"] if s["symbol"] == "docked_score"]
    assert step["value"]["f"] == c.docked
    assert calls == [c.docked]


# ---------------------------------------------------------------------- the Python API
@pytest.mark.parametrize("route", [*SHIPPED, ROOT / "examples"], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_api_reports_and_scores_as_the_commands(capsys: pytest.CaptureFixture[str], route: Path) -> None:
    _, cli = _cli_check(capsys, route)
    assert pcsc.check(route).to_json()["diagnostics"] == cli
    code, out, _ = run_cli(capsys, "compile", str(route), "--format", "json")
    result = pcsc.compile(route)
    assert result.exit_code == code and result.to_json() == json.loads(out)
    packets = {(p["file"], p["route"]): p for p in json.loads(out)["routes"]}
    assert len(packets) == len(result.routes)
    for r in result.routes:  # the numbers of the API's own types, against the command's packet
        packet = packets[(r.file, r.name)]
        assert (r.score, r.ungated_score, r.verdict) == (packet["score"], packet["ungated_score"], packet["verdict"])
        assert [(t.p, t.c, t.U, t.D, t.R_next) for t in r.transitions] == [
            (t["p"], t["c"], t["U"], t["D"], t["R_next"]) for t in packet["transitions"]]


@pytest.mark.parametrize("name", REFUSALS)
def test_the_api_refuses_what_the_commands_refuse(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  name: str) -> None:
    route, policies = _setup(tmp_path, name)
    _, cli = _cli_check(capsys, route, "--policy-path", str(policies))
    assert pcsc.check(route, policy_path=policies).to_json()["diagnostics"] == cli
    code, out, _ = run_cli(capsys, "compile", str(route), "--policy-path", str(policies), "--format", "json")
    result = pcsc.compile(route, policy_path=policies)
    assert code == result.exit_code == 1 and not result.routes
    assert result.to_json() == json.loads(out)


# ---------------------------------------------------------------------- over the protocol
pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

import pytest_asyncio  # noqa: E402
import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "pcsc", "lsp"], server_env=ENV),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    await lsp_client.initialize_session(
        lsp.InitializeParams(capabilities=pytest_lsp.client_capabilities("visual-studio-code"))
    )
    yield
    await lsp_client.shutdown_session()


def _as_published(d: dict[str, Any], lines: list[str]) -> tuple[Any, ...]:
    """A `pcsc check` diagnostic as an editor receives it: 0-based lines, columns in
    UTF-16 units (the default encoding), the help after the message."""

    def position(line: int, column: int) -> tuple[int, int]:
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        return max(line - 1, 0), len(text[: max(column - 1, 0)].encode("utf-16-le")) // 2

    severity = lsp.DiagnosticSeverity.Error if d["severity"] == "error" else lsp.DiagnosticSeverity.Warning
    message = d["message"] + (f"\nhelp: {d['help']}" if d.get("help") else "")
    return d["code"], severity, position(d["line"], d["column"]), position(d["end_line"], d["end_column"]), message


def _received(d: lsp.Diagnostic) -> tuple[Any, ...]:
    r = d.range
    return d.code, d.severity, (r.start.line, r.start.character), (r.end.line, r.end.character), d.message


async def _published(client: LanguageClient, route: Path) -> list[tuple[Any, ...]]:
    uri = route.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "pcsc", 1, route.read_text(encoding="utf-8")))
    )
    while uri not in client.diagnostics:  # each document is opened once
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return sorted(_received(d) for d in client.diagnostics[uri])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def overflow_route(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference route with two costs of 1 * 1.7e308 usd: their sum overflows."""
    route = tmp_path_factory.mktemp("overflow") / "devtools_api.route"
    route.write_text(REFUSALS[OVERFLOW][0](SPEC_ROUTE.read_text(encoding="utf-8")), encoding="utf-8")
    return route


in_module_loop = pytest.mark.asyncio(loop_scope="module")


@in_module_loop
async def test_the_editor_sees_the_overflow_check_reports(
    client: LanguageClient, overflow_route: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cli = _cli_check(capsys, overflow_route)
    [e311] = [d for d in cli if d["code"] == "PCSC-E311"]
    assert "overflows" in e311["message"]
    lines = overflow_route.read_text(encoding="utf-8").split("\n")
    published = await _published(client, overflow_route)
    assert _as_published(e311, lines) in published
    assert published == sorted(_as_published(d, lines) for d in cli)


@in_module_loop
@pytest.mark.parametrize("route", DIAGNOSTICS_DATA, ids=lambda p: p.name)
async def test_the_editor_sees_what_check_reports(
    client: LanguageClient, route: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cli = _cli_check(capsys, route)
    assert cli, "each file of the diagnostics data reports something"
    lines = route.read_text(encoding="utf-8").split("\n")
    assert await _published(client, route) == sorted(_as_published(d, lines) for d in cli)
