"""Parsing: the Lark grammar in grammar/pcsc.lark, syntax errors as diagnostics, and
the typed parse-level nodes (`pcsc.syntax.nodes`) lowering reads."""

from pcsc.syntax.parser import parse_expression, parse_source, parse_tree

__all__ = ["parse_expression", "parse_source", "parse_tree"]
