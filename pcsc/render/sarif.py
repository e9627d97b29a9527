"""SARIF 2.1.0 logs for code scanning: diagnostics, and GATE refusals.

One run, tool `pcsc`. Every result's rule id is a diagnostic code (`PCSC-E201`, …):

- one per diagnostic;
- for each compiled route that GATE refuses (or DOCK docks), one per uncovered material
  change, exactly the PCSC-E501 (PCSC-W501) diagnostic `pcsc check` reports for it: the
  same rule, message and region (the transition's name in its header), with a related
  location at each `require` line that failed for it (or at an obligation that would
  hold but is not listed in `discharges`). The route, transition, field and obligations
  tried are in `properties`;
- one per warning a `# pcsc: ignore[...]` comment or the `ignore`/`select` setting
  suppressed, marked by its `suppressions` entry.

Every result has a partial fingerprint (`pcsc/v1`: its rule, file and message, no line
number), so code scanning follows an alert across edits and `check` and `gate` agree
on one fact. The run's `invocations` say whether pcsc ran to the end and its exit code,
nothing more (no command line, no environment).

Every rule has a short and a full description and help text. Given the base URL of a
published copy of the docs (the setting `docs_url`, docs/cli.md), each rule's
`helpUri` points into its diagnostics reference (`pcsc.render.doclinks.doc_url`) and the tool's
`informationUri` at the docs; without one both are left out, since a link to a site
that does not exist helps no one.

Locations are relative URIs against `%SRCROOT%`, the folder pcsc ran in (paths as
the session shows them are relative to it; a file outside it keeps an absolute
`file:` URI). `run.originalUriBaseIds` declares `%SRCROOT%`; its absolute URI is
written only when `sources_root` is given, because it is machine-specific: without
it the log is byte-identical across machines for the same inputs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

import attrs

from pcsc._version import __version__
from pcsc.base.modes import Mode
from pcsc.compiler.session import Compiled
from pcsc.coverage.diagnose import report_uncovered
from pcsc.coverage.discharge import DeltaCoverage, DischargeAttempt
from pcsc.diagnostics import codes
from pcsc.diagnostics.codes import CODES
from pcsc.diagnostics.model import Diagnostics, Finding, Span, condense
from pcsc.diagnostics.suppress import Suppressed
from pcsc.lang.ir import Obligation
from pcsc.render.doclinks import code_anchor, doc_url

#: The official schema of the format, as published by OASIS (errata 01).
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_VERSION = "2.1.0"
#: The base id of every relative URI: the folder pcsc ran in.
SRCROOT = "%SRCROOT%"
#: The partial fingerprint's name (its version changes when what it hashes does).
FINGERPRINT = "pcsc/v1"

_DIAGNOSTICS_PAGE = "diagnostics"


def to_sarif(
    diagnostics: Iterable[Finding],
    sources_root: str | Path | None = None,
    refusals: Iterable[Compiled] = (),
    docs_url: str | None = None,
    *,
    sources: Mapping[str, str] | None = None,
    suppressed: Iterable[Suppressed] = (),
    exit_code: int | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run.

    ``diagnostics`` become results under their codes; ``refusals`` are compiled routes
    whose uncovered material changes become PCSC-E501 (W501) results, as `pcsc check`
    reports them (routes without any are skipped, so passing every compiled route is
    fine); ``sources`` (file -> text) places those at the transition's name.
    ``suppressed`` warnings are results too, each with its `suppressions` entry.
    ``sources_root``, when given, is written as the absolute URI of `%SRCROOT%`; leave
    it out for output that does not depend on the machine. ``docs_url``, the base URL
    of a published copy of the docs (`pcsc.base.config.docs_base_url`), adds `helpUri`
    and `informationUri`. ``exit_code``, when given, is the invocation's.
    """
    rules: dict[str, dict[str, Any]] = {}
    keyed: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for d in condense(diagnostics):
        keyed.append(((d.span.file, d.span.line, d.span.column, "", ""), _diagnostic_result(d)))
    for c in refusals:
        keyed += _refusal_results(c, (sources or {}).get(c.route.file))
    for q in suppressed:
        result = _diagnostic_result(q.finding)
        result["suppressions"] = [_suppression(q)]
        s = q.finding.span
        keyed.append(((s.file, s.line, s.column, "~", ""), result))
    results = [r for _, r in sorted(keyed, key=lambda kr: kr[0])]
    for r in results:
        rules.setdefault(r["ruleId"], _code_rule(r["ruleId"], docs_url))
    seen: dict[str, int] = {}
    for r in results:  # the same fact twice in a file (two equal messages) is told apart by its order
        print_ = fingerprint(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                             r["message"]["text"].split("\nhelp: ")[0])
        n = seen[print_] = seen.get(print_, 0) + 1
        r["partialFingerprints"] = {FINGERPRINT: print_ if n == 1 else f"{print_}:{n}"}
    ordered = [rules[k] for k in sorted(rules)]
    index = {r["id"]: i for i, r in enumerate(ordered)}
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    base: dict[str, Any] = {
        "description": {"text": "The folder pcsc ran in; relative URIs in this log resolve against it."}
    }
    if sources_root is not None:
        uri = Path(sources_root).resolve().as_uri()
        base["uri"] = uri if uri.endswith("/") else uri + "/"  # a base URI ends with a slash
    # the invocation says only whether pcsc ran to the end, and its exit code: never the
    # command line or the environment, which can hold a ledger's password
    invocation: dict[str, Any] = {"executionSuccessful": exit_code is None or exit_code in (0, 1, 3)}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pcsc",
                        "version": __version__,
                        **({"informationUri": docs_url} if docs_url else {}),
                        "rules": ordered,
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: base},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _suppression(q: Suppressed) -> dict[str, Any]:
    if q.by == "comment":
        return {"kind": "inSource", "justification": "a `# pcsc: ignore[...]` comment on the line"}
    return {"kind": "external", "justification": f"`{q.by}` in {q.config}"}


