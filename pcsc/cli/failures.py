"""Exceptions that report bad input, turned into diagnostics like any other."""

from __future__ import annotations

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostic, Span
from pcsc.policy.load import PolicyError


def policy_diagnostics(exc: PolicyError) -> list[Diagnostic]:
    """One PCSC-E403 per message, located at the policy file."""
    return [Diagnostic.of(codes.E403, m, Span.file_only(str(exc.path))) for m in exc.messages]
