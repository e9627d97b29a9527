"""The independent checker of decision certificates (`pcsc verify-cert`).

It imports only the standard library, nothing of PCSC (a test scans each of its modules), and
recomputes every number of a certificate from the operands recorded beside it with
its own implementation of each rule, in exact rational arithmetic: a step the
compiler computes in floats is computed here exactly and rounded to the nearest float
after each operation, as IEEE arithmetic does; a step the compiler computes exactly
and rounds once (sat, W, a floor price) is computed exactly here, compared with the
recorded exact value, and rounded once; the two rules that are not rational (a Platt
calibration map and the discount factor (1 + r)^(−h) of the policy's `[fold]`) are
computed in floats with the same operations as the compiler's. Every comparison is
exact. The policy's fold (its discount rate and option to stop) decides which rules of
the fold may appear.

It also checks that each operand taken from another step is that step's value, that
each operand taken from the policy is the value of that key in the policy document it
reads and hashes itself (TOML, `extends` merged, the recorded overrides set), that the
route files and libraries hash to what was recorded, that each library's canonical
text (laid out by the checker's own reader of `.obl` files, as `pcsc fmt` lays it out)
hashes to what the route's policy pins, that every gate rule and every
`require` line, parsed and evaluated again by its own small evaluator of the
expression language from the recorded operands (each tied to a step, to the coverage
rows, or to what the hashed route or library file writes), gives the recorded result,
that the coverage decisions follow from those results and the verdict from the
coverage, and, last, that the certificate's digest matches its body. The first
difference is the answer.

Its modules, each importing only those above it: `reading` (the first difference,
exact arithmetic, files, the policy document), `expressions` (the expression language:
tokens, parser, evaluator), `route_text` (a route file read as text), `library` (a
library's canonical text), `recompute` (one route, step by step) and `certificate`
(`verify`: the whole certificate).
"""

from __future__ import annotations

from pcsc.certify.check.certificate import FORMAT, VERSION, verify
from pcsc.certify.check.library import canonical_library, library_sha256
from pcsc.certify.check.reading import MAX_CERTIFICATE_BYTES, MAX_FILE_BYTES, Mismatch, Refused, read_bounded

__all__ = [
    "FORMAT", "MAX_CERTIFICATE_BYTES", "MAX_FILE_BYTES", "VERSION", "Mismatch", "Refused", "canonical_library",
    "library_sha256", "read_bounded", "verify",
]
