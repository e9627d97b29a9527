"""A UTF-8 byte order mark at the start of a file is not text: PCSC reads a file that
starts with one (as Windows editors write them) exactly as the same file without it,
whatever the file (.route, .obl, a policy, an outcomes file, a policy test, pcsc.toml,
standard input, an editor's document), and every position is where it would be
without it: line 1, column 1 is the first character after the mark."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from pcsc.cli import main
from tests import docrun
from tests.conftest import ROOT, SPEC_ROUTE

BOM = b"\xef\xbb\xbf"


def run(argv: list[str], monkeypatch: pytest.MonkeyPatch, cwd: Path,
        capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def twins(tmp_path: Path, name: str, data: bytes) -> tuple[Path, Path]:
    """Two folders holding ``name``: as ``data``, and with a byte order mark before it."""
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    for folder, content in ((plain, data), (marked, BOM + data)):
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return plain, marked


def same_in_both(argv: list[str], plain: Path, marked: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    first = run(argv, monkeypatch, plain, capsys)
    assert run(argv, monkeypatch, marked, capsys) == first
    return first


def test_a_route_with_a_byte_order_mark_compiles_as_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, marked = twins(tmp_path, "devtools_api.route", SPEC_ROUTE.read_bytes())
    code, out, err = same_in_both(["compile", "devtools_api.route", "--format", "json"], plain, marked,
                                  monkeypatch, capsys)
    assert code == 0 and "PCSC-E102" not in err
    assert json.loads(out)["inputs"][0]["path"] == "devtools_api.route"  # and the same hash: the mark is not text
    # the independent checker reads the file as the compiler does: the numbers are where the certificate says
    code, _, err = run(["compile", "devtools_api.route", "--cert", "c.json", "-q"], monkeypatch, marked, capsys)
    assert code == 0, err
    code, out, err = run(["verify-cert", "c.json"], monkeypatch, marked, capsys)
    assert code == 0 and out.startswith("verified c.json"), out + err


@pytest.mark.parametrize("line_ending", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_positions_count_from_after_the_mark(
    line_ending: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = SPEC_ROUTE.read_text(encoding="utf-8").split("\n")
    lines[0] = "@ " + lines[0]  # an error at line 1, column 1
    lines[6] = lines[6].replace("state", "stat", 1)  # and one further down
    data = line_ending.join(lines).encode("utf-8")
    plain, marked = twins(tmp_path, "r.route", data)
    code, _, err = same_in_both(["check", "r.route"], plain, marked, monkeypatch, capsys)
    assert code == 1 and "r.route:1:1: error: unexpected character `@`" in err, err
    assert "U+FEFF" not in err


def test_a_library_with_a_byte_order_mark_is_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A marked copy of the shipped `venture` beside the route: the same content, so the
    same sha256 the policy pins (no PCSC-E409), and a syntax error in it is located alike."""
    plain, marked = twins(tmp_path, "venture.obl", (ROOT / "obligations" / "venture.obl").read_bytes())
    for folder in (plain, marked):
        shutil.copy(SPEC_ROUTE, folder / "devtools_api.route")
    code, out, err = same_in_both(["compile", "devtools_api.route", "--format", "json"], plain, marked,
                                  monkeypatch, capsys)
    assert code == 0, err
    broken = (ROOT / "obligations" / "venture.obl").read_bytes().replace(b"library venture", b"library venture @", 1)
    plain, marked = twins(tmp_path / "broken", "venture.obl", broken)
    code, _, err = same_in_both(["fmt", "--check", "venture.obl"], plain, marked, monkeypatch, capsys)
    assert code == 1 and "venture.obl:" in err and "U+FEFF" not in err


def test_a_policy_with_a_byte_order_mark_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (ROOT / "policies" / "venture" / "1.0.0.toml").read_bytes()
    plain, marked = twins(tmp_path, "policies/venture/1.0.0.toml", data)
    for folder in (plain, marked):
        shutil.copy(SPEC_ROUTE, folder / "devtools_api.route")
    for argv in (["policy", "check", "policies/venture/1.0.0.toml"],
                 ["policy", "hash", "venture@1.0.0", "--policy-path", "policies"],
                 ["compile", "devtools_api.route", "--policy-path", "policies", "--format", "json"]):
        code, out, err = same_in_both(argv, plain, marked, monkeypatch, capsys)
        assert code == 0, (argv, err)


