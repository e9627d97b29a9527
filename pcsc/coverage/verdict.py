"""The coverage mode decides what score may be released (docs/coverage.md)."""

from __future__ import annotations

import attrs

from pcsc.base.modes import Mode, Verdict
from pcsc.coverage.discharge import Coverage


@attrs.frozen
class Decision:
    mode: Mode
    mode_source: str  # "policy", "config", or who overrode it: "command line", "test case", "api argument"
    verdict: Verdict
    score: float | None  # the released score; None when GATE refuses it
    docked: bool


def decide(coverage: Coverage | None, mode: Mode, mode_source: str, ungated: float,
           docked_score: float | None) -> Decision:
    """`docked_score` is R_0 refolded with R_n = 0, needed only under DOCK."""
    if mode == "off" or coverage is None:
        return Decision(mode, mode_source, "ungated", ungated, False)
    if coverage.complete:
        return Decision(mode, mode_source, "released", ungated, False)
    if mode == "gate":
        return Decision(mode, mode_source, "suspend-and-ask", None, False)
    assert docked_score is not None
    return Decision(mode, mode_source, "docked", docked_score, True)
