"""The language server, driven over stdio as an editor drives it (pytest-lsp).

One server process (`python -m pcsc lsp`, this checkout on PYTHONPATH) serves the
module. The document is a copy of the reference route in a temporary folder, with
venture.obl beside it so the library resolves from the document's own folder: the
tests open it, see diagnostics appear and go as the text changes (a syntax-free
error, then an uncovered material change on its transition), hover a transition,
jump to an obligation's definition and to a state, complete fields, classes,
obligations and units, and format it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, SPEC_ROUTE

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

import pytest_asyncio  # noqa: E402
import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from pcsc.lsp.analysis import analyse  # noqa: E402
from pcsc.lsp.server import from_position, to_range  # noqa: E402

TEXT = SPEC_ROUTE.read_text(encoding="utf-8")
INITIALIZED: list[lsp.InitializeResult] = []  # what the server answered to `initialize`
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "pcsc", "lsp"], server_env=ENV),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    INITIALIZED.append(
        await lsp_client.initialize_session(
            lsp.InitializeParams(capabilities=pytest_lsp.client_capabilities("visual-studio-code"))
        )
    )
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def route_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lsp")
    shutil.copy(ROOT / "obligations" / "venture.obl", folder / "venture.obl")
    path = folder / "devtools_api.route"
    path.write_text(TEXT, encoding="utf-8")
    return path


def position(text: str, needle: str, offset: int = 0) -> lsp.Position:
    """The LSP position of ``needle``'s first occurrence (plus ``offset`` characters;
    the text is ASCII, so characters are UTF-16 units)."""
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return lsp.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


class Document:
    """The open document: its text and version, changed as an editor would."""

    def __init__(self, client: LanguageClient, path: Path) -> None:
        self.client = client
        self.uri = path.as_uri()
        self.version = 1
        self.text = TEXT

    async def open(self) -> list[lsp.Diagnostic]:
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(self.uri, "pcsc", self.version, self.text))
        )
        return await self.diagnostics()

    async def change(self, text: str) -> list[lsp.Diagnostic]:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(self.version, self.uri),
                [lsp.TextDocumentContentChangeWholeDocument(text)],
            )
        )
        return await self.diagnostics()

    async def diagnostics(self) -> list[lsp.Diagnostic]:
        await self.client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return list(self.client.diagnostics[self.uri])

    def at(self, needle: str, offset: int = 0) -> lsp.TextDocumentPositionParams:
        return lsp.TextDocumentPositionParams(lsp.TextDocumentIdentifier(self.uri), position(self.text, needle, offset))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def document(client: LanguageClient, route_file: Path) -> Document:
    doc = Document(client, route_file)
    diagnostics = await doc.open()
    assert [d for d in diagnostics if d.severity == lsp.DiagnosticSeverity.Error] == []
    return doc


in_module_loop = pytest.mark.asyncio(loop_scope="module")  # the loop the module's server runs in


@in_module_loop
async def test_a_diagnostic_appears_and_disappears_as_the_text_changes(document: Document) -> None:
    broken = TEXT.replace("transition launch: garage -> wedge", "transition launch: garage -> wedgee")
    diagnostics = await document.change(broken)
    unknown = [d for d in diagnostics if d.code == "PCSC-E201"]
    assert unknown, diagnostics
    assert unknown[0].severity == lsp.DiagnosticSeverity.Error
    assert unknown[0].range.start == position(broken, "wedgee")
    assert "did you mean `wedge`" in unknown[0].message
    diagnostics = await document.change(TEXT)
    assert [d for d in diagnostics if d.severity == lsp.DiagnosticSeverity.Error] == []


@in_module_loop
async def test_an_uncovered_change_is_shown_on_its_transition(document: Document, route_file: Path) -> None:
    # wedge now claims 5k developers, which launch's threshold (>= 500) does not measure
    uncovered = TEXT.replace("state wedge  { developers 500 }", "state wedge  { developers 5k }")
    diagnostics = await document.change(uncovered)
    [e501] = [d for d in diagnostics if d.code == "PCSC-E501"]
    assert e501.severity == lsp.DiagnosticSeverity.Error
    start = position(uncovered, "launch: garage")
    assert e501.range == lsp.Range(start, lsp.Position(start.line, start.character + len("launch")))
    assert "developers 0 -> 5,000" in e501.message
    assert "adoption" in e501.message and "venture.obl:12" in e501.message  # the failing `require` line
    library = route_file.parent / "venture.obl"
    obl = library.read_text(encoding="utf-8")
    require = position(obl, "require measured(delta)")
    assert list(e501.related_information or ()) == [
        lsp.DiagnosticRelatedInformation(
            lsp.Location(
                library.as_uri(),
                lsp.Range(require, lsp.Position(require.line, require.character + len("require measured(delta)"))),
            ),
            "obligation `adoption`: `require measured(delta)` fails: "
            "the threshold does not bound every claimed change up to its target",
        )
    ]
    # no docs URL configured: the code links to its anchor in this checkout's docs
    assert e501.code_description == lsp.CodeDescription((ROOT / "docs" / "diagnostics.md").as_uri() + "#pcsc-e501")
    assert '<a id="pcsc-e501"></a>' in (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    diagnostics = await document.change(TEXT)
    assert not [d for d in diagnostics if d.code == "PCSC-E501"]


@in_module_loop
async def test_hover_a_transition_shows_its_numbers_and_coverage(client: LanguageClient, document: Document) -> None:
    at = document.at("launch: garage", 2)
    hover = await client.text_document_hover_async(lsp.HoverParams(at.text_document, at.position))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    text = hover.contents.value
    numbers = ("p_prior 0.45", "W 1.1951", "p 0.5378", "c 99,000.00 USD, bound by budget", "U 0.15", "D 1,830,824.18")
    for part in numbers:
        assert part in text, text
    assert "developers 0 -> 500: covered by `adoption`" in text

    at = document.at("threshold  developers >= 500", len("threshold  ") + 3)
    hover = await client.text_document_hover_async(lsp.HoverParams(at.text_document, at.position))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "**field developers**: `count`" in hover.contents.value
    assert "covered by `adoption`" in hover.contents.value


@in_module_loop
async def test_definition_of_an_obligation_lands_in_its_library(
    client: LanguageClient, document: Document, route_file: Path
) -> None:
    at = document.at("discharges adoption", len("discharges ") + 2)
    found = await client.text_document_definition_async(lsp.DefinitionParams(at.text_document, at.position))
    assert isinstance(found, lsp.Location)
    library = route_file.parent / "venture.obl"
    assert found.uri == library.as_uri()
    obl = library.read_text(encoding="utf-8")
    assert found.range.start == position(obl, "adoption covers")

    at = document.at("garage -> wedge", 1)
    found = await client.text_document_definition_async(lsp.DefinitionParams(at.text_document, at.position))
    assert isinstance(found, lsp.Location) and found.uri == document.uri
    assert found.range.start == position(TEXT, "garage {")

    at = document.at('"devtools/first-users"', 3)
    found = await client.text_document_definition_async(lsp.DefinitionParams(at.text_document, at.position))
    assert isinstance(found, lsp.Location) and found.uri.endswith("policies/venture/1.0.0.toml")
    toml = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
    assert found.range.start == position(toml, '[priors."devtools/first-users"]')


@in_module_loop
async def test_completion(client: LanguageClient, document: Document) -> None:
    async def labels(needle: str, offset: int) -> list[str]:
        at = document.at(needle, offset)
        result = await client.text_document_completion_async(lsp.CompletionParams(at.text_document, at.position))
        assert isinstance(result, lsp.CompletionList)
        return [item.label for item in result.items]

    assert "developers" in await labels("state wedge  { developers", len("state wedge  { dev"))
    assert "devtools/scale" in await labels('"devtools/first-users"', 1)
    assert {"adoption", "monetization"} <= set(await labels("discharges adoption", len("discharges ad")))
    assert await labels("90 days", 3) == ["usd", "days", "months", "years"]
    assert {"usd", "arr"} <= set(await labels("garage { developers 0    paying_teams 0 ", 40))


@in_module_loop
async def test_formatting(client: LanguageClient, document: Document) -> None:
    messy = TEXT.replace("    state wedge  { developers 500 }", "state wedge {developers 500}")
    await document.change(messy)
    edits = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(lsp.TextDocumentIdentifier(document.uri), lsp.FormattingOptions(4, True))
    )
    assert edits is not None and len(edits) == 1
    assert "    state wedge  { developers 500 }" in edits[0].new_text
    await document.change(edits[0].new_text)
    again = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(lsp.TextDocumentIdentifier(document.uri), lsp.FormattingOptions(4, True))
    )
    assert not again  # already canonical: no edits
    await document.change(TEXT)


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """``text`` with LSP edits applied, last first (ASCII text: characters are UTF-16 units)."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    def offset(p: lsp.Position) -> int:
        return starts[p.line] + p.character
    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


