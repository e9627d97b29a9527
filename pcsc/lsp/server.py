"""The PCSC language server, over pygls (the optional extra `pcsc[lsp]`).

Every open document is compiled in memory on open and on each change
(`pcsc.lsp.analysis`); its diagnostics, coverage included, are published at once.
Each diagnostic links its code into the docs, and an uncovered change lists the
`require` lines that failed for it. Hover, go-to-definition, completion, the outline
and the quick fixes (`pcsc check --fix`'s edits) query the latest analysis; folding
reads the text alone; formatting runs
`pcsc fmt`'s formatter and its safety check. A request may name only a document the
client opened or a file inside its workspace folders (`PcscServer.readable`).

Positions: PCSC spans are 1-based lines and 1-based columns counted in characters;
LSP positions are 0-based lines and columns in the negotiated encoding (UTF-16 unless
the client offers another). `to_range` and `from_position` convert, through pygls's
position codec.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO
from urllib.parse import unquote

import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, ServerTextPosition, ServerTextRange

from pcsc._version import __version__
from pcsc.base.files import Unreadable, read_text
from pcsc.base.modes import Mode
from pcsc.lsp.names import Name, is_valid_name, name_at, names, tokens

if TYPE_CHECKING:  # the compiler and the renderers are imported when a document is first analysed
    from pcsc.diagnostics.model import Finding, Span
    from pcsc.lsp.analysis import Analysis, Location, Symbol

_SYMBOL_KINDS = {
    "route": lsp.SymbolKind.Module,
    "state": lsp.SymbolKind.Struct,
    "vision": lsp.SymbolKind.Object,
    "transition": lsp.SymbolKind.Function,
    "obligation": lsp.SymbolKind.Interface,
    "evidence": lsp.SymbolKind.Event,
}
_KINDS = {
    "field": lsp.CompletionItemKind.Field,
    "class": lsp.CompletionItemKind.Class,
    "obligation": lsp.CompletionItemKind.Interface,
    "unit": lsp.CompletionItemKind.Unit,
}


@attrs.frozen
class Settings:
    """Search paths and coverage mode given to `pcsc lsp`; a document's `pcsc.toml`
    (found from its folder) adds its own paths after these, and its coverage mode, which
    may only raise a policy's (`Session.mode_for`)."""

    lib_path: tuple[Path, ...] = ()
    policy_path: tuple[Path, ...] = ()
    coverage: Mode | None = None
    config_coverage: Mode | None = None
    docs_url: str | None = None  # the published docs' base URL (`PCSC_DOCS_URL`, `docs_url`)

    def for_folder(self, folder: Path) -> Settings:
        from pcsc.base.config import ConfigError, load_config
        from pcsc.policy.load import check_configured_policies

        try:
            config = load_config(folder)
            check_configured_policies(config)
        except ConfigError:
            return self
        configured = self.config_coverage
        strictest = config.strictest_coverage()  # the nearest file's, or a more demanding one above it
        if strictest is not None:
            configured = strictest[0]  # type: ignore[assignment]
        # a file in the document's folder (or below it) may be the route author's: its
        # folders would choose the route's judges, so they are not used (as PCSC-E407 refuses them)
        authored = config.path is not None and config.path.parent.resolve().is_relative_to(folder.resolve())
        libs, policies = ((), ()) if authored else (config.lib_path, config.policy_path)
        return Settings(
            (*self.lib_path, *(p for p in libs if p not in self.lib_path)),
            (*self.policy_path, *(p for p in policies if p not in self.policy_path)),
            self.coverage,
            configured,
            self.docs_url,
        )


