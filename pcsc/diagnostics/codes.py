"""Every diagnostic code PCSC can emit, each a named constant registered in one table.

A pass reports `Diagnostics.add(E209, ...)`: the constant is named after its code
without the `PCSC-` prefix (`E209` is "PCSC-E209"), so a misspelt code is a mypy error
and an AttributeError, never a silently wrong string. `CODES` maps each code string to
its `Code`, in registration order; `docs/diagnostics.md` is generated from it.

Codes are stable: a code is never reused for another meaning. E1xx are syntax,
E2xx names and structure, E3xx types, units and values, E4xx policy and libraries,
E5xx coverage, E7xx forecasts, E8xx policy tests and
project scaffolding, E9xx decisions (what-if overrides, certificates); W are warnings.
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


CODES: dict[str, Code] = {}


def _register(code: str, title: str) -> Code:
    assert code not in CODES, code
    severity: SeverityName = "warning" if code.startswith("PCSC-W") else "error"
    CODES[code] = entry = Code(code, severity, title)
    return entry

# syntax
E101 = _register("PCSC-E101", "syntax error: unexpected token")
E102 = _register("PCSC-E102", "syntax error: unexpected character")
E103 = _register("PCSC-E103", "syntax error: unexpected end of file")
E104 = _register("PCSC-E104", "two statements on one line")
E105 = _register("PCSC-E105", "file cannot be read")
E106 = _register("PCSC-E106", "folder holds no route files")
E108 = _register("PCSC-E108", "output cannot be written")
E109 = _register("PCSC-E109", "unknown unit")
E110 = _register("PCSC-E110", "NUL character in the text")
E111 = _register("PCSC-E111", "expression nested too deeply")
E112 = _register("PCSC-E112", "file too large")
E113 = _register("PCSC-E113", "cache cannot be cleared")
E115 = _register("PCSC-E115", "optional extra not installed")
E126 = _register("PCSC-E126", "line too long")

# names and structure
E201 = _register("PCSC-E201", "unknown state")
E202 = _register("PCSC-E202", "unknown transition")
E204 = _register("PCSC-E204", "unknown obligation")
E205 = _register("PCSC-E205", "unknown field")
E206 = _register("PCSC-E206", "unknown library")
E207 = _register("PCSC-E207", "unknown reference class")
E208 = _register("PCSC-E208", "unknown criterion")
E209 = _register("PCSC-E209", "duplicate definition")
E210 = _register("PCSC-E210", "unstructured fork or join")
E211 = _register("PCSC-E211", "route has a cycle")
E212 = _register("PCSC-E212", "route has a gap or an unreachable transition")
E213 = _register("PCSC-E213", "route has no vision")
E214 = _register("PCSC-E214", "missing required statement")
E215 = _register("PCSC-E215", "route does not end at its vision state")
E216 = _register("PCSC-E216", "field has no value in the start state")
E217 = _register("PCSC-E217", "unknown name in an expression")
E218 = _register("PCSC-E218", "unknown function in an expression")
E219 = _register("PCSC-E219", "route has no transitions")
E220 = _register("PCSC-E220", "statement not allowed here")
E221 = _register("PCSC-E221", "route file holds no route")
E222 = _register("PCSC-E222", "route has too many transitions")
E223 = _register("PCSC-E223", "file holds too many routes")
E224 = _register("PCSC-E224", "join state gets conflicting values from its branches")

# types, units, values
E301 = _register("PCSC-E301", "type or unit mismatch")
E302 = _register("PCSC-E302", "number is not finite")
E303 = _register("PCSC-E303", "negative cost")
E304 = _register("PCSC-E304", "estimate outside [0, 1]")
E305 = _register("PCSC-E305", "route states a probability")
E306 = _register("PCSC-E306", "date out of range")
E307 = _register("PCSC-E307", "value out of range")
E308 = _register("PCSC-E308", "unknown field type")
E309 = _register("PCSC-E309", "percent on a field that is not a ratio")
E310 = _register("PCSC-E310", "inadmissible evidence under strict point-in-time")
E311 = _register("PCSC-E311", "arithmetic overflow")
E312 = _register("PCSC-E312", "division by zero")
E313 = _register("PCSC-E313", "quantities in different units compared or combined")
E314 = _register("PCSC-E314", "kill armed outside its transition's planned window")

# policy and libraries
E401 = _register("PCSC-E401", "unknown policy")
E402 = _register("PCSC-E402", "policy hash mismatch")
E403 = _register("PCSC-E403", "malformed policy")
E404 = _register("PCSC-E404", "library cannot be used")
E405 = _register("PCSC-E405", "policy rule cannot be evaluated")
E406 = _register("PCSC-E406", "policy reference is malformed")
E407 = _register("PCSC-E407", "configuration file cannot be used")
E408 = _register("PCSC-E408", "file resolves outside its search folder")
E409 = _register("PCSC-E409", "library replaces a pinned or shipped library")
E410 = _register("PCSC-E410", "library does not match the policy's pin")
E413 = _register("PCSC-E413", "library not named by the route's policy")
E414 = _register("PCSC-E414", "policy not one the run requires")
E415 = _register("PCSC-E415", "vision formula cannot be used")
E416 = _register("PCSC-E416", "amount in a unit the policy gives no rate for")
E419 = _register("PCSC-E419", "policy admits no payoffs")

# coverage
E501 = _register("PCSC-E501", "material change not covered (coverage gate: the score is withheld)")
E502 = _register("PCSC-E502", "change not admitted by the transition's reference class (coverage gate)")
E503 = _register("PCSC-E503", "route departs from its gold registry (coverage gate)")

# forecasts (E70x outcomes files, E71x the ledger, E72x frozen packets, E73x score tables,
# E74x grading, E75x ranking and freezing, E76x preregistration)
E701 = _register("PCSC-E701", "outcomes file cannot be used")
E702 = _register("PCSC-E702", "outcome does not fit the frozen route")
E711 = _register("PCSC-E711", "ledger cannot be used")
E712 = _register("PCSC-E712", "ledger chain is broken")
E713 = _register("PCSC-E713", "ledger holds no frozen forecast")
E714 = _register("PCSC-E714", "ledger row cannot be read")
E715 = _register("PCSC-E715", "nothing frozen")
E716 = _register("PCSC-E716", "ledger does not hold its recorded head")
E717 = _register("PCSC-E717", "checkpoint or key cannot be used")
E718 = _register("PCSC-E718", "ledger does not verify: nothing appended")
E719 = _register("PCSC-E719", "ledger did not store what was written: nothing appended")
E721 = _register("PCSC-E721", "frozen packets cannot be used")
E731 = _register("PCSC-E731", "score table cannot be graded")
E732 = _register("PCSC-E732", "score table does not match its checksum")
E741 = _register("PCSC-E741", "forecast frozen after its outcome")
E742 = _register("PCSC-E742", "nothing to grade")
E743 = _register("PCSC-E743", "plot cannot be written")
E744 = _register("PCSC-E744", "reference class not in a compared policy")
E745 = _register("PCSC-E745", "prospective and retrospective forecasts are not pooled")
E746 = _register("PCSC-E746", "nothing to fit")
E751 = _register("PCSC-E751", "no routes to rank or freeze")
# E76x preregistration, the scorer's code and blinded resolution
E761 = _register("PCSC-E761", "forecasts of different scorer code are not pooled")
E762 = _register("PCSC-E762", "preregistration plan cannot be used")
E763 = _register("PCSC-E763", "preregistered plan frozen after its outcomes")
E764 = _register("PCSC-E764", "blind outcomes cannot be joined")

# policy tests and project scaffolding (E80x `pcsc test`, E81x `pcsc init`)
E801 = _register("PCSC-E801", "policy test file is malformed")
E802 = _register("PCSC-E802", "policy test case cannot be run")
E803 = _register("PCSC-E803", "no policy test files found")
E811 = _register("PCSC-E811", "project files already exist")
E812 = _register("PCSC-E812", "project files cannot be written")

# decisions: what-if overrides (E90x) and decision certificates (E91x)
E901 = _register("PCSC-E901", "override cannot be applied")
E911 = _register("PCSC-E911", "certificate cannot be read or written")
E912 = _register("PCSC-E912", "certificate does not verify")
E913 = _register("PCSC-E913", "certificate names a file it may not read")

# warnings
W501 = _register("PCSC-W501", "material change not covered (coverage dock: the score is docked)")
W502 = _register("PCSC-W502", "change not admitted by the transition's reference class (coverage dock)")
W503 = _register("PCSC-W503", "route departs from its gold registry (coverage dock)")
W504 = _register("PCSC-W504", "route departs from its gold registry (registry report: counted, not refused)")
W601 = _register("PCSC-W601", "evidence captured after as_of is inadmissible")
W602 = _register("PCSC-W602", "stated criteria total is ignored")
W603 = _register("PCSC-W603", "state is not used by any transition")
W604 = _register("PCSC-W604", "evidence supports or contradicts nothing")
W605 = _register("PCSC-W605", "evidence below the policy's minimum tier")
W606 = _register("PCSC-W606", "bidirectional control character in the text")
W607 = _register("PCSC-W607", "evidence repeats another item's source or excerpt")
W608 = _register("PCSC-W608", "unverified evidence is excluded")
W609 = _register("PCSC-W609", "suppression comment cannot apply")
W610 = _register("PCSC-W610", "ratio over 1, written as a plain number")
W620 = _register("PCSC-W620", "control character in the text")

# forecast warnings
W701 = _register("PCSC-W701", "outcome ignored or suspect")
W702 = _register("PCSC-W702", "identity cue left in a route")
W731 = _register("PCSC-W731", "a covariate alone matches or beats a scorer")
W751 = _register("PCSC-W751", "routes ranked together use different policies")
W761 = _register("PCSC-W761", "forecasts of different scorer code pooled")
W762 = _register("PCSC-W762", "analysis differs from the preregistered plan")