# ---------------------------------------------------------------------- locations
def artifact_location(file: str) -> dict[str, Any]:
    """A relative path becomes a URI relative to `%SRCROOT%`; an absolute one a `file:` URI."""
    path = PurePath(file)
    if path.is_absolute():
        return {"uri": Path(file).as_uri()}
    return {"uri": quote(path.as_posix()), "uriBaseId": SRCROOT}


def _physical(span: Span) -> dict[str, Any]:
    """The file and the region of ``span``. A span of line 0 is about a file that is not
    source text (a policy, a table, a ledger): no region. Column 0 is about a whole line."""
    out: dict[str, Any] = {"artifactLocation": artifact_location(span.file)}
    if span.line >= 1:
        region: dict[str, Any] = {"startLine": span.line}
        if span.column >= 1:
            region["startColumn"] = span.column
            region["endLine"] = max(span.end_line, span.line)
            region["endColumn"] = max(span.end_column, 1)
        out["region"] = region
    return out


# ---------------------------------------------------------------------- diagnostics
def _help(text: str, docs_url: str | None, anchor: str) -> dict[str, Any]:
    """A rule's `help`, ending in the link into the diagnostics reference, and its
    `helpUri`, when the docs are published; else the page in pcsc's sources."""
    if docs_url is None:
        return {"help": {"text": f"{text} See docs/diagnostics.md in pcsc's sources."}}
    url = doc_url(docs_url, _DIAGNOSTICS_PAGE, anchor)
    return {"help": {"text": f"{text} See {url}"}, "helpUri": url}


def _code_rule(code: str, docs_url: str | None) -> dict[str, Any]:
    c = CODES[code]
    exit_note = "Errors make pcsc exit 1." if c.severity == "error" else "Warnings do not change the exit code."
    return {
        "id": code,
        "name": c.title,
        "shortDescription": {"text": c.title},
        "fullDescription": {"text": f"{code} ({c.severity}): {c.title}. {exit_note}"},
        **_help(f"{code}: {c.title}. The diagnostics reference explains every code.", docs_url, code_anchor(code)),
        "defaultConfiguration": {"level": c.severity},
        "properties": {"tags": ["pcsc", "diagnostic"]},
    }


