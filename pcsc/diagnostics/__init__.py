"""Diagnostics: codes (one registry), values, and renderers (text, JSON, SARIF)."""

from pcsc.diagnostics.codes import CODES, Code
from pcsc.diagnostics.model import Diagnostic, Diagnostics, Severity, Span

__all__ = ["CODES", "Code", "Diagnostic", "Diagnostics", "Severity", "Span"]