class PcscServer(LanguageServer):
    """A language server that keeps the latest analysis of every open document."""

    def __init__(self, settings: Settings) -> None:
        super().__init__("pcsc", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.settings = settings
        self.analyses: dict[str, Analysis] = {}

    def document_path(self, uri: str) -> Path | None:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return Path(path) if path else None

    def readable(self, uri: str) -> bool:
        """Whether a request may read the document ``uri``: one the client opened, or a
        file inside one of the client's workspace folders (links followed). A request
        naming any other file (`/etc/passwd`) gets nothing, and the file is not read."""
        if unquote(uri) in self.workspace.text_documents:
            return True
        path = self.document_path(uri)
        if path is None:
            return False
        real = Path(os.path.realpath(path))
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()] + [self.workspace.root_path]
        return any(real.is_relative_to(os.path.realpath(f)) for f in folders if f)

    def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text (computed when it is stale);
        None for a document the server may not read (`readable`)."""
        from pcsc.lsp.analysis import analyse

        if not self.readable(uri):
            return None
        doc = self.workspace.get_text_document(uri)
        current = self.analyses.get(uri)
        if current is not None and current.text == doc.source:
            return current
        path = self.document_path(uri)
        settings = self.settings.for_folder(path.parent if path else Path.cwd())
        result = analyse(
            doc.source,
            path,
            lib_path=settings.lib_path,
            policy_path=settings.policy_path,
            coverage=settings.coverage,
            config_coverage=settings.config_coverage,
        )
        self.analyses[uri] = result
        return result

    def refresh(self, uri: str) -> None:
        """Analyse the document and publish its diagnostics."""
        from pcsc.render.doclinks import code_doc_uri

        try:
            result = self.analysis(uri)
        except Exception as exc:  # a bug in pcsc must not take the editor's server down
            self.window_log_message(
                lsp.LogMessageParams(lsp.MessageType.Error, f"pcsc: internal error analysing {uri}: {exc!r}")
            )
            return
        if result is None:
            return
        doc = self.workspace.get_text_document(uri)
        lines = _lines(doc.source)
        codec = self.workspace.position_codec
        related = self.related(uri, result)
        diagnostics = []
        for d in result.diagnostics:
            diagnostic = to_lsp_diagnostic(d, lines, codec)
            href = code_doc_uri(d.code, self.settings.docs_url)
            if href is not None:
                diagnostic.code_description = lsp.CodeDescription(href=href)
            diagnostic.related_information = related.get(_key(d))
            diagnostics.append(diagnostic)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=doc.version)
        )

    def related(self, uri: str, result: Analysis) -> dict[tuple[object, ...], list[lsp.DiagnosticRelatedInformation]]:
        """For each uncovered material change (PCSC-E501/W501), the `require` lines that
        failed for it, as SARIF's related locations give them."""
        from pcsc.render.sarif import refusals_related

        out: dict[tuple[object, ...], list[lsp.DiagnosticRelatedInformation]] = {}
        for unit in result.routes:
            compiled = unit.compiled(())
            if compiled is None:
                continue
            for finding, _, places in refusals_related(compiled, result.text):
                if places:
                    out[_key(finding)] = [
                        lsp.DiagnosticRelatedInformation(self.location(uri, self.place(r.span, result)), r.message)
                        for r in places
                    ]
        return out

    @staticmethod
    def place(span: Span, result: Analysis) -> Location:
        from pcsc.lsp.analysis import Location

        path = None if span.file == result.shown else Path(span.file).absolute()  # shown relative to the working folder
        return Location(path, span.line, span.column, span.end_line, span.end_column)

    def location(self, uri: str, where: Location) -> lsp.Location:
        """An LSP location for a PCSC location (in this document or another file)."""
        if where.path is None:
            target_uri, text = uri, self.workspace.get_text_document(uri).source
        else:
            target_uri = from_fs_path(str(where.path)) or where.path.as_uri()
            try:
                text = read_text(where.path)
            except Unreadable:
                text = ""
        span = (where.line, where.column, where.end_line, where.end_column)
        return lsp.Location(uri=target_uri, range=to_range(span, _lines(text), self.workspace.position_codec))


    def fix_all(self, uri: str) -> str | None:
        """The document with every safe fix applied, round after round as `pcsc check
        --fix` applies them (none changes a number), then in `pcsc fmt`'s layout when
        formatting is safe; None when that is the text already."""
        from pcsc.analysis.fixes import apply_fixes, fixes
        from pcsc.lsp.analysis import analyse, format_document

        original = text = self.workspace.get_text_document(uri).source
        path = self.document_path(uri)
        settings = self.settings.for_folder(path.parent if path else Path.cwd())
        for _ in range(FIX_ROUNDS):
            result = analyse(text, path, lib_path=settings.lib_path, policy_path=settings.policy_path,
                             coverage=settings.coverage, config_coverage=settings.config_coverage)
            safe = [f for f in fixes(result.diagnostics, {result.shown: text}) if f.safe]
            text, applied = apply_fixes(text, safe)
            if not applied:
                break
        formatted = format_document(text, path, lib_path=settings.lib_path, policy_path=settings.policy_path)
        if formatted is not None:
            text = formatted
        return None if text == original else text

    # ------------------------------------------------------------------ names across files
    def text_of(self, uri: str) -> str | None:
        """The current text of an open document, else of the file on disk (None if unreadable)."""
        if unquote(uri) in self.workspace.text_documents:
            return self.workspace.get_text_document(uri).source
        path = self.document_path(uri)
        if path is None:
            return None
        try:
            return read_text(path)
        except Unreadable:
            return None

    def sources(self) -> list[tuple[str, str]]:
        """(uri, text) of every open document and of every `.route` and `.obl` file in
        the workspace folders (the open text where a file is open), in a stable order."""
        out = {unquote(uri): doc.source for uri, doc in self.workspace.text_documents.items()}
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()] or [self.workspace.root_path]
        seen = 0
        for folder in folders:
            if not folder:
                continue
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
                for f in sorted(files):
                    if not f.endswith((".route", ".obl")):
                        continue
                    seen += 1
                    if seen > MAX_WORKSPACE_FILES:
                        return sorted(out.items())
                    uri = from_fs_path(os.path.join(root, f)) or Path(root, f).as_uri()
                    if uri not in out:
                        text = self.text_of(uri)
                        if text is not None:
                            out[uri] = text
        return sorted(out.items())

    def name_location(self, uri: str, n: Name, text: str | None = None) -> lsp.Location:
        source = text if text is not None else self.text_of(uri) or ""
        span = (n.line, n.column, n.line, n.end)
        return lsp.Location(uri=uri, range=to_range(span, _lines(source), self.workspace.position_codec))

    def occurrences(self, uri: str, position: lsp.Position) -> tuple[Name, list[tuple[str, Name]]] | None:
        """The state, transition, obligation or evidence name at the position, and every
        place it is declared or used: a state, transition or evidence name in its route;
        an obligation in the library that declares it and in every route (open, or in
        the workspace) that uses that library. None when no such name is there."""
        if not self.readable(uri):
            return None
        text = self.workspace.get_text_document(uri).source
        found = names(text)
        line, column = from_position(position, _lines(text), self.workspace.position_codec)
        target = name_at(found, line, column)
        if target is None or target.kind not in RENAMED:
            return None
        if target.kind != "obligation":
            return target, [(uri, n) for n in found
                            if n.kind == target.kind and n.text == target.text and n.route == target.route]
        library = self.library_of(uri, target)
        if library is None:  # an obligation no library declares: its uses in this document
            return target, [(uri, n) for n in found if n.kind == "obligation" and n.text == target.text]
        library_uri = from_fs_path(str(library)) or library.as_uri()
        places: list[tuple[str, Name]] = []
        library_text = self.text_of(library_uri) or ""
        places += [(library_uri, n) for n in names(library_text)
                   if n.kind == "obligation" and n.text == target.text and n.declaration]
        for other, source in self.sources():
            if other == library_uri or target.text not in source or other.endswith(".obl"):
                continue
            if other != uri and not self.uses(other, source, library):
                continue
            places += [(other, n) for n in names(source) if n.kind == "obligation" and n.text == target.text]
        if uri not in {u for u, _ in places}:
            places += [(uri, n) for n in found if n.kind == "obligation" and n.text == target.text]
        return target, places

    def library_of(self, uri: str, target: Name) -> Path | None:
        """The `.obl` file that declares the obligation ``target`` names."""
        path = self.document_path(uri)
        if path is not None and path.suffix == ".obl":
            return path.resolve()
        result = self.analysis(uri)
        if result is None:
            return None
        declared = result.obligations().get(target.text)
        return Path(declared.span.file).resolve() if declared is not None else None

    def uses(self, uri: str, text: str, library: Path) -> bool:
        """Whether the route file at ``uri`` uses the library at ``library`` (its `uses`
        names it, and it resolves from the route's folder to that file)."""
        from pcsc.base.resources import data_dir

        path = self.document_path(uri)
        if path is None:
            return False
        if library.stem not in {n.text for n in names(text) if n.kind == "library" and not n.declaration}:
            return False
        settings = self.settings.for_folder(path.parent)
        for root in (path.parent, *settings.lib_path, data_dir("obligations")):
            candidate = Path(root) / library.name
            if candidate.is_file():
                return candidate.resolve() == library
        return False

    def refuse_shipped(self, target: Name, places: list[tuple[str, Name]]) -> None:
        """A rename may not edit a library shipped with PCSC (its text is pinned)."""
        from pcsc.base.resources import data_dir

        shipped = data_dir("obligations").resolve()
        for uri, _ in places:
            path = self.document_path(uri)
            if path is not None and path.resolve().is_relative_to(shipped):
                raise JsonRpcException(
                    f"pcsc: `{target.text}` is declared in a library shipped with PCSC ({path.name}), whose text "
                    "policies pin: copy the library beside the route to rename it there", code=REQUEST_FAILED)

    def clash(self, uri: str, target: Name, places: list[tuple[str, Name]], new: str) -> str | None:
        """Why ``new`` would clash with a name already declared, if it would."""
        what = target.kind if target.kind != "evidence" else "evidence item"
        if target.kind != "obligation":
            text = self.workspace.get_text_document(uri).source
            for n in names(text):
                if n.kind == target.kind and n.declaration and n.text == new and n.route == target.route:
                    return f"the route already declares a {what} `{new}` (line {n.line})"
            return None
        for where, _ in places:
            source = self.text_of(where) or ""
            for n in names(source):
                if n.kind == "obligation" and n.declaration and n.text == new:
                    return f"the library already declares an obligation `{new}` (line {n.line})"
        for where, _ in places:
            if where.endswith(".route"):
                result = self.analysis(where) if self.readable(where) else None
                if result is not None and new in result.obligations():
                    o = result.obligations()[new]
                    return f"a library the route uses already declares an obligation `{new}` ({o.span.file})"
        return None


