"""Parsing: the Lark grammar in grammar/pcsc.lark, and syntax errors as diagnostics."""

from pcsc.syntax.parser import parse_expression, parse_source

__all__ = ["parse_expression", "parse_source"]
