"""Parsing: the Lark grammar in grammar/pcsc.lark, syntax errors as diagnostics, and
the typed parse-level nodes (`pcsc.lang.syntax.nodes`) lowering reads."""

from pcsc.lang.syntax.parser import parse_expression, parse_source, parse_tree

__all__ = ["parse_expression", "parse_source", "parse_tree"]