def _import_compiler() -> None:
    """Import what analysing a document needs (the compiler, the renderers)."""
    import pcsc.analysis.fixes
    import pcsc.lsp.analysis
    import pcsc.render.doclinks
    import pcsc.render.sarif  # noqa: F401


def _key(d: Finding) -> tuple[object, ...]:
    return d.code, d.span, d.message


def _lines(text: str) -> list[str]:
    return text.split("\n")


def to_range(span: tuple[int, int, int, int], lines: Sequence[str], codec: PositionCodec) -> lsp.Range:
    """A PCSC span (1-based line and character column, end exclusive) as an LSP range
    (0-based, in the client's units). Column 0 (a whole line or file) is its start."""
    line, column, end_line, end_column = span
    start = ServerTextPosition(max(line - 1, 0), max(column - 1, 0))
    end = ServerTextPosition(max(end_line - 1, 0), max(end_column - 1, 0))
    return codec.range_to_client_units(lines, ServerTextRange(start, end))


def from_position(position: lsp.Position, lines: Sequence[str], codec: PositionCodec) -> tuple[int, int]:
    """An LSP position as a PCSC (line, column), both 1-based, the column in characters."""
    server = codec.position_from_client_units(lines, lsp.Position(position.line, position.character))
    return server.line + 1, server.character + 1


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    """Whether two ranges share a position (an empty range touching the other counts)."""
    def key(p: lsp.Position) -> tuple[int, int]:
        return p.line, p.character
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def to_lsp_diagnostic(d: Finding, lines: Sequence[str], codec: PositionCodec) -> lsp.Diagnostic:
    s = d.span
    return lsp.Diagnostic(
        range=to_range((s.line, s.column, s.end_line, s.end_column), lines, codec),
        message=d.message + (f"\nhelp: {d.help}" if d.help else ""),
        severity=lsp.DiagnosticSeverity.Error if d.severity == "error" else lsp.DiagnosticSeverity.Warning,
        code=d.code,
        source="pcsc",
    )


