"""SARIF 2.1.0 logs for code scanning: diagnostics, and GATE refusals.

One run, tool `pcsc`. Its results are

- one per diagnostic, rule id its code (`PCSC-E201`, …);
- for each compiled route with uncovered material deltas, one per (transition,
  obligation): rule id `pcsc/obligation/<library>/<obligation>`, located at the
  transition, with a related location at each `require` line of the obligation that
  failed for it (or at the obligation itself when every line holds and the transition
  only does not list it in `discharges`). The fields the result is about are in its
  message and in `properties.fields`;
- for a material delta that no obligation of the route's libraries covers at all, one
  per (transition, field), rule id `pcsc/no-obligation`: there is no obligation to
  name, and the fix is a library change, not a route change.

A route refused by GATE gives results of level `error`; a docked route (DOCK released
a reduced score) gives `warning`s; released and ungated routes give none.

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

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from pcsc._version import __version__
from pcsc.base.humanize import number
from pcsc.compiler.session import Compiled
from pcsc.coverage.discharge import DeltaCoverage, DischargeAttempt
from pcsc.diagnostics.codes import CODES
from pcsc.diagnostics.model import Finding, Span, condense
from pcsc.lang.ir import Obligation
from pcsc.render.doclinks import GATE_ANCHOR, NO_OBLIGATION_ANCHOR, code_anchor, doc_url
from pcsc.score.cost import Delta

#: The official schema of the format, as published by OASIS (errata 01).
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_VERSION = "2.1.0"
#: The base id of every relative URI: the folder pcsc ran in.
SRCROOT = "%SRCROOT%"
#: The rule of a material delta that no obligation covers.
NO_OBLIGATION_RULE = "pcsc/no-obligation"
#: The rules of a change its reference class does not admit, and of a departure from the gold registry.
NOT_ADMITTED_RULE = "pcsc/not-admitted"
REGISTRY_RULE = "pcsc/registry"

_DIAGNOSTICS_PAGE = "diagnostics"


def obligation_rule_id(library: str, obligation: str) -> str:
    """The rule id of an obligation: `pcsc/obligation/<library>/<obligation>`."""
    return f"pcsc/obligation/{library}/{obligation}"


def to_sarif(
    diagnostics: Iterable[Finding],
    sources_root: str | Path | None = None,
    refusals: Iterable[Compiled] = (),
    docs_url: str | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run.

    ``diagnostics`` become results under their codes; ``refusals`` are compiled routes
    whose uncovered deltas become results under obligation rules (routes without any
    are skipped, so passing every compiled route is fine). ``sources_root``, when
    given, is written as the absolute URI of `%SRCROOT%`; leave it out for output that
    does not depend on the machine. ``docs_url``, the base URL of a published copy of
    the docs (`pcsc.base.config.docs_base_url`), adds `helpUri` and `informationUri`.
    """
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for d in condense(diagnostics):
        rules.setdefault(d.code, _code_rule(d.code, docs_url))
        results.append(_diagnostic_result(d))
    refusal_results: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for c in refusals:
        for key, rule, result in _refusal_results(c, docs_url):
            rules.setdefault(rule["id"], rule)
            refusal_results.append((key, result))
    results += [r for _, r in sorted(refusal_results, key=lambda kr: kr[0])]
    ordered = [rules[k] for k in sorted(rules, key=_rule_order)]
    index = {r["id"]: i for i, r in enumerate(ordered)}
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    base: dict[str, Any] = {
        "description": {"text": "The folder pcsc ran in; relative URIs in this log resolve against it."}
    }
    if sources_root is not None:
        uri = Path(sources_root).resolve().as_uri()
        base["uri"] = uri if uri.endswith("/") else uri + "/"  # a base URI ends with a slash
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
                "originalUriBaseIds": {SRCROOT: base},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _rule_order(rule_id: str) -> tuple[int, str]:
    """Diagnostic codes first, then obligation rules, then `pcsc/no-obligation`."""
    if rule_id in CODES:
        return (0, rule_id)
    return (2 if rule_id == NO_OBLIGATION_RULE else 1, rule_id)


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
def _change(d: Delta) -> str:
    return f"`{d.field}` {number(d.source)} → {number(d.target)}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _obligation_rule(o: Obligation, docs_url: str | None) -> dict[str, Any]:
    rule_id = obligation_rule_id(o.library, o.name)
    covers = ", ".join(f"`{f}`" for f in o.covers)
    requires = "\n".join(f"  {r.text}" for r in o.requires) or "  (no require lines)"
    return {
        "id": rule_id,
        "name": o.name,
        "shortDescription": {"text": f"obligation `{o.name}` of library `{o.library}` is not discharged"},
        "fullDescription": {
            "text": f"A transition changes {covers}, which obligation `{o.name}` (library `{o.library}`) "
            "covers, by a material amount, and does not discharge the obligation: it does not list it in "
            "`discharges`, or a `require` line of it fails for the transition. GATE refuses the route's "
            "score until every material change is covered (DOCK releases a reduced one)."
        },
        **_help(f"List `{o.name}` in the transition's `discharges` and make every line of it hold "
                f"for the transition:\n{requires}\n", docs_url, GATE_ANCHOR),
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["pcsc", "coverage"]},
    }


