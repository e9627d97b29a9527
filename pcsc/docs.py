"""Generate the reference pages under docs/ from the code (`python -m pcsc.docs`).

`docs/diagnostics.md` comes from the code registry (`pcsc/diagnostics/codes.py`);
`docs/json.md` from the JSON Schemas shipped in `pcsc/schemas/`. Tests keep both
current.

The documentation is published as a MkDocs site built from `docs/`. `DOCS_URL` is
the one place that says where: tools that link into the docs (the SARIF rules'
`helpUri`) build their links with `doc_url`, and the anchors they use are the ones
written into the generated pages here (`code_anchor`, `GATE_ANCHOR`, …).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pcsc.diagnostics.codes import CODES

#: The base URL of the published documentation (a MkDocs site, Read-the-Docs style,
#: with directory URLs: `docs/diagnostics.md` is served at `<DOCS_URL>diagnostics/`).
#: Change it here, and only here, when the site moves.
DOCS_URL = "https://pcsc.readthedocs.io/en/latest/"

#: The anchor of the section on GATE refusals in SARIF, in docs/diagnostics.md.
GATE_ANCHOR = "gate-refusals"
#: The anchor for the result "no obligation covers the field", in docs/diagnostics.md.
NO_OBLIGATION_ANCHOR = "no-obligation"


def doc_url(page: str, anchor: str | None = None) -> str:
    """The published URL of `docs/<page>.md`, at `anchor` when given."""
    return f"{DOCS_URL}{page}/" + (f"#{anchor}" if anchor else "")


def code_anchor(code: str) -> str:
    """The anchor of a diagnostic code in docs/diagnostics.md: the code in lower case,
    which is also what MkDocs would make of a heading reading just the code."""
    return code.lower()


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


def _anchor(anchor: str) -> str:
    return f'<a id="{anchor}"></a>'


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
        lines += [f"| {_anchor(code_anchor(c.code))}`{c.code}` | {c.severity} | {c.title} |" for c in rows]
        lines.append("")
    lines += [
        f"## GATE refusals in SARIF {_anchor(GATE_ANCHOR)}",
        "",
        "`pcsc gate --format sarif` reports diagnostics as results whose rule is their code, and a",
        "route whose material state change is not covered by a discharged obligation as one result",
        "per transition and obligation:",
        "",
        "- the rule id is `pcsc/obligation/<library>/<obligation>`, for example",
        "  `pcsc/obligation/venture/adoption`; its help lists the obligation's `require` lines;",
        "- the result is located at the transition, and each `require` line of the obligation that",
        "  failed for that transition is a related location in the library (`.obl`) file; when every",
        "  line holds and the transition only omits the obligation from `discharges`, the related",
        "  location is the obligation itself;",
        "- the level is `error` when GATE refuses the score (`suspend-and-ask`) and `warning` when",
        "  DOCK releases a docked score; a route released in full, or compiled with coverage off,",
        "  yields no result.",
        "",
        f"{_anchor(NO_OBLIGATION_ANCHOR)}A material change of a field that no obligation of the route's",
        "libraries covers at all is one result per transition and field, rule `pcsc/no-obligation`:",
        "there is nothing to list in `discharges` until a library gains an obligation that covers the field.",
        "",
        "File locations are relative URIs with `uriBaseId` `%SRCROOT%`, the folder `pcsc` ran in (files",
        "outside it are absolute `file:` URIs). The command line leaves the absolute URI of `%SRCROOT%`",
        "out of `run.originalUriBaseIds`, so that the same inputs give byte-identical logs on every",
        "machine; code scanning resolves the relative URIs against the repository's checkout. The",
        "library call `pcsc.render.sarif.to_sarif(…, sources_root=PATH)` writes it in.",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------- docs/json.md
def _type_text(schema: Mapping[str, Any]) -> str:
    """A short, readable type of a (sub)schema: `string`, `array of diagnostic`, …"""
    if "$ref" in schema:
        return "`" + str(schema["$ref"]).rpartition("/")[2] + "`"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kinds = schema.get("type")
    if kinds is None and "anyOf" in schema:
        return " or ".join(_type_text(s) for s in schema["anyOf"])
    if kinds is None:
        return "any"
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    parts = []
    for name in names:
        if name == "array" and isinstance(schema.get("items"), Mapping):
            parts.append("array of " + _type_text(schema["items"]))
        else:
            parts.append(name)
    return " or ".join(parts)


def _key_rows(schema: Mapping[str, Any], keys: list[str]) -> list[str]:
    props: Mapping[str, Any] = schema.get("properties", {})
    rows = []
    for key in keys:
        sub = props.get(key, {})
        about = str(sub.get("description", ""))
        items = sub.get("items") if sub.get("type") == "array" else sub if sub.get("type") == "object" else None
        if isinstance(items, Mapping) and items.get("required"):
            fields = ", ".join(f"`{k}`" for k in items["required"])
            about += ("; " if about else "") + ("each with " if items is not sub else "with ") + fields
        about = about.replace("|", "\\|")
        rows.append(f"| `{key}` | {_type_text(sub)} | {about} |")
    return rows


def _def_rows(defs: Mapping[str, Any]) -> list[str]:
    rows = []
    for name, sub in defs.items():
        about = str(sub.get("description", ""))
        if sub.get("type") == "object" and sub.get("required"):
            about += "; with " + ", ".join(f"`{k}`" for k in sub["required"])
        rows.append(f"| `{name}` | {_type_text(sub)} | " + about.replace("|", "\\|") + " |")
    return rows


def payload_keys(schema: Mapping[str, Any]) -> list[str]:
    """The keys a kind's schema requires of a complete payload (its failure form aside)."""
    variants = schema.get("anyOf", [])
    keys = variants[0].get("required", []) if variants and "$ref" not in variants[0] else []
    return [str(k) for k in keys]