async def quick_fixes(client: LanguageClient, document: Document, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    found = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(document.uri), diagnostic.range, lsp.CodeActionContext(diagnostics=[diagnostic])
        )
    )
    assert found is not None
    return [a for a in found if isinstance(a, lsp.CodeAction)]


@in_module_loop
async def test_code_action_fixes_a_misspelt_state_as_check_fix_does(
    client: LanguageClient, document: Document, tmp_path: Path
) -> None:
    assert INITIALIZED[0].capabilities.code_action_provider is not None
    broken = TEXT.replace("transition launch: garage -> wedge", "transition launch: garage -> wedgee")
    [unknown] = [d for d in await document.change(broken) if d.code == "PCSC-E201"]
    [action] = await quick_fixes(client, document, unknown)
    assert action.kind == lsp.CodeActionKind.QuickFix and action.is_preferred is True
    assert action.title == "Replace `wedgee` with `wedge`"
    assert action.edit is not None and action.edit.changes is not None
    start = position(broken, "garage -> wedgee", len("garage -> "))
    end = lsp.Position(start.line, start.character + len("wedgee"))
    assert list(action.edit.changes) == [document.uri]
    assert list(action.edit.changes[document.uri]) == [lsp.TextEdit(lsp.Range(start, end), "wedge")]
    fixed = apply_edits(broken, list(action.edit.changes[document.uri]))
    assert fixed == TEXT

    # the same edit as `pcsc check --fix`, and the file it gives passes `pcsc check`
    shutil.copy(ROOT / "obligations" / "venture.obl", tmp_path / "venture.obl")
    route = tmp_path / "devtools_api.route"
    route.write_text(broken, encoding="utf-8")
    check = [sys.executable, "-m", "pcsc", "check", str(route)]
    subprocess.run([*check, "--fix"], env=ENV, capture_output=True, check=False)
    assert route.read_text(encoding="utf-8") == fixed
    assert subprocess.run(check, env=ENV, capture_output=True, check=False).returncode == 0

    # a range elsewhere in the document offers nothing
    elsewhere = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 1))
    found = await client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(document.uri), elsewhere, lsp.CodeActionContext(diagnostics=[]))
    )
    assert not found
    await document.change(TEXT)