def _no_obligation_rule(docs_url: str | None) -> dict[str, Any]:
    return {
        "id": NO_OBLIGATION_RULE,
        "name": "no obligation covers the field",
        "shortDescription": {"text": "a material change that no obligation covers"},
        "fullDescription": {
            "text": "A transition changes a field by a material amount and no obligation of the route's "
            "libraries covers that field, so nothing can discharge the change. GATE refuses the route's "
            "score (DOCK releases a reduced one)."
        },
        **_help("Add an obligation that covers the field to a library the route uses (or use one that "
                "has it), then list it in the transition's `discharges`.", docs_url, NO_OBLIGATION_ANCHOR),
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["pcsc", "coverage"]},
    }


def _refusal_results(
    c: Compiled, docs_url: str | None
) -> list[tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]]:
    """(sort key, rule, result) for each uncovered (transition, obligation) of ``c``."""
    if c.coverage is None or c.coverage.complete:
        return []
    route = c.route
    level = "error" if c.decision.verdict == "suspend-and-ask" else "warning"
    consequence = "GATE refuses the score" if level == "error" else "DOCK releases a docked score"
    obligations: Mapping[str, Obligation] = {o.name: o for o in route.obligations}
    transitions = {t.name: t for t in route.transitions}
    # (transition, obligation) -> the uncovered deltas it covers and its attempt
    grouped: dict[tuple[str, str], tuple[list[Delta], DischargeAttempt]] = {}
    orphans: list[DeltaCoverage] = []
    for u in c.coverage.uncovered:
        if not u.tried:
            orphans.append(u)
        for a in u.tried:
            deltas, _ = grouped.setdefault((u.transition, a.obligation), ([], a))
            deltas.append(u.delta)
    out: list[tuple[tuple[Any, ...], dict[str, Any], dict[str, Any]]] = []
    for (tname, oname), (deltas, attempt) in grouped.items():
        t, o = transitions[tname], obligations[oname]
        rule = _obligation_rule(o, docs_url)
        changes = _and([_change(d) for d in deltas])
        why = _why(attempt, o)
        related = _related(attempt, o)
        text = (
            f"route `{route.name}`: transition `{tname}` changes {changes}, which obligation `{oname}` covers, "
            f"and does not discharge it: {why}. {consequence}."
        )
        result = _refusal_result(rule["id"], level, text, t.span, related, route.name, tname, [d.field for d in deltas])
        out.append(((route.file, t.span.line, tname, rule["id"]), rule, result))
    for u in orphans:
        t = transitions[u.transition]
        text = (
            f"route `{route.name}`: transition `{u.transition}` changes {_change(u.delta)}, and no obligation "
            f"of the route's libraries covers `{u.delta.field}`. {consequence}."
        )
        result = _refusal_result(NO_OBLIGATION_RULE, level, text, t.span, [], route.name, u.transition,
                                 [u.delta.field])
        out.append(((route.file, t.span.line, u.transition, NO_OBLIGATION_RULE, u.delta.field),
                    _no_obligation_rule(docs_url), result))
    for na in c.coverage.admission:
        what = "this transition" if na.field is None else f"a change of `{na.field}`"
        check = na.reason if na.check == "fields" else f"`{na.check}` fails ({na.reason})"
        text = (f"route `{route.name}`: transition `{na.transition}` is of class `{na.ref_class}`, which does not "
                f"admit {what}: {check}. {consequence}.")
        result = _refusal_result(NOT_ADMITTED_RULE, level, text, na.span, [], route.name, na.transition,
                                 [] if na.field is None else [na.field])
        out.append(((route.file, na.span.line, na.transition, NOT_ADMITTED_RULE, na.field or "", na.check),
                    _plain_rule(NOT_ADMITTED_RULE, "change not admitted by its class",
                                "A transition claims a change that the policy's admission rules for its reference "
                                "class do not admit: a field the class may not change, a change past the class's "
                                "bound, or a `require` line of the class that fails.",
                                "Claim what the class admits, or give the transition the class that admits the "
                                "change (`pcsc gate --suggest` lists them).", docs_url, "pcsc-e502"), result))
    if c.coverage.registry_mode == "required":
        for f in c.coverage.registry:
            text = f"route `{route.name}`: {f.message}. {consequence}."
            result = _refusal_result(REGISTRY_RULE, level, text, f.span, [], route.name, f.state or "",
                                     [] if f.field is None else [f.field])
            out.append(((route.file, f.span.line, f.state or "", REGISTRY_RULE, f.field or "", f.kind),
                        _plain_rule(REGISTRY_RULE, "route departs from its gold registry",
                                    "The policy's registry for the route lists the states it must pass through, in "
                                    "order, with the value of each listed field; the route skips one, passes them "
                                    "out of order, or states a listed field with another value.",
                                    "Keep every registry state, in order, with the registry's values.",
                                    docs_url, "pcsc-e503"), result))
    return out


