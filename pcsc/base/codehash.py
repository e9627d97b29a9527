"""The scorer's identity beyond its version string: a SHA-256 of the code that computes
the numbers, so that two forecasts whose numbers came from different code can be told
apart even when the version string was not bumped.

Canonical form: every ``.py`` and ``.lark`` file of the installed ``pcsc`` package
(compiled caches left out), in the order of their relative POSIX paths; for each, the
path in UTF-8, a NUL byte, the length of the file in ASCII decimal, a NUL byte, then its
bytes with CRLF line ends read as LF (a checkout that converts line ends, as git may on
Windows, runs the same code and hashes the same). Computed once per process.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

SUFFIXES = (".py", ".lark")
PACKAGE = Path(__file__).resolve().parent.parent


def code_files(root: Path = PACKAGE) -> list[tuple[str, Path]]:
    """(relative POSIX path, file) of every file the hash covers, sorted by path."""
    found = [(p.relative_to(root).as_posix(), p) for p in root.rglob("*")
             if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts]
    return sorted(found)


def code_sha256(root: Path = PACKAGE) -> str:
    """The SHA-256 of the canonical form of the code under ``root`` (the module docstring)."""
    digest = hashlib.sha256()
    for relative, path in code_files(root):
        data = path.read_bytes().replace(b"\r\n", b"\n")
        digest.update(relative.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        digest.update(data)
    return digest.hexdigest()


@functools.cache
def scorer_sha256() -> str:
    """`code_sha256` of this process's own package, computed on first use."""
    return code_sha256()


def scorer_identity() -> dict[str, str]:
    """What a packet and a ledger entry record of the code that computed them."""
    from pcsc._version import __version__

    return {"pcsc": __version__, "code_sha256": scorer_sha256()}
