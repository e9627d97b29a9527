"""How text output writes numbers and counts: the one place for both.

JSON keeps exact values (the shortest float repr, `pcsc.base.canonical`); text shows a
person what a number is, without the noise of a binary float (`613333.3333333333`,
`0.29759615384615384`, `99000.0`): every text view formats numbers through here.

- `money`: an amount in USD, two decimals (`613,333.33`), from 1e15 on in exponent
  form (`-1.5e+308`, not 309 digits);
- `probability`: a p, four decimals, as the compile table shows it (`0.2976`);
- `number`: any other value: a whole number with thousands separators (`4,800`,
  `900,000`), at least 1,000 with two decimals (`613,333.33`), below that six
  significant digits at most (`0.297596`, `2.2303`), and very large or very small
  values in exponent form (`1.5e+20`, `3e-07`);
- `plural`: a count and its noun, singular for one (`1 file`, `2 files`).

Route-language literals (`pcsc.lang.printer.number`, which must read back exactly) and the
compact labels of a picture (`pcsc.render.graph.compact`: `1.2M`) are formats of their
own, not text for reading.
"""

from __future__ import annotations


def money(x: float) -> str:
    """``613,333.33``: an amount, two decimals (exponent form from 1e15 on)."""
    return f"{x:.6g}" if abs(x) >= 1e15 else f"{x:,.2f}"


def probability(p: float) -> str:
    """``0.2976``: a probability (or a weight in [0, 1]), four decimals."""
    return f"{p:.4f}"


def number(x: float | bool) -> str:
    """A value as a person reads it (see the module docstring)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x != 0 and (abs(x) >= 1e15 or abs(x) < 1e-4):
        return f"{x:.6g}"
    if x == int(x):
        return f"{int(x):,}"
    if abs(x) >= 1000:
        return f"{x:,.2f}"
    return f"{x:.6g}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 file``, ``2 files``, ``0 files``; ``many`` for a plural that is not word + s."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
