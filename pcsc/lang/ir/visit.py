"""The one traversal of expression IR: `children`, `walk`, and the `Visitor` base.

Every pass that reads expressions (the route and library checks, the policy rule
checks, the interpreter, the coverage bounds, the resolver) goes through here, so a
new expression node is added in `pcsc/lang/ir/expr.py`, `children` and the passes that
must treat it specially, and nowhere else.

`Visitor[R]` dispatches on the node's class to `visit_<ClassName>` (`visit_Compare`),
falling back to `generic_visit`. The dispatch table is built once per visitor class,
so a visit costs one dict lookup: the interpreter runs on the scoring hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Generic, TypeVar, get_args

from pcsc.lang.ir import expr as ex

R = TypeVar("R")

EXPR_CLASSES: tuple[type[ex.Expr], ...] = get_args(ex.Expr)


def children(e: ex.Expr) -> tuple[ex.Expr, ...]:
    """The direct sub-expressions of ``e``, in source order."""
    if isinstance(e, (ex.Binary, ex.Compare)):
        return (e.left, e.right)
    if isinstance(e, ex.Logic):
        return e.operands
    if isinstance(e, (ex.Neg, ex.Not)):
        return (e.operand,)
    if isinstance(e, ex.Call):
        return e.args
    if isinstance(e, ex.Attribute):
        return (e.obj,)
    return ()  # literals and names


def walk(e: ex.Expr) -> Iterator[ex.Expr]:
    """``e`` and every expression under it, pre-order, in source order."""
    yield e
    for child in children(e):
        yield from walk(child)


class Visitor(Generic[R]):
    """Base for passes over one expression: override `visit_<ClassName>` methods and,
    where some classes share a treatment, `generic_visit`."""

    _dispatch: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {
            node: getattr(cls, f"visit_{node.__name__}", cls.generic_visit) for node in EXPR_CLASSES
        }

    def visit(self, e: ex.Expr) -> R:
        result: R = self._dispatch[type(e)](self, e)
        return result

    def generic_visit(self, e: ex.Expr) -> R:
        raise NotImplementedError(f"{type(self).__name__} has no visit_{type(e).__name__}")


class NodeVisitor(Visitor[None]):
    """A visitor for its effects: by default it visits the node's children in order."""

    def generic_visit(self, e: ex.Expr) -> None:
        for child in children(e):
            self.visit(child)
