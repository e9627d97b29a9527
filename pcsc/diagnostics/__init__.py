"""Diagnostics: codes (one registry) and values; rendering lives in pcsc.render."""

from pcsc.diagnostics.codes import CODES, Code
from pcsc.diagnostics.model import Diagnostics, Finding, Severity, Span

__all__ = ["CODES", "Code", "Diagnostics", "Finding", "Severity", "Span"]
