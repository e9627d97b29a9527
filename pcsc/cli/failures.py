"""Exceptions that report bad input, turned into diagnostics like any other."""

from __future__ import annotations

from pcsc.diagnostics.model import Finding
from pcsc.policy.load import PolicyError, located_policy_problem


def policy_diagnostics(exc: PolicyError) -> list[Finding]:
    """One PCSC-E403 per message, located at the policy file (a vision formula's or a
    unit's problem: its own code, at the line that writes the key)."""
    return [located_policy_problem(exc, m) for m in exc.messages]
