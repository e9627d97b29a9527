"""Exceptions that report bad input, turned into diagnostics like any other."""

from __future__ import annotations

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Finding, Span
from pcsc.policy.load import PolicyError


def policy_diagnostics(exc: PolicyError) -> list[Finding]:
    """One PCSC-E403 per message, located at the policy file."""
    return [Finding.of(codes.E403, m, Span.file_only(str(exc.path))) for m in exc.messages]
