"""constraints.txt, the lock of the test environment, read with `packaging`.

tests/test_lock.py checks the lock against pyproject.toml; `.ci/latest` runs this module
(`python3 -m tests.lockfile`) to print where the newest releases it installed differ
from the lock. docs/development.md says how the lock is made and refreshed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from tests.conftest import ROOT

LOCK = ROOT / "constraints.txt"


@dataclass(frozen=True)
class Pin:
    name: NormalizedName
    version: Version
    marker: Marker | None
    line: str

    def applies(self, environment: Mapping[str, str] | None = None) -> bool:
        return self.marker is None or self.marker.evaluate(dict(environment or {}))


def pins(text: str | None = None) -> list[Pin]:
    """Every `name==version [; marker]` line of the lock, in order (comments dropped)."""
    if text is None:
        text = LOCK.read_text(encoding="utf-8")
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        if req.extras or req.url or len(specs) != 1 or specs[0].operator != "==":
            raise ValueError(f"constraints.txt: not an exact pin without extras: {raw!r}")
        out.append(Pin(canonicalize_name(req.name), Version(specs[0].version), req.marker, line))
    return out


def pinned_here(environment: Mapping[str, str] | None = None) -> dict[NormalizedName, Version]:
    """The version the lock gives each package in ``environment`` (this interpreter's by
    default); a package pinned twice for one environment is an error."""
    out: dict[NormalizedName, Version] = {}
    for pin in pins():
        if pin.applies(environment):
            if pin.name in out:
                raise ValueError(f"constraints.txt pins {pin.name} twice for one environment")
            out[pin.name] = pin.version
    return out


def installed_closure(project: str = "pcsc", extras: tuple[str, ...] = ("test",)) -> Iterator[metadata.Distribution]:
    """The installed distributions ``project[extras]`` pulls in, transitively, as this
    interpreter evaluates their markers (the project itself excluded). Only the
    requirements of distributions installed at their locked version are followed: what a
    newer release requires is no claim about the lock."""
    locked = pinned_here()
    yielded: set[NormalizedName] = set()
    visited: set[tuple[NormalizedName, tuple[str, ...]]] = set()
    todo: list[tuple[str, tuple[str, ...]]] = [(project, extras)]
    while todo:
        name, wanted = todo.pop()
        key = canonicalize_name(name)
        if (key, wanted) in visited:
            continue
        visited.add((key, wanted))
        dist = metadata.distribution(name)
        if key != canonicalize_name(project):
            if key not in yielded:
                yielded.add(key)
                yield dist
            if locked.get(key) != Version(dist.version):
                continue
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *wanted)):
                todo.append((req.name, tuple(sorted(req.extras))))


def differences() -> list[str]:
    """`name locked -> installed` for every installed distribution whose version is not
    the one the lock gives it here."""
    locked = pinned_here()
    out = []
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in {"pcsc", "pip", "setuptools"} or locked.get(name) == Version(dist.version):
            continue
        out.append(f"{name} {locked.get(name, '(not locked)')} -> {dist.version}")
    return sorted(out)


if __name__ == "__main__":
    changed = differences()
    print("installed versions that differ from constraints.txt:" if changed else
          "every installed version is the one constraints.txt locks")
    for row in changed:
        print(f"  {row}")