@in_module_loop
async def test_an_unsafe_fix_is_offered_but_not_preferred(client: LanguageClient, document: Document) -> None:
    broken = TEXT.replace("state wedge  { developers 500 }", "state wedge  { developerz 500 }")
    [unknown] = [d for d in await document.change(broken) if d.code == "PCSC-E205"]
    [action] = await quick_fixes(client, document, unknown)
    assert action.is_preferred is False and "unsafe" in action.title
    assert action.edit is not None and action.edit.changes is not None
    assert apply_edits(broken, list(action.edit.changes[document.uri])) == TEXT
    await document.change(TEXT)


def name_range(text: str, needle: str, name: str) -> lsp.Range:
    """The range of ``name`` inside the first occurrence of ``needle``."""
    start = position(text, needle, needle.index(name))
    return lsp.Range(start, lsp.Position(start.line, start.character + len(name)))


@in_module_loop
async def test_document_symbols_outline_the_route(client: LanguageClient, document: Document) -> None:
    assert INITIALIZED[0].capabilities.document_symbol_provider
    found = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(document.uri))
    )
    assert found is not None
    [route] = found
    assert isinstance(route, lsp.DocumentSymbol)
    lines = TEXT.split("\n")
    last = max(i for i, line in enumerate(lines) if line == "}")
    assert (route.name, route.kind, route.detail) == ("devtools_api", lsp.SymbolKind.Module, "Developer API for SMS")
    assert route.range == lsp.Range(position(TEXT, "route devtools_api"), lsp.Position(last, 1))
    assert route.selection_range == name_range(TEXT, "route devtools_api", "devtools_api")
    children = list(route.children or ())
    assert [(c.name, c.kind) for c in children] == [
        ("garage", lsp.SymbolKind.Struct), ("wedge", lsp.SymbolKind.Struct), ("bridge", lsp.SymbolKind.Struct),
        ("scale", lsp.SymbolKind.Struct), ("scale", lsp.SymbolKind.Object),
        ("launch", lsp.SymbolKind.Function), ("monetize", lsp.SymbolKind.Function), ("expand", lsp.SymbolKind.Function),
        ("hn_launch", lsp.SymbolKind.Event), ("pricing_survey", lsp.SymbolKind.Event),
        ("carrier_talks", lsp.SymbolKind.Event), ("price_war", lsp.SymbolKind.Event),
    ]
    wedge = children[1]
    header = "state wedge  { developers 500 }"
    start = position(TEXT, header)
    assert wedge.range == lsp.Range(start, lsp.Position(start.line, start.character + len(header)))
    assert wedge.selection_range == name_range(TEXT, header, "wedge")
    monetize = children[6]
    assert monetize.detail == "wedge -> bridge"
    assert monetize.range.start == position(TEXT, "transition monetize")
    assert monetize.range.end == lsp.Position(position(TEXT, "    }\n\n    transition expand").line, 5)
    assert monetize.selection_range == name_range(TEXT, "transition monetize", "monetize")
    discharges = "discharges adoption, monetization"
    assert [(o.name, o.kind, o.range, o.selection_range) for o in monetize.children or ()] == [
        ("adoption", lsp.SymbolKind.Interface, name_range(TEXT, discharges, "adoption"),
         name_range(TEXT, discharges, "adoption")),
        ("monetization", lsp.SymbolKind.Interface, name_range(TEXT, discharges, "monetization"),
         name_range(TEXT, discharges, "monetization")),
    ]
    assert children[8].selection_range == name_range(TEXT, "evidence hn_launch", "hn_launch")


