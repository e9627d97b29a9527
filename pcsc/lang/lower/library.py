"""Lower an .obl file to a `Library`."""

from __future__ import annotations

from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import (
    E205_COVERS_UNKNOWN_FIELD,
    E209_LIBRARY_ITEM_TWICE,
    E209_LIBRARY_TWICE,
    E214_NO_LIBRARY_HEADER,
    E217_UNKNOWN_REQUIRE_NAME,
    E218_UNKNOWN_REQUIRE_FUNCTION,
    E220_ROUTE_IN_LIBRARY,
    E301_BOOL_MATERIALITY,
    E301_MATERIALITY_UNIT,
    E307_NEGATIVE_MATERIALITY,
    E308_UNKNOWN_TYPE,
)
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.ir import FieldDecl, Library, Material, Obligation, Require
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.visit import NodeVisitor
from pcsc.lang.ir.vocabulary import EVIDENCE_NAMES, REQUIRE_FUNCTIONS, REQUIRE_NAMES
from pcsc.lang.lower.common import FIELD_TYPES, check_statement_lines, quantity, suggest
from pcsc.lang.lower.expr import lower_expression, unquote
from pcsc.lang.lower.units import REQUIRE_DIMENSIONS, unit_problems
from pcsc.lang.syntax import nodes as syn


def lower_library(tree: syn.SourceFile, file: str, text: str, diags: Diagnostics) -> Library | None:
    """Return the library in ``tree``, or None when the file has errors. (``text`` is
    no longer read: the parser keeps each `require` line's source.)"""
    before = len(diags)
    header: tuple[str, str] | None = None
    fields: list[FieldDecl] = []
    obligations: list[Obligation] = []
    seen: dict[str, Span] = {}
    check_statement_lines(tree.items, diags)
    for item in tree.items:
        span = item.span
        if isinstance(item, syn.RouteBlock):
            diags.diag(E220_ROUTE_IN_LIBRARY, span)
        elif isinstance(item, syn.LibraryHeader):
            if header is not None:
                diags.diag(E209_LIBRARY_TWICE, span)
            header = (item.name.text, unquote(item.version.text))
        elif isinstance(item, syn.FieldDecl):
            fields.append(_field(item, header, diags))
        else:
            obligations.append(_obligation(item, header, diags))
        if isinstance(item, (syn.FieldDecl, syn.ObligationBlock)):
            key = item.name.text
            if key in seen:
                diags.diag(E209_LIBRARY_ITEM_TWICE, item.name.span, name=key, line=seen[key].line)
            else:
                seen[key] = item.name.span
    if header is None:
        diags.diag(E214_NO_LIBRARY_HEADER, Span(file, 1, 1, 1, 2))
        return None
    field_names = {f.name for f in fields}
    field_types = {f.name: f.type for f in fields}
    for ob in obligations:
        for req in ob.requires:
            for problem in unit_problems(req.expr, REQUIRE_DIMENSIONS, field_types):
                diags.add(codes.E313, problem.message, problem.span, problem.help)
    for ob in obligations:
        for covered, word in zip(ob.covers, _covers_words(tree, ob.name), strict=False):
            if covered not in field_names:
                diags.diag(
                    E205_COVERS_UNKNOWN_FIELD,
                    word.span,
                    obligation=ob.name,
                    field=covered,
                    suggestion=suggest(covered, field_names),
                )
    if any(d.severity == "error" for d in diags.items[before:]):
        return None
    return Library(header[0], header[1], file, tuple(fields), tuple(obligations))


def _covers_words(tree: syn.SourceFile, name: str) -> tuple[syn.Word, ...]:
    for item in tree.items:
        if isinstance(item, syn.ObligationBlock) and item.name.text == name:
            return item.covers
    return ()  # pragma: no cover


def _field(item: syn.FieldDecl, header: tuple[str, str] | None, diags: Diagnostics) -> FieldDecl:
    name, type_name = item.name.text, item.type.text
    if type_name not in FIELD_TYPES:
        diags.diag(
            E308_UNKNOWN_TYPE,
            item.type.span,
            type=type_name,
            suggestion=suggest(type_name, FIELD_TYPES),
            types=", ".join(FIELD_TYPES),
        )
    mat: Material | None = None
    if item.material is not None:
        q = quantity(item.material, diags)
        if q.value < 0:
            diags.diag(E307_NEGATIVE_MATERIALITY, q.span)
        if type_name == "bool":
            diags.diag(E301_BOOL_MATERIALITY, q.span)
        elif q.unit is not None and not (q.unit == "usd" and type_name == "usd"):
            diags.diag(E301_MATERIALITY_UNIT, q.span, field=name, type=type_name, unit=q.unit)
        mat = Material(q.value, q.percent)
    return FieldDecl(name, type_name, mat, header[0] if header else "", item.span)


def _obligation(item: syn.ObligationBlock, header: tuple[str, str] | None, diags: Diagnostics) -> Obligation:
    check_statement_lines(item.items, diags)
    requires = []
    for req in item.items:
        if isinstance(req, syn.Semi):
            continue
        expr = lower_expression(req, diags)
        check_require(expr, diags)
        requires.append(Require("require " + req.text, expr, req.span))
    covered = tuple(w.text for w in item.covers)
    return Obligation(item.name.text, covered, tuple(requires), header[0] if header else "", item.span)


def check_require(expr: ex.Expr, diags: Diagnostics) -> None:
    """Names and functions of a `require` line must be ones the discharger binds
    (pcsc/lang/ir/vocabulary.py); a typo would otherwise refuse every route at gate time."""
    _RequireCheck(diags, inside_evidence=False).visit(expr)


class _RequireCheck(NodeVisitor):
    """Reports unknown names and functions; inside `evidence(...)` the evidence
    record's names are known too."""

    def __init__(self, diags: Diagnostics, inside_evidence: bool) -> None:
        self.diags = diags
        self.names = REQUIRE_NAMES + (EVIDENCE_NAMES if inside_evidence else ())
        self.inside_evidence = inside_evidence

    def visit_Name(self, e: ex.Name) -> None:
        if e.name not in self.names:
            self.diags.diag(
                E217_UNKNOWN_REQUIRE_NAME,
                e.span,
                name=e.name,
                suggestion=suggest(e.name, self.names),
                names=", ".join(f"`{n}`" for n in self.names),
            )

    def visit_Call(self, e: ex.Call) -> None:
        if e.func not in REQUIRE_FUNCTIONS:
            self.diags.diag(
                E218_UNKNOWN_REQUIRE_FUNCTION,
                e.span,
                function=e.func,
                suggestion=suggest(e.func, REQUIRE_FUNCTIONS),
                functions=", ".join(f"`{f}`" for f in REQUIRE_FUNCTIONS),
            )
        inner = _RequireCheck(self.diags, self.inside_evidence or e.func == "evidence")
        for arg in e.args:
            inner.visit(arg)