def json_markdown() -> str:
    """docs/json.md: one section per document kind, generated from pcsc/schemas/."""
    from pcsc import schemas

    common = schemas.load_file(schemas.COMMON)
    envelope = common["$defs"]["envelope"]
    lines = [
        "# JSON output and its schemas",
        "",
        "Generated from the JSON Schemas in `pcsc/schemas/` by `python -m pcsc.docs`; do not edit by hand.",
        "",
        "Every `--format json` document is one JSON object that starts with the same envelope, then the",
        "command's payload. Each document kind has a JSON Schema (draft 2020-12) shipped in the package as",
        "`pcsc/schemas/<kind>.v<major>.json`; the envelope and the values several kinds share are in",
        f"`pcsc/schemas/{schemas.COMMON}`. A schema's `$id` is `urn:pcsc:schema:<kind>.v<major>`, and the",
        "files refer to each other by those URNs, so they resolve offline.",
        "",
        "A major version changes only when a key is renamed or removed, or changes meaning: keys are added",
        "freely, and the schemas allow keys they do not list. What they list as required, with its type",
        "(and, where pipelines branch on it, its values), is the contract.",
        "",
        "Validate a document against the schema it names itself (needs `pip install jsonschema`):",
        "",
        "```python",
        "from pcsc import schemas",
        "",
        "schemas.validate(document)  # raises jsonschema.ValidationError when it does not conform",
        "schema = schemas.load(\"gate\")  # the schema of a kind, as a dict",
        "```",
        "",
        "## The envelope",
        "",
        "| key | type | meaning |",
        "|---|---|---|",
        *_key_rows(envelope, list(envelope["required"])),
        "",
        "`schema.kind` is one of the kinds below (in alphabetical order); `schema.version` its major version.",
        "",
        "A command that cannot do its work (a policy that does not load, a ledger that cannot be opened)",
        "keeps its kind and prints `\"ok\": false` with the `diagnostics` (or `errors`) that say why instead",
        "of its payload: every kind's schema allows that form (`failure` below).",
        "",
        "## Shared definitions",
        "",
        f"In `pcsc/schemas/{schemas.COMMON}`, referred to by name below.",
        "",
        "| name | type | meaning |",
        "|---|---|---|",
        *_def_rows(common["$defs"]),
        "",
    ]
    for kind in schemas.kinds():
        name = schemas.filename(kind)
        schema = schemas.load_file(name)
        required = payload_keys(schema)
        lines += [f"## `{kind}` {_anchor(kind)}", "", f"**{schema['title']}**", "", str(schema["description"]), ""]
        if required:
            lines += ["Required keys:", "", "| key | type | meaning |", "|---|---|---|", *_key_rows(schema, required)]
        elif any(str(r.get("$ref", "")).endswith("/failure") for r in schema.get("allOf", [])):
            lines.append("Required keys: `ok` (`false`) and one of `diagnostics`, `errors`, `error` (a `failure`).")
        else:
            lines.append("Required keys: the envelope's only.")
        others = [k for k in schema.get("properties", {}) if k not in required and k != "schema"]
        if others:
            lines += ["", "Also described: " + ", ".join(f"`{k}`" for k in others) + "."]
        lines += ["", f"Schema: `pcsc/schemas/{name}`", ""]
    return "\n".join(lines)


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs")
    (folder / "diagnostics.md").write_text(diagnostics_markdown(), encoding="utf-8")
    (folder / "json.md").write_text(json_markdown(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