def _diagnostic_result(d: Finding) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code,
        "level": d.severity,
        "message": {"text": d.message + (f"\nhelp: {d.help}" if d.help else "")},
        "locations": [{"physicalLocation": _physical(d.span)}],
    }
    if d.repeats:  # the same on its line this many more times: one result, counted
        result["occurrenceCount"] = d.repeats + 1
    return result


# ---------------------------------------------------------------------- refusals
def refusal_findings(c: Compiled, source: str | None) -> list[tuple[Finding, DeltaCoverage | None]]:
    """What refuses or docks a route, as the diagnostics `pcsc check` reports for it: each
    uncovered material change (PCSC-E501 under gate, W501 under dock) with its change, and
    each change its class does not admit or departure from its gold registry (E502/E503,
    W502/W503/W504) with None: one fact, one code, one place, whichever command reports it."""
    if c.coverage is None or c.decision.verdict not in ("suspend-and-ask", "docked"):
        return []
    found = Diagnostics()
    mode: Mode = "gate" if c.decision.verdict == "suspend-and-ask" else "dock"
    report_uncovered(c.route, c.coverage, mode, source, found, c.policy.policy)
    uncovered = iter(c.coverage.uncovered)
    return [(f, next(uncovered) if f.code in (codes.E501.code, codes.W501.code) else None) for f in found.items]


@attrs.frozen
class Related:
    """A place that tells why a change is uncovered: a `require` line that failed for it,
    or an obligation that would hold but is not listed in `discharges`."""

    span: Span
    message: str


def refusals_related(c: Compiled, source: str | None) -> list[tuple[Finding, DeltaCoverage | None, list[Related]]]:
    """`refusal_findings` with, for each uncovered material change, its related places
    (SARIF's `relatedLocations`, the editor's related information)."""
    obligations: Mapping[str, Obligation] = {o.name: o for o in c.route.obligations}
    return [
        (f, u, [] if u is None else [r for a in u.tried for r in _related(a, obligations[a.obligation])])
        for f, u in refusal_findings(c, source)
    ]


def _refusal_results(c: Compiled, source: str | None) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(sort key, result) for each uncovered material change of ``c``: the result of its
    PCSC-E501 (W501) diagnostic, with the failing `require` lines as related locations."""
    out: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for finding, u, related in refusals_related(c, source):
        result = _diagnostic_result(finding)
        s = finding.span
        if u is None:  # a class that does not admit the change, or the gold registry
            result["properties"] = {"route": c.route.name}
            out.append(((s.file, s.line, s.column, "", ""), result))
            continue
        if related:
            result["relatedLocations"] = [
                {"physicalLocation": _physical(r.span), "message": {"text": r.message}, "id": i}
                for i, r in enumerate(related, 1)
            ]
        result["properties"] = {"route": c.route.name, "transition": u.transition, "fields": [u.delta.field],
                                "obligations": [a.obligation for a in u.tried]}
        out.append(((s.file, s.line, s.column, "", ""), result))  # in the order `pcsc check` reports them
    return out


def _related(attempt: DischargeAttempt, o: Obligation) -> list[Related]:
    if attempt.failed:
        return [Related(f.span, f"obligation `{o.name}`: `{f.require}` fails: {f.reason}") for f in attempt.failed]
    return [Related(o.span, f"obligation `{o.name}`: every line holds; list it in `discharges`")]


def fingerprint(rule_id: str, file: str, message: str) -> str:
    """What stays the same for one fact across runs and edits elsewhere in the file: its
    rule, file and message (no line number), hashed."""
    return hashlib.sha256(f"{rule_id}\0{file}\0{message}".encode()).hexdigest()[:32]
