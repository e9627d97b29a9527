"""How text output writes numbers and counts: the one place for both.

JSON keeps exact values (the shortest float repr, `pcsc.base.canonical`); text shows a
person what a number is, without the noise of a binary float (`613333.3333333333`,
`0.29759615384615384`, `99000.0`): every text view formats numbers through here.

- `money`: an amount in USD, two decimals (`613,333.33`; `613,333` with ``places=0``,
  `+1,200.00` with ``signed``), from 1e15 on in exponent form (`-1.5e+308`, not 309 digits);
- `probability`: a p, four decimals, as the compile table shows it (`0.2976`);
- `points`: a criteria score T, two decimals (`61.50`);
- `significant`: a rate or factor in significant digits, six unless told (`0.297596`,
  `1.5e+20`), as a message quotes a number;
- `number`: any other value: a whole number with thousands separators (`4,800`,
  `900,000`), at least 1,000 with two decimals (`613,333.33`), below that six
  significant digits at most (`0.297596`, `2.2303`), and very large or very small
  values in exponent form (`1.5e+20`, `3e-07`);
- `percent`: a share as a percentage (`12.5%`, `11,970%`);
- `compact`: a value for a picture's label (`5,000`, `1.2M`, `35%`);
- `byte_size`: a size in bytes (`512 bytes`, `4.0 KB`, `12.3 MB`);
- `plural`: a count and its noun, singular for one (`1 file`, `2 files`).

Route-language literals (`pcsc.lang.printer.number`, which must read back exactly) are
source text, not text for reading; the statistics of `evaluate` and the learning loop
(AUC `0.712`, Brier `0.2104`) keep the fixed decimals of their tables; the certificate
checker imports nothing of PCSC.
"""

from __future__ import annotations


def money(x: float, places: int = 2, signed: bool = False) -> str:
    """``613,333.33``: an amount, two decimals unless told (exponent form from 1e15 on);
    ``signed`` writes the sign of a change (`+1,200.00`)."""
    sign = "+" if signed else ""
    return f"{x:{sign}.6g}" if abs(x) >= 1e15 else f"{x:{sign},.{places}f}"


def probability(p: float) -> str:
    """``0.2976``: a probability (or a weight in [0, 1]), four decimals."""
    return f"{p:.4f}"


def points(t: float) -> str:
    """``61.50``: a criteria score T (or a ranking key that is not an amount), two decimals."""
    return f"{t:.2f}"


def significant(x: float, digits: int = 6) -> str:
    """``0.297596``, ``1e+308``: ``digits`` significant digits, no separators."""
    return f"{x:.{digits}g}"


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


def percent(share: float) -> str:
    """``12.5%``: a share (0.125) as a percentage, four significant digits; from 1,000%
    on whole and grouped (`11,970%`, not `1.197e+04%`)."""
    value = share * 100
    return f"{value:.4g}%" if value < 1000 else f"{value:,.0f}%"


def compact(x: float | bool, kind: str = "number") -> str:
    """A value for a picture's label: 5,000 · 1.2M · 10B · 35% (``kind`` "ratio") · true."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if kind == "ratio":
        return _trim(f"{x * 100:.2f}") + "%"
    for suffix, scale in (("B", 1e9), ("M", 1e6)):
        if abs(x) >= scale:
            return _trim(f"{x / scale:,.2f}") + suffix
    return f"{int(x):,}" if x == int(x) else _trim(f"{x:,.2f}")


def _trim(s: str) -> str:
    return s.rstrip("0").rstrip(".") if "." in s else s


def byte_size(n: int) -> str:
    """Bytes for a reader: `12.3 MB` (2^20 bytes), `4.0 KB`, `512 bytes`. The unit is the
    largest that leaves less than 1,000 of it, so `1002.7 KB` reads `1.0 MB`."""
    if n < 1000:
        return f"{n} bytes"
    for unit, scale in (("KB", 2**10), ("MB", 2**20)):
        if round(n / scale, 1) < 1000:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 2**30:,.1f} GB"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 file``, ``2 files``, ``0 files``; ``many`` for a plural that is not word + s."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
