"""How text output writes numbers and counts: the one place for both.

JSON keeps exact values (the shortest float repr, `pcsc.canonical`); text shows a
person what a number is, without the noise of a binary float
(`613333.3333333333`, `0.29759615384615384`): every text view formats through here.
"""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 file``, ``2 files``, ``0 files``; ``many`` for a plural that is not word + s."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