async def folding(client: LanguageClient, document: Document) -> list[lsp.FoldingRange]:
    found = await client.text_document_folding_range_async(
        lsp.FoldingRangeParams(lsp.TextDocumentIdentifier(document.uri))
    )
    assert found is not None
    return list(found)


@in_module_loop
async def test_folding_ranges_fold_blocks_and_comment_runs(client: LanguageClient, document: Document) -> None:
    assert INITIALIZED[0].capabilities.folding_range_provider
    ranges = await folding(client, document)
    # the route, the vision, three transitions and their cost blocks, four evidence, the criteria
    assert len(ranges) == 13 and all(r.kind is None for r in ranges)
    lines = TEXT.split("\n")
    last = max(i for i, line in enumerate(lines) if line == "}")
    assert ranges[0] == lsp.FoldingRange(position(TEXT, "route devtools_api").line, last - 1)
    launch = position(TEXT, "transition launch").line
    closing = position(TEXT, "    }\n\n    transition monetize").line
    assert lsp.FoldingRange(launch, closing - 1) in ranges
    cost = position(TEXT, "cost {").line
    assert lsp.FoldingRange(cost, position(TEXT, "hosting").line) in ranges  # its `}` stays shown

    # a run of comments folds; a brace inside a string or a comment opens nothing
    edited = "# one\n# two\n# three {\n" + TEXT.replace('actor      "two founders"', 'actor      "two { founders"')
    await document.change(edited)
    ranges = await folding(client, document)
    assert TEXT.startswith("# ") and not TEXT.split("\n")[1].startswith("#")
    assert lsp.FoldingRange(0, 3, kind=lsp.FoldingRangeKind.Comment) in ranges  # with the file's first line
    assert len(ranges) == 14
    assert lsp.FoldingRange(launch + 3, closing + 3 - 1) in ranges
    await document.change(TEXT)


