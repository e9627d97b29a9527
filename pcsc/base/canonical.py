"""Canonical JSON: sorted keys, UTF-8, shortest float repr, no NaN. Used for hashing
and for every JSON document PCSC prints, so output is byte-identical across machines."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def dumps(obj: Any, *, pretty: bool = False) -> str:
    if pretty:
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, indent=2)
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def sha256_hex(data: str | bytes) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def hash_json(obj: Any) -> str:
    """SHA-256 of the canonical (compact) JSON form of ``obj``."""
    return sha256_hex(dumps(obj))