def create_server(settings: Settings | None = None) -> PcscServer:
    """A server with every feature registered; `serve` runs it over stdio."""
    server = PcscServer(settings or Settings())

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: PcscServer, params: lsp.InitializedParams) -> None:
        # the answer to `initialize` went out before the compiler was imported; import it
        # now, while the editor opens its first document
        threading.Thread(target=_import_compiler, name="pcsc-import", daemon=True).start()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PcscServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PcscServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PcscServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.analyses.pop(params.text_document.uri, None)  # libraries or policies may have changed
        ls.refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PcscServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.analyses.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: PcscServer, params: lsp.HoverParams) -> lsp.Hover | None:
        uri = params.text_document.uri
        result = ls.analysis(uri)
        if result is None:
            return None
        line, column = from_position(params.position, _lines(result.text), ls.workspace.position_codec)
        text = result.hover(line, column)
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: PcscServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        uri = params.text_document.uri
        result = ls.analysis(uri)
        if result is None:
            return None
        line, column = from_position(params.position, _lines(result.text), ls.workspace.position_codec)
        where = result.definition(line, column)
        return None if where is None else ls.location(uri, where)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=['"']))
    def completion(ls: PcscServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        uri = params.text_document.uri
        result = ls.analysis(uri)
        if result is None:
            return lsp.CompletionList(is_incomplete=False, items=[])
        lines = _lines(result.text)
        codec = ls.workspace.position_codec
        line, column = from_position(params.position, lines, codec)
        items = []
        for c in result.completion(line, column):
            edit_range = to_range((line, c.replace_from, line, column), lines, codec)
            items.append(
                lsp.CompletionItem(
                    label=c.label,
                    kind=_KINDS[c.kind],
                    detail=c.detail,
                    text_edit=lsp.TextEdit(range=edit_range, new_text=c.label),
                )
            )
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL]),
    )
    def code_action(ls: PcscServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        from pcsc.analysis.fixes import fix_for

        uri = params.text_document.uri
        result = ls.analysis(uri)
        if result is None:
            return []
        only = params.context.only
        actions = []
        if only is not None and _requested(FIX_ALL, only):
            fixed = ls.fix_all(uri)
            if fixed is not None:
                lines = _lines(result.text)
                whole = to_range((1, 1, len(lines), len(lines[-1]) + 1), lines, ls.workspace.position_codec)
                actions.append(lsp.CodeAction(
                    title="Fix all: the safe fixes of `pcsc check --fix`, then `pcsc fmt`",
                    kind=FIX_ALL,
                    edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(whole, fixed)]}),
                ))
        if only is not None and not _requested(lsp.CodeActionKind.QuickFix, only):
            return actions
        lines = _lines(result.text)
        codec = ls.workspace.position_codec
        for d in result.diagnostics:
            fix = fix_for(d, result.text) if d.span.file == result.shown else None
            if fix is None:
                continue
            diagnostic = to_lsp_diagnostic(d, lines, codec)
            if not _overlaps(diagnostic.range, params.range):
                continue
            where = to_range((fix.line, fix.start, fix.line, fix.end), lines, codec)
            edit = lsp.TextEdit(range=where, new_text=fix.new)
            unsafe = "" if fix.safe else " (unsafe: may change a number)"
            actions.append(
                lsp.CodeAction(
                    title=f"Replace `{fix.old}` with `{fix.new}`{unsafe}",
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=fix.safe,  # `pcsc check --fix` applies only these
                    edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
                )
            )
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: PcscServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        result = ls.analysis(params.text_document.uri)
        if result is None:
            return []
        lines = _lines(result.text)
        codec = ls.workspace.position_codec

        def convert(s: Symbol) -> lsp.DocumentSymbol:
            return lsp.DocumentSymbol(
                name=s.name,
                kind=_SYMBOL_KINDS[s.kind],
                detail=s.detail or None,
                range=to_range(s.where, lines, codec),
                selection_range=to_range(s.name_at, lines, codec),
                children=[convert(c) for c in s.children] or None,
            )

        return [convert(s) for s in result.symbols()]

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding_range(ls: PcscServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        from pcsc.lsp.analysis import folds

        uri = params.text_document.uri
        if not ls.readable(uri):
            return []
        text = ls.workspace.get_text_document(uri).source
        out = []
        for first, last, kind in folds(text):
            if kind == "comment":
                out.append(lsp.FoldingRange(first - 1, last - 1, kind=lsp.FoldingRangeKind.Comment))
            elif last - 1 > first:  # the closing brace's line stays shown
                out.append(lsp.FoldingRange(first - 1, last - 2))
        return out

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(ls: PcscServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
        from pcsc.lsp.analysis import format_document

        uri = params.text_document.uri
        if not ls.readable(uri):
            return []
        text = ls.workspace.get_text_document(uri).source
        path = ls.document_path(uri)
        settings = ls.settings.for_folder(path.parent if path else Path.cwd())
        formatted = format_document(text, path, lib_path=settings.lib_path, policy_path=settings.policy_path)
        if formatted is None:
            return []
        lines = _lines(text)
        whole = to_range((1, 1, len(lines), len(lines[-1]) + 1), lines, ls.workspace.position_codec)
        return [lsp.TextEdit(range=whole, new_text=formatted)]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(ls: PcscServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        found = ls.occurrences(params.text_document.uri, params.position)
        if found is None:
            return []
        return [
            ls.name_location(uri, n) for uri, n in found[1] if params.context.include_declaration or not n.declaration
        ]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: PcscServer, params: lsp.PrepareRenameParams) -> lsp.Range | None:
        found = ls.occurrences(params.text_document.uri, params.position)
        if found is None:
            return None
        ls.refuse_shipped(found[0], found[1])
        return ls.name_location(params.text_document.uri, found[0]).range

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename(ls: PcscServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        uri = params.text_document.uri
        found = ls.occurrences(uri, params.position)
        if found is None:
            raise JsonRpcException("pcsc: nothing to rename here (a state, a transition, an obligation or an "
                                   "evidence name can be renamed)", code=REQUEST_FAILED)
        target, places = found
        ls.refuse_shipped(target, places)
        new = params.new_name
        if not is_valid_name(new):
            raise JsonRpcException(
                f"pcsc: `{new}` is not a name: a letter or `_`, then letters, digits or `_`, and not a keyword "
                "or a unit", code=REQUEST_FAILED)
        if new == target.text:
            return None
        clash = ls.clash(uri, target, places, new)
        if clash is not None:
            raise JsonRpcException(f"pcsc: cannot rename `{target.text}` to `{new}`: {clash}", code=REQUEST_FAILED)
        changes: dict[str, list[lsp.TextEdit]] = {}
        for where, n in places:
            changes.setdefault(where, []).append(lsp.TextEdit(ls.name_location(where, n).range, new))
        return lsp.WorkspaceEdit(changes=changes)

    @server.feature(lsp.WORKSPACE_SYMBOL)
    def workspace_symbol(ls: PcscServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
        query = params.query.lower()
        out: list[lsp.SymbolInformation] = []
        for uri, text in ls.sources():
            container = ""
            for n in names(text):
                if not n.declaration:
                    continue
                if n.kind in ("route", "library"):
                    container = n.text
                if not _matches(query, n.text.lower()):
                    continue
                out.append(lsp.SymbolInformation(
                    name=n.text,
                    kind=_SYMBOL_KINDS.get(n.kind, lsp.SymbolKind.Field),
                    location=ls.name_location(uri, n, text),
                    container_name=None if n.kind in ("route", "library") else container or None,
                ))
                if len(out) >= MAX_WORKSPACE_SYMBOLS:
                    return out
        return out

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, lsp.SemanticTokensLegend(TOKEN_TYPES, TOKEN_MODIFIERS))
    def semantic_tokens(ls: PcscServer, params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
        uri = params.text_document.uri
        if not ls.readable(uri):
            return lsp.SemanticTokens(data=[])
        return lsp.SemanticTokens(data=encode_tokens(ls.workspace.get_text_document(uri).source,
                                                     ls.workspace.position_codec))

    return server


FIX_ALL = "source.fixAll.pcsc"
FIX_ROUNDS = 10  # as `pcsc check --fix`: a fix can let the text lower further, and show the next one


def _requested(kind: str, only: Sequence[str]) -> bool:
    """Whether a code action of ``kind`` is among those ``only`` asks for (a kind asks
    for itself and the kinds under it: `source` for `source.fixAll.pcsc`)."""
    return any(kind == k or kind.startswith(k + ".") for k in only)


#: Semantic token types, in the legend's order: what each PCSC token is shown as.
TOKEN_TYPES = ["keyword", "namespace", "struct", "function", "interface", "event", "property", "variable",
               "number", "string", "comment", "operator"]
TOKEN_MODIFIERS = ["declaration"]
_TOKEN_OF_NAME = {"route": "namespace", "library": "namespace", "state": "struct", "transition": "function",
                  "obligation": "interface", "evidence": "event", "field": "property"}
_TOKEN_OF_KIND = {"keyword": "keyword", "unit": "keyword", "number": "number", "date": "number",
                  "string": "string", "comment": "comment", "operator": "operator"}
MAX_WORKSPACE_SYMBOLS = 1000
MAX_WORKSPACE_FILES = 5000
REQUEST_FAILED = -32803  # LSP's RequestFailed
RENAMED = frozenset({"state", "transition", "obligation", "evidence"})


def encode_tokens(text: str, codec: PositionCodec) -> list[int]:
    """The text's semantic tokens, in LSP's relative encoding (line delta, start delta,
    length, type, modifiers), columns in the client's units."""
    by_place = {(n.line, n.column): n for n in names(text)}
    lines = _lines(text)
    data: list[int] = []
    last_line, last_start = 0, 0
    for t in tokens(text):
        declaration = False
        if t.kind == "name":
            n = by_place.get((t.line, t.column))
            kind = _TOKEN_OF_NAME.get(n.kind, "variable") if n is not None else "variable"
            declaration = n is not None and n.declaration
        else:
            kind = _TOKEN_OF_KIND.get(t.kind, "")
        if not kind:
            continue
        line = lines[t.line - 1]
        start = codec.client_num_units(line[: t.column - 1])
        length = codec.client_num_units(t.text)
        row = t.line - 1
        data += [row - last_line, start - last_start if row == last_line else start, length,
                 TOKEN_TYPES.index(kind), 1 if declaration else 0]
        last_line, last_start = row, start
    return data


def _matches(query: str, name: str) -> bool:
    """Whether the query's characters appear in the name in order (as editors match)."""
    at = 0
    for char in query:
        at = name.find(char, at) + 1
        if at == 0:
            return False
    return True


MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest message body the server reads (`Content-Length`): a longer one closes
the connection before anything is read or allocated for it."""
MAX_HEADER_BYTES = 8192
"""The longest header line the server reads."""


class BoundedInput:
    """Standard input as pygls reads it (`readline` for headers, `read` for a body),
    every header line and message body bounded: past a bound, the reason is written to
    standard error and the stream reads as ended, so the server shuts down cleanly
    instead of allocating what a client announced."""

    def __init__(self, stream: BinaryIO, errors: TextIO) -> None:
        self.stream = stream
        self.errors = errors
        self.refused: str | None = None

    def readline(self) -> bytes:
        line = self.stream.readline(MAX_HEADER_BYTES + 1)
        if len(line) > MAX_HEADER_BYTES:
            return self._refuse(f"a header line longer than {MAX_HEADER_BYTES:,} bytes")
        return line

    def read(self, n: int) -> bytes:
        if n > MAX_MESSAGE_BYTES:
            return self._refuse(f"a message of {n:,} bytes (Content-Length); the limit is {MAX_MESSAGE_BYTES:,}")
        return self.stream.read(n)

    def _refuse(self, what: str) -> bytes:
        self.refused = what
        self.errors.write(f"pcsc lsp: the client sent {what}: closing the connection\n")
        self.errors.flush()
        return b""


def serve(settings: Settings | None = None) -> str | None:
    """Run the language server over standard input and output until the client exits;
    the reason it closed the connection itself (a message over a bound), if it did."""
    stdin = BoundedInput(sys.stdin.buffer, sys.stderr)
    create_server(settings).start_io(stdin=stdin)  # type: ignore[arg-type]
    return stdin.refused