def _plain_rule(rule_id: str, name: str, full: str, help_text: str, docs_url: str | None,
                anchor: str) -> dict[str, Any]:
    return {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": name},
        "fullDescription": {"text": full + " GATE refuses the route's score (DOCK releases a reduced one)."},
        **_help(help_text, docs_url, anchor),
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["pcsc", "coverage"]},
    }


def _why(attempt: DischargeAttempt, o: Obligation) -> str:
    reasons = []
    if not attempt.claimed:
        reasons.append("it is not listed in `discharges`")
    if attempt.failed:
        fails = "; ".join(f"`{f.require}` ({f.span.file}:{f.span.line}) fails: {f.reason}" for f in attempt.failed)
        reasons.append(fails)
    return "; ".join(reasons) or f"`{o.name}` does not hold"


def _related(attempt: DischargeAttempt, o: Obligation) -> list[dict[str, Any]]:
    if attempt.failed:
        return [
            {
                "id": i,
                "physicalLocation": _physical(f.span),
                "message": {"text": f"`{f.require}` fails: {f.reason}"},
            }
            for i, f in enumerate(attempt.failed, start=1)
        ]
    return [
        {
            "id": 1,
            "physicalLocation": _physical(o.span),
            "message": {"text": f"obligation `{o.name}`: every line holds; list it in `discharges`"},
        }
    ]


def _refusal_result(
    rule_id: str,
    level: str,
    text: str,
    at: Span,
    related: Sequence[dict[str, Any]],
    route: str,
    transition: str,
    fields: list[str],
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "level": level,
        "message": {"text": text},
        "locations": [{"physicalLocation": _physical(at)}],
    }
    if related:
        result["relatedLocations"] = list(related)
    result["partialFingerprints"] = {"pcscCoverage/v1": f"{route}/{transition}/{rule_id}/{','.join(fields)}"}
    result["properties"] = {"route": route, "transition": transition, "fields": fields}
    return result
