"""The grammar of the names that select files: policy references and library names.

A route names its policy and its libraries; it never addresses a file. A name cannot
hold a path separator or `..`, so it always selects a file directly inside a search
folder (`<root>/<id>/<version>.toml`, `<root>/<name>.obl`), and it is at most
`MAX_NAME` characters, so that file name fits every file system's limit (255 bytes).
"""

from __future__ import annotations

import re

MAX_NAME = 100
"""The most characters in a policy id, a version or a library name."""

NAME = r"[a-z0-9_-]+"
"""A policy id or a library name: lowercase letters, digits, `_` and `-`."""

VERSION = r"[0-9A-Za-z][0-9A-Za-z.+-]*"
"""A version: starts with a letter or digit, then letters, digits, `.`, `+`, `-`; no `..`."""

POLICY_REF = re.compile(rf"({NAME})@({VERSION})")
"""`id@version`, matched with ``fullmatch``."""

_NAME = re.compile(NAME)
_VERSION = re.compile(VERSION)
_HEX64 = re.compile(r"[0-9a-f]{64}")

REFERENCE_RULE = (
    "a policy is named, never addressed by a path: `id@version`, the id in lowercase "
    "letters, digits, `_` and `-`, the version in letters, digits, `.`, `+` and `-`, "
    f"each at most {MAX_NAME} characters"
)


def split_policy_ref(ref: str) -> tuple[str, str] | None:
    """``(id, version)`` of a well-formed `id@version`, else None."""
    match = POLICY_REF.fullmatch(ref)
    if match is None or ".." in match.group(2) or max(len(match.group(1)), len(match.group(2))) > MAX_NAME:
        return None
    return match.group(1), match.group(2)


def is_name(text: str) -> bool:
    """A well-formed policy id or library name."""
    return len(text) <= MAX_NAME and _NAME.fullmatch(text) is not None


def is_version(text: str) -> bool:
    """A well-formed version (of a policy or a library)."""
    return len(text) <= MAX_NAME and _VERSION.fullmatch(text) is not None and ".." not in text


def is_sha256(text: str) -> bool:
    """64 lowercase hexadecimal digits."""
    return _HEX64.fullmatch(text) is not None


def split_requirement(text: str) -> tuple[str, str | None] | None:
    """``(id, version)`` of a policy requirement, `id` (any version) or `id@version`
    (that one); None when it is neither."""
    if is_name(text):
        return text, None
    return split_policy_ref(text)
