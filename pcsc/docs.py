"""Generate docs/diagnostics.md from the code registry (`python -m pcsc.docs`)."""

from __future__ import annotations

import sys
from pathlib import Path

from pcsc.diagnostics.codes import CODES

_GROUPS = (
    ("PCSC-E1", "Syntax and files"),
    ("PCSC-E2", "Names and structure"),
    ("PCSC-E3", "Types, units and values"),
    ("PCSC-E4", "Policies and libraries"),
    ("PCSC-E5", "Coverage"),
    ("PCSC-E7", "Forecasts: outcomes, the ledger, packets, score tables, grading"),
    ("PCSC-E8", "Policy tests and project scaffolding"),
    ("PCSC-W", "Warnings"),
)


def diagnostics_markdown() -> str:
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `pcsc/diagnostics/codes.py` by `python -m pcsc.docs`; do not edit by hand.",
        "Codes are stable: a code keeps its meaning for good. Errors make `pcsc` exit 1;",
        "warnings are reported and do not change the exit code.",
        "",
    ]
    for prefix, title in _GROUPS:
        rows = [c for c in CODES.values() if c.code.startswith(prefix)]
        if not rows:
            continue
        lines += [f"## {title}", "", "| code | severity | meaning |", "|---|---|---|"]
        lines += [f"| `{c.code}` | {c.severity} | {c.title} |" for c in rows]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/diagnostics.md")
    target.write_text(diagnostics_markdown(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
