"""Coverage (docs/coverage.md): the obligation discharger and the GATE / DOCK verdicts."""

from pcsc.coverage.discharge import (
    Coverage,
    DeltaCoverage,
    DischargeAttempt,
    UnmetRequire,
    discharge_route,
)
from pcsc.coverage.payoffs import PayoffCredit, payoff_credits
from pcsc.coverage.verdict import Decision, decide

__all__ = [
    "DischargeAttempt",
    "Coverage",
    "Decision",
    "DeltaCoverage",
    "PayoffCredit",
    "UnmetRequire",
    "decide",
    "payoff_credits",
    "discharge_route",
]
