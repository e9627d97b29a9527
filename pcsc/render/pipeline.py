"""JUnit XML and GitHub Actions annotations, both made from the run's SARIF log
(`pcsc.render.sarif`), so every format reports the same findings under the same codes.

JUnit: one test suite, one test case per input file (and per other file a finding is
about); a case fails when an error is about its file, its `failure` listing each, and
its warnings go to `system-out`. Suppressed warnings are left out.

GitHub: one workflow command per finding, `::error file=F,line=L,col=C,...::MESSAGE`
(`::warning` for a warning), escaped as GitHub's toolkit escapes them: `%`, CR and LF
in the message; those and `:` and `,` in a property.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from pcsc.base.escape import escape_controls

__all__ = ["github_annotations", "junit_xml"]


def _findings(log: dict[str, Any]) -> list[dict[str, Any]]:
    """The results of the log that are reported (not suppressed), as plain fields."""
    found = []
    for r in log["runs"][0]["results"]:
        if r.get("suppressions"):
            continue
        physical = r["locations"][0]["physicalLocation"]
        region = physical.get("region", {})
        found.append({
            "code": r["ruleId"],
            "level": r["level"],
            "file": file_of(physical["artifactLocation"]),
            "line": region.get("startLine", 0),
            "column": region.get("startColumn", 0),
            "end_line": region.get("endLine", 0),
            "end_column": region.get("endColumn", 0),
            "message": r["message"]["text"],
        })
    return found


def file_of(artifact: dict[str, Any]) -> str:
    """The path an artifact location names, as pcsc showed it (relative URIs
    unquoted; a `file:` URI as its path)."""
    uri = artifact["uri"]
    if "uriBaseId" in artifact:
        return unquote(uri)
    return unquote(urlsplit(uri).path)


def _where(f: dict[str, Any]) -> str:
    line, column = f["line"], f["column"]
    return f["file"] if not line else f"{f['file']}:{line}" if not column else f"{f['file']}:{line}:{column}"


def junit_xml(log: dict[str, Any], suite: str, inputs: Iterable[str] = ()) -> str:
    """A JUnit XML report of ``log``: one test case per file."""
    findings = _findings(log)
    files = sorted({*inputs, *(f["file"] for f in findings)})
    failures = 0
    root = ET.Element("testsuites", name=suite)
    suite_el = ET.SubElement(root, "testsuite", name=suite)
    for file in files:
        shown = escape_controls(file)
        case = ET.SubElement(suite_el, "testcase", classname=suite, name=shown, file=shown)
        errors = [f for f in findings if f["file"] == file and f["level"] == "error"]
        warnings = [f for f in findings if f["file"] == file and f["level"] != "error"]
        if errors:
            failures += 1
            first = errors[0]
            failure = ET.SubElement(case, "failure", type=first["code"],
                                    message=escape_controls(f"{len(errors)} error(s); first: {first['message']}"))
            failure.text = "\n".join(_line(f) for f in errors)
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(_line(f) for f in warnings)
    for el in (root, suite_el):
        el.set("tests", str(len(files)))
        el.set("failures", str(failures))
        el.set("errors", "0")
    suite_el.set("skipped", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _line(f: dict[str, Any]) -> str:
    return escape_controls(f"{_where(f)}: {f['level']}: {f['message']} [{f['code']}]".replace("\n", " | "))


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped as GitHub's toolkit does."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(log: dict[str, Any]) -> str:
    """One `::error`/`::warning` workflow command per reported finding of ``log``."""
    lines = []
    for f in _findings(log):
        props: list[tuple[str, Any]] = [("file", f["file"])]
        if f["line"]:
            props.append(("line", f["line"]))
            if f["column"]:
                props += [("col", f["column"]), ("endLine", f["end_line"]), ("endColumn", f["end_column"])]
        props.append(("title", f["code"]))
        shown = ",".join(f"{k}={escape_property(str(v))}" for k, v in props)
        kind = "error" if f["level"] == "error" else "warning"
        lines.append(f"::{kind} {shown}::{escape_data(f['message'])}")
    return "".join(line + "\n" for line in _controls_escaped(lines))


def _controls_escaped(lines: Sequence[str]) -> list[str]:
    # CR and LF are %-escaped already; any other control character a file held is shown, not obeyed
    return [escape_controls(line) for line in lines]
