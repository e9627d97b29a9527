"""Lowering: syntax tree -> frozen IR, with every check of DESIGN §3 as diagnostics."""
