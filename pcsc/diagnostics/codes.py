"""Every diagnostic code PCSC can emit, registered in one place.

Codes are stable: a code is never reused for another meaning. E1xx are syntax,
E2xx names and structure, E3xx types, units and values, E4xx policy and libraries,
E5xx coverage; W are warnings. `docs/diagnostics.md` is generated from this table.
"""

from __future__ import annotations

from typing import Literal

import attrs

SeverityName = Literal["error", "warning"]


@attrs.frozen
class Code:
    code: str
    severity: SeverityName
    title: str


def _table(*rows: tuple[str, str]) -> dict[str, Code]:
    table: dict[str, Code] = {}
    for code, title in rows:
        assert code not in table, code
        severity: SeverityName = "warning" if code.startswith("PCSC-W") else "error"
        table[code] = Code(code, severity, title)
    return table


CODES: dict[str, Code] = _table(
    # syntax
    ("PCSC-E101", "syntax error: unexpected token"),
    ("PCSC-E102", "syntax error: unexpected character"),
    ("PCSC-E103", "syntax error: unexpected end of file"),
    ("PCSC-E104", "two statements on one line"),
    ("PCSC-E105", "file cannot be read"),
    ("PCSC-E106", "folder holds no route files"),
    ("PCSC-E108", "output cannot be written"),
    # names and structure
    ("PCSC-E201", "unknown state"),
    ("PCSC-E202", "unknown transition"),
    ("PCSC-E203", "unknown evidence"),
    ("PCSC-E204", "unknown obligation"),
    ("PCSC-E205", "unknown field"),
    ("PCSC-E206", "unknown library"),
    ("PCSC-E207", "unknown reference class"),
    ("PCSC-E208", "unknown criterion"),
    ("PCSC-E209", "duplicate definition"),
    ("PCSC-E210", "route branches"),
    ("PCSC-E211", "route has a cycle"),
    ("PCSC-E212", "route has a gap or an unreachable transition"),
    ("PCSC-E213", "route has no vision"),
    ("PCSC-E214", "missing required statement"),
    ("PCSC-E215", "route does not end at its vision state"),
    ("PCSC-E216", "field has no value in the start state"),
    ("PCSC-E217", "unknown name in an expression"),
    ("PCSC-E218", "unknown function in an expression"),
    ("PCSC-E219", "route has no transitions"),
    ("PCSC-E220", "statement not allowed here"),
    ("PCSC-E221", "route file holds no route"),
    # types, units, values
    ("PCSC-E301", "type or unit mismatch"),
    ("PCSC-E302", "number is not finite"),
    ("PCSC-E303", "negative cost"),
    ("PCSC-E304", "estimate outside [0, 1]"),
    ("PCSC-E305", "route states a probability"),
    ("PCSC-E306", "date out of range"),
    ("PCSC-E307", "value out of range"),
    ("PCSC-E308", "unknown field type"),
    ("PCSC-E309", "percent on a field that is not a ratio"),
    ("PCSC-E310", "inadmissible evidence under strict point-in-time"),
    # policy and libraries
    ("PCSC-E401", "unknown policy"),
    ("PCSC-E402", "policy hash mismatch"),
    ("PCSC-E403", "malformed policy"),
    ("PCSC-E404", "library cannot be used"),
    ("PCSC-E405", "policy rule cannot be evaluated"),
    ("PCSC-E406", "policy reference is malformed"),
    ("PCSC-E407", "configuration file cannot be used"),
    # warnings
    ("PCSC-W601", "evidence captured after as_of is inadmissible"),
    ("PCSC-W602", "stated criteria total is ignored"),
    ("PCSC-W603", "state is not used by any transition"),
    ("PCSC-W604", "evidence supports or contradicts nothing"),
    ("PCSC-W605", "evidence below the policy's minimum tier"),
)
