"""The one JSON envelope: every ``--format json`` document, and ``Result.to_json()``,
starts with the same three keys, then the command's own payload.

    {"pcsc": "<version>",
     "schema": {"kind": "<document kind>", "version": <major>},
     "inputs": [{"path": ..., "sha256": ...}],
     ...payload}

``kind`` names the shipped JSON Schema that describes the document
(``pcsc/render/schemas/<kind>.v<major>.json``). A major version changes only when a key is
renamed or removed; keys are added freely.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pcsc._version import __version__

#: The major version of each document kind's schema.
SCHEMA_VERSIONS: Mapping[str, int] = {
    "check": 1,
    "compile": 1,
    "ir": 1,
    "gate": 1,
    "seams": 1,
    "explain": 1,
    "splice": 1,
    "diff": 1,
    "graph": 1,
    "fmt": 1,
    "redteam": 1,
    "stability": 1,
    "redteam-search": 1,
    "rank": 1,
    "freeze": 1,
    "prereg": 1,
    "resolve": 1,
    "evaluate": 1,
    "ledger-verify": 1,
    "ledger-show": 1,
    "ledger-export": 1,
    "ledger-head": 1,
    "ledger-checkpoint": 1,
    "ledger-keygen": 1,
    "policy-show": 1,
    "policy-hash": 1,
    "policy-check": 1,
    "policy-diff": 1,
    "policy-fit": 1,
    "policy-compare": 1,
    "config": 1,
    "rule": 1,
    "cache-info": 1,
    "cache-clear": 1,
    "init": 1,
    "test": 1,
    "blind": 1,
    "verify-cert": 1,
    "sensitivity": 1,
    "error": 1,
}

RESERVED = ("pcsc", "schema", "inputs")


def envelope(kind: str, payload: Mapping[str, Any], inputs: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """``payload`` wrapped in the envelope of document ``kind``. The payload may not
    set the envelope's own keys."""
    clash = [k for k in RESERVED if k in payload]
    if clash:
        raise ValueError(f"payload of {kind!r} sets envelope keys {clash}")
    return {
        "pcsc": __version__,
        "schema": {"kind": kind, "version": SCHEMA_VERSIONS[kind]},
        "inputs": [{"path": p, "sha256": h} for p, h in inputs],
        **payload,
    }
