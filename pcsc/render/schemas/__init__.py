"""The JSON Schemas (draft 2020-12) of every document pcsc prints with ``--format json``.

One file per document kind and major version, ``<kind>.v<major>.json`` beside this
module, and ``common.v1.json`` with the envelope and the shared definitions the
others ``$ref``. Every file's ``$id`` is a URN, ``urn:pcsc:schema:<kind>.v<major>``:
stable, never fetched; references between the files are absolute URNs and resolve
offline through the registry ``registry()`` builds from the files here.

``validate`` needs the ``jsonschema`` package, which is not a dependency of pcsc
(it is in the ``test`` extra): it is imported only when called.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referencing import Registry

#: The file of the shared definitions (the envelope, diagnostics, …).
COMMON = "common.v1.json"
URN_PREFIX = "urn:pcsc:schema:"


class SchemaError(Exception):
    """A document names no known schema, or jsonschema is missing."""


def filename(kind: str, version: int | None = None) -> str:
    """``<kind>.v<major>.json``; the major version defaults to the newest shipped."""
    if version is None:
        shipped = kinds()
        if kind not in shipped:
            raise SchemaError(f"no document kind {kind!r}; kinds: {', '.join(sorted(shipped))}")
        version = shipped[kind]
    return f"{kind}.v{version}.json"


def kinds() -> dict[str, int]:
    """Every document kind with a shipped schema, and its newest major version, by name.
    (`pcsc.render.envelope.SCHEMA_VERSIONS` is what the commands write; a test keeps the
    two the same. This module imports nothing else of pcsc.)"""
    out: dict[str, int] = {}
    for name in names():
        stem, _, version = name.removesuffix(".json").rpartition(".v")
        if name != COMMON and version.isdigit():
            out[stem] = max(out.get(stem, 0), int(version))
    return dict(sorted(out.items()))


def names() -> list[str]:
    """Every schema file shipped, sorted (the common definitions included)."""
    return sorted(p.name for p in files(__name__).iterdir() if p.name.endswith(".json"))


@cache
def _read(name: str) -> str:
    resource = files(__name__).joinpath(name)
    if not resource.is_file():
        raise SchemaError(f"no schema file {name} in pcsc/render/schemas")
    return resource.read_text(encoding="utf-8")


def load_file(name: str) -> dict[str, Any]:
    """The schema in file ``name`` (a fresh copy)."""
    schema: dict[str, Any] = json.loads(_read(name))
    return schema


def load(kind: str, version: int | None = None) -> dict[str, Any]:
    """The schema of document ``kind`` (at its current major version unless given)."""
    return load_file(filename(kind, version))


def registry() -> Registry:
    """A ``referencing`` registry of every shipped schema, keyed by its ``$id``, so
    ``$ref`` between them resolves without the network."""
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SchemaError(_MISSING) from exc
    resources = []
    for name in names():
        schema = load_file(name)
        resources.append((schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012)))
    reg: Registry = Registry().with_resources(resources)
    return reg


_MISSING = (
    "validating pcsc's JSON needs the `jsonschema` package (4.18 or later), which pcsc does not depend on: "
    "`python3 -m pip install jsonschema`, or install pcsc with its `test` extra"
)


def schema_of(document: Mapping[str, Any]) -> tuple[str, int]:
    """The (kind, major version) a document names in its envelope."""
    named = document.get("schema")
    if not isinstance(named, Mapping) or not isinstance(named.get("kind"), str) or not isinstance(
        named.get("version"), int
    ):
        raise SchemaError('the document names no schema: it has no {"schema": {"kind": ..., "version": ...}}')
    return named["kind"], named["version"]


def validate(document: Mapping[str, Any]) -> None:
    """Validate ``document`` against the schema its own ``schema.kind`` and
    ``schema.version`` name. Raises ``jsonschema.ValidationError`` (the best match)
    when it does not conform, ``SchemaError`` when it names no shipped schema or
    jsonschema is not installed."""
    kind, version = schema_of(document)
    name = filename(kind, version)
    if name not in names():
        raise SchemaError(f"no schema {name} in this pcsc: the document is of kind {kind!r} version {version}")
    try:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
        from jsonschema.exceptions import best_match  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SchemaError(_MISSING) from exc
    validator = Draft202012Validator(load_file(name), registry=registry())
    error = best_match(validator.iter_errors(document))
    if error is not None:
        raise error
