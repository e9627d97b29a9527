"""The names and built-in functions an obligation's `require` lines may use.

One list, read by the library check (unknown names are errors when the library is
lowered) and by the discharger (which binds exactly these), so the two cannot drift.
"""

from __future__ import annotations

#: Names bound for a `require` line, from the transition being checked.
REQUIRE_NAMES: tuple[str, ...] = (
    "mechanism", "asset", "actor", "kill", "threshold", "horizon", "class", "budget", "learning_cost", "delta",
    "as_of",
)
#: Built-in functions of `require` lines (count, min and max are shared with policy rules).
REQUIRE_FUNCTIONS: tuple[str, ...] = ("count", "min", "max", "measured", "floor", "grounded", "evidence")
#: Names bound inside `evidence(pred)`, for each supporting evidence item.
EVIDENCE_NAMES: tuple[str, ...] = ("tier", "weight", "source", "captured", "excerpt", "name")