#: The editor page's feature names, and the capability each is advertised by
#: (diagnostics are pushed: no capability).
DOCUMENTED = {
    "diagnostics": None,
    "hover": "hover_provider",
    "go to definition": "definition_provider",
    "completion": "completion_provider",
    "code actions": "code_action_provider",
    "document symbols": "document_symbol_provider",
    "folding": "folding_range_provider",
    "formatting": "document_formatting_provider",
    "fix all": "code_action_provider",
    "references": "references_provider",
    "rename": "rename_provider",
    "workspace symbols": "workspace_symbol_provider",
    "semantic tokens": "semantic_tokens_provider",
}


@in_module_loop
async def test_the_editor_page_lists_the_capabilities_the_server_advertises(client: LanguageClient) -> None:
    page = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    table = page.split("| feature | what |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    listed = [row.split(" | ", 1)[0].removeprefix("| ") for row in table.split("\n")]
    assert listed == list(DOCUMENTED)
    capabilities = INITIALIZED[0].capabilities
    advertised = {name for name in dir(capabilities) if name.endswith("_provider") and getattr(capabilities, name)}
    commands = capabilities.execute_command_provider
    if commands is not None and not commands.commands:  # pygls's own, naming no command
        advertised.remove("execute_command_provider")
    assert advertised == {c for c in DOCUMENTED.values() if c is not None}


# ---------------------------------------------------------------------- positions, in process
def test_positions_count_utf16_units_after_non_ascii_text() -> None:
    from pygls.workspace import PositionCodec

    codec = PositionCodec()  # UTF-16, the LSP default
    line = 'actor "Zoë 🚀" class'
    # "class" starts at character 15 (1-based 16); 🚀 is two UTF-16 units, ë is one
    start = line.index("class")
    lsp_range = to_range((1, start + 1, 1, start + 6), [line], codec)
    assert lsp_range.start == lsp.Position(0, start + 1) and lsp_range.end == lsp.Position(0, start + 6)
    assert from_position(lsp.Position(0, start + 1), [line], codec) == (1, start + 1)


def test_a_diagnostic_after_an_emoji_ends_where_the_editor_counts(tmp_path: Path) -> None:
    text = TEXT.replace('class      "devtools/first-users"', 'class      "devtools/🚀"')
    analysis = analyse(text, tmp_path / "r.route")
    [e207] = [d for d in analysis.diagnostics if d.code == "PCSC-E207"]
    from pygls.workspace import PositionCodec

    lines = text.split("\n")
    r = to_range((e207.span.line, e207.span.column, e207.span.end_line, e207.span.end_column), lines, PositionCodec())
    assert r.end.character - r.start.character == len('"devtools/🚀"') + 1  # the rocket is two UTF-16 units


def test_a_graph_route_is_analysed_and_a_branch_transition_hovers_with_its_reach() -> None:
    path = ROOT / "examples" / "graphs" / "lock_cert_pilot.route"
    text = path.read_text(encoding="utf-8")
    analysis = analyse(text, path)
    assert not [d for d in analysis.diagnostics if d.severity == "error"]
    lines = text.split("\n")
    line = next(i for i, s in enumerate(lines) if s.lstrip().startswith("transition certify:")) + 1
    hover = analysis.hover(line, lines[line - 1].index("certify") + 2)
    assert hover is not None and "**transition certify**: beta -> certified" in hover
    assert "R_next with the other branches' chances" in hover  # a branch's continuation
    # a branch into an unknown state is reported at the document, not a crash
    broken = text.replace("transition certify: beta -> certified", "transition certify: beta -> nowhere")
    assert "PCSC-E201" in {d.code for d in analyse(broken, path).diagnostics}


def test_without_pygls_the_command_names_the_extra() -> None:
    import subprocess

    blocked = "import sys\nfor m in ('pygls', 'pygls.lsp', 'pygls.lsp.server'):\n    sys.modules[m] = None\n"
    code = blocked + "from pcsc.cli import main\nraise SystemExit(main(['lsp']))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=60)
    assert proc.returncode == 1
    assert "pcsc[lsp]" in proc.stderr and "pygls" in proc.stderr


def _hover_transition(path: Path, name: str) -> str:
    text = path.read_text(encoding="utf-8")
    analysis = analyse(text, path)
    lines = text.split("\n")
    line = next(i for i, s in enumerate(lines) if s.lstrip().startswith(f"transition {name}:")) + 1
    hover = analysis.hover(line, lines[line - 1].index(name) + 2)
    assert hover is not None and f"**transition {name}**" in hover
    return hover


def test_hover_says_when_the_binding_is_only_the_tie_rules_pick() -> None:
    """biochar_kilns runs under the option to stop and the planner would not start
    (docs/folds.md): every U·D is 0, so the binding transition demo_kiln is only the
    tie rule's pick, as `pcsc compile` says under its binding line."""
    biochar = ROOT / "examples" / "domains" / "biochar_kilns.route"
    hover = _hover_transition(biochar, "demo_kiln")
    assert "binding transition of the route" in hover
    assert "every U·D is 0 (option to stop: the planner would not start, R_0 = 0)" in hover
    assert "binding is only the tie rule's pick" in hover
    # the note is the binding transition's, not every transition's
    assert "tie rule" not in _hover_transition(biochar, "full_plant")
    # a route whose binding transition binds for a real reason: marked, with no note
    spec = _hover_transition(SPEC_ROUTE, "expand") + _hover_transition(SPEC_ROUTE, "launch")
    assert "tie rule" not in spec and spec.count("binding transition of the route") == 1


def test_a_configuration_file_never_lowers_the_policys_mode_in_the_editor(tmp_path: Path) -> None:
    """A `pcsc.toml` beside the document asking for coverage off: the policy's gate
    still reports the splice's uncovered change as an error (PCSC-E501)."""
    from pcsc.analysis.seams.splice import splice_text
    from pcsc.compiler.session import Session
    from pcsc.lsp.server import Settings

    (tmp_path / "pcsc.toml").write_text('coverage = "off"\n', encoding="utf-8")
    settings = Settings().for_folder(tmp_path)
    assert (settings.coverage, settings.config_coverage) == (None, "off")
    (route,) = Session().load_routes(SPEC_ROUTE)
    spliced = splice_text(route, 1)
    found = analyse(spliced, tmp_path / "s.route", coverage=settings.coverage,
                    config_coverage=settings.config_coverage)
    assert "PCSC-E501" in {d.code for d in found.diagnostics}
    flagged = analyse(spliced, tmp_path / "s.route", coverage="off")  # `pcsc lsp --coverage off`
    assert "PCSC-E501" not in {d.code for d in flagged.diagnostics}
    # a configuration that would replace a shipped policy is not used at all
    shipped = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
    (tmp_path / "p" / "venture").mkdir(parents=True)
    (tmp_path / "p" / "venture" / "1.0.0.toml").write_text(shipped.replace('coverage = "gate"', 'coverage = "off"'))
    (tmp_path / "pcsc.toml").write_text('policy_path = ["p"]\n', encoding="utf-8")
    assert Settings().for_folder(tmp_path) == Settings()


def test_folders_from_a_configuration_beside_the_document_are_not_used(tmp_path: Path) -> None:
    """As `pcsc check` refuses them (PCSC-E407): a `pcsc.toml` in the document's folder,
    or below it, naming policy or library folders could be the route author's, so the
    editor does not search them; the same file one folder up is used."""
    from pcsc.lsp.server import Settings

    project = tmp_path / "project"
    (project / "routes" / "lax").mkdir(parents=True)
    (project / "libs").mkdir()
    (project / "routes" / "pcsc.toml").write_text('policy_path = ["lax"]\nlib_path = ["lax"]\n', encoding="utf-8")
    assert Settings().for_folder(project / "routes") == Settings()
    (project / "routes" / "pcsc.toml").unlink()
    (project / "pcsc.toml").write_text('lib_path = ["libs"]\n', encoding="utf-8")
    assert Settings().for_folder(project / "routes").lib_path == ((project / "libs").resolve(),)
