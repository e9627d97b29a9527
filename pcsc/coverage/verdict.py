"""The coverage mode decides what score may be released (docs/coverage.md)."""

from __future__ import annotations

from typing import Literal

import attrs

from pcsc.coverage.discharge import Coverage

Mode = Literal["gate", "dock", "off"]
#: The modes from the least to the most demanding: a configuration file may move the
#: policy's mode only up this order; only a command-line flag may move it down.
MODE_ORDER: tuple[Mode, ...] = ("off", "dock", "gate")
Verdict = Literal["released", "suspend-and-ask", "docked", "ungated"]


@attrs.frozen
class Decision:
    mode: Mode
    mode_source: str  # "policy", "config", or who overrode it: "command line", "test case", "api argument"
    verdict: Verdict
    score: float | None  # the released score; None when GATE refuses it
    docked: bool


def lowers(mode: Mode, than: Mode) -> bool:
    """Whether ``mode`` releases more than ``than`` would (it is lower in `MODE_ORDER`)."""
    return MODE_ORDER.index(mode) < MODE_ORDER.index(than)


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
