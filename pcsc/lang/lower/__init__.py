"""Lowering: syntax tree -> frozen IR, with every check of docs/language.md as diagnostics."""
