"""Lower an .obl file to a `Library`."""

from __future__ import annotations

from lark import Token, Tree

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.ir import FieldDecl, Library, Material, Obligation, Require
from pcsc.ir import expr as ex
from pcsc.ir.visit import NodeVisitor
from pcsc.ir.vocabulary import EVIDENCE_NAMES, REQUIRE_FUNCTIONS, REQUIRE_NAMES
from pcsc.lower.common import FIELD_TYPES, check_statement_lines, quantity, suggest
from pcsc.lower.expr import ExprLowerer, span_of, unquote
from pcsc.lower.tree import opt_sub, sub, subtrees, tok, tokens


def lower_library(tree: Tree[Token], file: str, text: str, diags: Diagnostics) -> Library | None:
    """Return the library in ``tree``, or None when the file has errors."""
    before = len(diags)
    header: tuple[str, str] | None = None
    fields: list[FieldDecl] = []
    obligations: list[Obligation] = []
    seen: dict[str, Span] = {}
    check_statement_lines(tree.children, file, diags)
    exprs = ExprLowerer(file, diags)
    for item in tree.children:
        if not isinstance(item, Tree):
            continue
        span = span_of(item, file)
        if item.data == "route":
            diags.add(codes.E220, "a route cannot stand in an obligation library", span, "routes go in .route files")
        elif item.data == "library":
            if header is not None:
                diags.add(codes.E209, "the library is declared twice", span)
            header = (str(tok(item, 0)), unquote(tok(item, 1)))
        elif item.data == "field_decl":
            fields.append(_field(item, file, header, diags))
        elif item.data == "obligation":
            obligations.append(_obligation(item, file, text, header, exprs))
        if item.data in ("field_decl", "obligation"):
            key = str(item.children[0])
            if key in seen:
                diags.add(
                    codes.E209,
                    f"`{key}` is defined twice",
                    span_of(item.children[0], file),
                    f"first defined at line {seen[key].line}",
                )
            else:
                seen[key] = span_of(item.children[0], file)
    if header is None:
        diags.add(
            codes.E214, 'an obligation library must start with `library NAME version "X"`', Span(file, 1, 1, 1, 2)
        )
        return None
    field_names = {f.name for f in fields}
    for ob in obligations:
        for covered, node in zip(ob.covers, _covers_tokens(tree, ob.name), strict=False):
            if covered not in field_names:
                diags.add(
                    codes.E205,
                    f"obligation `{ob.name}` covers unknown field `{covered}`",
                    span_of(node, file),
                    suggest(covered, field_names),
                )
    if any(d.severity == "error" for d in diags.items[before:]):
        return None
    return Library(header[0], header[1], file, tuple(fields), tuple(obligations))


def _covers_tokens(tree: Tree[Token], name: str) -> list[Token]:
    for item in tree.children:
        if isinstance(item, Tree) and item.data == "obligation" and str(item.children[0]) == name:
            return tokens(sub(item, 1))
    return []  # pragma: no cover


def _field(item: Tree[Token], file: str, header: tuple[str, str] | None, diags: Diagnostics) -> FieldDecl:
    name, ftype, material = tok(item, 0), tok(item, 1), opt_sub(item, 2)
    span = span_of(item, file)
    type_name = str(ftype)
    if type_name not in FIELD_TYPES:
        diags.add(
            codes.E308,
            f"unknown field type `{type_name}`",
            span_of(ftype, file),
            suggest(type_name, FIELD_TYPES) or f"the types are {', '.join(FIELD_TYPES)}",
        )
    mat: Material | None = None
    if material is not None:
        q = quantity(sub(material, 0), file, diags)
        if q.value < 0:
            diags.add(codes.E307, "a materiality threshold cannot be negative", q.span)
        if type_name == "bool":
            diags.add(codes.E301, "a bool field takes no materiality threshold: any change is material", q.span)
        elif q.unit is not None and not (q.unit == "usd" and type_name == "usd"):
            diags.add(
                codes.E301, f"field `{name}` is of type {type_name}; the threshold cannot be in `{q.unit}`", q.span
            )
        mat = Material(q.value, q.percent)
    return FieldDecl(str(name), type_name, mat, header[0] if header else "", span)


def _obligation(
    item: Tree[Token], file: str, text: str, header: tuple[str, str] | None, exprs: ExprLowerer
) -> Obligation:
    name, covers = tok(item, 0), sub(item, 1)
    check_statement_lines(item.children[2:], file, exprs.diags)
    requires = []
    for req in subtrees(item, 2):
        expr_tree = sub(req, 0)
        src = text[expr_tree.meta.start_pos : expr_tree.meta.end_pos]
        expr = exprs.lower(expr_tree)
        check_require(expr, exprs.diags)
        requires.append(Require("require " + src, expr, span_of(req, file)))
    covered = tuple(str(t) for t in tokens(covers))
    return Obligation(str(name), covered, tuple(requires), header[0] if header else "", span_of(item, file))


def check_require(expr: ex.Expr, diags: Diagnostics) -> None:
    """Names and functions of a `require` line must be ones the discharger binds
    (pcsc/ir/vocabulary.py); a typo would otherwise refuse every route at gate time."""
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
            self.diags.add(
                codes.E217,
                f"unknown name `{e.name}` in a `require` line",
                e.span,
                suggest(e.name, self.names) or "a require line may use " + ", ".join(f"`{n}`" for n in self.names),
            )

    def visit_Call(self, e: ex.Call) -> None:
        if e.func not in REQUIRE_FUNCTIONS:
            self.diags.add(
                codes.E218,
                f"unknown function `{e.func}` in a `require` line",
                e.span,
                suggest(e.func, REQUIRE_FUNCTIONS)
                or "the functions are " + ", ".join(f"`{f}`" for f in REQUIRE_FUNCTIONS),
            )
        inner = _RequireCheck(self.diags, self.inside_evidence or e.func == "evidence")
        for arg in e.args:
            inner.visit(arg)
