"""Seams (docs/coverage.md): splicing, the deletion identity in exact rationals, its
symbolic verification with sympy (imported only here), and the pipeline arm."""
