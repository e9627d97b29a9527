"""The coverage modes and the verdicts they give (docs/coverage.md): the words the
settings, policies, the coverage stage, the API and the command line share, spelled
once here."""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

#: A coverage mode: GATE withholds an uncovered route's score, DOCK releases it with
#: the value of the uncovered path removed, ``off`` does not check coverage.
Mode: TypeAlias = Literal["gate", "dock", "off"]
#: Every mode, the most demanding first (the order `--coverage` lists them in).
MODES: tuple[Mode, ...] = get_args(Mode)
#: The modes from the least to the most demanding: a configuration file may move the
#: policy's mode only up this order; only a command-line flag may move it down.
MODE_ORDER: tuple[Mode, ...] = tuple(reversed(MODES))

#: What coverage decides for a route's score.
Verdict: TypeAlias = Literal["released", "suspend-and-ask", "docked", "ungated"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)


def lowers(mode: Mode, than: Mode) -> bool:
    """Whether ``mode`` releases more than ``than`` would (it is lower in `MODE_ORDER`)."""
    return MODE_ORDER.index(mode) < MODE_ORDER.index(than)
