"""Exact arithmetic on floats, for the numbers whose float rounding would break an
invariant: W must not fall when supporting evidence is added, and a delta-indexed
floor must be exactly its breakpoint's value there and never fall as |Δ| grows.

Every finite float is a dyadic rational n / 2**k, so sums and products of floats are
exact in Python integers, and `int / int` rounds correctly, once. This is what
`fractions.Fraction` would give, several times faster (no gcd on every step), and
the same on every platform (no libm).
"""

from __future__ import annotations


def dyadic(x: float) -> tuple[int, int]:
    """(n, k) with x == n / 2**k exactly and k >= 0."""
    n, d = float(x).as_integer_ratio()
    return n, d.bit_length() - 1


def common(*xs: float) -> tuple[list[int], int]:
    """Integers n_i and one k >= 0 with xs[i] == n_i / 2**k for every i."""
    pairs = [dyadic(x) for x in xs]
    k = max(p for _, p in pairs)
    return [n << (k - p) for n, p in pairs], k
