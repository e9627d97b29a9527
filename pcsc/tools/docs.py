"""Generate the reference pages under docs/ from the code (`python -m pcsc.tools.docs`).

`docs/diagnostics.md` comes from the code registry (`pcsc/diagnostics/codes.py`);
`docs/json.md` from the JSON Schemas shipped in `pcsc/render/schemas/`;
`docs/policy-reference.md` from the attrs policy model (`pcsc/policy/model.py`: each
field's `metadata["doc"]` is its meaning). Tests keep all three current. `main` also
writes the marked blocks of README.md and the other pages (`pcsc.tools.docblocks`).

The documentation is a MkDocs site built from `docs/`. PCSC knows of no published copy
unless told: the setting `docs_url` (`PCSC_DOCS_URL`, docs/cli.md) gives its base URL,
and tools that link into the docs (the SARIF rules' `helpUri`) build their links with
`pcsc.render.doclinks` from it, or leave them out; the anchors they use are the ones
written into the generated pages here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pcsc.diagnostics.codes import CODES
from pcsc.render.doclinks import GATE_ANCHOR, NO_OBLIGATION_ANCHOR, code_anchor

_GROUPS = (
    ("PCSC-E1", "Syntax and files"),
    ("PCSC-E2", "Names and structure"),
    ("PCSC-E3", "Types, units and values"),
    ("PCSC-E4", "Policies and libraries"),
    ("PCSC-E5", "Coverage"),
    ("PCSC-E7", "Forecasts: outcomes, the ledger, packets, score tables, grading"),
    ("PCSC-E8", "Policy tests and project scaffolding"),
    ("PCSC-E9", "Decisions: what-if overrides and certificates"),
    ("PCSC-W", "Warnings"),
)


def _anchor(anchor: str) -> str:
    return f'<a id="{anchor}"></a>'


def diagnostics_markdown() -> str:
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `pcsc/diagnostics/codes.py` by `python -m pcsc.tools.docs`; do not edit by hand.",
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
        "`pcsc gate --format sarif` reports diagnostics as results whose rule is their code, and each",
        "material state change of a route that no discharged obligation covers as the PCSC-E501 result",
        "`pcsc check` reports for it: one fact, one rule id, whichever command reports it.",
        "",
        "- the rule id is PCSC-E501 when GATE refuses the score (`suspend-and-ask`, level `error`)",
        "  and PCSC-W501 when DOCK releases a docked score (level `warning`); a route released in",
        "  full, or compiled with coverage off, yields no result;",
        "- the region is the transition's name in its header, as `check` has it; each `require`",
        "  line that failed for the change is a related location in the library (`.obl`) file; when",
        "  every line holds and the transition only omits the obligation from `discharges`, the",
        "  related location is the obligation itself;",
        "- `properties` name the route, the transition, the field and the obligations tried (none",
        f"  {_anchor(NO_OBLIGATION_ANCHOR)}when no obligation of the route's libraries covers the field: there is",
        "  nothing to list in `discharges` until a library gains an obligation that covers it).",
        "",
        "Every result carries `partialFingerprints` (`pcsc/v1`: a hash of its rule, file and message,",
        "without the line), the same for the same fact from `check` and `gate`, so code scanning",
        "follows an alert across edits. `invocations` says whether pcsc ran to the end",
        "(`executionSuccessful`) and its `exitCode`, nothing else: no command line, no environment. A",
        "warning suppressed by a `# pcsc: ignore[...]` comment or by `ignore`/`select` is a result",
        "with a `suppressions` entry (`inSource` or `external`), which code scanning shows as dismissed.",
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
    """docs/json.md: one section per document kind, generated from pcsc/render/schemas/."""
    from pcsc.render import schemas

    common = schemas.load_file(schemas.COMMON)
    envelope = common["$defs"]["envelope"]
    lines = [
        "# JSON output and its schemas",
        "",
        "Generated from the JSON Schemas in `pcsc/render/schemas/` by `python -m pcsc.tools.docs`; do not edit by "
        "hand.",
        "",
        "Every `--format json` document is one JSON object that starts with the same envelope, then the",
        "command's payload. Each document kind has a JSON Schema (draft 2020-12) shipped in the package as",
        "`pcsc/render/schemas/<kind>.v<major>.json`; the envelope and the values several kinds share are in",
        f"`pcsc/render/schemas/{schemas.COMMON}`. A schema's `$id` is `urn:pcsc:schema:<kind>.v<major>`, and the",
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
        "A command that cannot do its work (a policy that does not load, a ledger that cannot be opened,",
        "a `pcsc.toml` that cannot be used) keeps its kind and prints",
        "`\"ok\": false` with the `diagnostics` (or `errors`) that say why instead of its payload: every",
        "kind's schema allows that form (`failure` below). (`ledger export --format jsonl` prints rows",
        "or nothing; its diagnostics go to standard error.)",
        "",
        "## Shared definitions",
        "",
        f"In `pcsc/render/schemas/{schemas.COMMON}`, referred to by name below.",
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
        lines += ["", f"Schema: `pcsc/render/schemas/{name}`", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------- docs/policy-reference.md
#: The shipped policy whose values the policy reference quotes as examples.
EXAMPLE_POLICY = "venture/1.0.0.toml"


@attrs.frozen
class PolicyKey:
    """One key of the policy TOML, as the reference lists it."""

    path: str  # dotted, with placeholders: `priors."<class>".p`
    type: str
    default: str  # "required", or the value it takes when left out
    doc: str
    example: str | None  # a line of the example policy, or None where it has none


@attrs.frozen
class PolicyTable:
    """A TOML table of the policy (or a family of them, `[priors."<class>"]`) and its keys."""

    header: str  # `[policy]`, `[priors."<class>"]`, `[[gates]]`
    doc: str
    required: bool
    keys: tuple[PolicyKey, ...]


_SCALARS = {str: "string", float: "number", int: "whole number", bool: "boolean"}
#: Placeholders for the names of a table of tables, by key path.
_PLACEHOLDERS = {"priors": '"<class>"', "floors.delta": "<field>", "criteria": "<criterion>",
                 "evidence.tier_weight": "<tier>", "admission": '"<class>"', "admission.\"<class>\".bounds": "<field>",
                 "registry": "<route>", "registry.<route>.states.fields": "<field>"}


def _placeholder(path: str) -> str:
    return _PLACEHOLDERS.get(path, "<name>")


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (types.UnionType, typing.Union) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else tp), True
    return tp, False


def _policy_type(tp: Any) -> str:
    tp, optional = _unwrap_optional(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        text = " \\| ".join(f'`"{a}"`' for a in args)
    elif tp in _SCALARS:
        text = _SCALARS[tp]
    elif args and all(a in _SCALARS for a in args):  # a union of scalars: `float | bool`
        text = " or ".join(_SCALARS[a] for a in args)
    elif origin is dict:
        text = "table of " + _policy_type(args[1]) + "s, by name"
    elif origin is list and args and typing.get_origin(args[0]) is tuple:
        text = "array of [" + ", ".join(_policy_type(a) for a in typing.get_args(args[0])) + "] pairs"
    elif origin is list:
        text = "array of " + _policy_type(args[0]) + "s"
    else:
        text = getattr(tp, "__name__", str(tp))
    return text + (" (optional)" if optional and text else "")


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


def _default_text(field: attrs.Attribute[Any]) -> str:
    default: Any = field.default
    if default is attrs.NOTHING:
        return "required"
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        made = default.factory()
        if attrs.has(type(made)) or made in ({}, []):
            return "empty"
        default = made
    if default is None:
        return "none"
    return f"`{_toml_value(default)}`"


def _is_table(tp: Any) -> bool:
    return attrs.has(_unwrap_optional(tp)[0])


def _table_family(tp: Any) -> tuple[str, type] | None:
    """("dict" | "list", the attrs class) when tp is a table of tables or an array of tables."""
    tp = _unwrap_optional(tp)[0]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is dict and attrs.has(args[1]):
        return "dict", args[1]
    if origin is list and args and attrs.has(args[0]):
        return "list", args[0]
    return None


def _lookup(document: Any, parts: Sequence[str]) -> Any:
    """The value at a key path of the example policy; a placeholder takes the first entry."""
    for part in parts:
        if isinstance(document, list):
            document = document[0] if document else None
        if part.lstrip('"').startswith("<"):
            document = next(iter(document.values()), None) if isinstance(document, dict) and document else None
        elif isinstance(document, dict):
            document = document.get(part)
        else:
            return None
        if document is None:
            return None
    return document


def policy_tables() -> list[PolicyTable]:
    """Every table of the policy TOML, walked from the attrs policy model, in its order.

    Whatever fields the model has are listed; a field marked `derived` (computed when
    the policy is loaded, not read from the file) is left out."""
    import tomllib

    from pcsc.base.resources import data_dir
    from pcsc.policy.model import Policy

    example = tomllib.loads((data_dir("policies") / EXAMPLE_POLICY).read_text(encoding="utf-8"))
    tables: list[PolicyTable] = []

    def name_of(parts: Sequence[str]) -> str:
        return ".".join(p if p.lstrip('"').startswith("<") else _toml_key(p) for p in parts)

    def walk(cls: type, parts: list[str], doc: str, required: bool, array: bool) -> None:
        hints = typing.get_type_hints(cls)
        keys: list[PolicyKey] = []
        nested: list[tuple[attrs.Attribute[Any], Any]] = []
        for field in attrs.fields(cls):
            if field.metadata.get("derived"):
                continue
            tp = hints[field.name]
            if _is_table(tp) or _table_family(tp) is not None:
                nested.append((field, tp))
                continue
            value = _lookup(example, [*parts, field.name])
            example_line = None if value is None else f"{_toml_key(field.name)} = {_toml_value(value)}"
            key_parts, key_type = [*parts, field.name], tp
            if typing.get_origin(_unwrap_optional(tp)[0]) is dict:
                key_parts.append(_placeholder(".".join(key_parts)))
                key_type = typing.get_args(_unwrap_optional(tp)[0])[1]
            keys.append(PolicyKey(name_of(key_parts), _policy_type(key_type), _default_text(field),
                                  str(field.metadata.get("doc", "")), example_line))
        if keys or not nested:
            header = f"[[{name_of(parts)}]]" if array else f"[{name_of(parts)}]"
            tables.append(PolicyTable(header, doc, required, tuple(keys)))
        for field, tp in nested:
            fdoc = str(field.metadata.get("doc", ""))
            freq = required and field.default is attrs.NOTHING
            family = _table_family(tp)
            if family is None:
                walk(_unwrap_optional(tp)[0], [*parts, field.name], fdoc, freq, False)
            elif family[0] == "dict":
                key_parts = [*parts, field.name]
                walk(family[1], [*key_parts, _placeholder(".".join(key_parts))], fdoc, freq, False)
            else:
                walk(family[1], [*parts, field.name], fdoc, freq, True)

    # the top-level keys of the policy are tables (or arrays of tables) of their own
    hints = typing.get_type_hints(Policy)
    top: list[PolicyKey] = []
    for field in attrs.fields(Policy):
        tp = hints[field.name]
        doc = str(field.metadata.get("doc", ""))
        required = field.default is attrs.NOTHING
        family = _table_family(tp)
        if _is_table(tp):
            walk(_unwrap_optional(tp)[0], [field.name], doc, required, False)
        elif family is not None and family[0] == "dict":
            walk(family[1], [field.name, _placeholder(field.name)], doc, required, False)
        elif family is not None:
            walk(family[1], [field.name], doc, required, True)
        elif typing.get_origin(_unwrap_optional(tp)[0]) is dict:
            value = _lookup(example, [field.name])
            first = next(iter(value.items()), None) if isinstance(value, dict) else None
            line = None if first is None else f"{_toml_key(first[0])} = {_toml_value(first[1])}"
            key = PolicyKey(f"{field.name}.{_placeholder(field.name)}",
                            _policy_type(typing.get_args(_unwrap_optional(tp)[0])[1]), "—", doc, line)
            about = f"One key per {_placeholder(field.name).strip('<>')}, any name the policy chooses."
            tables.append(PolicyTable(f"[{field.name}]", about, required, (key,)))
        else:
            value = _lookup(example, [field.name])
            line = None if value is None else f"{_toml_key(field.name)} = {_toml_value(value)}"
            top.append(PolicyKey(field.name, _policy_type(tp), _default_text(field), doc, line))
    if top:
        tables.insert(0, PolicyTable("(top level)", "Keys outside any table.", False, tuple(top)))
    return tables


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def policy_reference_markdown() -> str:
    """docs/policy-reference.md: every key of the policy TOML, generated from pcsc/policy/model.py."""
    lines = [
        "# Policy reference",
        "",
        "Generated from the policy model (`pcsc/policy/model.py`) by `python -m pcsc.tools.docs`; do not edit by hand.",
        f"The examples are lines of the shipped policy `policies/{EXAMPLE_POLICY}` (`venture@1.0.0`).",
        "",
        "A policy is a TOML file, `policies/<id>/<version>.toml`. Every table and key it may hold is",
        "listed below; any other key is an error, and so is a value of the wrong type (a string is never",
        "read as a number). `required` means the policy does not load without it; a policy that",
        "`extends` another needs it only in the merged result. Where a name is in angle brackets",
        '(`[priors."<class>"]`), the table is repeated once per name the policy chooses. How policies are',
        "found, merged and hashed: [Policies](policy.md); how each number uses these keys:",
        "[The numbers PCSC computes](formulas.md).",
        "",
    ]
    for table in policy_tables():
        lines += [f"## `{table.header}`", ""]
        about = table.doc + (" Required." if table.required else " Optional.")
        lines += [about.strip(), ""]
        if not table.keys:
            continue
        lines += ["| key | type | default | meaning | example |", "|---|---|---|---|---|"]
        for key in table.keys:
            example = f"`{_cell(key.example)}`" if key.example else "—"
            lines.append(
                f"| `{_cell(key.path)}` | {key.type} | {key.default} | {_cell(key.doc) or '—'} | {example} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    """``python -m pcsc.tools.docs [FOLDER] [--record]``: the generated pages, then every marked
    block of README.md and the pages (`pcsc.tools.docblocks`; ``--record`` first runs its long
    commands again)."""
    args = sys.argv[1:]
    folder = Path(next((a for a in args if not a.startswith("--")), "docs"))
    (folder / "diagnostics.md").write_text(diagnostics_markdown(), encoding="utf-8")
    (folder / "json.md").write_text(json_markdown(), encoding="utf-8")
    (folder / "policy-reference.md").write_text(policy_reference_markdown(), encoding="utf-8")
    # The blocks run the whole program: they are generated by their own module, in a
    # process of their own.
    flags = [a for a in args if a == "--record"]
    root = (folder / "..").resolve()
    return subprocess.run([sys.executable, "-m", "pcsc.tools.docblocks", *flags, str(root)], check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
