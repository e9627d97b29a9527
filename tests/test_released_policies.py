"""A released policy version is never edited in place: a forecast frozen under
`venture@1.0.0` must verify against the same bytes years later, so a change is a new
version (`extends` the old one). `tests/data/released_policies.json` lists the SHA-256
of each shipped policy file and registry at its release; a new version is added to it,
an old one never changes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELEASED = ROOT / "tests" / "data" / "released_policies.json"


def _shipped() -> dict[str, str]:
    files = sorted([*ROOT.glob("policies/*/*.toml"), *ROOT.glob("policies/*/registries/*.toml")])
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def test_no_released_policy_file_changed_or_vanished() -> None:
    released = json.loads(RELEASED.read_text(encoding="utf-8"))
    shipped = _shipped()
    changed = sorted(f for f, sha in released.items() if shipped.get(f) != sha)
    assert not changed, (f"released policy files edited or removed: {changed}; "
                         "write a new version that extends the old one instead")


def test_every_shipped_policy_file_is_recorded() -> None:
    released = json.loads(RELEASED.read_text(encoding="utf-8"))
    unrecorded = sorted(set(_shipped()) - set(released))
    assert not unrecorded, f"add the SHA-256 of each new policy version to {RELEASED.name}: {unrecorded}"