def test_a_policy_test_with_a_byte_order_mark_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = (ROOT / "policies" / "venture" / "tests" / "1.0.0.pcsctest.toml").read_bytes()
    data = shipped.replace(b"../../../examples/", str(ROOT / "examples").encode() + b"/")  # the routes, from here
    plain, marked = twins(tmp_path, "t.pcsctest.toml", data)
    docs = []
    for folder in (plain, marked):
        code, out, err = run(["test", "t.pcsctest.toml", "--format", "json"], monkeypatch, folder, capsys)
        assert code == 0, err
        docs.append({k: v for k, v in json.loads(out).items() if k != "inputs"})  # the file's bytes differ
    assert docs[0] == docs[1] and docs[0]["summary"]["passed"] > 0


def test_outcomes_and_configuration_with_a_byte_order_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = tmp_path / "shown"
    commands = docrun.workspace(ROOT / "docs" / "tutorial.md", shown)
    resolve = next(c for c in commands if c.line.startswith("pcsc resolve")).line.split()[1:]
    config = b'ledger = "forecasts/ledger.sqlite"\ncoverage = "gate"\n'
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    for folder, mark in ((plain, b""), (marked, BOM)):
        shutil.copytree(shown, folder)
        (folder / "outcomes.toml").write_bytes(mark + (shown / "outcomes.toml").read_bytes())
        (folder / "pcsc.toml").write_bytes(mark + config)
        assert run(["freeze", "routes/invoices.route", "-q"], monkeypatch, folder, capsys)[0] == 0
    code, out, err = run(["config"], monkeypatch, marked, capsys)
    assert code == 0 and "forecasts/ledger.sqlite" in out and "# from" in out, err
    first = run([*resolve, "--dry-run", "--format", "json"], monkeypatch, plain, capsys)
    second = run([*resolve, "--dry-run", "--format", "json"], monkeypatch, marked, capsys)
    assert first[0] == second[0] == 0, second[2]
    assert json.loads(first[1])["routes"] == json.loads(second[1])["routes"] != []


def test_standard_input_with_a_byte_order_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    for argv in (["check", "-"], ["fmt", "--check", "-"]):
        outputs = []
        for data in (text.encode(), BOM + text.encode()):
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
            outputs.append((main(argv), *capsys.readouterr()))
        assert outputs[0] == outputs[1] and outputs[0][0] == 0, outputs


def test_fmt_leaves_a_marked_file_that_is_canonical_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file is not reformatted for its mark alone; one fmt rewrites is written as
    canonical text (UTF-8, LF, no mark)."""
    route = tmp_path / "r.route"
    route.write_bytes(BOM + SPEC_ROUTE.read_bytes())
    assert run(["fmt", str(route)], monkeypatch, tmp_path, capsys)[0] == 0
    assert route.read_bytes().startswith(BOM)
    route.write_bytes(BOM + SPEC_ROUTE.read_bytes().replace(b"    as_of", b"  as_of", 1))
    assert run(["fmt", str(route)], monkeypatch, tmp_path, capsys)[0] == 0
    assert route.read_bytes() == SPEC_ROUTE.read_bytes()


def test_an_editor_document_with_a_byte_order_mark() -> None:
    """A client may keep the mark in the document's text (as its first character): the
    analysis is that of the text without it, and every range is where the client
    counts it (on line 1, one character further)."""
    pytest.importorskip("pygls", reason="pygls is not installed (the extra pcsc[lsp])")
    from pygls.workspace import PositionCodec

    from pcsc.lsp.analysis import analyse, format_document
    from pcsc.lsp.server import to_lsp_diagnostic

    lines = SPEC_ROUTE.read_text(encoding="utf-8").split("\n")
    lines[0] = "@ " + lines[0]
    lines[6] = lines[6].replace("state", "stat", 1)
    text = "\n".join(lines)
    codec = PositionCodec()

    def ranges(document: str) -> list[tuple[str, int, int, int, int]]:
        analysis = analyse(document, SPEC_ROUTE)
        found = []
        for d in analysis.diagnostics:
            r = to_lsp_diagnostic(d, document.split("\n"), codec).range
            found.append((d.code, r.start.line, r.start.character, r.end.line, r.end.character))
        return found

    plain, marked = ranges(text), ranges("\ufeff" + text)
    assert plain and all(code != "PCSC-E102" or line != 0 for code, line, *_ in plain[1:])
    shifted = [(c, sl, sc + (sl == 0), el, ec + (el == 0)) for c, sl, sc, el, ec in plain]
    assert marked == shifted
    clean = SPEC_ROUTE.read_text(encoding="utf-8")
    assert analyse("\ufeff" + clean, SPEC_ROUTE).diagnostics == analyse(clean, SPEC_ROUTE).diagnostics
    messy = clean.replace("    as_of", "  as_of", 1)
    assert format_document("\ufeff" + messy, SPEC_ROUTE) == format_document(messy, SPEC_ROUTE) == clean
