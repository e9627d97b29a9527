"""References, rename, workspace symbols, semantic tokens, fix-all and library
documents, driven over stdio through the real `python -m pcsc lsp` with pytest-lsp.

The workspace holds the reference route, a second route that uses the same library,
and a copy of venture.obl beside them (so the library is the workspace's own, not the
shipped file). The tour at the end calls every capability the server advertises once.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, SPEC_ROUTE

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402
from pygls.uris import to_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from pcsc.lsp.analysis import Analysis, analyse  # noqa: E402
from pcsc.lsp.names import UNITS  # noqa: E402
from tests.test_lsp import ENV, apply_edits, position  # noqa: E402

TEXT = SPEC_ROUTE.read_text(encoding="utf-8")
OBL = (ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8")
#: A second route of the workspace: it uses venture and discharges adoption.
OTHER = TEXT.replace("route devtools_api", "route devtools_copy")
INITIALIZED: list[lsp.InitializeResult] = []
in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("nav")
    (folder / "venture.obl").write_text(OBL, encoding="utf-8")
    (folder / "devtools_api.route").write_text(TEXT, encoding="utf-8")
    (folder / "sub").mkdir()
    shutil.copy(folder / "venture.obl", folder / "sub" / "venture.obl")  # another library: not renamed
    (folder / "sub" / "elsewhere.route").write_text(OTHER, encoding="utf-8")
    (folder / "copy.route").write_text(OTHER, encoding="utf-8")
    return folder


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "pcsc", "lsp"], server_env=ENV),
)
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    INITIALIZED.append(await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="nav")],
        )
    ))
    yield
    await lsp_client.shutdown_session()


async def open_document(client: LanguageClient, path: Path, text: str) -> list[lsp.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "pcsc", 1, text)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


async def change(client: LanguageClient, path: Path, text: str, version: int) -> list[lsp.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version, uri), [lsp.TextDocumentContentChangeWholeDocument(text)]))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


@pytest.fixture(scope="module")
def route(workspace: Path) -> Path:
    return workspace / "devtools_api.route"


def doc(path: Path) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(path.as_uri())


def span(text: str, needle: str, name: str, nth: int = 0) -> lsp.Range:
    """The range of ``name`` inside the ``nth`` occurrence of ``needle``."""
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    start = position(text, needle, needle.index(name) + index - text.index(needle))
    return lsp.Range(start, lsp.Position(start.line, start.character + len(name)))


def refs(path: Path, at: lsp.Position, declaration: bool) -> lsp.ReferenceParams:
    return lsp.ReferenceParams(text_document=doc(path), position=at,
                               context=lsp.ReferenceContext(include_declaration=declaration))


def rows(locations: list[lsp.Location]) -> list[tuple[str, int, int, int]]:
    return sorted((Path(loc.uri).name, loc.range.start.line, loc.range.start.character, loc.range.end.character)
                  for loc in locations)


def row(path: Path, r: lsp.Range) -> tuple[str, int, int, int]:
    return path.name, r.start.line, r.start.character, r.end.character


@in_module_loop
async def test_references_of_a_state_are_its_route_uses_not_a_criterion(client: LanguageClient, route: Path) -> None:
    assert not [d for d in await open_document(client, route, TEXT) if d.severity == lsp.DiagnosticSeverity.Error]
    at = span(TEXT, "garage -> wedge", "wedge").start
    found = await client.text_document_references_async(
        refs(route, at, True))
    assert found is not None
    expected = [row(route, span(TEXT, "state wedge", "wedge")), row(route, span(TEXT, "garage -> wedge", "wedge")),
                row(route, span(TEXT, "wedge -> bridge", "wedge"))]
    assert rows(found) == sorted(expected)
    assert "        wedge    55" in TEXT  # the criterion `wedge` is another name: not among them
    without = await client.text_document_references_async(
        refs(route, at, False))
    assert without is not None and rows(without) == sorted(expected[1:])


@in_module_loop
async def test_rename_a_state_edits_its_uses_and_the_route_still_checks(client: LanguageClient, route: Path) -> None:
    at = span(TEXT, "state wedge", "wedge").start
    prepared = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(doc(route), at))
    assert prepared == span(TEXT, "state wedge", "wedge")
    edit = await client.text_document_rename_async(lsp.RenameParams(doc(route), at, "foothold"))
    assert edit is not None and edit.changes is not None and list(edit.changes) == [route.as_uri()]
    renamed = apply_edits(TEXT, list(edit.changes[route.as_uri()]))
    assert renamed.count("foothold") == 3 and "        wedge    55" in renamed
    assert "transition launch: garage -> foothold" in renamed and "transition monetize: foothold -> bridge" in renamed
    result = analyse(renamed, route)
    assert not [d for d in result.diagnostics if d.severity == "error"]
    before = analyse(TEXT, route)
    def scores(a: Analysis) -> list[tuple[float, float, float]]:
        return [(t.p, t.U, t.D) for r in a.routes if r.numbers is not None for t in r.numbers.transitions]

    assert scores(result) == scores(before) and len(scores(before)) == 3  # numbers unchanged


@in_module_loop
async def test_rename_a_transition_follows_supports_and_contradicts(client: LanguageClient, route: Path) -> None:
    at = span(TEXT, "contradicts monetize", "monetize").start
    edit = await client.text_document_rename_async(lsp.RenameParams(doc(route), at, "charge"))
    assert edit is not None and edit.changes is not None
    renamed = apply_edits(TEXT, list(edit.changes[route.as_uri()]))
    assert "transition charge: wedge -> bridge" in renamed
    assert "supports  charge" in renamed and "contradicts charge" in renamed and "monetize" not in renamed
    assert not [d for d in analyse(renamed, route).diagnostics if d.severity == "error"]


@in_module_loop
async def test_rename_an_obligation_edits_the_library_and_every_route_using_it(
    client: LanguageClient, route: Path, workspace: Path
) -> None:
    at = span(TEXT, "discharges adoption, monetization", "adoption").start
    found = await client.text_document_references_async(
        refs(route, at, True))
    assert found is not None
    library, copy = workspace / "venture.obl", workspace / "copy.route"
    uses = [span(TEXT, "discharges adoption", "adoption", n) for n in range(3)]
    expected = [row(library, span(OBL, "obligation adoption", "adoption"))]
    expected += [row(route, r) for r in uses] + [row(copy, r) for r in uses]
    assert rows(found) == sorted(expected)  # not sub/elsewhere.route: it uses sub/venture.obl
    edit = await client.text_document_rename_async(lsp.RenameParams(doc(route), at, "traction"))
    assert edit is not None and edit.changes is not None
    assert sorted(edit.changes) == sorted(p.as_uri() for p in (route, library, copy))
    new_library = apply_edits(OBL, list(edit.changes[library.as_uri()]))
    assert "obligation traction covers developers {" in new_library and "adoption" not in new_library
    for path in (route, copy):
        text = TEXT if path == route else OTHER
        assert apply_edits(text, list(edit.changes[path.as_uri()])).count("discharges traction") == 3


@in_module_loop
async def test_a_rename_to_a_bad_or_clashing_name_is_refused(client: LanguageClient, route: Path) -> None:
    at = span(TEXT, "state wedge", "wedge").start
    for new, why in [("2fast", "is not a name"), ("state", "is not a name"), (sorted(UNITS)[0], "is not a name"),
                     ("bridge", "already declares a state `bridge`")]:
        with pytest.raises(JsonRpcException, match=why):
            await client.text_document_rename_async(lsp.RenameParams(doc(route), at, new))
    at = span(TEXT, "discharges adoption, monetization", "adoption").start
    with pytest.raises(JsonRpcException, match="already declares an obligation `monetization`"):
        await client.text_document_rename_async(lsp.RenameParams(doc(route), at, "monetization"))
    keyword = position(TEXT, "transition launch", 2)
    assert await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(doc(route), keyword)) is None
    with pytest.raises(JsonRpcException, match="nothing to rename here"):
        await client.text_document_rename_async(lsp.RenameParams(doc(route), keyword, "x"))


@in_module_loop
async def test_an_obligation_of_a_shipped_library_is_not_renamed(client: LanguageClient) -> None:
    shipped = ROOT / "obligations" / "venture.obl"
    assert await open_document(client, shipped, OBL) == []
    at = span(OBL, "obligation adoption", "adoption").start
    with pytest.raises(JsonRpcException, match="shipped with PCSC"):
        await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(doc(shipped), at))


@in_module_loop
async def test_an_open_library_gets_library_diagnostics_not_route_errors(
    client: LanguageClient, workspace: Path
) -> None:
    library = workspace / "sub" / "venture.obl"
    assert await open_document(client, library, OBL) == []  # no PCSC-E220 "belongs in an .obl library"
    broken = OBL.replace("require kill\n    require measured", "require kil\n    require measured", 1)
    broken = broken.replace("covers developers {", "covers developers, nosuch {")
    found = await change(client, library, broken, 2)
    assert sorted((d.code, d.range.start.line) for d in found) == [
        ("PCSC-E205", position(OBL, "obligation adoption").line), ("PCSC-E217", position(OBL, "require kill").line)]
    assert await change(client, library, OBL, 3) == []


@in_module_loop
async def test_workspace_symbols_find_declarations_in_routes_and_libraries(
    client: LanguageClient, workspace: Path
) -> None:
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="monet"))
    assert found is not None
    def where(uri: str) -> str:
        path = Path(to_fs_path(uri) or "")
        return path.relative_to(workspace).as_posix() if path.is_relative_to(workspace) else "open: " + path.name

    named = sorted((s.name, s.kind, where(s.location.uri), s.container_name)
                   for s in found if isinstance(s, lsp.SymbolInformation))
    # a document open outside the workspace (the shipped library, if a test opened it) is searched too
    named = [n for n in named if not n[2].startswith("open: ")]
    assert named == sorted([
        ("monetize", lsp.SymbolKind.Function, "devtools_api.route", "devtools_api"),
        ("monetize", lsp.SymbolKind.Function, "copy.route", "devtools_copy"),
        ("monetize", lsp.SymbolKind.Function, "sub/elsewhere.route", "devtools_copy"),
        ("monetization", lsp.SymbolKind.Interface, "venture.obl", "venture"),
        ("monetization", lsp.SymbolKind.Interface, "sub/venture.obl", "venture"),
    ])
    library = (workspace / "venture.obl").as_uri()
    [symbol] = [s for s in found if isinstance(s, lsp.SymbolInformation) and s.location.uri == library]
    assert symbol.location.range == span(OBL, "obligation monetization", "monetization")


def decode(data: list[int], legend: lsp.SemanticTokensLegend) -> list[tuple[int, int, int, str, list[str]]]:
    out = []
    line = start = 0
    for i in range(0, len(data), 5):
        delta_line, delta_start, length, kind, modifiers = data[i : i + 5]
        line += delta_line
        start = start + delta_start if delta_line == 0 else delta_start
        mods = [m for bit, m in enumerate(legend.token_modifiers) if modifiers & (1 << bit)]
        out.append((line, start, length, legend.token_types[kind], mods))
    return out


@in_module_loop
async def test_semantic_tokens_follow_the_documented_legend(client: LanguageClient, route: Path) -> None:
    provider = INITIALIZED[0].capabilities.semantic_tokens_provider
    assert isinstance(provider, lsp.SemanticTokensOptions) and provider.full
    legend = provider.legend
    page = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    documented = page.split("Semantic token types, in the legend's order: ", 1)[1].split(".", 1)[0]
    assert [t.strip(" `") for t in documented.split(",")] == list(legend.token_types)
    found = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(doc(route)))
    assert found is not None
    tokens = {(line, start): (length, kind, mods) for line, start, length, kind, mods in decode(found.data, legend)}

    def at(needle: str, offset: int = 0) -> tuple[int, str, list[str]]:
        p = position(TEXT, needle, offset)
        return tokens[(p.line, p.character)]

    assert at("# spec") == (len(TEXT.split("\n")[0]), "comment", [])
    assert at("state wedge") == (5, "keyword", [])
    assert at("state wedge", 6) == (5, "struct", ["declaration"])
    assert at("garage -> wedge", 10) == (5, "struct", [])
    assert at("transition launch", 11) == (6, "function", ["declaration"])
    assert at("discharges adoption", 11) == (8, "interface", [])
    assert at("evidence hn_launch", 9) == (9, "event", ["declaration"])
    assert at("developers 500") == (10, "property", [])
    assert at("developers 500", 11) == (3, "number", [])
    assert at('"two founders"') == (len('"two founders"'), "string", [])
    assert at("2012-06-01") == (10, "number", [])
    assert at("90 days", 3) == (4, "keyword", [])  # a unit


@in_module_loop
async def test_fix_all_applies_the_safe_fixes_and_the_layout_never_a_number(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "fixall.route"
    broken = (TEXT.replace("transition launch: garage -> wedge", "transition launch: garage -> wedgee")
              .replace("    state bridge { developers 5k", "state bridge {developers 5k")
              .replace("state scale  { developers 100k", "state scale  { developerz 100k"))
    await open_document(client, path, broken)
    asked = await client.text_document_code_action_async(lsp.CodeActionParams(
        doc(path), lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll])))
    assert asked is not None
    [action] = [a for a in asked if isinstance(a, lsp.CodeAction)]  # no quick fix: only source.fixAll was asked
    assert action.kind == "source.fixAll.pcsc"
    assert action.edit is not None and action.edit.changes is not None
    fixed = apply_edits(broken, list(action.edit.changes[path.as_uri()]))
    # the misspelt state fixed, the layout canonical, the field (a number's source) left to the author
    assert fixed == TEXT.replace("state scale  { developers 100k", "state scale  { developerz 100k")
    assert {d.code for d in analyse(fixed, path).diagnostics if d.severity == "error"} == {"PCSC-E205"}
    assert INITIALIZED[0].capabilities.code_action_provider is not None
    provider = INITIALIZED[0].capabilities.code_action_provider
    assert isinstance(provider, lsp.CodeActionOptions) and "source.fixAll.pcsc" in (provider.code_action_kinds or [])
    await change(client, path, TEXT, 2)
    clean = await client.text_document_code_action_async(lsp.CodeActionParams(
        doc(path), lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.Source])))
    assert not clean  # nothing to fix: no action


@in_module_loop
async def test_a_tour_of_every_advertised_capability(client: LanguageClient, route: Path) -> None:
    """Each capability the server advertises, asked once on the reference route, with
    an answer that says something about it."""
    caps = INITIALIZED[0].capabilities
    ident = doc(route)
    called: set[str] = set()

    def pos(needle: str, offset: int) -> lsp.Position:
        return position(TEXT, needle, offset)

    hover = await client.text_document_hover_async(lsp.HoverParams(ident, pos("launch: garage", 2)))
    assert hover is not None and "p_prior 0.45" in str(hover.contents)
    called.add("hover_provider")
    found = await client.text_document_definition_async(lsp.DefinitionParams(ident, pos("garage -> wedge", 1)))
    assert isinstance(found, lsp.Location) and found.range.start == pos("garage {", 0)
    called.add("definition_provider")
    completion = await client.text_document_completion_async(
        lsp.CompletionParams(ident, pos("discharges adoption", len("discharges ad"))))
    assert isinstance(completion, lsp.CompletionList) and "adoption" in {i.label for i in completion.items}
    called.add("completion_provider")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        ident, lsp.Range(pos("route", 0), pos("route", 0)),
        lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll])))
    assert not actions  # the reference route needs no fix
    called.add("code_action_provider")
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(ident))
    assert symbols and symbols[0].name == "devtools_api"
    called.add("document_symbol_provider")
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(ident))
    assert folds and len(folds) == 13
    called.add("folding_range_provider")
    edits = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(ident, lsp.FormattingOptions(4, True)))
    assert not edits  # already canonical
    called.add("document_formatting_provider")
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(text_document=ident, position=pos("supports  launch", 10),
                            context=lsp.ReferenceContext(include_declaration=True)))
    assert refs is not None and len(refs) == 2
    called.add("references_provider")
    renamed = await client.text_document_rename_async(lsp.RenameParams(ident, pos("evidence hn_launch", 9), "hn"))
    assert renamed is not None and renamed.changes is not None and len(renamed.changes[route.as_uri()]) == 1
    called.add("rename_provider")
    workspace_symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="hn_launch"))
    assert workspace_symbols and {s.name for s in workspace_symbols} == {"hn_launch"}
    called.add("workspace_symbol_provider")
    tokens = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(ident))
    assert tokens is not None and len(tokens.data) > 5 * 100
    called.add("semantic_tokens_provider")

    advertised = {name for name in dir(caps) if name.endswith("_provider") and getattr(caps, name)}
    commands = caps.execute_command_provider
    if commands is not None and not commands.commands:  # pygls's own, naming no command
        advertised.remove("execute_command_provider")
    assert isinstance(caps.rename_provider, lsp.RenameOptions) and caps.rename_provider.prepare_provider
    assert advertised == called


def test_the_server_answers_initialize_without_the_compiler() -> None:
    """What `pcsc lsp` needs to answer `initialize` (benchmarks/bench_lsp_startup.py
    times it): pygls and the server, not the compiler, which is imported after."""
    import subprocess

    probe = ("import sys\nfrom pcsc.lsp.server import Settings, create_server\ncreate_server(Settings())\n"
             "print(' '.join(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=ENV, timeout=120,
                          check=True)
    mods = set(proc.stdout.split())
    assert "pcsc.lsp.server" in mods and "pygls.lsp.server" in mods
    late = ("pcsc.compiler", "pcsc.lsp.analysis", "pcsc.coverage", "pcsc.score", "pcsc.render.sarif", "pcsc.policy",
            "pcsc.analysis", "lark")
    assert sorted(m for m in mods if m.startswith(late)) == []


def test_tokens_stay_on_their_line_and_match_the_text() -> None:
    """A string left open at a backslash before the line's end ends at the line: no
    token spans lines (LSP's semantic tokens are one line each), and every token is
    the text at its position."""
    from pcsc.lsp.names import tokens

    text = TEXT.replace('actor      "two founders"', 'actor      "two \\\n    founders"')
    found = tokens(text)
    lines = text.split("\n")
    assert all(lines[t.line - 1][t.column - 1 : t.end - 1] == t.text for t in found)
    opened = [t for t in found if t.kind == "string" and t.text.startswith('"two')]
    assert [t.text for t in opened] == ['"two ']  # the backslash is left out, as the line ends
