"""Coverage (docs/coverage.md): the obligation discharger and the GATE / DOCK verdicts."""

from pcsc.coverage.discharge import (
    Attempt,
    Coverage,
    DeltaCoverage,
    FailedRequire,
    discharge_route,
)
from pcsc.coverage.verdict import Decision, decide

__all__ = [
    "Attempt",
    "Coverage",
    "Decision",
    "DeltaCoverage",
    "FailedRequire",
    "decide",
    "discharge_route",
]
